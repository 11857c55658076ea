"""``escalated serve`` exactly as the CLI runs it, plus one line at exit:
``writer: N commits, M jobs`` — the group-commit counters of the single
writer (escalated.store.sqlite.db.Writer), which /metrics does not expose.

Benchmark instrumentation only: it records each Writer after its normal
construction and changes nothing it does.

One experiment, only with ``BENCH_STUB_SERVICE=1``: ``Service.create``
answers one fixed escalation without validating or writing anything, so the
create benchmark can measure what our HTTP layer (auth, body checks,
problem+json middleware, metrics) costs on its own.
"""

from __future__ import annotations

import atexit

import os

try:
    from escalated.store.sqlite import db
except ImportError:  # a checkout from before store/sqlite/ (create_bench.py --against an older commit)
    from escalated.store import db  # type: ignore[no-redef]

_writers: list[db.Writer] = []
_init = db.Writer.__init__


def _recording_init(self, *args, **kwargs) -> None:
    _init(self, *args, **kwargs)
    _writers.append(self)


def _report() -> None:
    for writer in _writers:
        print(f"writer: {writer.commits} commits, {writer.jobs} jobs", flush=True)


db.Writer.__init__ = _recording_init
atexit.register(_report)

if os.environ.get("BENCH_STUB_SERVICE"):
    from escalated.core import creation, service
    from escalated.domain.models import Policy
    from escalated.domain.validation import validate_create
    from escalated.timeutil import now_ms

    _stub: list[creation.Created] = []

    async def _stub_create(self, principal, body, *, idempotency=None, valid=None):
        # One escalation, built from the first body: what the route renders,
        # without validating, reading or writing anything per request.
        if not _stub:
            request = valid if valid is not None else validate_create(body)
            policy = Policy(workspace_id=principal.workspace_id, key=request.policy, sla_s=3600.0, default_choice="deny")
            esc = creation.new_escalation(principal, request, policy, at_ms=now_ms())
            _stub.append(creation.Created(esc))
        return _stub[0]

    service.Service.create = _stub_create

if __name__ == "__main__":
    from escalated.cli import main

    main(prog_name="escalated")
