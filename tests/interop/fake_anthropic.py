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
- `long-model` answers "Hello after 240 s: the long subagent ran." 240 s into a streamed
  reply kept alive by `ping` events (the log says when it answered, or when the caller hung
  up); `asker-model` calls `ask_parent` ("Which greeting should I use?"), then answers
  "The parent answered: " and the tool's result (both logged); `chooser-model` does the
  same with `options` (["ahoy", "hello"]).
- Claude Code, the parent (any other model): scripted to call mcp-agents' `spawn_agent` for
  the agent its prompt names (`AGENT=<name>`, default `helper`), then `wait_agent` on the id
  it returned with the `timeout_ms` the `wait_agent` description advises (waiting again
  while the answer says `"timed_out":true`, at most 5 times), then answer
  "SUBAGENT REPORT (N waits, timeout_ms T): " and the last wait's output. A prompt with
  `MODE=<mode>` (scripts/try-real-clients tasks) gets the parent of `tasks_parent_blocks`,
  which ends its turn when a call went to the background and reports when the client's
  `<task-notification>` arrives.

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
# A subagent that answers after 4 minutes: longer than the 120 s mcp-agents waits for a
# reply to begin and for every silence within it, so its streamed reply begins at once and
# keeps the stream alive with `ping` events, as the Messages API does, until the text.
LONG_MODEL = ("long-model", 240, "Hello after 240 s: the long subagent ran.")
PING_EVERY = 10
# What `asker-model` asks its parent through `ask_parent`.
QUESTION = "Which greeting should I use?"
OPTIONS = ["ahoy", "hello"]


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
    if "MODE=" in json.dumps(body.get("messages", [])):
        return tasks_parent_blocks(body)
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


def tool_uses(body):
    """The parent's tool calls so far, as (id, name, input)."""
    return [(block["id"], block["name"], block.get("input", {}))
            for message in body.get("messages", []) if message["role"] == "assistant"
            and isinstance(message["content"], list)
            for block in message["content"] if block.get("type") == "tool_use"]


def last_user_text(body):
    """The text blocks of the last message, when it is the person's (or the client's)."""
    messages = body.get("messages", [])
    if not messages or messages[-1]["role"] != "user":
        return ""
    content = messages[-1]["content"]
    if isinstance(content, str):
        return content
    return "\n".join(block.get("text", "") for block in content if block.get("type") == "text")


def is_prompt(message):
    """A message the person typed: no tool result in it, and a MODE in its text."""
    content = message["content"]
    if message["role"] != "user":
        return False
    if isinstance(content, str):
        return "MODE=" in content
    return (not any(block.get("type") == "tool_result" for block in content)
            and any("MODE=" in block.get("text", "") and "<task-notification>" not in
                    block.get("text", "") for block in content))


def since_last_prompt(body):
    """The body with its messages cut to those since the last prompt naming a MODE."""
    messages = body.get("messages", [])
    starts = [index for index, message in enumerate(messages) if is_prompt(message)]
    return dict(body, messages=messages[starts[-1]:] if starts else messages)


def asker_blocks(body, options=None):
    """`asker-model`: asks its parent one question, then reports the answer it was given;
    `chooser-model` asks the same with OPTIONS to choose from."""
    results = tool_results(body)
    if not results:
        log({"asker": "asks", "question": QUESTION, "options": options})
        question = {"question": QUESTION, **({"options": options} if options else {})}
        return [{"type": "tool_use", "id": "toolu_ask", "name": "ask_parent",
                 "input": question}]
    log({"asker": "answered", "tool_result": results[-1]})
    return [{"type": "text", "text": "The parent answered: " + results[-1]}]


def tasks_parent_blocks(body):
    """The parent of `MODE=<mode>` prompts (scripts/try-real-clients tasks): spawn the agent;
    if the call went to the background (an MCP task), end the turn and report when the
    client brings the task's notification; if it came back with an agent_id (no tasks),
    wait as the plain parent does. `MODE=taskstop` stops the background task with the
    client's TaskStop tool instead of waiting for it. Only the messages since the last
    prompt count, so one interactive session can delegate several times."""
    body = since_last_prompt(body)
    calls = tool_uses(body)
    waits = sum(1 for _, name, _ in calls if name == "mcp__agents__wait_agent")
    notification = last_user_text(body)
    if "<task-notification>" in notification:
        log({"parent": "notified", "waits": waits, "notification": notification})
        return [{"type": "text", "text": f"SUBAGENT REPORT ({waits} waits, task notification): "
                 + notification}]
    if not calls:
        agent = requested_agent(body)
        mode = re.search(r"MODE=([a-z]+)", json.dumps(body["messages"])).group(1)
        log({"parent": "spawn", "agent": agent, "mode": mode})
        return [{"type": "tool_use", "id": "toolu_spawn", "name": "mcp__agents__spawn_agent",
                 "input": {"name": agent, "task": "Say hello."}}]
    results = tool_results(body)
    last_name = calls[-1][1]
    if last_name == "mcp__agents__spawn_agent" and not results[-1].startswith("{"):
        log({"parent": "backgrounded", "tool_result": results[-1]})
        if "MODE=taskstop" in json.dumps(body["messages"]):
            stop = next(t for t in body.get("tools", []) if t.get("name") == "TaskStop")
            # "To stop it, use TaskStop with task_id \"k3g6oltzq\"": the client's own id.
            task_id = re.search(r'task_id "([^"]+)"', results[-1]).group(1)
            arguments = {"task_id": task_id}
            log({"parent": "taskstop", "input": arguments, "schema": stop["input_schema"]})
            return [{"type": "tool_use", "id": "toolu_taskstop", "name": "TaskStop",
                     "input": arguments}]
        return [{"type": "text", "text": "The subagent works in the background."}]
    if last_name == "mcp__agents__wait_agent" and not results[-1].startswith("{"):
        # Interactive Claude Code moves an MCP call still running after 120 s to the
        # background, tasks or not, and brings its result as a task notification.
        log({"parent": "wait_backgrounded", "tool_result": results[-1]})
        return [{"type": "text", "text": "The wait goes on in the background."}]
    if last_name == "TaskStop":
        log({"parent": "taskstopped", "tool_result": results[-1]})
        return [{"type": "text", "text": "Stopped the subagent."}]
    if waits == 0 or ('"timed_out":true' in results[-1] and waits < 5):
        agent_id = json.loads(results[0])["agent_id"]
        timeout = advised_timeout(body.get("tools", []))
        log({"parent": "wait", "timeout_ms": timeout, "wait": waits + 1})
        return [{"type": "tool_use", "id": f"toolu_wait{waits + 1}",
                 "name": "mcp__agents__wait_agent",
                 "input": {"targets": [agent_id], "timeout_ms": timeout}}]
    log({"parent": "report", "waits": waits, "tool_result": results[-1]})
    return [{"type": "text", "text": f"SUBAGENT REPORT ({waits} waits): " + results[-1]}]


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
        streamed_delay = 0
        if model == "fixer-model":
            blocks = fixer_blocks(body)
        elif model == "asker-model":
            blocks = asker_blocks(body)
        elif model == "chooser-model":
            blocks = asker_blocks(body, OPTIONS)
        elif model == LONG_MODEL[0]:
            streamed_delay = LONG_MODEL[1]
            blocks = [{"type": "text", "text": LONG_MODEL[2]}]
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
        if streamed_delay and not self.keep_alive(event, streamed_delay, model):
            return
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

    def keep_alive(self, event, seconds, model):
        """Pings for `seconds`; False (and logged) when the caller hung up meanwhile."""
        started = time.time()
        log({"subagent": model, "streaming": "begun"})
        while time.time() - started < seconds:
            try:
                event({"type": "ping"})
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                log({"subagent": model, "hung_up_after_s": round(time.time() - started, 1)})
                return False
            time.sleep(max(0, min(PING_EVERY, seconds - (time.time() - started))))
        log({"subagent": model, "answered_after_s": round(time.time() - started, 1)})
        return True


ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
