"""The database: the ``Store`` interface (base.py), written once
(sqlstore.py and its parts) over a connector per dialect (sqlite/,
postgres/), the named queries and migrations (sql/).

Only this package names SQL. Rows become domain objects in ``rows.py``.
"""
