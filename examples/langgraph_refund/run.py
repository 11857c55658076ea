"""Run one refund thread end to end against a running ``escalated serve``.

    ESCALATED_URL=http://127.0.0.1:8470 ESCALATED_API_KEY=ain_live_... \\
        python -m examples.langgraph_refund.run --order o-981 --amount 1200

It starts the callback receiver, runs the graph until it pauses, prints the
escalation id, and waits until a reviewer decides (in ``escalated review``
or over HTTP) or someone cancels; the callback resumes the graph and the
outcome is printed. Beside the receiver a ``/wait`` fallback watches the same
escalation, so a cancellation under a policy without ``cancel_callback``
(which sends no callback) still ends the run. ``--no-receiver`` uses
``/wait`` alone (no port to open, at the price of a held connection).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets

from escalated.agent.client import EscalatedClient
from escalated.agent.receiver import make_receiver_app, start_receiver
from examples.langgraph_refund.refund_graph import Resumer, build_graph, resume_by_waiting, thread_config


async def run(*, order_id: str, amount_eur: float, thread_id: str, receiver_port: int, receiver: bool = True) -> dict:
    # The secret only needs to be shared between this process and its escalations.
    secret = os.environ.get("REFUND_WEBHOOK_SECRET") or secrets.token_urlsafe(32)
    finished: asyncio.Future[dict] = asyncio.get_running_loop().create_future()

    def on_finished(_thread_id: str, final: dict) -> None:
        if not finished.done():
            finished.set_result(final)

    async with EscalatedClient.from_env() as client:
        resumer = Resumer(on_finished=on_finished)
        if not receiver:
            resumer.graph = build_graph(client, resume_url=None, secret=secret)
            return await _until_finished(client, resumer, finished, order_id, amount_eur, thread_id)
        async with await start_receiver(make_receiver_app(resumer, secret=secret), port=receiver_port) as listening:
            resumer.graph = build_graph(client, resume_url=listening.url + "/resume", secret=secret)
            return await _until_finished(client, resumer, finished, order_id, amount_eur, thread_id)


async def _until_finished(client, resumer, finished, order_id: str, amount_eur: float, thread_id: str) -> dict:
    state = await resumer.graph.ainvoke({"order_id": order_id, "amount_eur": amount_eur}, thread_config(thread_id))
    if "__interrupt__" not in state:
        return state
    escalation_id = state["__interrupt__"][0].value["escalationId"]
    print(f"paused: waiting for a decision on {escalation_id} (thread {thread_id})", flush=True)
    fallback = asyncio.create_task(resume_by_waiting(client, resumer, escalation_id), name="wait-fallback")
    try:
        return await finished
    finally:
        fallback.cancel()
        await asyncio.gather(fallback, return_exceptions=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--order", default="o-981")
    parser.add_argument("--amount", type=float, default=1200.0)
    parser.add_argument("--thread", default=None, help="thread id (default: refund-<order>)")
    parser.add_argument("--receiver-port", type=int, default=0)
    parser.add_argument("--no-receiver", action="store_true", help="resume through /wait only, with no callback")
    args = parser.parse_args()
    final = asyncio.run(
        run(
            order_id=args.order,
            amount_eur=args.amount,
            thread_id=args.thread or f"refund-{args.order}",
            receiver_port=args.receiver_port,
            receiver=not args.no_receiver,
        )
    )
    print(final["outcome"], flush=True)


if __name__ == "__main__":
    main()
