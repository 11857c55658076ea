"""Run one refund flow end to end against a running escalated server.

    ESCALATED_URL=http://127.0.0.1:8470 ESCALATED_API_KEY=ain_live_... \\
        python -m examples.crewai_refund.run --order o-981 --amount 1200

The flow pauses at ``propose``'s feedback (kept in ``--db``, CrewAI's SQLite
persistence); a callback receiver on this machine resumes it when the
reviewer decides, and the ``/wait`` fallback does the same should no callback
come.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets

from crewai.flow.persistence import SQLiteFlowPersistence

from escalated.adapters.crewai import EscalatedFeedbackProvider, FlowResumer
from escalated.agent.client import EscalatedClient
from escalated.agent.receiver import make_receiver_app, start_receiver
from examples.crewai_refund.flow import refund_flow


async def main(args: argparse.Namespace) -> str:
    secret, persistence = secrets.token_urlsafe(32), SQLiteFlowPersistence(args.db)
    async with EscalatedClient.from_env() as client:
        finished: asyncio.Future = asyncio.get_running_loop().create_future()
        resumer = FlowResumer(None, persistence, client, on_finished=lambda _id, out: finished.done() or finished.set_result(out))
        async with await start_receiver(make_receiver_app(resumer, secret=secret)) as receiver:
            provider = EscalatedFeedbackProvider(policy=args.policy, resume_url=receiver.url + "/resume", resume_secret=secret)
            resumer.flow_class = refund_flow(provider)
            paused = await resumer.flow_class(persistence=persistence).kickoff_async(
                inputs={"order_id": args.order, "amount_eur": args.amount}
            )
            escalation_id = paused.callback_info["escalationId"]
            print(f"paused: flow {paused.context.flow_id} waits for {escalation_id}", flush=True)
            fallback = asyncio.ensure_future(_wait_fallback(client, resumer, escalation_id))
            try:
                return str(await finished)
            finally:
                fallback.cancel()
                await asyncio.gather(fallback, return_exceptions=True)


async def _wait_fallback(client: EscalatedClient, resumer: FlowResumer, escalation_id: str) -> None:
    await resumer.resume(await client.wait_until_done(escalation_id))


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--order", default="o-981")
    parser.add_argument("--amount", type=float, default=1200.0)
    parser.add_argument("--policy", default="demo.access")
    parser.add_argument("--db", default=os.path.abspath("flows.db"), help="CrewAI's flow persistence (SQLite)")
    return parser.parse_args(argv)


if __name__ == "__main__":
    print(asyncio.run(main(parse())), flush=True)
