"""How secrets are shown (CONTRACT §16): scheme, host and the last 4 characters."""

from __future__ import annotations

import pytest

from escalated.domain.masking import mask_in_text, mask_target, mask_url, unmask_targets
from escalated.errors import ConfigError


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://hooks.slack.com/services/T000/B000/XXXXabcd", "https://hooks.slack.com/…abcd"),
        ("http://user:password@127.0.0.1:9100/hook?token=s3cretZZ", "http://127.0.0.1:9100/…etZZ"),
        ("http://[::1]:8080/x/y/zzzz", "http://[::1]:8080/…zzzz"),
        ("http://h", "http://h"),  # nothing to hide
        ("not a url at all, long enough", "…ough"),
        ("short", "…"),
    ],
)
def test_a_url_shows_its_scheme_host_and_last_four(url, shown):
    assert mask_url(url) == shown


def test_only_webhook_and_slack_targets_are_masked():
    assert mask_target("slack:https://hooks.slack.com/services/T/B/abcdEFGH") == "slack:https://hooks.slack.com/…EFGH"
    assert mask_target("email:ops@example.com") == "email:ops@example.com"
    assert mask_target("desktop") == "desktop"


def test_masked_lines_stand_for_the_saved_targets_in_order():
    saved = ("slack:https://h.example/a/1111wxyz", "slack:https://h.example/b/2222wxyz", "email:a@example.com")
    masked = tuple(mask_target(t) for t in saved)
    assert masked[0] == masked[1]  # the same host and tail: kept apart by their order
    assert unmask_targets((*masked, "desktop"), stored=saved) == (*saved, "desktop")
    with pytest.raises(ConfigError, match="write it in full"):
        unmask_targets(("slack:https://other.example/…wxyz",), stored=saved)


def test_a_targets_url_is_masked_inside_an_error_text():
    target = "webhook:http://127.0.0.1:9/hooks/SECRETvalue"
    assert mask_in_text("bad URL http://127.0.0.1:9/hooks/SECRETvalue", targets=(target,)) == "bad URL http://127.0.0.1:9/…alue"
