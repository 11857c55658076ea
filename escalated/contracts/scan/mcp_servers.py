"""MCP servers known by their package: what the tools they list at run time can do.

An agent given ``MCPServerStdio('npx', ['-y', '@modelcontextprotocol/server-slack'])`` gets its tools
from the server when it starts, so the code never shows them; but the package is written there, and
the reference servers' tools are documented: Slack's post messages, GitHub's create issues, pull
requests and files, the filesystem server's write and move files, Airtable's delete records; Brave
Search, Firecrawl and Fetch read public pages. A package not in this table stays unknown (``R7``).
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from escalated.contracts.scan.index import dotted_name
from escalated.contracts.scan.syntax import literal

# Package -> (fact kind, what its tools do); kind None: its tools read public pages only.
KNOWN: dict[str, tuple[str | None, str]] = {
    "@modelcontextprotocol/server-slack": ("message-tool", "posts messages and thread replies, adds reactions in the workspace"),
    "@modelcontextprotocol/server-github": ("message-tool", "creates issues, comments, pull requests and repositories, pushes files"),
    "@modelcontextprotocol/server-gitlab": ("message-tool", "creates issues, merge requests and repositories, pushes files"),
    "@modelcontextprotocol/server-filesystem": ("file-edit-tool", "writes, edits and moves files in the folders it is given"),
    "airtable-mcp-server": ("deletion-tool", "creates, updates and deletes records, tables and fields"),
    "@modelcontextprotocol/server-brave-search": (None, "web search"),
    "firecrawl-mcp": (None, "web scraping and crawling"),
    "@modelcontextprotocol/server-fetch": (None, "fetches web pages"),
    "mcp-server-fetch": (None, "fetches web pages"),
}
# Calls that start a server from a command and its arguments.
_STDIO = ("MCPServerStdio", "StdioServerParameters", "MCPServerStdioParams")


def known_server(call: cst.Call) -> tuple[str, str | None, str] | None:
    """(package, fact kind, what its tools do) of an MCP server started from a known package, else None."""
    if not (dotted_name(call.func) or "").endswith(_STDIO):
        return None
    for text in _strings(call):
        package = text.rsplit("@", 1)[0] if text.count("@") > (1 if text.startswith("@") else 0) else text
        if package in KNOWN:
            kind, does = KNOWN[package]
            return package, kind, does
    return None


def _strings(call: cst.Call) -> Iterator[str]:
    for arg in call.args:
        values = arg.value.elements if isinstance(arg.value, cst.List | cst.Tuple) else (arg.value,)
        for value in values:
            node = value.value if isinstance(value, cst.Element) else value
            text = literal(node) if isinstance(node, cst.SimpleString) else None
            if text is not None:
                yield text
