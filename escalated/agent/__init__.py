"""What an agent process imports: the HTTP client, the callback receiver and
its signature check, the outcome types, the event-stream parser, and how a
tool call is described to a reviewer (``toolcall``, shared by the guard and
the framework adapters).

Nothing here imports the server (core, store, http, web, engine): an import
contract in pyproject.toml keeps it so.
"""
