"""LangChain: chat models, a chain, streaming, structured output."""
from langchain_anthropic import ChatAnthropic
from langchain_core.prompts import ChatPromptTemplate
from langchain_openai import ChatOpenAI
from pydantic import BaseModel
from escalated.guard import guard

llm = ChatOpenAI(model="gpt-4o-mini")
prompt = ChatPromptTemplate.from_template("Tell me about {topic}")
chain = prompt | llm


class Verdict(BaseModel):
    approve: bool


def explain(topic: str) -> str:
    return guard("langchain_models.explain", lambda: chain.invoke({"topic": topic})).content


async def stream_story(topic: str) -> None:
    model = ChatAnthropic(model="claude-sonnet-4-5")
    async for chunk in guard("langchain_models.stream_story", lambda: model.astream(topic)):
        print(chunk.content, end="")


def judge(claim: str) -> bool:
    verdict = guard("langchain_models.judge", lambda: llm.with_structured_output(Verdict).invoke(claim))
    return verdict.approve


async def quick(topic: str) -> str:
    answer = await guard("langchain_models.quick", lambda: llm.ainvoke(topic))
    return answer.content
