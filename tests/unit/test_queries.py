"""The SQLite store's named queries (escalated/store/sql/sqlite.sql): each
one is used by the store and each statement parses against the real schema."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

import escalated.store
from escalated.store import queries
from escalated.store.sqlite.db import connect

Q = queries.load("sqlite")
SQL_FILE = Path(escalated.store.__file__).parent / "sql" / "sqlite.sql"
STATEMENTS = sorted(re.findall(r"^-- name: ([a-z_]+)$", SQL_FILE.read_text(), flags=re.M))
# Clauses the store appends to a statement, and the statement they extend.
CLAUSES = {
    "get_escalation": ["in_workspace", "routed_to"],
    "list_escalations": ["with_status", "with_policy", "with_agent_id", "with_run_id", "before_id", "routed_to", "newest_first"],
}


@pytest.fixture(scope="module")
def conn(tmp_path_factory) -> sqlite3.Connection:
    return connect(tmp_path_factory.mktemp("queries") / "schema.db")


def _explain(conn: sqlite3.Connection, sql: str) -> None:
    named = re.findall(r"(?<![:\w]):([a-z_][a-z0-9_]*)", sql)
    conn.execute("EXPLAIN " + sql, dict.fromkeys(named))


@pytest.mark.parametrize("name", STATEMENTS)
def test_every_statement_parses_against_the_schema(conn, name):
    _explain(conn, Q[name])


@pytest.mark.parametrize("statement", sorted(CLAUSES))
def test_the_clauses_parse_appended_to_their_statement(conn, statement):
    _explain(conn, Q[statement] + "".join(Q[part] for part in CLAUSES[statement]))
    _explain(conn, Q["list_escalations"] + Q["after_id"] + Q["oldest_first"])


# The one store (store/*.py) names the statements of both dialects; each
# dialect's folder names those only it has.
@pytest.mark.parametrize("dialect, code", [("sqlite", ("sqlite/*.py", "*.py")), ("postgres", ("postgres/*.py", "*.py"))])
def test_every_block_is_used_by_the_store(dialect, code):
    store_dir = Path(escalated.store.__file__).parent
    source = "\n".join(p.read_text() for pattern in code for p in store_dir.glob(pattern))
    text = (SQL_FILE.parent / f"{dialect}.sql").read_text()
    unused = [name for name in queries.load(dialect) if f'"{name}"' not in source and f"{{{name}}}" not in text]
    assert not unused


@pytest.mark.parametrize("dialect, positional", [("sqlite", "?"), ("postgres", "%s")])
def test_every_parameter_is_named(dialect, positional):
    assert [name for name, sql in queries.load(dialect).items() if positional in sql] == []


def test_a_block_defined_twice_is_refused():
    with pytest.raises(ValueError, match="twice"):
        queries.parse("-- name: a\nSELECT 1\n-- name: a\nSELECT 2\n")


def test_named_parameters_are_spelled_for_psycopg_and_casts_are_left_alone():
    sql = "SELECT x::text, '10:30' FROM t WHERE id = :id AND route = ANY(:routes::text[]) AND id <> :id"
    assert queries.named(sql, "postgres") == (
        "SELECT x::text, '10:30' FROM t WHERE id = %(id)s AND route = ANY(%(routes)s::text[]) AND id <> %(id)s"
    )
    assert queries.named(sql, "sqlite") == sql


def test_a_statement_bound_by_position_takes_its_values_in_the_order_it_names_them():
    sql, values = queries.positional("INSERT INTO t (a, b, c) VALUES (:b, :a, :b)")
    assert sql == "INSERT INTO t (a, b, c) VALUES (?, ?, ?)"
    assert values({"a": 1, "b": 2, "extra": 3}) == (2, 1, 2)
    assert queries.positional("SELECT :only")[1]({"only": 1}) == (1,)
