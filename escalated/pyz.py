"""Entry point of ``dist/escalated.pyz`` (built by zipapp.sh).

The pyz carries compiled modules (orjson, aiohttp, libcst) for one Python
minor version and platform. On another they fail deep inside an import
(``No module named 'orjson.orjson'``, ``cannot import name 'Self'``), so the
version is checked first, before anything of ours or theirs is imported,
and the message says which Python the file was built for.
"""

from __future__ import annotations

import sys
import sysconfig


def mismatch(
    built_for: tuple[int, int], built_platform: str, *, running: tuple[int, int], platform: str
) -> str | None:
    """Why this interpreter cannot run the pyz, or None."""
    if running == built_for and platform == built_platform:
        return None
    want = f"Python {built_for[0]}.{built_for[1]} on {built_platform}"
    have = f"Python {running[0]}.{running[1]} on {platform}"
    return (
        f"escalated.pyz was built for {want}, but this is {have} ({sys.executable}). "
        f"Run it with python{built_for[0]}.{built_for[1]}, or build it again with this Python: "
        f"PYTHON={sys.executable} ./zipapp.sh"
    )


def main() -> None:
    try:
        from escalated._built_for import PLATFORM, PYTHON  # written by zipapp.sh
    except ImportError:  # run from a source tree: nothing to check
        pass
    else:
        problem = mismatch(PYTHON, PLATFORM, running=sys.version_info[:2], platform=sysconfig.get_platform())
        if problem:
            print(f"Error: {problem}", file=sys.stderr)
            raise SystemExit(1)
    from escalated.cli import main as cli

    cli(prog_name="escalated")
