"""When a failed callback is tried again, as a server started without any
retry flag does it (CONTRACT §1, §5): the default schedule's first wait,
a receiver's ``Retry-After`` (delta seconds or an HTTP date) as a floor,
and its one-hour cap. A real ``escalated serve``, a real receiver.

Nothing here waits for a retry: the first attempt fails at once, and the
delivery's ``nextAttemptAt`` beside that attempt's ``at`` says the wait the
sender chose. The rest of the default schedule, and the default window and
timeout, are read from ``serve``'s own flags at the end.
"""

from __future__ import annotations

import email.utils
import time
from pathlib import Path

import aiohttp
import pytest

from escalated.commands.serve import parse_schedule, serve
from escalated.core.settings import Settings
from escalated.timeutil import parse_duration_s, parse_timestamp_ms
from tests.conftest import fresh_db
from tests.support.api import Api
from tests.support.receiver import Receiver
from tests.support.server import ServerProcess
from tests.support.wait import eventually

# The contract's words: "about 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, then
# every 3 h, for 24 h by default", a 10 s timeout, ±20% jitter.
CONTRACT_SCHEDULE_S = (5.0, 30.0, 120.0, 600.0, 1800.0, 3600.0, 10800.0)
CONTRACT_WINDOW_S = 24 * 3600.0
CONTRACT_TIMEOUT_S = 10.0
JITTER = 0.2


@pytest.fixture(scope="module")
def default_server(request, backend, tmp_path_factory):
    """A server with no retry, window or timeout flag: the defaults are what is tested."""
    with fresh_db(request, backend, tmp_path_factory.mktemp("retry-defaults")) as db:
        proc = ServerProcess(db=db).start()
        proc.cli("policy", "set", "refunds.large")
        yield proc
        proc.stop()


@pytest.fixture
async def api(default_server):
    async with aiohttp.ClientSession() as session:
        yield Api(default_server.url, default_server.bootstrap_key, session)


async def _first_wait_s(api: Api, receiver: Receiver) -> float:
    """Decide an escalation whose callback fails once; the wait before its next attempt."""
    esc = await api.create(resume={"mode": "webhook", "url": receiver.url, "secret": "s"})
    status, _ = await api.decide(esc["id"])
    assert status == 200

    async def failed_once() -> dict | None:
        [callback] = [d for d in await api.deliveries(esc["id"]) if d["kind"] == "callback"]
        return callback if callback["attempts"] and callback["nextAttemptAt"] else None

    callback = await eventually(failed_once, what="the callback's first attempt failed")
    assert callback["status"] == "pending"
    [attempt] = callback["attempts"]
    assert attempt["statusCode"] == 503
    return (parse_timestamp_ms(callback["nextAttemptAt"]) - parse_timestamp_ms(attempt["at"])) / 1000


async def test_a_failed_callback_waits_the_default_schedules_first_wait(api, receiver):
    receiver.status = 503
    wait_s = await _first_wait_s(api, receiver)
    first = CONTRACT_SCHEDULE_S[0]
    assert first * (1 - JITTER) <= wait_s <= first * (1 + JITTER)


async def test_a_receivers_retry_after_in_seconds_is_a_floor(api, receiver):
    receiver.status = 503
    receiver.headers = {"Retry-After": "120"}
    assert await _first_wait_s(api, receiver) == pytest.approx(120.0, abs=0.002)


async def test_a_receivers_retry_after_shorter_than_the_schedule_does_not_shorten_the_wait(api, receiver):
    """A floor, not a replacement: a receiver answering ``Retry-After: 0`` to
    every attempt still gets the schedule's backoff, not a retry at once."""
    receiver.status = 503
    receiver.headers = {"Retry-After": "0"}
    first = CONTRACT_SCHEDULE_S[0]
    assert first * (1 - JITTER) <= await _first_wait_s(api, receiver) <= first * (1 + JITTER)


async def test_a_receivers_retry_after_is_honoured_up_to_an_hour(api, receiver):
    receiver.status = 503
    receiver.headers = {"Retry-After": "7200"}
    assert await _first_wait_s(api, receiver) == pytest.approx(3600.0, abs=0.002)


async def test_a_receivers_retry_after_as_an_http_date(api, receiver):
    receiver.status = 503
    receiver.headers = {"Retry-After": email.utils.formatdate(time.time() + 600, usegmt=True)}
    # The date has whole seconds and the attempt ends a moment after the answer.
    assert 597.0 <= await _first_wait_s(api, receiver) <= 601.0


def _default(flag: str) -> str:
    [option] = [p for p in serve.params if f"--{flag}" in getattr(p, "opts", ())]
    return option.default


def test_serve_defaults_are_the_contracts_schedule_window_and_timeout():
    assert parse_schedule(_default("retry-schedule")) == CONTRACT_SCHEDULE_S
    assert parse_duration_s(_default("retry-for")) == CONTRACT_WINDOW_S
    assert parse_duration_s(_default("delivery-timeout")) == CONTRACT_TIMEOUT_S


def test_serve_listens_on_loopback_port_8470_with_full_durability_by_default():
    """CONTRACT §1's defaults, for both serve's flags and the library's Settings."""
    assert (_default("host"), _default("port"), _default("durability")) == ("127.0.0.1", 8470, "full")
    settings = Settings(db_path=Path("unused.db"))
    assert (settings.host, settings.port, settings.durability) == ("127.0.0.1", 8470, "full")


def test_the_library_settings_default_to_the_same():
    settings = Settings(db_path=Path("unused.db"))
    assert settings.retry_schedule_s == CONTRACT_SCHEDULE_S
    assert settings.retry_for_s == CONTRACT_WINDOW_S
    assert settings.delivery_timeout_s == CONTRACT_TIMEOUT_S
