"""Instructions per create, the figure a shared machine cannot move.

    .venv/bin/python benchmarks/create_instructions.py [-n 2400] [--against DIR]

CPU time per request moves by 20-30% from one minute to the next when other
work shares the cores (create_bench.py measures it in interleaved rounds for
that reason). The instructions a process executes do not: each server runs
under valgrind's callgrind, warmed up with 480 creates, then its counters
are zeroed and ``-n`` creates are sent over 48 connections; the figure is
the instructions counted over those creates (user space, every thread of
the process: the commit thread too) divided by their number. The baseline
is the same bare aiohttp handler as create_bench.py's, measured the same
way; ``--against DIR`` measures another checkout of escalated too.

Not the CPU ratio of create_bench.py: the kernel's share (sockets, fsync)
and cache misses are not counted. Use it to tell whether a change to the
create path saves work, on any machine, in one run. Needs valgrind
(Debian: apt-get install valgrind); a server under callgrind is ~50 times
slower, so a run takes a few minutes.
"""

from __future__ import annotations

import argparse
import asyncio
import glob
import os
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from create_bench import POLICY, create_body
from harness import ROOT, build_request, cli, has_tool, load_note, machine, paced, scratch_dir, spawn_listening, stop_process

WARM_UP = 480
CONNECTIONS = 48
_LISTEN = re.compile(r"Listening on http://([\d.]+):(\d+)")
_KEY = re.compile(r"(ain_live_\w+)")
_TOTALS = re.compile(r"^(?:totals|summary): (\d+)", re.M)


def _send(host: str, port: int, token: str, n: int) -> dict[int, int]:
    headers = {"Content-Type": "application/json"} | ({"Authorization": f"Bearer {token}"} if token else {})
    request = build_request("POST", host, port, "/escalations", body=create_body(), headers=headers)
    # A rate no server under callgrind reaches: the connections stay busy, n requests in all.
    _, statuses, _ = asyncio.run(paced(host, port, request, rate_per_s=10_000, duration_s=n / 10_000, connections=CONNECTIONS))
    return statuses


def instructions_per_create(work: Path, name: str, *, n: int, checkout: Path | None = None, bare: bool = False) -> float:
    out = work / f"{name}.callgrind"
    valgrind = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--dump-instr=no"]
    env = dict(os.environ)
    if bare:
        cmd = [*valgrind, sys.executable, str(ROOT / "benchmarks" / "_bare_aiohttp.py")]
    else:
        db = work / f"{name}.db"
        cli(db, "policy", "set", POLICY, "--sla", "1h", "--default-choice", "deny", checkout=checkout)
        env |= {"ESCALATED_DB": str(db.resolve()), "PYTHONUNBUFFERED": "1"}
        if checkout:
            env["PYTHONPATH"] = str(checkout)
        cmd = [*valgrind, sys.executable, str(ROOT / "benchmarks" / "_serve_counted.py"), "serve", "--port", "0",
               "--log-level", "warning", "--durability", "full"]  # fmt: skip
    proc, text, _ = spawn_listening(cmd, work / f"{name}.log", env=env, timeout_s=900)
    try:
        m = _LISTEN.search(text)
        host, port = m.group(1), int(m.group(2))
        key = _KEY.search(text)
        token = key.group(1) if key else ""
        _send(host, port, token, WARM_UP)
        subprocess.run(["callgrind_control", "-z", str(proc.pid)], check=True, capture_output=True)
        statuses = _send(host, port, token, n)
        subprocess.run(["callgrind_control", "-d", str(proc.pid)], check=True, capture_output=True)
        time.sleep(1)
    finally:
        stop_process(proc)
    if set(statuses) != {201}:
        raise RuntimeError(f"{name}: answers {statuses}, expected only 201")
    dumps = [f for f in glob.glob(f"{out}.*") if _TOTALS.search(Path(f).read_text())]  # the dump after the n creates
    return sum(int(_TOTALS.search(Path(f).read_text()).group(1)) for f in dumps) / n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=2400, help="creates counted, after the warm-up")
    parser.add_argument("--against", type=Path, metavar="DIR", help="another checkout of escalated, measured too")
    args = parser.parse_args()
    if not has_tool("valgrind") or not has_tool("callgrind_control"):
        parser.error("needs valgrind (apt-get install valgrind)")
    if args.against is not None and not (args.against / "escalated" / "__init__.py").is_file():
        parser.error(f"--against {args.against}: not a checkout of escalated (no escalated/__init__.py there)")
    work = scratch_dir("escalated-instructions-")
    print(f"machine: {machine()}; {load_note()} (instruction counts do not depend on it)")
    bare = instructions_per_create(work, "bare", n=args.n, bare=True)
    print(f"{'bare aiohttp handler (baseline)':<36}{bare:>12,.0f} instructions per request")
    runs = [("escalated --durability full", None)]
    if args.against is not None:
        runs.append((f"--against {args.against}", args.against.resolve()))
    for i, (label, checkout) in enumerate(runs):
        per = instructions_per_create(work, f"escalated-{i}", n=args.n, checkout=checkout)
        print(f"{label:<36}{per:>12,.0f} instructions per create, {per / bare:.2f}x the bare handler")


if __name__ == "__main__":
    main()
