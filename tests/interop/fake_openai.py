"""A loopback stand-in for the OpenAI Responses API as Codex uses it (streaming, MCP tools
grouped in a `namespace` tool), for scripts/try-real-clients.

The parent model is scripted: call mcp-agents' `spawn_agent` for the agent its prompt names
(`AGENT=<name>`, default `helper`), then `wait_agent` on the id it returned with the
`timeout_ms` the `wait_agent` description advises (waiting again while the answer says
`"timed_out":true`, at most 5 times), then answer "SUBAGENT REPORT (N waits, timeout_ms T): "
and the last wait's output. The log holds each tool output the model got.

Usage: fake_openai.py PORT LOG
"""
import json
import re
import sys
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

NAMESPACE = "mcp__agents"
LOG = open(sys.argv[2], "a")


def offered(body):
    """Tool names, namespaced ones as `namespace/name`."""
    names = []
    for tool in body.get("tools", []):
        names.append(tool.get("name") or tool.get("type"))
        for inner in tool.get("tools") or []:
            names.append(f"{tool.get('name')}/{inner.get('name')}")
    return names


def output_text(item):
    out = item.get("output")
    if isinstance(out, str):
        return out
    return "".join(part.get("text", "") for part in out or [])


def call(call_id, name, arguments):
    return {"type": "function_call", "id": "fc_" + call_id, "call_id": call_id, "name": name,
            "namespace": NAMESPACE, "arguments": json.dumps(arguments)}


def say(text):
    return {"type": "message", "role": "assistant", "id": "msg_" + uuid.uuid4().hex,
            "content": [{"type": "output_text", "text": text}]}


def log(entry):
    LOG.write(json.dumps(dict(entry, t=round(time.time(), 3))) + "\n")
    LOG.flush()


def advised_timeout(body):
    """The timeout_ms the wait_agent description advises, as a model reading it would."""
    found = re.search(r"timeout_ms (?:at|up to) (?:about )?(\d+)", json.dumps(body.get("tools")))
    return int(found.group(1)) if found else 30000


def requested_agent(body):
    found = re.search(r"AGENT=([a-z0-9-]+)", json.dumps(body.get("input", [])))
    return found.group(1) if found else "helper"


def next_item(body):
    outputs = [output_text(i) for i in body.get("input", [])
               if i.get("type") == "function_call_output"]
    if f"{NAMESPACE}/spawn_agent" not in offered(body):
        return say("mcp-agents' tools were not offered")
    if not outputs:
        agent = requested_agent(body)
        log({"parent": "spawn", "agent": agent})
        return call("call_spawn", "spawn_agent", {"name": agent, "task": "Say hello."})
    waits = len(outputs) - 1
    timeout = advised_timeout(body)
    if waits == 0 or ('"timed_out":true' in outputs[-1] and waits < 5):
        agent_id = outputs[0].split('"agent_id":"')[1].split('"')[0]
        log({"parent": "wait", "timeout_ms": timeout, "wait": waits + 1, "output": outputs[-1]})
        return call(f"call_wait{waits + 1}", "wait_agent",
                    {"targets": [agent_id], "timeout_ms": timeout})
    log({"parent": "report", "waits": waits, "output": outputs[-1]})
    return say(f"SUBAGENT REPORT ({waits} waits, timeout_ms {timeout}): " + outputs[-1])


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
        log({"path": self.path, "tools": offered(body)})
        item = next_item(body)
        response_id = "resp_" + uuid.uuid4().hex
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                 "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
                 "total_tokens": 15}
        for event in (
            {"type": "response.created", "response": {"id": response_id}},
            {"type": "response.output_item.done", "item": item},
            {"type": "response.completed", "response": {"id": response_id, "usage": usage}},
        ):
            self.wfile.write(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())
        self.wfile.flush()


ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
