"""escalated: a local-first escalation service for automated agents.

The same package is the server (``escalated serve``), the reviewer TUI
(``escalated review``), the contract generator (``escalated contracts``) and
the library an agent imports (:mod:`escalated.agent.client`,
:mod:`escalated.agent.signing`, :mod:`escalated.agent.receiver`, :mod:`escalated.guard`).
"""

__version__ = "0.1.0"
