"""What the authentication tests serve: ``guarded:toolkit``, and an OAuth resource server.

``python guarded.py PORT`` serves the toolkit over streamable HTTP in the MCP authorization
spec's resource-server mode: `Verifier` accepts ``alice-token`` (scope ``tools``) and
``reader-token`` (no scope), and the protected resource metadata names ``ISSUER``.
"""

from __future__ import annotations

import sys

import anyio
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings

from ferrotool import Injected, Toolkit, tool
from ferrotool.mcp.serve import McpPrincipal, run_http
from ferrotool.mcp.server import McpToolServer

ISSUER = "https://issuer.example.com"


@tool(read_only=True)
def whoami(principal: Injected[McpPrincipal]) -> str:
    """Say who called.

    Args:
        principal: The authenticated client (injected).
    """
    scopes = ",".join(principal.scopes)
    return f"{principal.token_kind}:{principal.subject}:{principal.client_id}:{scopes}"


@tool(read_only=True)
async def wait(seconds: float) -> str:
    """Wait, then say so.

    Args:
        seconds: How long.
    """
    await anyio.sleep(seconds)
    return "waited"


def toolkit() -> Toolkit:
    """The served toolkit: who called, and a call that takes its time."""
    kit = Toolkit()
    kit.register(whoami)
    kit.register(wait)
    return kit


class Verifier:
    """Two known tokens: one for alice with the ``tools`` scope, one without any scope."""

    async def verify_token(self, token: str) -> AccessToken | None:
        if token == "alice-token":
            return AccessToken(token=token, client_id="client-a", scopes=["tools"], subject="alice")
        if token == "reader-token":
            return AccessToken(token=token, client_id="client-r", scopes=[], subject="reader")
        return None


def main() -> None:
    port = int(sys.argv[1])
    url = f"http://127.0.0.1:{port}/mcp"
    auth = AuthSettings(
        issuer_url=ISSUER,  # type: ignore[arg-type]  # pydantic parses the string
        resource_server_url=url,  # type: ignore[arg-type]
        required_scopes=["tools"],
        validate_token_resource=False,
    )
    run_http(McpToolServer(toolkit()), port=port, token_verifier=Verifier(), auth=auth)


if __name__ == "__main__":
    main()
