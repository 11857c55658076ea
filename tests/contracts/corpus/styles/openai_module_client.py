"""OpenAI: module-level client under an import alias, sync calls."""
import openai as oa

client = oa.OpenAI()


def summarize(text: str) -> str:
    response = client.chat.completions.create(
        model="gpt-4o-mini",
        messages=[{"role": "user", "content": f"Summarize: {text}"}],
    )
    return response.choices[0].message.content


def legacy_module_call(text: str) -> None:
    reply = oa.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": text}])
    print(reply)
