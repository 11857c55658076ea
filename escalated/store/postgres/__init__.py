"""The PostgreSQL store: several ``escalated serve`` replicas on one database.

Importing this package needs the optional driver (``pip install
'escalated[postgres]'``); nothing outside the store imports it.
"""
