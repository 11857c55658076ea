"""``escalated serve`` processes forked from an interpreter that has already imported the server.

A server started with ``python -m escalated serve`` spends most of its start-up
CPU (about 0.6 s of 0.65 s) importing: the suite starts about 240 of them.
Each test worker starts this module once as a process of its own (a
"zygote": one thread, no event loop, nothing opened), which imports the CLI
and the server, then forks one child per requested server. The child is a
real process of its own (its pid, its signals, its exit status, its output
through a pipe the test reads), with the test's environment, working
directory and arguments, and runs the same code as ``python -m escalated``:
``escalated.cli.main`` with ``prog_name="escalated"``, then the interpreter's
normal exit. Only the imports were done before the fork.

Protocol (a Unix socket per request): the test sends one JSON line with
``args``, ``env``, ``cwd`` and ``max_open_files``, and the write end of its
output pipe as an ``SCM_RIGHTS`` file descriptor; the zygote answers
``{"pid": N}``, and later ``{"status": S}`` (as ``Popen.returncode``: the
exit code, or minus the signal) once the child exited.

``ForkedServer`` is the ``subprocess.Popen`` subset ``ServerProcess`` uses.
``ESCALATED_TEST_EXEC=1`` in the environment makes ``ServerProcess`` start
``python -m escalated serve`` instead, as before (tests of the command as a
process start it with ``subprocess`` themselves).

Agent programs (``python shop.py``, ``python -m examples.x.run``) are forked
the same way by ``python()``, from a zygote that imported only the agent
framework the program uses (the Agents SDK alone is about 3.5 s of CPU per
fresh interpreter). Nothing of escalated is imported there (the zygote
checks), so everything of ours, the guard's process-wide run id included, is
made in each child as in a fresh interpreter; the child gets ``sys.argv``,
``sys.path`` (the script's folder or the working directory, then
``PYTHONPATH``), the environment, working directory and separate stdout and
stderr pipes of that command line, and runs it as ``__main__`` (``runpy``),
exiting as the interpreter does (an uncaught exception: its traceback and
status 1). A zygote is kept per framework and environment (the variables in
``PER_RUN`` aside, which only the program reads), at most two at a time.
"""

from __future__ import annotations

import array
import atexit
import json
import os
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

_LOCK = threading.Lock()
_SERVE = ("serve",)
_ZYGOTES: dict[tuple, tuple[str, subprocess.Popen]] = {}  # key -> (socket path, process), oldest first
_AGENT_ZYGOTES_KEPT = 2
# What changes from one run of an agent program to the next and no framework reads at its import:
# a zygote is shared across them (PYTHONPATH is the child's sys.path, made there; pytest sets
# PYTEST_CURRENT_TEST per test).
PER_RUN = frozenset(
    {"ESCALATED_URL", "ESCALATED_API_KEY", "ESCALATED_RUN_ID", "REFUND_LEDGER", "PYTHONPATH", "PYTHONUNBUFFERED", "PYTEST_CURRENT_TEST"}
)


def _zygote_path(key: tuple, env: dict[str, str] | None = None) -> str:
    """Start the zygote for ``key`` on first use (``env``: its environment, None: this process's); its socket path."""
    with _LOCK:
        if key in _ZYGOTES and _ZYGOTES[key][1].poll() is None:
            _ZYGOTES[key] = _ZYGOTES.pop(key)  # the most recently used last
            return _ZYGOTES[key][0]
        if key in _ZYGOTES:
            _retire(*_ZYGOTES.pop(key))
        if key != _SERVE:  # an agent framework's zygote: the least recently used go
            agents = [other for other in _ZYGOTES if other != _SERVE]
            for other in agents[: max(0, len(agents) + 1 - _AGENT_ZYGOTES_KEPT)]:
                _retire(*_ZYGOTES.pop(other))
        if not _ZYGOTES:
            atexit.register(stop)
        path = os.path.join(tempfile.mkdtemp(prefix="escalated-zygote-"), "s")
        proc = subprocess.Popen(
            [sys.executable, "-P", __file__, path, *key],  # -P: not tests/support first on sys.path (its http.py)
            stdin=subprocess.PIPE,  # closed when this process ends: the zygote then exits
            stdout=subprocess.PIPE,
            env=env,
            text=True,
        )
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if line.strip() != "ready":
            proc.kill()
            proc.communicate()
            shutil.rmtree(os.path.dirname(path), ignore_errors=True)
            raise AssertionError(f"the zygote {key[:1] + key[2:]} did not start: {line!r}")
        proc.stdout.close()
        _ZYGOTES[key] = (path, proc)
        return path


def stop() -> None:
    """End this worker's zygotes and reap them (at the session's end: their CPU, and their children's, counts
    towards the test run's, as a ``python -m escalated`` started here did)."""
    with _LOCK:
        zygotes = list(_ZYGOTES.values())
        _ZYGOTES.clear()
    for path, proc in zygotes:
        _retire(path, proc)


def _retire(path: str, proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        assert proc.stdin is not None
        proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    shutil.rmtree(os.path.dirname(path), ignore_errors=True)


class _Forked:
    """What tests use of ``subprocess.Popen``, for a child of a zygote."""

    def __init__(self, key: tuple, request: dict, outputs: list[int], zygote_env: dict[str, str] | None = None) -> None:
        self._conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            try:
                self._conn.connect(_zygote_path(key, zygote_env))
            except (FileNotFoundError, ConnectionRefusedError):  # its socket gone (a /tmp cleaner): a new one
                with _LOCK:
                    gone = _ZYGOTES.pop(key, None)
                if gone:
                    _retire(*gone)
                self._conn.connect(_zygote_path(key, zygote_env))
            message = json.dumps({**request, "cwd": request.get("cwd") or os.getcwd()}).encode() + b"\n"
            self._conn.sendmsg([message], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", outputs))])
        except BaseException:
            self._conn.close()
            raise
        finally:
            for fd in outputs:
                os.close(fd)  # the child holds them now: each pipe ends when the child does
        self._buffer = b""
        self.pid: int = self._message()["pid"]
        self.returncode: int | None = None

    def _message(self, timeout_s: float | None = None) -> dict:
        while b"\n" not in self._buffer:
            ready, _, _ = select.select([self._conn], [], [], timeout_s)
            if not ready:
                raise subprocess.TimeoutExpired(self.args, timeout_s or 0)
            chunk = self._conn.recv(4096)
            if not chunk:
                raise AssertionError("the zygote went away")
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return json.loads(line)

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                self._status(0)
            except subprocess.TimeoutExpired:
                pass
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            self._status(timeout)
        assert self.returncode is not None
        return self.returncode

    def _status(self, timeout_s: float | None) -> None:
        self.returncode = self._message(timeout_s)["status"]
        self._conn.close()

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:  # reaped children are not signalled (their pid may be another's)
            os.kill(self.pid, sig)

    def terminate(self) -> None:
        import signal

        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        import signal

        self.send_signal(signal.SIGKILL)


class ForkedServer(_Forked):
    """``escalated <args>`` (a serve), its stdout and stderr in one pipe, ``stdout``."""

    def __init__(self, args: list[str], env: dict[str, str], *, max_open_files: int | None = None) -> None:
        self.args = args
        read_end, write_end = os.pipe()
        try:
            super().__init__(_SERVE, {"args": args, "env": env, "max_open_files": max_open_files}, [write_end])
        except BaseException:
            os.close(read_end)
            raise
        self.stdout = open(read_end, encoding="utf-8", errors="replace")  # noqa: SIM115 (closed by ServerProcess._reap)


class ForkedPython(_Forked):
    """``python <argv>`` forked from a zygote that imported ``preload``; stdout and stderr through
    pipes of their own, read by ``communicate()`` (text, as ``Popen(..., text=True)``)."""

    def __init__(self, argv: list[str], *, cwd: str, env: dict[str, str], preload: tuple[str, ...]) -> None:
        self.args = [sys.executable, *argv]
        pipes = [os.pipe(), os.pipe()]
        zygote_env = {name: value for name, value in env.items() if name not in PER_RUN}
        key = ("python", json.dumps(sorted(zygote_env.items())), *preload)
        try:
            super().__init__(key, {"argv": argv, "env": env, "cwd": cwd}, [write for _, write in pipes], zygote_env)
        except BaseException:
            for read, _ in pipes:
                os.close(read)
            raise
        self._open = [read for read, _ in pipes]
        self._read: dict[int, list[bytes]] = {read: [] for read in self._open}

    def communicate(self, timeout: float | None = None) -> tuple[str, str]:
        """Both outputs once the child closed them, then its exit status; ``TimeoutExpired`` past
        ``timeout`` (what was read is kept for the next call, as ``Popen.communicate`` does)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while self._open:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select(self._open, [], [], left)
            if not ready:
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
            for fd in ready:
                chunk = os.read(fd, 1 << 16)
                if chunk:
                    self._read[fd].append(chunk)
                else:
                    os.close(fd)
                    self._open.remove(fd)
        self.wait(None if deadline is None else max(0.0, deadline - time.monotonic()))
        out, err = (b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n") for chunks in self._read.values())
        return out, err


def python(argv: list[str], *, cwd: str | os.PathLike, env: dict[str, str], preload: tuple[str, ...]) -> ForkedPython | subprocess.Popen:
    """``python <argv>`` (a script and its arguments, or ``-m module ...``) in ``cwd`` with ``env``,
    forked from a zygote that imported ``preload`` (third-party modules only: the agent framework);
    stdout and stderr piped, as text. Started as a fresh interpreter instead where forking is off
    (``ESCALATED_TEST_EXEC=1``, not Linux) or ``env`` changes what an interpreter reads at its start."""
    if not forks(env, handled=PER_RUN):
        return subprocess.Popen(
            [sys.executable, *argv], cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
    return ForkedPython(argv, cwd=os.fspath(cwd), env=env, preload=preload)


def forks(env: dict[str, str], *, handled: frozenset[str] = frozenset({"PYTHONUNBUFFERED"})) -> bool:
    """Fork unless asked not to, or unless ``env`` changes what an interpreter reads at its start
    (PYTHON* variables other than those the child applies itself), which a forked child would not re-read."""
    if os.environ.get("ESCALATED_TEST_EXEC") == "1" or not hasattr(os, "pidfd_open"):  # pidfds: Linux
        return False
    names = {name for name in {*env, *os.environ} if name.startswith("PYTHON") and name not in handled}
    return all(env.get(name) == os.environ.get(name) for name in names)


def limit_open_files(soft: int) -> None:
    """This process's RLIMIT_NOFILE (soft), as ``ulimit -n`` would set it; both ways of starting a server use it."""
    import resource

    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


# The zygote ---------------------------------------------------------------------------------------


def _serve_forever(path: str) -> dict | None:
    """Fork a child per request; returns the request in the child, None when the test worker is gone."""
    import selectors

    import gc

    # What the zygote imported is never collected in a child: out of the collector's sight, a child's
    # collections (and its exit) neither walk it nor copy its pages (0.55 s -> 0.13 s for a
    # child of the Agents SDK's zygote that prints a line).
    gc.freeze()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "accept")
    selector.register(sys.stdin, selectors.EVENT_READ, "stdin")
    children: dict[int, tuple[int, socket.socket]] = {}  # pidfd -> (pid, the requester's connection)
    print("ready", flush=True)
    while True:
        for key, _ in selector.select():
            if key.data == "stdin":
                if not os.read(sys.stdin.fileno(), 4096):
                    return None
            elif key.data == "accept":
                conn, _ = listener.accept()
                request, fds = _receive(conn)
                assert threading.active_count() == 1, "the zygote must stay single-threaded to fork"
                sys.stdout.flush()
                sys.stderr.flush()
                pid = os.fork()
                if pid == 0:
                    # The child: nothing of the zygote's stays open but the output pipes it was sent.
                    selector.close()
                    listener.close()
                    conn.close()
                    for pidfd, (_, other) in children.items():
                        os.close(pidfd)
                        other.close()
                    request["fds"] = fds
                    return request
                for fd in fds:
                    os.close(fd)
                pidfd = os.pidfd_open(pid)
                children[pidfd] = (pid, conn)
                selector.register(pidfd, selectors.EVENT_READ, "child")
                conn.sendall(json.dumps({"pid": pid}).encode() + b"\n")
            else:
                pidfd = key.fd
                selector.unregister(pidfd)
                pid, conn = children.pop(pidfd)
                _, raw = os.waitpid(pid, 0)
                os.close(pidfd)
                try:
                    conn.sendall(json.dumps({"status": os.waitstatus_to_exitcode(raw)}).encode() + b"\n")
                except OSError:
                    pass  # the test gave up on it
                conn.close()


def _receive(conn: socket.socket) -> tuple[dict, list[int]]:
    data, fds = b"", []
    while not data.endswith(b"\n"):
        chunk, ancdata, _, _ = conn.recvmsg(1 << 16, socket.CMSG_SPACE(4 * 4))
        if not chunk:
            raise EOFError("request cut short")
        data += chunk
        for level, kind, payload in ancdata:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.extend(array.array("i", payload[: len(payload) - len(payload) % 4]))
    return json.loads(data), fds


def _become(request: dict) -> None:
    """In the child: the standard streams, environment, directory and limits of the command."""
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    stdout, stderr = (request["fds"] * 2)[:2]  # one pipe: both streams in it
    os.dup2(stdout, 1)
    os.dup2(stderr, 2)
    for fd in set(request["fds"]):
        os.close(fd)
    os.environ.clear()
    os.environ.update(request["env"])
    if os.environ.get("PYTHONUNBUFFERED"):  # the tests set it for a serve
        sys.stdout.reconfigure(line_buffering=True, write_through=True)
        sys.stderr.reconfigure(line_buffering=True, write_through=True)
    time.tzset()
    os.chdir(request["cwd"])
    if request.get("max_open_files"):
        limit_open_files(request["max_open_files"])


def _run_python(argv: list[str]) -> None:
    """In the child: ``python <argv>`` from here on, as ``__main__``."""
    import importlib
    import runpy

    base = list(sys.path)  # the zygote's: started with -P and without PYTHONPATH, so the interpreter's own
    extra = [entry for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep) if entry]
    if argv[0] == "-m":
        sys.path[:] = [os.getcwd(), *extra, *base]
        sys.argv = ["-m", *argv[2:]]  # run_module puts the module's file first, as -m does
        importlib.invalidate_caches()
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.path[:] = [os.path.dirname(os.path.abspath(argv[0])), *extra, *base]
        sys.argv = list(argv)
        importlib.invalidate_caches()
        runpy.run_path(argv[0], run_name="__main__")


def _serve_zygote() -> None:
    # What a serve start imports, on either backend; imported once here, inherited by every child.
    import escalated.cli
    import escalated.commands.migrate
    import escalated.commands.serve
    import escalated.http.appkeys
    import escalated.http.connections
    import escalated.http.lifecycle
    import escalated.server

    try:
        import escalated.store.postgres
    except ImportError:
        pass
    order = _serve_forever(sys.argv[1])
    if order is None:
        sys.exit(0)
    _become(order)
    sys.argv = ["escalated", *order["args"]]
    del order
    escalated.cli.main(prog_name="escalated")


def _python_zygote(preload: list[str]) -> None:
    import importlib

    for name in preload:
        importlib.import_module(name)
    ours = sorted(name for name in sys.modules if name.split(".")[0] in ("escalated", "examples", "tests"))
    if ours:  # each child must import these itself, as a fresh interpreter: the guard's run id, for one
        print(f"the zygote imported {ours[:5]} of the project: preload third-party modules only", flush=True)
        sys.exit(1)
    order = _serve_forever(sys.argv[1])
    if order is None:
        sys.exit(0)
    _become(order)
    argv = order["argv"]
    del order
    _run_python(argv)


if __name__ == "__main__":
    if sys.argv[2:3] == ["serve"]:
        _serve_zygote()
    else:
        _python_zygote(sys.argv[4:])  # python, its environment (in the key), the modules to preload
