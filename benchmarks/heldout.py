"""The held-out figure: ``escalated contracts scan`` against hand labels of real repositories.

    python benchmarks/heldout.py CHECKOUTS [--labels DIR] [--show]

CHECKOUTS holds one checkout per labelled repository, named ``owner+name``
(``git clone https://github.com/owner/name owner+name``, then ``git checkout``
the commit the label file names). The repositories' code never enters this
repository; only the labels do (tests/contracts/heldout/*.json: every real
model call with the mode a careful engineer would sign, and why).

A labelled call is found when a reported call starts on its line, or else when
a reported call's span covers its line (calls in test folders are left out on
both sides). Each reported call is found for one label at most, and among
several the innermost (the shortest span) is taken: a model call written
inside another one's arguments (``action_model.call([..., describe(), ...])``)
is matched to its own report, never to the outer call's, and is missed when
only the outer call is reported. A reported call counts as labelled when its
span covers a labelled line. Printed per repository and in
total: recall (labelled calls found), precision (reported calls that are
labelled), modes agreed among the calls found, and how many calls labelled
``required`` the scan recommends ``required``. A label file may bound what was
labelled with ``"only"``, a list of folders or files under the scan root: the
whole root is scanned (callers elsewhere still inform the analysis), and calls
outside those paths are left out on both sides.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

LABELS = Path(__file__).resolve().parent.parent / "tests" / "contracts" / "heldout"


def scan(root: Path) -> list[dict]:
    out = subprocess.run(
        [sys.executable, "-m", "escalated", "contracts", "scan", str(root), "--format", "json", "--exit-zero"],
        capture_output=True, text=True, check=False,
    )
    if out.returncode != 0:
        raise SystemExit(f"scan of {root} failed ({out.returncode}): {out.stderr.strip()}")
    return [c for c in json.loads(out.stdout)["calls"] if not c.get("inTests")]


def covers(call: dict, label: dict) -> bool:
    return call["path"] == label["path"] and call["line"] <= label["line"] <= call["endLine"]


def match(calls: list[dict], labels: list[dict]) -> list[dict | None]:
    """The reported call found for each label (None: missed), one label per call.

    First the calls starting on a label's line, then those whose span covers it,
    the innermost first in both: a label's line inside an outer call's
    arguments belongs to the call written there, not to the outer call, which
    its own label (on the line it starts) takes.
    """
    found: list[dict | None] = [None] * len(labels)
    taken: set[int] = set()
    for starts_there in (True, False):
        for i, label in enumerate(labels):
            if found[i] is not None:
                continue
            candidates = [
                j for j, c in enumerate(calls)
                if j not in taken and covers(c, label) and (c["line"] == label["line"] or not starts_there)
            ]
            if candidates:
                j = min(candidates, key=lambda j: calls[j]["endLine"] - calls[j]["line"])
                found[i] = calls[j]
                taken.add(j)
    return found


def within(path: str, scope: str) -> bool:
    return path == scope or path.startswith(scope.rstrip("/") + "/")


def measure(label_file: Path, checkouts: Path, *, show: bool) -> dict[str, int]:
    spec = json.loads(label_file.read_text())
    root = checkouts / spec["repo"].replace("/", "+") / spec["scan"]
    if not root.is_dir():
        raise SystemExit(f"{root}: no checkout (clone {spec['repo']} at {spec['commit']})")
    only = spec.get("only")
    calls = [c for c in scan(root) if only is None or any(within(c["path"], p) for p in only)]
    found = agreed = required = required_said = 0
    for label, call in zip(spec["calls"], match(calls, spec["calls"]), strict=True):
        required += label["mode"] == "required"
        if call is None:
            if show:
                print(f"  MISSED {label['path']}:{label['line']} (labelled {label['mode']})")
            continue
        found += 1
        agreed += call["mode"] == label["mode"]
        required_said += label["mode"] == "required" and call["mode"] == "required"
        if show and call["mode"] != label["mode"]:
            print(f"  MODE   {label['path']}:{label['line']} scan {call['mode']} {call['rules']}, label {label['mode']}")
    # Precision still counts every report whose span covers a labelled line: one label may stand
    # for several calls written on its line (`self._run_sid(...) or await Search(...).call(...)`).
    labelled_reported = sum(any(covers(c, lab) for lab in spec["calls"]) for c in calls)
    if show:
        for c in calls:
            if not any(covers(c, lab) for lab in spec["calls"]):
                print(f"  EXTRA  {c['path']}:{c['line']} {c['api']} {c['mode']}")
    return {
        "labelled": len(spec["calls"]), "found": found, "reported": len(calls),
        "true_reports": labelled_reported, "agreed": agreed,
        "required": required, "required_said": required_said,
    }


def line(name: str, m: dict[str, int]) -> str:
    return (
        f"{name:<36} recall {m['found']}/{m['labelled']}  precision {m['true_reports']}/{m['reported']}"
        f"  modes {m['agreed']}/{m['found']}  required {m['required_said']}/{m['required']}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkouts", type=Path)
    parser.add_argument("--labels", type=Path, default=LABELS)
    parser.add_argument("--show", action="store_true", help="list misses, disagreements and extra reports")
    args = parser.parse_args()
    total: dict[str, int] = {}
    rounds: dict[str, dict[str, int]] = {}
    for label_file in sorted(args.labels.glob("*.json")):
        if args.show:
            print(label_file.stem)
        m = measure(label_file, args.checkouts, show=args.show)
        print(line(label_file.stem, m))
        # Each round of labels is a "before" for the changes that followed it: totals per round too.
        name = json.loads(label_file.read_text()).get("round", "part 4")
        rounds[name] = {k: rounds.get(name, {}).get(k, 0) + v for k, v in m.items()}
        total = {k: total.get(k, 0) + v for k, v in m.items()}
    for name, m in sorted(rounds.items()):
        print(line(f"round: {name}"[:36], m))
    print(line("all", total))


if __name__ == "__main__":
    main()
