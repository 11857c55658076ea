"""Which files a scan reads: Python files under a root, minus ignored ones.

Honours ``.gitignore`` files (root and nested), always skips virtualenvs,
``site-packages``, VCS and cache folders, and yields paths in sorted order so
every report is byte-identical across machines. A cheap text check
(``might_call_llm``) lets discovery skip most files without parsing them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import attrs

# Folders that are never the user's own agent code.
SKIP_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", ".tox", ".nox", ".venv", "venv", "env", ".env", "virtualenv",
        "site-packages", "dist-packages", "node_modules", "__pycache__", ".mypy_cache",
        ".pytest_cache", ".ruff_cache", "build", "dist", ".eggs", ".ipynb_checkpoints",
    }
)  # fmt: skip

# Any of these in the text means the file may construct or call an LLM client.
# Shapes of the APIs are included too, because clients are often built in one
# module and used in another ("from .llm import client").
_LLM_HINT = re.compile(
    rb"openai|anthropic|litellm|genai|generativeai|vertexai|langchain|langgraph|pydantic_ai|llama_index|instructor|crewai|smolagents"
    rb"|completions\.create|messages\.(?:create|stream)|generate_content|\.a?invoke\("
    rb"|\.a?stream\(|responses\.create|Runner\.run|acompletion\(|completion\("
)


def might_call_llm(data: bytes) -> bool:
    return _LLM_HINT.search(data) is not None


@attrs.frozen
class _Pattern:
    regex: re.Pattern[str]
    negated: bool
    dir_only: bool


def _compile(line: str) -> _Pattern | None:
    line = line.rstrip("\n").rstrip("\r")
    if not line.strip() or line.startswith("#"):
        return None
    line = line.rstrip(" ")
    negated = line.startswith("!")
    if negated:
        line = line[1:]
    if line.startswith("\\"):
        line = line[1:]
    dir_only = line.endswith("/")
    line = line.rstrip("/")
    # A slash anywhere but the end anchors the pattern to the .gitignore's folder.
    anchored = "/" in line
    line = line.lstrip("/")
    regex = "".join(_translate(line))
    prefix = "" if anchored else "(?:.*/)?"
    return _Pattern(re.compile(f"^{prefix}{regex}$"), negated, dir_only)


def _translate(glob: str) -> Iterator[str]:
    i = 0
    while i < len(glob):
        if glob.startswith("**/", i):
            yield "(?:.*/)?"
            i += 3
        elif glob.startswith("/**", i) and i + 3 == len(glob):
            yield "/.*"
            i += 3
        elif glob.startswith("**", i):
            yield ".*"
            i += 2
        elif glob[i] == "*":
            yield "[^/]*"
            i += 1
        elif glob[i] == "?":
            yield "[^/]"
            i += 1
        elif glob[i] == "[":
            end = glob.find("]", i + 1)
            if end == -1:
                yield re.escape(glob[i])
                i += 1
            else:
                body = glob[i + 1 : end].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                yield f"[{body}]"
                i = end + 1
        else:
            yield re.escape(glob[i])
            i += 1


@attrs.frozen
class IgnoreRules:
    """The patterns of one .gitignore, relative to the folder holding it."""

    base: str  # POSIX path of the folder, relative to the scan root ("" = root)
    patterns: tuple[_Pattern, ...]
    # For a .gitignore above the scan root: the scan root relative to its folder.
    above: str = ""

    @classmethod
    def read(cls, folder: Path, *, base: str, above: str = "") -> IgnoreRules | None:
        try:
            text = (folder / ".gitignore").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
        patterns = tuple(p for p in map(_compile, text.splitlines()) if p is not None)
        return cls(base, patterns, above) if patterns else None

    def verdict(self, rel: str, *, is_dir: bool) -> bool | None:
        """True = ignored, False = re-included, None = no pattern speaks."""
        if self.above:
            rel = f"{self.above}/{rel}"
        elif self.base:
            if not rel.startswith(self.base + "/"):
                return None
            rel = rel[len(self.base) + 1 :]
        result = None
        for pattern in self.patterns:
            if pattern.dir_only and not is_dir:
                continue
            if pattern.regex.match(rel):
                result = not pattern.negated
        return result


def _ignored(rules: list[IgnoreRules], rel: str, *, is_dir: bool) -> bool:
    ignored = False
    for rule in rules:  # outer first, so nested .gitignore files win
        verdict = rule.verdict(rel, is_dir=is_dir)
        if verdict is not None:
            ignored = verdict
    return ignored


def iter_files(root: Path) -> Iterator[str]:
    """POSIX paths relative to ``root`` of the files to scan, sorted."""
    if root.is_file():
        yield root.name
        return
    yield from _walk(root, "", _rules_above(root))


def _rules_above(root: Path) -> list[IgnoreRules]:
    """The .gitignore files between the repository root and ``root`` (scanning a subfolder)."""
    root = root.resolve()
    chain: list[Path] = []
    for folder in root.parents:
        chain.append(folder)
        if (folder / ".git").exists():
            break
    else:
        return []  # not inside a repository: only the tree's own files count
    rules = []
    for folder in reversed(chain):
        found = IgnoreRules.read(folder, base="", above=root.relative_to(folder).as_posix())
        if found is not None:
            rules.append(found)
    return rules


def _walk(folder: Path, rel: str, rules: list[IgnoreRules]) -> Iterator[str]:
    own = IgnoreRules.read(folder, base=rel)
    if own is not None:
        rules = [*rules, own]
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        child = f"{rel}/{entry.name}" if rel else entry.name
        if entry.is_dir(follow_symlinks=False):
            if entry.name in SKIP_DIRS or _is_virtualenv(entry.path):
                continue
            if not _ignored(rules, child, is_dir=True):
                yield from _walk(Path(entry.path), child, rules)
        elif entry.name.endswith((".py", ".ipynb")) and entry.is_file():
            if not _ignored(rules, child, is_dir=False):
                yield child


def _is_virtualenv(path: str) -> bool:
    # A virtualenv under any name has this marker file.
    return os.path.exists(os.path.join(path, "pyvenv.cfg"))
