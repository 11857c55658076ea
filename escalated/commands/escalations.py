"""``escalated escalations``: the reviewer CLI over HTTP (CONTRACT §15).

A client of a running server like the TUI, through the agent library's
client: list, show, acknowledge, claim, decide and cancel, each as the
token's owner. ``--json`` prints the server's JSON as it came. A refusal
is the server's problem detail in words, with exit status 1.
"""

from __future__ import annotations

import asyncio
import functools
import json
import math
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import click

from escalated.agent.client import DEFAULT_URL, NOT_ESCALATED, ApiError, EscalatedClient, ServerUnreachable
from escalated.domain.models import ACTIVE_STATUSES, STATUSES
from escalated.timeutil import now_ms, parse_timestamp_ms
from escalated.tui.command import client_for
from escalated.tui.format import age_text, countdown_text, ms

T = TypeVar("T")
QUESTION_WIDTH = 60


def _server_options(fn: Callable) -> Callable:
    """--url and --token on every subcommand (env ESCALATED_URL, ESCALATED_TOKEN or ESCALATED_API_KEY)."""
    fn = click.option(
        "--token",
        envvar=["ESCALATED_TOKEN", "ESCALATED_API_KEY"],
        required=True,
        help="Your user token (escalated users add NAME) or an API key. Env ESCALATED_TOKEN or ESCALATED_API_KEY.",
    )(fn)
    fn = click.option("--url", envvar="ESCALATED_URL", default=DEFAULT_URL, show_default=True, help="The server. Env ESCALATED_URL.")(fn)
    return click.option("--json", "as_json", is_flag=True, help="Print the server's JSON instead of text.")(fn)


def _run(url: str, token: str, call: Callable[[EscalatedClient], Awaitable[T]]) -> T:
    """``await call(client)`` against the server; a refusal becomes words and exit status 1."""

    client = client_for(url, token)

    async def main() -> T:
        async with client:
            return await call(client)

    try:
        return asyncio.run(main())
    except ServerUnreachable as exc:
        raise click.ClickException(f"cannot reach the escalated server at {url} ({exc.detail}); is `escalated serve` running?") from None
    except ApiError as exc:
        if exc.code == NOT_ESCALATED:  # the client's own verdict on the answer: no server refused anything
            raise click.ClickException(exc.detail) from None
        raise click.ClickException(refusal_words(exc)) from None


def refusal_words(exc: ApiError) -> str:
    """The problem detail as a sentence, each field problem on a line of its own."""
    hint = {401: " (check --token / ESCALATED_TOKEN)", 404: " (unknown, or not routed to you)"}.get(exc.status, "")
    lines = [f"refused: {exc.detail} [{exc.status} {exc.code}]{hint}"]
    lines += [f"  {e.get('field')}: {e.get('message')}" for e in exc.errors or [] if isinstance(e, dict)]
    return "\n".join(lines)


def _echo_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False))


def _command(fn: Callable) -> Callable:
    """A subcommand of ``escalations`` with the server options."""
    return escalations.command(fn.__name__.rstrip("_").replace("_", "-"))(_server_options(fn))


@click.group()
def escalations() -> None:
    """Review escalations from the shell, over HTTP: list, show, ack, claim, decide, cancel.

    \b
    Talks to a running server as you (the token's owner), like the TUI:
      export ESCALATED_URL=http://127.0.0.1:8470 ESCALATED_TOKEN=ain_user_…
      escalated escalations list --mine
      escalated escalations decide esc_01J… approve --reason "known customer"
    Every subcommand takes --json. A refusal prints the server's reason and exits 1.
    """


@_command
@click.option("--status", type=click.Choice(STATUSES), help="Only escalations in this status.")
@click.option("--policy", help="Only escalations of this policy key.")
@click.option("--mine", is_flag=True, help="Only those assigned to you (claimed by you or assigned to you).")
@click.option("--limit", type=click.IntRange(1, 200), default=50, show_default=True, help="At most this many, newest first.")
def list_(url, token, as_json, status, policy, mine, limit) -> None:
    """List escalations routed to you, newest first: id, status, age, assignee, question."""
    page = _run(
        url, token,
        lambda c: c.list_escalations(status=status, policy=policy, assignee="me" if mine else None, limit=limit),
    )  # fmt: skip
    if as_json:
        _echo_json(page["data"])
        return
    if not page["data"]:
        click.echo("no escalations match")
        return
    at_ms = now_ms()
    for esc in page["data"]:
        click.echo(_row(esc, at_ms))


def _row(esc: dict, at_ms: int) -> str:
    question = " ".join(esc["question"].split())
    if len(question) > QUESTION_WIDTH:
        question = question[: QUESTION_WIDTH - 1] + "…"
    age = age_text(parse_timestamp_ms(esc["createdAt"]), at_ms)  # always present
    return f"{esc['id']}  {esc['status']:<12} {age:>4}  {esc.get('assignee') or '-':<12} {esc['policy']}  {question}"


@_command
@click.argument("escalation_id", metavar="ID")
def show(url, token, as_json, escalation_id) -> None:
    """Show one escalation: the question, evidence, choices, who holds it, its history."""
    esc = _run(url, token, lambda c: c.get_escalation(escalation_id))
    if as_json:
        _echo_json(esc)
    else:
        click.echo(describe(esc, at_ms=now_ms()))


def describe(esc: dict, *, at_ms: int) -> str:
    """An escalation as a reviewer reads it: the question first, ids last."""
    subject = esc.get("subject") or {}
    lines = [esc["question"], ""]
    for item in esc.get("evidence") or []:  # an item's own line breaks kept, indented under its dash
        lines.append("  - " + "\n    ".join(item.splitlines() or [""]))
    lines += ["", "Choices: " + ", ".join(f"{c['label']} ({c['id']})" for c in esc["choices"])]
    for field in esc.get("responseFields") or []:
        options = ", ".join(o["value"] for o in field.get("options", [])) if field["type"] == "select" else "a number"
        lines.append(f"  --field {field['name']}=…  {field['label']}: {options}")
    lines += ["", f"Status:    {esc['status']}" + _outcome(esc)]
    deadline = ms(esc.get("deadlineAt"))
    if deadline is not None and esc["status"] in ACTIVE_STATUSES:
        lines.append(f"Deadline:  {esc['deadlineAt']} (in {countdown_text(deadline, at_ms)})")
    lines.append(f"Assignee:  {esc.get('assignee') or 'nobody'}")
    if approvals := esc.get("approvals"):  # a quorum short of its count (CONTRACT §15)
        lines.append("Approvals: " + ", ".join(f"{a['by']} ({a['choice']})" for a in approvals))
    if esc.get("level"):
        lines.append(f"Level:     {esc['level']} (escalated to more reviewers)")
    lines.append(f"Subject:   {subject.get('label')} ({subject.get('type')} {subject.get('id')})")
    lines.append(f"Policy:    {esc['policy']}   agent {esc['agentId']}, run {esc['runId']}")
    lines.append(f"Id:        {esc['id']}")
    lines += ["", "History:"] + [f"  {h['at']}  {h['event']:<13} {h['by']}" for h in esc.get("history") or []]
    return "\n".join(lines)


def _outcome(esc: dict) -> str:
    res, cancel = esc.get("resolution"), esc.get("cancellation")
    if res:
        rule = f" (remembered decision by {res['rule']['createdBy']})" if res.get("rule") else ""
        reason = f": {res['reason']}" if res.get("reason") else ""
        return f", {res['choice']} by {res['answeredBy']}{rule}{reason}"
    if cancel:
        return f" by {cancel['cancelledBy']}" + (f": {cancel['reason']}" if cancel.get("reason") else "")
    return ""


def _transition(fn: Callable[..., Awaitable[dict]]) -> Callable:
    """Print the escalation a transition answered: its JSON, or one line."""

    @functools.wraps(fn)
    def command(url, token, as_json, **kw) -> None:
        esc = _run(url, token, lambda c: fn(c, **kw))
        if as_json:
            _echo_json(esc)
        else:
            click.echo(f"{esc['id']}: {esc['status']}{_outcome(esc)}" + (f", assignee {esc['assignee']}" if esc.get("assignee") else ""))

    return command


@_command
@click.argument("escalation_id", metavar="ID")
@_transition
async def ack(client, *, escalation_id) -> dict:
    """Acknowledge: tell the agent's people someone is looking (idempotent)."""
    return await client.acknowledge(escalation_id)


@_command
@click.argument("escalation_id", metavar="ID")
@_transition
async def claim(client, *, escalation_id) -> dict:
    """Claim it: you become its assignee and it is acknowledged (a user token; others may still decide)."""
    return await client.claim(escalation_id)


@_command
@click.argument("escalation_id", metavar="ID")
@click.argument("choice")
@click.option("--reason", help="Why: kept in the history and sent to the agent.")
@click.option("--field", "fields", multiple=True, metavar="NAME=VALUE", help="A response field's value (repeatable).")
@_transition
async def decide(client, *, escalation_id, choice, reason, fields) -> dict:
    """Decide it with CHOICE (a choice id shown by `show`); --field for the response it asks."""
    response = None
    if fields:
        esc = await client.get_escalation(escalation_id)
        response = parse_fields(fields, esc.get("responseFields") or [])
    return await client.decide(escalation_id, choice=choice, reason=reason, response=response)


@_command
@click.argument("escalation_id", metavar="ID")
@click.option("--reason", help="Why it is cancelled: kept in the history.")
@_transition
async def cancel(client, *, escalation_id, reason) -> dict:
    """Cancel it: nobody needs to decide any more (the agent is told if its policy asks)."""
    return await client.cancel(escalation_id, reason=reason)


def parse_fields(pairs: tuple[str, ...], fields: list[dict]) -> dict:
    """``name=value`` pairs as the response: numbers for number fields; the server checks the rest."""
    kinds = {f["name"]: f["type"] for f in fields}
    response: dict[str, Any] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise click.BadParameter(f"{pair!r} is not NAME=VALUE", param_hint="--field")
        if name in response:  # which one was meant? (the last one used to win, silently)
            raise click.BadParameter(f"{name} is given twice", param_hint="--field")
        if kinds.get(name) == "number":
            try:
                number = float(value)
            except ValueError:
                number = math.nan
            if not math.isfinite(number):  # nan, inf, 1e999: no JSON number says them
                raise click.BadParameter(f"{name} must be a number, not {value!r}", param_hint="--field") from None
            response[name] = int(number) if number.is_integer() else number
        else:
            response[name] = value
    return response
