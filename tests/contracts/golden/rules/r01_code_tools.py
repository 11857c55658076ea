"""R1: code-interpreter tools and allow_dangerous_code."""
from langchain_experimental.agents import create_pandas_dataframe_agent
from langchain_openai import ChatOpenAI
from openai import OpenAI
from escalated.guard import guard

client = OpenAI()


def analyse(question: str):
    return guard("r01_code_tools.analyse", lambda: client.responses.create(model="gpt-4o", input=question, tools=[{"type": "code_interpreter", "container": {"type": "auto"}}]))


def dataframe_agent(df, question: str):
    llm = ChatOpenAI(model="gpt-4o")
    agent = create_pandas_dataframe_agent(llm, df, allow_dangerous_code=True)
    return guard("r01_code_tools.dataframe_agent", lambda: agent.invoke(question))
