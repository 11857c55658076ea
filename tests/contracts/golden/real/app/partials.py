"""Point 3: functools.partial of a model function, getattr(..., "create"), clients passed in, instructor."""
import subprocess
from functools import partial

import instructor
import litellm
from openai import OpenAI
from escalated.guard import guard


class Model:
    def __init__(self, name: str) -> None:
        self._completion = partial(litellm.completion, model=name, temperature=0)

    def query(self, messages: list) -> str:
        response = guard("partials.query", lambda: self._completion(messages=messages))
        return response.choices[0].message.content


def stream_answer(client: OpenAI, prompt: str) -> str:
    create = getattr(client.responses.with_streaming_response, "create")
    with guard("partials.stream_answer", lambda: create(model="gpt-4o", input=prompt)) as response:
        return response.text


class Assistant:
    def __init__(self, client) -> None:
        self.client = client

    def start(self, thread_id: str) -> object:
        return guard("partials.start", lambda: self.client.beta.threads.runs.create(thread_id=thread_id, assistant_id="asst"))


assistant = Assistant(OpenAI())
structured = instructor.from_openai(OpenAI())


def plan_command(goal: str) -> None:
    plan, completion = guard("partials.plan_command", lambda: structured.chat.completions.create_with_completion(
        model="gpt-4o", response_model=dict, messages=[{"role": "user", "content": goal}]
    ))
    subprocess.run(plan["command"], shell=True, check=True)
