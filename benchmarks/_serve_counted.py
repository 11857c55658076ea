"""``escalated serve`` exactly as the CLI runs it, plus one line at exit:
``writer: N commits, M jobs`` — the group-commit counters of the single
writer (escalated.store.sqlite.db.Writer), which /metrics does not expose.

Benchmark instrumentation only: it records each Writer after its normal
construction and changes nothing it does.

One experiment, only with ``BENCH_STUB_SERVICE=1``: ``Service.create``
answers a fixed ~1 KB body without validating or writing anything, so the
create benchmark can measure what our HTTP layer (auth, body checks,
problem+json middleware, metrics) costs on its own.
"""

from __future__ import annotations

import atexit

from escalated.store.sqlite import db

import os

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
    import orjson

    from escalated.core import service

    _STUB_BODY = orjson.dumps({"id": "esc_01BENCHSTUB000000000000000", "status": "open", "pad": "x" * 900})

    async def _stub_create(self, principal, body, *, idempotency_key=None):
        return service.Created(escalation_id="esc_01BENCHSTUB000000000000000", resource_json=_STUB_BODY, replayed=False)

    service.Service.create = _stub_create

if __name__ == "__main__":
    from escalated.cli import main

    main(prog_name="escalated")
