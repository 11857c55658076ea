from __future__ import annotations

import os

import pytest

from tests.support.server import ServerProcess, start_server


@pytest.fixture
def server(tmp_path) -> ServerProcess:
    """A real ``escalated serve`` subprocess on a fresh database."""
    proc = start_server(tmp_path)
    yield proc
    proc.stop()


@pytest.fixture(scope="session")
def postgres_server():
    """A real PostgreSQL server for the session, with a migrated template database.

    Missing PostgreSQL (or the driver) skips on a developer's machine and
    fails in CI, where ``.ci/run`` installs it: those tests must run there.
    """
    from tests.support.postgres import PostgresMissing, PostgresServer

    try:
        import psycopg  # noqa: F401

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
