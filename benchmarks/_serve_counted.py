"""``escalated serve`` exactly as the CLI runs it, plus one line at exit:
``writer: N commits, M jobs`` — the group-commit counters of the single
writer (escalated.store.db.Writer), which /metrics does not expose.

Benchmark instrumentation only: it records each Writer after its normal
construction and changes nothing it does.
"""

from __future__ import annotations

import atexit

from escalated.store import db

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

if __name__ == "__main__":
    from escalated.cli import main

    main(prog_name="escalated")
