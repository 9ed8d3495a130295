"""Checks what the stand-ins logged during one step of scripts/try-real-clients tasks.

Reads the log lines a step added (JSON, one a line, as fake_anthropic.py and fake_openai.py
write them) and prints `ok    <what it saw>` or `FAIL  <what was missing>` (exit 1).

- background: the parent spawned, made no wait_agent call, and its next request after the
  4-minute subagent answered held the task notification with the result.
- question: the subagent's ask_parent got ANSWER as its result, and the task notification
  brought the answer to the parent, with no wait_agent call.
- fallback: no task for the spawn: the parent spawned and waited, and the wait's result
  reached it (as the wait's answer, or as the notification of the wait Claude Code moved
  to the background).
- codex: the tool outputs Codex's model got open with the `summary` line.

Usage: tasks_log.py CHECK LOG [ANSWER]
"""
import json
import sys


def entries(path):
    return [json.loads(line) for line in open(path) if line.strip()]


def first(log, **match):
    for entry in log:
        if all(entry.get(key) == value for key, value in match.items()):
            return entry
    return None


def background(log):
    spawn = first(log, parent="spawn")
    answered = next((e for e in log if "answered_after_s" in e), None)
    notified = first(log, parent="notified")
    waits = [e for e in log if e.get("parent") == "wait"]
    if not (spawn and answered and notified):
        return False, f"spawn {bool(spawn)}, subagent answered {bool(answered)}, " \
                      f"notified {bool(notified)}"
    note = notified["notification"]
    if waits or notified["waits"] or "<task-notification>" not in note \
            or "Hello after 240 s: the long subagent ran." not in note:
        return False, f"{len(waits)} wait_agent calls; notification: {note[:300]}"
    return True, (f"0 wait_agent calls; the subagent answered {answered['answered_after_s']} s "
                  f"into its reply, and {notified['t'] - answered['t']:.1f} s later the parent "
                  f"model's next request held the task notification "
                  f"({notified['t'] - spawn['t']:.1f} s after the spawn)")


def question(log, answer):
    asked, answered = first(log, asker="asks"), first(log, asker="answered")
    notified = first(log, parent="notified")
    if not (asked and answered and notified):
        return False, f"asked {bool(asked)}, answered {bool(answered)}, notified {bool(notified)}"
    if answered["tool_result"] != answer or f"The parent answered: {answer}" not in \
            notified["notification"] or notified["waits"]:
        return False, f"ask_parent's result {answered['tool_result']!r}; notification " \
                      f"{notified['notification'][:300]}"
    return True, (f"ask_parent's result was {answer!r} {answered['t'] - asked['t']:.1f} s after "
                  f"the question; the notification brought it to the parent "
                  f"{notified['t'] - answered['t']:.1f} s later, 0 wait_agent calls")


def fallback(log):
    spawn, report = first(log, parent="spawn"), first(log, parent="report")
    notified, moved = first(log, parent="notified"), first(log, parent="wait_backgrounded")
    waits = [e for e in log if e.get("parent") == "wait"]
    spawn_tasks = [e for e in log if e.get("parent") == "backgrounded"]
    result = (report or {}).get("tool_result", "") + (notified or {}).get("notification", "")
    if not (spawn and waits) or spawn_tasks \
            or "Hello after 240 s: the long subagent ran." not in result:
        return False, f"spawn {bool(spawn)}, {len(waits)} waits, {len(spawn_tasks)} spawn " \
                      f"tasks, report {bool(report)}, notified {bool(notified)}"
    how = (f"as the wait's answer, {report['t'] - spawn['t']:.1f} s after the spawn" if report
           else f"as a task notification {notified['t'] - spawn['t']:.1f} s after the spawn: "
           f"Claude Code had moved the wait to the background {moved['t'] - waits[0]['t']:.1f}"
           f" s into it" if moved else
           f"as a task notification {notified['t'] - spawn['t']:.1f} s after the spawn")
    return True, (f"no task for the spawn: spawn, then {len(waits)} wait_agent call(s) of "
                  f"timeout_ms {waits[0]['timeout_ms']}; the result came {how}")


def codex(log):
    outputs = [e["output"] for e in log if e.get("parent") in ("wait", "report")]
    if not outputs:
        return False, "no tool output logged"
    bad = [o for o in outputs if '{"summary":"' not in o]
    if bad:
        return False, f"an output without summary: {bad[0][:300]}"
    return True, "every tool output Codex's model got holds the summary line: " + \
        " | ".join(json.dumps(o[:110]) for o in outputs)


def main():
    check, path = sys.argv[1], sys.argv[2]
    log = entries(path)
    if check == "question":
        passed, what = question(log, sys.argv[3])
    else:
        passed, what = {"background": background, "fallback": fallback, "codex": codex}[check](log)
    print(("ok    " if passed else "FAIL  ") + what)
    return 0 if passed else 1


sys.exit(main())
