"""A real PostgreSQL server for the tests, started once per session.

Debian's ``initdb``/``pg_ctl`` (found on PATH or under
/usr/lib/postgresql/<version>/bin) run as the ``postgres`` user when the
tests run as root, since PostgreSQL refuses to run as root. The data and
socket directories live in a fresh directory under the system temp dir
(pytest's own tmp dirs are private to root, so the ``postgres`` user could
not reach them). It listens on 127.0.0.1 only, on a free port, with fsync
off: a crashed test server has nothing worth keeping.

One template database is migrated once; every test database is a
``CREATE DATABASE ... TEMPLATE`` copy of it (a file copy, far faster than
migrating again).

Each cluster's directory names its owner (``owner``: the pid and the start
time of the process that made it). ``pg_ctl`` daemonises the server, so a
pytest killed with SIGKILL leaves its cluster running; ``reap_orphans``, run
before a session starts its own, stops and removes every cluster whose owner
is gone, and leaves alone the ones of runs still going (another checkout's
suite on a shared machine) and any it cannot attribute.
"""

from __future__ import annotations

import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

TEMPLATE = "escalated_template"
_BINARIES = ("initdb", "pg_ctl")
_PREFIX = "escalated-pg-"
_OWNER = "owner"


class PostgresMissing(RuntimeError):
    """initdb/pg_ctl are not installed (``.ci/run`` installs them with apt)."""


def find_bindir() -> Path:
    """The directory holding initdb and pg_ctl: PATH first, then the newest Debian version."""
    on_path = [shutil.which(name) for name in _BINARIES]
    if all(on_path):
        return Path(on_path[0]).resolve().parent
    versions = sorted(
        (p for p in Path("/usr/lib/postgresql").glob("*/bin") if all((p / b).exists() for b in _BINARIES)),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
    )
    if not versions:
        raise PostgresMissing("initdb/pg_ctl not found on PATH or under /usr/lib/postgresql/*/bin")
    return versions[-1]


def _started_at(pid: int) -> str | None:
    """When process ``pid`` started (clock ticks since boot, /proc/PID/stat's
    22nd field), or None if there is no such process. With the pid it names one
    process for good: a pid reused later has another start time."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]  # the fields after the command's ")" start at the 3rd


def _owner_mark() -> str:
    return f"{os.getpid()} {_started_at(os.getpid())}"


def _owner_gone(root: Path) -> bool:
    """True only when ``root`` names its owner and that process has ended."""
    try:
        pid, started = (root / _OWNER).read_text().split()
    except (OSError, ValueError):
        return False  # no mark (being made right now, or by older code): not ours to judge
    return _started_at(int(pid)) != started


def reap_orphans(tmpdir: str | None = None) -> list[Path]:
    """Stop and remove the test clusters whose owning process has ended; which."""
    reaped = []
    for root in sorted(Path(tmpdir or tempfile.gettempdir()).glob(f"{_PREFIX}*")):
        if not root.is_dir() or not _owner_gone(root):
            continue
        if (root / "data" / "postmaster.pid").exists():
            try:
                PostgresServer(root).stop()
            except RuntimeError:
                pass  # not running after all (a stale postmaster.pid): the files go all the same
        shutil.rmtree(root, ignore_errors=True)
        reaped.append(root)
    return reaped


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class PostgresServer:
    """One PostgreSQL cluster in a temporary directory; ``url(db)`` to connect."""

    def __init__(self, root: Path | None = None) -> None:
        """A cluster in a new temporary directory, or the one already in ``root``
        (an orphan ``reap_orphans`` stops)."""
        self.bindir = find_bindir()
        if root is None:
            root = Path(tempfile.mkdtemp(prefix=_PREFIX))
            (root / _OWNER).write_text(_owner_mark())
        self.root = root
        self.data = self.root / "data"
        self.sockets = self.root / "sockets"
        self.port = 0
        self._as_postgres = os.geteuid() == 0
        self._names = itertools.count(1)

    def _run(self, *argv: str, timeout_s: float = 60.0) -> None:
        prefix = ("runuser", "-u", "postgres", "--") if self._as_postgres else ()
        proc = subprocess.run([*prefix, *argv], capture_output=True, text=True, timeout=timeout_s, cwd=self.root)
        if proc.returncode != 0:
            log = (self.root / "server.log").read_text() if (self.root / "server.log").exists() else ""
            raise RuntimeError(f"{' '.join(argv)} failed ({proc.returncode}): {proc.stderr}{proc.stdout}\n{log}")

    def start(self) -> PostgresServer:
        self.sockets.mkdir()
        if self._as_postgres:
            account = pwd.getpwnam("postgres")
            for path in (self.root, self.sockets):
                os.chown(path, account.pw_uid, account.pw_gid)
        self._run(
            str(self.bindir / "initdb"), "-D", str(self.data), "-U", "postgres", "-A", "trust",
            "-E", "UTF8", "--locale=C", "--no-sync",
        )  # fmt: skip
        for _ in range(3):  # the free port may be taken between probing and binding
            self.port = free_port()
            try:
                self._pg_ctl_start()
                return self
            except RuntimeError:
                if "could not bind" not in (self.root / "server.log").read_text():
                    raise
        raise RuntimeError("PostgreSQL could not bind a free port three times")

    def _pg_ctl_start(self) -> None:
        options = " ".join(
            [
                "-c listen_addresses=127.0.0.1",
                f"-c unix_socket_directories={self.sockets}",
                "-c fsync=off -c synchronous_commit=off -c full_page_writes=off",
                # Each test server opens a writer, a pool and a control connection.
                "-c max_connections=300 -c shared_buffers=32MB",
            ]
        )
        self._run(
            str(self.bindir / "pg_ctl"), "-D", str(self.data), "-l", str(self.root / "server.log"),
            "-o", f"{options} -p {self.port}", "-w", "-t", "60", "start",
        )  # fmt: skip

    def pause(self) -> None:
        """Stop the server as an operator's restart does (``-m fast``: sessions
        are terminated, nothing committed is lost); ``resume`` starts it again."""
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "-t", "60", "stop")

    def resume(self) -> None:
        """Start a paused server again, on the same port."""
        self._pg_ctl_start()

    def terminate_backends(self, url: str) -> int:
        """``pg_terminate_backend`` on every session of ``url``'s database, as a
        pooler restart or an idle reaper does; how many were terminated."""
        import psycopg

        name = url.rsplit("/", 1)[1]
        with psycopg.connect(self.url(), autocommit=True) as conn:
            rows = conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
                (name,),
            ).fetchall()
        return sum(1 for (done,) in rows if done)

    def stop(self) -> None:
        if self.data.exists():
            try:
                self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
            finally:
                shutil.rmtree(self.root, ignore_errors=True)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def execute(self, sql: str) -> None:
        """One statement outside a transaction (CREATE/DROP DATABASE need that)."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(sql)

    def create_template(self) -> None:
        """The template every test database copies: migrated once."""
        from escalated.store.postgres.migrate import migrate

        self.execute(f"CREATE DATABASE {TEMPLATE}")
        migrate(self.url(TEMPLATE))

    def create_database(self, *, migrated: bool = True) -> str:
        """A fresh database, migrated unless told not to; returns its URL."""
        name = f"test_{os.getpid()}_{next(self._names)}"
        self.execute(f"CREATE DATABASE {name} TEMPLATE {TEMPLATE if migrated else 'template0'}")
        return self.url(name)

    def drop_database(self, url: str) -> None:
        name = url.rsplit("/", 1)[1]
        self.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
