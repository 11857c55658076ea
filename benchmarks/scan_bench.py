"""How fast ``escalated contracts scan`` reads a code base, beside semgrep and ``ast.parse``.

    python benchmarks/scan_bench.py                 # a generated 920-file, ~424k-line tree
    python benchmarks/scan_bench.py --files N       # a generated tree of N files
    python benchmarks/scan_bench.py PATH            # an existing tree instead
    python benchmarks/scan_bench.py --semgrep BIN   # also time semgrep (local rules, no downloads)
    python benchmarks/scan_bench.py --import-share 1  # every file imports an SDK's types (the pre-check skips them)
    python benchmarks/scan_bench.py --real-shape    # every file imports the SDK and has call-shaped text: every one is parsed

The generated tree is deterministic and shaped like a real agent repository:
most files are ordinary application code (~460 lines each: dataclasses,
parsing, loops, string handling), one in ten is an agent module taken from
the real-shaped corpus in tests/contracts/corpus (clients, tools, hand-offs,
wrappers, partials), and packages import each other. Each measurement runs in
its own process, so its peak RSS is its own: the scan (walk, text pre-check,
parse of the candidates and the project modules they import, analysis) and,
for comparison, ``ast.parse`` of every file, and semgrep with a local rule
file for the same LLM-call shapes (``--metrics=off``, nothing fetched).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "contracts" / "corpus"

BLOCK = '''

@dataclasses.dataclass
class Record{n}_{k}:
    id: int
    name: str
    tags: list[str]
    score: float = 0.0

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self))

    def describe(self) -> str:
        parts = [f"{{self.name}} ({{self.id}})"]
        for tag in sorted(self.tags):
            if tag.startswith("_"):
                continue
            parts.append(tag.strip().lower())
        return ", ".join(parts)


def load_{n}_{k}(text: str) -> list[Record{n}_{k}]:
    rows = json.loads(text)
    out = []
    for row in rows:
        if not row.get("name"):
            continue
        record = Record{n}_{k}(id=row["id"], name=row["name"], tags=list(row.get("tags", [])))
        record.score = sum(len(t) for t in record.tags) / max(len(record.tags), 1)
        out.append(record)
    return out


def summarise_{n}_{k}(records: list[Record{n}_{k}], *, limit: int = 10) -> dict[str, float]:
    totals: dict[str, float] = {{}}
    for record in records[:limit]:
        for tag in record.tags:
            totals[tag] = totals.get(tag, 0.0) + record.score
    return dict(sorted(totals.items(), key=lambda item: (-item[1], item[0])))
'''
HEADER = '''"""Ordinary application code: records, parsing, summaries; no model calls."""
from __future__ import annotations

import dataclasses
import json
'''


# What a real agent repository's ordinary modules look like (openai-agents-python: nearly every
# file imports the SDK, names ``openai`` through its types, and calls something named like its API),
# so the pre-check parses every one. The ``openai`` import matters: the pre-check's SDK names are the
# provider packages' (``agents`` alone is too common a word), and without it only the import was
# there, so all but the corpus modules were left to Python's syntax check.
REAL_SHAPE = '''
from agents import Agent, function_tool
from openai.types.responses import ResponseInputItemParam


def describe_agent_{n}(name: str) -> Agent:
    return Agent(name=name, instructions="summarise the records")


def create_records_{n}(rows: list[dict]) -> list[Record{n}_0]:
    return [Record{n}_0.create_from_row(row) for row in rows]
'''


def generate(root: Path, *, files: int, import_share: float = 0.0, real_shape: bool = False) -> None:
    """``import_share``: the share of plain files that import an SDK's types (the pre-check skips them);
    ``real_shape``: every plain file imports an SDK and has call-shaped text, so every one is parsed."""
    samples = sorted(p for p in CORPUS.rglob("*.py") if "/golden/" not in p.as_posix())
    for n in range(files):
        folder = root / f"pkg{n % 20:02d}" / f"mod{n % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        for parent in (folder, folder.parent):
            (parent / "__init__.py").touch()
        if n % 10 == 0:
            text = samples[(n // 10) % len(samples)].read_text()
        else:
            imports = "import openai  # the SDK's types\n" if (n * 7919) % 100 < import_share * 100 else ""
            text = HEADER + imports + "".join(BLOCK.format(n=n, k=k) for k in range(12))
            if real_shape:
                text += REAL_SHAPE.format(n=n)
        (folder / f"file_{n:05d}.py").write_text(text)


SEMGREP_RULES = """rules:
  - id: llm-call
    languages: [python]
    severity: WARNING
    message: LLM call
    pattern-either:
      - pattern: $C.chat.completions.create(...)
      - pattern: $C.responses.create(...)
      - pattern: $C.messages.create(...)
      - pattern: $C.messages.stream(...)
      - pattern: $C.models.generate_content(...)
      - pattern: litellm.completion(...)
      - pattern: litellm.acompletion(...)
      - pattern: Runner.run(...)
      - pattern: Runner.run_sync(...)
      - pattern: $M.invoke(...)
      - pattern: $M.ainvoke(...)
"""

_CHILD = {
    "scan": "from pathlib import Path; import sys; from escalated.contracts.scan.discovery import scan_tree; "
    "r = scan_tree(Path(sys.argv[1])); print(len(r.calls), r.files_scanned, r.lines_scanned)",
    # A file this Python cannot parse (newer syntax) is counted, not fatal: real trees have some.
    "ast": "import ast, sys; from pathlib import Path; "
    "ps = sorted(Path(sys.argv[1]).rglob('*.py')); bad = 0\nfor p in ps:\n"
    "    try: ast.parse(p.read_bytes())\n    except SyntaxError: bad += 1\nprint(len(ps), bad)",
}


def _cpu_s() -> float:
    """User + system CPU of the children waited for so far: steadier than wall time on a shared machine."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _timed(argv: list[str]) -> tuple[float, float, float, str]:
    """Seconds, CPU seconds, peak RSS (MiB) and stdout of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    cpu = _cpu_s()
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if done.returncode not in (0, 1):
        raise SystemExit(f"{argv[0]} failed: {done.stderr[-2000:]}")
    # ru_maxrss of children is the largest child so far: measure the biggest (semgrep) last.
    return elapsed, _cpu_s() - cpu, max(peak, before) / 1024, done.stdout.strip()


def measure(root: Path, *, semgrep: str | None) -> None:
    elapsed, cpu, rss, out = _timed([sys.executable, "-c", _CHILD["scan"], str(root)])
    calls, files, lines = (int(x) for x in out.split())
    print(f"tree:     {files} files, {lines:,} lines; escalated found {calls} LLM calls")
    print(f"escalated contracts scan: {elapsed:6.2f} s  CPU {cpu:6.2f} s  peak RSS {rss:6.0f} MiB  ({lines / elapsed:,.0f} lines/s)")
    elapsed, cpu, rss, _ = _timed([sys.executable, "-c", _CHILD["ast"], str(root)])
    print(f"ast.parse of every file:  {elapsed:6.2f} s  CPU {cpu:6.2f} s  peak RSS {rss:6.0f} MiB")
    if semgrep:
        with tempfile.TemporaryDirectory() as folder:
            rules = Path(folder) / "llm.yaml"
            rules.write_text(SEMGREP_RULES)
            argv = [semgrep, "scan", "--config", str(rules), "--metrics=off", "--disable-version-check", "--json", "--quiet", str(root)]
            env_home = {**os.environ, "SEMGREP_SEND_METRICS": "off"}
            cpu = _cpu_s()
            started = time.perf_counter()
            done = subprocess.run(argv, capture_output=True, text=True, check=False, env=env_home)
            elapsed = time.perf_counter() - started
            cpu = _cpu_s() - cpu
            peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
            found = len(json.loads(done.stdout or "{}").get("results", [])) if done.stdout.startswith("{") else "?"
            print(f"semgrep (local rules):    {elapsed:6.2f} s  CPU {cpu:6.2f} s  peak RSS {peak:6.0f} MiB  ({found} matches)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", nargs="?", type=Path, help="scan this tree instead of a generated one")
    parser.add_argument("--files", type=int, default=920, help="files in the generated tree (default 920)")
    parser.add_argument(
        "--import-share", type=float, default=0.0,
        help="share of plain files that import an SDK's types (default 0; the pre-check still skips them)",
    )  # fmt: skip
    parser.add_argument("--real-shape", action="store_true", help="every file imports the SDK and has call-shaped text, so every one is parsed")
    parser.add_argument("--semgrep", metavar="BIN", default=shutil.which("semgrep"), help="semgrep executable to compare with")
    args = parser.parse_args()
    if args.path is not None:
        measure(args.path, semgrep=args.semgrep)
        return
    root = Path(tempfile.mkdtemp(prefix="escalated-scan-bench-"))
    try:
        generate(root, files=args.files, import_share=args.import_share, real_shape=args.real_shape)
        measure(root, semgrep=args.semgrep)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
