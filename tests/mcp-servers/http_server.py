"""A real MCP server over streamable HTTP (the official Python SDK, v2), for the gateway's HTTP
transport test. Usage: python http_server.py PORT  — serves http://127.0.0.1:PORT/mcp."""
import asyncio
import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("http-probe")


@server.tool()
def echo(text: str) -> str:
    """Returns its text."""
    return text


@server.tool()
async def slow(seconds: float) -> str:
    """Answers after some seconds (for the liveness test: the server is killed meanwhile)."""
    await asyncio.sleep(seconds)
    return "done"


if __name__ == "__main__":
    server.run(transport="streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
