"""The fault suite's figures, printed at the end of the run (and with ``-s`` as they come).

``ESCALATED_FAULTS_LONG=1`` runs the long version: many more kills and escalations.
"""

from __future__ import annotations

import os

import pytest

from tests.faults.checks import Figures

FIGURES: list[Figures] = []
LONG = os.environ.get("ESCALATED_FAULTS_LONG", "") not in ("", "0")


@pytest.fixture
def record_figures():
    def record(figures: Figures) -> None:
        FIGURES.append(figures)
        print("\n" + "\n".join(figures.lines()))

    return record


def pytest_terminal_summary(terminalreporter) -> None:
    if not FIGURES:
        return
    terminalreporter.section("escalated fault figures" + (" (long)" if LONG else ""))
    for figures in FIGURES:
        for line in figures.lines():
            terminalreporter.write_line(line)
