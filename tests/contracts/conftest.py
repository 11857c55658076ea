"""Shared by the contract generator's tests."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def no_editor(monkeypatch) -> None:
    """``init``'s edit action opens $VISUAL or $EDITOR: a developer's own
    editor must never open in the middle of a test run."""
    monkeypatch.delenv("EDITOR", raising=False)
    monkeypatch.delenv("VISUAL", raising=False)
