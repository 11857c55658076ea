"""Which store the settings name. The one place outside the store that
knows an implementation exists; everything else sees ``store.base.Store``."""

from __future__ import annotations

from escalated.settings import Settings
from escalated.store.base import Store
from escalated.store.sqlite import SqliteStore


async def open_store(settings: Settings) -> Store:
    return await SqliteStore.open(settings.db_path, durability=settings.durability)
