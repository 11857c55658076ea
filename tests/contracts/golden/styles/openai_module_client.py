"""OpenAI: module-level client under an import alias, sync calls."""
import openai as oa
from escalated.guard import guard

client = oa.OpenAI()


def summarize(text: str) -> str:
    response = guard("openai_module_client.summarize", lambda: client.chat.completions.create(
        model="gpt-4o-mini",
        messages=[{"role": "user", "content": f"Summarize: {text}"}],
    ))
    return response.choices[0].message.content


def legacy_module_call(text: str) -> None:
    reply = guard("openai_module_client.legacy_module_call", lambda: oa.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": text}]))
    print(reply)
