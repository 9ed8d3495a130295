"""A loopback stand-in for the Anthropic Messages API, for scripts/try-real-clients.

Streaming requests come from Claude Code, the parent: scripted to call mcp-agents'
`spawn_agent` for the agent `helper`, then `wait_agent` on the id it returned, then answer
"SUBAGENT REPORT: " and the wait's output. Non-streaming requests come from mcp-agents
running `helper` (a `custom` provider with `wire_api: anthropic-messages`) and get a fixed
text.

Usage: fake_anthropic.py PORT LOG
"""
import json
import sys
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOG = open(sys.argv[2], "a")


def tool_results(body):
    results = []
    for message in body.get("messages", []):
        if message["role"] == "user" and isinstance(message["content"], list):
            for block in message["content"]:
                if block.get("type") == "tool_result":
                    content = block.get("content")
                    if not isinstance(content, str):
                        content = "".join(b.get("text", "") for b in content or [])
                    results.append(content)
    return results


def parent_blocks(body):
    if "mcp__agents__spawn_agent" not in [t.get("name") for t in body.get("tools", [])]:
        return [{"type": "text", "text": "ok"}]
    results = tool_results(body)
    if not results:
        return [{"type": "tool_use", "id": "toolu_spawn", "name": "mcp__agents__spawn_agent",
                 "input": {"name": "helper", "task": "Say hello."}}]
    if len(results) == 1:
        agent_id = json.loads(results[0])["agent_id"]
        return [{"type": "tool_use", "id": "toolu_wait", "name": "mcp__agents__wait_agent",
                 "input": {"targets": [agent_id], "timeout_ms": 30000}}]
    return [{"type": "text", "text": "SUBAGENT REPORT: " + results[-1]}]


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        stream = body.get("stream", False)
        LOG.write(json.dumps({"path": self.path, "stream": stream,
                              "tools": [t.get("name") for t in body.get("tools", [])]}) + "\n")
        LOG.flush()
        if not self.path.startswith("/v1/messages") or "count_tokens" in self.path:
            self.send_response(404)
            self.end_headers()
            return
        message = {"id": "msg_" + uuid.uuid4().hex, "type": "message", "role": "assistant",
                   "model": body["model"], "stop_reason": "end_turn", "stop_sequence": None,
                   "content": [], "usage": {"input_tokens": 10, "output_tokens": 7}}
        if not stream:
            message["content"] = [{"type": "text", "text": "Hello, parent: the subagent ran."}]
            data = json.dumps(message).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        blocks = parent_blocks(body)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()

        def event(data):
            self.wfile.write(f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode())

        message["stop_reason"] = None
        event({"type": "message_start", "message": message})
        for index, block in enumerate(blocks):
            if block["type"] == "text":
                start = {"type": "text", "text": ""}
                delta = {"type": "text_delta", "text": block["text"]}
            else:
                start = dict(block, input={})
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            event({"type": "content_block_start", "index": index, "content_block": start})
            event({"type": "content_block_delta", "index": index, "delta": delta})
            event({"type": "content_block_stop", "index": index})
        stop = "tool_use" if blocks[-1]["type"] == "tool_use" else "end_turn"
        event({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
               "usage": {"output_tokens": 5}})
        event({"type": "message_stop"})
        self.wfile.flush()


ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
