"""R11: free text only, shown to the user."""
from anthropic import Anthropic
from escalated.guard import guard

client = Anthropic()


def haiku(topic: str) -> None:
    message = guard("r11_free_text.haiku", lambda: client.messages.create(model="claude-haiku-4-5", max_tokens=64, messages=[{"role": "user", "content": topic}]))
    print(message.content[0].text)
