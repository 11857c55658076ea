"""Whether ``pyindex.PyIndex`` (``ModuleIndex``'s tables read off Python's tree) equals the libcst index.

    python benchmarks/index_parity.py ROOT [ROOT ...] [--show] [--scanned]

Every Python file under each root that both parsers accept (and under the scan's size limit), indexed both
ways and compared table by table (``pyindex.differences``, crossref's tool sites and the helpers of its
exports); with ``--scanned``, only the files a scan of the root parses (the candidates and the project
modules they import, as ``discovery`` finds them). Prints
the files, the characters and the files that differ (``--show``: how); exits 1 if any does.
"""

from __future__ import annotations

import ast
import sys
import warnings
from pathlib import Path

import libcst as cst

from escalated.contracts.scan import crossref, discovery
from escalated.contracts.scan.config import ScanOptions
from escalated.contracts.scan.index import ModuleIndex, parse_module
from escalated.contracts.scan.pyindex import PyIndex, differences, export_differences, tool_site_exports


def check(path: Path, *, limit: int, rel: str = "module.py") -> list[str] | None:
    """The differences for one file, None when it is not compared (too large, not text, a parser refuses it)."""
    try:
        data = path.read_bytes()
        if len(data) > limit:
            return None
        source = data.decode("utf-8")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(source)
        module = parse_module(source)
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError, RecursionError, MemoryError, cst.ParserSyntaxError):
        return None
    libcst_index, py_index = ModuleIndex().build(module), PyIndex().build(tree, source)
    found = differences(libcst_index, module, py_index)
    crossref.absolutise(libcst_index, rel)
    crossref.absolutise(py_index, rel)
    sites, py_sites = crossref.tool_site_exports(rel, module, libcst_index), tool_site_exports(rel, py_index)
    if list(sites.items()) != list(py_sites.items()):
        found.append(f"tool sites: libcst {sites!r} != ast {py_sites!r}")
    found += export_differences(libcst_index, py_index, crossref.module_name(rel))
    return found


def _scanned(root: Path) -> list[Path]:
    """The files a scan of ``root`` parses: its candidates and the project modules they import."""
    base = root if root.is_dir() else root.parent
    options = ScanOptions()
    token = crossref.PACKAGE.set(crossref.package_of(base))
    try:
        tree = discovery._walk_tree(root, base=base, progress=None, options=options)
        discovery._follow_imports(tree, base=base, options=options)
    finally:
        crossref.PACKAGE.reset(token)
    return [base / entry.rel for entry in tree.parsed]


def main(argv: list[str]) -> int:
    show, scanned = "--show" in argv, "--scanned" in argv
    roots = [Path(a) for a in argv if not a.startswith("--")]
    limit = ScanOptions().max_file_bytes
    files = chars = compared = 0
    differing: list[tuple[Path, list[str]]] = []
    for root in roots:
        for path in _scanned(root) if scanned else sorted(root.rglob("*.py")) if root.is_dir() else [root]:
            files += 1
            found = check(path, limit=limit, rel=path.relative_to(root).as_posix() if root.is_dir() else path.name)
            if found is None:
                continue
            compared += 1
            chars += path.stat().st_size
            if found:
                differing.append((path, found))
    print(f"{files} files, {compared} compared ({chars:,} bytes), {len(differing)} differ")
    for path, found in differing:
        print(f"  {path}")
        if show:
            for line in found:
                print(f"    {line[:600]}")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.setrecursionlimit(10_000)
    raise SystemExit(main(sys.argv[1:]))
