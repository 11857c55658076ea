"""How much one escalation may hold: the server refuses more, the agent side cuts to fit.

One module for both sides. The server's validation (``domain/validation``)
refuses a create over these limits with 422; the agent library
(``agent/toolcall``), the guard and the framework adapters cut what they
file to stay inside them, so a call is never refused for being long. It
imports nothing, so an agent process can import it without the server.
"""

from __future__ import annotations

# Any one text of an escalation: the question, an evidence item, a subject
# part, a choice label, a reason.
MAX_TEXT_CHARS = 10_000
MAX_EVIDENCE_ITEMS = 200
MAX_CHOICES = 20
# The server's default request body limit (``serve --max-body``).
MAX_BODY_BYTES = 256 * 1024

# What the agent side files for one call, all texts together. JSON may
# spell one character in up to 12 bytes (a surrogate pair as two \u
# escapes), so this many characters stay under the default body limit
# whatever they hold, with room for the rest of the body.
FILED_TEXT_BUDGET_CHARS = 16_000
