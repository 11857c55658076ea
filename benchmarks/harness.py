"""What the benchmarks share: the real server in a subprocess, the machine
description, percentiles, RSS, and a paced (open-loop) HTTP client.

Benchmarks are scripts, not tests: they print figures, they assert nothing
about time.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import platform
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import attrs

ROOT = Path(__file__).resolve().parents[1]
_LISTEN = re.compile(r"Listening on http://([\w.\-\[\]:]+):(\d+)")
_KEY = re.compile(r"(ain_live_\w+)")
_WRITER = re.compile(r"writer: (\d+) commits, (\d+) jobs")


def machine() -> str:
    cpu = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        mem_kb = int(re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text()).group(1))
        mem = f"{mem_kb / 1024 / 1024:.0f} GB RAM"
    except (OSError, AttributeError):
        mem = "? RAM"
    return (
        f"{os.cpu_count()} cores ({cpu}), {mem}, {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()}, SQLite {sqlite3.sqlite_version}"
    )


def scratch_dir(prefix: str) -> Path:
    """A scratch directory under $BENCH_DIR (default /var/tmp, disk-backed by
    convention, unlike a tmpfs /tmp: fsync must cost what it costs), removed
    at exit unless BENCH_KEEP is set."""
    base = Path(os.environ.get("BENCH_DIR", "/var/tmp"))
    base.mkdir(parents=True, exist_ok=True)
    path = Path(tempfile.mkdtemp(prefix=prefix, dir=base))
    if not os.environ.get("BENCH_KEEP"):  # the 1M-row database alone is ~1 GB
        atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


def percentile(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))
    return ordered[k]


def summary_ms(values_s: list[float]) -> str:
    ms = [v * 1000 for v in values_s]
    return (
        f"p50 {percentile(ms, 50):.2f} ms, p90 {percentile(ms, 90):.2f} ms, "
        f"p99 {percentile(ms, 99):.2f} ms, max {max(ms) if ms else float('nan'):.2f} ms (n={len(ms)})"
    )


def rss_mb(pid: int) -> tuple[float, float]:
    """(current RSS, peak RSS) of a process, in MB."""
    text = Path(f"/proc/{pid}/status").read_text()
    rss = int(re.search(r"VmRSS:\s+(\d+)", text).group(1))
    hwm = int(re.search(r"VmHWM:\s+(\d+)", text).group(1))
    return rss / 1024, hwm / 1024


def cpu_s(pid: int) -> float:
    """CPU seconds (user + system, all threads) a process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main_thread_cpu_s(pid: int) -> float:
    """CPU seconds of a process's main thread (the server's event loop)."""
    fields = Path(f"/proc/{pid}/task/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def thread_times(pid: int) -> dict[int, tuple[int, int]]:
    """Each thread's (user, system) clock ticks so far, by thread id."""
    times = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            fields = Path(f"/proc/{pid}/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # the thread ended meanwhile
            continue
        times[int(tid)] = (int(fields[11]), int(fields[12]))
    return times


def cpu_split_us(pid: int, before: dict[int, tuple[int, int]], after: dict[int, tuple[int, int]], n: float) -> dict:
    """Microseconds of CPU per request between two ``thread_times``: the
    main thread's (the event loop) and the other threads' together (the
    commit thread, aiosqlite's), each as user and system (kernel) time."""
    tick_us = 1e6 / os.sysconf("SC_CLK_TCK")
    split = {"loop_user": 0.0, "loop_sys": 0.0, "other_user": 0.0, "other_sys": 0.0}
    for tid, (user, system) in after.items():
        user0, system0 = before.get(tid, (0, 0))
        who = "loop" if tid == pid else "other"
        split[f"{who}_user"] += (user - user0) * tick_us / n
        split[f"{who}_sys"] += (system - system0) * tick_us / n
    return split


def load_note() -> str:
    """The 1-minute load average: other work on the machine skews every figure."""
    one = os.getloadavg()[0]
    warn = f"  (WARNING: busy machine, {os.cpu_count()} cores; figures are pessimistic)" if one > 0.5 else ""
    return f"load average {one:.2f} at start{warn}"


def cli(db: Path, *args: str, checkout: Path | None = None) -> str:
    """``escalated ARGS`` on ``db``; ``checkout``: another checkout's escalated instead of this one.

    It runs from inside that checkout: ``python -m`` puts the current
    directory first on the path, before PYTHONPATH, so from anywhere else
    an ``escalated`` package there would win.
    """
    extra = {"PYTHONPATH": str(checkout)} if checkout else {}
    proc = subprocess.run(
        [sys.executable, "-m", "escalated", *args],
        cwd=checkout,
        env={**os.environ, **extra, "ESCALATED_DB": str(Path(db).resolve()) if checkout else str(db)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"escalated {' '.join(args)} failed: {proc.stderr}")
    return proc.stdout.strip()


@attrs.define
class Server:
    """``escalated serve`` in a subprocess (through _serve_counted.py, which
    also prints the writer's commit and job counters when it exits)."""

    db: Path
    args: tuple[str, ...] = ()
    host: str = ""
    port: int = 0
    key: str = ""
    started_s: float = 0.0  # seconds from spawn to "Listening"
    env: dict[str, str] = attrs.field(factory=dict)  # extra environment for the server
    writer_commits: int | None = None
    writer_jobs: int | None = None
    _proc: subprocess.Popen | None = None
    _log: Path | None = None
    _profiler: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def pid(self) -> int:
        assert self._proc is not None
        return self._proc.pid

    def start(self, *, timeout_s: float = 120.0) -> Server:
        self._log = self.db.with_suffix(".log")
        cmd = [sys.executable, str(ROOT / "benchmarks" / "_serve_counted.py"), "serve", "--port", "0",
               "--log-level", "warning", *self.args]  # fmt: skip
        env = {**os.environ, **self.env, "ESCALATED_DB": str(self.db), "PYTHONUNBUFFERED": "1"}
        self._proc, text, self.started_s = spawn_listening(cmd, self._log, env=env, timeout_s=timeout_s)
        m = _LISTEN.search(text)
        self.host, self.port = m.group(1), int(m.group(2))
        if k := _KEY.search(text):
            self.key = k.group(1)
        self._profiler = start_profiler(self._proc.pid, self.db.stem)
        return self

    def output(self) -> str:
        return self._log.read_text() if self._log else ""

    def stop(self) -> None:
        if self._proc is None:
            return
        stop_process(self._proc)
        if self._profiler is not None:
            self._profiler.wait(timeout=60)
        if m := _WRITER.search(self.output()):
            self.writer_commits, self.writer_jobs = int(m.group(1)), int(m.group(2))

    def kill(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()


def spawn_listening(
    cmd: list[str], log: Path, *, env: dict | None = None, timeout_s: float = 120.0
) -> tuple[subprocess.Popen, str, float]:
    """Start ``cmd`` with its output in ``log``; wait for "Listening on".

    Returns the process, its output so far and the seconds it took.
    """
    t0 = time.perf_counter()
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        text = log.read_text()
        if _LISTEN.search(text):
            return proc, text, time.perf_counter() - t0
        if proc.poll() is not None:
            raise RuntimeError(f"{cmd[1]} exited:\n{text}")
        time.sleep(0.005)
    proc.kill()
    proc.wait()
    raise RuntimeError(f"{cmd[1]} did not start in time:\n{log.read_text()}")


def stop_process(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def start_profiler(pid: int, name: str) -> subprocess.Popen | None:
    """With BENCH_PYSPY=DIR, sample the server with py-spy (GIL holder only,
    i.e. where the CPU time of Python goes) into DIR/NAME.txt until it exits;
    summarise with ``python benchmarks/pyspy_top.py DIR/NAME.txt``."""
    out_dir = os.environ.get("BENCH_PYSPY")
    if not out_dir:
        return None
    py_spy = Path(sys.executable).parent / "py-spy"
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    cmd = [str(py_spy) if py_spy.exists() else "py-spy", "record", "--gil", "--threads", "--format", "raw",
           "--rate", "250", "--pid", str(pid), "--output", str(Path(out_dir) / f"{name}.txt")]  # fmt: skip
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def has_tool(name: str) -> bool:
    from shutil import which

    return which(name) is not None


# -- a paced, open-loop HTTP/1.1 client ----------------------------------------


def build_request(method: str, host: str, port: int, path: str, *, body: bytes = b"", headers: dict | None = None) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host}:{port}", f"Content-Length: {len(body)}"]
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


async def _read_response(reader: asyncio.StreamReader) -> int:
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head[9:12])
    m = re.search(rb"(?i)\r\ncontent-length:\s*(\d+)", head)
    if m:
        await reader.readexactly(int(m.group(1)))
    return status


async def paced(
    host: str, port: int, request: bytes, *, rate_per_s: float, duration_s: float, connections: int = 64
) -> tuple[list[float], dict[int, int], float]:
    """Send ``request`` at a fixed rate, whatever the answers do (open loop).

    Latency counts from when each request was *due*, not from when a free
    connection sent it, so a stall shows up in the figures instead of
    silently slowing the sender down (no coordinated omission). Returns
    (latencies in s, status counts, achieved rate).
    """
    pool: asyncio.Queue = asyncio.Queue()
    for _ in range(connections):
        pool.put_nowait(await asyncio.open_connection(host, port))
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    loop = asyncio.get_running_loop()

    async def one(due: float) -> None:
        reader, writer = await pool.get()
        try:
            writer.write(request)
            status = await _read_response(reader)
        finally:
            pool.put_nowait((reader, writer))
        latencies.append(loop.time() - due)
        statuses[status] = statuses.get(status, 0) + 1

    total = int(rate_per_s * duration_s)
    tasks = []
    t0 = loop.time() + 0.05
    for i in range(total):
        due = t0 + i / rate_per_s
        delay = due - loop.time()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(one(due)))
    await asyncio.gather(*tasks)
    elapsed = loop.time() - t0
    while not pool.empty():
        _, writer = pool.get_nowait()
        writer.close()
    return latencies, statuses, total / elapsed
