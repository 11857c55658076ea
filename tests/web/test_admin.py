"""Admin pages through a real ``escalated serve``: policies and users, admins only."""

from __future__ import annotations

import json
import re

import pytest

from tests.support.api import escalation_body, unique
from tests.web.support import WebClient, api

SECRET_SHOWN = re.compile(r'id="shown-secret">([^<]+)<')


@pytest.fixture(scope="module")
def root(world) -> WebClient:
    browser = WebClient(world.url)
    assert browser.sign_in(world.admin).status == 303
    return browser


@pytest.fixture(scope="module")
def alice(world) -> WebClient:
    browser = WebClient(world.url)
    browser.sign_in(world.alice)
    return browser


def policy_form(**fields) -> dict:
    return {"key": "", "reviewers": "", "notify": "", "sla": "", "default_choice": "", **fields}


@pytest.mark.parametrize("path", ["/app/policies", "/app/users"])
def test_reviewers_never_see_admin_pages(alice, path):
    page = alice.get(path)
    assert page.status == 403 and "admins" in page.text


def test_a_reviewer_cannot_save_a_policy(world, alice):
    key = unique("web.reviewer").replace("-", "")
    page = alice.submit("/app/", "/app/policies", policy_form(key=key))
    assert page.status == 403
    assert key not in world.server.cli("policy", "list")


def test_saving_a_policy_without_csrf_is_refused(world, root):
    key = unique("web.nocsrf").replace("-", "")
    assert root.post("/app/policies", policy_form(key=key)).status == 403
    assert key not in world.server.cli("policy", "list")


def test_an_admin_creates_a_policy_an_agent_can_use(world, root):
    key = unique("web.refunds").replace("-", "")
    page = root.submit(
        "/app/policies",
        "/app/policies",
        policy_form(key=key, reviewers="alice,\ngroup:finance", notify="desktop", sla="15m", default_choice="deny", cancel_callback="1"),
    )
    assert (page.status, page.location) == (303, "/app/policies")
    saved = {p["key"]: p for p in json.loads(world.server.cli("policy", "list", "--json"))}[key]
    assert saved == {"key": key, "reviewers": ["alice", "group:finance"], "notify": ["desktop"], "sla": "15m", "defaultChoice": "deny",
                     "cancelCallback": True, "remindEvery": None, "levels": [], "quorum": 1, "quorumChoices": []}
    status, esc = api(world.url, "POST", "/escalations", world.key, escalation_body(key))
    assert status == 201 and esc["deadlineAt"] is not None


def test_an_admin_sets_reminders_levels_and_quorum_and_edits_them_back(world, root):
    key = unique("web.quorum").replace("-", "")
    fields = {"remind_every": "10m", "levels": "15m:alice,group:finance\n1h:bob|desktop", "quorum": "2", "quorum_choices": "approve"}
    page = root.submit("/app/policies", "/app/policies", policy_form(key=key, **fields))
    assert (page.status, page.location) == (303, "/app/policies")
    saved = json.loads(world.server.cli("policy", "show", key))
    assert (saved["remindEvery"], saved["quorum"], saved["quorumChoices"]) == ("10m", 2, ["approve"])
    assert saved["levels"] == [
        {"after": "15m", "reviewers": ["alice", "group:finance"], "notify": []},
        {"after": "1h", "reviewers": ["bob"], "notify": ["desktop"]},
    ]
    listing = root.get("/app/policies").text
    assert "remind every 10m" in listing and "2 users to approve" in listing
    edit = root.get(f"/app/policies?edit={key}").text
    assert 'value="10m"' in edit and "15m:alice,group:finance\n1h:bob|desktop</textarea>" in edit and 'value="2"' in edit


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({"quorum": "2"}, "needs the choices it applies to"),
        ({"quorum": "two", "quorum_choices": "approve"}, "must be a whole number"),
        ({"levels": "15m"}, "AFTER:REVIEWER"),
        ({"remind_every": "500ms"}, "at least 1s"),
    ],
)
def test_bad_reminders_levels_or_quorum_are_refused_in_words(world, root, fields, words):
    page = root.submit("/app/policies", "/app/policies", policy_form(key="web.badquorum", **fields))
    assert page.status == 422 and words in page.text, page.text[:2000]


def test_a_policy_is_validated_like_policy_set(world, root):
    page = root.submit("/app/policies", "/app/policies", policy_form(key="web.sla", sla="15m"))
    assert page.status == 422 and "an SLA needs a default choice" in page.text
    assert 'value="web.sla"' in page.text  # what was typed stays


def test_a_reviewer_matching_no_user_is_refused_unless_allowed(world, root):
    page = root.submit("/app/policies", "/app/policies", policy_form(key="web.ghost", reviewers="ghost"))
    assert page.status == 422 and "ghost" in page.text
    allowed = root.submit("/app/policies", "/app/policies", policy_form(key="web.ghost", reviewers="ghost", allow_unknown_reviewers="1"))
    assert allowed.status == 303


def test_an_admin_edits_then_deletes_a_policy(world, root):
    root.submit("/app/policies", "/app/policies", policy_form(key="web.edit"))
    edit = root.get("/app/policies?edit=web.edit")
    assert 'value="web.edit"' in edit.text
    root.submit("/app/policies", "/app/policies", policy_form(key="web.edit", reviewers="bob"))
    assert json.loads(world.server.cli("policy", "show", "web.edit"))["reviewers"] == ["bob"]
    assert root.submit("/app/policies", "/app/policies/web.edit/delete", {}).status == 303
    assert "web.edit" not in world.server.cli("policy", "list")


def test_deleting_a_policy_whose_key_holds_nul_is_not_found(root):
    # PostgreSQL's text cannot hold NUL: its store raised a DataError (a 500) here.
    assert root.submit("/app/policies", "/app/policies/web%00edit/delete", {}).status == 404


def test_an_added_users_token_is_shown_once_and_signs_in(world, root):
    name = unique("erin")
    page = root.submit("/app/users", "/app/users", {"name": name, "role": "reviewer", "groups": "finance, ops"})
    token = SECRET_SHOWN.search(page.text).group(1)
    assert page.status == 200 and token.startswith("ain_user_")
    assert token not in root.get("/app/users").text
    assert WebClient(world.url).sign_in(token).status == 303


def test_a_user_added_on_the_users_page_has_an_email_and_a_slack_id(world, root):
    name = unique("gina")
    fields = {"name": name, "role": "reviewer", "email": f"{name}@Example.com", "slack_id": "U0GINA123"}
    assert root.submit("/app/users", "/app/users", fields).status == 200
    row = next(line for line in world.server.cli("users", "list").splitlines() if line.startswith(name))
    assert row.split("\t")[3:] == [f"{name}@example.com".lower(), "U0GINA123"]
    assert f"<td>{name}@example.com".lower() in root.get("/app/users").text.lower()


def test_a_malformed_email_on_the_users_page_is_refused(world, root):
    name = unique("hal")
    page = root.submit("/app/users", "/app/users", {"name": name, "role": "reviewer", "email": "hal at example"})
    assert page.status == 422 and "not one plain address" in page.text
    assert name not in world.server.cli("users", "list")


def test_a_sign_in_link_from_the_users_page_works_once(world, root):
    page = root.submit("/app/users", "/app/users/bob/login-link", {"ttl": "5m"})
    link = SECRET_SHOWN.search(page.text).group(1)
    browser = WebClient(world.url)
    assert browser.follow_link(link).status == 303 and browser.get("/app/").status == 200


def test_rotating_a_token_from_the_users_page_ends_the_old_one(world, root):
    name = unique("fred")
    old = SECRET_SHOWN.search(root.submit("/app/users", "/app/users", {"name": name, "role": "reviewer"}).text).group(1)
    fred = WebClient(world.url)
    fred.sign_in(old)
    page = root.submit("/app/users", f"/app/users/{name}/token", {})
    assert SECRET_SHOWN.search(page.text).group(1) != old
    assert fred.get("/app/").status == 303
    assert WebClient(world.url).sign_in(old).status == 401


def test_an_api_key_made_on_the_keys_page_is_shown_once_and_works(world, root):
    page = root.submit("/app/keys", "/app/keys", {"name": "web-agent", "scopes": "escalations:read", "expires_in": "1d"})
    key = SECRET_SHOWN.search(page.text).group(1)
    assert page.status == 200 and key.startswith("ain_live_")
    listing = root.get("/app/keys").text
    assert key not in listing and "web-agent" in listing and "active until" in listing
    assert api(world.url, "GET", "/escalations", key)[0] == 200
    assert api(world.url, "POST", "/escalations", key, escalation_body("everyone"))[0] == 403


def test_revoking_a_key_on_the_keys_page_stops_it(world, root):
    key = SECRET_SHOWN.search(root.submit("/app/keys", "/app/keys", {"name": "short-lived", "scopes": "escalations:read"}).text).group(1)
    key_id = re.search(r"<code>(key_\w+)</code></td>\s*<td>short-lived", root.get("/app/keys").text).group(1)
    assert root.submit("/app/keys", f"/app/keys/{key_id}/revoke", {}).status == 303
    assert api(world.url, "GET", "/escalations", key)[0] == 401


def test_reviewers_cannot_see_or_make_keys(alice):
    assert alice.get("/app/keys").status == 403
    assert alice.submit("/app/", "/app/keys", {"name": "nope", "scopes": "escalations:read"}).status == 403


def test_another_workspaces_admin_sees_none_of_this_one(world):
    world.server.cli("workspaces", "create", "acme")
    token = world.server.cli("users", "add", "acme-root", "--role", "admin", "--workspace", "acme")
    esc = api(world.url, "POST", "/escalations", world.key, escalation_body("everyone"))[1]
    other = WebClient(world.url)
    assert other.sign_in(token).status == 303
    assert other.get(f"/app/escalations/{esc['id']}").status == 404
    assert esc["id"] not in other.get("/app/?status=all").text
    for path, mine in (("/app/policies", "everyone"), ("/app/users", "alice")):
        assert mine not in other.get(path).text, path
    assert "bootstrap" not in other.get("/app/keys").text


# NUL (U+0000) cannot be stored in PostgreSQL text, so every admin form
# refuses it in words on both backends (it was a 500 on PostgreSQL).
@pytest.mark.parametrize(
    ("page_path", "action", "fields"),
    [
        ("/app/users", "/app/users", {"name": "nul\x00user", "role": "reviewer"}),
        ("/app/users", "/app/users", {"name": "nulgroups", "role": "reviewer", "groups": "fin\x00ance"}),
        ("/app/keys", "/app/keys", {"name": "nul\x00key", "scopes": "escalations:read"}),
        ("/app/policies", "/app/policies", policy_form(key="web.nul", reviewers="al\x00ice")),
    ],
    ids=["user-name", "user-groups", "key-name", "policy-reviewer"],
)
def test_an_admin_form_holding_nul_is_refused_in_words(world, root, page_path, action, fields):
    page = root.submit(page_path, action, fields)
    assert page.status == 422 and "NUL" in page.text, (page.status, page.text[-500:])
    assert "nul" not in world.server.cli("users", "list").lower()


@pytest.mark.parametrize("action", ["/app/users/bo%00b/token", "/app/users/bo%00b/login-link"])
def test_a_user_path_holding_nul_is_refused_in_words(root, action):
    page = root.submit("/app/users", action, {"ttl": "5m"})
    assert page.status == 422 and "NUL" in page.text, (page.status, page.text[-500:])
