"""Head-of-line blocking: a healthy agent's callback behind callbacks to hung receivers.

    .venv/bin/python benchmarks/hol_bench.py [-n 200] [--hung 40] [--ports 10]

A real ``escalated serve`` (``--delivery-timeout 60s``, so a hung attempt
holds its slot for the whole run) delivers to local receivers: ``--ports``
that accept each callback and never answer (each on a port of its own, as
local agents are; a receiver is scheme, host and port), and one healthy
(verifies signatures, answers at once). First ``--hung`` escalations that
call back to the hung receivers, spread evenly over them, are decided; then
N escalations that call back to the healthy one are decided one after
another, each timed from the decide request to the verified callback.
Baseline, same run, same server: the same N healthy callbacks before any
hung work was queued.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

import aiohttp
from aiohttp import web

sys.path.insert(0, str(Path(__file__).resolve().parent))
from callback_bench import POLICY, Receiver, create_all, decide_and_wait
from harness import Server, cli, load_note, machine, percentile, scratch_dir, summary_ms

from escalated.agent.receiver import RunningReceiver, start_receiver


class HungReceiver:
    """Accepts each callback and never answers."""

    def __init__(self) -> None:
        self.arrived = 0
        self.url = ""
        self._release = asyncio.Event()
        self._running: RunningReceiver | None = None

    async def handle(self, request: web.Request) -> web.Response:
        self.arrived += 1
        await self._release.wait()
        return web.Response(status=200)

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/resume", self.handle)
        self._running = await start_receiver(app)
        self.url = self._running.url + "/resume"

    async def close(self) -> None:
        self._release.set()
        if self._running is not None:
            await self._running.close()


async def healthy_latencies(http, url: str, receiver: Receiver, ids: list[str]) -> list[float]:
    return [(await decide_and_wait(http, url, receiver, esc_id))[1] for esc_id in ids]


async def run(server: Server, n: int, hung_n: int, ports: int) -> None:
    healthy, hung = Receiver(), [HungReceiver() for _ in range(ports)]
    await healthy.start()
    for receiver in hung:
        await receiver.start()
    try:
        async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {server.key}"}) as http:
            ids = await create_all(http, server.url, 2 * n + 1, healthy.url)
            hung_ids = []
            for i, receiver in enumerate(hung):
                share = hung_n // ports + (i < hung_n % ports)
                hung_ids += await create_all(http, server.url, share, receiver.url)
            await decide_and_wait(http, server.url, healthy, ids.pop())  # warm-up
            base = await healthy_latencies(http, server.url, healthy, ids[:n])
            for esc_id in hung_ids:
                async with http.post(f"{server.url}/escalations/{esc_id}/decide", json={"choice": "approve"}) as resp:
                    assert resp.status == 200, await resp.text()
            await asyncio.sleep(1.0)  # let the sender start what it will for the hung receivers
            in_flight = [receiver.arrived for receiver in hung]
            behind = await healthy_latencies(http, server.url, healthy, ids[n:])
    finally:
        for receiver in hung:
            await receiver.close()
        await healthy.close()
    where = f"{hung_n} hung callbacks on {ports} port{'s' if ports > 1 else ''}"
    print(f"\nhealthy callback, decide -> verified at the receiver, one at a time (n={n} each):")
    print(f"  {f'behind {where}':<44}{summary_ms(behind)}")
    print(f"  {'baseline: no hung callbacks':<44}{summary_ms(base)}")
    print(f"  attempts the hung receivers held: {sum(in_flight)} ({in_flight}); bad signatures: {healthy.bad_signatures}")
    print(f"\np99 behind {where}: {percentile(behind, 99) * 1000:.2f} ms; baseline p99: {percentile(base, 99) * 1000:.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=200, help="healthy callbacks timed in each phase")
    parser.add_argument("--hung", type=int, default=40, help="callbacks to the hung receivers")
    parser.add_argument("--ports", type=int, default=10, help="hung receivers, one per port")
    args = parser.parse_args()
    work = scratch_dir("escalated-hol-")
    print(f"machine: {machine()}; {load_note()}")
    db = work / "hol.db"
    cli(db, "policy", "set", POLICY)
    server = Server(db=db, args=("--delivery-timeout", "60s")).start()
    try:
        asyncio.run(run(server, args.n, args.hung, args.ports))
    finally:
        server.stop()


if __name__ == "__main__":
    main()
