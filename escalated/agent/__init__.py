"""What an agent process imports: the HTTP client, the callback receiver and
its signature check, the outcome types, and the event-stream parser.

Nothing here imports the server (core, store, http, web, engine): an import
contract in pyproject.toml keeps it so.
"""
