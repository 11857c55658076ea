"""Which store the settings name. The one place outside the store that
knows an implementation exists; everything else sees ``store.base.Store``."""

from __future__ import annotations

from escalated.settings import PostgresUrl, Settings
from escalated.store.base import Store
from escalated.store.sqlite import SqliteStore


async def open_store(settings: Settings) -> Store:
    if isinstance(settings.db_path, PostgresUrl):
        from escalated.store.postgres.store import PostgresStore  # needs the optional driver

        return await PostgresStore.open(settings.db_path.url, durability=settings.durability)
    return await SqliteStore.open(settings.db_path, durability=settings.durability)
