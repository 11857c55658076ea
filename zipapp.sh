#!/usr/bin/env bash
# Build dist/escalated.pyz: one file that runs every escalated command on a
# machine that has only Python.
#
#   ./zipapp.sh [OUTPUT]          (default dist/escalated.pyz)
#   python3 dist/escalated.pyz serve --db ./escalated.db
#
# Why shiv and not the stdlib zipapp: aiohttp, orjson, libcst and
# frozenlist carry compiled extension modules, and CPython cannot import an
# extension module from inside a zip file. shiv packs the installed
# site-packages into the zip and, on the first run, extracts them once into
# a cache directory (~/.shiv/escalated.pyz_<build hash>/, or $SHIV_ROOT);
# later runs only add that directory to sys.path. A new build has a new hash,
# so it never runs stale code. -E exports the same path as PYTHONPATH, so
# the commands that start `python -m escalated` subprocesses (`demo`) work
# from the pyz too.
#
# The pyz holds wheels for the Python and platform it was built on (e.g.
# CPython 3.11, manylinux x86_64): run it with that same Python minor version
# on the same OS and architecture. Build once per target otherwise. The entry
# point (escalated/pyz.py) checks this first and names the Python it was
# built for.
#
# PYTHON picks the interpreter to build for (default: .venv/bin/python if
# present, else python3). Needs pip access to the package index (or its
# cache) for the dependencies; shiv itself is fetched into a scratch
# directory when the build Python does not have it.
set -euo pipefail

root="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$root/dist/escalated.pyz}"
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac
if [[ -z "${PYTHON:-}" ]]; then
  if [[ -x "$root/.venv/bin/python" ]]; then PYTHON="$root/.venv/bin/python"; else PYTHON=python3; fi
fi

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

# Build from a copy of the sources: pip builds in-tree and would leave
# build/ and egg-info behind in the work tree.
mkdir -p "$scratch/src"
cp "$root/pyproject.toml" "$root/README.md" "$scratch/src/"
(cd "$root" && tar --exclude='__pycache__' --exclude='*.pyc' -cf - escalated) | tar -xf - -C "$scratch/src"
# Stamp the Python this build is for: escalated.pyz:main checks it before
# importing anything compiled, so another version gets one clear line.
"$PYTHON" - "$scratch/src/escalated/_built_for.py" <<'PY'
import sys, sysconfig
with open(sys.argv[1], "w") as f:
    f.write(f"PYTHON = {tuple(sys.version_info[:2])!r}\nPLATFORM = {sysconfig.get_platform()!r}\n")
PY

if "$PYTHON" -c 'import shiv' 2>/dev/null; then
  shiv_path=""
else
  "$PYTHON" -m pip install --quiet --disable-pip-version-check --target "$scratch/tools" 'shiv>=1.0'
  shiv_path="$scratch/tools"
fi

mkdir -p "$(dirname "$out")"
PYTHONPATH="$shiv_path${PYTHONPATH:+:$PYTHONPATH}" "$PYTHON" -m shiv \
  --entry-point escalated.pyz:main \
  --output-file "$out" \
  --python '/usr/bin/env python3' \
  --extend-pythonpath \
  --reproducible \
  --compressed \
  "$scratch/src" --quiet --disable-pip-version-check

echo "built $out ($(du -h "$out" | cut -f1)) for $("$PYTHON" -c 'import sys, sysconfig; print(f"CPython {sys.version_info[0]}.{sys.version_info[1]} {sysconfig.get_platform()}")')"
