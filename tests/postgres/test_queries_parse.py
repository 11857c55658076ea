"""The PostgreSQL store's named queries (escalated/store/sql/postgres.sql):
each statement, and each clause appended to its statement, is prepared by
the real server against the migrated schema (syntax, tables, columns and
parameter types checked; nothing runs). tests/unit/test_queries.py checks
that every block is used."""

from __future__ import annotations

import re
from pathlib import Path

import psycopg
import pytest

import escalated.store
from escalated.store import queries

pytestmark = pytest.mark.postgres

Q = queries.load("postgres")
SQL_FILE = Path(escalated.store.__file__).parent / "sql" / "postgres.sql"
STATEMENTS = sorted(re.findall(r"^-- name: ([a-z_]+)$", SQL_FILE.read_text(), flags=re.M))
# Clauses statements.py appends to a statement (as in tests/unit/test_queries.py).
CLAUSES = {
    "get_escalation": ["in_workspace", "routed_to"],
    "list_escalations": ["with_status", "with_policy", "with_agent_id", "with_run_id", "before_id", "routed_to", "newest_first"],
    "count_by_status": ["routed_to", "group_by_status"],
}
# A statement the store always finishes with a clause (PostgreSQL, unlike SQLite, refuses it unfinished).
FINISHED_BY = {"count_by_status": "group_by_status"}


@pytest.fixture(scope="module")
def conn(postgres_server):
    url = postgres_server.create_database()
    with psycopg.connect(url, autocommit=True) as connection:
        yield connection
    postgres_server.drop_database(url)


def test_statement_names_are_found():
    assert len(STATEMENTS) > 20


@pytest.mark.parametrize("name", STATEMENTS)
def test_every_statement_parses_against_the_schema(conn, name):
    _prepared(conn, Q[name] + (Q[FINISHED_BY[name]] if name in FINISHED_BY else ""))


@pytest.mark.parametrize("statement", sorted(CLAUSES))
def test_the_clauses_parse_appended_to_their_statement(conn, statement):
    _prepared(conn, Q[statement] + "".join(Q[part] for part in CLAUSES[statement]))
    _prepared(conn, Q["list_escalations"] + Q["after_id"] + Q["oldest_first"])


def _prepared(conn: psycopg.Connection, sql: str) -> None:
    """PREPARE with $n placeholders: the server parses and plans it, runs nothing."""
    numbered = sql
    for number, name in enumerate(dict.fromkeys(re.findall(r"%\(([a-z_0-9]+)\)s", sql)), start=1):
        numbered = numbered.replace(f"%({name})s", f"${number}")  # one number per name
    result = conn.pgconn.prepare(b"", numbered.encode())
    status = result.status
    assert status == psycopg.pq.ExecStatus.COMMAND_OK, result.error_message.decode()


def test_a_statement_naming_an_unknown_column_is_refused(conn):
    with pytest.raises(AssertionError, match="no_such_column"):
        _prepared(conn, "SELECT no_such_column FROM escalations WHERE id = %(id)s")
