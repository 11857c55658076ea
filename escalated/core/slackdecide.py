"""A press of a Slack decide button, turned into a decision (issue #16).

The button only says which escalation and choice were pressed; anyone who
holds the channel's webhook URL could post a message with buttons of their
own making. So nothing in it is trusted: the clicker is looked up by Slack
member id in the escalation's workspace, must be a user the escalation is
routed to with the right to decide, and the decision is ``Service.decide``
as that user: the same compare-and-set, the same signed callback, with
``answeredBy`` the user, as from the TUI, the API or the web app.

What comes back is the reply for the click's ``response_url``: the message
with the outcome in place of its buttons, or a reply only the clicker sees.
"""

from __future__ import annotations

from typing import Any

from escalated.core import slackmessages
from escalated.core.admin import AdminService
from escalated.core.principals import user_principal
from escalated.core.service import Service
from escalated.domain.models import ACTIVE_STATUSES, Escalation
from escalated.domain.slack import Click, escape
from escalated.errors import InvalidState, ValidationFailed

# The same words for an escalation that does not exist, one in another
# workspace and one not routed to the clicker: a button says nothing more.
NOT_ROUTED = "This escalation is not routed to you in escalated, so you cannot decide it. Nothing was changed."


class SlackDecisions:
    def __init__(self, service: Service, *, admin: AdminService) -> None:
        self._service = service
        self._admin = admin

    async def click(self, click: Click) -> dict[str, Any]:
        """The reply for ``click.response_url``; decides when the clicker may."""
        service = self._service
        esc = await service.escalation_for_integration(click.escalation_id)
        if esc is None:
            return slackmessages.ephemeral(NOT_ROUTED)
        user = await self._admin.user_by_slack_id(workspace_id=esc.workspace_id, slack_id=click.user_id)
        if user is None:
            return slackmessages.ephemeral(
                "Your Slack account is not linked to a user of escalated, so your click cannot decide anything."
                f" An admin can link it with: escalated users add NAME --slack-id {escape(click.user_id)}"
            )
        principal = user_principal(user)
        if not await service.may_decide(principal, esc):
            if not await service.can_see(principal, esc):
                return slackmessages.ephemeral(NOT_ROUTED)
            return slackmessages.ephemeral("Your role in escalated cannot decide escalations. Nothing was changed.")
        if esc.status not in ACTIVE_STATUSES:
            return _too_late(esc)
        try:
            esc = await service.decide(principal, esc, {"choice": click.choice})
        except InvalidState:  # someone (or the SLA clock) got there between our read and the write
            return _too_late(await service.get(principal, esc.id))
        except ValidationFailed as exc:  # a choice the escalation does not offer: a button not of our making
            why = "; ".join(f"{e['field']} {e['message']}" for e in exc.errors or ()) or exc.detail
            return slackmessages.ephemeral(f"This button cannot decide the escalation ({escape(why)}). Nothing was changed.")
        return slackmessages.decided(esc)


def _too_late(esc: Escalation) -> dict[str, Any]:
    return slackmessages.ephemeral(f"Too late, nothing was changed: {slackmessages.outcome(esc)}")
