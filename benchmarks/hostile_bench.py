"""Hostile peers: a receiver answering 1 GiB, and slowloris at a 1,024 file limit.

    .venv/bin/python benchmarks/hostile_bench.py [--answer-gib 1] [--half-open 1010,3000]

1. A receiver answers a callback with 200 and a 1 GiB body. Prints the
   server's RSS (current and peak) before and after, the time to record the
   delivery, and how much of the body the receiver got to send before the
   server hung up. Baseline: the same server delivering one callback to a
   receiver answering ``{}``.
2. ``escalated serve`` under ``ulimit -n 1024``; the benchmark opens N
   half-open connections (part of a request's headers, then nothing), then
   times 50 ``GET /healthz`` from a new client, counts the server's open
   descriptors and its log lines. Baseline: the same 50 requests before any
   half-open connection.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import socket
import sys
import time
from pathlib import Path

import aiohttp
from aiohttp import web

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import Server, cli, load_note, machine, rss_mb, scratch_dir, summary_ms

POLICY = "bench.hostile"
CHUNK = b"x" * (1024 * 1024)


async def answer_receiver(body_bytes: int, sent: list[int]) -> tuple[web.AppRunner, str]:
    async def handle(request: web.Request) -> web.StreamResponse:
        await request.read()
        response = web.StreamResponse(status=200, headers={"Content-Length": str(max(body_bytes, 2))})
        await response.prepare(request)
        if body_bytes == 0:
            await response.write(b"{}")
            return response
        try:
            while sent[0] < body_bytes:
                await response.write(CHUNK)
                sent[0] += len(CHUNK)
        except (ConnectionError, RuntimeError):
            pass
        return response

    app = web.Application()
    app.router.add_post("/resume", handle)
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.1)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    return runner, f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}/resume"


async def one_callback(server: Server, body_bytes: int) -> None:
    sent = [0]
    runner, url = await answer_receiver(body_bytes, sent)
    try:
        async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {server.key}"}) as http:
            body = {"policy": POLICY, "agentId": "a", "runId": f"r{body_bytes}", "subject": {"type": "t", "id": "1", "label": "l"},
                    "question": "q?", "evidence": ["e"], "choices": [{"id": "ok", "label": "OK"}],
                    "resume": {"mode": "webhook", "url": url, "secret": "s"}}  # fmt: skip
            async with http.post(f"{server.url}/escalations", json=body) as resp:
                esc_id = (await resp.json())["id"]
            before = rss_mb(server.pid)
            started = time.monotonic()
            async with http.post(f"{server.url}/escalations/{esc_id}/decide", json={"choice": "ok"}) as resp:
                assert resp.status == 200
            while True:
                async with http.get(f"{server.url}/escalations/{esc_id}/deliveries") as resp:
                    delivery = (await resp.json())["data"][0]
                if delivery["attempts"]:
                    break
                await asyncio.sleep(0.02)
            took = time.monotonic() - started
            after = rss_mb(server.pid)
    finally:
        await runner.cleanup()
    label = f"{body_bytes / 2**30:g} GiB answer" if body_bytes else "baseline, {} answer"
    print(f"  {label:<22} RSS {before[0]:.0f} -> {after[0]:.0f} MB (peak {after[1]:.0f} MB); attempt recorded in {took:.2f} s "
          f"as {delivery['status']}; receiver sent {sent[0] / 2**20:.0f} MiB before the server hung up")


def healthz_times(url: str, n: int = 50) -> list[float]:
    host, port = url.removeprefix("http://").rsplit(":", 1)
    out = []
    for _ in range(n):
        started = time.monotonic()
        with socket.create_connection((host, int(port)), timeout=30) as sock:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            assert sock.recv(64).startswith(b"HTTP/1.1 200"), "not served"
        out.append(time.monotonic() - started)
    return out


def slowloris(work: Path, half_open: int) -> None:
    db = work / f"slow{half_open}.db"
    cli(db, "policy", "set", POLICY)
    server = Server(db=db, args=("--log-level", "info"))
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, hard))  # inherited by the server
    try:
        server.start()
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    held = []
    try:
        base = healthz_times(server.url)
        host, port = server.url.removeprefix("http://").rsplit(":", 1)
        for _ in range(half_open):
            sock = socket.create_connection((host, int(port)), timeout=30)
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
            held.append(sock)
        under = healthz_times(server.url)
        fds = len(os.listdir(f"/proc/{server.pid}/fd"))
    finally:
        for sock in held:
            sock.close()
        server.stop()
    log = server.output()
    print(f"\n{half_open} half-open connections, server at ulimit -n 1024 ({fds} descriptors open with them held):")
    print(f"  {'new client GET /healthz':<30}{summary_ms(under)}")
    print(f"  {'baseline, no half-open':<30}{summary_ms(base)}")
    print(f"  log: {log.count('connection cap reached')} cap lines, {log.count('Traceback')} tracebacks")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--answer-gib", type=float, default=1.0)
    parser.add_argument("--half-open", default="1010,3000")
    args = parser.parse_args()
    work = scratch_dir("escalated-hostile-")
    print(f"machine: {machine()}; {load_note()}")
    db = work / "answer.db"
    cli(db, "policy", "set", POLICY)
    server = Server(db=db).start()
    try:
        print("\na receiver's answer to a callback:")
        asyncio.run(one_callback(server, 0))
        asyncio.run(one_callback(server, int(args.answer_gib * 2**30)))
    finally:
        server.stop()
    for n in args.half_open.split(","):
        slowloris(work, int(n))


if __name__ == "__main__":
    main()
