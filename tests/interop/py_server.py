"""A small MCP server written with the Python SDK (mcp 2.x), used as a third-party child in
the interoperability tests. stdio by default; `--http PORT` serves streamable HTTP at /mcp."""

import sys

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

server = MCPServer("py-fixture")


@server.tool(annotations=ToolAnnotations(read_only_hint=True, destructive_hint=False))
def shout(text: str) -> str:
    """Returns the text in capital letters."""
    return text.upper()


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        import uvicorn
        from mcp.server.transport_security import TransportSecuritySettings

        app = server.streamable_http_app(
            streamable_http_path="/mcp",
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        print(f"py-fixture listening on http://127.0.0.1:{sys.argv[2]}/mcp", file=sys.stderr, flush=True)
        uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
    else:
        server.run()
