"""LiteLLM: aliased function import and the async variant through the module."""
import litellm
from litellm import completion as llm
from escalated.guard import guard


def draft(topic: str) -> str:
    result = guard("litellm_calls.draft", lambda: llm(model="gpt-4o-mini", messages=[{"role": "user", "content": topic}]))
    return result.choices[0].message.content


async def draft_async(topic: str) -> str:
    result = await guard("litellm_calls.draft_async", lambda: litellm.acompletion(model="claude-3-5-haiku", messages=[{"role": "user", "content": topic}]))
    return result.choices[0].message.content
