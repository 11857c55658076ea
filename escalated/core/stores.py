"""Which store the settings name. The one place outside the store that
knows an implementation exists; everything else sees ``store.base.Store``.

Besides opening one: migrating a database without serving it (``escalated
migrate``), and the lock that keeps a SQLite file to one server.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from escalated.core.settings import PostgresUrl, Settings
from escalated.errors import ConfigError
from escalated.store.base import Store
# Re-exported for ``serve``, which may not import the store.
from escalated.store.sqlite.serverlock import ServerLock as ServerLock
from escalated.store.sqlite import SqliteStore

NEEDS_DRIVER = "PostgreSQL needs the driver: pip install 'escalated[postgres]'"


def postgres_driver() -> ModuleType:
    """The ``psycopg`` module, once the whole ``postgres`` extra imports (the
    driver and its pool: an install may have one without the other), else
    ConfigError naming the extra: one line, not a traceback."""
    try:
        import psycopg
        import psycopg_pool  # noqa: F401
    except ImportError:
        raise ConfigError(NEEDS_DRIVER) from None
    return psycopg


async def open_store(settings: Settings) -> Store:
    if isinstance(settings.db_path, PostgresUrl):
        from escalated.store.postgres.store import PostgresStore  # needs the optional driver

        return await PostgresStore.open(settings.db_path.url, durability=settings.durability)
    return await SqliteStore.open(settings.db_path, durability=settings.durability)


def migrate(target: Path | PostgresUrl) -> list[str]:
    """Bring the schema up to date; the migration names applied now. Blocking
    (run before serving); on PostgreSQL, replicas starting together apply
    each migration once."""
    if isinstance(target, PostgresUrl):
        from escalated.store.postgres.migrate import migrate as migrate_postgres  # needs the optional driver

        return migrate_postgres(target.url)
    from escalated.store.sqlite import db

    conn = db.connect(target, migrated=False)
    try:
        return db.migrate(conn)
    finally:
        conn.close()
