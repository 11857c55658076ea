"""The MCP server (CONTRACT §14): ``escalated mcp`` over stdio, and the same
tools at ``/mcp`` with ``serve --mcp``. Needs ``pip install 'escalated[mcp]'``.

``tools`` (the table), ``calls`` (what each tool does against a backend) and
``server`` (the SDK's server over them) are shared by both transports;
``remote`` (the HTTP API as the backend) and ``stdio`` are the agent side.
"""

from __future__ import annotations

try:
    import mcp  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the install
    raise ImportError("the MCP server needs the official MCP SDK: pip install 'escalated[mcp]'") from exc
