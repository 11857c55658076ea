"""Model SDKs and raw requests the scan did not know, and wrappers inherited from another module.

Small projects written from the shapes real agent code uses (DashScope, Qianfan, ZhipuAI, Spark,
llama.cpp, Replicate and PaLM clients; httpx posts to a base address's chat completions; a
requestor given an endpoint path; Bedrock's invoke_model run in an executor through partial; an
action calling the private ask method of its base class in another module). The repositories
these shapes come from stay out of this repository.
"""

from __future__ import annotations

from pathlib import Path

from tests.contracts.projects import scan_files


def _calls(tmp_path: Path, files: dict[str, str]) -> dict[tuple[str, int], tuple[str, str, str]]:
    result = scan_files(tmp_path, files)
    return {(c.location.path, c.location.line): (c.provider, c.api, c.recommendation.mode) for c in result.calls}


SDKS = """\
import subprocess

import dashscope
import google.generativeai as palm
import qianfan
import replicate
from dashscope.aigc.generation import Generation
from llama_cpp import Llama
from sparkai.llm.llm import ChatSparkLLM
from zhipuai import ZhipuAI


class QwenGeneration(Generation):
    pass


class Models:
    def __init__(self):
        self.qianfan = qianfan.ChatCompletion()
        self.qwen = QwenGeneration
        self.llama = Llama(model_path="model.gguf")
        self.zhipu = ZhipuAI(api_key="key")
        self.spark = ChatSparkLLM(spark_api_url="wss://spark")

    def ernie(self, messages):
        return self.qianfan.do(messages=messages).body["result"]

    async def qwen_reply(self, messages):
        return (await self.qwen.acall(model="qwen-max", messages=messages)).output

    def local(self, messages):
        return self.llama.create_chat_completion(messages=messages)["choices"][0]["message"]["content"]

    def glm(self, messages):
        return self.zhipu.chat.completions.create(model="glm-4", messages=messages).choices[0].message.content

    async def spark_reply(self, messages):
        return await self.spark.agenerate([messages])


def run_command(prompt):
    command = "".join(replicate.run("meta/llama:v1", input={"prompt": prompt}))
    subprocess.run(command, shell=True)


def palm_text(prompt):
    return palm.generate_text(model="models/text-bison-001", prompt=prompt).result


def qwen_text(messages):
    return Generation.call(model="qwen-turbo", messages=messages).output.text
"""


def test_chat_sdks_without_a_provider_of_their_own_are_model_calls(tmp_path: Path) -> None:
    calls = _calls(tmp_path, {"models.py": SDKS})
    assert calls == {
        ("models.py", 26): ("openai", "do", "autonomous"),
        ("models.py", 29): ("openai", "acall", "autonomous"),
        ("models.py", 32): ("openai", "create_chat_completion", "autonomous"),
        ("models.py", 35): ("openai", "chat.completions.create", "autonomous"),
        ("models.py", 38): ("langchain", "agenerate", "autonomous"),
        ("models.py", 42): ("openai", "replicate.run", "required"),
        ("models.py", 47): ("google-genai", "generate_text", "autonomous"),
        ("models.py", 51): ("openai", "call", "autonomous"),
    }


REPLICATE_MEDIA = """\
import replicate


async def draw(prompt):
    client = replicate.Client("key")
    output = client.run("stability-ai/stable-diffusion:db21e45d", input={"prompt": prompt})
    return output[0]


def sketch(prompt):
    return replicate.run("black-forest-labs/flux-schnell", input={"prompt": prompt})


def answer(prompt):
    return "".join(replicate.run("meta/meta-llama-3-70b-instruct", input={"prompt": prompt}))


def any_model(ref, prompt):
    return replicate.run(ref, input={"prompt": prompt})


async def image_tool(prompt):
    return await draw(prompt)
"""


def test_a_replicate_run_of_an_image_model_named_in_the_call_is_no_model_call(tmp_path: Path) -> None:
    """Replicate runs any model by name: an image generator's output is a file's URL, not an
    answer (AgentGPT's image tool). A language model's name, or a name read from elsewhere,
    is still a call; and the image run's wrapper has no call site either."""
    calls = _calls(tmp_path, {"media.py": REPLICATE_MEDIA})
    assert calls == {
        ("media.py", 15): ("openai", "replicate.run", "autonomous"),
        ("media.py", 19): ("openai", "replicate.run", "autonomous"),
    }


RAW_HTTP = """\
import httpx
import requests
from fastapi import FastAPI

app = FastAPI()
CHATGPT = "https://chatgpt.com"
CODEX_ENDPOINT = f"{CHATGPT}/backend-api/codex/responses"


class Requestor:
    async def arequest(self, method, url, params=None, headers=None):
        ...


class Hosted:
    def __init__(self, base_url):
        self.base_url = base_url
        self.requestor = Requestor()
        self.url_suffix = "/chat/completions"

    async def ask(self, payload):
        async with httpx.AsyncClient() as client:
            response = await client.post(f"{self.base_url}/v1/chat/completions", json=payload)
            return response.json()

    async def ask_mistral(self, payload):
        url = f"{self._base()}/chat/completions"
        response = await self.http.post(url, json=payload)
        return response.json()

    async def ask_requestor(self, payload):
        response, _, _ = await self.requestor.arequest(url=self.url_suffix, method="post", params=payload)
        return response

    async def create_user(self, payload):
        async with httpx.AsyncClient() as client:
            return (await client.post(f"{self.base_url}/users", json=payload)).json()


def codex(body):
    return requests.post(CODEX_ENDPOINT, json=body, stream=True)


@app.post("/v1/chat/completions")
async def serve(request):
    return {"choices": []}
"""


def test_posts_to_a_model_path_after_a_base_address_are_model_calls(tmp_path: Path) -> None:
    calls = _calls(tmp_path, {"hosted.py": RAW_HTTP})
    # Not the post to /users, nor the route the code's own server declares at the same path.
    assert calls == {
        ("hosted.py", 23): ("openai", "http.post", "autonomous"),
        ("hosted.py", 28): ("openai", "http.post", "autonomous"),
        ("hosted.py", 32): ("openai", "http.post", "autonomous"),
        ("hosted.py", 41): ("openai", "http.post", "autonomous"),
    }


BEDROCK_EXECUTOR = """\
import asyncio
import json
from functools import partial

import boto3


class Bedrock:
    def __init__(self, region):
        self.__client = self.__make_client("bedrock-runtime", region)

    def __make_client(self, service, region):
        return boto3.Session().client(service, region_name=region)

    @property
    def client(self):
        return self.__client

    async def invoke(self, body):
        loop = asyncio.get_running_loop()
        response = await loop.run_in_executor(None, partial(self.client.invoke_model, modelId="anthropic.claude", body=body))
        return json.loads(response["body"].read())

    def converse(self, messages):
        return self.client.converse(modelId="anthropic.claude", messages=messages)

    def buckets(self):
        return self.client.list_buckets()
"""


def test_bedrock_asked_by_model_id_through_partial_in_an_executor_is_a_model_call(tmp_path: Path) -> None:
    calls = _calls(tmp_path, {"bedrock.py": BEDROCK_EXECUTOR})
    assert calls == {
        ("bedrock.py", 21): ("anthropic", "invoke_model", "autonomous"),
        ("bedrock.py", 25): ("anthropic", "converse", "autonomous"),
    }


ACTION = """\
from openai import AsyncOpenAI


class Action:
    def __init__(self):
        self.client = AsyncOpenAI()

    async def _aask(self, prompt):
        response = await self.client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": prompt}])
        return response.choices[0].message.content
"""

SCRIPT = """\
import subprocess

from app.actions import Action


class WriteScript(Action):
    async def run(self, task):
        script = await self._aask(task)
        subprocess.run(["bash", "-c", script], check=True)
        return script


class Summarise(Action):
    async def _aask(self, prompt):
        return prompt[:100]

    async def run(self, text):
        return await self._aask(text)
"""


def test_a_private_wrapper_inherited_from_a_base_in_another_module_is_called_by_the_subclass(tmp_path: Path) -> None:
    calls = _calls(tmp_path, {
        "app/__init__.py": "",
        "app/actions/__init__.py": "from app.actions.action import Action\n",
        "app/actions/action.py": ACTION,
        "app/actions/script.py": SCRIPT,
    })  # fmt: skip
    # The subclass's call site runs the script (required) and gives that back to the call in the base;
    # a class defining its own _aask calls its own.
    assert calls == {
        ("app/actions/action.py", 9): ("openai", "chat.completions.create", "required"),
        ("app/actions/script.py", 8): ("openai", "Action._aask", "required"),
    }


PARSED_CODE = """\
import re

from openai import OpenAI

client = OpenAI()


class CodeParser:
    @classmethod
    def parse_code(cls, text, lang="python"):
        found = re.search(rf"```{lang}(.*?)```", text, re.DOTALL)
        return found.group(1) if found else text


def write_code(task):
    rsp = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": task}])
    code = CodeParser.parse_code(text=rsp.choices[0].message.content)
    return code


def run_task(task):
    code = write_code(task)
    exec(code)
"""


def test_code_parsed_out_of_the_answer_is_the_answer(tmp_path: Path) -> None:
    calls = _calls(tmp_path, {"interpreter.py": PARSED_CODE})
    # write_code returns the code parsed from the reply: a wrapper, whose caller executes it.
    assert calls == {
        ("interpreter.py", 16): ("openai", "chat.completions.create", "required"),
        ("interpreter.py", 22): ("openai", "write_code", "required"),
    }


CONFIGURED_ENDPOINT = """\
import json

import requests


class Endpoint:
    def __init__(self, end_point, key):
        self.end_point = end_point
        self.headers = {"Authorization": f"Bearer {key}"}

    def generate(self, prompt):
        payload = {"inputs": prompt, "parameters": {"max_new_tokens": 200}}
        response = requests.post(self.end_point, headers=self.headers, data=json.dumps(payload))
        return response.json()[0]["generated_text"]

    def chat(self, messages):
        return requests.post(self.end_point, json={"model": "local", "messages": messages}).json()

    def register(self, name):
        return requests.post(self.end_point, json={"name": name, "parameters": {}}).json()
"""


def test_a_post_to_a_configured_address_asking_a_models_question_is_a_model_call(tmp_path: Path) -> None:
    calls = _calls(tmp_path, {"endpoint.py": CONFIGURED_ENDPOINT})
    # Not register(): its body is no model's question.
    assert calls == {
        ("endpoint.py", 13): ("openai", "http.post", "autonomous"),
        ("endpoint.py", 17): ("openai", "http.post", "autonomous"),
    }
