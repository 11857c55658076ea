"""Store conformance: a text parameter holding NUL, which PostgreSQL's text
cannot hold, equals nothing stored: every read answers as for any unknown
value (None, an empty page) on both dialects, never a database error
(``GET /escalations/%00`` is a 404, not a 500).

Writes differ: PostgreSQL refuses such a parameter (psycopg's DataError)
where SQLite answers as for an unknown id. Deleting a policy answers False
on both, since the web admin reaches it with the key from the URL; the
other writes are reached only after a read of the row, or with hashes."""

from __future__ import annotations

import pytest

from escalated.domain.records import ListQuery

NUL = "a\x00b"

READS = {
    "get_escalation": lambda s, ws: s.get_escalation(escalation_id=NUL, workspace_id=ws, routes=None),
    "get_escalation_routes": lambda s, ws: s.get_escalation(escalation_id="esc_x", workspace_id=ws, routes=(NUL,)),
    "get_escalations": lambda s, ws: s.get_escalations(escalation_ids=[NUL]),
    "list_run_id": lambda s, ws: s.list_escalations(query=ListQuery(workspace_id=ws, routes=None, run_id=NUL)),
    "list_cursor": lambda s, ws: s.list_escalations(query=ListQuery(workspace_id=ws, routes=None, cursor=NUL)),
    "count_by_status": lambda s, ws: s.count_by_status(workspace_id=ws, routes=(NUL,)),
    "find_replay": lambda s, ws: s.find_replay(workspace_id=ws, key=NUL, not_before_ms=0),
    "policy": lambda s, ws: s.policy(workspace_id=ws, key=NUL),
    "api_key_by_hash": lambda s, ws: s.api_key_by_hash(token_hash=NUL),
    "user_by_hash": lambda s, ws: s.user_by_hash(token_hash=NUL),
    "api_key": lambda s, ws: s.api_key(key_id=NUL, workspace_id=ws),
    "user_by_email": lambda s, ws: s.user_by_email(workspace_id=ws, email=NUL),
    "user_by_slack_id": lambda s, ws: s.user_by_slack_id(workspace_id=ws, slack_id=NUL),
    "rule": lambda s, ws: s.rule(rule_id=NUL, workspace_id=ws),
    "active_rules": lambda s, ws: s.active_rules(workspace_id=ws, policy=NUL, at_ms=0),
    "session_user": lambda s, ws: s.session_user(id_hash=NUL),
    "decision_link": lambda s, ws: s.decision_link(secret_hash=NUL),
    "deliveries_of": lambda s, ws: s.deliveries_of(escalation_id=NUL),
}
NOTHING = (None, [], {}, ([], None))


@pytest.mark.parametrize("read", READS)
async def test_a_read_with_nul_in_a_text_parameter_finds_nothing(store, ws, read):
    assert await READS[read](store, ws) in NOTHING


async def test_deleting_a_policy_whose_key_holds_nul_deletes_nothing(store, ws):
    # Reachable: the web admin's POST /app/policies/%00/delete. PostgreSQL
    # raised psycopg's DataError here (a 500) where SQLite said False (a 404).
    assert await store.delete_policy(workspace_id=ws, key=NUL) is False
