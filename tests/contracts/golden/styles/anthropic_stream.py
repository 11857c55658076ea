"""Anthropic: create and stream, client constructed inline and passed by annotation."""
from anthropic import Anthropic
from escalated.guard import guard


def ask(client: Anthropic, question: str) -> str:
    message = guard("anthropic_stream.ask", lambda: client.messages.create(model="claude-sonnet-4-5", max_tokens=512, messages=[{"role": "user", "content": question}]))
    return message.content[0].text


def stream_answer(question: str) -> None:
    with guard("anthropic_stream.stream_answer", lambda: Anthropic().messages.stream(model="claude-sonnet-4-5", max_tokens=512, messages=[])) as stream:
        for text in stream.text_stream:
            print(text, end="")
