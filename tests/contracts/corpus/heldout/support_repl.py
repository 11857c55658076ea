"""A flat example folder: a plain 'import support_agent', the answer printed."""
import support_agent


async def main(items):
    result = await support_agent.run(items)
    print(result.final_output)
