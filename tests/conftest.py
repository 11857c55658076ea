"""Shared fixtures: the real PostgreSQL server, and the backend parameter.

The integration, security, fault and web suites run their servers on both
backends: a fixture that takes ``backend`` (module-scoped) or
``fn_backend`` (per test) is parametrized over ``sqlite`` and ``postgres``,
and the test ids say which (``test_x[sqlite]``, ``test_x[postgres]``).
``fresh_server`` is a ``serve`` of its own per test, for tests that stop or
kill it; a module shares one where its tests do not interfere.
``fresh_db`` gives such a server its database: a SQLite file in a temporary
directory, or a ``CREATE DATABASE ... TEMPLATE`` copy of the migrated
template (one per server, dropped afterwards). A test of something only
SQLite has (the ``<db>.serve.lock`` file, database-path errors, a full
disk, WAL) is marked ``only_on("sqlite", reason=...)`` or takes no backend
at all, and says why; its PostgreSQL twin, where the behaviour exists
there, is marked ``only_on("postgres", ...)``. docs/reliability.md lists
which suites run where.

The time budget (under about 6 minutes for the whole suite on 2 cores at
a load of about 1, on three pytest-xdist workers: docs/performance.md, "Test
suite") does not hold every test twice, so two deliberate choices run on
SQLite only: the browser tests (Chromium drives the same pages; the page
tests run on both) and the receiver-outage crash loop (the flaky-receiver loop runs on both;
``ESCALATED_FAULTS_LONG=1`` runs the outage loop on PostgreSQL too).
"""

from __future__ import annotations

import collections
import contextlib
import fnmatch
import os
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from tests.support.receiver import Receiver
from tests.support.server import ServerProcess

# The postgres param carries the ``postgres`` mark, so ``-m 'not postgres'``
# runs the SQLite half alone.
BACKENDS = (pytest.param("sqlite", id="sqlite"), pytest.param("postgres", id="postgres", marks=pytest.mark.postgres))


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto``: one and a half workers per core. About a third of the
    suite's time is waiting (on a server, a subprocess, PostgreSQL or the
    browser), so a third worker on two cores fills it. An explicit
    ``PYTEST_XDIST_AUTO_NUM_WORKERS`` still wins (None: xdist's default)."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, cores + cores // 2)


# The files that take longest, longest first (from ``--durations`` and
# per-worker timelines). Under ``--dist loadfile`` a file runs on one worker
# from start to end, and xdist hands out files in collection order
# (``--no-loadscope-reorder`` in pyproject.toml): a one-test file of 40 s
# handed out last is a last minute with two workers idle, which is where
# xdist's own order (most tests first) put every file here. So these start
# first and the many short files fill in around them. A name that matches
# no file fails tests/unit/test_suite_order.py.
LONG_FILES = (
    "tests/faults/test_replica_crash_loop.py",
    "tests/integration/test_zipapp.py",
    "tests/integration/test_schemathesis.py",
    "tests/faults/test_crash_loop.py",
    "tests/contracts/test_apply_golden.py",
    "tests/mcp/test_tools.py",
    "tests/tui/test_review.py",
    "tests/tui/test_reviewer_ops.py",
    "tests/postgres/test_replicas.py",
    "tests/web/test_secrets_shown.py",
    "tests/faults/test_database_outage.py",
    "tests/adapters/test_openai_agents.py",
    "tests/integration/test_apply_*.py",
    "tests/integration/test_reminders_levels.py",
    "tests/integration/test_callbacks.py",
    "tests/security/test_mcp_endpoint.py",
    "tests/integration/test_demo.py",
    "tests/security/test_slowloris.py",
    "tests/integration/test_mail_tls.py",
    "tests/integration/test_wait_default.py",  # one 30 s wait: started early, it overlaps the rest
)


def _long_rank(path: str) -> int:
    for rank, pattern in enumerate(LONG_FILES):
        if fnmatch.fnmatchcase(path, pattern):
            return rank
    return len(LONG_FILES)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Drop the other backend's runs of tests marked ``only_on(backend, reason=...)``:
    the behaviour they test exists on that backend alone (the reason says why).
    Then order the files: ``LONG_FILES`` first, the rest by number of tests
    (most first, as xdist would), each file's tests in their own order."""
    keep, drop = [], []
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        running = params.get("backend", params.get("fn_backend"))
        mark = item.get_closest_marker("only_on")
        (drop if mark and running and running != mark.args[0] else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
    files = collections.Counter(item.nodeid.split("::", 1)[0] for item in keep)
    items[:] = sorted(keep, key=lambda item: _file_order(item.nodeid.split("::", 1)[0], files))


def _file_order(path: str, files: Mapping[str, int]) -> tuple[int, int, str]:
    return (_long_rank(path), -files[path], path)


# The project's own sources that every worker and most test processes import: compiled once, before
# the workers start. With PYTHONDONTWRITEBYTECODE set (as on the machines that run the suite) no
# interpreter writes a .pyc, so each one compiled what it imported of escalated from source again:
# each test worker, each ``python -m escalated`` a test starts and each agent program forked by
# tests/support/prefork.py, about 0.1-0.3 s of CPU apiece. The .pyc files go where Python keeps
# them (``__pycache__``, ignored by git) and are rewritten only when a source is newer.
COMPILED = ("escalated", "examples", "tests/support")


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):  # a pytest-xdist worker: the controller compiled them already
        return
    import compileall

    root = Path(__file__).resolve().parents[1]
    for folder in COMPILED:
        compileall.compile_dir(root / folder, quiet=2)


# The fault suite's figures (tests/faults/conftest.py's ``record_figures``),
# collected from the test reports: in the process that prints the summary,
# which under pytest-xdist is not the one that ran the test.
_FIGURES_KEY = "escalated_fault_figures"
_FIGURES: list[list[str]] = []


def pytest_sessionfinish(session: pytest.Session) -> None:
    from tests.support import prefork

    prefork.stop()


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "call":
        _FIGURES.extend(lines for key, lines in report.user_properties if key == _FIGURES_KEY)


def pytest_terminal_summary(terminalreporter) -> None:
    if not _FIGURES:
        return
    long = os.environ.get("ESCALATED_FAULTS_LONG", "") not in ("", "0")
    terminalreporter.section("escalated fault figures" + (" (long)" if long else ""))
    for lines in _FIGURES:
        for line in lines:
            terminalreporter.write_line(line)


@pytest.fixture(scope="module", params=BACKENDS)
def backend(request) -> str:
    """``sqlite`` or ``postgres``: a module's servers run once on each."""
    return request.param


@pytest.fixture(params=BACKENDS)
def fn_backend(request) -> str:
    """``sqlite`` or ``postgres``, per test (for servers a test starts itself)."""
    return request.param


@contextlib.contextmanager
def fresh_db(request: pytest.FixtureRequest, backend: str, directory: Path) -> Iterator[Path | str]:
    """A new, empty database: a SQLite file path, or a migrated PostgreSQL URL."""
    if backend == "sqlite":
        yield directory / "escalated.db"
        return
    postgres = request.getfixturevalue("postgres_server")
    url = postgres.create_database()
    try:
        yield url
    finally:
        postgres.drop_database(url)


@pytest.fixture
def fresh_server(request, fn_backend, tmp_path) -> ServerProcess:
    """A real ``escalated serve`` subprocess on a fresh database of either backend."""
    with fresh_db(request, fn_backend, tmp_path) as db:
        proc = ServerProcess(db=db).start()
        yield proc
        proc.stop()


@pytest.fixture
async def receiver() -> Receiver:
    """The suite's receiver (tests/support/receiver.py), fresh for each test."""
    rcv = await Receiver().start()
    yield rcv
    await rcv.stop()


@pytest.fixture(scope="session")
def postgres_server():
    """A real PostgreSQL server for the session, with a migrated template database.

    Missing PostgreSQL (or the driver) skips on a developer's machine and
    fails in CI, where ``.ci/run`` installs it: those tests must run there.
    """
    from tests.support.postgres import PostgresMissing, PostgresServer, reap_orphans

    try:
        import psycopg  # noqa: F401

        reap_orphans()  # clusters of earlier runs that were killed before they could stop them
        server = PostgresServer()
    except (ImportError, PostgresMissing) as exc:
        if os.environ.get("CI"):
            pytest.fail(f"PostgreSQL is required in CI: {exc}")
        pytest.skip(f"PostgreSQL not available: {exc}")
    server.start()
    try:
        server.create_template()
        yield server
    finally:
        server.stop()


@pytest.fixture
def postgres_url(postgres_server) -> str:
    """A fresh, migrated database of its own, dropped after the test."""
    url = postgres_server.create_database()
    yield url
    postgres_server.drop_database(url)
