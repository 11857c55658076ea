"""The garbage collector, tuned for a long-running server (docs/performance.md).

Two measured costs of CPython's defaults under a create load:

- Everything built at start-up (modules, the app and its routes, caches:
  ~50,000 tracked objects) lives as long as the process, yet every full
  collection scanned all of it again: 35-47 ms each, several times a run,
  each one a stall every request in flight waits out.
- A create's objects live for about one group commit (~10 ms). With 48
  requests in flight, the young generation's default threshold (700 more
  allocations than deallocations) was crossed every ~30 requests, so objects
  that reference counting was about to free were traversed and promoted
  again and again: ~1,000 young collections per 8 s run collecting almost
  nothing (2,600 objects in all).

Together ~6% of the event loop's time. Cycles are still collected, only
later: a young collection every 10,000 net allocations holds a few MB at most.
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 10_000  # CPython's default is 700


def tune_for_serving() -> None:
    """Call once, after start-up and before serving: in the server's own process only
    (freezing is for the process's life)."""
    gc.collect()  # start-up's garbage, so that it is not frozen with the rest
    gc.freeze()
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, older, oldest)
