"""Run one refund thread end to end against a running escalated server.

    ESCALATED_URL=http://127.0.0.1:8470 ESCALATED_API_KEY=ain_live_... \\
        python -m examples.langgraph_refund_tools.run --order o-981 --amount 1200

The graph pauses at the refund call; a callback receiver on this machine
resumes the thread when the reviewer decides (``ThreadResumer``), and the
``/wait`` fallback does the same should no callback come (a cancellation).
"""

from __future__ import annotations

import argparse
import asyncio
import secrets

from escalated.adapters.langgraph import ThreadResumer, resume_by_waiting
from escalated.agent.client import EscalatedClient
from escalated.agent.receiver import make_receiver_app, start_receiver
from examples.langgraph_refund_tools.graph import build_graph, request_for, thread


async def main(args: argparse.Namespace) -> str:
    secret, thread_id = secrets.token_urlsafe(32), args.thread or f"refund-{args.order}"
    async with EscalatedClient.from_env() as client:
        finished: asyncio.Future = asyncio.get_running_loop().create_future()
        resumer = ThreadResumer(None, client, on_finished=lambda _id, output: finished.done() or finished.set_result(output))
        async with await start_receiver(make_receiver_app(resumer, secret=secret)) as receiver:
            resumer.graph = build_graph(client, policy=args.policy, resume_url=receiver.url + "/resume", resume_secret=secret)
            state = await resumer.graph.ainvoke(request_for(args.order, args.amount), thread(thread_id))
            if "__interrupt__" not in state:
                return state["messages"][-1].content
            escalation_id = state["__interrupt__"][0].value["escalationId"]
            print(f"paused: thread {thread_id} waits for {escalation_id}", flush=True)
            fallback = asyncio.ensure_future(resume_by_waiting(resumer, escalation_id))
            try:
                output = await finished
            finally:
                fallback.cancel()
                await asyncio.gather(fallback, return_exceptions=True)
    return output["messages"][-1].content


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--order", default="o-981")
    parser.add_argument("--amount", type=float, default=1200.0)
    parser.add_argument("--thread", default=None, help="thread id (default: refund-<order>)")
    parser.add_argument("--policy", default="demo.access")
    return parser.parse_args(argv)


if __name__ == "__main__":
    print(asyncio.run(main(parse())), flush=True)
