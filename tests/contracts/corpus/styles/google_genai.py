"""Google GenAI: the new client (sync and aio) and the older GenerativeModel."""
import google.generativeai as legacy_genai
from google import genai

client = genai.Client()


def caption(prompt: str) -> str:
    return client.models.generate_content(model="gemini-2.0-flash", contents=prompt).text


async def caption_async(prompt: str) -> str:
    response = await client.aio.models.generate_content(model="gemini-2.0-flash", contents=prompt)
    return response.text


def legacy(prompt: str) -> str:
    model = legacy_genai.GenerativeModel("gemini-1.5-flash")
    return model.generate_content(prompt).text
