from escalated.timeutil import format_ms
from escalated.tui.views import merge, policy_cycle, select

T0 = 1_795_000_000_000


def esc(id_: str, *, status="open", policy="p.a", created_s=0, deadline_s=None) -> dict:
    deadline = None if deadline_s is None else format_ms(T0 + deadline_s * 1000)
    return {"id": id_, "status": status, "policy": policy, "createdAt": format_ms(T0 + created_s * 1000),
            "deadlineAt": deadline}


ALL = [
    esc("e1", created_s=1, deadline_s=100),
    esc("e2", created_s=2, deadline_s=50, status="acknowledged", policy="p.b"),
    esc("e3", created_s=3, status="resolved"),
    esc("e4", created_s=4, status="cancelled"),
    esc("e5", created_s=5),
]


def ids(items):
    return [e["id"] for e in items]


def test_open_view_keeps_only_what_still_needs_a_human_soonest_deadline_first():
    assert ids(select(ALL, view="open", policy=None, sort="deadline")) == ["e2", "e1", "e5"]


def test_settled_escalations_have_their_own_views():
    assert ids(select(ALL, view="resolved", policy=None, sort="newest")) == ["e3"]
    assert ids(select(ALL, view="cancelled", policy=None, sort="newest")) == ["e4"]
    assert ids(select(ALL, view="all", policy=None, sort="newest")) == ["e5", "e4", "e3", "e2", "e1"]


def test_policy_filter_and_its_cycle():
    assert ids(select(ALL, view="all", policy="p.b", sort="oldest")) == ["e2"]
    assert [policy_cycle(ALL, p) for p in (None, "p.a", "p.b")] == ["p.a", "p.b", None]


def test_a_late_list_never_steps_an_escalation_back():
    opened = {**esc("e1"), "history": [{"event": "created"}]}
    decided = {**opened, "status": "resolved", "history": [{"event": "created"}, {"event": "decided"}]}
    assert merge({"e1": decided}, [opened]) == {"e1": decided}
    assert merge({"e1": opened}, [decided]) == {"e1": decided}
    assert merge({"e1": decided}, []) == {}
