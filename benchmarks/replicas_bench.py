"""PostgreSQL replicas against one SQLite process, in the same run.

    .venv/bin/python benchmarks/replicas_bench.py [--duration 10] [--connections 48]

1. Creates: a closed loop of ``--connections`` keep-alive connections (split
   evenly across the replicas) posting escalations for ``--duration`` s,
   against one SQLite ``serve``, one PostgreSQL replica and two PostgreSQL
   replicas on one database: creates/s, p50/p99.
   ``--rounds`` repeats the three, interleaved.
2. Decide -> callback across replicas: create on replica A with a callback
   to a local receiver, decide on replica B, time until the callback
   arrives (``--decides`` times), sent by whichever replica's sender
   claimed it; beside it, the same on one SQLite process.
3. Clock failover: SIGKILL the replica that leads the SLA clock; time until
   the other logs that it leads; beside it, the contract's bound (5 s) and
   the candidates' polling interval.

PostgreSQL is the tests' throwaway server (tests/support/postgres.py: Debian's
initdb/pg_ctl, fsync off), so the durable figures measure the replicas' code
and the protocol, not a disk. Everything listens on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path

from aiohttp import web

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from create_bench import run_wrk
from harness import _read_response, build_request, has_tool, load_note, machine, percentile, scratch_dir

from escalated.store.postgres.leader import POLL_S
from tests.support.api import escalation_body
from tests.support.postgres import PostgresServer
from tests.support.server import ServerProcess, cli


async def closed_loop(urls: list[str], token: str, *, connections: int, duration_s: float) -> dict:
    """Keep every connection busy for ``duration_s``; creates/s and latency."""
    latencies: list[float] = []
    errors = 0
    loop = asyncio.get_running_loop()
    end = loop.time() + duration_s

    async def client(url: str) -> None:
        nonlocal errors
        host, port = url.removeprefix("http://").rsplit(":", 1)
        reader, writer = await asyncio.open_connection(host, int(port))
        try:
            while loop.time() < end:
                body = json.dumps(escalation_body()).encode()
                headers = {"Content-Type": "application/json", "Authorization": f"Bearer {token}"}
                start = loop.time()
                writer.write(build_request("POST", host, int(port), "/escalations", body=body, headers=headers))
                status = await _read_response(reader)
                latencies.append(loop.time() - start)
                errors += status != 201
        finally:
            writer.close()

    t0 = loop.time()
    await asyncio.gather(*(client(urls[i % len(urls)]) for i in range(connections)))
    ms = [v * 1000 for v in latencies]
    return {"rps": len(ms) / (loop.time() - t0), "p50": percentile(ms, 50), "p99": percentile(ms, 99), "errors": errors}


def start(db, count: int) -> list[ServerProcess]:
    replicas = [ServerProcess(db=db, args=("--log-level", "info")).start(timeout_s=60) for _ in range(count)]
    cli(db, "policy", "set", "refunds.large")
    return replicas


def token_of(replicas: list[ServerProcess]) -> str:
    return next(r.bootstrap_key for r in replicas if r.bootstrap_key)


def wrk_loop(urls: list[str], token: str, *, connections: int, duration_s: float) -> dict:
    """One wrk per replica, side by side: the sum of their rates; of p50/p99 the worse."""
    from concurrent.futures import ThreadPoolExecutor

    body_file = scratch_dir("replicas-body") / "body.json"
    body_file.write_bytes(json.dumps(escalation_body()).encode())
    per = connections // len(urls)
    with ThreadPoolExecutor(len(urls)) as pool:
        runs = list(pool.map(lambda u: run_wrk(u, body_file, token, connections=per, duration_s=int(duration_s)), urls))
    return {
        "rps": sum(r["rps"] for r in runs),
        "p50": max(r["p50"] for r in runs),
        "p99": max(r["p99"] for r in runs),
        "errors": sum(r["non2xx"] for r in runs),
    }


def create_run(db, count: int, args) -> dict:
    replicas = start(db, count)
    loop = wrk_loop if has_tool("wrk") else lambda *a, **k: asyncio.run(closed_loop(*a, **k))
    try:
        urls, token = [r.url for r in replicas], token_of(replicas)
        loop(urls, token, connections=args.connections, duration_s=2)  # warm-up
        return loop(urls, token, connections=args.connections, duration_s=args.duration)
    finally:
        for r in replicas:
            r.stop()


async def decide_to_callback(a: str, b: str, token: str, *, count: int) -> list[float]:
    import aiohttp

    arrived: dict[str, float] = {}

    async def receive(request: web.Request) -> web.Response:
        arrived[json.loads(await request.read())["escalationId"]] = time.monotonic()
        return web.json_response({})

    app = web.Application()
    app.router.add_post("/resume", receive)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    headers = {"Authorization": f"Bearer {token}"}
    waits = []
    async with aiohttp.ClientSession(headers=headers) as http:
        for _ in range(count):
            body = escalation_body(resume={"mode": "webhook", "url": f"http://127.0.0.1:{port}/resume"})
            async with http.post(a + "/escalations", json=body) as r:
                esc = await r.json()
            decided = time.monotonic()
            async with http.post(f"{b}/escalations/{esc['id']}/decide", json={"choice": "approve"}) as r:
                assert r.status == 200, await r.text()
            while esc["id"] not in arrived:
                await asyncio.sleep(0.001)
            waits.append(arrived[esc["id"]] - decided)
    await runner.cleanup()
    return waits


def failover_s(db) -> float:
    replicas = start(db, 2)
    try:
        deadline = time.monotonic() + 10
        while not (leading := [r for r in replicas if any("runs the SLA clock" in x for x in r.output)]):
            assert time.monotonic() < deadline, "no replica leads the clock"
            time.sleep(0.01)
        survivor = next(r for r in replicas if r is not leading[0])
        leading[0].kill()
        killed = time.monotonic()
        while not any("runs the SLA clock" in x for x in survivor.output):
            assert time.monotonic() - killed < 30, "no failover within 30 s"
            time.sleep(0.01)
        return time.monotonic() - killed
    finally:
        for r in replicas:
            r.stop()


def callback_figures(pg: PostgresServer, args) -> tuple[list[float], list[float]]:
    """(one SQLite process: decide and callback on it; two replicas: decide on B) in seconds."""
    sqlite = start(scratch_dir("replicas") / "e.db", 1)
    try:
        alone = asyncio.run(decide_to_callback(sqlite[0].url, sqlite[0].url, token_of(sqlite), count=args.decides))
    finally:
        sqlite[0].stop()
    replicas = start(pg.create_database(migrated=False), 2)
    try:
        across = asyncio.run(decide_to_callback(replicas[0].url, replicas[1].url, token_of(replicas), count=args.decides))
    finally:
        for r in replicas:
            r.stop()
    return alone, across


def create_figures(pg: PostgresServer, args) -> None:
    client = "one wrk -t1 per replica" if has_tool("wrk") else "a Python client (wrk not found)"
    print(f"\ncreates, closed loop ({client}), {args.connections} connections, {args.duration:g} s, --durability full:")
    for round_no in range(1, args.rounds + 1):
        sqlite_rps = None
        for label, db, count in (
            ("SQLite, 1 process", scratch_dir("replicas") / "e.db", 1),
            ("PostgreSQL, 1 replica", pg.create_database(migrated=False), 1),
            ("PostgreSQL, 2 replicas", pg.create_database(migrated=False), 2),
        ):
            load = os.getloadavg()[0]
            r = create_run(db, count, args)
            sqlite_rps = sqlite_rps or r["rps"]
            print(
                f"  round {round_no}  {label:24} {r['rps']:7.0f} creates/s ({r['rps'] / sqlite_rps:4.2f}x SQLite)  "
                f"p50 {r['p50']:6.1f} ms  p99 {r['p99']:6.1f} ms  non-201 {r['errors']}  load {load:.1f}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=10.0, help="seconds of load per run (after 2 s warm-up)")
    parser.add_argument("--connections", type=int, default=48)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--decides", type=int, default=50)
    parser.add_argument("--failovers", type=int, default=3)
    args = parser.parse_args()
    print(machine())
    print(load_note())
    pg = PostgresServer().start()
    try:
        pg.create_template()
        create_figures(pg, args)
        alone, across = callback_figures(pg, args)
        for label, waits in (("SQLite, 1 process (baseline)", alone), ("PostgreSQL, decide on B", across)):
            ms = [w * 1000 for w in waits]
            print(f"decide -> callback, {label:28} p50 {percentile(ms, 50):6.1f} ms  p99 {percentile(ms, 99):6.1f} ms  "
                  f"max {max(ms):6.1f} ms  (n={len(ms)})")  # fmt: skip
        times = [failover_s(pg.create_database(migrated=False)) for _ in range(args.failovers)]
        print(f"clock failover after SIGKILL of the leader, {len(times)} times: " + ", ".join(f"{t:.2f} s" for t in times)
              + f"  (bound 5 s; candidates try the lock every {POLL_S:g} s)")  # fmt: skip
    finally:
        pg.stop()


if __name__ == "__main__":
    main()
