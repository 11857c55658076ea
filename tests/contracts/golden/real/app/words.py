"""Point 6: what code does decides, not words in names."""
from anthropic import Anthropic
from rich.progress import Progress
from escalated.guard import guard

client = Anthropic()


def truncate(text: str, limit: int) -> str:
    return text[:limit]


def summary(document: str) -> str:
    message = guard("words.summary", lambda: client.messages.create(model="claude-sonnet-4-5", max_tokens=512, messages=[{"role": "user", "content": document}]))
    return truncate(message.content[0].text, 200)


def report_progress(document: str, progress: Progress) -> None:
    message = guard("words.report_progress", lambda: client.messages.create(model="claude-sonnet-4-5", max_tokens=64, messages=[{"role": "user", "content": document}]))
    progress.console.print(message.content[0].text)
