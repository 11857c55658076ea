"""R3: the output decides what is deleted."""
import shutil

import anthropic
from escalated.guard import guard

client = anthropic.Anthropic()


def clean_up(listing: str) -> None:
    message = guard("r03_deletion.clean_up", lambda: client.messages.create(model="claude-sonnet-4-5", max_tokens=256, messages=[{"role": "user", "content": listing}]))
    target = message.content[0].text.strip()
    shutil.rmtree(target)
