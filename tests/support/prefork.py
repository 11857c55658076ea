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

_LOCK = threading.Lock()
_ZYGOTE: dict[str, object] = {}


def _zygote_path() -> str:
    """Start this worker's zygote on first use; its socket path."""
    with _LOCK:
        if "path" in _ZYGOTE and _ZYGOTE["proc"].poll() is None:  # type: ignore[union-attr]
            return str(_ZYGOTE["path"])
        path = os.path.join(tempfile.mkdtemp(prefix="escalated-zygote-"), "s")
        proc = subprocess.Popen(
            [sys.executable, "-P", __file__, path],  # -P: not tests/support first on sys.path (its http.py)
            stdin=subprocess.PIPE,  # closed when this process ends: the zygote then exits
            stdout=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if line.strip() != "ready":
            proc.kill()
            proc.wait()
            raise AssertionError(f"the serve zygote did not start: {line!r}")
        proc.stdout.close()
        _ZYGOTE.update(path=path, proc=proc)
        atexit.register(stop)
        return path


def stop() -> None:
    """End this worker's zygote and reap it (at the session's end: its CPU, and its children's, counts
    towards the test run's, as a ``python -m escalated`` started here did)."""
    with _LOCK:
        proc = _ZYGOTE.pop("proc", None)
        path = _ZYGOTE.pop("path", None)
    if proc is not None:
        _stop_zygote(proc)  # type: ignore[arg-type]
    if path is not None:
        shutil.rmtree(os.path.dirname(str(path)), ignore_errors=True)


def _stop_zygote(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        assert proc.stdin is not None
        proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class ForkedServer:
    """What ``ServerProcess`` needs of ``subprocess.Popen``, for a child of the zygote."""

    def __init__(self, args: list[str], env: dict[str, str], *, max_open_files: int | None = None) -> None:
        read_end, write_end = os.pipe()
        self._conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            try:
                self._conn.connect(_zygote_path())
            except (FileNotFoundError, ConnectionRefusedError):  # its socket gone (a /tmp cleaner): a new one
                stop()
                self._conn.connect(_zygote_path())
            request = json.dumps({"args": args, "env": env, "cwd": os.getcwd(), "max_open_files": max_open_files})
            self._conn.sendmsg([request.encode() + b"\n"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [write_end]))])
        finally:
            os.close(write_end)  # the child holds it now: the pipe ends when the child does
        self._buffer = b""
        self.args = args
        self.pid: int = self._message()["pid"]
        self.returncode: int | None = None
        self.stdout = open(read_end, encoding="utf-8", errors="replace")  # noqa: SIM115 (closed by ServerProcess._reap)

    def _message(self, timeout_s: float | None = None) -> dict:
        while b"\n" not in self._buffer:
            ready, _, _ = select.select([self._conn], [], [], timeout_s)
            if not ready:
                raise subprocess.TimeoutExpired(self.args, timeout_s or 0)
            chunk = self._conn.recv(4096)
            if not chunk:
                raise AssertionError("the serve zygote went away")
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


def limit_open_files(soft: int) -> None:
    """This process's RLIMIT_NOFILE (soft), as ``ulimit -n`` would set it; both ways of starting a server use it."""
    import resource

    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


# The zygote ---------------------------------------------------------------------------------------


def _serve_forever(path: str) -> dict | None:
    """Fork a child per request; returns the request in the child, None when the test worker is gone."""
    import selectors

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
                pid = os.fork()
                if pid == 0:
                    # The child: nothing of the zygote's stays open but the output pipe it was sent.
                    selector.close()
                    listener.close()
                    conn.close()
                    for pidfd, (_, other) in children.items():
                        os.close(pidfd)
                        other.close()
                    request["fd"] = fds[0]
                    return request
                os.close(fds[0])
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
    """In the child: the standard streams, environment, directory and limits of ``python -m escalated``."""
    import time

    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(request["fd"], 1)
    os.dup2(request["fd"], 2)
    os.close(request["fd"])
    sys.stdout.reconfigure(line_buffering=True, write_through=True)  # PYTHONUNBUFFERED=1, as the tests set
    sys.stderr.reconfigure(line_buffering=True, write_through=True)
    os.environ.clear()
    os.environ.update(request["env"])
    time.tzset()
    os.chdir(request["cwd"])
    if request["max_open_files"]:
        limit_open_files(request["max_open_files"])
    sys.argv = ["escalated", *request["args"]]


if __name__ == "__main__":
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
    del order
    escalated.cli.main(prog_name="escalated")
