"""Drives `mcp-agents workspace-tools DIR` with the Python SDK's client (mcp 2.x), which
checks every result's structured content against the tool's output schema.

Usage: workspace_client.py CONFIG_JSON, where CONFIG_JSON has command, args, env and calls
(a list of [tool, arguments]). Prints one JSON report: the protocol version, the tools with
their annotations, and for each call its error flag, structured content and text.
"""

import asyncio
import json
import sys

from mcp import Client, StdioServerParameters


async def main() -> None:
    config = json.loads(sys.argv[1])
    target = StdioServerParameters(command=config["command"], args=config["args"], env=config["env"])
    report: dict = {"calls": []}
    async with Client(target, mode="2026-07-28") as client:
        report["protocol_version"] = client.protocol_version
        listed = await client.list_tools()
        report["tools"] = {
            tool.name: {
                "read_only": tool.annotations.read_only_hint if tool.annotations else None,
                "has_output_schema": tool.output_schema is not None,
            }
            for tool in listed.tools
        }
        for name, arguments in config["calls"]:
            result = await client.call_tool(name, arguments)
            report["calls"].append(
                {
                    "is_error": bool(result.is_error),
                    "structured": result.structured_content,
                    "text": result.content[0].text,
                }
            )
    print(json.dumps(report))


asyncio.run(main())
