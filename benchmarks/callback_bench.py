"""Decide -> signed callback received, end to end, with its baseline.

    .venv/bin/python benchmarks/callback_bench.py [-n 1000] [--rate 0] [--durability full]

Creates N escalations whose ``resume.url`` is a local receiver (aiohttp, in
this process, verifying every signature with escalated.agent.signing), then
decides them one after another (or at ``--rate`` per second, open loop) and
times each from the moment the decide request is sent to the moment the
receiver has verified its callback. Baseline, same run, same receiver: a
client POSTing a signed callback-sized body straight to the receiver (one
HTTP hop, the floor for any callback).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

import aiohttp
import orjson
from aiohttp import web

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import Server, cli, load_note, machine, percentile, scratch_dir, summary_ms

from escalated.agent.receiver import RunningReceiver, start_receiver
from escalated.agent.signing import sign, verify

POLICY = "bench.callback"
SECRET = "whsec_bench_callback_0123456789"


class Receiver:
    """Verifies each callback and stamps its arrival on the loop clock."""

    def __init__(self) -> None:
        self.arrived: dict[str, asyncio.Future] = {}
        self.bad_signatures = 0
        self.url = ""
        self._running: RunningReceiver | None = None

    def expect(self, escalation_id: str) -> asyncio.Future:
        return self.arrived.setdefault(escalation_id, asyncio.get_running_loop().create_future())

    async def handle(self, request: web.Request) -> web.Response:
        raw = await request.read()
        if not verify(raw, request.headers.get("x-service-signature"), SECRET):
            self.bad_signatures += 1
            return web.Response(status=401)
        at = asyncio.get_running_loop().time()
        fut = self.expect(orjson.loads(raw)["escalationId"])
        if not fut.done():
            fut.set_result(at)
        return web.json_response({"ok": True})

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/resume", self.handle)
        self._running = await start_receiver(app)
        self.url = self._running.url + "/resume"

    async def close(self) -> None:
        if self._running is not None:
            await self._running.close()


def body_for(i: int, resume_url: str) -> dict:
    return {
        "policy": POLICY, "agentId": "bench", "runId": f"run-{i}",
        "subject": {"type": "order", "id": str(i), "label": f"Order {i}"},
        "question": "Refund?", "evidence": ["one fact", "another fact"],
        "choices": [{"id": "approve", "label": "Approve"}, {"id": "deny", "label": "Deny"}],
        "resume": {"mode": "webhook", "url": resume_url, "secret": SECRET},
    }  # fmt: skip


async def create_all(http: aiohttp.ClientSession, url: str, n: int, resume_url: str) -> list[str]:
    ids: list[str] = [""] * n
    sem = asyncio.Semaphore(16)

    async def one(i: int) -> None:
        async with sem, http.post(url + "/escalations", json=body_for(i, resume_url)) as resp:
            assert resp.status == 201, await resp.text()
            ids[i] = (await resp.json())["id"]

    await asyncio.gather(*(one(i) for i in range(n)))
    return ids


async def decide_and_wait(http, url, receiver: Receiver, esc_id: str) -> tuple[float, float]:
    loop = asyncio.get_running_loop()
    arrival = receiver.expect(esc_id)
    t0 = loop.time()
    async with http.post(f"{url}/escalations/{esc_id}/decide", json={"choice": "approve", "reason": "ok"}) as resp:
        assert resp.status == 200, await resp.text()
        await resp.read()
    answered = loop.time() - t0
    return answered, await asyncio.wait_for(arrival, 30) - t0


async def baseline(receiver: Receiver, n: int) -> list[float]:
    loop = asyncio.get_running_loop()
    out = []
    async with aiohttp.ClientSession() as http:
        for i in range(n):
            body = orjson.dumps({"escalationId": f"esc_baseline_{i}", "runId": "r", "agentId": "a", "policy": POLICY,
                                 "choice": "approve", "resolvedBy": "human", "answeredBy": "key:bench",
                                 "answeredAt": "2026-11-22T10:15:00.123Z"})  # fmt: skip
            headers = {"content-type": "application/json", "x-service-signature": sign(body, SECRET)}
            t0 = loop.time()
            async with http.post(receiver.url, data=body, headers=headers) as resp:
                await resp.read()
            out.append(loop.time() - t0)
    return out


async def run(server: Server, n: int, rate: float) -> None:
    receiver = Receiver()
    await receiver.start()
    try:
        headers = {"Authorization": f"Bearer {server.key}"}
        async with aiohttp.ClientSession(headers=headers) as http:
            ids = await create_all(http, server.url, n, receiver.url)
            await decide_and_wait(http, server.url, receiver, ids[0])  # warm-up
            ids = ids[1:]
            if rate > 0:
                results = await paced_decides(http, server.url, receiver, ids, rate)
            else:
                results = [await decide_and_wait(http, server.url, receiver, esc_id) for esc_id in ids]
        base = await baseline(receiver, len(ids))
    finally:
        await receiver.close()
    decided = [r[0] for r in results]
    delivered = [r[1] for r in results]
    mode = f"at {rate:.0f}/s open loop" if rate > 0 else "one at a time"
    print(f"\ndecide -> callback verified at the receiver ({len(ids)} escalations, {mode}):")
    print(f"  {'decide -> callback received':<38}{summary_ms(delivered)}")
    print(f"  {'decide request answered':<38}{summary_ms(decided)}")
    print(f"  {'baseline: one POST to the receiver':<38}{summary_ms(base)}")
    print(f"  bad signatures: {receiver.bad_signatures}")
    p50, p99 = percentile(delivered, 50) * 1000, percentile(delivered, 99) * 1000
    print(f"\ntarget: p50 < 20 ms -> {p50:.2f} ms; p99 < 100 ms -> {p99:.2f} ms")


async def paced_decides(http, url, receiver, ids, rate) -> list[tuple[float, float]]:
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    tasks = []
    for i, esc_id in enumerate(ids):
        delay = t0 + i / rate - loop.time()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(decide_and_wait(http, url, receiver, esc_id)))
    return await asyncio.gather(*tasks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=1000, help="escalations to decide")
    parser.add_argument("--rate", type=float, default=0.0, help="decides per second, open loop (0: one at a time)")
    parser.add_argument("--durability", choices=["full", "normal"], default="full")
    args = parser.parse_args()
    work = scratch_dir("escalated-callback-")
    print(f"machine: {machine()}; {load_note()}")
    print(f"data: {work}; escalated serve --durability {args.durability}")
    db = work / "callback.db"
    cli(db, "policy", "set", POLICY)
    server = Server(db=db, args=("--durability", args.durability)).start()
    try:
        asyncio.run(run(server, args.n + 1, args.rate))
    finally:
        server.stop()


if __name__ == "__main__":
    main()
