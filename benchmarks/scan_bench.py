"""How fast ``escalated contracts scan`` reads a code base.

    python benchmarks/scan_bench.py            # generates a 3,000-file tree in a temp folder
    python benchmarks/scan_bench.py PATH       # scans an existing tree instead
    python benchmarks/scan_bench.py --files N  # a generated tree of N files

Prints files/s and lines/s for the whole scan (walk, text pre-check, parse and
analysis of the files that may call a model) and for the analysed files only.
The generated tree is deterministic: one file in ten calls a model (the styles
of the fixture corpus, in rotation), the rest is ordinary application code.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

from escalated.contracts.scan.discovery import scan_tree
from escalated.contracts.scan.files import iter_files, might_call_llm

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "contracts" / "corpus"

PLAIN = '''\
"""Ordinary application code: models, helpers, no model calls."""
from __future__ import annotations

import dataclasses
import json


@dataclasses.dataclass
class Record{n}:
    id: int
    name: str
    tags: list[str]

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self))


def load_{n}(text: str) -> list[Record{n}]:
    rows = json.loads(text)
    out = []
    for row in rows:
        if row.get("name"):
            out.append(Record{n}(id=row["id"], name=row["name"], tags=list(row.get("tags", []))))
    return out


def total_{n}(records: list[Record{n}]) -> int:
    return sum(r.id for r in records if r.tags)
'''


def generate(root: Path, *, files: int) -> None:
    samples = sorted(p for p in CORPUS.rglob("*.py"))
    for n in range(files):
        folder = root / f"pkg{n % 20:02d}" / f"mod{n % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        if n % 10 == 0:
            text = samples[(n // 10) % len(samples)].read_text()
        else:
            text = PLAIN.format(n=n)
        (folder / f"file_{n:05d}.py").write_text(text)


def measure(root: Path) -> None:
    started = time.perf_counter()
    result = scan_tree(root)
    elapsed = time.perf_counter() - started
    analysed = [rel for rel in iter_files(root) if rel.endswith(".py") and might_call_llm((root / rel).read_bytes())]
    analysed_lines = sum((root / rel).read_text(errors="replace").count("\n") for rel in analysed)
    print(f"tree:      {result.files_scanned} files, {result.lines_scanned} lines, {len(result.calls)} LLM calls")
    print(f"analysed:  {len(analysed)} files ({analysed_lines} lines) after the text pre-check")
    print(f"elapsed:   {elapsed:.2f} s")
    print(f"overall:   {result.files_scanned / elapsed:,.0f} files/s, {result.lines_scanned / elapsed:,.0f} lines/s")
    if analysed:
        print(f"parsed:    {len(analysed) / elapsed:,.0f} analysed files/s, {analysed_lines / elapsed:,.0f} analysed lines/s")
    if result.errors:
        print(f"errors:    {len(result.errors)} files could not be parsed", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", nargs="?", type=Path, help="scan this tree instead of a generated one")
    parser.add_argument("--files", type=int, default=3000, help="files in the generated tree (default 3000)")
    args = parser.parse_args()
    if args.path is not None:
        measure(args.path)
        return
    root = Path(tempfile.mkdtemp(prefix="escalated-scan-bench-"))
    try:
        generate(root, files=args.files)
        measure(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
