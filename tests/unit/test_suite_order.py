"""tests/conftest.py's LONG_FILES name files that exist, and start the run."""

from __future__ import annotations

import fnmatch
from pathlib import Path

from tests.conftest import LONG_FILES, _file_order

ROOT = Path(__file__).resolve().parents[2]


def test_every_long_file_pattern_matches_a_test_file():
    files = [p.relative_to(ROOT).as_posix() for p in (ROOT / "tests").rglob("test_*.py")]
    assert [pattern for pattern in LONG_FILES if not fnmatch.filter(files, pattern)] == []


def test_long_files_come_first_in_their_order_then_the_most_tests_first():
    counts = {"tests/unit/test_many.py": 50, "tests/unit/test_few.py": 2, LONG_FILES[1]: 1, LONG_FILES[0]: 1}
    ordered = sorted(counts, key=lambda path: _file_order(path, counts))
    assert ordered == [LONG_FILES[0], LONG_FILES[1], "tests/unit/test_many.py", "tests/unit/test_few.py"]
