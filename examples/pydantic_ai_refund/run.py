"""Run the refund agent against a running escalated server.

    ESCALATED_URL=http://127.0.0.1:8470 ESCALATED_API_KEY=ain_live_... \\
        python -m examples.pydantic_ai_refund.run wait --order o-981 --amount 1200

``wait`` runs the agent in this process and waits for the reviewer over
``/wait`` (``run_with_approvals``). The durable pair splits it over
processes: ``start`` runs until the refund needs approval, saves the run in
``--store`` and exits; ``resume`` (in any later process: a cron job, a
callback receiver) continues it once the reviewer decided, and says so when
they have not yet. Resuming again prints the same outcome and refunds
nothing twice.
"""

from __future__ import annotations

import argparse
import asyncio

from escalated.adapters.approvals import Paused
from escalated.adapters.pydantic_ai import resume_run, run_with_approvals, start_run
from examples.pydantic_ai_refund.agent import Shop, build_agent, request_for


async def main(args: argparse.Namespace) -> str:
    agent, run_id = build_agent(), args.run_id or f"refund-{args.order}"
    if args.command == "wait":
        result = await run_with_approvals(
            agent, request_for(args.order, args.amount), policy=args.policy, run_id=run_id, deps=Shop()
        )
        return str(result.output)
    if args.command == "start":
        outcome = await start_run(
            agent, request_for(args.order, args.amount), policy=args.policy, run_id=run_id, store=args.store, deps=Shop()
        )
    else:
        outcome = await resume_run(agent, run_id=run_id, store=args.store, deps=Shop())
    if isinstance(outcome, Paused):
        return f"paused: run {outcome.run_id} waits for {', '.join(outcome.escalation_ids)}"
    return str(outcome.output)


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["wait", "start", "resume"])
    parser.add_argument("--order", default="o-981")
    parser.add_argument("--amount", type=float, default=1200.0)
    parser.add_argument("--run-id", default=None, help="default: refund-<order>")
    parser.add_argument("--policy", default="demo.access", help="an existing policy without an SLA, or one whose default is approve or reject")
    parser.add_argument("--store", default="runs", help="directory of the durable runs (start/resume)")
    return parser.parse_args(argv)


if __name__ == "__main__":
    print(asyncio.run(main(parse())), flush=True)
