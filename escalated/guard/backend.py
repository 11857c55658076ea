"""The guard's background loop: one daemon thread doing every HTTP call of the guards.

Reviews are filed fire-and-forget on it (failures logged, never swallowed);
decisions are awaited on it, from sync code (``decide_blocking``) or from the
caller's own loop (``decide``), within the wait cap.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import logging
import os
import threading
from typing import Any

from escalated.errors import EscalatedError
from escalated.guard.errors import GuardFailedClosed

log = logging.getLogger("escalated.guard")


class _Backend:
    """One daemon thread running an event loop that does every HTTP call of the guards."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self._loop = asyncio.new_event_loop()
        self._clients: dict[tuple[str, str], Any] = {}
        self._pending: set[concurrent.futures.Future] = set()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._loop.run_forever, name="escalated-guard", daemon=True)
        self._thread.start()

    def close(self, *, timeout_s: float) -> None:
        if not self.flush(timeout_s=timeout_s):
            log.error("stopping with reviews still being filed; they may be lost")

        async def close_clients() -> None:
            for client in self._clients.values():
                await client.close()

        with contextlib.suppress(concurrent.futures.TimeoutError):
            asyncio.run_coroutine_threadsafe(close_clients(), self._loop).result(timeout=timeout_s)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=timeout_s)
        if not self._thread.is_alive():
            self._loop.close()

    def file_review(self, request: Any) -> None:
        """Fire and forget, but never silently: a failure is logged with the contract id.

        The outcome is logged inside the coroutine, before its future is done,
        so ``flush()`` returning means the log line is written too.
        """
        future = asyncio.run_coroutine_threadsafe(self._file_and_log(request), self._loop)
        with self._lock:
            self._pending.add(future)
        future.add_done_callback(lambda f: self._reviewed(f, request))

    async def _file_and_log(self, request: Any) -> None:
        try:
            filed = await self._create(request)
        except Exception as error:
            log.error("could not file the review for contract %r: %s", request.contract_id, error)
        else:
            log.info("filed review %s for contract %r", filed.get("id"), request.contract_id)

    def _reviewed(self, future: concurrent.futures.Future, request: Any) -> None:
        if future.cancelled():
            log.error("review for contract %r was cancelled before it was filed", request.contract_id)
        with self._lock:
            self._pending.discard(future)

    def decide_blocking(self, request: Any) -> dict:
        future = asyncio.run_coroutine_threadsafe(self._create_and_wait(request), self._loop)
        try:
            return future.result(timeout=_overall_wait_s())
        except concurrent.futures.TimeoutError:
            future.cancel()
            return {"status": "timed-out-waiting", "id": None}
        except BaseException:
            future.cancel()  # e.g. Ctrl-C: stop waiting on the background loop too
            raise

    async def decide(self, request: Any) -> dict:
        future = asyncio.run_coroutine_threadsafe(self._create_and_wait(request), self._loop)
        try:
            # The caller's loop keeps running meanwhile; the cap covers filing and waiting.
            return await asyncio.wait_for(asyncio.wrap_future(future), timeout=_overall_wait_s())
        except TimeoutError:
            future.cancel()
            return {"status": "timed-out-waiting", "id": None}

    def flush(self, *, timeout_s: float) -> bool:
        with self._lock:
            pending = set(self._pending)
        _, not_done = concurrent.futures.wait(pending, timeout=timeout_s)
        return not not_done

    async def _create(self, request: Any) -> dict:
        return await self._client().create_escalation(**request.fields, idempotency_key=request.idempotency_key)

    async def _create_and_wait(self, request: Any) -> dict:
        from escalated.agent.client import DONE_STATUSES, ApiError

        wait_s = _wait_cap_s()
        try:
            escalation = await self._create(request)
            if escalation["status"] in DONE_STATUSES:
                return escalation
            return await self._client().wait_until_done(escalation["id"], timeout_s=wait_s)
        except ApiError as error:
            hint = ""
            if error.code == "idempotency_key_reused":
                hint = "; this run already filed a different output for this call, start a new run id"
            raise GuardFailedClosed(
                f"contract {request.contract_id!r}: no decision could be obtained ({error}){hint}; "
                "the result is not used"
            ) from error
        except EscalatedError as error:  # e.g. no API key configured
            raise GuardFailedClosed(f"contract {request.contract_id!r}: {error}; the result is not used") from error

    def _client(self) -> Any:
        from escalated.agent.client import DEFAULT_URL, EscalatedClient

        token = os.environ.get("ESCALATED_API_KEY") or os.environ.get("ESCALATED_TOKEN")
        if not token:
            raise EscalatedError("ESCALATED_API_KEY is not set, so the guard cannot reach the escalated server")
        url = os.environ.get("ESCALATED_URL") or DEFAULT_URL
        client = self._clients.get((url, token))
        if client is None:
            # Short create retries: an agent blocked on a dead server should
            # learn it in about two seconds, not after minutes.
            client = EscalatedClient(url, token, create_attempts=4, retry_backoff_s=0.25)
            self._clients[(url, token)] = client
        return client


def _wait_cap_s() -> float | None:
    return float(os.environ["ESCALATED_GUARD_WAIT_S"]) if os.environ.get("ESCALATED_GUARD_WAIT_S") else None


# Filing takes a moment before the wait starts: the whole decision gets this much on top of the cap.
_FILING_GRACE_S = 3.0


def _overall_wait_s() -> float | None:
    cap = _wait_cap_s()
    return None if cap is None else cap + _FILING_GRACE_S


_backend_lock = threading.Lock()
_the_backend: _Backend | None = None


def backend() -> _Backend:
    global _the_backend
    with _backend_lock:
        # A forked child does not inherit the parent's thread: start its own.
        if _the_backend is None or _the_backend.pid != os.getpid():
            _the_backend = _Backend()
        return _the_backend


def flush(*, timeout_s: float = 10.0) -> bool:
    """Wait for reviews still being filed; True when none is left."""
    backend = _the_backend
    return backend.flush(timeout_s=timeout_s) if backend is not None else True


def shutdown(*, timeout_s: float = 10.0) -> None:
    """Flush pending reviews, close connections and stop the background loop (also run at exit)."""
    global _the_backend
    with _backend_lock:
        backend, _the_backend = _the_backend, None
    if backend is not None and backend.pid == os.getpid():
        backend.close(timeout_s=timeout_s)


atexit.register(shutdown)
