"""Toolkits: tool sets a library builds (``StripeAgentToolkit(...).get_tools()``, Agno's ``ShellTools()``).

Their tools are not functions of the project, so their bodies cannot be read;
what they can do is known from the library, and written here as a table, like
the SDK tables in ``apis.py``. A toolkit not in the table stays "tools only
known at run time" (R7).
"""

from __future__ import annotations

from collections.abc import Callable

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
# Toolkit methods and attributes that hand out the toolkit's tools.
TOOL_GETTERS = frozenset({"get_tools", "tools", "get_tool_list", "as_tools"})


def toolkit_of(
    index: ModuleIndex, call: cst.Call, value_of: Callable[[cst.BaseExpression], cst.BaseExpression | None], *, line: int
) -> tuple[str, Finding, str] | None:
    """(tool name, what its tools do, the toolkit's class) for ``ShellTools()`` or ``kit.get_tools()``."""
    built: cst.BaseExpression | None = call
    if isinstance(call.func, cst.Attribute) and call.func.attr.value in TOOL_GETTERS:
        built = call.func.value
        if isinstance(built, cst.Name | cst.Attribute):
            built = value_of(built)
    if not isinstance(built, cst.Call):
        return None
    qualified = index.qualified(built.func)
    found = toolkit_finding(qualified, built, line=line) if qualified is not None else None
    if found is None or qualified is None:
        return None
    return f"{qualified.rpartition('.')[2]} tools", found, qualified


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
