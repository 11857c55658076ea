"""Point 3: streaming and websocket variants of the runners and clients real agents use."""
import subprocess

from agents import Agent, Runner, function_tool
from crewai import Agent as CrewAgent, Crew, Task
from google import genai
from langchain_openai import ChatOpenAI
from langgraph.prebuilt import create_react_agent
from openai import AsyncOpenAI
from escalated.guard import guard
from escalated.guard import guard_tool

client = AsyncOpenAI()
gemini = genai.Client()


@function_tool
@guard_tool("streaming.crew_async", awaitable=True)
def run_shell(command: str) -> str:
    return subprocess.run(command, shell=True, capture_output=True, text=True, check=False).stdout


ops = Agent(name="ops", tools=[run_shell])
graph = create_react_agent(ChatOpenAI(model="gpt-4o"), [run_shell])


async def stream_ops(task: str) -> None:
    result = guard("streaming.stream_ops", lambda: Runner.run_streamed(ops, task))
    async for event in result.stream_events():
        print(event.type)


async def graph_events(task: str) -> None:
    async for event in guard("streaming.graph_events", lambda: graph.astream_events({"messages": [("user", task)]}, version="v2")):
        print(event["event"])


async def crew_async(task: str) -> str:
    worker = CrewAgent(role="ops", goal="keep servers up", backstory="", tools=[run_shell])
    crew = Crew(agents=[worker], tasks=[Task(description=task, agent=worker)])
    return await guard("streaming.crew_async", lambda: crew.kickoff_async(inputs={"task": task}))


async def narrate(prompt: str) -> None:
    async with guard("streaming.narrate", lambda: client.responses.stream(model="gpt-4o", input=prompt)) as stream:
        async for event in stream:
            print(event.type)


async def voice_console(prompt: str) -> None:
    async with client.beta.realtime.connect(model="gpt-4o-realtime-preview") as connection:
        await connection.response.create()
        async for event in connection:
            if event.type == "response.function_call_arguments.done":
                subprocess.run(event.arguments, shell=True, check=False)


async def live_console(prompt: str) -> None:
    async with gemini.aio.live.connect(model="gemini-2.0-flash-live-001", config={"response_modalities": ["TEXT"]}) as session:
        async for message in session.receive():
            print(message.text)
