"""What the guard shows the reviewer: answers and tool calls of the common SDK result shapes.

The results are stand-ins with the SDKs' attribute shapes (third-party
objects, not ours), so no SDK has to be installed.
"""

from __future__ import annotations

from types import SimpleNamespace as NS

from escalated.guard.render import buffer_sync, render_output


def test_openai_chat_completion_shows_the_message_and_its_tool_calls():
    call = NS(function=NS(name="issue_refund", arguments='{"amount": 120}'))
    completion = NS(choices=[NS(message=NS(content="Refunding.", tool_calls=[call]))])
    assert render_output(completion) == 'Refunding.\ntool call: issue_refund({"amount": 120})'


def test_anthropic_message_shows_text_blocks_and_tool_use():
    message = NS(content=[NS(type="text", text="Deleting it."), NS(type="tool_use", name="rm", input={"path": "/x"})])
    assert render_output(message) == 'Deleting it.\ntool call: rm({"path": "/x"})'


def test_langchain_ai_message_shows_content_and_tool_calls():
    message = NS(content="", tool_calls=[{"name": "send_email", "args": {"to": "a@b.c"}, "id": "1"}])
    assert render_output(message) == 'tool call: send_email({"to": "a@b.c"})'


def test_openai_responses_and_google_genai_show_their_text():
    assert render_output(NS(output_text="from responses")) == "from responses"
    assert render_output(NS(text="from gemini")) == "from gemini"


def test_anything_else_is_shown_as_json_or_repr():
    assert render_output({"a": [1, 2]}) == '{"a": [1, 2]}'
    assert render_output(object()).startswith('"<object object at')


def test_a_stream_is_buffered_and_replayed_with_its_text():
    chunks = [NS(choices=[NS(delta=NS(content=t))]) for t in ("Hel", "lo")]
    replay, text = buffer_sync(iter(chunks))
    assert text == "Hello"
    assert list(replay) == chunks


class _RawResponse:
    """The shape of openai/anthropic ``with_raw_response`` results: an HTTP response with parse()."""

    def __init__(self, parsed):
        self.http_response = NS(status_code=200)
        self._parsed = parsed

    def parse(self):
        return self._parsed

    def __repr__(self) -> str:
        return "<APIResponse [200 OK] type=<class 'ChatCompletion'>>"


def test_a_raw_response_is_shown_as_its_parsed_message_with_tool_calls():
    call = NS(function=NS(name="issue_refund", arguments='{"amount": 120}'))
    raw = _RawResponse(NS(choices=[NS(message=NS(content="Refunding.", tool_calls=[call]))]))
    assert render_output(raw) == 'Refunding.\ntool call: issue_refund({"amount": 120})'


def test_an_agents_run_result_is_shown_as_its_final_output():
    assert render_output(NS(final_output="Refund issued for #981", new_items=[])) == "Refund issued for #981"
