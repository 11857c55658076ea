"""The server's garbage-collector tuning, in a process of its own (freezing lasts a process's life)."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import gc
from escalated.commands.gctuning import YOUNG_THRESHOLD, tune_for_serving
before = gc.get_threshold()
tune_for_serving()
after = gc.get_threshold()
print(gc.get_freeze_count() > 1000, after[0] == YOUNG_THRESHOLD, after[1:] == before[1:])
"""


def test_start_up_objects_are_frozen_and_young_collections_are_rarer():
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60, check=True).stdout
    assert out.split() == ["True", "True", "True"]
