"""The SDK surface discovery knows: client classes and the methods that call a model.

Plain tables, so adding an SDK is adding a line. Qualified names are the
public import paths (``openai.OpenAI``), not where the class is defined.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from contextvars import ContextVar
from types import MappingProxyType

# Constructor (qualified name) -> (provider, kind of the object it returns).
# What runs an AG2 agent's conversation (each turn asks the model and runs the tools it picks).
AG2_RUNS = frozenset({"initiate_chat", "a_initiate_chat", "generate_reply", "a_generate_reply", "run", "a_run"})
# Where AG2 exports its agents (``from autogen import ConversableAgent`` or the defining modules).
AG2_AGENT_MODULES = ("", "agentchat.", "agentchat.conversable_agent.", "agentchat.assistant_agent.", "agentchat.user_proxy_agent.",
                     "agentchat.groupchat.")
CONSTRUCTORS: dict[str, tuple[str, str]] = {
    **{f"openai.{n}": ("openai", "client") for n in (
        "OpenAI", "AsyncOpenAI", "AzureOpenAI", "AsyncAzureOpenAI", "Client", "AsyncClient",
    )},
    **{f"anthropic.{n}": ("anthropic", "client") for n in (
        "Anthropic", "AsyncAnthropic", "AnthropicBedrock", "AsyncAnthropicBedrock",
        "AnthropicVertex", "AsyncAnthropicVertex", "Client", "AsyncClient",
    )},
    "google.genai.Client": ("google-genai", "client"),
    "google.genai.client.Client": ("google-genai", "client"),
    "google.generativeai.GenerativeModel": ("google-genai", "model"),
    "google.generativeai.generative_models.GenerativeModel": ("google-genai", "model"),  # where it is defined
    "vertexai.generative_models.GenerativeModel": ("google-genai", "model"),
    "vertexai.preview.generative_models.GenerativeModel": ("google-genai", "model"),
    "litellm.Router": ("litellm", "router"),
    # Ollama's local server: chat / generate. No provider of its own in contracts; like the other
    # OpenAI-compatible local models (AutoGen's Ollama client) it is counted as "openai".
    "ollama.Client": ("openai", "ollama-client"),
    "ollama.AsyncClient": ("openai", "ollama-client"),
    "agents.Agent": ("openai", "agents-agent"),
    # A sandbox agent (agents.sandbox): an Agents SDK agent whose capabilities add tools (Shell by default).
    "agents.sandbox.SandboxAgent": ("openai", "agents-agent"),
    "agents.sandbox.sandbox_agent.SandboxAgent": ("openai", "agents-agent"),
    # CrewAI and smolagents call models through LiteLLM (provider refined from the model where named).
    "crewai.LLM": ("litellm", "crewai-llm"),
    "crewai.Crew": ("litellm", "crew"),
    "crewai.Agent": ("litellm", "crew-agent"),
    # Strands agents default to Claude on Bedrock; calling the agent runs it, tools included.
    "strands.Agent": ("anthropic", "strands-agent"),
    "strands.agent.Agent": ("anthropic", "strands-agent"),
    # smolagents: agents (run; a CodeAgent executes the Python the model writes), model objects
    # (called with messages, generate), a Gradio UI serving an agent's runs (launch). Under the
    # package and its modules (from smolagents.agents import CodeAgent).
    **{f"smolagents.{m}{n}": ("litellm", kind) for m in ("", "agents.") for n, kind in (
        ("CodeAgent", "smol-code-agent"), ("ToolCallingAgent", "smol-agent"),
    )},
    **{f"smolagents.{m}{n}": ("litellm", "smol-model") for m in ("", "models.") for n in (
        "LiteLLMModel", "LiteLLMRouterModel", "InferenceClientModel", "HfApiModel", "TransformersModel",
        "AmazonBedrockServerModel", "AmazonBedrockModel", "VLLMModel", "MLXModel",
    )},
    **{f"smolagents.{m}{n}": ("openai", "smol-model") for m in ("", "models.") for n in (
        "OpenAIServerModel", "OpenAIModel", "AzureOpenAIServerModel", "AzureOpenAIModel",
    )},
    "langgraph.prebuilt.create_react_agent": ("langchain", "agent"),
    # Multi-agent graphs: their first argument (or agents=) lists the agents they hand the run between.
    "langgraph_swarm.create_swarm": ("langchain", "lg-multi"),
    "langgraph_supervisor.create_supervisor": ("langchain", "lg-multi"),
    "langchain.agents.create_agent": ("langchain", "agent"),
    "langchain.agents.AgentExecutor": ("langchain", "agent"),
    "langchain.agents.initialize_agent": ("langchain", "agent"),
    "langchain.chat_models.init_chat_model": ("langchain", "chat"),
    # instructor wraps an SDK client and keeps its call shape.
    "instructor.from_openai": ("openai", "client"),
    "instructor.patch": ("openai", "client"),
    "instructor.apatch": ("openai", "client"),
    "instructor.from_anthropic": ("anthropic", "client"),
    "instructor.from_genai": ("google-genai", "client"),
    "instructor.from_litellm": ("litellm", "callable:completion"),
    # Realtime (websocket) and voice runners of the OpenAI Agents SDK run the agent's tools too.
    "agents.realtime.RealtimeRunner": ("openai", "agents-realtime"),
    "agents.realtime.RealtimeAgent": ("openai", "agents-agent"),
    "agents.voice.VoicePipeline": ("openai", "agents-realtime"),
    "langchain.chat_models.base.init_chat_model": ("langchain", "chat"),
    # AutoGen: model clients (create / create_stream), AgentChat agents and teams (run / run_stream
    # run the agents' tools inside the call); provider refined from model_client= where it is named.
    **{f"autogen_ext.models.openai.{n}": ("openai", "autogen-client") for n in (
        "OpenAIChatCompletionClient", "AzureOpenAIChatCompletionClient",
    )},
    "autogen_ext.models.anthropic.AnthropicChatCompletionClient": ("anthropic", "autogen-client"),
    "autogen_ext.models.anthropic.AnthropicBedrockChatCompletionClient": ("anthropic", "autogen-client"),
    "autogen_ext.models.ollama.OllamaChatCompletionClient": ("openai", "autogen-client"),
    "autogen_ext.models.azure.AzureAIChatCompletionClient": ("openai", "autogen-client"),
    "autogen_core.models.ChatCompletionClient.load_component": ("openai", "autogen-client"),
    **{f"autogen_agentchat.agents.{n}": ("openai", "autogen-agent") for n in (
        "AssistantAgent", "CodeExecutorAgent", "SocietyOfMindAgent",
    )},
    **{f"autogen_agentchat.teams.{n}": ("openai", "autogen-team") for n in (
        "RoundRobinGroupChat", "SelectorGroupChat", "Swarm", "MagenticOneGroupChat",
    )},
    # AG2 (the autogen / ag2 packages, AutoGen 0.2's lineage): a ConversableAgent's initiate_chat /
    # generate_reply / run runs the model and the tools of both sides (functions=, register_function).
    **{f"autogen.{where}{n}": ("openai", "ag2-agent") for where in AG2_AGENT_MODULES for n in (
        "ConversableAgent", "AssistantAgent", "UserProxyAgent", "GroupChatManager",
    )},
    # Agno: an Agent runs its tools= (functions, toolkits) and a Team its members' inside run /
    # print_response / continue_run; OpenAI's models are Agno's default, refined from model=.
    **{f"agno.{n}": ("openai", "agno-agent") for n in ("agent.Agent", "agent.agent.Agent")},
    **{f"agno.{n}": ("openai", "agno-team") for n in ("team.Team", "team.team.Team")},
    **{f"agno.models.{n}": ("openai", "agno-model") for n in (
        "openai.OpenAIChat", "openai.OpenAIResponses", "openai.chat.OpenAIChat", "openai.responses.OpenAIResponses",
        "azure.AzureOpenAI", "openai.like.OpenAILike",
    )},
    "agno.models.anthropic.Claude": ("anthropic", "agno-model"),
    "agno.models.aws.Claude": ("anthropic", "agno-model"),
    "agno.models.google.Gemini": ("google-genai", "agno-model"),
    "agno.models.litellm.LiteLLM": ("litellm", "agno-model"),
    # Google ADK: an LLM agent runs its tools and sub-agents; a Runner runs an agent; an AdkApp
    # (and what agent_engines.create deploys from it) answers stream_query with a run of its agent.
    **{f"google.adk.{n}": ("google-genai", "adk-agent") for n in (
        "Agent", "agents.Agent", "agents.LlmAgent", "agents.llm_agent.Agent", "agents.llm_agent.LlmAgent",
        "agents.SequentialAgent", "agents.ParallelAgent", "agents.LoopAgent",
    )},
    **{f"google.adk.runners.{n}": ("google-genai", "adk-runner") for n in ("Runner", "InMemoryRunner")},
    **{f"{m}.AdkApp": ("google-genai", "adk-app") for m in (
        "vertexai.preview.reasoning_engines", "vertexai.agent_engines", "vertexai.preview.agent_engines",
    )},
    "vertexai.agent_engines.create": ("google-genai", "adk-app"),
    "vertexai.preview.agent_engines.create": ("google-genai", "adk-app"),
    # CAMEL (camel-ai): a ChatAgent's step / astep asks the model and runs the tool calls it answers
    # with (tools=: toolkits' get_tools(), FunctionTool(f)); a RolePlaying society's step runs its user
    # and assistant agents; a Workforce's process_task runs the workers added to it. OpenAI is the default model.
    **{f"camel.agents.{m}ChatAgent": ("openai", "camel-agent") for m in ("", "chat_agent.")},
    **{f"camel.societies.{m}RolePlaying": ("openai", "camel-society") for m in ("", "role_playing.")},
    **{f"camel.societies.{m}Workforce": ("openai", "camel-workforce") for m in ("", "workforce.", "workforce.workforce.")},
    # OpenAI Swarm: Swarm().run(agent=...) runs the agent's functions and whatever agent they hand off to.
    **{f"swarm.{n}": ("openai", "swarm") for n in ("Swarm", "core.Swarm")},
    **{f"swarm.{n}": ("openai", "swarm-agent") for n in ("Agent", "types.Agent", "agents.create_triage_agent")},
    # The Agents SDK's Runner as an object (runner = Runner(); runner.run(agent, ...)): Runner.run the same.
    "agents.Runner": ("openai", "agents-runner"),
    # Microsoft Agent Framework: an Agent (ChatAgent before 1.0) runs its tools= inside run (run_stream
    # before 1.0); an orchestration builder's build() is a workflow whose run runs every participant's
    # tools. Its chat clients (OpenAIChatClient, FoundryChatClient, ...) are matched by name (constructor).
    # Chat SDKs without a provider of their own in contracts (as for Ollama, counted as "openai"): the
    # OpenAI-shaped clients (chat.completions.create), and those with a shape of their own (apis_for).
    **{n: ("openai", "client") for n in (
        "zhipuai.ZhipuAI", "groq.Groq", "groq.AsyncGroq", "together.Together", "together.AsyncTogether",
        "cerebras.cloud.sdk.Cerebras", "cerebras.cloud.sdk.AsyncCerebras",
    )},
    **{f"qianfan.{n}": ("openai", "qianfan") for n in ("ChatCompletion", "Completion")},
    **{n: ("openai", "dashscope") for n in (
        "dashscope.Generation", "dashscope.aigc.generation.Generation", "dashscope.MultiModalConversation",
        "dashscope.aigc.multimodal_conversation.MultiModalConversation",
    )},
    "dashscope.api_entities.aiohttp_request.AioHttpRequest": ("openai", "dashscope-request"),
    "dashscope.api_entities.http_request.HttpRequest": ("openai", "dashscope-request"),
    "replicate.Client": ("openai", "replicate"),
    "replicate.client.Client": ("openai", "replicate"),
    "llama_cpp.Llama": ("openai", "llama-cpp"),
    "oci.generative_ai_inference.GenerativeAiInferenceClient": ("openai", "oci-genai"),
    "mistralai.Mistral": ("openai", "mistral"),
    # AbanteAI's spice (PyPI: spiceai, imported as spice): one client over OpenAI's and Anthropic's models.
    "spice.Spice": ("openai", "spice"),
    "spice.spice.Spice": ("openai", "spice"),
    # iFlytek Spark's SDK is a copy of LangChain's chat models (invoke, agenerate, astream).
    "sparkai.llm.llm.ChatSparkLLM": ("langchain", "chat"),
    # aider's Python API (aider-chat): Coder.create(main_model=Model(...), fnames=[...], io=...) builds a coder
    # whose run(prompt) asks the model (through LiteLLM) and applies the edits it answers to those files.
    **{f"aider.coders.{m}Coder.create": ("litellm", "aider-coder") for m in ("", "base_coder.")},
    **{f"agent_framework.{n}": ("openai", "maf-agent") for n in ("Agent", "ChatAgent")},
    **{f"agent_framework.{m}{n}": ("openai", "maf-builder") for m in ("", "orchestrations.") for n in (
        "SequentialBuilder", "ConcurrentBuilder", "GroupChatBuilder", "HandoffBuilder", "MagenticBuilder", "WorkflowBuilder",
    )},
}  # fmt: skip

# boto3 clients of Amazon Bedrock (boto3.client("bedrock-runtime"), session.client(service_name=...)):
# the service named decides; Bedrock's models are Claude's by default, as for Strands.
BOTO_SERVICES: dict[str, tuple[str, str]] = {
    "bedrock-runtime": ("anthropic", "bedrock-runtime"),
    "bedrock-agent-runtime": ("anthropic", "bedrock-agent-runtime"),
}

# SDK classes whose methods are called on the class itself (``Generation.call(model=…)``, classmethods):
# the class, or a project class deriving from it bound as it is (``self.client = MyGeneration``).
CLASS_CALLED_KINDS = frozenset({"dashscope"})

# Module-level functions that ask a model (provider, api): the SDK's default client.
MODULE_FUNCTIONS: dict[str, tuple[str, str]] = {
    **{f"replicate.{n}": ("openai", f"replicate.{n}") for n in ("run", "async_run", "stream", "async_stream")},
    # Together's module API before its OpenAI-shaped client (together < 1.0): completions and chat.
    **{f"together.{n}": ("openai", f"together.{n}") for n in ("Complete.create", "Complete.create_streaming", "Completion.create")},
    # PaLM's API in google.generativeai (before Gemini): text and chat.
    **{f"google.generativeai.{n}": ("google-genai", n) for n in (
        "generate_text", "generate_text_async", "chat", "chat_async",
    )},
}  # fmt: skip

# Modules that are themselves a client (``openai.chat.completions.create``).
MODULE_CLIENTS: dict[str, str] = {"openai": "openai", "anthropic": "anthropic", "litellm": "litellm"}

# A project's own SDK names ([tool.escalated.contracts] sdk = {"mycorp.llm" = "openai"}):
# set for the duration of one scan, so two scans in one process never see each other's.
EXTRA_SDK: ContextVar[Mapping[str, str]] = ContextVar("escalated_extra_sdk", default=MappingProxyType({}))
# (class, method) -> the base class of another module whose wrapper method the class inherits
# (("AsyncInterpreter", "chat"): "OpenInterpreter"): a call of it is a call site of the base's wrapper.
INHERITED_WRAPPERS: ContextVar[Mapping[tuple[str, str], str]] = ContextVar(
    "escalated_inherited_wrappers", default=MappingProxyType({})
)
# (class, method) of a base class whose method is a wrapper only because classes of other modules deriving
# from it override it as one (discovery._inherited; ("FaraQwen3Agent", "_execute_action")): ``self.m(…)`` in
# the base runs the override, ``super().m(…)`` in a subclass runs the base's own body, which asks no model.
OVERRIDDEN_WRAPPERS: ContextVar[frozenset[tuple[str, str]]] = ContextVar("escalated_overridden_wrappers", default=frozenset())
# Class (as written) -> the classes it derives from (as written), every module's analysed so far
# (discovery fills it as it goes): a method keeping the output on ``self`` is read on a receiver typed
# by one of its bases (``llm_adapter: LettaLLMAdapter``, the output kept by ``LettaLLMRequestAdapter``).
CLASS_BASES: ContextVar[Mapping[str, set[str]]] = ContextVar("escalated_class_bases", default=MappingProxyType({}))
# ``Class.method`` -> the attributes of its object it keeps the output in, for methods that keep it there
# and return none of it (``RequestAdapter.invoke_llm``: ``self.tool_call``; the classes it derives from too),
# every module's analysed so far: a call of it is a call site only where the caller reads one of those
# attributes after it, and what it reads is the answer.
KEPT_OUTPUTS: ContextVar[Mapping[str, frozenset[str]]] = ContextVar("escalated_kept_outputs", default=MappingProxyType({}))
# Base class (as written) -> attribute -> the model client that classes of other modules deriving from it
# bind to it (``self.client = openai.OpenAI(...).chat.completions`` in ``OpenAI(BaseOpenAI).__init__``), for
# the whole project's imported modules (discovery._subclass_clients): ``self.client.create(...)`` in the
# base's own methods asks that client. Values are ``kinds.Kind``.
SUBCLASS_CLIENTS: ContextVar[Mapping[str, Mapping[str, object]]] = ContextVar(
    "escalated_subclass_clients", default=MappingProxyType({})
)
# Method name -> how many ``def`` of it, indented (a class's, or a nested function's), the project's modules
# outside test folders write, counted up to two (discovery._walk_tree): a method only one project class
# defines, called on a receiver the scan cannot type, can only be that class's (call_match.only_implemented).
METHOD_DEFS: ContextVar[Mapping[str, int]] = ContextVar("escalated_method_defs", default=MappingProxyType({}))
# The graphs a langgraph.json names, per module (files.served_graphs): the LangGraph server runs them.
SERVED_GRAPHS: ContextVar[Mapping[str, frozenset[str]]] = ContextVar("escalated_served_graphs", default=MappingProxyType({}))


def module_clients() -> Mapping[str, str]:
    extra = EXTRA_SDK.get()
    return {**MODULE_CLIENTS, **extra} if extra else MODULE_CLIENTS

# LangChain model classes: any name like these imported from a langchain* package.
_LANGCHAIN_MODEL = re.compile(r"^(?:Azure)?Chat[A-Z]\w*$|^\w*LLM$|^(?:OpenAI|Ollama|VertexAI|BaseChatModel|BaseLanguageModel)$")

_CHAIN = re.compile(r"^[A-Z]\w*(?:Chain|QA)$")
_AGENT_BUILDER = re.compile(r"^create_\w*(?:agent|executor)$|^initialize_agent$|^AgentExecutor$")

# Methods per (provider, kind) that send a request to a model.
OPENAI_APIS = frozenset({
    "chat.completions.create", "chat.completions.parse", "chat.completions.stream",
    "beta.chat.completions.parse", "beta.chat.completions.stream",
    "responses.create", "responses.parse", "responses.stream", "completions.create",
    "beta.threads.runs.create", "beta.threads.runs.create_and_poll", "beta.threads.runs.stream",
    "beta.threads.create_and_run", "beta.threads.create_and_run_poll",
    "ChatCompletion.create", "ChatCompletion.acreate", "Completion.create",
    # instructor's wrappers of create keep the client's shape.
    "chat.completions.create_with_completion", "chat.completions.create_partial", "chat.completions.create_iterable",
    "create", "create_with_completion", "create_partial", "create_iterable",
    # Realtime (websocket) sessions: the model's events arrive on the connection.
    "beta.realtime.connect", "realtime.connect",
})  # fmt: skip
ANTHROPIC_APIS = frozenset({
    "messages.create", "messages.stream", "messages.parse", "beta.messages.create",
    # The prompt caching beta's own namespace (SDKs of 2024; caching is now part of messages).
    "beta.prompt_caching.messages.create", "beta.prompt_caching.messages.stream",
    "beta.messages.stream", "beta.messages.parse", "beta.messages.tool_runner", "completions.create",
    "messages.create_with_completion", "messages.create_partial", "messages.create_iterable",
    "create", "create_with_completion", "create_partial", "create_iterable",
    # Message Batches: the requests are submitted together, their answers read back later by the batch's id.
    "messages.batches.create", "beta.messages.batches.create",
})  # fmt: skip
GENAI_CLIENT_APIS = frozenset({
    "models.generate_content", "models.generate_content_stream",
    "aio.models.generate_content", "aio.models.generate_content_stream",
    "aio.live.connect", "live.connect",  # the Live API's websocket session (client.aio.live.connect)
})  # fmt: skip
GENAI_MODEL_APIS = frozenset({"generate_content", "generate_content_async", "send_message", "send_message_async"})
GENAI_CHAT_APIS = frozenset({"send_message", "send_message_stream", "send_message_async"})
OLLAMA_APIS = frozenset({"chat", "generate"})
LITELLM_FUNCTIONS = frozenset({"completion", "acompletion", "text_completion", "atext_completion", "responses", "aresponses"})
LANGCHAIN_METHODS = frozenset({
    "invoke", "ainvoke", "stream", "astream", "batch", "abatch", "astream_events",
    "predict", "apredict", "predict_messages", "apredict_messages", "generate", "agenerate", "run", "arun",
})  # fmt: skip
# A chain's (and an AgentExecutor's, a chain too) legacy call API besides the runnable's: Chain.acall(inputs),
# what LLMChain(prompt, llm).acall({...}) is still written as in apps of LangChain 0.1.
LANGCHAIN_CHAIN_METHODS = LANGCHAIN_METHODS | {"acall"}
LLAMAINDEX_LLM_METHODS = frozenset({
    "complete", "acomplete", "chat", "achat", "stream_complete", "astream_complete", "stream_chat",
    "astream_chat", "predict", "apredict", "structured_predict", "astructured_predict",
    # Function calling: the model chooses tool calls (chat_with_tools), or they run too (predict_and_call).
    "chat_with_tools", "achat_with_tools", "stream_chat_with_tools", "astream_chat_with_tools", "predict_and_call", "apredict_and_call",
})  # fmt: skip
# An index's query and chat engines (index.as_query_engine(llm=…)), LlamaIndex's only: what they answer is the model's.
LLAMAINDEX_ENGINE_BUILDERS = frozenset({"as_query_engine", "as_chat_engine"})
LLAMAINDEX_ENGINE_METHODS = frozenset({"query", "aquery", "chat", "achat", "stream_chat", "astream_chat"})
# LlamaIndex's function-calling methods: a call of one on an LLM the scan cannot resolve (``llm = await
# ctx.get("llm")`` in a workflow step) is still a model call, in a module that imports llama_index.
LLAMAINDEX_TOOL_CALLS = frozenset({
    "chat_with_tools", "achat_with_tools", "stream_chat_with_tools", "astream_chat_with_tools", "predict_and_call", "apredict_and_call",
})
AGENTS_RUNNER = frozenset({"run", "run_sync", "run_streamed"})
BEDROCK_APIS = frozenset({"converse", "converse_stream", "invoke_model", "invoke_model_with_response_stream"})

# Methods that derive a still-LLM runnable from a LangChain model.
RUNNABLE_DERIVERS = frozenset({
    "bind_tools", "with_structured_output", "bind", "with_config", "with_retry",
    "with_fallbacks", "configurable_fields", "configurable_alternatives", "pipe",
})  # fmt: skip

# Test doubles: a receiver built by one of these is not a client, whatever it is called.
MOCKS = frozenset({
    "unittest.mock.MagicMock", "unittest.mock.Mock", "unittest.mock.AsyncMock", "unittest.mock.NonCallableMagicMock",
    "unittest.mock.NonCallableMock", "unittest.mock.create_autospec", "mock.MagicMock", "mock.Mock", "mock.AsyncMock",
    "mocker.MagicMock", "mocker.Mock", "mocker.AsyncMock", "mocker.create_autospec",
})  # fmt: skip
# functools.partial(model_function, ...) and friends: calling the result calls the model.
PARTIALS = frozenset({"functools.partial", "functools.partialmethod"})

# Response wrappers that keep the call's shape: client.chat.completions.with_raw_response.create
TRANSPARENT_SEGMENTS = frozenset({"with_raw_response", "with_streaming_response"})
# Client methods that return the same client with other settings: client.with_options(timeout=5)
CLIENT_COPIES = frozenset({"with_options", "copy"})

# Two-way sessions (websockets): the call opens a connection the code then talks over, so a
# guard around it would hold the connection, not an answer; apply guards what the events drive.
SESSION_APIS = frozenset({"beta.realtime.connect", "realtime.connect", "aio.live.connect", "live.connect"})
SESSION_REASON = (
    "a realtime session (websocket) is a connection, not an answer: a guard around it would hold "
    "the connection; guard what its events drive instead (guard() around each action, @guard_tool on handlers)"
)

# A graph a langgraph.json names: the LangGraph server loads the module's binding and runs it.
SERVED_GRAPH = "langgraph.json graph"
SERVED_GRAPH_REASON = (
    "a graph named in langgraph.json is run by the LangGraph server, not called here: there is no call to wrap; "
    "gate its tools (interrupt, HumanInTheLoopMiddleware) instead"
)
# A Google ADK agent package's entry point: the ADK's runners load the module's ``root_agent``.
ADK_ROOT_AGENT = "root_agent"
ADK_ROOT_REASON = (
    "a Google ADK root_agent is run by the ADK (adk run/web/api_server, AdkApp), not called here: there is "
    "no call to wrap; gate its risky tools (FunctionTool(f, require_confirmation=True), @guard_tool) instead"
)
# What runs an Agno agent or team (its tools inside): continue_run runs the tools a human confirmed.
AGNO_RUNS = frozenset({"run", "arun", "print_response", "aprint_response", "continue_run", "acontinue_run", "cli_app", "acli_app"})
# A smolagents GradioUI(agent).launch() serves the agent's runs to whoever opens the page.
SMOL_UIS = frozenset({"smolagents.GradioUI", "smolagents.gradio_ui.GradioUI"})
SMOL_UI_REASON = (
    "a smolagents GradioUI serves runs of its agent to whoever opens the page: launch() returns when the "
    "server stops, so a guard around it decides nothing; gate the agent's risky tools (@guard_tool) instead"
)
# Calls apply never wraps, and why: ``guard(lambda: …)`` around them would not decide anything.
UNWRAPPED: dict[str, str] = {
    **{api: SESSION_REASON for api in SESSION_APIS}, ADK_ROOT_AGENT: ADK_ROOT_REASON, "launch": SMOL_UI_REASON,
    SERVED_GRAPH: SERVED_GRAPH_REASON,
}

GUARD_NAMES = frozenset({"escalated.guard", "escalated.guard.guard"})
# guard_tool under every name it has had (escalated.guard_tools is the pre-0.2 shim).
GUARD_TOOL_NAMES = frozenset({"escalated.guard.guard_tool", "escalated.guard.tools.guard_tool", "escalated.guard_tools.guard_tool"})
# Receivers whose call runs the agent's tools inside it (besides agents.Runner.*): a guard
# around the call decides too late for those tools, so they are guarded at the tool.
RUNNER_KINDS = frozenset({
    "agent", "agents-realtime", "crew", "crew-agent", "pydantic-agent", "smol-agent", "smol-code-agent", "smol-ui",
    "llamaindex-agent", "strands-agent", "agno-agent", "agno-team", "autogen-agent", "autogen-team", "adk-agent", "adk-runner", "adk-app",
    "swarm", "ag2-agent", "ag2-chat", "maf-agent", "maf-workflow", "camel-agent", "camel-society", "camel-workforce",
    "aider-coder",
})  # fmt: skip
# AG2's group chats: initiate_group_chat(pattern=DefaultPattern(agents=[...]), ...) and the older swarm
# chat run every agent's tools inside the call; the module's own functions, no receiver.
AG2_GROUP_RUNS = frozenset({
    f"autogen.{where}{prefix}{name}"
    for where in ("", "agentchat.", "agentchat.group.multi_agent_chat.", "agentchat.contrib.swarm_agent.", "agentchat.group.")
    for prefix in ("", "a_")
    for name in ("initiate_group_chat", "run_group_chat", "initiate_swarm_chat", "run_swarm")
})
# Swarm's REPL helper: run_demo_loop(agent) runs the agent (Swarm().run) turn after turn.
SWARM_LOOPS = frozenset({"swarm.repl.run_demo_loop", "swarm.run_demo_loop", "swarm.repl.repl.run_demo_loop"})
# escalated's own adapters, which run the framework's runner with its approval hook answered.
ADAPTER_RUNS = {"escalated.adapters.openai_agents.run_with_approvals": "agents.Runner.run"}
# run_with_approvals(agent, ...) of the Pydantic AI adapter: the same agent.run, its agent the first argument.
PYDANTIC_ADAPTER_RUN = "escalated.adapters.pydantic_ai.run_with_approvals"
# run_with_approvals(agent, ...) / arun_with_approvals of the Agno adapter: the same agent.run (arun), its agent the first argument.
AGNO_ADAPTER_RUNS = {"escalated.adapters.agno.run_with_approvals": "run", "escalated.adapters.agno.arun_with_approvals": "arun"}
# run_with_approvals(agent, ...) of the Agent Framework adapter: the same agent.run.
MAF_ADAPTER_RUNS = {"escalated.adapters.agent_framework.run_with_approvals": "run"}
INTERRUPT_NAMES = frozenset({"langgraph.types.interrupt", "langgraph.prebuilt.interrupt"})
# invoke_with_approvals(graph, ...) of the LangGraph adapter: the same graph.invoke (ainvoke), its graph the first argument.
LANGGRAPH_ADAPTER_RUNS = {
    "escalated.adapters.langgraph.invoke_with_approvals": "invoke",
    "escalated.adapters.langgraph.ainvoke_with_approvals": "ainvoke",
}
# Lanarky's StreamingResponse.from_chain(chain, inputs): a FastAPI response that runs the LangChain chain it is
# given and streams its answer to the client (the chain its first argument).
CHAIN_STREAMERS = {
    "lanarky.responses.StreamingResponse.from_chain": "StreamingResponse.from_chain",
    "lanarky.StreamingResponse.from_chain": "StreamingResponse.from_chain",
}
# @interrupt_for_approval on a LangChain tool: the tool interrupts for a reviewer before its body runs.
LANGGRAPH_TOOL_GATE = "escalated.adapters.langgraph.interrupt_for_approval"
# @approval_required(policy=...) on a CrewAI tool: CrewAI's before_tool_call hook holds each call for a reviewer.
CREWAI_TOOL_GATE = "escalated.adapters.crewai.approval_required"

# Provider of an API-shaped call whose receiver could not be resolved.
SHAPE_FALLBACKS: tuple[tuple[str, str], ...] = (
    ("beta.chat.completions.parse", "openai"),
    ("beta.chat.completions.stream", "openai"),
    ("chat.completions.create", "openai"),
    ("chat.completions.parse", "openai"),
    ("chat.completions.stream", "openai"),
    ("responses.create", "openai"),
    ("responses.parse", "openai"),
    ("responses.stream", "openai"),
    ("beta.realtime.connect", "openai"),
    ("beta.prompt_caching.messages.create", "anthropic"),
    ("beta.prompt_caching.messages.stream", "anthropic"),
    ("beta.messages.create", "anthropic"),
    ("beta.messages.stream", "anthropic"),
    ("messages.create", "anthropic"),
    ("messages.stream", "anthropic"),
    ("models.generate_content", "google-genai"),
    ("models.generate_content_stream", "google-genai"),
    ("aio.live.connect", "google-genai"),
    ("generate_content", "google-genai"),
    ("generate_content_async", "google-genai"),
)


# LlamaIndex LLM packages -> provider (llama_index.llms.<package>.<Class>).
_LLAMA_PROVIDERS = {
    "openai": "openai", "azure_openai": "openai", "openai_like": "openai", "anthropic": "anthropic",
    "gemini": "google-genai", "google_genai": "google-genai", "vertex": "google-genai", "litellm": "litellm",
}  # fmt: skip
# Microsoft Agent Framework client packages -> provider (agent_framework.<package>.<Client>); Azure,
# Foundry, Ollama and the rest speak OpenAI's API.
_MAF_PROVIDERS = {"anthropic": "anthropic", "google": "google-genai", "gemini": "google-genai", "amazon": "anthropic"}
# Pydantic AI model strings ("openai:gpt-4o") -> provider.
MODEL_PREFIXES = {
    "openai": "openai", "azure": "openai", "anthropic": "anthropic", "google-gla": "google-genai",
    "google-vertex": "google-genai", "gemini": "google-genai", "litellm": "litellm",
}  # fmt: skip


# The Agents SDK's classes imported from the modules defining them (from agents.run import Runner),
# as the package re-exports them.
_DEFINED_IN = {"agents.run.Runner": "agents.Runner", "agents.agent.Agent": "agents.Agent"}


def canonical(qualified: str) -> str:
    """``agents.run.Runner.run`` -> ``agents.Runner.run``: the name the package exports it under."""
    for defined, exported in _DEFINED_IN.items():
        if qualified == defined or qualified.startswith(defined + "."):
            return exported + qualified[len(defined) :]
    return qualified


def constructor(qualified: str) -> tuple[str, str] | None:
    """Provider and kind of what calling ``qualified`` returns, if it is a model client."""
    qualified = canonical(qualified)
    if qualified in CONSTRUCTORS:
        return CONSTRUCTORS[qualified]
    extra = EXTRA_SDK.get()
    if qualified in extra:
        return (extra[qualified], "client")
    if qualified in {"pydantic_ai.Agent", "pydantic_ai.agent.Agent"}:
        return ("openai", "pydantic-agent")  # provider refined from the model string
    parts = qualified.split(".")
    if qualified.startswith(("llama_index.llms.", "llama_index.multi_modal_llms.")) and len(parts) > 3 and parts[2] in _LLAMA_PROVIDERS:
        # OpenAI(...), and the multimodal models asked with images (OpenAIMultiModal(...).complete(prompt, image_documents)).
        return (_LLAMA_PROVIDERS[parts[2]], "llamaindex-llm")
    if qualified.startswith("llama_index") and any(p.endswith(("Agent", "AgentWorkflow")) for p in parts[1:]):
        return ("openai", "llamaindex-agent")  # provider refined from llm= (AgentWorkflow.from_tools_or_functions too)
    module, _, name = qualified.rpartition(".")
    if module.startswith("agent_framework") and name.endswith("Client"):
        # agent_framework.openai.OpenAIChatClient, agent_framework.foundry.FoundryChatClient, ...
        return (_MAF_PROVIDERS.get(module.partition(".")[2].partition(".")[0], "openai"), "maf-client")
    # langchain_openai, langchain_community.chat_models, databricks_langchain, ...
    if "langchain" in module and _LANGCHAIN_MODEL.match(name):
        return ("langchain", "chat")
    if "langchain" in module and name in {"init_chat_model", "load_chat_model"}:
        return ("langchain", "chat")
    if module.startswith(("langchain", "langgraph")) and _AGENT_BUILDER.match(name):
        return ("langchain", "agent")
    if module.startswith("langchain") and module.rpartition(".")[2] == "AgentExecutor" and name == "from_agent_and_tools":
        return ("langchain", "agent")  # AgentExecutor.from_agent_and_tools(agent=..., tools=[...]): the executor itself
    if qualified.startswith("langchain") and any(_CHAIN.match(part) for part in qualified.split(".")[1:]):
        return ("langchain", "runnable")  # LLMChain(...), RetrievalQA.from_chain_type(...)
    return None


def annotation_kind(qualified: str) -> tuple[str, str] | None:
    """A parameter annotated with a client class holds an instance of it."""
    # Not "Runnable": any function can be one, so it says nothing about a model.
    if "langchain" in qualified and qualified.rpartition(".")[2] in {"BaseChatModel", "BaseLanguageModel", "BaseLLM", "LanguageModelLike"}:
        return ("langchain", "chat")
    if qualified == "autogen_core.models.ChatCompletionClient":
        return ("openai", "autogen-client")  # the abstract client: any of AutoGen's model clients
    if qualified.startswith("llama_index.core") and qualified.rpartition(".")[2] in {"LLM", "FunctionCallingLLM", "BaseLLM", "MultiModalLLM"}:
        # llm: LLM, the base class of every LlamaIndex model (BaseLLM above it); mm_llm: MultiModalLLM, of the image models.
        return ("openai", "llamaindex-llm")
    if qualified in {"smolagents.Model", "smolagents.models.Model"}:
        return ("litellm", "smol-model")  # model: Model, the base class of every smolagents model
    return constructor(qualified)


def apis_for(provider: str, kind: str) -> frozenset[str]:
    if kind in {"client", "module"}:
        return {
            "openai": OPENAI_APIS,
            "anthropic": ANTHROPIC_APIS,
            "google-genai": GENAI_CLIENT_APIS,
            "litellm": LITELLM_FUNCTIONS,
        }.get(provider, frozenset())
    if kind == "model":
        return GENAI_MODEL_APIS
    if kind == "genai-chat":
        return GENAI_CHAT_APIS
    if kind == "router":
        return frozenset({"completion", "acompletion", "text_completion", "atext_completion", "responses", "aresponses"})
    if kind in {"runnable", "agent"}:
        return LANGCHAIN_CHAIN_METHODS
    if kind == "chat":
        return LANGCHAIN_METHODS
    if kind in {"crewai-llm", "smol-model"}:
        return frozenset({"call", "acall", "generate", "__call__"})
    if kind == "crew":
        return frozenset({"kickoff", "kickoff_async", "kickoff_for_each", "kickoff_for_each_async", "akickoff"})
    if kind == "crew-agent":
        return frozenset({"kickoff", "kickoff_async", "execute_task"})
    if kind in {"smol-code-agent", "smol-agent"}:
        return frozenset({"run"})
    if kind == "smol-ui":
        return frozenset({"launch"})
    if kind in {"agno-agent", "agno-team"}:
        return AGNO_RUNS
    if kind == "agno-model":
        return frozenset({"response", "aresponse", "response_stream", "aresponse_stream"})
    if kind == "agents-realtime":
        return frozenset({"run"})
    if kind == "pydantic-agent":
        return frozenset({"run", "run_sync", "run_stream", "iter", "run_stream_events"})
    if kind == "strands-agent":
        return frozenset({"__call__", "invoke_async", "stream_async", "structured_output", "structured_output_async"})
    if kind == "llamaindex-llm":
        return LLAMAINDEX_LLM_METHODS
    if kind == "llamaindex-engine":
        return LLAMAINDEX_ENGINE_METHODS
    if kind == "ollama-client":
        return OLLAMA_APIS
    if kind == "autogen-client":
        return frozenset({"create", "create_stream"})
    if kind == "autogen-agent":
        return frozenset({"run", "run_stream", "on_messages", "on_messages_stream"})
    if kind == "ag2-agent":
        return AG2_RUNS
    if kind == "autogen-team":
        return frozenset({"run", "run_stream"})
    if kind == "adk-runner":
        return frozenset({"run", "run_async", "run_live"})
    if kind == "swarm":
        return frozenset({"run"})
    if kind in {"camel-agent", "camel-society"}:
        return frozenset({"step", "astep"})
    if kind == "camel-workforce":
        return frozenset({"process_task", "process_task_async"})
    if kind == "qianfan":
        return frozenset({"do", "ado", "batch_do", "abatch_do"})
    if kind == "dashscope":
        return frozenset({"call", "acall"})
    if kind == "dashscope-request":
        return frozenset({"call", "aio_call"})
    if kind == "replicate":
        return frozenset({"run", "async_run", "stream", "async_stream"})
    if kind == "llama-cpp":
        return frozenset({"create_chat_completion", "create_completion", "__call__"})
    if kind == "oci-genai":
        return frozenset({"chat", "generate_text"})
    if kind == "spice":
        return frozenset({"get_response", "stream_response"})  # not get_embeddings, get_transcription
    if kind == "mistral":
        return frozenset({"chat.complete", "chat.complete_async", "chat.stream", "chat.stream_async", "chat.parse"})
    if kind == "bedrock-runtime":
        return BEDROCK_APIS
    if kind == "bedrock-agent-runtime":
        return frozenset({"invoke_agent", "invoke_inline_agent", "retrieve_and_generate", "retrieve_and_generate_stream"})
    if kind == "adk-app":
        return frozenset({"stream_query", "async_stream_query", "query", "async_query", "streaming_agent_run_with_events"})
    if kind == "aider-coder":
        return frozenset({"run", "run_stream", "run_one"})
    if kind == "maf-agent":
        return frozenset({"run", "run_stream"})
    if kind == "maf-workflow":
        return frozenset({"run", "run_stream", "send_responses", "send_responses_streaming"})
    if kind == "maf-client":
        return frozenset({"get_response", "get_streaming_response"})
    if kind == "llamaindex-agent":
        return frozenset({"run", "chat", "achat", "stream_chat", "astream_chat", "query", "aquery"})
    return frozenset()


# A model's HTTP API called without its SDK: requests.post / httpx.post, or post / request on a client
# or session object (httpx.AsyncClient, aiohttp, a project's requestor), to an endpoint whose path is a
# model API's (OpenAI-compatible chat completions and responses, Anthropic messages, Gemini).
HTTP_POSTS = frozenset({"requests.post", "httpx.post"})
HTTP_METHODS = frozenset({"post", "apost", "request", "arequest", "stream"})
# The HTTP method written first, the address second (only a "POST" is a question to a model).
HTTP_VERB_FIRST = frozenset({"request", "arequest", "stream"})
_MODEL_ENDPOINTS = (
    (re.compile(r"https?://[^\s/]+(?:/[^\s]*)?/v1/messages\b"), "anthropic"),
    (re.compile(r"https?://[^\s/]+(?:/[^\s]*)?:(?:stream)?[gG]enerateContent\b"), "google-genai"),
    (re.compile(r"https?://[^\s/]+(?:/[^\s]*)?/(?:chat/completions|responses)\b"), "openai"),
)
# The same paths after a base address the code does not spell (f"{base_url}/v1/chat/completions", the
# \x00 standing for the placeholder), or alone (a path joined to a base address elsewhere): only the
# unmistakable ones.
_MODEL_PATHS = (
    (re.compile(r"^\x00(?:/[^\s\x00]*)?/v1/messages$"), "anthropic"),
    (re.compile(r"^\x00(?:/[^\s\x00]*)?:(?:stream)?[gG]enerateContent$"), "google-genai"),
    (re.compile(r"^\x00(?:/[^\s\x00]*)?/(?:chat/completions|responses)$"), "openai"),
    # Azure OpenAI: the deployment named in the path, the API version in the query
    # (f"{base}/openai/deployments/{model}/chat/completions?api-version=2024-02-01").
    (re.compile(r"^\x00/openai/deployments/[^\s/]+/(?:chat/completions|completions|responses)(?:\?\S*)?$"), "openai"),
    (re.compile(r"^/v1/messages$"), "anthropic"),
    (re.compile(r"^(?:/[\w.-]+)*/chat/completions$"), "openai"),
)


def model_endpoint(url: str) -> str | None:
    """The provider whose model API ``url`` is (an address written in the code), or None."""
    for pattern, provider in _MODEL_ENDPOINTS:
        if pattern.match(url):
            return provider
    for pattern, provider in _MODEL_PATHS:
        if pattern.match(url):
            return provider
    return None
