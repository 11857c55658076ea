"""``escalated.contracts.toml``: the accepted contracts of a project.

A contract is keyed by a stable id and located by file + enclosing qualified
function + ordinal, never by line, so code moving above a call does not
orphan its contract. Reading uses stdlib ``tomllib``; writing uses the small
writer below because the format is fixed and a TOML dependency would be
heavier than the thirty lines it replaces.

The guard runtime imports this module at run time inside agents, so it stays
free of libcst, click and aiohttp.
"""

from __future__ import annotations

import math
import re
import threading
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol

import attrs

from escalated.guard.modes import MODE_NAMES
from escalated.errors import ConfigError

CONTRACTS_FILENAME = "escalated.contracts.toml"
FORMAT_VERSION = 1

_POLICY_KEY = re.compile(r"^[a-z0-9][a-z0-9_-]*(\.[a-z0-9][a-z0-9_-]*)*$")
_CHOICE_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")
_FIELDS = (
    "path",
    "function",
    "index",
    "provider",
    "api",
    "mode",
    "rules",
    "policy",
    "question",
    "choices",
    "approve_choices",
    "sample_rate",
)


class ContractFileError(ConfigError):
    code, title = "contract_file_invalid", "Invalid contracts file"


class CallLike(Protocol):
    """What ``ContractSet.match`` needs of a discovered call (model.LlmCall)."""

    # Read-only: a frozen LlmCall is one.
    @property
    def provider(self) -> str: ...
    @property
    def api(self) -> str: ...
    @property
    def function(self) -> str: ...
    @property
    def index(self) -> int: ...
    @property
    def key(self) -> tuple[str, str, int]: ...


@attrs.frozen
class Choice:
    id: str
    label: str


@attrs.frozen(kw_only=True)
class Contract:
    id: str
    path: str
    function: str
    index: int
    provider: str
    api: str
    mode: str
    rules: tuple[str, ...] = ()
    policy: str
    question: str
    choices: tuple[Choice, ...]
    approve_choices: tuple[str, ...]
    # Only meaningful for mode "sampled"; None otherwise.
    sample_rate: float | None = None

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.path, self.function, self.index)

    @property
    def choice_ids(self) -> tuple[str, ...]:
        return tuple(c.id for c in self.choices)


@attrs.frozen
class ContractSet:
    contracts: Mapping[str, Contract] = attrs.field(factory=dict, converter=lambda m: dict(m))

    def match(self, call: CallLike) -> Contract | None:
        """The contract for ``call``: same path, function, index, provider and API."""
        for contract in self.contracts.values():
            if contract.key == call.key and contract.provider == call.provider and contract.api == call.api:
                return contract
        return None

    def get(self, contract_id: str) -> Contract | None:
        return self.contracts.get(contract_id)

    def with_contract(self, contract: Contract) -> ContractSet:
        """A copy with ``contract`` added, replacing any contract of the same id or location."""
        kept = {cid: c for cid, c in self.contracts.items() if cid != contract.id and c.key != contract.key}
        return ContractSet({**kept, contract.id: contract})

    def __len__(self) -> int:
        return len(self.contracts)


def contracts_path(root: Path) -> Path:
    return Path(root) / CONTRACTS_FILENAME


def find_contracts_file(start: Path) -> Path | None:
    """The nearest ``escalated.contracts.toml`` in ``start`` or a parent directory."""
    start = Path(start).resolve()
    for directory in (start, *start.parents) if start.is_dir() else start.parents:
        candidate = directory / CONTRACTS_FILENAME
        if candidate.is_file():
            return candidate
    return None


def load_contracts(root: Path) -> ContractSet:
    """The contracts of the project at ``root``; an empty set when it has no file yet."""
    path = contracts_path(root)
    if not path.exists():
        return ContractSet()
    return load_contracts_file(path)


def load_contracts_file(path: Path) -> ContractSet:
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ContractFileError(f"{path}: {exc}") from exc
    return parse_contracts(data, source=str(path))


def parse_contracts(data: Mapping[str, Any], *, source: str = CONTRACTS_FILENAME) -> ContractSet:
    version = data.get("version", FORMAT_VERSION)
    if version != FORMAT_VERSION:
        raise ContractFileError(f"{source}: unsupported version {version!r} (expected {FORMAT_VERSION})")
    unknown = set(data) - {"version", "contracts"}
    if unknown:
        raise ContractFileError(f"{source}: unknown top-level keys: {', '.join(sorted(unknown))}")
    table = data.get("contracts", {})
    if not isinstance(table, dict):
        raise ContractFileError(f"{source}: [contracts] must be a table")
    contracts = {cid: _parse_contract(cid, raw, source=source) for cid, raw in table.items()}
    seen: dict[tuple[str, str, int], str] = {}
    for cid, contract in contracts.items():
        if contract.key in seen:
            raise ContractFileError(f"{source}: contracts {seen[contract.key]!r} and {cid!r} locate the same call")
        seen[contract.key] = cid
    return ContractSet(contracts)


def _parse_contract(cid: str, raw: Any, *, source: str) -> Contract:
    where = f"{source}: contracts.{cid!r}"
    if not isinstance(raw, dict):
        raise ContractFileError(f"{where} must be a table")
    unknown = set(raw) - set(_FIELDS)
    if unknown:
        raise ContractFileError(f"{where}: unknown keys: {', '.join(sorted(unknown))}")
    missing = [f for f in _FIELDS if f not in raw and f not in ("rules", "sample_rate")]
    if missing:
        raise ContractFileError(f"{where}: missing keys: {', '.join(missing)}")
    try:
        contract = Contract(
            id=cid,
            path=_str(raw, "path"),
            function=_str(raw, "function"),
            index=_int(raw, "index"),
            provider=_str(raw, "provider"),
            api=_str(raw, "api"),
            mode=_str(raw, "mode"),
            rules=_strs(raw, "rules"),
            policy=_str(raw, "policy"),
            question=_str(raw, "question"),
            choices=_choices(raw["choices"]),
            approve_choices=_strs(raw, "approve_choices"),
            sample_rate=_rate(raw.get("sample_rate")),
        )
    except TypeError as exc:
        raise ContractFileError(f"{where}: {exc}") from exc
    problems = validate_contract(contract)
    if problems:
        raise ContractFileError(f"{where}: {'; '.join(problems)}")
    return contract


def validate_contract(contract: Contract) -> list[str]:
    """Every problem with ``contract``, empty when it is usable (also used for edited drafts)."""
    problems = []
    if not contract.id.strip():
        problems.append("id is empty")
    if contract.mode not in MODE_NAMES:
        problems.append(f"mode {contract.mode!r} is not one of {', '.join(MODE_NAMES)}")
    if not _POLICY_KEY.match(contract.policy):
        problems.append(f"policy {contract.policy!r} is not a dotted lower-case key")
    if contract.index < 0:
        problems.append("index must be >= 0")
    if not contract.question.strip():
        problems.append("question is empty")
    ids = contract.choice_ids
    if not 1 <= len(ids) <= 20:
        problems.append("choices must hold 1 to 20 items")
    if len(set(ids)) != len(ids):
        problems.append("choice ids must be unique")
    problems += [f"choice id {i!r} is not valid" for i in ids if not _CHOICE_ID.match(i)]
    problems += [f"approve choice {a!r} is not among the choices" for a in contract.approve_choices if a not in ids]
    if contract.mode == "required" and not contract.approve_choices:
        problems.append("required mode needs at least one approve choice, or no result could ever be used")
    if contract.mode == "sampled":
        if contract.sample_rate is None or not 0 < contract.sample_rate <= 1:
            problems.append("sampled mode needs 0 < sample_rate <= 1")
    elif contract.sample_rate is not None:
        problems.append("sample_rate is only for mode 'sampled'")
    return problems


# Each names the key it reads: a TOML value of the wrong type is said as such,
# never as the Python error of using it ("'int' object is not iterable").
def _str(raw: Mapping[str, Any], key: str) -> str:
    value = raw[key]
    if not isinstance(value, str):
        raise TypeError(f"{key} must be a string, got {value!r}")
    return value


def _int(raw: Mapping[str, Any], key: str) -> int:
    value = raw[key]
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{key} must be an integer, got {value!r}")
    return value


def _strs(raw: Mapping[str, Any], key: str) -> tuple[str, ...]:
    """A list of strings (a bare string would be read as its letters)."""
    value = raw.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise TypeError(f"{key} must be a list of strings, got {value!r}")
    return tuple(value)


def _choices(value: Any) -> tuple[Choice, ...]:
    if not isinstance(value, list) or not all(
        isinstance(c, dict) and set(c) == {"id", "label"} and all(isinstance(v, str) for v in c.values()) for c in value
    ):
        raise TypeError(f'choices must be a list of {{ id = "...", label = "..." }} tables, got {value!r}')
    return tuple(Choice(id=c["id"], label=c["label"]) for c in value)


def _rate(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise TypeError(f"sample_rate must be a number, got {value!r}")
    return float(value)


class ContractCache:
    """Run-time lookup for the guard: the nearest file per calling module, parsed once per version.

    Keyed on the file's mtime, so an edited contracts file is seen without a
    restart; thread-safe because guards run on any thread.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._file_for: dict[str, Path | None] = {}
        self._loaded: dict[Path, tuple[int, ContractSet]] = {}

    def file_for(self, caller_file: str, *, explicit: str | None = None) -> Path | None:
        if explicit:
            path = Path(explicit)
            return path / CONTRACTS_FILENAME if path.is_dir() else path
        with self._lock:
            if caller_file not in self._file_for:
                start = Path(caller_file) if Path(caller_file).exists() else Path.cwd()
                self._file_for[caller_file] = find_contracts_file(start)
            return self._file_for[caller_file]

    def load(self, path: Path) -> ContractSet:
        try:
            mtime_ns = path.stat().st_mtime_ns
        except OSError as exc:
            raise ContractFileError(f"cannot read {path}: {exc}") from exc
        with self._lock:
            cached = self._loaded.get(path)
            if cached is None or cached[0] != mtime_ns:
                cached = (mtime_ns, load_contracts_file(path))
                self._loaded[path] = cached
            return cached[1]


# -- writing ---------------------------------------------------------------


def save_contracts(root: Path, contracts: ContractSet) -> Path:
    """Write the contracts file atomically (a reader never sees half a file)."""
    path = contracts_path(root)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(dump_contracts(contracts), encoding="utf-8")
    tmp.replace(path)
    return path


def dump_contracts(contracts: ContractSet) -> str:
    lines = [f"version = {FORMAT_VERSION}"]
    for cid in sorted(contracts.contracts):
        lines += ["", f"[contracts.{toml_string(cid)}]", *_contract_lines(contracts.contracts[cid])]
    return "\n".join(lines) + "\n"


def _contract_lines(c: Contract) -> list[str]:
    choices = ", ".join(f"{{ id = {toml_string(ch.id)}, label = {toml_string(ch.label)} }}" for ch in c.choices)
    lines = [
        f"path = {toml_string(c.path)}",
        f"function = {toml_string(c.function)}",
        f"index = {c.index}",
        f"provider = {toml_string(c.provider)}",
        f"api = {toml_string(c.api)}",
        f"mode = {toml_string(c.mode)}",
        f"rules = {_str_list(c.rules)}",
        f"policy = {toml_string(c.policy)}",
        f"question = {toml_string(c.question)}",
        f"choices = [{choices}]",
        f"approve_choices = {_str_list(c.approve_choices)}",
    ]
    if c.sample_rate is not None:
        lines.append(f"sample_rate = {c.sample_rate!r}")
    return lines


def _str_list(values: Iterable[str]) -> str:
    return "[" + ", ".join(toml_string(v) for v in values) + "]"


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def toml_string(value: str) -> str:
    """A TOML basic string; control characters are escaped so any text round-trips."""
    out = []
    for ch in value:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'
