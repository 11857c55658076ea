"""Google GenAI: the new client (sync and aio) and the older GenerativeModel."""
import google.generativeai as legacy_genai
from google import genai
from escalated.guard import guard

client = genai.Client()


def caption(prompt: str) -> str:
    return guard("google_genai.caption", lambda: client.models.generate_content(model="gemini-2.0-flash", contents=prompt)).text


async def caption_async(prompt: str) -> str:
    response = await guard("google_genai.caption_async", lambda: client.aio.models.generate_content(model="gemini-2.0-flash", contents=prompt))
    return response.text


def legacy(prompt: str) -> str:
    model = legacy_genai.GenerativeModel("gemini-1.5-flash")
    return guard("google_genai.legacy", lambda: model.generate_content(prompt)).text
