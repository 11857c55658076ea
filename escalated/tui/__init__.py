"""The reviewer terminal UI (``escalated review``).

It talks to the server over HTTP with a user token, like any other client,
and never opens the database. The backend is injected into ``ReviewApp`` so
tests and screenshots can drive it.
"""
