"""No model here: what it does with the plan it is given decides the caller's mode."""
import logging
import shutil
from pathlib import Path

from app.shell import run_line

log = logging.getLogger(__name__)


def execute_plan(plan: str) -> None:
    for line in plan.splitlines():
        run_line(line.strip())


def apply_edit(edit: str) -> None:
    path, _, body = edit.partition("\n")
    Path(path).write_text(body)


class PlanRunner:
    def run(self, plan: str) -> None:
        for line in plan.splitlines():
            run_line(line)


def record_plan(goal: str, plan: str) -> None:
    log.info("plan for %s: %s", goal, plan)
    shutil.rmtree(Path("/tmp/plans") / goal, ignore_errors=True)  # the goal's scratch folder, not the plan's
