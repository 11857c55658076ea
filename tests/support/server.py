"""A real ``escalated serve`` subprocess on an ephemeral port, for tests.

Every suite that needs "the server" uses this: it runs the real CLI against
a SQLite file in ``tmp_path`` or a PostgreSQL URL (tests/conftest.py's
``fresh_db``), so nothing of ours is mocked.
"""

from __future__ import annotations

import functools
import os
import re
import signal
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path

import attrs

from tests.support.prefork import ForkedServer, forks, limit_open_files

_LISTEN = re.compile(r"Listening on (http://\S+)")
_BOOTSTRAP = re.compile(r"(ain_live_\w+)")


_ONE_AT_A_TIME = threading.Lock()


def cli(db: Path | str, *args: str, input: str | None = None, check: bool = True) -> str:
    """Run ``escalated <args> --db <db>`` and return its stdout (stripped).

    In this process, through click's test runner: the same command, options,
    database and output as ``python -m escalated`` without a Python start-up
    and import per call (about 0.4 s of CPU each, and the suite makes
    hundreds). A command that starts an event loop of its own runs in a
    thread, so an async test can call it too. Tests of the command as a
    process (its exit status, signals, what the shell sees) start it with
    ``subprocess`` themselves (test_cli_*.py, test_migrate.py). The runner
    swaps the process's standard streams and environment while a command
    runs, so commands run one at a time (``_ONE_AT_A_TIME``), also when a
    test calls ``cli`` from several threads.
    """
    result: list = []

    def run() -> None:
        with _ONE_AT_A_TIME:
            result.append(_invoke(db, args, input))

    thread = threading.Thread(target=run, name="escalated-cli")
    thread.start()
    thread.join(timeout=120)
    assert result, f"escalated {' '.join(args)} did not finish in 120 s"
    code, out, err = result[0]
    if check and code != 0:
        raise AssertionError(f"escalated {' '.join(args)} failed ({code}): {err}")
    return out.strip()


def _invoke(db: Path | str, args: tuple[str, ...], input: str | None) -> tuple[int, str, str]:
    from click.testing import CliRunner

    from escalated.cli import main

    result = CliRunner().invoke(main, list(args), input=input, env={"ESCALATED_DB": str(db)}, prog_name="escalated")
    err = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        # What the process would have printed: the traceback, exit status 1.
        err += "".join(traceback.format_exception(result.exception))
    return result.exit_code, result.stdout, err


@attrs.define
class ServerProcess:
    db: Path | str  # a SQLite file, or a postgresql:// URL (what --db takes)
    args: tuple[str, ...] = ()
    url: str = ""
    bootstrap_key: str | None = None
    output: list[str] = attrs.field(factory=list)
    max_open_files: int | None = None  # the server's RLIMIT_NOFILE (soft), as `ulimit -n` would set it
    env: dict[str, str] = attrs.field(factory=dict)  # more environment for the server (secrets kept off its command line)
    _proc: subprocess.Popen | ForkedServer | None = None
    _pump: object = None

    def start(self, *, timeout_s: float = 60.0) -> ServerProcess:
        """Start it and wait until it listens. The bound covers a loaded 2-core machine (20 s ran out
        there with the bootstrap key already printed); a passing start waits only as long as it takes."""
        env = {**os.environ, "ESCALATED_DB": str(self.db), "PYTHONUNBUFFERED": "1", **self.env}
        if forks(env):
            # The same command in a process of its own, forked from one that imported the server already
            # (tests/support/prefork.py): about 0.5 s of CPU less per start.
            self._proc = ForkedServer(["serve", "--port", "0", *self.args], env, max_open_files=self.max_open_files)
        else:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "escalated", "serve", "--port", "0", *self.args],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                preexec_fn=functools.partial(limit_open_files, self.max_open_files) if self.max_open_files else None,
            )
        deadline = time.monotonic() + timeout_s
        assert self._proc.stdout is not None
        while time.monotonic() < deadline:
            line = self._proc.stdout.readline()
            if not line:
                self._proc.wait()
                self._proc.stdout.close()
                raise AssertionError("server exited early:\n" + "".join(self.output))
            self.output.append(line)
            if m := _BOOTSTRAP.search(line):
                self.bootstrap_key = m.group(1)
            if m := _LISTEN.search(line):
                self.url = m.group(1)
                self._drain_in_background()
                return self
        # Not started: stop it and close its pipe here, or the still-running process and the open pipe
        # surface as an unraisable warning in whichever test this worker runs next.
        self._proc.kill()
        self._proc.wait()
        self._proc.stdout.close()
        raise AssertionError(f"server did not start in {timeout_s:.0f} s:\n" + "".join(self.output))

    def _drain_in_background(self) -> None:
        import threading

        proc = self._proc

        def pump() -> None:
            assert proc is not None and proc.stdout is not None
            for line in proc.stdout:
                self.output.append(line)

        self._pump = threading.Thread(target=pump, daemon=True)
        self._pump.start()

    def _reap(self) -> None:
        """After exit: finish reading the output and close the pipe."""
        if self._pump is not None:
            self._pump.join(timeout=5)
            self._pump = None
        if self._proc is not None and self._proc.stdout is not None:
            self._proc.stdout.close()

    def cli(self, *args: str, check: bool = True) -> str:
        return cli(self.db, *args, check=check)

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @property
    def pid(self) -> int:
        assert self._proc is not None
        return self._proc.pid

    def wait_exit(self, *, timeout_s: float = 30.0) -> int:
        """The exit status of a server that stops by itself."""
        assert self._proc is not None
        code = self._proc.wait(timeout=timeout_s)
        self._reap()
        return code

    def stop(self) -> None:
        if self._proc and self._proc.poll() is None:
            self._proc.send_signal(signal.SIGTERM)
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        self._reap()

    def kill(self) -> None:
        """SIGKILL: no shutdown code runs, as in a crash."""
        if self._proc and self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()
        self._reap()

    def restart(self) -> ServerProcess:
        self.stop()
        self.output.clear()
        return self.start()


def start_server(tmp_path: Path, *args: str) -> ServerProcess:
    return ServerProcess(db=tmp_path / "escalated.db", args=tuple(args)).start()
