"""The application core: every operation, whoever asks for it.

``service.Service`` owns the escalation operations, ``bus`` fans committed
changes out and ``notifications`` builds what reviewers are owed (where a
callback may go is a domain rule: ``domain/urlsafety.py``). The core calls
the store and the domain; the HTTP app, the CLI, the SLA clock and the sender call the
core, never the other way round.
"""
