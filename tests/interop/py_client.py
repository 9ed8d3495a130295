"""Drives mcp-agents with the Python SDK's client (mcp 2.x), as a third-party client would.

Usage: py_client.py CONFIG_JSON, where CONFIG_JSON has
  transport: "stdio" | "http", mode: "2026-07-28" | "legacy",
  and either command/args/env (stdio) or url (http).
Prints one JSON report of what the client saw.
"""

import asyncio
import json
import sys

from mcp import Client, StdioServerParameters


async def main() -> None:
    config = json.loads(sys.argv[1])
    if config["transport"] == "stdio":
        target = StdioServerParameters(
            command=config["command"], args=config["args"], env=config["env"]
        )
    else:
        target = config["url"]
    report: dict = {}
    async with Client(target, mode=config["mode"]) as client:
        report["protocol_version"] = client.protocol_version
        listed = await client.list_tools()
        report["tools"] = [tool.name for tool in listed.tools]

        spawned = await client.call_tool("spawn_agent", {"name": "worker", "task": "From Python."})
        agent_id = spawned.structured_content["agent_id"]
        report["spawn"] = spawned.structured_content

        progress: list = []

        async def on_progress(value, total, message):
            progress.append({"progress": value, "total": total, "message": message})

        waited = await client.call_tool(
            "wait_agent", {"targets": [agent_id], "timeout_ms": 20000}, progress_callback=on_progress
        )
        report["wait"] = waited.structured_content
        report["progress"] = progress

        resumed = await client.call_tool("send_input", {"target": agent_id, "message": "Again."})
        report["send_input"] = resumed.structured_content
        again = await client.call_tool("wait_agent", {"targets": [agent_id], "timeout_ms": 20000})
        report["wait_again"] = again.structured_content

        refused = await client.call_tool("wait_agent", {"targets": []})
        report["error"] = {
            "is_error": refused.is_error,
            "structured": refused.structured_content,
            "text": refused.content[0].text,
        }
    print(json.dumps(report))


asyncio.run(main())
