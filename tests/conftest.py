from __future__ import annotations

import pytest

from tests.support.server import ServerProcess, start_server


@pytest.fixture
def server(tmp_path) -> ServerProcess:
    """A real ``escalated serve`` subprocess on a fresh database."""
    proc = start_server(tmp_path)
    yield proc
    proc.stop()
