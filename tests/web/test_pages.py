"""Every page has a title of its own and a label on every control (CONTRACT §11, 'Looks and reach')."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from tests.web.support import WebClient
from tests.web.test_escalations import AMOUNT, TIER, create


class Controls(HTMLParser):
    """The page's <title>, its form controls and which of them a label names."""

    def __init__(self) -> None:
        super().__init__()
        self.title = ""
        self._in_title = False
        self._label_depth = 0
        self.controls: list[dict] = []
        self.labelled_ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "title":
            self._in_title = True
        elif tag == "label":
            self._label_depth += 1
            if a.get("for"):
                self.labelled_ids.add(a["for"])
        elif tag in ("input", "select", "textarea", "button") and a.get("type") != "hidden":
            self.controls.append({**a, "_tag": tag, "_wrapped": self._label_depth > 0})

    def handle_endtag(self, tag):
        if tag == "title":
            self._in_title = False
        elif tag == "label":
            self._label_depth -= 1

    def handle_data(self, data):
        if self._in_title:
            self.title += data

    def unlabelled(self) -> list[dict]:
        def named(c: dict) -> bool:
            return c["_tag"] == "button" or c["_wrapped"] or "aria-label" in c or c.get("id") in self.labelled_ids

        return [c for c in self.controls if not named(c)]


@pytest.fixture(scope="module")
def pages(world) -> dict[str, str]:
    esc = create(world, "everyone", responseFields=[AMOUNT, TIER])  # routed to every user, the admin too
    root = WebClient(world.url)
    root.sign_in(world.admin)
    paths = ["/app/", f"/app/escalations/{esc['id']}", "/app/policies", "/app/users", "/app/keys", "/app/escalations/esc_none"]
    found = {path: root.get(path).text for path in paths}
    found["/app/login"] = WebClient(world.url).get("/app/login").text
    return found


def parsed(text: str) -> Controls:
    parser = Controls()
    parser.feed(text)
    return parser


def test_every_page_has_a_title_of_its_own(pages):
    titles = {path: parsed(text).title for path, text in pages.items()}
    assert all(t.endswith(" · escalated") for t in titles.values()), titles
    assert len(set(titles.values())) == len(titles), titles


def test_every_control_has_a_label(pages):
    for path, text in pages.items():
        assert not parsed(text).unlabelled(), path


def test_pages_fit_a_phone_screen(pages):
    assert all('name="viewport" content="width=device-width, initial-scale=1"' in text for text in pages.values())
