"""MCP for ferrotool: any MCP server's tools as ferrotool tools, and any toolkit as an MCP server.

Needs the ``mcp`` SDK (``pip install 'ferrotool[mcp]'``); the rest of ferrotool does not import
this package until it is asked for.

* `McpClient` connects to a server over stdio, SSE or streamable HTTP;
  `register_mcp(toolkit, client)` registers its tools (`McpTool`, named
  ``mcp__{server}__{tool}``).
* ``ferrotool serve MODULE:OBJECT`` (`ferrotool.mcp.server`) serves a toolkit to MCP clients.
"""

from ferrotool._extras import requires_extra

with requires_extra("ferrotool.mcp", "mcp"):
    from ferrotool.mcp._convert import RejectedTool, tool_name
    from ferrotool.mcp._registration import register_mcp, remove_mcp
    from ferrotool.mcp.client import (
        DEFAULT_REQUEST_TIMEOUT,
        DEFAULT_STARTUP_TIMEOUT,
        HeaderProvider,
        McpClient,
        McpMeta,
        Mode,
        ProgressHandler,
    )
    from ferrotool.mcp.tool import McpTool, McpTrust

__all__ = [
    "DEFAULT_REQUEST_TIMEOUT",
    "DEFAULT_STARTUP_TIMEOUT",
    "HeaderProvider",
    "McpClient",
    "McpMeta",
    "McpTool",
    "McpTrust",
    "Mode",
    "ProgressHandler",
    "RejectedTool",
    "register_mcp",
    "remove_mcp",
    "tool_name",
]
