"""``escalated contracts``: scan and explain (init and apply live in edit/cli.py).

Thin commands: parse flags, call the library, print, choose the exit code.
``scan`` is read-only and offline so CI can run it on every push:
0 every call covered, 1 something uncovered or stale, 2 usage or parse error.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from escalated.contracts.deep import with_deep_stack

from escalated.guard.contracts import ContractFileError
from escalated.contracts.report.coverage import check, project_contracts
from escalated.contracts.scan.config import load_options
from escalated.contracts.scan.discovery import scan_tree
from escalated.errors import ConfigError
from escalated.guard.modes import MODE_NAMES, MODES, get_mode
from escalated.contracts.report.formats import Report, render_json, render_text
from escalated.contracts.report.sarif import render_sarif

_RENDERERS = {"text": render_text, "json": render_json, "sarif": render_sarif}


class UsageFailure(click.ClickException):
    exit_code = 2


@click.group()
def contracts() -> None:
    """Find LLM calls in an agent code base and hold each to a contract.

    \b
      escalated contracts scan .            report every call, its mode and coverage (CI)
      escalated contracts explain           what the four modes mean at run time
      escalated contracts init .            draft a contract for each uncovered call
      escalated contracts apply .           wrap covered calls with their guards
    """


@contracts.command()
@click.argument("path", default=".", type=click.Path(exists=True, file_okay=True, dir_okay=True, path_type=Path))
@click.option(
    "--format",
    "output_format",
    type=click.Choice(list(_RENDERERS)),
    default="text",
    show_default=True,
    help="text for people, json for scripts (docs/contracts-scan.md), sarif for GitHub code scanning.",
)
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when calls are uncovered (report only).")
@click.option(
    "--exclude", "excludes", multiple=True, metavar="GLOB",
    help="Skip files and folders matching GLOB (.gitignore syntax, relative to PATH); repeatable.",
)  # fmt: skip
@with_deep_stack
def scan(path: Path, output_format: str, exit_zero: bool, excludes: tuple[str, ...]) -> None:
    """Report every LLM call under PATH: provider, function, recommended mode, coverage.

    Read-only and offline. Exit 0 when every call is covered by a contract and
    its guard, 1 when a call is uncovered or a contract is stale, 2 on a usage
    error or a file that cannot be parsed.
    """
    try:
        contract_set, prefix, contracts_file = project_contracts(path)
        options = load_options(path).with_excludes(excludes)
    except (ContractFileError, ConfigError) as exc:
        raise UsageFailure(str(exc)) from exc
    progress = _progress_printer()
    result = scan_tree(path, progress=progress, options=options)
    if progress is not None:
        sys.stderr.write("\r\x1b[K")  # leave the terminal as it was
    single = path.name if path.is_file() else None
    coverage = check(result, contract_set, prefix=prefix, single_file=single)
    report = Report(result, coverage, contracts_file, fail_on_tests=options.fail_on_tests)
    click.echo(_RENDERERS[output_format](report), nl=False)
    code = report.exit_code
    if code and not exit_zero:
        sys.exit(code)


def _progress_printer():
    """A running count on stderr, only when a person is watching (stderr is a TTY)."""
    stream = sys.stderr
    if not stream.isatty():
        return None

    def show(number: int, path: str) -> None:
        if number % 50 == 0:
            stream.write(f"\rscanning… {number} files ({path[-50:]})\x1b[K")
            stream.flush()

    return show


@contracts.command()
@click.argument("mode", required=False, type=click.Choice(MODE_NAMES))
def explain(mode: str | None) -> None:
    """What each autonomy mode means at run time (or just MODE)."""
    chosen = [get_mode(mode)] if mode else list(MODES)
    blocks = []
    for item in chosen:
        blocks.append(f"{item.name}: {item.summary}\n{_indent(item.at_run_time)}")
    blocks.append(f"Where the guard acts:\n{_indent(_WHERE_GUARDED)}")
    click.echo("\n\n".join(blocks))


# Point 11 of the scan docs: an agent runner runs its tools inside the call.
_WHERE_GUARDED = (
    "around the call (guard(\"id\", lambda: <call>)) for model calls whose output the "
    "code then uses: the decision or review comes before the result is used. Agent runners "
    "(OpenAI Agents Runner.run*, LangGraph prebuilt agents, CrewAI crews, Pydantic AI and "
    "smolagents agents) run their tools inside the call, so a guard around the call sees "
    "only the final answer, after the refund or the shell command already ran. For those, "
    "the tools are guarded: an OpenAI Agents Runner.run under a required contract gets the SDK's own "
    "approval (apply adds needs_approval=True to each risky @function_tool and runs the call through "
    "escalated.adapters.openai_agents.run_with_approvals, which files each paused tool call and "
    "applies the reviewer's decision), and so does a Pydantic AI agent.run beside its agent and tools "
    "(requires_approval=True on each risky @agent.tool, the agent's output_type admitting "
    "DeferredToolRequests, the call through escalated.adapters.pydantic_ai.run_with_approvals), and "
    "LangGraph's own interrupt for a prebuilt agent built beside its run with a checkpointer "
    "(@interrupt_for_approval on each risky tool, the call through "
    "escalated.adapters.langgraph.invoke_with_approvals); a CrewAI crew's risky @tool functions get "
    "@approval_required(policy=...) (escalated.adapters.crewai: CrewAI's before_tool_call hook holds "
    "each call for a reviewer); an Agno agent.run (arun) beside its agent and tools gets Agno's own "
    "confirmation (requires_confirmation=True on each risky @tool, the call through "
    "escalated.adapters.agno.run_with_approvals); a Microsoft Agent Framework agent.run beside its "
    "agent and tools gets the framework's own tool approval (approval_mode=\"always_require\" on each "
    "risky @tool, the call through escalated.adapters.agent_framework.run_with_approvals); "
    "for other runs under a required contract, apply adds @guard_tool(\"id\") "
    "(escalated.guard) to each risky tool function the run reaches, under the "
    "framework's decorator (awaitable=True for OpenAI Agents tools, which the SDK calls inside "
    "its event loop), and the tool runs only after a reviewer approves the call the "
    "model chose; scan reports such a run uncovered while a risky tool is not guarded. "
    "Instead, OpenAI Agents needs_approval=... or Pydantic AI requires_approval=... on each risky tool (scan counts the run as "
    "covered only when every risky tool it reaches has it) or a LangGraph interrupt before "
    "the tool node also gate them. A tool that is not a project function (a class, a hosted "
    "tool) is named in apply's skips: guard it by hand. The guard around the run then "
    "reviews the final output."
)


def _indent(text: str, *, width: int = 76) -> str:
    lines, current = [], ""
    for word in text.split():
        if current and len(current) + 1 + len(word) > width:
            lines.append(current)
            current = word
        else:
            current = f"{current} {word}".strip()
    lines.append(current)
    return "\n".join(f"  {line}" for line in lines)


from escalated.contracts.edit.cli import apply, init  # noqa: E402 - the editing half of the group

contracts.add_command(init)
contracts.add_command(apply)
