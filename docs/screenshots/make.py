"""Regenerate docs/screenshots/*.svg: ``python docs/screenshots/make.py``.

The pictures use the demo's sample escalations in memory with a frozen
clock, so they change only when the UI does.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from escalated.timeutil import parse_timestamp_ms
from escalated.tui.app import ReviewApp
from memory_backend import MemoryBackend, resources  # beside this script

HERE = Path(__file__).parent
FROZEN_MS = parse_timestamp_ms("2026-11-22T10:15:00.000Z")
SIZE = (80, 24)


def sample_app() -> ReviewApp:
    clock = lambda: FROZEN_MS  # noqa: E731 - a frozen clock is the point
    return ReviewApp(MemoryBackend(resources(FROZEN_MS), clock=clock), clock=clock, stream=False)


async def shoot(name: str, *keys: str) -> None:
    app = sample_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.wait_for_scheduled_animations()
        await pilot.pause()
        await pilot.press(*keys)
        await pilot.wait_for_scheduled_animations()
        await pilot.pause()
        app.save_screenshot(str(HERE / f"{name}.svg"))


async def main() -> None:
    await shoot("inbox")
    # The refund sample (response fields) sorts second by deadline.
    await shoot("decide", "down", "d")
    await shoot("detail", "enter")
    await shoot("help", "question_mark")


if __name__ == "__main__":
    asyncio.run(main())
