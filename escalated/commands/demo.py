"""``escalated demo``: the whole loop on a scratch database, in one command.

It runs the real server as a subprocess (``python -m escalated serve --port
0``) on a temporary database, sets up demo policies and a reviewer with the
real CLI, posts sample escalations whose callbacks go to a receiver in this
process (``escalated.agent.receiver``: it verifies the signature before anything
else), and opens the reviewer TUI. Quitting the TUI stops everything.

``--no-tui`` replaces the human with an automatic reviewer deciding over
HTTP and exits once every signed callback (the timeout one included) has
arrived: the same loop, headless, for a first smoke test or CI.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import re
import secrets
import shutil
import signal
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import attrs
import click

from escalated.agent.client import ApiError, EscalatedClient
from escalated.domain.models import OPEN
from escalated.errors import EscalatedError
from escalated.agent.receiver import Callback, make_receiver_app, start_receiver
from escalated.timeutil import now_ms, parse_duration_s, parse_timestamp_ms
from escalated.tui.samples import DEFAULT_CHOICE, REQUESTS, SCRIPTED_ANSWERS

REVIEWER = "demo-reviewer"
STARTUP_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 10.0
COUNTDOWN_STEP_S = 5.0  # between countdown lines when stdout is not a terminal
_LISTEN = re.compile(r"Listening on (http://\S+)")
_BOOTSTRAP = re.compile(r"(ain_live_\w+)")


@attrs.define
class ServerRun:
    """``escalated serve`` in a subprocess; its output is kept, not shown."""

    db: Path
    url: str = ""
    api_key: str = ""
    output: list[str] = attrs.field(factory=list)
    _proc: asyncio.subprocess.Process | None = None
    _drain: asyncio.Task | None = None

    async def start(self) -> None:
        self._proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "escalated", "serve", "--port", "0",
            env=_env(self.db), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        )  # fmt: skip
        await asyncio.wait_for(self._read_until_listening(), STARTUP_TIMEOUT_S)
        # Keep reading so a chatty server never blocks on a full pipe.
        self._drain = asyncio.create_task(self._read_rest(), name="demo-server-output")

    async def _read_until_listening(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        while line := (await self._proc.stdout.readline()).decode(errors="replace"):
            self.output.append(line)
            if m := _BOOTSTRAP.search(line):
                self.api_key = m.group(1)
            if m := _LISTEN.search(line):
                self.url = m.group(1)
                return
        raise click.ClickException("the server exited during start-up:\n" + "".join(self.output[-20:]))

    async def _read_rest(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        while line := await self._proc.stdout.readline():
            self.output.append(line.decode(errors="replace"))

    async def stop(self) -> None:
        if self._proc is None or self._proc.returncode is not None:
            return
        self._proc.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(self._proc.wait(), STOP_TIMEOUT_S)
        except TimeoutError:
            self._proc.kill()
            await self._proc.wait()
        if self._drain is not None:
            await self._drain


def _env(db: Path) -> dict[str, str]:
    return {**os.environ, "ESCALATED_DB": str(db), "PYTHONUNBUFFERED": "1"}


async def run_cli(db: Path, *args: str) -> str:
    """``escalated <args>`` against the demo database; its stdout, stripped."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "escalated", *args,
        env=_env(db), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await proc.communicate()
    if proc.returncode != 0:
        raise click.ClickException(f"escalated {' '.join(args)} failed: {err.decode(errors='replace').strip()}")
    return out.decode().strip()


async def set_up(db: Path, *, breach_sla: str) -> str:
    """Demo policies routed to one reviewer; returns that reviewer's token."""
    token = (await run_cli(db, "users", "add", REVIEWER)).split()[-1]  # first: policies route only to users who exist
    await run_cli(db, "policy", "set", "demo.refunds", "--sla", "15m", "--default-choice", DEFAULT_CHOICE,
                  "--reviewer", REVIEWER)  # fmt: skip
    await run_cli(db, "policy", "set", "demo.access", "--reviewer", REVIEWER)
    await run_cli(db, "policy", "set", "demo.quick", "--sla", breach_sla, "--default-choice", DEFAULT_CHOICE,
                  "--reviewer", REVIEWER)  # fmt: skip
    return token


async def post_samples(agent: EscalatedClient, *, resume_url: str, secret: str) -> list[dict]:
    resume = {"mode": "webhook", "url": resume_url, "secret": secret}
    return [await agent.create_escalation(**request, resume=resume) for request in REQUESTS]


def intro(*, server_url: str, db: Path, breach_sla: str, posted: int, resume_url: str, web_link: str) -> None:
    click.echo(f"escalated demo: scratch database {db}")
    click.echo(f"  server    {server_url}  (escalated serve, stopped when the demo ends)")
    click.echo(f"  policies  demo.refunds (SLA 15m) · demo.access (no SLA) · demo.quick (SLA {breach_sla},")
    click.echo(f"            then the default choice {DEFAULT_CHOICE!r} applies by itself)")
    click.echo(f"  reviewer  {REVIEWER} (a user token; every demo policy routes to this user)")
    click.echo(f"  agent     posted {posted} escalations; callbacks go to {resume_url}")
    click.echo("            where a receiver verifies each signature before printing it")
    click.echo(f"  web app   {web_link}")
    click.echo(f"            (a single-use sign-in link as {REVIEWER}: open it in a browser beside the TUI)")


def describe(callback: Callback) -> str:
    """What the agent receives: the event, the delivery id and the verified body."""
    body = json.dumps(json.loads(callback.raw), indent=2)
    return f"agent received {callback.event} (signature verified, delivery {callback.delivery_id}):\n{body}"


@attrs.define
class Inbox:
    """The callbacks the built-in receiver verified, in arrival order."""

    on_arrival: Callable[[Callback], None] = lambda _: None
    received: list[Callback] = attrs.field(factory=list)
    changed: asyncio.Event = attrs.field(factory=asyncio.Event)

    def __call__(self, callback: Callback) -> None:
        # Delivery is at least once: a callback whose answer came back late is
        # sent again. An agent acts on each escalation once, and so does this one.
        if any(seen.escalation_id == callback.escalation_id for seen in self.received):
            return
        self.received.append(callback)
        self.changed.set()
        self.on_arrival(callback)

    def watch(self, on_arrival: Callable[[Callback], None]) -> None:
        """Show every callback from now on, and first those that already came:
        on a slow machine a short SLA can breach, and its callback arrive,
        while the demo is still setting up."""
        self.on_arrival = on_arrival
        for callback in self.received:
            on_arrival(callback)

    async def wait_for(self, count: int, *, timeout_s: float) -> bool:
        async def enough() -> None:
            while len(self.received) < count:
                self.changed.clear()
                await self.changed.wait()

        try:
            await asyncio.wait_for(enough(), timeout_s)
        except TimeoutError:
            return False
        return True


async def automatic_reviewer(reviewer: EscalatedClient) -> int:
    """Decide every sample that has a scripted answer, as a human would. Returns how many."""
    decided = 0
    for escalation in (await reviewer.list_escalations(status=OPEN))["data"]:
        answer = SCRIPTED_ANSWERS.get(escalation["runId"])
        if answer is None:
            continue
        await reviewer.acknowledge(escalation["id"])
        await reviewer.decide(escalation["id"], **answer)
        click.echo(f"reviewer decided {escalation['subject']['label']}: {answer['choice']}")
        decided += 1
    return decided


async def run_scripted(reviewer: EscalatedClient, inbox: Inbox, *, breach_s: float) -> None:
    inbox.watch(lambda callback: click.echo(describe(callback)))
    decided = await automatic_reviewer(reviewer)
    click.echo(f"waiting for {decided} decision callback(s) and 1 timeout (SLA {breach_s:g}s)…")
    ticking = asyncio.create_task(countdown(await next_deadline(reviewer)))
    try:
        # The breach fires after the SLA; allow the retry schedule's first wait too.
        arrived = await inbox.wait_for(decided + 1, timeout_s=breach_s + 30)
    finally:
        ticking.cancel()
    if not arrived:
        raise click.ClickException(f"only {len(inbox.received)} of {decided + 1} callbacks arrived")
    click.echo("done: every callback arrived and verified.")


async def next_deadline(reviewer: EscalatedClient) -> tuple[str, int] | None:
    """The open escalation whose SLA ends first: (its label, deadline in epoch ms)."""
    open_ = (await reviewer.list_escalations(status=OPEN))["data"]
    timed = [(e["deadlineAt"], e["subject"]["label"]) for e in open_ if e.get("deadlineAt")]
    if not timed:
        return None
    deadline, label = min(timed)
    return label, parse_timestamp_ms(deadline)


async def countdown(deadline: tuple[str, int] | None) -> None:
    """So a headless run does not look hung while it waits for the breach:
    a line every COUNTDOWN_STEP_S (a terminal gets one line updated every second)."""
    if deadline is None:
        return
    label, at_ms = deadline
    tty = sys.stdout.isatty()
    step_s = 1.0 if tty else COUNTDOWN_STEP_S
    while (left_s := (at_ms - now_ms()) / 1000) > 0:
        text = f"  {label}: no decision, the default choice applies in {math.ceil(left_s)}s"
        click.echo(f"\r{text}  " if tty else text, nl=not tty)
        await asyncio.sleep(min(step_s, left_s))
    click.echo(("\r" if tty else "") + f"  {label}: SLA passed, applying the default choice…")


async def run_tui(reviewer: EscalatedClient, inbox: Inbox, *, web_link: str) -> None:
    from escalated.tui.app import ReviewApp

    # The sign-in link stays on screen while the TUI runs (it used to be
    # printed above it, hidden until the TUI ended).
    app = ReviewApp(reviewer, banner=f"Web app (sign in as {REVIEWER}): {web_link}")

    def on_arrival(callback: Callback) -> None:
        app.notify(f"{callback.event}: {callback.choice} ({callback.resolved_by})", title="Agent received callback")

    inbox.watch(on_arrival)
    await app.run_async()
    click.echo(f"The agent received {len(inbox.received)} verified callback(s):")
    for callback in inbox.received:
        click.echo(describe(callback))


async def run_demo(*, workdir: Path, tui: bool, breach_sla: str) -> None:
    db = workdir / "escalated.db"
    server = ServerRun(db=db)
    inbox = Inbox()
    secret = secrets.token_urlsafe(24)
    receiver = await start_receiver(make_receiver_app(inbox, secret=secret))
    try:
        await server.start()
        token = await set_up(db, breach_sla=breach_sla)
        async with EscalatedClient(server.url, server.api_key) as agent:
            posted = await post_samples(agent, resume_url=f"{receiver.url}/resume", secret=secret)
        resume_url = f"{receiver.url}/resume"
        web_link = await run_cli(db, "users", "login-link", REVIEWER, "--ttl", "1h", "--url", server.url)
        intro(
            server_url=server.url, db=db, breach_sla=breach_sla, posted=len(posted), resume_url=resume_url, web_link=web_link
        )
        async with EscalatedClient(server.url, token) as reviewer:
            if tui:
                await run_tui(reviewer, inbox, web_link=web_link)
            else:
                await run_scripted(reviewer, inbox, breach_s=parse_duration_s(breach_sla))
    except ApiError as error:
        raise click.ClickException(f"the demo server refused a request: {error}") from None
    finally:
        await server.stop()
        await receiver.close()


def _duration(ctx: click.Context, param: click.Parameter, value: str) -> str:
    try:
        parse_duration_s(value)
    except EscalatedError as error:
        raise click.BadParameter(str(error)) from None
    return value


@click.command()
@click.option(
    "--no-tui",
    is_flag=True,
    help="No terminal UI: an automatic reviewer decides over HTTP; exits once the signed callbacks arrived.",
)
@click.option(
    "--breach-sla",
    default="60s",
    show_default=True,
    callback=_duration,
    help="SLA of the demo.quick policy, the sample left to time out.",
)
@click.option("--keep", is_flag=True, help="Keep the scratch database instead of deleting it.")
def demo(no_tui: bool, breach_sla: str, keep: bool) -> None:
    """The whole loop on a scratch database: server, policies, a reviewer,
    sample escalations, a callback receiver that verifies signatures, and the
    reviewer TUI. Quit the TUI (q) to stop everything."""
    workdir = Path(tempfile.mkdtemp(prefix="escalated-demo-"))
    try:
        asyncio.run(run_demo(workdir=workdir, tui=not no_tui, breach_sla=breach_sla))
    finally:
        if keep:
            click.echo(f"database kept: {workdir / 'escalated.db'}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
