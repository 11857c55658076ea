"""The SLA clock at scale.

    .venv/bin/python benchmarks/clock_bench.py [--armed 100000] [--spread 60] [--open 1000000]

1. Memory per armed deadline: the real SlaClock holding N deadlines
   (tracemalloc), next to N asyncio TimerHandles (loop.call_at) — the
   baseline a naive one-timer-per-escalation design pays.
2. ``--armed`` open escalations whose deadlines are spread over ``--spread``
   seconds, all with a signed resume target at a local receiver: the server
   breaches each and calls back. Prints breach lateness (answeredAt -
   deadline, from each verified callback) and callback lateness (arrival -
   deadline), p50/p99/max, and the server's RSS. ``--clock-only`` repeats it
   without resume targets: the clock's own lateness, with no sender load.
3. ``--open`` open escalations with deadlines (1,000 of them due 5-15 s after
   start, the rest hours away): start-up time (spawn -> listening -> first
   authenticated list answered), RSS, and the lateness of those 1,000.

Rows are written straight into the SQLite file (benchmarks/seed.py), far
faster than HTTP. ``--open 0`` or ``--armed 0`` skips a part.
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import sys
import threading
import time
import tracemalloc
from pathlib import Path

import aiohttp
import orjson
from aiohttp import web

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import Server, cli, load_note, machine, rss_mb, scratch_dir
from seed import arm_from, seed

from escalated.agent.receiver import RunningReceiver, start_receiver
from escalated.agent.signing import verify
from escalated.timeutil import now_ms, parse_timestamp_ms

POLICY = "bench.clock"
SECRET = "whsec_bench_clock_0123456789"


# -- 1. memory per armed deadline ------------------------------------------------


async def memory_per_deadline(n: int, work: Path) -> tuple[float, float, int]:
    """Bytes retained per deadline: the real SlaClock refilled from the
    database, and one asyncio TimerHandle per row loaded the same way. Both
    include what they keep of each row (its id string and deadline int)."""
    from escalated.engine.clock import SlaClock
    from escalated.core.service import Service
    from escalated.core.settings import Settings
    from escalated.store.sqlite import SqliteStore

    path = work / "memory.db"
    cli(path, "policy", "set", POLICY, "--sla", "1h", "--default-choice", "deny")
    seed(path, policy=POLICY, offsets_ms=[10_000 + i * 50_000 // n for i in range(n)])
    arm_from(path, now_ms())
    store = await SqliteStore.open(path)
    db = store.database
    try:
        clock = SlaClock(Service(store, Settings(db_path=path)))
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        await clock.refill(now_ms())
        # aiosqlite's worker thread keeps its last result alive until the next
        # query: one more (tiny) query, so only what the clock holds is counted.
        await db.fetchone("SELECT 1")
        # The clock loads at most one refill batch ahead; the rest waits in SQLite.
        armed = clock.armed
        clock_bytes = (tracemalloc.get_traced_memory()[0] - before) / armed
        tracemalloc.stop()
    finally:
        await store.close()
    loop = asyncio.get_running_loop()
    conn = sqlite3.connect(str(path))
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    rows = conn.execute("SELECT deadline_ms, id FROM escalations ORDER BY deadline_ms").fetchall()
    handles = [loop.call_at(d / 1000, print, eid) for d, eid in rows]
    del rows
    timer_bytes = (tracemalloc.get_traced_memory()[0] - before) / n
    tracemalloc.stop()
    conn.close()
    for h in handles:
        h.cancel()
    return clock_bytes, timer_bytes, armed


# -- a receiver for breach callbacks ------------------------------------------------


class Receiver:
    def __init__(self) -> None:
        self.seen: dict[str, tuple[int, int]] = {}  # escalation id -> (answeredAt ms, arrival ms)
        self.bad = 0
        self.url = ""
        self.all_in = asyncio.Event()
        self.expected = 0
        self._running: RunningReceiver | None = None

    async def handle(self, request: web.Request) -> web.Response:
        raw = await request.read()
        arrival = now_ms()
        if not verify(raw, request.headers.get("x-service-signature"), SECRET):
            self.bad += 1
            return web.Response(status=401)
        body = orjson.loads(raw)
        if body["resolvedBy"] == "timeout":
            self.seen.setdefault(body["escalationId"], (parse_timestamp_ms(body["answeredAt"]), arrival))
            if len(self.seen) >= self.expected:
                self.all_in.set()
        return web.json_response({"ok": True})

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/resume", self.handle)
        self._running = await start_receiver(app)
        self.url = self._running.url + "/resume"

    async def close(self) -> None:
        if self._running is not None:
            await self._running.close()


class RssSampler:
    """Samples a process's RSS every ``every_s`` in a thread; keeps the peak."""

    def __init__(self, pid: int, every_s: float = 0.25) -> None:
        self.pid, self.every_s, self.peak_mb = pid, every_s, 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.peak_mb = max(self.peak_mb, rss_mb(self.pid)[0])
            except (OSError, AttributeError):
                return
            self._stop.wait(self.every_s)

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def deadlines(db: Path) -> dict[str, int]:
    conn = sqlite3.connect(str(db))
    try:
        return dict(conn.execute("SELECT id, deadline_ms FROM escalations WHERE deadline_ms IS NOT NULL"))
    finally:
        conn.close()


def lateness_line(label: str, values_ms: list[int]) -> str:
    if not values_ms:
        return f"  {label:<44}none"
    v = sorted(values_ms)
    pick = lambda p: v[min(len(v) - 1, round(p / 100 * (len(v) - 1)))]  # noqa: E731
    return f"  {label:<44}p50 {pick(50)} ms, p99 {pick(99)} ms, max {v[-1]} ms (n={len(v)})"


def report_lateness(receiver: Receiver, due: dict[str, int], ids: set[str]) -> list[int]:
    breach = [receiver.seen[i][0] - due[i] for i in ids if i in receiver.seen]
    arrival = [receiver.seen[i][1] - due[i] for i in ids if i in receiver.seen]
    print(lateness_line("breach lateness (answeredAt - deadline)", breach))
    print(lateness_line("callback lateness (received - deadline)", arrival))
    missing = len(ids) - len(breach)
    if missing:
        print(f"  MISSING: {missing} breach callbacks not received")
    return breach


async def wait_all(receiver: Receiver, expected: int, timeout_s: float) -> None:
    receiver.expected = expected
    if len(receiver.seen) >= expected:
        return
    try:
        await asyncio.wait_for(receiver.all_in.wait(), timeout_s)
    except TimeoutError:
        pass


# -- 2. N armed deadlines over S seconds ---------------------------------------------


async def armed_run(work: Path, n: int, spread_s: float) -> None:
    receiver = Receiver()
    await receiver.start()
    db = work / "armed.db"
    cli(db, "policy", "set", POLICY, "--sla", "1h", "--default-choice", "deny")
    took = seed(db, policy=POLICY, offsets_ms=[int(i * spread_s * 1000 / n) for i in range(n)],
                resume_url=receiver.url, secret=SECRET)  # fmt: skip
    lead_ms = 5_000
    arm_from(db, now_ms() + lead_ms)
    due = deadlines(db)
    print(f"\n{n:,} deadlines over {spread_s:.0f} s (seeded in {took:.1f} s), first due {lead_ms / 1000:.0f} s after spawn:")
    server = Server(db=db).start()
    try:
        with RssSampler(server.pid) as rss:
            await wait_all(receiver, n, spread_s + lead_ms / 1000 + 180)
        current, _ = rss_mb(server.pid)
    finally:
        server.stop()
        await receiver.close()
    print(f"  server started in {server.started_s:.2f} s; RSS peak {rss.peak_mb:.0f} MB, at the end {current:.0f} MB")
    breach = report_lateness(receiver, due, set(due))
    print(f"  bad signatures: {receiver.bad}")
    if breach:
        v = sorted(breach)
        print(f"\n  target: breach lateness p99 < 250 ms -> {v[round(0.99 * (len(v) - 1))]} ms")


def breach_lateness_from_db(db: Path) -> tuple[list[int], int]:
    """answeredAt - deadline of every timed-out escalation, read back through the store's rows."""
    from escalated.store.queries import load
    from escalated.store.rows import escalation_from_row

    conn = sqlite3.connect(str(db))
    try:
        columns = load("sqlite")["escalation_columns"]
        rows = conn.execute(f"SELECT {columns} FROM escalations WHERE deadline_ms IS NOT NULL").fetchall()
    finally:
        conn.close()
    late, still_open = [], 0
    for row in rows:
        esc = escalation_from_row(row)
        if esc.resolution is None:
            still_open += 1
        else:
            late.append(esc.resolution.answered_at_ms - esc.deadline_ms)
    return late, still_open


async def clock_only_run(work: Path, n: int, spread_s: float) -> None:
    """The same deadlines without resume targets: the clock alone, no sender load."""
    db = work / "clock-only.db"
    cli(db, "policy", "set", POLICY, "--sla", "1h", "--default-choice", "deny")
    seed(db, policy=POLICY, offsets_ms=[int(i * spread_s * 1000 / n) for i in range(n)])
    lead_ms = 5_000
    arm_from(db, now_ms() + lead_ms)
    end_ms = now_ms() + lead_ms + int(spread_s * 1000)
    print(f"\nthe same {n:,} deadlines without callbacks (the clock alone):")
    server = Server(db=db).start()
    try:
        with RssSampler(server.pid) as rss:
            await asyncio.sleep(max(0.0, (end_ms - now_ms()) / 1000) + 3)
    finally:
        server.stop()
    late, still_open = breach_lateness_from_db(db)
    print(f"  RSS peak {rss.peak_mb:.0f} MB")
    print(lateness_line("breach lateness (answeredAt - deadline)", late))
    if still_open:
        print(f"  NOT BREACHED 3 s after the last deadline: {still_open}")


# -- 3. a million open escalations ---------------------------------------------------


async def first_list(server: Server, timeout_s: float = 60.0) -> float:
    """Seconds until an authenticated list is answered 200 (measured from now)."""
    t0 = time.perf_counter()
    headers = {"Authorization": f"Bearer {server.key}"}
    async with aiohttp.ClientSession(headers=headers) as http:
        while time.perf_counter() - t0 < timeout_s:
            try:
                async with http.get(server.url + "/escalations?limit=1") as resp:
                    if resp.status == 200:
                        return time.perf_counter() - t0
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.01)
    raise RuntimeError("the list was not answered in time")


async def open_run(work: Path, n: int) -> None:
    receiver = Receiver()
    await receiver.start()
    db = work / "open.db"
    cli(db, "policy", "set", POLICY, "--sla", "1h", "--default-choice", "deny")
    soon = 1_000
    hour_ms = 3_600_000
    # The far deadlines are absolute already (hours away); only the 1,000 soon
    # ones are relative, so arm_from touches just those right before spawn.
    far_base = now_ms() + hour_ms
    offsets = [5_000 + i * 10 for i in range(soon)] + [far_base + i * (24 * hour_ms // n) for i in range(n - soon)]
    took = seed(db, policy=POLICY, offsets_ms=offsets, resume_url=receiver.url, secret=SECRET)
    size_mb = db.stat().st_size / 1e6
    arm_from(db, now_ms())
    due = deadlines(db)
    due_soon = {eid for eid, d in due.items() if d - now_ms() < hour_ms / 2}
    print(f"\n{n:,} open escalations with deadlines ({size_mb:.0f} MB database, seeded in {took:.1f} s):")
    spawned = time.perf_counter()
    server = Server(db=db).start()
    try:
        with RssSampler(server.pid) as rss:
            await first_list(server)
            serving_s = time.perf_counter() - spawned
            rss_start, _ = rss_mb(server.pid)
            await wait_all(receiver, len(due_soon), 60)
            await asyncio.sleep(1)
        rss_end, _ = rss_mb(server.pid)
    finally:
        server.stop()
        await receiver.close()
    print(f"  spawn -> listening {server.started_s:.2f} s; spawn -> first list answered {serving_s:.2f} s")
    print(f"  RSS when serving {rss_start:.0f} MB; after the first breaches {rss_end:.0f} MB; peak {rss.peak_mb:.0f} MB")
    report_lateness(receiver, due, due_soon)
    print(f"\n  target: serving < 10 s -> {serving_s:.2f} s; RSS < 500 MB -> peak {rss.peak_mb:.0f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--armed", type=int, default=100_000)
    parser.add_argument("--spread", type=float, default=60.0, help="seconds the armed deadlines are spread over")
    parser.add_argument("--open", type=int, default=1_000_000)
    parser.add_argument("--clock-only", action="store_true", help="also run the armed deadlines without callbacks")
    args = parser.parse_args()
    work = scratch_dir("escalated-clock-")
    print(f"machine: {machine()}; {load_note()}")
    print(f"data: {work}")
    clock_b, timer_b, armed = asyncio.run(memory_per_deadline(100_000, work))
    print(f"\nmemory per armed deadline, 100,000 live deadlines within the next minute:\n"
          f"  SlaClock {clock_b:.0f} B each ({armed:,} held in memory at once, the rest wait in SQLite)\n"
          f"  baseline: one asyncio TimerHandle per row (loop.call_at) {timer_b:.0f} B each, all 100,000 in memory")  # fmt: skip
    if args.armed:
        asyncio.run(armed_run(work, args.armed, args.spread))
    if args.armed and args.clock_only:
        asyncio.run(clock_only_run(work, args.armed, args.spread))
    if args.open:
        asyncio.run(open_run(work, args.open))


if __name__ == "__main__":
    main()
