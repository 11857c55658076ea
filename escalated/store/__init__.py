"""SQLite storage: schema, migrations, the single writer and the readers.

Only this package names SQL. Rows become domain objects in ``rows.py``.
"""
