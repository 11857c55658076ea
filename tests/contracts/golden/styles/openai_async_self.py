"""OpenAI: async client set on self in __init__, awaited calls, Responses API, parse."""
from openai import AsyncOpenAI, AsyncAzureOpenAI
from pydantic import BaseModel
from escalated.guard import guard


class Triage(BaseModel):
    category: str


class SupportAgent:
    def __init__(self) -> None:
        self.client = AsyncOpenAI()
        self.azure = AsyncAzureOpenAI(api_version="2024-06-01")

    async def answer(self, question: str) -> str:
        response = await guard("openai_async_self.answer", lambda: self.client.responses.create(model="gpt-4o", input=question))
        return response.output_text

    async def triage(self, ticket: str) -> Triage:
        completion = await guard("openai_async_self.triage", lambda: self.client.beta.chat.completions.parse(
            model="gpt-4o", messages=[{"role": "user", "content": ticket}], response_format=Triage
        ))
        return completion.choices[0].message.parsed

    async def answer_azure(self, question: str) -> str:
        first = await guard("openai_async_self.answer_azure", lambda: self.azure.chat.completions.create(model="gpt-4o", messages=[]))
        second = await guard("openai_async_self.answer_azure.1", lambda: self.azure.chat.completions.create(model="gpt-4o", messages=[]))
        return first.choices[0].message.content + second.choices[0].message.content
