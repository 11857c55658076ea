"""Scopes and roles (CONTRACT §2)."""

from __future__ import annotations

WRITE = "escalations:write"
READ = "escalations:read"
ACKNOWLEDGE = "escalations:acknowledge"
DECIDE = "escalations:decide"
CANCEL = "escalations:cancel"

ALL_SCOPES = (WRITE, READ, ACKNOWLEDGE, DECIDE, CANCEL)

ROLE_SCOPES = {
    "reviewer": frozenset({READ, ACKNOWLEDGE, DECIDE, CANCEL}),
    "admin": frozenset(ALL_SCOPES),
}
ROLES = tuple(ROLE_SCOPES)
