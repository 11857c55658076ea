"""Calls already wrapped in guards, sync and awaited."""
from escalated.guard import guard
from openai import AsyncOpenAI, OpenAI

client = OpenAI()
aclient = AsyncOpenAI()


def classify(text: str) -> str:
    response = guard("styles.classify", lambda: client.chat.completions.create(model="gpt-4o", messages=[]))
    return response.choices[0].message.content


async def classify_async(text: str) -> str:
    response = await guard("styles.classify-async", lambda: aclient.chat.completions.create(model="gpt-4o", messages=[]))
    return response.choices[0].message.content
