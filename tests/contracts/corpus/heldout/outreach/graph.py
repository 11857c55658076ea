"""The graph module: it imports its nodes, no SDK."""

from langgraph.graph import END, StateGraph

from .nodes import Nodes

graph = StateGraph(dict)
graph.add_node("score_lead", Nodes.score_lead)
graph.add_node("write_email", Nodes.write_email)
graph.add_conditional_edges("score_lead", Nodes.is_qualified, {"qualified": "write_email", "not qualified": END})
app = graph.compile()
