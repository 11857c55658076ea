"""Toolkits: tool sets a library builds (``StripeAgentToolkit(...).get_tools()``, Agno's ``ShellTools()``).

Their tools are not functions of the project, so their bodies cannot be read;
what they can do is known from the library, and written here as a table, like
the SDK tables in ``apis.py``. A toolkit not in the table stays "tools only
known at run time" (R7).
"""

from __future__ import annotations

from collections.abc import Callable

import attrs
import libcst as cst

from escalated.contracts import rules
from escalated.contracts.calls import Finding
from escalated.contracts.scan.index import ModuleIndex
from escalated.contracts.scan.syntax import literal

# Qualified constructor (or its module prefix) -> (fact, what its tools do).
_TABLE: tuple[tuple[str, str, str], ...] = (
    ("stripe_agent_toolkit.", "payment-tool", "the Stripe toolkit's tools call the Stripe API"),
    ("paypal_agent_toolkit.", "payment-tool", "the PayPal toolkit's tools call the PayPal API"),
    ("agno.tools.shell.", "code-tool", "Agno ShellTools runs shell commands"),
    ("agno.tools.python.", "code-tool", "Agno PythonTools runs Python code"),
    ("agno.tools.email.", "message-tool", "Agno EmailTools sends email"),
    ("agno.tools.gmail.", "message-tool", "Agno GmailTools sends email"),
    ("agno.tools.google.gmail.", "message-tool", "Agno GmailTools sends email"),
    ("agno.tools.slack.", "message-tool", "Agno SlackTools posts messages"),
    ("agno.tools.resend.", "message-tool", "Agno ResendTools sends email"),
    ("agno.tools.twilio.", "message-tool", "Agno TwilioTools sends SMS"),
    ("agno.tools.file.", "file-edit-tool", "Agno FileTools writes files"),
    ("agno.tools.local_file_system.", "file-edit-tool", "Agno LocalFileSystemTools writes files"),
    ("langchain_community.agent_toolkits.GmailToolkit", "message-tool", "GmailToolkit sends email"),
    ("langchain_google_community.GmailToolkit", "message-tool", "GmailToolkit sends email"),
    ("langchain_community.agent_toolkits.SlackToolkit", "message-tool", "SlackToolkit posts messages"),
    ("langchain_community.agent_toolkits.FileManagementToolkit", "deletion-tool", "FileManagementToolkit deletes and writes files"),
    ("langchain_community.agent_toolkits.SQLDatabaseToolkit", "sql-from-output", "SQLDatabaseToolkit runs the SQL the model writes"),
)
# Configured actions that only read (Stripe's "read", PayPal's "get", "list", "show").
_READS = frozenset({"read", "get", "list", "show", "retrieve", "search"})
# Agno toolkits' risky tools by name: (tool, fact, on by default). A toolkit takes
# include_tools=/exclude_tools= (names), a flag per tool (send_email=False, enable_send_email=False,
# all=True) and requires_confirmation_tools= (names the run pauses on for a human).
_AGNO_GMAIL = (
    ("send_email", "message-tool", True), ("send_email_reply", "message-tool", True), ("send_draft", "message-tool", False),
    ("delete_custom_label", "deletion-tool", True), ("trash_thread", "deletion-tool", False), ("trash_message", "deletion-tool", False),
)
_AGNO_TOOLS: dict[str, tuple[tuple[str, str, bool], ...]] = {
    "agno.tools.shell.": (("run_shell_command", "code-tool", True),),
    "agno.tools.email.": (("email_user", "message-tool", True),),
    "agno.tools.gmail.": _AGNO_GMAIL,
    "agno.tools.google.gmail.": _AGNO_GMAIL,
    "agno.tools.slack.": (("send_message", "message-tool", True), ("send_message_thread", "message-tool", True)),
    "agno.tools.resend.": (("send_email", "message-tool", True),),
    "agno.tools.twilio.": (("send_sms", "message-tool", True),),
    "agno.tools.file.": (
        ("save_file", "file-edit-tool", True), ("replace_file_chunk", "file-edit-tool", True), ("delete_file", "deletion-tool", False),
    ),
    "agno.tools.local_file_system.": (("write_file", "file-edit-tool", True),),
}  # fmt: skip
# CAMEL (camel-ai) toolkits' risky tools by name, from each toolkit's get_tools() (camel-ai 0.2.90): a
# ChatAgent(tools=[*kit.get_tools()]) offers them all, FunctionTool(kit.method) the one. A CAMEL toolkit
# not here leaves its tools "known at run time" (public readers are in tools.py's _PUBLIC_READ_TOOLS).
_CAMEL_CODE = "code-tool"
_CAMEL_TOOLS: dict[str, tuple[tuple[str, str], ...]] = {
    "CodeExecutionToolkit": (("execute_code", _CAMEL_CODE), ("execute_command", _CAMEL_CODE)),
    "TerminalToolkit": (
        ("shell_exec", _CAMEL_CODE), ("shell_write_to_process", _CAMEL_CODE), ("shell_write_content_to_file", "file-edit-tool"),
    ),
    # browse_url hands the task to the toolkit's own planning and web agents, which click, type and
    # submit forms on a live browser page (as Playwright's keyboard and mouse, R1).
    "BrowserToolkit": (("browse_url", _CAMEL_CODE),),
    "AsyncBrowserToolkit": (("browse_url", _CAMEL_CODE),),
    "PyAutoGUIToolkit": (
        ("mouse_click", _CAMEL_CODE), ("keyboard_type", _CAMEL_CODE), ("hotkey", _CAMEL_CODE), ("press_key", _CAMEL_CODE),
        ("mouse_drag", _CAMEL_CODE),
    ),
    "FileToolkit": (("write_to_file", "file-edit-tool"), ("edit_file", "file-edit-tool"), ("notebook_edit_cell", "file-edit-tool")),
    "FileWriteToolkit": (("write_to_file", "file-edit-tool"),),  # the toolkit's name before FileToolkit
    "GmailToolkit": (
        ("gmail_send_email", "message-tool"), ("gmail_reply_to_email", "message-tool"), ("gmail_forward_email", "message-tool"),
        ("gmail_send_draft", "message-tool"), ("gmail_move_to_trash", "deletion-tool"), ("gmail_delete_label", "deletion-tool"),
    ),
    "OutlookMailToolkit": (
        ("outlook_send_email", "message-tool"), ("outlook_reply_to_email", "message-tool"), ("outlook_send_draft_email", "message-tool"),
        ("outlook_delete_email", "deletion-tool"),
    ),
    "IMAPMailToolkit": (("send_email", "message-tool"), ("reply_to_email", "message-tool"), ("delete_email", "deletion-tool")),
    "ResendToolkit": (("send_email", "message-tool"),),
    "SlackToolkit": (("send_slack_message", "message-tool"), ("delete_slack_message", "deletion-tool")),
    "WhatsAppToolkit": (("send_message", "message-tool"),),
    "LinkedInToolkit": (("create_post", "message-tool"), ("delete_post", "deletion-tool")),
    "GithubToolkit": (("github_create_pull_request", "message-tool"),),
    "SQLToolkit": (("execute_query", "sql-from-output"),),
    # Reads only (balances, payments, refunds listed; nothing created).
    "StripeToolkit": (),
}  # fmt: skip
# Single tools a library ships, imported by name (from strands_tools import shell): what they do.
# A tool of such a package missing here is judged by its name, as any tool whose body is unseen.
LIBRARY_TOOLS: dict[str, tuple[str, str] | None] = {
    "strands_tools.python_repl": ("code-tool", "Strands python_repl runs Python code"),
    "strands_tools.shell": ("code-tool", "Strands shell runs shell commands"),
    "strands_tools.use_computer": ("code-tool", "Strands use_computer runs commands and drives the desktop"),
    "strands_tools.editor": ("file-edit-tool", "Strands editor writes files"),
    "strands_tools.file_write": ("file-edit-tool", "Strands file_write writes files"),
    "strands_tools.slack": ("message-tool", "Strands slack posts messages"),
    # Images made by a model and saved under output/ with fresh names: the program's output, like printed text.
    "strands_tools.generate_image": None,
    # Nothing private read, nothing written.
    "strands_tools.current_time": None, "strands_tools.calculator": None, "strands_tools.think": None,
}  # fmt: skip
# Coinbase AgentKit: ``get_langchain_tools(agentkit)`` (and its kin for other frameworks) hands out the
# actions of ``AgentKit(AgentKitConfig(action_providers=[wallet_action_provider(), ...]))``. What each
# provider's actions do, by the provider's name; one not here leaves the toolkit "known at run time".
AGENTKIT_GETTERS = frozenset({
    "get_langchain_tools", "get_openai_agents_sdk_tools", "get_pydantic_ai_tools", "get_strands_tools", "get_autogen_tools",
})  # fmt: skip
_AGENTKIT_PROVIDERS: dict[str, tuple[str, str] | None] = {
    "wallet_action_provider": ("payment-tool", "native_transfer sends the wallet's funds"),
    "erc20_action_provider": ("payment-tool", "transfer sends ERC-20 tokens"),
    "erc721_action_provider": ("payment-tool", "transfer sends NFTs"),
    "weth_action_provider": ("payment-tool", "wrap_eth spends the wallet's ETH"),
    "compound_action_provider": ("payment-tool", "supply, withdraw and borrow move funds on Compound"),
    "morpho_action_provider": ("payment-tool", "deposit and withdraw move funds on Morpho"),
    "superfluid_action_provider": ("payment-tool", "create_flow streams the wallet's tokens"),
    "wow_action_provider": ("payment-tool", "buy_token and sell_token trade the wallet's funds"),
    "x402_action_provider": ("payment-tool", "make_http_request_with_x402 pays for a request"),
    "cdp_api_action_provider": ("payment-tool", "trade and the faucet move the wallet's funds"),
    "cdp_evm_wallet_action_provider": ("payment-tool", "swap trades the wallet's tokens"),
    "cdp_smart_wallet_action_provider": ("payment-tool", "swap trades the wallet's tokens"),
    "basename_action_provider": ("payment-tool", "register_basename pays for a name"),
    "twitter_action_provider": ("message-tool", "post_tweet and post_tweet_reply publish on X"),
    "ssh_action_provider": ("code-tool", "ssh_execute runs commands on a remote host"),
    "pyth_action_provider": None,  # price feeds: public data, read only
}  # fmt: skip
# Composio: ``composio.tools.get(user_id=..., toolkits=["GMAIL"], tools=["GITHUB_CREATE_AN_ISSUE"])`` and a
# Tool Router session's ``composio.create(user_id=..., toolkits=[...]).tools()`` hand out actions on the
# user's connected accounts, run at once when the model calls them. A toolkit offers all its actions;
# what they can do, by the toolkit's slug. A tool slug is ``APP_ACTION``: its action words are what
# Composio documents it to do. A toolkit not here leaves the tools "known at run time".
_COMPOSIO_CLIENTS = frozenset({"composio.Composio", "composio_openai.ComposioToolSet", "composio.ComposioToolSet"})
_COMPOSIO_APPS: dict[str, tuple[str, str] | None] = {
    "gmail": ("message-tool", "sends and deletes email"), "outlook": ("message-tool", "sends and deletes email"),
    "slack": ("message-tool", "posts messages"), "slackbot": ("message-tool", "posts messages"),
    "discord": ("message-tool", "posts messages"), "discordbot": ("message-tool", "posts messages"),
    "telegram": ("message-tool", "sends messages"), "whatsapp": ("message-tool", "sends messages"),
    "microsoft_teams": ("message-tool", "posts messages"), "twitter": ("message-tool", "posts tweets"),
    "linkedin": ("message-tool", "publishes posts"), "reddit": ("message-tool", "publishes posts and comments"),
    "github": ("message-tool", "opens issues, pull requests and comments as the user, deletes repositories"),
    "gitlab": ("message-tool", "opens issues, merge requests and comments as the user, deletes projects"),
    "stripe": ("payment-tool", "creates charges, refunds and payouts"), "paypal": ("payment-tool", "sends payments"),
    "square": ("payment-tool", "takes payments"),
    "googledrive": ("deletion-tool", "deletes and writes files"), "dropbox": ("deletion-tool", "deletes and writes files"),
    "notion": ("file-edit-tool", "writes pages"), "googledocs": ("file-edit-tool", "writes documents"),
    "googlesheets": ("file-edit-tool", "writes sheets"), "airtable": ("file-edit-tool", "writes records"),
    "hubspot": ("file-edit-tool", "writes CRM records"), "salesforce": ("file-edit-tool", "writes CRM records"),
    "jira": ("file-edit-tool", "writes issues"), "linear": ("file-edit-tool", "writes issues"),
    "asana": ("file-edit-tool", "writes tasks"), "trello": ("file-edit-tool", "writes cards"),
    "googlecalendar": ("file-edit-tool", "writes events"),
    # Public data only.
    "hackernews": None, "weathermap": None, "composio_search": None, "serpapi": None, "tavily": None, "exa": None,
}  # fmt: skip
# Toolkit methods and attributes that hand out the toolkit's tools.
TOOL_GETTERS = frozenset({"get_tools", "tools", "get_tool_list", "as_tools"})


@attrs.frozen
class Toolkit:
    name: str  # "ShellTools tools"
    findings: tuple[Finding, ...]  # what its tools can do
    built_by: str  # the toolkit's qualified class
    gated: bool = False  # every risky tool it offers pauses the run for a human (Agno requires_confirmation_tools)


def toolkit_of(
    index: ModuleIndex, call: cst.Call, value_of: Callable[[cst.BaseExpression], cst.BaseExpression | None], *, line: int
) -> Toolkit | None:
    """What the tools of ``ShellTools()`` or ``kit.get_tools()`` do, and whether they ask a human first."""
    composio = _composio_tools(index, call, value_of, line=line)
    if composio is not None:
        return composio
    built: cst.BaseExpression | None = call
    if isinstance(call.func, cst.Attribute) and call.func.attr.value in TOOL_GETTERS:
        built = call.func.value
        if isinstance(built, cst.Name | cst.Attribute):
            built = value_of(built)
    if not isinstance(built, cst.Call):
        return None
    qualified = index.qualified(built.func)
    if qualified is None:
        return None
    if qualified.startswith("coinbase_agentkit_") and qualified.rpartition(".")[2] in AGENTKIT_GETTERS:
        return _agentkit_tools(index, built, value_of, line=line)
    named = _agno_tools(qualified, built, line=line) or _camel_tools(index, qualified, call, built, value_of, line=line)
    if named is not None:
        return named
    found = toolkit_finding(qualified, built, line=line)
    return None if found is None else Toolkit(f"{qualified.rpartition('.')[2]} tools", (found,), qualified)


def _agentkit_tools(
    index: ModuleIndex, getter: cst.Call, value_of: Callable[[cst.BaseExpression], cst.BaseExpression | None], *, line: int
) -> Toolkit | None:
    """``get_langchain_tools(agentkit)``: the actions of the providers ``AgentKit(...)`` was configured with."""
    given = getter.args[0].value if getter.args else None
    kit = value_of(given) if isinstance(given, cst.Name) else given
    if not isinstance(kit, cst.Call) or (index.qualified(kit.func) or "").rpartition(".")[2] != "AgentKit":
        return None
    config = next((a.value for a in kit.args if a.keyword is None or a.keyword.value == "config"), None)
    config = value_of(config) if isinstance(config, cst.Name) else config
    keywords = [a for call in (config, kit) if isinstance(call, cst.Call) for a in call.args if a.keyword is not None]
    listed = next((a.value for a in keywords if a.keyword is not None and a.keyword.value == "action_providers"), None)
    listed = value_of(listed) if isinstance(listed, cst.Name) else listed
    if not isinstance(listed, cst.List | cst.Tuple):
        return None
    facts: dict[str, list[str]] = {}
    for element in listed.elements:
        provider = element.value.func if isinstance(element.value, cst.Call) else None
        name = (index.qualified(provider) or "").rpartition(".")[2] if provider is not None else ""
        known = _AGENTKIT_PROVIDERS.get(name, ("tools-unresolved", "not analysed: a provider whose actions the scan does not know"))
        if known is not None:
            facts.setdefault(known[0], []).append(f"{name or 'a provider'}: {known[1]}")
    qualified = index.qualified(getter.func) or "AgentKit"
    if not facts:
        return Toolkit("AgentKit tools", (rules.fact("tool-reads-only", f"AgentKit's actions only read ({qualified})", line),), qualified)
    found = tuple(rules.fact(fact, f"AgentKit {'; '.join(whats)} ({qualified})", line) for fact, whats in facts.items())
    return Toolkit("AgentKit tools", found, qualified)


def _composio_tools(
    index: ModuleIndex, call: cst.Call, value_of: Callable[[cst.BaseExpression], cst.BaseExpression | None], *, line: int
) -> Toolkit | None:
    """``composio.tools.get(...)`` or ``session.tools()`` of ``composio.create(...)``: the actions of the
    toolkits and tool slugs written there, on a ``Composio`` client."""
    func = call.func
    served = _composio_served(call)
    if served is None and isinstance(func, cst.Attribute) and func.attr.value == "get_tools" and isinstance(func.value, cst.Name):
        # await MultiServerMCPClient({"composio": {"url": session.mcp.url, ...}}).get_tools()
        client = value_of(func.value)
        served = _composio_served(client) if isinstance(client, cst.Call) else None
    if served is not None:
        # HostedMCPTool(tool_config={"server_url": session.mcp.url, ...}): the session's tools over MCP.
        func = cst.Attribute(value=served, attr=cst.Name("tools"))
    if not isinstance(func, cst.Attribute):
        return None
    if func.attr.value == "get" and isinstance(func.value, cst.Attribute) and func.value.attr.value == "tools":
        client, chosen = func.value.value, call
    elif func.attr.value == "tools":
        session = value_of(func.value) if isinstance(func.value, cst.Name) else func.value
        if not (isinstance(session, cst.Call) and isinstance(session.func, cst.Attribute) and session.func.attr.value == "create"):
            return None
        client, chosen = session.func.value, session
    else:
        return None
    built = value_of(client) if isinstance(client, cst.Name) else client
    qualified = index.qualified(built.func) if isinstance(built, cst.Call) else None
    if qualified not in _COMPOSIO_CLIENTS:
        return None
    keywords = {a.keyword.value: a.value for a in chosen.args if a.keyword is not None}
    toolkits, slugs = _names(keywords.get("toolkits")), _names(keywords.get("tools"))
    facts: dict[str, list[str]] = {}
    for toolkit in sorted(toolkits or ()):
        known = _COMPOSIO_APPS.get(toolkit.lower(), ("tools-unresolved", "not analysed: a toolkit whose actions the scan does not know"))
        if known is not None:
            facts.setdefault(known[0], []).append(f"{toolkit}: {known[1]}")
    for slug in sorted(slugs or ()):
        app, _, action = slug.lower().partition("_")
        for kind in rules.action_facts(action or app):
            facts.setdefault(kind, []).append(slug)
    if toolkits is None and slugs is None and chosen is not call and "search" not in keywords:
        # A Tool Router session with no toolkits written reaches every toolkit the user connects.
        why = "a Tool Router session with no toolkits written: every toolkit the user connects, Gmail's send among them"
        return Toolkit("Composio tools", (rules.fact("message-tool", f"Composio {why} ({qualified})", line),), qualified)
    if toolkits is None and slugs is None:
        why = "not analysed: the toolkits are not written in the code"
        return Toolkit("Composio tools", (rules.fact("tools-unresolved", f"Composio tools: {why} ({qualified})", line),), qualified)
    if not facts:
        why = f"Composio tools {', '.join(sorted((toolkits or set()) | (slugs or set())))}: nothing sent, deleted or written"
        return Toolkit("Composio tools", (rules.fact("tool-reads-only", f"{why} ({qualified})", line),), qualified)
    found = tuple(rules.fact(fact, f"Composio {'; '.join(whats)} ({qualified})", line) for fact, whats in facts.items())
    return Toolkit("Composio tools", found, qualified)


def _composio_served(call: cst.Call) -> cst.BaseExpression | None:
    """The session whose MCP server an MCP tool's configuration names (``"server_url": session.mcp.url``,
    ``url=session.mcp.url``), or None."""
    values: list[cst.BaseExpression] = [arg.value for arg in call.args]
    while values:
        value = values.pop()
        if isinstance(value, cst.Dict):
            values.extend(e.value for e in value.elements if isinstance(e, cst.DictElement))
        elif (
            isinstance(value, cst.Attribute) and value.attr.value == "url"
            and isinstance(value.value, cst.Attribute) and value.value.attr.value == "mcp"
        ):  # fmt: skip
            return value.value.value
    return None


def agno_risky_tools(qualified: str, built: cst.Call) -> tuple[str, ...] | None:
    """The risky tools ``built`` (an Agno toolkit's constructor call) offers as configured; None if unknown."""
    offered = _agno_offered(qualified, built)
    return None if offered is None else tuple(tool for tool, _fact in offered)


def _agno_offered(qualified: str, built: cst.Call) -> list[tuple[str, str]] | None:
    prefix = next((p for p in _AGNO_TOOLS if qualified.startswith(p)), None)
    if prefix is None:
        return None
    keywords = {a.keyword.value: a.value for a in built.args if a.keyword is not None}
    include, exclude = _names(keywords.get("include_tools")), _names(keywords.get("exclude_tools")) or set()
    everything = _flag(keywords.get("all")) is True
    offered = []
    for tool, fact, default in _AGNO_TOOLS[prefix]:
        flag = _flag(keywords.get(tool, keywords.get(f"enable_{tool}")))
        on = (tool in include) if include is not None else (everything or (default if flag is None else flag))
        if on and tool not in exclude:
            offered.append((tool, fact))
    return offered


def _agno_tools(qualified: str, built: cst.Call, *, line: int) -> Toolkit | None:
    """An Agno toolkit whose risky tools are known by name: those it offers as configured."""
    offered = _agno_offered(qualified, built)
    if offered is None:
        return None
    keywords = {a.keyword.value: a.value for a in built.args if a.keyword is not None}
    confirmed = _names(keywords.get("requires_confirmation_tools")) or set()
    name = f"{qualified.rpartition('.')[2]} tools"
    if not offered:
        why = f"{name}: none of its sending, deleting or code-running tools is offered ({qualified})"
        return Toolkit(name, (rules.fact("tool-reads-only", why, line),), qualified)
    facts = dict.fromkeys(fact for _tool, fact in offered)
    found = tuple(
        rules.fact(fact, f"{name} {', '.join(t for t, f in offered if f == fact)} ({qualified})", line) for fact in facts
    )
    return Toolkit(name, found, qualified, gated=all(t in confirmed for t, _f in offered))


def _camel_toolkit(qualified: str) -> str | None:
    """``camel.toolkits.CodeExecutionToolkit`` (or its defining module's path): the toolkit's name if the table knows it."""
    name = qualified.rpartition(".")[2]
    return name if qualified.startswith("camel.toolkits.") and name in _CAMEL_TOOLS else None


def _camel_tools(
    index: ModuleIndex,
    qualified: str,
    call: cst.Call,
    built: cst.Call,
    value_of: Callable[[cst.BaseExpression], cst.BaseExpression | None],
    *,
    line: int,
) -> Toolkit | None:
    """A CAMEL toolkit's tools: ``kit.get_tools()`` all of them, ``FunctionTool(kit.method)`` that method."""
    offered: tuple[tuple[str, str], ...]
    if qualified.startswith("camel.toolkits.") and qualified.endswith(".FunctionTool"):
        given = next((a.value for a in built.args if a.keyword is None or a.keyword.value == "func"), None)
        if not isinstance(given, cst.Attribute):
            return None
        kit = value_of(given.value) if isinstance(given.value, cst.Name | cst.Attribute) else given.value
        name = _camel_toolkit(index.qualified(kit.func) or "") if isinstance(kit, cst.Call) else None
        if name is None:
            return None
        method = given.attr.value
        offered = tuple(t for t in _CAMEL_TOOLS[name] if t[0] == method)
        if not offered:
            why = f"{name}.{method} sends, deletes, writes and runs nothing ({qualified})"
            return Toolkit(f"{name}.{method}", (rules.fact("tool-reads-only", why, line),), qualified)
    else:
        name = _camel_toolkit(qualified)
        if name is None or built is call:
            return None  # the toolkit object itself is no tool; its get_tools() is
        offered = _CAMEL_TOOLS[name]
    if not offered:
        why = f"{name} tools: none of them sends, deletes, writes or runs anything ({qualified})"
        return Toolkit(f"{name} tools", (rules.fact("tool-reads-only", why, line),), qualified)
    facts = dict.fromkeys(fact for _tool, fact in offered)
    label = f"CAMEL {name}"
    found = tuple(rules.fact(fact, f"{label} {', '.join(t for t, f in offered if f == fact)} ({qualified})", line) for fact in facts)
    return Toolkit(f"{name} tools", found, qualified)


def _names(node: cst.BaseExpression | None) -> set[str] | None:
    """A literal list of tool names, or None when none is written (or it is not literal)."""
    if not isinstance(node, cst.List | cst.Tuple):
        return None
    names = {literal(e.value) for e in node.elements}
    return None if None in names else {n for n in names if n is not None}


def _flag(node: cst.BaseExpression | None) -> bool | None:
    return {"True": True, "False": False}.get(node.value) if isinstance(node, cst.Name) else None


def toolkit_finding(qualified: str, built: cst.Call, *, line: int) -> Finding | None:
    """What the tools of a toolkit built by ``built`` (whose callee is ``qualified``) can do."""
    for prefix, fact, what in _TABLE:
        if qualified.startswith(prefix) or qualified == prefix.rstrip("."):
            actions = _configured_actions(built)
            if actions is not None and fact == "payment-tool":
                writes = sorted(a for a in actions if a.rpartition(".")[2] not in _READS)
                if not writes:
                    return rules.fact("tool-reads-only", f"{what}, configured to read only ({qualified})", line)
                return rules.fact(fact, f"{what}: {', '.join(writes)} ({qualified})", line)
            return rules.fact(fact, f"{what} ({qualified})", line)
    return None


def toolkit_called(call: cst.Call, qualified: str, *, line: int) -> Finding | None:
    """A method of a toolkit object, or of what one hands out, called by the code itself:
    ``toolkit.handle_tool_call(block)``, ``toolkit.get_paypal_api().run(name, args)`` run its tools.
    Not its constructor, nor a getter (``get_tools()``, ``get_api()``): those run nothing."""
    method = call.func.attr.value if isinstance(call.func, cst.Attribute) else ""
    if not method or method[0].isupper() or method.startswith("get_") or method in TOOL_GETTERS:
        return None
    for prefix, fact, what in _TABLE:
        if qualified.startswith(prefix):
            return rules.fact(fact, f"{what} ({qualified})", line)
    return None


def _configured_actions(built: cst.Call) -> list[str] | None:
    """configuration={"actions": {"invoices": {"create": True}}} (or Configuration(actions={...})):
    the enabled actions, when written there."""
    config = next((a.value for a in built.args if a.keyword is not None and a.keyword.value == "configuration"), None)
    if isinstance(config, cst.Call):
        actions = next((a.value for a in config.args if a.keyword is not None and a.keyword.value == "actions"), None)
        config = cst.Dict([cst.DictElement(cst.SimpleString('"actions"'), actions)]) if actions is not None else None
    if not isinstance(config, cst.Dict):
        return None
    for element in config.elements:
        if isinstance(element, cst.DictElement) and literal(element.key) == "actions" and isinstance(element.value, cst.Dict):
            out = []
            for resource in element.value.elements:
                if isinstance(resource, cst.DictElement) and isinstance(resource.value, cst.Dict):
                    for op in resource.value.elements:
                        if isinstance(op, cst.DictElement) and not (isinstance(op.value, cst.Name) and op.value.value == "False"):
                            out.append(f"{literal(resource.key)}.{literal(op.key)}")
            return out
    return []


def library_tool(qualified: str, *, line: int) -> tuple[Finding, ...] | None:
    """``strands_tools.shell`` and its kin: what a library's own tool does (empty: nothing of note)."""
    if qualified not in LIBRARY_TOOLS:
        return None
    known = LIBRARY_TOOLS[qualified]
    return () if known is None else (rules.fact(known[0], known[1], line),)
