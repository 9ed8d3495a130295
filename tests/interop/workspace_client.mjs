// Drives `mcp-agents workspace-tools DIR` with the TypeScript SDK's client
// (@modelcontextprotocol/client 2.x), which checks structured content against each tool's
// output schema. Usage: node workspace_client.mjs CONFIG_JSON (see workspace_client.py);
// prints one JSON report.
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const config = JSON.parse(process.argv[2]);
const client = new Client({ name: "interop-ts", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
await client.connect(new StdioClientTransport({ command: config.command, args: config.args, env: config.env }));
const report = { calls: [] };
report.protocol_version = client.getNegotiatedProtocolVersion?.() ?? null;
report.tools = {};
for (const tool of (await client.listTools()).tools) {
  report.tools[tool.name] = { read_only: tool.annotations?.readOnlyHint ?? null, has_output_schema: tool.outputSchema !== undefined };
}
for (const [name, args] of config.calls) {
  const result = await client.callTool({ name, arguments: args });
  report.calls.push({ is_error: Boolean(result.isError), structured: result.structuredContent ?? null, text: result.content[0].text });
}
console.log(JSON.stringify(report));
await client.close();
