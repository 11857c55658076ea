"""Scan options: ``--exclude`` on the command line and ``[tool.escalated.contracts]``.

The table lives in the scanned project's ``pyproject.toml`` (the nearest one at
or above the scanned path)::

    [tool.escalated.contracts]
    include = ["src"]                  # only these (gitignore-style globs)
    exclude = ["legacy/", "**/gen_*.py"]
    sdk = { "mycorp.llm" = "openai" }  # extra SDK names: module or client class -> provider
    fail-on-tests = false              # calls in test folders never fail the scan by default
    max-file-kb = 2048                 # larger files are skipped with a note
    file-time-s = 30                   # analysis per file (in steps: module.STEPS_PER_S) before the rest is marked R7
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs

from escalated.contracts.calls import PROVIDERS
from escalated.errors import ConfigError

_KEYS = frozenset({"include", "exclude", "sdk", "fail-on-tests", "max-file-kb", "file-time-s"})


@attrs.frozen
class ScanOptions:
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    # Qualified name -> provider: a module used like ``openai`` or a class that builds a client.
    sdk: Mapping[str, str] = attrs.field(factory=dict)
    fail_on_tests: bool = False
    max_file_bytes: int = 2048 * 1024
    file_time_s: float = 30.0
    # Where the table came from, for messages ("pyproject.toml" or None).
    source: str | None = None

    def with_excludes(self, extra: Iterable[str]) -> ScanOptions:
        return attrs.evolve(self, exclude=(*self.exclude, *extra))


def load_options(path: Path) -> ScanOptions:
    """The nearest pyproject.toml's ``[tool.escalated.contracts]`` table, or the defaults."""
    start = (path if path.is_dir() else path.parent).resolve()
    for folder in (start, *start.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return _parse(candidate)
    return ScanOptions()


def _parse(file: Path) -> ScanOptions:
    try:
        document = tomllib.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{file.name}: cannot read [tool.escalated.contracts]: {exc}") from exc
    table = document.get("tool", {}).get("escalated", {}).get("contracts")
    if table is None:
        return ScanOptions()
    if not isinstance(table, dict):
        raise ConfigError(f"{file.name}: [tool.escalated.contracts] must be a table")
    unknown = sorted(set(table) - _KEYS)
    if unknown:
        raise ConfigError(f"{file.name}: unknown key(s) in [tool.escalated.contracts]: {', '.join(unknown)}")
    sdk = table.get("sdk", {})
    if not isinstance(sdk, dict) or any(not isinstance(v, str) or v not in PROVIDERS for v in sdk.values()):
        raise ConfigError(f"{file.name}: tool.escalated.contracts.sdk maps names to one of {', '.join(PROVIDERS)}")
    return ScanOptions(
        include=_globs(table, "include", file),
        exclude=_globs(table, "exclude", file),
        sdk={str(k): v for k, v in sorted(sdk.items())},
        fail_on_tests=_typed(table, "fail-on-tests", bool, False, file),
        max_file_bytes=int(_typed(table, "max-file-kb", int, 2048, file)) * 1024,
        file_time_s=float(_typed(table, "file-time-s", (int, float), 30.0, file)),
        source=file.name,
    )


def _globs(table: Mapping[str, Any], key: str, file: Path) -> tuple[str, ...]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ConfigError(f"{file.name}: tool.escalated.contracts.{key} must be a list of globs")
    return tuple(value)


def _typed(table: Mapping[str, Any], key: str, kind: type | tuple[type, ...], default: Any, file: Path) -> Any:
    value = table.get(key, default)
    wrong = not isinstance(value, kind)
    if kind is not bool:  # a number: also > 0, and a bool is not one here
        wrong = wrong or isinstance(value, bool) or not isinstance(value, int | float) or value <= 0
    if wrong:
        raise ConfigError(f"{file.name}: tool.escalated.contracts.{key} has the wrong type or value")
    return value
