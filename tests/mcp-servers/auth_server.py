"""A real MCP server behind OAuth over streamable HTTP (the official Python SDK, v2, as a
resource server): it publishes its protected resource metadata (RFC 9728) naming the
authorization server, answers 401 with a `WWW-Authenticate` challenge without a token, and
accepts a bearer token only when the authorization server says, by introspection (RFC 7662),
that it is active, carries the `mcp` scope and was issued for this very server (its audience,
RFC 8707). Its one tool says who the token speaks for.

usage: python auth_server.py PORT ISSUER INTROSPECTION_URL  — serves http://127.0.0.1:PORT/mcp
"""
import base64
import json
import sys
import urllib.parse
import urllib.request

import anyio
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer

PORT, ISSUER, INTROSPECTION = int(sys.argv[1]), sys.argv[2], sys.argv[3]
RESOURCE = f"http://127.0.0.1:{PORT}/mcp"


def introspect(token):
    parts = urllib.parse.urlsplit(INTROSPECTION)
    url = urllib.parse.urlunsplit(parts._replace(netloc=f"{parts.hostname}:{parts.port}"))
    request = urllib.request.Request(url, data=urllib.parse.urlencode({"token": token}).encode())
    basic = base64.b64encode(f"{parts.username}:{parts.password}".encode()).decode()
    request.add_header("Authorization", "Basic " + basic)
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


class Introspector:
    async def verify_token(self, token):
        answer = await anyio.to_thread.run_sync(introspect, token)
        if answer.get("active") is not True:
            return None
        audience = answer.get("aud")
        audience = audience if isinstance(audience, list) else [audience]
        return AccessToken(
            token=token,
            client_id=answer.get("client_id", ""),
            scopes=answer.get("scope", "").split(),
            expires_at=answer.get("exp"),
            resource=RESOURCE if RESOURCE in audience else (audience[0] if audience else None),
            subject=answer.get("sub"),
        )


server = MCPServer(
    "auth-probe",
    token_verifier=Introspector(),
    auth=AuthSettings(
        issuer_url=ISSUER,
        resource_server_url=RESOURCE,
        required_scopes=["mcp"],
        validate_token_resource=True,
    ),
)


@server.tool()
def whoami() -> str:
    """Says whom the request's token speaks for."""
    token = get_access_token()
    return f"signed in as {token.subject if token else 'nobody'}"


if __name__ == "__main__":
    server.run(transport="streamable-http", host="127.0.0.1", port=PORT)
