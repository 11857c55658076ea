"""The fault suite's figures, printed at the end of the run (and with ``-s`` as they come).

``ESCALATED_FAULTS_LONG=1`` runs the long version: many more kills and escalations.
The figures travel with the test's report (``user_properties``): under
pytest-xdist the test runs in a worker, whose terminal is not the run's, and
tests/conftest.py prints them in the run's summary.
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterator

import pytest

from tests.faults.checks import Figures
from tests.faults.receiver import FlakyReceiver
from tests.support.tinydisk import TinyDisk, mounted_tiny_disk

LONG = os.environ.get("ESCALATED_FAULTS_LONG", "") not in ("", "0")
FIGURES_KEY = "escalated_fault_figures"  # tests/conftest.py reads it (_FIGURES_KEY)


@pytest.fixture
def record_figures(request):
    def record(figures: Figures) -> None:
        lines = figures.lines()
        request.node.user_properties.append((FIGURES_KEY, lines))
        print("\n" + "\n".join(lines))

    return record


@pytest.fixture
def rng() -> random.Random:
    """The loop's randomness; ``ESCALATED_FAULTS_SEED`` replays a run."""
    seed = int(os.environ.get("ESCALATED_FAULTS_SEED", "0")) or random.randrange(1, 2**31)
    print(f"\nESCALATED_FAULTS_SEED={seed}")
    return random.Random(seed)


@pytest.fixture
async def flaky_receiver(rng):
    """A receiver that fails, hangs and refuses connections at random (tests/faults/receiver.py)."""
    receiver = await FlakyReceiver(rng=rng).start()
    yield receiver
    await receiver.close()


@pytest.fixture
def tiny_disk(tmp_path) -> Iterator[TinyDisk]:
    """A 16 MB tmpfs the test can fill (skipped where mounting needs root)."""
    yield from mounted_tiny_disk(tmp_path)
