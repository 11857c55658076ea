"""One-click decisions from email (issue #16): links bound to one escalation,
one user and one choice.

Why the sender mints them, at delivery time: a notification's body sits in
the durable outbox, so a secret written into it would be stored in plain
text. Here each attempt of an email mints fresh secrets, stores only their
SHA-256 and hands the URLs to the transport, which puts them in the message
and nowhere else. A retry mints new links and marks the earlier attempt's
unused ones replaced (in the same transaction), so an email has one live set
of links at a time. Whichever link is used, the decision goes through
``Service.decide``'s compare-and-set: an escalation resolves once.

A link expires at the escalation's deadline or after ``ttl_s`` (72 h),
whichever is first. Opening it (GET) never decides: mail scanners and link
previews fetch links. Posting it decides as the link's user, who must still
be routed to the escalation and hold ``escalations:decide``.
"""

from __future__ import annotations

import hashlib
import re
import secrets

import attrs

from escalated.core.admin import AdminService
from escalated.core.principals import user_principal
from escalated.core.service import Service
from escalated.core.settings import LINK_TTL_S
from escalated.core.weblinks import decision_link_url, escalation_url
from escalated.domain.models import ACTIVE_STATUSES, Choice, Delivery, Escalation, NewDecisionLink, Principal
from escalated.errors import InvalidState, NotFound
from escalated.store.base import Store

_SECRET_BYTES = 32
_SECRET = re.compile(r"^[A-Za-z0-9_-]{43}$")  # token_urlsafe(32)

# What a link's page says (the web app words them).
READY = "ready"  # GET: the confirm page
DECIDED = "decided"  # POST: this link decided it
USED = "used"
EXPIRED = "expired"
REPLACED = "replaced"
SUPERSEDED = "superseded"  # the escalation was decided, breached or cancelled first
REFUSED = "refused"  # the user is no longer routed to it or may not decide


@attrs.frozen
class ChoiceLink:
    choice: Choice
    url: str = attrs.field(repr=False)  # holds the secret


@attrs.frozen
class EmailPlan:
    """What one email attempt links to: the escalation's page always; one
    link per choice when the address is a routed user's and the escalation
    can be decided with one click (no response fields)."""

    page_url: str
    recipient: str | None = None  # the routed user the address belongs to
    links: tuple[ChoiceLink, ...] = ()


@attrs.frozen
class LinkPage:
    state: str
    escalation: Escalation
    choice: Choice
    user: str


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


class DecisionLinks:
    def __init__(self, store: Store, *, service: Service, admin: AdminService, ttl_s: float = LINK_TTL_S) -> None:
        self.store = store
        self._service = service
        self._admin = admin
        self._ttl_ms = int(ttl_s * 1000)

    @property
    def base_url(self) -> str:
        """``serve --public-url``, else the address it listens on (``Service.web_url``, as Slack's links)."""
        return self._service.web_url

    # -- minting (the sender, once per email attempt) ------------------------------

    async def plan_email(self, delivery: Delivery) -> EmailPlan:
        esc = await self._fresh(delivery.escalation_id)
        page_url = escalation_url(self.base_url, esc.id)
        address = delivery.target.removeprefix("email:")
        user = await self._admin.user_by_email(workspace_id=esc.workspace_id, email=address)
        if user is None or not await self._service.may_decide(user_principal(user), esc):
            return EmailPlan(page_url=page_url)
        at_ms = self._service.clock()
        expires_ms = min(at_ms + self._ttl_ms, esc.deadline_ms or at_ms + self._ttl_ms)
        if esc.status not in ACTIVE_STATUSES or esc.content.response_fields or expires_ms <= at_ms:
            return EmailPlan(page_url=page_url, recipient=user.name)
        minted = [(secrets.token_urlsafe(_SECRET_BYTES), choice) for choice in esc.content.choices]
        stored = [
            NewDecisionLink(secret_hash=_hash(s), escalation_id=esc.id, user_id=user.id, choice=c.id, expires_ms=expires_ms)
            for s, c in minted
        ]
        await self.store.add_decision_links(delivery_id=delivery.id, links=stored, at_ms=at_ms)
        links = tuple(ChoiceLink(choice=c, url=decision_link_url(self.base_url, s)) for s, c in minted)
        return EmailPlan(page_url=page_url, recipient=user.name, links=links)

    # -- following a link (the web app) --------------------------------------------

    async def page(self, secret: str) -> LinkPage:
        """What the link would do now; changes nothing (GET)."""
        page, _ = await self._look(secret)
        return page

    async def decide(self, secret: str) -> LinkPage:
        """Decide as the link's user when the link is still good (POST)."""
        page, principal = await self._look(secret)
        if page.state != READY:
            return page
        try:
            decided = await self._service.decide(principal, page.escalation, {"choice": page.choice.id})
        except InvalidState:  # the SLA clock, another link or another reviewer got there first
            return attrs.evolve(page, state=SUPERSEDED, escalation=await self._fresh(page.escalation.id))
        await self.store.use_decision_link(secret_hash=_hash(secret), at_ms=self._service.clock())
        return attrs.evolve(page, state=DECIDED, escalation=decided)

    async def _look(self, secret: str) -> tuple[LinkPage, Principal]:
        link = await self.store.decision_link(secret_hash=_hash(secret)) if _SECRET.match(secret) else None
        if link is None:
            raise NotFound("this decision link is not one this server made; use the newest email, or the escalation's page")
        esc = await self._fresh(link.escalation_id)
        choice = next((c for c in esc.content.choices if c.id == link.choice), Choice(id=link.choice, label=link.choice))
        principal = user_principal(link.user)
        page = LinkPage(state=READY, escalation=esc, choice=choice, user=link.user.name)
        if link.used_ms is not None:
            return attrs.evolve(page, state=USED), principal
        if esc.status not in ACTIVE_STATUSES:
            return attrs.evolve(page, state=SUPERSEDED), principal
        if link.replaced_ms is not None:
            return attrs.evolve(page, state=REPLACED), principal
        if link.expires_ms <= self._service.clock():
            return attrs.evolve(page, state=EXPIRED), principal
        if not await self._service.may_decide(principal, esc):
            return attrs.evolve(page, state=REFUSED), principal
        return page, principal

    async def _fresh(self, escalation_id: str) -> Escalation:
        # Unscoped: the link (or the email being sent) names its user, whose
        # routing ``Service.may_decide`` checks.
        esc = await self._service.escalation_for_integration(escalation_id)
        if esc is None:
            raise NotFound(f"no escalation {escalation_id}")
        return esc
