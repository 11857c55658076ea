"""Anthropic: create and stream, client constructed inline and passed by annotation."""
from anthropic import Anthropic


def ask(client: Anthropic, question: str) -> str:
    message = client.messages.create(model="claude-sonnet-4-5", max_tokens=512, messages=[{"role": "user", "content": question}])
    return message.content[0].text


def stream_answer(question: str) -> None:
    with Anthropic().messages.stream(model="claude-sonnet-4-5", max_tokens=512, messages=[]) as stream:
        for text in stream.text_stream:
            print(text, end="")
