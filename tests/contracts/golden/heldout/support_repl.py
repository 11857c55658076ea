"""A flat example folder: a plain 'import support_agent', the answer printed."""
import support_agent
from escalated.guard import guard


async def main(items):
    result = await guard("support_repl.main", lambda: support_agent.run(items))
    print(result.final_output)
