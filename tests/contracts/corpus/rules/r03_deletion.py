"""R3: the output decides what is deleted."""
import shutil

import anthropic

client = anthropic.Anthropic()


def clean_up(listing: str) -> None:
    message = client.messages.create(model="claude-sonnet-4-5", max_tokens=256, messages=[{"role": "user", "content": listing}])
    target = message.content[0].text.strip()
    shutil.rmtree(target)
