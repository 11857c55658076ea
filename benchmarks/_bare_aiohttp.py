"""The baseline for the create benchmark: a bare aiohttp handler that reads
and parses the same JSON body (with orjson, as escalated does) and answers
201 with a small JSON body. No auth, no validation, no database.

Prints ``Listening on http://127.0.0.1:PORT`` like ``escalated serve``.
"""

from __future__ import annotations

import asyncio

import orjson
from aiohttp import web

ANSWER = orjson.dumps({"id": "esc_01BASELINE0000000000000000", "status": "open"})


async def create(request: web.Request) -> web.Response:
    body = orjson.loads(await request.read())
    if not isinstance(body, dict):
        raise web.HTTPBadRequest()
    return web.Response(status=201, body=ANSWER, content_type="application/json")


async def main() -> None:
    app = web.Application()
    app.router.add_post("/escalations", create)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    print(f"Listening on http://127.0.0.1:{runner.addresses[0][1]}", flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
