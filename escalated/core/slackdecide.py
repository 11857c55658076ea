"""A press of a Slack decide button, turned into a decision (issue #16).

The button only says which escalation and choice were pressed; anyone who
holds the channel's webhook URL could post a message with buttons of their
own making. So nothing in it is trusted: the clicker is looked up by Slack
member id in the escalation's workspace, must be a user the escalation is
routed to with the right to decide, and the decision is ``Service.decide``
as that user: the same compare-and-set, the same signed callback, with
``answeredBy`` the user, as from the TUI, the API or the web app.

What comes back is what the click came to: the escalation it decided, a
refusal in words for the clicker alone, or the escalation someone else
decided first. The HTTP route has engine/slackmessages.py render it as the
reply for the click's ``response_url``.
"""

from __future__ import annotations

import attrs

from escalated.core.admin import AdminService
from escalated.core.principals import user_principal
from escalated.core.service import Service
from escalated.domain.models import ACTIVE_STATUSES, Escalation
from escalated.domain.slack import Click
from escalated.errors import InvalidState, ValidationFailed

# The same words for an escalation that does not exist, one in another
# workspace and one not routed to the clicker: a button says nothing more.
NOT_ROUTED = "This escalation is not routed to you in escalated, so you cannot decide it. Nothing was changed."


@attrs.frozen
class Decided:
    """The click decided ``escalation``."""

    escalation: Escalation


@attrs.frozen
class TooLate:
    """``escalation`` was decided or cancelled before the click: nothing changed."""

    escalation: Escalation


@attrs.frozen
class Refused:
    """The click may not decide; ``reason`` (plain text) says why, to the clicker alone."""

    reason: str


ClickOutcome = Decided | TooLate | Refused


class SlackDecisions:
    def __init__(self, service: Service, *, admin: AdminService) -> None:
        self._service = service
        self._admin = admin

    async def click(self, click: Click) -> ClickOutcome:
        """Decides when the clicker may; what the click came to."""
        service = self._service
        esc = await service.escalation_for_integration(click.escalation_id)
        if esc is None:
            return Refused(NOT_ROUTED)
        user = await self._admin.user_by_slack_id(workspace_id=esc.workspace_id, slack_id=click.user_id)
        if user is None:
            return Refused(
                "Your Slack account is not linked to a user of escalated, so your click cannot decide anything."
                f" An admin can link it with: escalated users add NAME --slack-id {click.user_id}"
            )
        principal = user_principal(user)
        if not await service.may_decide(principal, esc):
            if not await service.can_see(principal, esc):
                return Refused(NOT_ROUTED)
            return Refused("Your role in escalated cannot decide escalations. Nothing was changed.")
        if esc.status not in ACTIVE_STATUSES:
            return TooLate(esc)
        try:
            esc = await service.decide(principal, esc, {"choice": click.choice})
        except InvalidState:  # someone (or the SLA clock) got there between our read and the write
            return TooLate(await service.get(principal, esc.id))
        except ValidationFailed as exc:  # a choice the escalation does not offer: a button not of our making
            why = "; ".join(f"{e['field']} {e['message']}" for e in exc.errors or ()) or exc.detail
            return Refused(f"This button cannot decide the escalation ({why}). Nothing was changed.")
        return Decided(esc)
