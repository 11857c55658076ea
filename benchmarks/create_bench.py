"""Create throughput and latency, with its baseline in the same run.

    .venv/bin/python benchmarks/create_bench.py [--duration 10] [--connections 48]

1. wrk (closed loop, N connections) against a bare aiohttp handler that
   parses the same JSON and answers 201 — the ceiling of aiohttp on this
   machine — and against ``escalated serve --durability full`` and
   ``--durability normal``: req/s, the ratio to the baseline, p50/p99, CPU
   per request and how busy the event loop's thread was. In each of
   ``--rounds`` rounds every server is started and warmed up, then they take
   turns under load ``--slice`` seconds at a time (``--duration`` seconds
   each in all), and each one's CPU time is taken over its own slices only:
   on a shared machine the other tenants' work moves from second to second,
   and it falls on the baseline and on escalated alike. The summary gives
   the ratios' median and range over the rounds.
2. A paced client at a fixed rate (default 1,000 req/s, open loop, latency
   from each request's due time) against ``--durability full``: p50/p99/max
   (``--rate ''``: none).
3. The writer's group commit: jobs vs commits in each server run.

``--against DIR`` also runs another checkout of escalated (a git worktree
of an older commit, say) in every round, its slices interleaved with the
others': two versions compared in the same seconds, against the same
baseline.

Every run also prints its CPU per request split by thread (the event
loop's, the others' together: the commit thread's) into user and kernel
time; ``--syscalls`` counts each run's system calls per request with
``strace -c`` (which slows the server: only the counts of such a run mean
anything).

Needs wrk (Debian: apt-get install wrk); without it step 1 uses the paced
client's connections in a closed loop instead (slower client, lower figures).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import attrs
import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import (
    ROOT,
    Server,
    build_request,
    cli,
    cpu_s,
    has_tool,
    load_note,
    machine,
    main_thread_cpu_s,
    paced,
    percentile,
    scratch_dir,
    spawn_listening,
    stop_process,
    summary_ms,
    thread_times,
    cpu_split_us,
)

POLICY = "bench.create"
BARE = "bare aiohttp handler (baseline)"
FULL = "escalated --durability full"
NORMAL = "escalated --durability normal"
AGAINST = "--against: --durability {}"
STUB = "escalated, Service.create stubbed"


def create_body(receiver_url: str = "http://127.0.0.1:9/resume") -> bytes:
    """A realistic create: a few evidence lines, two choices, a signed resume target."""
    return orjson.dumps(
        {
            "policy": POLICY,
            "agentId": "billing-agent",
            "runId": "thread-42",
            "subject": {"type": "order", "id": "o-981", "label": "Order #981"},
            "question": "Refund 1,200 EUR to the customer for order #981?",
            "evidence": [
                "Customer reports the parcel never arrived (ticket 5521).",
                "Carrier tracking shows 'delivered' but no signature.",
                "Customer has 14 orders and no prior refund requests.",
            ],
            "choices": [{"id": "approve", "label": "Approve"}, {"id": "deny", "label": "Deny"}],
            "resume": {"mode": "webhook", "url": receiver_url, "secret": "whsec_bench_0123456789abcdef"},
        }
    )


_UNIT = {"us": 1e-3, "ms": 1.0, "s": 1000.0, "m": 60_000.0}


def _ms(text: str) -> float:
    m = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text)
    return float(m.group(1)) * _UNIT[m.group(2)]


def run_wrk(url: str, body_file: Path, token: str, *, connections: int, duration_s: int) -> dict:
    env = {**os.environ, "BENCH_BODY_FILE": str(body_file), "BENCH_TOKEN": token}
    script = str(ROOT / "benchmarks" / "create.lua")
    cmd = ["wrk", "-t1", f"-c{connections}", f"-d{duration_s}s", "--latency", "-s", script, url + "/escalations"]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=duration_s + 60, check=True).stdout
    result = {"rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))}
    done = re.search(r"(\d+) requests in ([\d.]+\w+)", out)
    result["requests"], result["elapsed_s"] = int(done.group(1)), _ms(done.group(2)) / 1000
    for pct in ("50", "99"):
        result[f"p{pct}"] = _ms(re.search(rf"\s{pct}%\s+([\d.]+\w+)", out).group(1))
    bad = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    errors = re.search(r"Socket errors: (.*)", out)
    result["non2xx"] = int(bad.group(1)) if bad else 0
    result["socket_errors"] = errors.group(1) if errors else ""
    return result


def run_closed_loop(url: str, body: bytes, token: str, *, connections: int, duration_s: int) -> dict:
    """Fallback without wrk: the paced client at a rate no server here reaches."""
    host, port = url.removeprefix("http://").rsplit(":", 1)
    headers = {"Content-Type": "application/json"} | ({"Authorization": f"Bearer {token}"} if token else {})
    request = build_request("POST", host, int(port), "/escalations", body=body, headers=headers)
    lat, statuses, rate = asyncio.run(
        paced(host, int(port), request, rate_per_s=20_000, duration_s=duration_s, connections=connections)
    )
    ms = [v * 1000 for v in lat]
    return {"rps": rate, "requests": len(lat), "elapsed_s": duration_s, "p50": percentile(ms, 50), "p99": percentile(ms, 99),
            "non2xx": sum(n for s, n in statuses.items() if not 200 <= s < 300), "socket_errors": ""}  # fmt: skip


def start_strace(pid: int, out: Path) -> subprocess.Popen:
    """``strace -c`` on every thread of ``pid`` until stopped (``stop_strace``)."""
    proc = subprocess.Popen(["strace", "-c", "-f", "-p", str(pid), "-o", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    time.sleep(0.5)  # attached to every thread before the measured run starts
    return proc


_STRACE_ROW = re.compile(r"^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)\s*$")


def stop_strace(proc: subprocess.Popen, out: Path) -> dict[str, int]:
    """The system calls counted, by name."""
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=30)
    calls = {}
    for line in out.read_text().splitlines():
        if (m := _STRACE_ROW.match(line)) and m.group(2) != "total":
            calls[m.group(2)] = int(m.group(1))
    return calls


@attrs.define
class Target:
    """One server under test in a round: kept running for the whole round."""

    name: str
    url: str
    token: str
    pid: int
    stop: Callable[[], None]
    server: Server | None = None
    # accumulated over the round's slices
    requests: int = 0
    wall_s: float = 0.0
    cpu_s: float = 0.0
    loop_s: float = 0.0
    split: dict[str, float] = attrs.field(factory=lambda: dict.fromkeys(("loop_user", "loop_sys", "other_user", "other_sys"), 0.0))
    p50: list[float] = attrs.field(factory=list)
    p99: list[float] = attrs.field(factory=list)
    non2xx: int = 0
    socket_errors: list[str] = attrs.field(factory=list)
    tracer: subprocess.Popen | None = None
    trace_out: Path | None = None
    syscalls: dict[str, int] | None = None

    def result(self) -> dict:
        r = {"rps": self.requests / self.wall_s, "p50": statistics.median(self.p50), "p99": max(self.p99),
             "cpu_us": self.cpu_s / self.requests * 1e6, "loop_busy": self.loop_s / self.wall_s,
             "split": {k: v / self.requests for k, v in self.split.items()},
             "non2xx": self.non2xx, "socket_errors": "; ".join(self.socket_errors), "requests": self.requests}  # fmt: skip
        if self.syscalls is not None:
            r["syscalls"] = {name: n / self.requests for name, n in self.syscalls.items()}
        return r


def drive(t: Target, body_file: Path, args, *, duration_s: int) -> dict:
    if has_tool("wrk"):
        return run_wrk(t.url, body_file, t.token, connections=args.connections, duration_s=duration_s)
    return run_closed_loop(t.url, body_file.read_bytes(), t.token, connections=args.connections, duration_s=duration_s)


def measure_slice(t: Target, body_file: Path, args) -> None:
    """One slice of load on ``t``, its CPU time (and split by thread) over exactly that slice."""
    cpu0, loop0, threads0 = cpu_s(t.pid), main_thread_cpu_s(t.pid), thread_times(t.pid)
    r = drive(t, body_file, args, duration_s=args.slice)
    cpu1, loop1, threads1 = cpu_s(t.pid), main_thread_cpu_s(t.pid), thread_times(t.pid)
    t.requests += r["requests"]
    t.wall_s += r["elapsed_s"]
    t.cpu_s += cpu1 - cpu0
    t.loop_s += loop1 - loop0
    for k, v in cpu_split_us(t.pid, threads0, threads1, 1).items():
        t.split[k] += v
    t.p50.append(r["p50"])
    t.p99.append(r["p99"])
    t.non2xx += r["non2xx"]
    if r["socket_errors"]:
        t.socket_errors.append(r["socket_errors"])


def measure_round(targets: list[Target], body_file: Path, args, *, round_no: int) -> None:
    """Every server of the round warmed up, then loaded in turn for ``--slice``
    seconds at a time, ``--duration`` seconds each in all: each server's CPU is
    taken over its own slices only, and the servers' slices alternate second by
    second, so the machine's other work falls on all of them alike. The order
    rotates from one pass to the next (and is reversed in even rounds), so no
    server always follows the same one."""
    for t in targets:
        drive(t, body_file, args, duration_s=2)  # warm-up
    if args.syscalls:
        for t in targets:
            t.trace_out = body_file.with_name(f"strace-{t.pid}.txt")
            t.tracer = start_strace(t.pid, t.trace_out)
    order = list(targets) if round_no % 2 else list(reversed(targets))
    passes = max(1, round(args.duration / args.slice))
    for i in range(passes):
        k = i % len(order)
        for t in order[k:] + order[:k]:
            measure_slice(t, body_file, args)
    for t in targets:
        if t.tracer is not None:
            t.syscalls = stop_strace(t.tracer, t.trace_out)


def split_note(r: dict) -> str:
    s = r["split"]
    note = (f"loop user {s['loop_user']:.0f} + kernel {s['loop_sys']:.0f}; "
            f"other threads user {s['other_user']:.0f} + kernel {s['other_sys']:.0f} us/req")  # fmt: skip
    if "syscalls" in r:
        calls = sorted(r["syscalls"].items(), key=lambda item: -item[1])
        note += f"\n{'':<40}syscalls per request: {sum(r['syscalls'].values()):.2f}: "
        note += ", ".join(f"{name} {n:.2f}" for name, n in calls if n >= 0.01)
    return note


def escalated_target(
    name: str,
    work: Path,
    durability: str,
    *,
    round_no: int = 1,
    stub_service: bool = False,
    checkout: Path | None = None,
) -> Target:
    """``checkout``: run that directory's escalated (its CLI and its server) instead of this one."""
    # A fresh database per run: the bootstrap key is only printed for a new one.
    db = work / f"{durability}{'-stub' if stub_service else ''}{'-against' if checkout else ''}-{round_no}.db"
    cli(db, "policy", "set", POLICY, "--sla", "1h", "--default-choice", "deny", checkout=checkout)
    env = {"PYTHONPATH": str(checkout)} if checkout else {}  # the server runs a script: PYTHONPATH comes first
    if stub_service:
        env["BENCH_STUB_SERVICE"] = "1"
    server = Server(db=db, args=("--durability", durability), env=env).start()
    return Target(name=name, url=server.url, token=server.key, pid=server.pid, stop=server.stop, server=server)


def bare_target(work: Path) -> Target:
    proc, text, _ = spawn_listening([sys.executable, str(ROOT / "benchmarks" / "_bare_aiohttp.py")], work / "bare.log")
    url = re.search(r"Listening on (http://\S+)", text).group(1)
    return Target(name=BARE, url=url, token="", pid=proc.pid, stop=lambda: stop_process(proc))


def paced_run(work: Path, body: bytes, rate: float, duration_s: float) -> tuple[tuple, Server]:
    db = work / f"paced-{rate:.0f}.db"
    cli(db, "policy", "set", POLICY, "--sla", "1h", "--default-choice", "deny")
    server = Server(db=db, args=("--durability", "full")).start()
    try:
        headers = {"Content-Type": "application/json", "Authorization": f"Bearer {server.key}"}
        request = build_request("POST", server.host, server.port, "/escalations", body=body, headers=headers)
        asyncio.run(paced(server.host, server.port, request, rate_per_s=rate, duration_s=2, connections=32))
        result = asyncio.run(
            paced(server.host, server.port, request, rate_per_s=rate, duration_s=duration_s, connections=32)
        )
    finally:
        server.stop()
    return result, server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=int, default=10, help="seconds per wrk run (after a 2 s warm-up)")
    parser.add_argument("--slice", type=int, default=1,
                        help="seconds of load at a time: a round's servers take turns, --duration seconds each in all")  # fmt: skip
    parser.add_argument("--connections", type=int, default=48)
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds of baseline, full, normal")
    parser.add_argument("--http-only", action="store_true",
                        help="also run escalated with Service.create stubbed out (an experiment: what the HTTP layer costs alone)")  # fmt: skip
    parser.add_argument("--against", type=Path, metavar="DIR",
                        help="another checkout of escalated to run in every round beside this one (same baseline)")  # fmt: skip
    parser.add_argument("--syscalls", action="store_true",
                        help="count each run's system calls per request with strace -c (slows the server: "
                             "CPU and req/s of such a run are not comparable with others)")  # fmt: skip
    parser.add_argument("--rate", default="1000,250", help="paced requests per second (comma-separated list)")
    parser.add_argument("--paced-duration", type=float, default=10.0)
    args = parser.parse_args()
    if args.against is not None and not (args.against / "escalated" / "__init__.py").is_file():
        parser.error(f"--against {args.against}: not a checkout of escalated (no escalated/__init__.py there)")
    if args.syscalls and not has_tool("strace"):
        parser.error("--syscalls needs strace (Debian: apt-get install strace)")
    against = args.against.resolve() if args.against else None

    work = scratch_dir("escalated-create-")
    body = create_body()
    body_file = work / "body.json"
    body_file.write_bytes(body)
    client = "wrk -t1" if has_tool("wrk") else "paced client (closed loop; wrk not found)"
    print(f"machine: {machine()}; {load_note()}")
    print(f"data: {work}; body {len(body)} bytes; load: {client}, {args.connections} connections, {args.duration} s")

    rounds: list[dict[str, dict]] = []
    servers: list[dict[str, Server]] = []
    for round_no in range(1, args.rounds + 1):
        targets = [bare_target(work)]
        try:
            targets.append(escalated_target(FULL, work, "full", round_no=round_no))
            targets.append(escalated_target(NORMAL, work, "normal", round_no=round_no))
            if against is not None:
                for durability in ("full", "normal"):
                    name = AGAINST.format(durability)
                    targets.append(escalated_target(name, work, durability, round_no=round_no, checkout=against))
            if args.http_only:
                targets.append(escalated_target(STUB, work, "full", round_no=round_no, stub_service=True))
            measure_round(targets, body_file, args, round_no=round_no)
        finally:
            for t in targets:
                t.stop()
        rounds.append({t.name: t.result() for t in targets})
        servers.append({t.name: t.server for t in targets if t.server is not None})
    rates = [float(r) for r in args.rate.split(",") if r.strip()]
    paced_runs = [(rate, *paced_run(work, body, rate, args.paced_duration)) for rate in rates]

    header = f"{'create':<38}{'req/s':>10}{'p50 ms':>10}{'p99 ms':>10}{'vs bare':>10}{'CPU us/req':>12}{'loop busy':>11}  errors"
    for i, (runs, round_servers) in enumerate(zip(rounds, servers, strict=True), 1):
        print(f"\nround {i} of {len(rounds)}")
        print(header)
        bare = runs[BARE]
        for name, r in runs.items():
            errs = f"{r['non2xx']} non-2xx {r['socket_errors']}".strip()
            print(f"{name:<38}{r['rps']:>10.0f}{r['p50']:>10.2f}{r['p99']:>10.2f}{r['rps'] / bare['rps']:>10.2f}"
                  f"{r['cpu_us']:>12.0f}{r['loop_busy']:>10.0%}  {errs}")  # fmt: skip
            print(f"{'':<40}{split_note(r)}")
        for name, server in round_servers.items():
            if server.writer_commits:
                print(f"  group commit ({name}): {server.writer_jobs} write jobs in {server.writer_commits} commits "
                      f"({server.writer_jobs / server.writer_commits:.1f} jobs per commit)")  # fmt: skip
    if any(r["non2xx"] or r["socket_errors"] for runs in rounds for r in runs.values()):
        print("\nWARNING: some runs had errors (see above); their req/s are not comparable")

    def spread(values: list[float]) -> str:
        values = sorted(values)
        return f"median {statistics.median(values):.2f}x (range {values[0]:.2f}-{values[-1]:.2f})"

    def ratios(name: str, key: str, over: str = BARE) -> list[float]:
        return [runs[name][key] / runs[over][key] for runs in rounds]

    print(f"\nover {len(rounds)} round(s), each run's slices interleaved with the others' in the same round:")
    print(f"  CPU per request against the bare handler: full {spread(ratios(FULL, 'cpu_us'))}; "
          f"normal {spread(ratios(NORMAL, 'cpu_us'))}")  # fmt: skip
    print(f"  req/s against the bare handler: full {spread(ratios(FULL, 'rps'))}; normal {spread(ratios(NORMAL, 'rps'))}")
    if args.http_only:
        print(f"  Service.create stubbed (the HTTP layer alone): CPU per request against the bare handler {spread(ratios(STUB, 'cpu_us'))}")
    if against:
        print(f"--against {against}:")
        for durability, ours in (("full", FULL), ("normal", NORMAL)):
            theirs = AGAINST.format(durability)
            print(f"  {durability}: CPU per request against the bare handler {spread(ratios(theirs, 'cpu_us'))}; "
                  f"this/against CPU per create {spread(ratios(ours, 'cpu_us', theirs))}, "
                  f"req/s {spread(ratios(ours, 'rps', theirs))}")  # fmt: skip
    full_ratios = sorted(ratios(FULL, "rps"))
    if not paced_runs:
        print(f"\ntarget: full >= 0.5x bare -> {statistics.median(full_ratios):.2f}x (median)")
        return
    print()
    for rate, (lat, statuses, achieved), server in paced_runs:
        print(f"paced create at {rate:.0f} req/s for {args.paced_duration:.0f} s (--durability full, open loop): "
              f"achieved {achieved:.0f} req/s, statuses {statuses}")  # fmt: skip
        print(f"  latency {summary_ms(lat)}")
        if server.writer_commits:
            print(f"  group commit: {server.writer_jobs} jobs in {server.writer_commits} commits")
    print()
    first_rate, (first_lat, _, _), _ = paced_runs[0]
    print(f"target: full >= 0.5x bare -> {statistics.median(full_ratios):.2f}x (median); "
          f"p99 at {first_rate:.0f} req/s < 10 ms -> {percentile(first_lat, 99) * 1000:.2f} ms")  # fmt: skip


if __name__ == "__main__":
    main()
