// Drives mcp-agents with the TypeScript SDK's client (@modelcontextprotocol/client 2.x), as a
// third-party client would. Usage: node ts_client.mjs CONFIG_JSON (see py_client.py); prints
// one JSON report of what the client saw.
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const config = JSON.parse(process.argv[2]);
const options = config.mode === "legacy" ? {} : { versionNegotiation: { mode: "auto" } };
const client = new Client({ name: "interop-ts", version: "1.0.0" }, options);
const transport =
  config.transport === "stdio"
    ? new StdioClientTransport({ command: config.command, args: config.args, env: config.env })
    : new StreamableHTTPClientTransport(new URL(config.url));
await client.connect(transport);

const report = {};
report.protocol_version = client.getNegotiatedProtocolVersion?.() ?? null;
report.tools = (await client.listTools()).tools.map((t) => t.name);
const spawned = await client.callTool({ name: "spawn_agent", arguments: { name: "worker", task: "From TypeScript." } });
report.spawn = spawned.structuredContent;
const id = spawned.structuredContent.agent_id;
const progress = [];
const waited = await client.callTool(
  { name: "wait_agent", arguments: { targets: [id], timeout_ms: 20000 } },
  { onprogress: (p) => progress.push(p) },
);
report.wait = waited.structuredContent;
report.progress = progress;
report.send_input = (await client.callTool({ name: "send_input", arguments: { target: id, message: "Again." } })).structuredContent;
report.wait_again = (await client.callTool({ name: "wait_agent", arguments: { targets: [id], timeout_ms: 20000 } })).structuredContent;
const refused = await client.callTool({ name: "wait_agent", arguments: { targets: [] } });
report.error = { is_error: refused.isError, structured: refused.structuredContent, text: refused.content[0].text };
console.log(JSON.stringify(report));
await client.close();
