"""A real headless Chromium (Debian's), driven through Debian's chromedriver.

The driver's path is always given, so Selenium Manager never looks for or
downloads anything. Outside CI a machine without chromium skips these
tests; in CI (CI=true) a missing browser is a failure, never a skip.
"""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
)


def require_browser() -> None:
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not os.access(p, os.X_OK)]
    if not missing:
        return
    message = f"no browser for the web app's browser tests: {', '.join(missing)} missing (apt-get install chromium chromium-driver)"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


def start_chromium(*, width: int = 1100, height: int = 900, time_zone: str | None = None):
    """``time_zone`` (an IANA name) is the browser's own, as a reviewer abroad has it."""
    require_browser()
    os.environ["SE_OFFLINE"] = "true"  # belt and braces: Selenium Manager must never go online
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    profile = tempfile.mkdtemp(prefix="escalated-chromium-")
    options.add_argument(f"--user-data-dir={profile}")
    options.add_argument(f"--window-size={width},{height}")
    env = {**os.environ, "TZ": time_zone} if time_zone else None
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER, env=env), options=options)
    driver.set_page_load_timeout(30)
    driver.escalated_profile = profile
    return driver


def stop_chromium(driver) -> None:
    try:
        driver.quit()
    finally:
        shutil.rmtree(driver.escalated_profile, ignore_errors=True)
