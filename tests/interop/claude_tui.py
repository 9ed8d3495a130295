"""Drives interactive Claude Code in a pseudo-terminal, for scripts/try-real-clients tasks.

It runs `claude` (from PATH, in the current directory, with the environment it was given)
on a 120x40 pseudo-terminal, keeps the screen with pyte, and plays one scenario as a person
would: wait until mcp-agents is up (`mcp-agents status --json`), type the prompt, then
watch the screen and answer what it shows. Every screen it acts on is written to
OUT/<scenario>-<step>.txt, and what it saw, with the seconds since the prompt, goes to
stdout as `at <s> s: <what>` lines; `FAIL <why>` and exit 1 when the screen never showed
what it waited for.

Scenarios (the stand-in's parent script reads the MODE in the prompt):
- background: delegate to `long-helper` (4 minutes); wait for Claude Code's footer to show
  the MCP task, then for the model's report after the task notification.
- question: delegate to `asker`; wait for the question on screen, type ANSWER in its
  field, accept, then wait for the report.
- choice: delegate to `chooser`, whose question has options; open the list (Right),
  choose the second (Down, Space), accept.
- stop: delegate to `long-helper`; open the task list (Down, Enter), press `x` on the task,
  and write the server's records (`mcp-agents status --json`) to OUT/stop-records.json.
- taskstop: delegate to `long-helper` with MODE=taskstop: the model stops it with TaskStop.
- fallback: as background, for CLAUDE_CODE_DISABLE_MCP_TASKS=1: the report comes after
  spawn and wait (tasks_log.py checks which way the wait's result came).

Usage: claude_tui.py SCENARIO WORKSPACE OUT
"""
import fcntl
import json
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import termios
import time

import pyte

COLUMNS, ROWS = 120, 40
ANSWER = "Say ahoy"
CHOICE = "hello"  # the second of chooser-model's options
PROMPTS = {
    "background": "Ask the long-helper subagent to say hello. AGENT=long-helper MODE=background",
    "fallback": "Ask the long-helper subagent to say hello. AGENT=long-helper MODE=background",
    "question": "Ask the asker subagent to say hello. AGENT=asker MODE=question",
    "choice": "Ask the chooser subagent to say hello. AGENT=chooser MODE=question",
    "stop": "Ask the long-helper subagent to say hello. AGENT=long-helper MODE=stop",
    "taskstop": "Ask the long-helper subagent to say hello. AGENT=long-helper MODE=taskstop",
}


class Failed(Exception):
    pass


class Terminal:
    """`claude` on a pseudo-terminal, its screen as pyte renders it."""

    def __init__(self, scenario, out):
        self.scenario, self.out = scenario, out
        self.screen = pyte.Screen(COLUMNS, ROWS)
        self.stream = pyte.ByteStream(self.screen)
        # Claude Code asks the terminal where its cursor is; pyte answers through this hook.
        self.screen.write_process_input = lambda data: os.write(self.fd, data.encode())
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.environ["TERM"] = "xterm-256color"
            os.environ["COLUMNS"], os.environ["LINES"] = str(COLUMNS), str(ROWS)
            os.execvp("claude", ["claude"])
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
        self.started = time.time()
        self.prompted = None

    def pump(self, seconds):
        end = time.time() + seconds
        while True:
            left = end - time.time()
            if left <= 0:
                return
            ready, _, _ = select.select([self.fd], [], [], left)
            if ready:
                try:
                    data = os.read(self.fd, 65536)
                except OSError:
                    raise Failed("claude exited")
                if not data:
                    raise Failed("claude exited")
                self.stream.feed(data)

    def text(self):
        return "\n".join(line.rstrip() for line in self.screen.display)

    def wait_for(self, texts, seconds, what):
        """Pumps until the screen shows any of `texts`; returns the one it showed."""
        end = time.time() + seconds
        while time.time() < end:
            self.pump(0.2)
            shown = [text for text in texts if text in self.text()]
            if shown:
                self.note(what)
                return shown[0]
        self.capture("timeout")
        raise Failed(f"{what}: not on screen after {seconds} s (screen in "
                     f"{self.scenario}-timeout.txt)")

    def type(self, text, pause=0.5):
        os.write(self.fd, text.encode())
        self.pump(pause)

    def capture(self, step):
        path = os.path.join(self.out, f"{self.scenario}-{step}.txt")
        with open(path, "w") as file:
            file.write(self.text() + "\n")

    def note(self, what):
        since = time.time() - (self.prompted or self.started)
        print(f"at {since:.1f} s: {what}", flush=True)

    def close(self):
        try:
            os.kill(self.pid, signal.SIGTERM)
            self.pump(2)
        except (Failed, ProcessLookupError):
            pass
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(self.pid, 0)


def server_records(workspace):
    shown = subprocess.run(["mcp-agents", "status", "--json", workspace],
                           capture_output=True, text=True, check=False).stdout
    return json.loads(shown or "[]")


def wait_for_server(term, workspace):
    """Until mcp-agents (started by claude) answers on its status socket, and a second more
    for Claude Code to list its tools: a prompt sent before would go without them."""
    end = time.time() + 60
    while time.time() < end:
        term.pump(0.5)
        if server_records(workspace):
            term.pump(1.5)
            term.note("mcp-agents is up")
            return
    raise Failed("mcp-agents did not start within 60 s")


def prompt(term, scenario):
    term.wait_for(["auto mode", "? for shortcuts", "shift+tab"], 60, "input box")
    term.type(PROMPTS[scenario])
    term.type("\r", 1)
    term.prompted = time.time()
    term.note("prompt sent")


def report(term, seconds):
    term.wait_for(["SUBAGENT REPORT"], seconds, "the model's report on screen")
    term.pump(1)
    term.capture("report")


def background(term, workspace):
    term.wait_for(["1 MCP task"], 60, "footer shows the MCP task")
    term.capture("task")
    report(term, 330)


def fallback(term, workspace):
    report(term, 330)


def question(term, workspace):
    term.wait_for(["Which greeting should I use?"], 60, "the question on screen")
    term.pump(1)
    term.capture("question")
    term.type(ANSWER)
    term.capture("typed")
    term.type("\r", 1)  # leaves the field for Accept
    term.type("\r", 1)  # Accept
    term.note(f"typed {ANSWER!r} and accepted")
    report(term, 60)


def choice(term, workspace):
    term.wait_for(["Which greeting should I use?"], 60, "the question on screen")
    term.pump(1)
    term.capture("question")
    term.type("\x1b[C", 1)  # Right: "→ to expand" the options
    term.wait_for([CHOICE], 5, "the options listed")
    term.capture("options")
    term.type("\x1b[B", 0.5)  # Down to the second option
    term.type(" ", 1)  # Space: choose it
    term.type("\r", 1)  # leaves the field for Accept
    term.type("\r", 1)  # Accept
    term.note(f"chose {CHOICE!r} and accepted")
    report(term, 60)


def stop(term, workspace):
    term.wait_for(["1 MCP task"], 60, "footer shows the MCP task")
    term.pump(3)
    term.type("\x1b[B", 1)  # Down: "↓ to manage"
    term.type("\r", 1.5)    # "enter to view tasks"
    term.wait_for(["x to stop"], 10, "task list open")
    term.capture("list")
    term.type("x", 0)
    term.note("pressed x on the task")
    end = time.time() + 10
    while time.time() < end:
        term.pump(0.2)
        records = [agent for server in server_records(workspace)
                   for agent in server.get("agents", []) if agent.get("error")]
        if records:
            term.note("the server's record left running: " + json.dumps(
                {key: records[0].get(key) for key in ("status", "error")}))
            break
    term.pump(3)
    term.capture("stopped")
    with open(os.path.join(term.out, "stop-records.json"), "w") as file:
        json.dump(server_records(workspace), file)


def taskstop(term, workspace):
    term.wait_for(["Stopped the subagent"], 60, "the model stopped it with TaskStop")
    term.pump(3)
    term.capture("stopped")
    with open(os.path.join(term.out, "taskstop-records.json"), "w") as file:
        json.dump(server_records(workspace), file)


def main():
    scenario, workspace, out = sys.argv[1:4]
    play = {"background": background, "fallback": fallback, "question": question,
            "choice": choice,
            "stop": stop, "taskstop": taskstop}[scenario]
    term = Terminal(scenario, out)
    try:
        wait_for_server(term, workspace)
        prompt(term, scenario)
        play(term, workspace)
    except Failed as failure:
        print(f"FAIL {failure}", flush=True)
        term.capture("last")
        return 1
    finally:
        term.close()
    return 0


sys.exit(main())
