"""Each adapter without its framework: an ImportError that names the extra to install."""

from __future__ import annotations

import importlib
import re
import sys

import pytest

ADAPTERS = [
    ("escalated.adapters.openai_agents", "agents", "escalated[openai-agents]"),
    ("escalated.adapters.pydantic_ai", "pydantic_ai", "escalated[pydantic-ai]"),
    ("escalated.adapters.langgraph", "langgraph", "escalated[langgraph]"),
    ("escalated.adapters.crewai", "crewai", "escalated[crewai]"),
    ("escalated.adapters.agno", "agno", "escalated[agno]"),
    ("escalated.adapters.agent_framework", "agent_framework", "escalated[agent-framework]"),
]


@pytest.mark.parametrize(("adapter", "framework", "extra"), ADAPTERS, ids=[a[2] for a in ADAPTERS])
def test_an_adapter_without_its_framework_names_the_extra(monkeypatch, adapter, framework, extra):
    # None in sys.modules makes the framework's import fail as if it were not installed
    # (its submodules too: another test may have imported them already).
    for name in [framework, *(m for m in sys.modules if m.startswith(f"{framework}."))]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.delitem(sys.modules, adapter, raising=False)
    with pytest.raises(ImportError, match=re.escape(f"pip install '{extra}'")):
        importlib.import_module(adapter)
