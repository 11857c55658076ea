"""The one-file build: zipapp.sh makes dist/escalated.pyz, and a bare Python
(no venv, no aiohttp installed) runs the whole loop through it: serve,
policy set, create, decide, and the signed callback at a real receiver.

Building takes ~30-40 s (pip resolves the dependencies into the zip).
Set ESCALATED_SKIP_ZIPAPP=1 to skip; an up-to-date dist/escalated.pyz
(newer than every source file) is reused instead of building.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import aiohttp
import pytest

from escalated.agent.receiver import make_receiver_app, start_receiver

ROOT = Path(__file__).resolve().parents[2]
SECRET = "whsec_zipapp_smoke"

pytestmark = pytest.mark.skipif(
    os.environ.get("ESCALATED_SKIP_ZIPAPP") == "1", reason="ESCALATED_SKIP_ZIPAPP=1"
)


def _bare_python() -> str:
    """The interpreter the venv was made from: it has none of our dependencies."""
    return getattr(sys, "_base_executable", None) or sys.executable


def _newest_source_mtime() -> float:
    # The .sql files too: a new migration must reach the pyz it runs.
    files = [ROOT / "pyproject.toml", ROOT / "zipapp.sh", *(ROOT / "escalated").rglob("*.py"), *(ROOT / "escalated").rglob("*.sql")]
    return max(f.stat().st_mtime for f in files)


@pytest.fixture(scope="module")
def pyz(tmp_path_factory) -> Path:
    built = ROOT / "dist" / "escalated.pyz"
    if built.exists() and built.stat().st_mtime > _newest_source_mtime():
        return built
    out = tmp_path_factory.mktemp("pyz") / "escalated.pyz"
    proc = subprocess.run(
        ["bash", str(ROOT / "zipapp.sh"), str(out)], capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHON": sys.executable},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def _run_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    # A private extraction cache: this run extracts like a first run would.
    return {**env, "SHIV_ROOT": str(tmp_path / "shiv"), "ESCALATED_DB": str(tmp_path / "smoke.db"), "PYTHONUNBUFFERED": "1"}


def _pyz_cli(pyz: Path, env: dict[str, str], *args: str) -> str:
    proc = subprocess.run([_bare_python(), "-I", str(pyz), *args], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def _start_server(pyz: Path, env: dict[str, str], log: Path) -> tuple[subprocess.Popen, str, str]:
    # Output goes to a file, not a pipe: nobody has to keep draining it.
    with log.open("w") as out:
        proc = subprocess.Popen(
            [_bare_python(), "-I", str(pyz), "serve", "--port", "0"], env=env, stdout=out, stderr=subprocess.STDOUT
        )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        text = log.read_text()
        key, url = re.search(r"(ain_live_\w+)", text), re.search(r"Listening on (http://\S+)", text)
        if key and url:
            return proc, url.group(1), key.group(1)
        time.sleep(0.05)
    proc.kill()
    proc.wait()
    raise AssertionError("pyz server did not start:\n" + log.read_text())


def test_bare_python_cannot_import_the_dependencies():
    """Guards the smoke test's meaning: without the pyz, nothing is there."""
    proc = subprocess.run([_bare_python(), "-I", "-c", "import aiohttp"], capture_output=True)
    if proc.returncode == 0:
        pytest.skip("the base interpreter has aiohttp installed; the pyz is still exercised below")


async def test_pyz_serves_decides_and_delivers_a_signed_callback(pyz, tmp_path):
    env = _run_env(tmp_path)
    assert "serve" in await asyncio.to_thread(_pyz_cli, pyz, env, "--help")
    await asyncio.to_thread(_pyz_cli, pyz, env, "policy", "set", "smoke.check")
    server, url, key = await asyncio.to_thread(_start_server, pyz, env, tmp_path / "server.log")
    received = asyncio.Queue()
    try:
        async with await start_receiver(make_receiver_app(received.put, secret=SECRET)) as receiver:
            headers = {"Authorization": f"Bearer {key}"}
            body = {
                "policy": "smoke.check", "agentId": "smoke", "runId": "run-1",
                "subject": {"type": "t", "id": "1", "label": "one"}, "question": "ok?", "evidence": [],
                "choices": [{"id": "yes", "label": "Yes"}, {"id": "no", "label": "No"}],
                "resume": {"mode": "webhook", "url": receiver.url + "/resume", "secret": SECRET},
            }  # fmt: skip
            async with aiohttp.ClientSession(headers=headers) as http:
                async with http.post(url + "/escalations", json=body) as resp:
                    assert resp.status == 201, await resp.text()
                    esc_id = (await resp.json())["id"]
                async with http.post(f"{url}/escalations/{esc_id}/decide", json={"choice": "yes"}) as resp:
                    assert resp.status == 200, await resp.text()
            callback = await asyncio.wait_for(received.get(), 30)
    finally:
        server.send_signal(signal.SIGTERM)
        await asyncio.to_thread(server.wait, 15)
    assert (callback.escalation_id, callback.choice, callback.resolved_by) == (esc_id, "yes", "human")
    assert callback.event == "escalation.decided"


def _restamped(pyz: Path, out: Path, *, python: tuple[int, int]) -> Path:
    """A copy of ``pyz`` whose build stamp names another Python (zipapp.sh writes the real one)."""
    raw = pyz.read_bytes()
    shebang = raw[: raw.index(b"PK\x03\x04")]
    with zipfile.ZipFile(pyz) as src, out.open("wb") as f:
        f.write(shebang)
        with zipfile.ZipFile(f, "w", compression=zipfile.ZIP_DEFLATED) as dst:
            for item in src.infolist():
                data = src.read(item)
                if item.filename.endswith("escalated/_built_for.py"):
                    stamp = dict(line.split(" = ", 1) for line in data.decode().splitlines())
                    data = f"PYTHON = {python!r}\nPLATFORM = {stamp['PLATFORM']}\n".encode()
                dst.writestr(item, data)
    return out


def test_pyz_records_the_python_it_was_built_for(pyz):
    with zipfile.ZipFile(pyz) as z:
        name = next(n for n in z.namelist() if n.endswith("escalated/_built_for.py"))
        assert f"PYTHON = {tuple(sys.version_info[:2])!r}" in z.read(name).decode()


def test_pyz_on_another_python_says_which_python_it_was_built_for(pyz, tmp_path):
    other = _restamped(pyz, tmp_path / "other.pyz", python=(3, 99))
    proc = subprocess.run(
        [_bare_python(), "-I", str(other), "keys", "list"], env=_run_env(tmp_path), capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "built for Python 3.99" in lines[0], proc.stderr
    assert f"this is Python {sys.version_info[0]}.{sys.version_info[1]}" in lines[0]
    assert "Traceback" not in proc.stderr
