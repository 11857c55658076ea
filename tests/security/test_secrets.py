"""Secrets never leak: not in API responses, not in the server's output, and
API keys and user tokens not in the database in clear (the SQLite files, or
every row of every PostgreSQL table).

One scenario exercises every path that handles a secret (keys minted by the
CLI and the API, revoked and expired keys, user tokens and their rotation,
signed callbacks that succeed, fail, and fail for good, bad tokens, invalid
creates, idempotent replays, the event stream, metrics), with the server at
``--log-level debug``; then everything it said and stored is scanned.
"""

from __future__ import annotations

import asyncio
import hashlib
import socket
from pathlib import Path

import aiohttp

from tests.conftest import fresh_db
from tests.support.receiver import Receiver
from tests.support.http import Http
from tests.support.wait import eventually
from tests.support.api import escalation_body
from tests.support.server import ServerProcess


def _variants(secret: str) -> list[bytes]:
    """The secret, and for our tokens their 32-character random part alone
    (so a truncated or re-prefixed copy is caught too)."""
    out = [secret.encode()]
    if secret.startswith(("ain_live_", "ain_user_")):
        out.append(secret[9:41].encode())
    return out


def leaks(haystack: bytes, secrets: dict[str, str]) -> list[str]:
    return [name for name, secret in secrets.items() if any(v in haystack for v in _variants(secret))]


def mistype(token: str) -> str:
    i = 20
    return token[:i] + ("A" if token[i] != "A" else "B") + token[i + 1 :]


def refused_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/hook"


async def test_no_secret_appears_in_responses_output_or_the_database(request, fn_backend, tmp_path):
    with fresh_db(request, fn_backend, tmp_path) as db:
        await scenario(ServerProcess(db=db, args=("--log-level", "debug", "--retry-schedule", "100ms", "--retry-for", "1s")))


async def scenario(proc: ServerProcess) -> None:
    await asyncio.to_thread(proc.start)
    http = Http(proc.url)
    call = lambda *a, **kw: asyncio.to_thread(http.request, *a, **kw)  # noqa: E731 - the receiver shares this loop
    cli_output: list[str] = []

    def cli(*args: str) -> str:
        out = proc.cli(*args)
        cli_output.append(out)
        return out

    tokens: dict[str, str] = {"bootstrap": proc.bootstrap_key}
    resume: dict[str, str] = {}
    allowed_in: dict[str, bytes] = {}
    key_ids: dict[str, str] = {}  # the one response allowed to show a minted key
    receiver = await Receiver(script=[500, 401]).start()
    failing = await Receiver(status=503).start()
    sse = bytearray()
    try:
        async with aiohttp.ClientSession() as session:
            connected = asyncio.Event()

            async def stream() -> None:
                async with session.get(proc.url + "/events", headers={"Authorization": f"Bearer {tokens['bootstrap']}"}) as r:
                    async for chunk in r.content.iter_any():
                        sse.extend(chunk)
                        connected.set()

            streamer = asyncio.create_task(stream())
            await asyncio.wait_for(connected.wait(), 10)

            _, tokens["cli-key"], tokens["cli-narrow"], tokens["alice-old"], tokens["admin"] = await asyncio.gather(
                asyncio.to_thread(cli, "policy", "set", "sec.open"),
                asyncio.to_thread(cli, "keys", "create", "--name", "cli"),
                asyncio.to_thread(cli, "keys", "create", "--scope", "escalations:read"),
                asyncio.to_thread(cli, "users", "add", "alice"),
                asyncio.to_thread(cli, "users", "add", "root", "--role", "admin"),
            )
            tokens["alice"] = await asyncio.to_thread(cli, "users", "token", "alice")
            for name, issuer, body in (
                ("api-key", "bootstrap", {"name": "api"}),
                ("api-by-admin", "admin", {"scopes": ["escalations:read"]}),
                ("api-expiring", "bootstrap", {"expiresIn": "1s"}),
            ):
                resp = await call("POST", "/api-keys", token=tokens[issuer], json_body=body)
                assert resp.status == 201, resp.body
                tokens[name] = resp.json()["key"]
                key_ids[name] = resp.json()["id"]
                allowed_in[name] = http.seen[-1]
            assert (await call("DELETE", f"/api-keys/{key_ids['api-by-admin']}", token=tokens["admin"])).status == 204

            # Tokens the server must refuse, without echoing them.
            tokens["mistyped"] = mistype(tokens["cli-key"])
            tokens["unknown"] = "ain_live_" + "Z" * 38
            for name in ("mistyped", "unknown", "alice-old", "api-by-admin"):
                (await call("GET", "/escalations", token=tokens[name])).problem(401, "unauthenticated")
            await eventually(lambda: http.get("/escalations", token=tokens["api-expiring"]).status == 401, what="expiry")

            # Callbacks: one delivered after a 500 and a 401, one failing for good, one refused.
            targets = {"ok": receiver.url, "fails": failing.url, "refused": refused_url()}
            ids = {}
            for name, url in targets.items():
                resume[name] = f"whsec-{name}-{hashlib.sha256(name.encode()).hexdigest()[:24]}"
                body = escalation_body("sec.open", resume={"mode": "webhook", "url": url, "secret": resume[name]})
                resp = await call("POST", "/escalations", token=tokens["cli-key"], json_body=body, headers={"Idempotency-Key": name})
                assert resp.status == 201, resp.body
                replay = await call("POST", "/escalations", token=tokens["api-key"], json_body=body, headers={"Idempotency-Key": name})
                assert replay.headers.get("idempotent-replayed") == "true"
                ids[name] = resp.json()["id"]
                decide = await call("POST", f"/escalations/{ids[name]}/decide", token=tokens["alice"], json_body={"choice": "approve"})
                assert decide.status == 200, decide.body
            resume["invalid"] = "whsec-invalid-create-0123456789"
            bad = escalation_body("sec.open", resume={"mode": "webhook", "url": "ftp://127.0.0.1/x", "secret": resume["invalid"]})
            assert (await call("POST", "/escalations", token=tokens["cli-key"], json_body=bad)).status == 422
            bad = escalation_body("sec.open", resume={"mode": "webhook", "url": "http://169.254.169.254/", "secret": resume["invalid"]})
            assert (await call("POST", "/escalations", token=tokens["cli-key"], json_body=bad)).status == 422

            async def settled() -> bool:
                states = []
                for esc_id in ids.values():
                    states.append((await call("GET", f"/escalations/{esc_id}/deliveries", token=tokens["bootstrap"])).json()["data"][0]["status"])
                return states == ["delivered", "failed", "failed"]

            # Retries on the wall clock (100 ms apart, for 1 s): a loaded machine needs a generous deadline.
            await eventually(settled, timeout_s=60, what="the three callbacks delivered, failed, failed")
            assert len(receiver.received) == 3

            # Read everything back, as every kind of caller.
            for token in ("bootstrap", "alice", "admin", "cli-narrow"):
                await call("GET", "/escalations?limit=200", token=tokens[token])
                for esc_id in ids.values():
                    await call("GET", f"/escalations/{esc_id}", token=tokens[token])
                    await call("GET", f"/escalations/{esc_id}/wait?timeout=0", token=tokens[token])
                    await call("GET", f"/escalations/{esc_id}/deliveries", token=tokens[token])
            await call("POST", f"/escalations/{ids['fails']}/deliveries/retry", token=tokens["bootstrap"])
            await call("GET", "/api-keys", token=tokens["admin"])
            await call("GET", "/metrics")
            await call("GET", "/openapi.json")
            streamer.cancel()
            await asyncio.gather(streamer, return_exceptions=True)
        await asyncio.gather(*(asyncio.to_thread(cli, *args) for args in (("keys", "list"), ("users", "list"), ("policy", "list"))))
        db_running = _db_bytes(proc.db)
    finally:
        await asyncio.to_thread(proc.stop)
        await receiver.stop()
        await failing.stop()
    db_stopped = _db_bytes(proc.db)

    every_secret = {**tokens, **{f"resume:{k}": v for k, v in resume.items()}}
    hashes = {f"hash:{k}": hashlib.sha256(v.encode()).hexdigest() for k, v in tokens.items()}
    # API responses: nothing, except each minted key in its own creation response.
    for body in http.seen:
        found = leaks(body, {**every_secret, **hashes})
        found = [name for name in found if allowed_in.get(name) != body]
        assert not found, (found, body[:300])
    assert not leaks(bytes(sse), {**every_secret, **hashes}), bytes(sse)[:300]
    assert b"escalation.decided" in sse  # the stream did carry the escalations
    # The server's output: only the bootstrap line, once.
    output = "".join(proc.output)
    assert "delivery" in output and "failed" in output, output[-2000:]  # the debug log did say things
    bootstrap_lines = [line for line in proc.output if tokens["bootstrap"] in line]
    assert len(bootstrap_lines) == 1 and "Bootstrap API key" in bootstrap_lines[0]
    rest = "".join(line for line in proc.output if line not in bootstrap_lines).encode()
    assert not leaks(rest, every_secret), leaks(rest, every_secret)
    # The admin CLI's listings.
    assert not leaks("\n".join(cli_output[-3:]).encode(), every_secret)
    # The database files, while running (WAL) and after a clean stop.
    for name, data in (*db_running.items(), *db_stopped.items()):
        assert not leaks(data, tokens), (name, leaks(data, tokens))
    assert any(resume["ok"].encode() in data for data in (*db_running.values(), *db_stopped.values())), (
        "the resume secret is stored to sign retries; if this changes, update docs/reliability.md"
    )


def _db_bytes(db: Path | str) -> dict[str, bytes]:
    if isinstance(db, str):
        return _table_bytes(db)
    files = [db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")]
    return {f.name: f.read_bytes() for f in files if f.exists()}


def _table_bytes(url: str) -> dict[str, bytes]:
    """Every row of every table of a PostgreSQL database, as text."""
    import psycopg

    with psycopg.connect(url) as conn:
        tables = [r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")]
        return {t: "\n".join(r[0] for r in conn.execute(f'SELECT t::text FROM "{t}" t')).encode() for t in tables}
