"""Point 10: a test with a scripted model is reported apart and never fails CI."""
from unittest.mock import MagicMock

from openai import OpenAI
from escalated.guard import guard


def test_agent_answers() -> None:
    client = MagicMock()
    client.chat.completions.create.return_value = "ok"
    assert client.chat.completions.create(model="gpt-4o", messages=[]) == "ok"


def test_real_client_in_a_test() -> None:
    client = OpenAI()
    assert guard("scripted_model.test_real_client_in_a_test", lambda: client.chat.completions.create(model="gpt-4o", messages=[]))
