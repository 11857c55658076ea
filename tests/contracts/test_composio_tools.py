"""Composio's tools, as real agent code hands them out (the providers 2 round, held out).

``composio.tools.get(user_id=..., toolkits=[...], tools=[...])`` and a Tool Router session's
``composio.create(user_id=..., toolkits=[...]).tools()`` give a model actions on the user's connected
accounts, run at once when it calls them: what they can do is the toolkit's (Gmail sends mail, GitHub
opens issues and deletes repositories) or the action slug's (``GMAIL_SEND_EMAIL``).
"""

from __future__ import annotations

from pathlib import Path

from tests.contracts.projects import scan_calls


DIRECT = """\
from anthropic import Anthropic
from composio import Composio
from composio_anthropic import AnthropicProvider

composio = Composio(provider=AnthropicProvider())
tools = composio.tools.get(user_id="default", {chosen})
response = Anthropic().messages.create(model="claude-sonnet-4-5", max_tokens=1024, tools=tools, messages=[{{"role": "user", "content": input()}}])
print(composio.provider.handle_tool_calls(user_id="default", response=response))
"""

AGENT = """\
import asyncio

from agents import Agent, Runner
from composio import Composio
from composio_openai_agents import OpenAIAgentsProvider


async def main():
    composio = Composio(provider=OpenAIAgentsProvider())
    session = composio.create(user_id="user_123", toolkits=[{toolkit!r}])
    agent = Agent(name="Assistant", instructions="Help the user.", tools=session.tools())
    result = await Runner.run(starting_agent=agent, input=input())
    print(result.final_output)

asyncio.run(main())
"""


def test_a_toolkit_offers_what_its_app_does(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {
        "github.py": DIRECT.format(chosen='toolkits=["GITHUB"]'),
        "gmail.py": DIRECT.format(chosen='toolkits=["GMAIL"]'),
        "stripe.py": DIRECT.format(chosen='toolkits=["STRIPE"]'),
        "notion.py": DIRECT.format(chosen='toolkits=["NOTION"]'),
        "news.py": DIRECT.format(chosen='toolkits=["HACKERNEWS"]'),
        "unknown.py": DIRECT.format(chosen='toolkits=["ACME"]'),
        "searched.py": DIRECT.format(chosen='search="user"'),
    })  # fmt: skip
    assert calls == {
        ("github.py", 7): ("messages.create", "required", ("R5",)),  # issues and comments as the user
        ("gmail.py", 7): ("messages.create", "required", ("R5",)),
        ("stripe.py", 7): ("messages.create", "required", ("R2",)),
        ("notion.py", 7): ("messages.create", "reviewed", ("R6",)),  # pages written, editable
        ("news.py", 7): ("messages.create", "sampled", ("R9",)),  # public data
        ("unknown.py", 7): ("messages.create", "reviewed", ("R7",)),  # a toolkit the table does not know
        ("searched.py", 7): ("messages.create", "reviewed", ("R7",)),  # tools found by a search at run time
    }


def test_an_action_slug_says_what_it_does(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {
        "send.py": DIRECT.format(chosen='tools=["GMAIL_SEND_EMAIL"]'),
        "delete.py": DIRECT.format(chosen='tools=["GITHUB_DELETE_A_REPOSITORY"]'),
        "star.py": DIRECT.format(chosen='tools=["GITHUB_STAR_A_REPOSITORY_FOR_THE_AUTHENTICATED_USER"]'),
        "read.py": DIRECT.format(chosen='tools=["GITHUB_GET_THE_AUTHENTICATED_USER", "GMAIL_FETCH_EMAILS"]'),
    })  # fmt: skip
    assert calls == {
        ("send.py", 7): ("messages.create", "required", ("R5",)),
        ("delete.py", 7): ("messages.create", "required", ("R3",)),
        ("star.py", 7): ("messages.create", "reviewed", ("R6",)),  # a change on the account, undone by unstarring
        ("read.py", 7): ("messages.create", "sampled", ("R9",)),
    }


def test_a_tool_router_session_offers_its_toolkits(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {"mail.py": AGENT.format(toolkit="gmail"), "docs.py": AGENT.format(toolkit="googledocs")})
    assert calls == {
        ("mail.py", 12): ("agents.Runner.run", "required", ("R5",)),
        ("docs.py", 12): ("agents.Runner.run", "reviewed", ("R6",)),
    }


def test_a_tools_get_of_another_client_is_not_composio(tmp_path: Path) -> None:
    other = DIRECT.replace("from composio import Composio", "from acme import Composio")
    calls = scan_calls(tmp_path, {"other.py": other.format(chosen='toolkits=["GMAIL"]')})
    assert calls[("other.py", 7)][1:] == ("reviewed", ("R7",))


HOSTED = """\
from agents import Agent, HostedMCPTool, Runner
from composio import Composio

composio = Composio()
session = composio.create(user_id="user_123"{toolkits})
router = HostedMCPTool(tool_config={{"type": "mcp", "server_label": "tool_router", "server_url": {url}, "require_approval": "never"}})
agent = Agent(name="Assistant", instructions="Help the user.", tools=[router])
print(Runner.run_sync(starting_agent=agent, input=input()).final_output)
"""

LANGCHAIN_MCP = """\
import asyncio

from composio import Composio
from langchain.agents import create_agent
from langchain_mcp_adapters.client import MultiServerMCPClient

session = Composio().create(user_id="user_123", toolkits=["googlesheets"])


async def main():
    client = MultiServerMCPClient({"composio": {"transport": "streamable_http", "url": session.mcp.url, "headers": session.mcp.headers}})
    tools = await client.get_tools()
    agent = create_agent(model="openai:gpt-4o", tools=tools)
    print(await agent.ainvoke({"messages": [{"role": "user", "content": input()}]}))

asyncio.run(main())
"""


def test_a_tool_router_sessions_mcp_server_offers_its_toolkits(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {
        "mail.py": HOSTED.format(toolkits=', toolkits=["github", "gmail"]', url="session.mcp.url"),
        "every.py": HOSTED.format(toolkits="", url="session.mcp.url"),  # no toolkits written: all of them
        "other.py": HOSTED.format(toolkits=', toolkits=["gmail"]', url='"https://mcp.example.com"'),
        "sheets.py": LANGCHAIN_MCP,
    })  # fmt: skip
    assert calls == {
        ("mail.py", 8): ("agents.Runner.run_sync", "required", ("R5",)),
        ("every.py", 8): ("agents.Runner.run_sync", "required", ("R5",)),
        ("other.py", 8): ("agents.Runner.run_sync", "reviewed", ("R7",)),  # another server: unknown tools
        ("sheets.py", 14): ("ainvoke", "reviewed", ("R6",)),
    }
