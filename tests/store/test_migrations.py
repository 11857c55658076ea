"""Migrations as numbered .sql files (escalated/store/sql/migrations/<dialect>/).

- A fresh database's migrated schema equals the snapshot beside this file
  (tests/store/schema/<dialect>.sql), as procrastinate tests its own: a
  migration that changes the schema changes the snapshot in the same
  commit, where review sees it. ``ESCALATED_WRITE_SCHEMA=1`` rewrites the
  snapshots from a fresh database.
- A database migrated by the Python lists the files replaced (a frozen copy
  in tests/store/legacy/) needs only the files written after them and keeps
  working, and has the schema a fresh one gets.
"""

from __future__ import annotations

import os
import re
import sqlite3
from pathlib import Path

import pytest

from escalated.domain.ids import new_id
from escalated.domain.models import DEFAULT_WORKSPACE
from escalated.domain.records import ListQuery
from escalated.store import migrations, queries
from escalated.store.sqlite.db import connect
from escalated.timeutil import now_ms
from tests.store import make
from tests.store.legacy import postgres_schema as legacy_postgres
from tests.store.legacy import sqlite_schema as legacy_sqlite

SNAPSHOTS = Path(__file__).parent / "schema"


def _one_line(sql: str) -> str:
    return re.sub(r"\s+", " ", sql).replace("( ", "(").replace(" )", ")").strip()


def sqlite_schema(conn: sqlite3.Connection) -> str:
    """Every table and index as SQLite stores its CREATE statement, one a line."""
    rows = conn.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY tbl_name, type DESC, name")
    return "".join(f"{_one_line(sql)};\n" for (sql,) in rows)


def postgres_schema(conn) -> str:
    """Each table's columns (type, nullability, default, identity), its
    constraints and its indexes, from the catalogs (pg_dump's text changes
    between PostgreSQL releases; these do not)."""
    out = []
    tables = [t for (t,) in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1")]
    for table in tables:
        columns = conn.execute(
            "SELECT column_name, data_type, is_nullable, column_default, is_identity FROM information_schema.columns"
            " WHERE table_schema = 'public' AND table_name = %s ORDER BY ordinal_position",
            (table,),
        ).fetchall()
        parts = [
            f"{name} {kind}{' NOT NULL' if nullable == 'NO' else ''}"
            f"{f' DEFAULT {default}' if default else ''}{' IDENTITY' if identity == 'YES' else ''}"
            for name, kind, nullable, default, identity in columns
        ]
        parts += [
            f"CONSTRAINT {name} {definition}"
            for name, definition in conn.execute(
                "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = %s::regclass ORDER BY 1",
                (table,),
            )
        ]
        out.append(f"CREATE TABLE {table} ({', '.join(parts)});\n")
        indexes = conn.execute("SELECT indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename = %s ORDER BY indexname", (table,))
        out += [f"{_one_line(d).replace('public.', '')};\n" for (d,) in indexes]
    return "".join(out)


def _against_snapshot(dialect: str, schema: str) -> None:
    path = SNAPSHOTS / f"{dialect}.sql"
    if os.environ.get("ESCALATED_WRITE_SCHEMA") == "1":
        path.write_text(schema)
    assert schema == path.read_text(), f"the migrated {dialect} schema differs from {path.name}"


# -- the files themselves ------------------------------------------------------


@pytest.mark.parametrize("dialect", ["sqlite", "postgres"])
def test_the_files_keep_the_names_the_python_lists_recorded(dialect):
    legacy = _legacy(dialect)
    names = [name for name, _ in migrations.load(dialect)]
    assert names[: len(legacy.MIGRATIONS)] == [name for name, _ in legacy.MIGRATIONS]


def _after_the_python_list(dialect: str) -> list[str]:
    """The files written after the Python lists were frozen: all a database
    they migrated still needs."""
    return [name for name, _ in migrations.load(dialect)][len(_legacy(dialect).MIGRATIONS) :]


def _legacy(dialect: str):
    """The frozen Python list of ``dialect``'s migrations."""
    return legacy_sqlite if dialect == "sqlite" else legacy_postgres


@pytest.mark.parametrize("dialect", ["sqlite", "postgres"])
def test_no_comment_holds_a_semicolon_since_sqlite_splits_statements_on_it(dialect):
    comments = [line for _, sql in migrations.load(dialect) for line in sql.splitlines() if "--" in line]
    assert comments and not [line for line in comments if ";" in line.split("--", 1)[1]]


def test_files_are_read_in_name_order_without_the_suffix(tmp_path):
    (tmp_path / "0002_second.sql").write_text("B;")
    (tmp_path / "0001_first.sql").write_text("A;")
    (tmp_path / "README").write_text("not a migration")
    assert migrations.read(tmp_path) == (("0001_first", "A;"), ("0002_second", "B;"))


@pytest.mark.parametrize("names", [["0001_a.sql", "0003_c.sql"], ["0002_b.sql"], ["0001_a.sql", "2_b.sql"], ["0001_A.sql"]])
def test_a_gap_or_a_misnamed_file_is_refused(tmp_path, names):
    for name in names:
        (tmp_path / name).write_text("SELECT 1;")
    with pytest.raises(ValueError, match="expected"):
        migrations.read(tmp_path)


# -- SQLite ----------------------------------------------------------------------


def _migrate_sqlite_like_before(path: Path) -> None:
    """What escalated/store/sqlite/db.py's migrate did with the Python list."""
    conn = sqlite3.connect(str(path), isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_ms INTEGER NOT NULL)")
    for name, sql in legacy_sqlite.MIGRATIONS:
        for statement in sql.split(";"):
            if statement.strip():
                conn.execute(statement)
        conn.execute("INSERT INTO migrations (name, applied_ms) VALUES (?, ?)", (name, now_ms()))
    conn.execute("INSERT INTO workspaces (id, name, created_ms) VALUES (?, ?, ?)", (new_id("wsp"), DEFAULT_WORKSPACE, 0))
    conn.execute("COMMIT")
    conn.close()


def test_a_fresh_sqlite_database_migrates_to_the_snapshot(tmp_path):
    conn = connect(tmp_path / "e.db")
    try:
        _against_snapshot("sqlite", sqlite_schema(conn))
    finally:
        conn.close()


def test_a_sqlite_database_migrated_by_the_python_list_needs_only_the_later_files_and_has_the_fresh_schema(tmp_path):
    _migrate_sqlite_like_before(tmp_path / "old.db")
    old = connect(tmp_path / "old.db", migrated=False)
    fresh = connect(tmp_path / "fresh.db")
    from escalated.store.sqlite.db import migrate

    try:
        assert migrate(old) == _after_the_python_list("sqlite")
        assert sqlite_schema(old) == sqlite_schema(fresh)
    finally:
        old.close()
        fresh.close()


async def test_a_sqlite_database_migrated_by_the_python_list_keeps_working(tmp_path):
    from escalated.store.sqlite import SqliteStore

    _migrate_sqlite_like_before(tmp_path / "old.db")
    store = await SqliteStore.open(tmp_path / "old.db")
    try:
        await _create_and_list(store)
    finally:
        await store.close()


async def test_sqlite_created_entries_written_before_0010_leave_the_history_once(tmp_path):
    """Before 0010 a create wrote its 'created' entry to escalation_events;
    from 0010 the history read takes it from the row, and the migration
    deletes the old rows, so an escalation made before reads as it did."""
    from escalated.store.sqlite import SqliteStore

    store = await SqliteStore.open(tmp_path / "e.db")
    try:
        ws = (await store.workspace_by_name(name=DEFAULT_WORKSPACE)).id
        esc = make.escalation(ws)
        await make.create(store, esc)
        await store.acknowledge(escalation_id=esc.id, by="user:ann", at_ms=1_500)
    finally:
        await store.close()
    conn = connect(tmp_path / "e.db", migrated=False)
    try:  # the database as a create before 0010 left it
        conn.execute(
            "INSERT INTO escalation_events (seq, escalation_id, event, by, at_ms) VALUES (0, ?, 'created', ?, ?)",
            (esc.id, esc.created_by, esc.created_ms),
        )
        conn.execute("DELETE FROM migrations WHERE name = '0010_created_in_the_row'")
    finally:
        conn.close()
    store = await SqliteStore.open(tmp_path / "e.db")
    try:
        got = await store.get_escalation(escalation_id=esc.id, workspace_id=None, routes=None)
    finally:
        await store.close()
    assert [(h.event, h.by, h.at_ms) for h in got.history] == [
        ("created", esc.created_by, esc.created_ms),
        ("acknowledged", "user:ann", 1_500),
    ]


async def _create_and_list(store) -> None:
    ws = (await store.workspace_by_name(name=DEFAULT_WORKSPACE)).id
    esc = make.escalation(ws)
    await make.create(store, esc)
    page, _ = await store.list_escalations(query=ListQuery(workspace_id=ws, routes=None))
    assert [e.id for e in page] == [esc.id]


# -- PostgreSQL ----------------------------------------------------------------------


def _migrate_postgres_like_before(url: str) -> None:
    """What escalated/store/postgres/migrate.py did with the Python list."""
    import psycopg

    q = queries.load("postgres")
    with psycopg.connect(url) as conn, conn.transaction():
        conn.execute(legacy_postgres.MIGRATIONS_TABLE)
        for name, sql in legacy_postgres.MIGRATIONS:
            conn.execute(sql)
            conn.execute(q["record_migration"], {"name": name, "applied_ms": now_ms()})
        conn.execute(q["ensure_workspace"], {"id": new_id("wsp"), "name": DEFAULT_WORKSPACE, "created_ms": now_ms()})


@pytest.fixture
def old_postgres_url(postgres_server):
    url = postgres_server.create_database(migrated=False)
    _migrate_postgres_like_before(url)
    yield url
    postgres_server.drop_database(url)


@pytest.mark.postgres
def test_a_fresh_postgres_database_migrates_to_the_snapshot(postgres_url):
    import psycopg

    with psycopg.connect(postgres_url) as conn:
        _against_snapshot("postgres", postgres_schema(conn))


@pytest.mark.postgres
def test_a_postgres_database_migrated_by_the_python_list_needs_only_the_later_files_and_has_the_fresh_schema(old_postgres_url, postgres_url):
    import psycopg

    from escalated.store.postgres.migrate import migrate

    assert migrate(old_postgres_url) == _after_the_python_list("postgres")
    with psycopg.connect(old_postgres_url) as old, psycopg.connect(postgres_url) as fresh:
        assert postgres_schema(old) == postgres_schema(fresh)


@pytest.mark.postgres
async def test_a_postgres_database_migrated_by_the_python_list_keeps_working(old_postgres_url):
    from escalated.store.postgres.store import PostgresStore

    store = await PostgresStore.open(old_postgres_url)
    try:
        await _create_and_list(store)
    finally:
        await store.close()
