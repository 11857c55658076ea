"""Migrations: one ordered folder of .sql files per dialect with the same
names, the same tables and columns, applied once however many replicas start together, and
``escalated migrate --db PATH|URL`` through the real CLI."""

from __future__ import annotations

import subprocess
import sys
import threading

import psycopg
import pytest

from escalated.store import migrations
from escalated.store.sqlite.db import connect
from escalated.store.postgres.migrate import migrate
from tests.support.postgres import free_port
from tests.support.server import cli

# What a fresh database gets, as the command prints it.
NAMES = [n for n, _ in migrations.load("sqlite")]
ALL_APPLIED = ", ".join(NAMES)

pytestmark = pytest.mark.postgres


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "escalated", *args], capture_output=True, text=True, timeout=60)


def sqlite_columns(path) -> dict[str, set[str]]:
    conn = connect(path)
    try:
        tables = [name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {t: {row[1] for row in conn.execute(f"PRAGMA table_info({t})")} for t in tables}
    finally:
        conn.close()


def postgres_columns(url: str) -> dict[str, set[str]]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public'"
        ).fetchall()
    columns: dict[str, set[str]] = {}
    for table, column in rows:
        columns.setdefault(table, set()).add(column)
    return columns


def test_both_dialects_list_the_same_migration_names_in_the_same_order():
    assert [n for n, _ in migrations.load("postgres")] == NAMES


def test_both_dialects_have_the_same_tables_and_columns(tmp_path, postgres_url):
    assert postgres_columns(postgres_url) == sqlite_columns(tmp_path / "e.db")


def test_both_dialects_record_the_same_applied_migrations(tmp_path, postgres_url):
    conn = connect(tmp_path / "e.db")
    sqlite_names = [n for (n,) in conn.execute("SELECT name FROM migrations ORDER BY name")]
    conn.close()
    with psycopg.connect(postgres_url) as pg:
        postgres_names = [n for (n,) in pg.execute("SELECT name FROM migrations ORDER BY name")]
    assert postgres_names == sqlite_names == NAMES


def test_replicas_migrating_together_apply_the_list_once_and_make_one_default_workspace(postgres_server):
    url = postgres_server.create_database(migrated=False)
    results: list[list[str]] = []
    errors: list[BaseException] = []
    start = threading.Barrier(6)

    def replica() -> None:
        start.wait()
        try:
            results.append(migrate(url))
        except BaseException as exc:  # reported below, not lost in the thread
            errors.append(exc)

    threads = [threading.Thread(target=replica) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors
    assert sorted(results) == [[]] * 5 + [NAMES]
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT count(*) FROM workspaces WHERE name = 'default'").fetchone() == (1,)
    postgres_server.drop_database(url)


def test_migrate_command_on_a_postgres_url_applies_the_list_then_reports_up_to_date(postgres_server):
    url = postgres_server.create_database(migrated=False)
    first = cli(url, "migrate")
    second = cli(url, "migrate")
    postgres_server.drop_database(url)
    assert first == f"Migrated {url}: applied {ALL_APPLIED}"
    assert second == f"{url} is up to date"


def test_migrate_command_on_a_sqlite_path_creates_the_file_and_applies_the_list(tmp_path):
    db = tmp_path / "new" / "e.db"
    assert cli(db, "migrate") == f"Migrated {db}: applied {ALL_APPLIED}"
    assert cli(db, "migrate") == f"{db} is up to date"
    assert "escalations" in sqlite_columns(db)


def test_migrate_command_never_prints_the_database_password(postgres_server):
    url = postgres_server.create_database(migrated=False)
    with_password = url.replace("postgres@", "postgres:hunter2-secret@")  # trust auth: accepted, unused
    output = cli(with_password, "migrate")
    postgres_server.drop_database(url)
    assert "hunter2-secret" not in output
    assert "postgres:***@" in output


def test_migrate_command_against_no_server_exits_1_naming_the_database_error():
    url = f"postgresql://postgres:hunter2-secret@127.0.0.1:{free_port()}/nothing?connect_timeout=5"
    proc = run_cli("migrate", "--db", url)
    assert proc.returncode == 1
    assert "database error:" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert "hunter2-secret" not in proc.stderr + proc.stdout


def test_the_root_group_db_option_takes_a_postgres_url_too(postgres_server):
    url = postgres_server.create_database(migrated=False)
    output = run_cli("--db", url, "migrate").stdout.strip()
    postgres_server.drop_database(url)
    assert output == f"Migrated {url}: applied {ALL_APPLIED}"
