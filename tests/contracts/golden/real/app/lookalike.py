"""Point 2: a project class whose attribute chain looks like an SDK is not a model client."""
from escalated.guard import guard


class _Completions:
    def create(self, **row: object) -> dict:
        return dict(row)


class _Chat:
    def __init__(self) -> None:
        self.completions = _Completions()


class Store:
    def __init__(self) -> None:
        self.chat = _Chat()


db = Store()


def save_message(text: str) -> dict:
    return guard("lookalike.save_message", lambda: db.chat.completions.create(messages=[text]))
