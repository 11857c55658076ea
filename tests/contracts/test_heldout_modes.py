"""Modes the held-out repositories showed the scan misjudging (the modes 10 round), each a small project.

Written from what real agent code does (payment chatbots built on Coinbase AgentKit, an agent
built by a helper and handed back in a tuple, a parameter typed as the agent it is given);
the repositories themselves stay out of this repository, only their hand labels are kept
(tests/contracts/heldout/).
"""

from __future__ import annotations

from pathlib import Path

from escalated.contracts.scan.discovery import scan_tree


def _calls(tmp_path: Path, files: dict[str, str]) -> dict[tuple[str, int], tuple[str, str, tuple[str, ...]]]:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    result = scan_tree(tmp_path)
    assert result.errors == ()
    return {(c.location.path, c.location.line): (c.api, c.recommendation.mode, c.recommendation.rules) for c in result.calls}


AGENTKIT = """\
from coinbase_agentkit import AgentKit, AgentKitConfig, {providers}
from coinbase_agentkit_langchain import get_langchain_tools
from langchain_openai import ChatOpenAI
from langgraph.prebuilt import create_react_agent

agentkit = AgentKit(AgentKitConfig(action_providers=[{listed}]))
agent = create_react_agent(ChatOpenAI(model="gpt-4o"), tools=get_langchain_tools(agentkit))
print(agent.invoke({{"messages": [("user", input())]}}))
"""


def test_agentkit_tools_do_what_their_action_providers_do(tmp_path: Path) -> None:
    wallet = AGENTKIT.format(providers="pyth_action_provider, wallet_action_provider", listed="pyth_action_provider(), wallet_action_provider()")
    prices = AGENTKIT.format(providers="pyth_action_provider", listed="pyth_action_provider()")
    tweets = AGENTKIT.format(providers="twitter_action_provider", listed="twitter_action_provider()")
    unknown = AGENTKIT.format(providers="acme_action_provider", listed="acme_action_provider()")
    calls = _calls(tmp_path, {"wallet.py": wallet, "prices.py": prices, "tweets.py": tweets, "unknown.py": unknown})
    assert calls == {
        ("wallet.py", 8): ("invoke", "required", ("R2",)),  # native_transfer sends the wallet's funds
        ("prices.py", 8): ("invoke", "sampled", ("R9",)),  # price feeds only
        ("tweets.py", 8): ("invoke", "required", ("R5",)),
        ("unknown.py", 8): ("invoke", "reviewed", ("R7",)),  # a provider the table does not know
    }

