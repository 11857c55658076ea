"""A small project written to a temporary folder and scanned: the scan tests' one way to do it."""

from __future__ import annotations

from pathlib import Path

from escalated.contracts.scan.discovery import ScanResult, scan_tree


def scan_files(root: Path, files: dict[str, str]) -> ScanResult:
    """Write ``files`` (relative path -> text) under ``root``, scan it, and insist every file parsed."""
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    result = scan_tree(root)
    assert result.errors == ()
    return result


def scan_calls(root: Path, files: dict[str, str]) -> dict[tuple[str, int], tuple[str, str, tuple[str, ...]]]:
    """``scan_files``' calls by (path, line): the api, the recommended mode and its rules."""
    result = scan_files(root, files)
    return {(c.location.path, c.location.line): (c.api, c.recommendation.mode, c.recommendation.rules) for c in result.calls}


def scan_modes(root: Path, files: dict[str, str]) -> dict[tuple[str, int], tuple[str, str]]:
    """``scan_files``' calls by (path, line): the api and the recommended mode."""
    return {where: (api, mode) for where, (api, mode, _) in scan_calls(root, files).items()}
