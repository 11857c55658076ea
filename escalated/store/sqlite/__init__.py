"""The SQLite store: one file, one group-commit writer, readers beside it.

``SqliteStore`` (store.py) is re-exported here, where callers have always
imported it from.
"""

from escalated.store.sqlite.store import SqliteStore as SqliteStore
