"""The ``escalated`` command.

The group only knows where each command lives; the modules are imported on
first use so ``escalated keys create`` does not pay for Textual or libcst,
and the headless layers never import click.
"""

from __future__ import annotations

import importlib

import click

from escalated import __version__
from escalated.commands.options import shared_group_options

# name -> "module:attribute". Order is the order shown in --help.
COMMANDS: dict[str, str] = {
    "serve": "escalated.commands.serve:serve",
    "migrate": "escalated.commands.migrate:migrate",
    "demo": "escalated.commands.demo:demo",
    "review": "escalated.tui.command:review",
    "escalations": "escalated.commands.escalations:escalations",
    "keys": "escalated.commands.keys:keys",
    "users": "escalated.commands.users:users",
    "workspaces": "escalated.commands.workspaces:workspaces",
    "policy": "escalated.commands.policy:policy",
    "contracts": "escalated.contracts.cli:contracts",
    "mcp": "escalated.commands.mcp:mcp",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, _, attr = target.partition(":")
        return getattr(importlib.import_module(module_name), attr)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="escalated")
@shared_group_options
def main(db_path, workspace) -> None:
    """escalated: hand an agent's decision to a human, resume it by signed callback.

    \b
    Start here:
      escalated demo                      the whole loop on a scratch database
      escalated serve                     API + SLA timer + callback sender
      escalated review                    the reviewer terminal UI
      escalated escalations list --mine   the reviewer CLI (list, show, ack, claim, decide, cancel)
      escalated contracts scan .          find unguarded LLM calls (for CI)

    Data commands take --db PATH (env ESCALATED_DB, default
    $XDG_DATA_HOME/escalated/escalated.db) and --workspace NAME, before or
    after the command name: escalated --db X keys create, or
    escalated keys create --db X. `escalated migrate` also takes
    --db postgresql://... (several replicas on one database).
    """


if __name__ == "__main__":  # pragma: no cover
    main()
