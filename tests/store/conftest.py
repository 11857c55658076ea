"""The store conformance suite's fixtures: one ``Store`` per test, on a
real SQLite file in tmp_path or a real PostgreSQL database (a copy of the
migrated template), so every test runs once per dialect: ``[sqlite]`` and
``[postgres]``. No HTTP server: the tests call the interface directly."""

from __future__ import annotations

import pytest

from escalated.store.base import Store


@pytest.fixture
async def store(request, fn_backend, tmp_path) -> Store:
    if fn_backend == "sqlite":
        from escalated.store.sqlite import SqliteStore

        opened: Store = await SqliteStore.open(tmp_path / "escalated.db")
        yield opened
        await opened.close()
        return
    from escalated.store.postgres.store import PostgresStore

    postgres = request.getfixturevalue("postgres_server")
    url = postgres.create_database()
    opened = await PostgresStore.open(url)
    try:
        yield opened
    finally:
        await opened.close()
        postgres.drop_database(url)


@pytest.fixture
async def ws(store) -> str:
    """The default workspace's id (every migrated database has it)."""
    return (await store.workspace_by_name(name="default")).id
