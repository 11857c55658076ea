"""Create throughput and latency, with its baseline in the same run.

    .venv/bin/python benchmarks/create_bench.py [--duration 10] [--connections 48]

1. wrk (closed loop, N connections) against a bare aiohttp handler that
   parses the same JSON and answers 201 — the ceiling of aiohttp on this
   machine — then against ``escalated serve --durability full`` and
   ``--durability normal``: req/s, the ratio to the baseline, p50/p99, CPU
   per request and how busy the event loop's thread was. Repeated for
   ``--rounds`` rounds, interleaved, because on a shared machine the
   baseline itself moves from minute to minute; the summary is the median.
2. A paced client at a fixed rate (default 1,000 req/s, open loop, latency
   from each request's due time) against ``--durability full``: p50/p99/max.
3. The writer's group commit: jobs vs commits in each server run.

``--against DIR`` also runs another checkout of escalated (a git worktree
of an older commit, say) in every round, right after this one, against the
same baseline: two versions compared in the same minutes. On a shared
machine the baseline moves by 10-20 % between runs minutes apart, which is
more than most changes to the create path.

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
from pathlib import Path

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
    return {"rps": rate, "p50": percentile(ms, 50), "p99": percentile(ms, 99),
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


def load(url: str, body_file: Path, token: str, args, *, pid: int) -> dict:
    """Warm up, then measure; also the server's CPU time per request (and its
    split by thread, user and kernel time; with ``--syscalls``, the system
    calls per request)."""
    tracer, trace_out = None, Path(body_file).with_name(f"strace-{pid}.txt")
    if has_tool("wrk"):
        run_wrk(url, body_file, token, connections=args.connections, duration_s=2)
        tracer = start_strace(pid, trace_out) if args.syscalls else None
        cpu0, loop0, threads0 = cpu_s(pid), main_thread_cpu_s(pid), thread_times(pid)
        result = run_wrk(url, body_file, token, connections=args.connections, duration_s=args.duration)
    else:
        tracer = start_strace(pid, trace_out) if args.syscalls else None
        cpu0, loop0, threads0 = cpu_s(pid), main_thread_cpu_s(pid), thread_times(pid)
        result = run_closed_loop(url, body_file.read_bytes(), token, connections=args.connections, duration_s=args.duration)
    requests = result["rps"] * args.duration
    result["cpu_us"] = (cpu_s(pid) - cpu0) / requests * 1e6
    result["loop_busy"] = (main_thread_cpu_s(pid) - loop0) / args.duration
    result["split"] = cpu_split_us(pid, threads0, thread_times(pid), requests)
    if tracer is not None:
        result["syscalls"] = {name: n / requests for name, n in stop_strace(tracer, trace_out).items()}
    return result


def split_note(r: dict) -> str:
    s = r["split"]
    note = (f"loop user {s['loop_user']:.0f} + kernel {s['loop_sys']:.0f}; "
            f"other threads user {s['other_user']:.0f} + kernel {s['other_sys']:.0f} us/req")  # fmt: skip
    if "syscalls" in r:
        calls = sorted(r["syscalls"].items(), key=lambda item: -item[1])
        note += f"\n{'':<40}syscalls per request: {sum(r['syscalls'].values()):.2f}: "
        note += ", ".join(f"{name} {n:.2f}" for name, n in calls if n >= 0.01)
    return note


def escalated_run(
    work: Path,
    durability: str,
    body_file: Path,
    args,
    *,
    round_no: int = 1,
    stub_service: bool = False,
    checkout: Path | None = None,
) -> tuple[dict, Server]:
    """``checkout``: run that directory's escalated (its CLI and its server) instead of this one."""
    # A fresh database per run: the bootstrap key is only printed for a new one.
    db = work / f"{durability}{'-stub' if stub_service else ''}{'-against' if checkout else ''}-{round_no}.db"
    cli(db, "policy", "set", POLICY, "--sla", "1h", "--default-choice", "deny", checkout=checkout)
    env = {"PYTHONPATH": str(checkout)} if checkout else {}  # the server runs a script: PYTHONPATH comes first
    if stub_service:
        env["BENCH_STUB_SERVICE"] = "1"
    server = Server(db=db, args=("--durability", durability), env=env).start()
    try:
        result = load(server.url, body_file, server.key, args, pid=server.pid)
    finally:
        server.stop()
    return result, server


def _against_runs(work: Path, body_file: Path, args, *, round_no: int, checkout: Path) -> list[tuple[str, dict]]:
    runs = []
    for durability in ("full", "normal"):
        other, _ = escalated_run(work, durability, body_file, args, round_no=round_no, checkout=checkout)
        runs.append((f"--against: --durability {durability}", other))
    return runs


def bare_run(work: Path, body_file: Path, args) -> dict:
    proc, text, _ = spawn_listening([sys.executable, str(ROOT / "benchmarks" / "_bare_aiohttp.py")], work / "bare.log")
    try:
        url = re.search(r"Listening on (http://\S+)", text).group(1)
        return load(url, body_file, "", args, pid=proc.pid)
    finally:
        stop_process(proc)


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

    rounds = []
    for round_no in range(1, args.rounds + 1):
        bare = bare_run(work, body_file, args)
        # With --against, every other round runs the other checkout first:
        # a run's place in the round (right after the baseline, or last) must
        # not favour either version.
        against_first = against is not None and round_no % 2 == 0
        others = _against_runs(work, body_file, args, round_no=round_no, checkout=against) if against_first else []
        full, full_server = escalated_run(work, "full", body_file, args, round_no=round_no)
        normal, normal_server = escalated_run(work, "normal", body_file, args, round_no=round_no)
        runs = [("bare aiohttp handler (baseline)", bare), ("escalated --durability full", full),
                ("escalated --durability normal", normal)]  # fmt: skip
        if against is not None and not against_first:
            others = _against_runs(work, body_file, args, round_no=round_no, checkout=against)
        runs += others
        if args.http_only:
            stub, _ = escalated_run(work, "full", body_file, args, round_no=round_no, stub_service=True)
            runs.append(("escalated, Service.create stubbed", stub))
        rounds.append((bare, full, normal, full_server, normal_server, runs))
    rates = [float(r) for r in args.rate.split(",") if r.strip()]
    paced_runs = [(rate, *paced_run(work, body, rate, args.paced_duration)) for rate in rates]

    header = f"{'create':<38}{'req/s':>10}{'p50 ms':>10}{'p99 ms':>10}{'vs bare':>10}{'CPU us/req':>12}{'loop busy':>11}  errors"
    for i, (bare, _full, _normal, full_server, normal_server, runs) in enumerate(rounds, 1):
        print(f"\nround {i} of {len(rounds)}")
        print(header)
        for name, r in runs:
            errs = f"{r['non2xx']} non-2xx {r['socket_errors']}".strip()
            print(f"{name:<38}{r['rps']:>10.0f}{r['p50']:>10.2f}{r['p99']:>10.2f}{r['rps'] / bare['rps']:>10.2f}"
                  f"{r['cpu_us']:>12.0f}{r['loop_busy']:>10.0%}  {errs}")  # fmt: skip
            print(f"{'':<40}{split_note(r)}")
        for name, s in (("full", full_server), ("normal", normal_server)):
            if s.writer_commits:
                print(f"  group commit ({name}): {s.writer_jobs} write jobs in {s.writer_commits} commits "
                      f"({s.writer_jobs / s.writer_commits:.1f} jobs per commit)")  # fmt: skip
    if any(r["non2xx"] or r["socket_errors"] for rnd in rounds for _, r in rnd[5]):
        print("\nWARNING: some runs had errors (see above); their req/s are not comparable")
    full_ratios = sorted(r[1]["rps"] / r[0]["rps"] for r in rounds)
    normal_ratios = sorted(r[2]["rps"] / r[0]["rps"] for r in rounds)
    print(f"\nover {len(rounds)} round(s): full/bare median {statistics.median(full_ratios):.2f}x "
          f"(range {full_ratios[0]:.2f}-{full_ratios[-1]:.2f}); normal/bare median {statistics.median(normal_ratios):.2f}x")  # fmt: skip
    if against:
        print(f"--against {against}:")
        for durability, ours in (("full", 1), ("normal", 2)):
            theirs = [dict(rnd[5])[f"--against: --durability {durability}"] for rnd in rounds]
            ratios = sorted(t["rps"] / rnd[0]["rps"] for t, rnd in zip(theirs, rounds, strict=True))
            # this version's req/s over the other's, round by round (same minutes, same baseline)
            rel = sorted(rnd[ours]["rps"] / t["rps"] for t, rnd in zip(theirs, rounds, strict=True))
            cpu = sorted(rnd[ours]["cpu_us"] / t["cpu_us"] for t, rnd in zip(theirs, rounds, strict=True))
            print(f"  {durability}/bare median {statistics.median(ratios):.2f}x (range {ratios[0]:.2f}-{ratios[-1]:.2f}); "
                  f"this/against req/s median {statistics.median(rel):.2f} (range {rel[0]:.2f}-{rel[-1]:.2f}), "
                  f"CPU per create {statistics.median(cpu):.2f}")  # fmt: skip
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
