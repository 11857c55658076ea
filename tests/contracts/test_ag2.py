"""AG2 (the ``autogen`` / ``ag2`` packages, AutoGen 0.2's lineage): a chat's run is the model call,
its agents' functions the tools it runs, and an executor asking the person its gate."""

from __future__ import annotations

from escalated.contracts.scan.discovery import scan_source

MAILBOX = '''
import shutil
from autogen import ConversableAgent, LLMConfig, UserProxyAgent
from autogen.agentchat import initiate_group_chat
from autogen.agentchat.group.patterns import DefaultPattern

llm_config = LLMConfig(api_type="openai", model="gpt-4o-mini")


def list_folders() -> str:
    """The mailbox folders."""
    return "inbox, archive"


def purge_folder(folder: str) -> str:
    """Delete a folder of mail for good."""
    shutil.rmtree(f"/var/mail/{folder}")
    return "purged"


reader = ConversableAgent(name="reader", llm_config=llm_config, functions=[list_folders])
cleaner = ConversableAgent(name="cleaner", llm_config=llm_config, functions=[purge_folder])
user = UserProxyAgent(name="user", human_input_mode="ALWAYS", code_execution_config=False)

pattern = DefaultPattern(agents=[reader], initial_agent=reader, user_agent=user)
initiate_group_chat(pattern=pattern, messages="which folders?", max_rounds=5)

pattern = DefaultPattern(agents=[cleaner], initial_agent=cleaner, user_agent=user)
initiate_group_chat(pattern=pattern, messages="clean up", max_rounds=5)
'''


def test_a_group_chat_runs_the_tools_of_its_patterns_agents() -> None:
    first, second = scan_source(MAILBOX, "mail.py")
    assert (first.api, first.provider, first.recommendation.mode) == ("initiate_group_chat", "openai", "autonomous")
    # The second chat runs the pattern built just before it: the cleaner, whose tool deletes for good.
    assert (second.api, second.recommendation.mode) == ("initiate_group_chat", "required")
    assert [t.name for t in second.risky_tools] == ["purge_folder"]
    # The user agent asking the person is no gate on a tool the group runs itself.
    assert second.existing_gate is None


TWO_AGENTS = '''
import shutil
import autogen
from autogen import AssistantAgent, register_function

assistant = AssistantAgent(name="assistant", llm_config=autogen.LLMConfig(model="gpt-4o"))
executor = autogen.UserProxyAgent(name="executor", human_input_mode="MODE", code_execution_config=False)


def purge_folder(folder: str) -> str:
    """Delete a folder of mail for good."""
    shutil.rmtree(f"/var/mail/{folder}")
    return "purged"


register_function(purge_folder, caller=assistant, executor=executor, description="purge a folder")
executor.initiate_chat(assistant, message="clean up")
'''


def test_initiate_chat_runs_the_registered_function_and_an_asking_executor_is_the_gate() -> None:
    (call,) = scan_source(TWO_AGENTS.replace("MODE", "NEVER"), "chat.py")
    assert (call.api, call.recommendation.mode, call.existing_gate) == ("initiate_chat", "required", None)
    assert [t.name for t in call.unguarded_tools] == ["purge_folder"]
    (asked,) = scan_source(TWO_AGENTS.replace("MODE", "ALWAYS"), "chat.py")
    assert (asked.recommendation.mode, asked.existing_gate) == ("required", "human_input_mode")
    assert asked.unguarded_tools == ()


DECORATED = '''
import shutil
from autogen import ConversableAgent, UserProxyAgent

assistant = ConversableAgent(name="assistant", llm_config={"model": "gpt-4o"})
executor = UserProxyAgent(name="executor", human_input_mode="NEVER")


@executor.register_for_execution()
@assistant.register_for_llm(description="Delete a folder of mail for good.")
def purge_folder(folder: str) -> str:
    shutil.rmtree(f"/var/mail/{folder}")
    return "purged"


async def main() -> None:
    await executor.a_initiate_chat(assistant, message="clean up")
'''


def test_decorated_functions_are_the_chats_tools() -> None:
    (call,) = scan_source(DECORATED, "chat.py")
    assert (call.function, call.api, call.recommendation.mode) == ("main", "a_initiate_chat", "required")
    assert [t.name for t in call.risky_tools] == ["purge_folder"]


def test_an_autogen_module_without_a_run_reports_nothing() -> None:
    source = "from autogen import ConversableAgent\nagent = ConversableAgent(name='a', llm_config=False)\nprint(agent.name)\n"
    assert scan_source(source, "quiet.py") == ()


def test_a_chat_with_a_group_chat_manager_runs_its_groups_tools() -> None:
    source = MAILBOX.split("pattern = ")[0] + (
        "from autogen import GroupChat, GroupChatManager\n"
        "group = GroupChat(agents=[user, reader, cleaner], messages=[], max_round=6)\n"
        "manager = GroupChatManager(groupchat=group, llm_config=llm_config)\n"
        "user.initiate_chat(manager, message='clean up')\n"
    )
    (call,) = scan_source(source, "group.py")
    assert (call.api, call.recommendation.mode) == ("initiate_chat", "required")
    assert [t.name for t in call.risky_tools] == ["purge_folder"]
