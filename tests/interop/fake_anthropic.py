"""A loopback stand-in for the Anthropic Messages API, for scripts/try-real-clients.

Two callers share it, told apart by the model they ask for:

- mcp-agents running a subagent (a `custom` provider with `wire_api: anthropic-messages`):
  the model `helper-model` answers "Hello, parent: the subagent ran." at once, and
  `slow-model` answers "Hello after 100 s: the slow subagent ran." after 100 s, within the
  120 s mcp-agents waits for a reply to begin. `claude-gateway-helper` answers as
  `helper-model` does: an `anthropic` agent reaching this stand-in as its gateway through
  `ANTHROPIC_BASE_URL`; the log records how each request sent its key (`auth`).
- `fixer-model`: a fixer subagent with the workspace tools, scripted to `workspace__read`
  calc.py, then `workspace__edit` it (`a - b` becomes `a + b`), then answer "Fixed add in
  calc.py: " and the first line of the edit's answer.
- Claude Code, the parent (any other model): scripted to call mcp-agents' `spawn_agent` for
  the agent its prompt names (`AGENT=<name>`, default `helper`), then `wait_agent` on the id
  it returned with the `timeout_ms` the `wait_agent` description advises (waiting again
  while the answer says `"timed_out":true`, at most 5 times), then answer
  "SUBAGENT REPORT (N waits, timeout_ms T): " and the last wait's output.

Usage: fake_anthropic.py PORT LOG
"""
import json
import re
import sys
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOG = open(sys.argv[2], "a")

SUBAGENTS = {
    "helper-model": (0, "Hello, parent: the subagent ran."),
    "slow-model": (100, "Hello after 100 s: the slow subagent ran."),
    "claude-gateway-helper": (0, "Hello, parent: the subagent ran."),
}


def log(entry):
    LOG.write(json.dumps(dict(entry, t=round(time.time(), 3))) + "\n")
    LOG.flush()


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


def advised_timeout(tools):
    """The timeout_ms the wait_agent description advises, as a model reading it would."""
    found = re.search(r"timeout_ms (?:at|up to) (?:about )?(\d+)", json.dumps(tools))
    return int(found.group(1)) if found else 30000


def requested_agent(body):
    found = re.search(r"AGENT=([a-z0-9-]+)", json.dumps(body.get("messages", [])))
    return found.group(1) if found else "helper"


def fixer_blocks(body):
    results = tool_results(body)
    log({"fixer": "step", "results": len(results)})
    if not results:
        return [{"type": "tool_use", "id": "toolu_read", "name": "workspace__read",
                 "input": {"path": "calc.py"}}]
    if len(results) == 1:
        return [{"type": "tool_use", "id": "toolu_edit", "name": "workspace__edit",
                 "input": {"path": "calc.py", "old_text": "return a - b",
                           "new_text": "return a + b"}}]
    return [{"type": "text", "text": "Fixed add in calc.py: " + results[-1].splitlines()[0]}]


def parent_blocks(body):
    tools = body.get("tools", [])
    if "mcp__agents__spawn_agent" not in [t.get("name") for t in tools]:
        return [{"type": "text", "text": "ok"}]
    results = tool_results(body)
    if not results:
        agent = requested_agent(body)
        log({"parent": "spawn", "agent": agent})
        task = "Make test_calc.py pass." if agent == "fixer" else "Say hello."
        return [{"type": "tool_use", "id": "toolu_spawn", "name": "mcp__agents__spawn_agent",
                 "input": {"name": agent, "task": task}}]
    waits = len(results) - 1
    timeout = advised_timeout(tools)
    if waits == 0 or ('"timed_out":true' in results[-1] and waits < 5):
        agent_id = json.loads(results[0])["agent_id"]
        log({"parent": "wait", "timeout_ms": timeout, "wait": waits + 1})
        return [{"type": "tool_use", "id": f"toolu_wait{waits + 1}",
                 "name": "mcp__agents__wait_agent",
                 "input": {"targets": [agent_id], "timeout_ms": timeout}}]
    log({"parent": "report", "waits": waits})
    return [{"type": "text", "text": f"SUBAGENT REPORT ({waits} waits, timeout_ms {timeout}): "
             + results[-1]}]


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        stream = body.get("stream", False)
        model = body.get("model")
        auth = ("bearer" if self.headers.get("authorization", "").startswith("Bearer ")
                else "x-api-key" if self.headers.get("x-api-key") else "none")
        log({"path": self.path, "stream": stream, "model": model, "auth": auth,
             "tools": [t.get("name") for t in body.get("tools", [])]})
        if not self.path.startswith("/v1/messages") or "count_tokens" in self.path:
            self.send_response(404)
            self.end_headers()
            return
        if model == "fixer-model":
            blocks = fixer_blocks(body)
        elif model in SUBAGENTS:
            delay, text = SUBAGENTS[model]
            time.sleep(delay)
            blocks = [{"type": "text", "text": text}]
        else:
            blocks = parent_blocks(body)
        stop = "tool_use" if blocks[-1]["type"] == "tool_use" else "end_turn"
        message = {"id": "msg_" + uuid.uuid4().hex, "type": "message", "role": "assistant",
                   "model": model, "stop_reason": stop, "stop_sequence": None,
                   "content": blocks, "usage": {"input_tokens": 10, "output_tokens": 7}}
        if not stream:
            data = json.dumps(message).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()

        def event(data):
            self.wfile.write(f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode())

        event({"type": "message_start",
               "message": dict(message, content=[], stop_reason=None)})
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
        event({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
               "usage": {"output_tokens": 5}})
        event({"type": "message_stop"})
        self.wfile.flush()


ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
