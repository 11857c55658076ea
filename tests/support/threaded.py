"""An aiohttp app served on 127.0.0.1:0 from a thread with its own event loop.

For the real servers a module-scoped fixture shares (the API's ``LiveServer``,
the Slack stand-in): on a loop of their own they serve synchronous tests and
every async test's loop alike, and outlive any one test.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from aiohttp import web

T = TypeVar("T")
TIMEOUT_S = 30.0


class ThreadedServer:
    def __init__(self, name: str) -> None:
        self.url = ""
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=name, daemon=True)
        self._runner: web.AppRunner | None = None

    def start(self, make_app: Callable[[], web.Application], **runner_options: Any) -> str:
        """Serve ``make_app()`` (built on the server's loop); the base URL."""

        async def up() -> str:
            self._runner = web.AppRunner(make_app(), access_log=None, **runner_options)
            await self._runner.setup()
            await web.TCPSite(self._runner, "127.0.0.1", 0).start()
            return f"http://127.0.0.1:{self._runner.addresses[0][1]}"

        self._thread.start()
        self.url = self.run(up)
        return self.url

    def run(self, make: Callable[[], Coroutine[Any, Any, T]]) -> T:
        """Run the coroutine ``make()`` on the server's loop; its result."""
        return asyncio.run_coroutine_threadsafe(make(), self._loop).result(TIMEOUT_S)

    @property
    def app(self) -> web.Application:
        assert self._runner is not None, "not started"
        return self._runner.app

    def stop(self) -> None:
        if self._runner is not None:
            self.run(self._runner.cleanup)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(TIMEOUT_S)
        self._loop.close()
