//! The three tools (SPEC §4): their schemas and descriptions, the checking of their
//! arguments (in our code, so every refusal carries an error code), and the shape of their
//! results. No session logic lives here.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};

use crate::definition::Catalog;
use crate::error::{AgentError, ErrorCode};
use crate::limits::{AGENT_DESCRIPTION_CHARS, DEFAULT_WAIT, MAX_WAIT_MS};
use crate::sessions::manager::Accepted;
use crate::sessions::record::{error_json, snapshot_json};
use crate::sessions::session::Snapshot;

pub const SPAWN_AGENT: &str = "spawn_agent";
pub const SEND_INPUT: &str = "send_input";
pub const WAIT_AGENT: &str = "wait_agent";

/// What the server tells the parent model about the workflow.
pub const INSTRUCTIONS: &str = "This server runs subagents defined in this workspace, each \
with its own model and tools, in the background.\n\
1. spawn_agent starts one on a self-contained task and returns its agent_id at once.\n\
2. Keep working; then call wait_agent with the ids and a bounded timeout_ms (about 55000 or \
less unless your client allows longer tool calls).\n\
3. While an agent runs, wait_agent shows its `activity` (what it is doing and for how long); \
a timeout returns control and cancels nothing, so wait again.\n\
4. Continue a finished agent, or steer a running one, with send_input (interrupt: true \
cancels its current step first).\n\
5. If an agent fails with context_limit, spawn a fresh agent for a narrower task.";

/// The tool list: the three tools, or none for an empty catalog.
pub fn tool_list(catalog: &Catalog) -> Vec<Tool> {
    if catalog.agents().is_empty() {
        return Vec::new();
    }
    vec![
        spawn_agent_tool(catalog),
        send_input_tool(),
        wait_agent_tool(),
    ]
}

fn object(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

/// One line per agent for the description: `name: description`, whitespace collapsed, cut
/// at [`AGENT_DESCRIPTION_CHARS`].
fn agent_line(name: &str, description: &str) -> String {
    let flat = description.split_whitespace().collect::<Vec<_>>().join(" ");
    let cut: String = flat.chars().take(AGENT_DESCRIPTION_CHARS).collect();
    let ellipsis = if cut.len() < flat.len() { "…" } else { "" };
    format!("- {name}: {cut}{ellipsis}")
}

/// A tool's output schema: its success shape or the error shape. The root says `object`
/// because MCP requires it, and `rmcp` drops an output schema whose root is anything else
/// when it talks to a client of an older protocol version.
fn result_schema(success: Value) -> Value {
    json!({"type": "object", "anyOf": [success, error_shape()]})
}

fn error_shape() -> Value {
    json!({
        "type": "object",
        "properties": {"error": {"type": "object", "properties": {
            "code": {"type": "string"}, "message": {"type": "string"}},
            "required": ["code", "message"]}},
        "required": ["error"]
    })
}

fn spawn_agent_tool(catalog: &Catalog) -> Tool {
    let names: Vec<&str> = catalog.agents().iter().map(|a| a.name.as_str()).collect();
    let list: Vec<String> = catalog
        .agents()
        .iter()
        .map(|a| agent_line(&a.name, &a.description))
        .collect();
    let description = format!(
        "Start a subagent in the background on a focused task and return its agent_id at \
         once, before it does any work. The subagent has its own model and tools and does not \
         see this conversation: put everything it needs in `task`. Keep working, then collect \
         the result with wait_agent. At most 8 agents run at once; finished agents do not \
         count.\n\nAgents:\n{}",
        list.join("\n")
    );
    let input = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "enum": names, "description": "Which agent to start."},
            "task": {"type": "string", "minLength": 1,
                     "description": "The task, self-contained: what to do, the context it needs, and what to return."}
        },
        "required": ["name", "task"],
        "additionalProperties": false
    });
    let output = result_schema(json!({
        "type": "object",
        "properties": {"agent_id": {"type": "string"}, "name": {"type": "string"},
                       "status": {"type": "string", "enum": ["running"]}},
        "required": ["agent_id", "name", "status"]
    }));
    Tool::new(SPAWN_AGENT, description, object(input))
        .with_raw_output_schema(object(output))
        .annotate(
            ToolAnnotations::with_title("Spawn agent")
                .read_only(false)
                .destructive(false)
                .idempotent(false)
                .open_world(true),
        )
}

fn send_input_tool() -> Tool {
    let description = "Send a message to an agent. While it runs, the message is queued and \
        delivered at its next step, after any pending tool results (at most 16 queued). With \
        interrupt: true, its current model request or tool call is cancelled first and it \
        continues with the queued input, this message included. A completed or failed agent \
        is resumed with this message on the same conversation (it needs a free run slot).";
    let input = json!({
        "type": "object",
        "properties": {
            "target": {"type": "string", "minLength": 1, "description": "The agent_id."},
            "message": {"type": "string", "minLength": 1, "description": "What to tell the agent."},
            "interrupt": {"type": "boolean", "default": false,
                          "description": "Cancel the agent's current step first."}
        },
        "required": ["target", "message"],
        "additionalProperties": false
    });
    let output = result_schema(json!({
        "type": "object",
        "properties": {"agent_id": {"type": "string"}, "name": {"type": "string"},
                       "status": {"type": "string", "enum": ["running"]},
                       "queued": {"type": "integer", "minimum": 0}},
        "required": ["agent_id", "name", "status", "queued"]
    }));
    Tool::new(SEND_INPUT, description, object(input))
        .with_raw_output_schema(object(output))
        .annotate(
            ToolAnnotations::with_title("Send input to agent")
                .read_only(false)
                .destructive(false)
                .idempotent(false)
                .open_world(true),
        )
}

fn wait_agent_tool() -> Tool {
    let description = "Wait until every listed agent has finished, or until timeout_ms \
        passes, and return each agent's status: its result or error, turns, token usage and \
        elapsed time, and for a running agent its current activity (phase, what it is doing, \
        for how long). It is an event wait: a finished agent returns at once; timeout_ms 0 \
        returns a snapshot. A timeout only returns control: agents keep running, so wait \
        again. Results stay available and can be read again. Many clients abort a tool call \
        after 60 s, so keep timeout_ms at about 55000 or less unless your client allows \
        longer calls.";
    let input = json!({
        "type": "object",
        "properties": {
            "targets": {"type": "array", "minItems": 1, "uniqueItems": true,
                        "items": {"type": "string", "minLength": 1},
                        "description": "The agent_ids to wait for."},
            "timeout_ms": {"type": "integer", "minimum": 0, "maximum": MAX_WAIT_MS,
                           "default": DEFAULT_WAIT.as_millis() as u64, "description": "Longest wait, in milliseconds."}
        },
        "required": ["targets"],
        "additionalProperties": false
    });
    let agent = json!({
        "type": "object",
        "properties": {
            "agent_id": {"type": "string"}, "name": {"type": "string"},
            "status": {"type": "string", "enum": ["running", "completed", "failed"]},
            "result": {"type": "string"},
            "error": {"type": "object"},
            "total_elapsed_ms": {"type": "integer"}, "turns": {"type": "integer"},
            "usage": {"type": "object"}, "queued": {"type": "integer"},
            "activity": {"type": "object"}
        },
        "required": ["agent_id", "name", "status", "total_elapsed_ms", "turns", "usage"]
    });
    let output = result_schema(json!({
        "type": "object",
        "properties": {"timed_out": {"type": "boolean"}, "agents": {"type": "array", "items": agent}},
        "required": ["timed_out", "agents"]
    }));
    Tool::new(WAIT_AGENT, description, object(input))
        .with_raw_output_schema(object(output))
        .annotate(
            ToolAnnotations::with_title("Wait for agents")
                .read_only(true)
                .destructive(false)
                .idempotent(true)
                .open_world(false),
        )
}

/// A checked call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Call {
    Spawn {
        name: String,
        task: String,
    },
    SendInput {
        target: String,
        message: String,
        interrupt: bool,
    },
    Wait {
        targets: Vec<String>,
        timeout: Duration,
    },
}

fn invalid(message: impl Into<String>) -> AgentError {
    AgentError::new(ErrorCode::InvalidInput, message)
}

/// Checks a call's arguments against the tool's schema, naming the field at fault.
/// `None` when `tool` is not one of the three.
pub fn parse_call(tool: &str, arguments: Option<&JsonObject>) -> Option<Result<Call, AgentError>> {
    let empty = JsonObject::new();
    let args = Args(arguments.unwrap_or(&empty));
    if let Some(kind) = args.0.get(super::arguments::MARKER) {
        if !matches!(tool, SPAWN_AGENT | SEND_INPUT | WAIT_AGENT) {
            return None;
        }
        let kind = kind.as_str().unwrap_or("not an object");
        return Some(Err(invalid(format!(
            "`arguments` must be a JSON object with the tool's fields, not {kind}"
        ))));
    }
    let parsed = match tool {
        SPAWN_AGENT => args.only(&["name", "task"]).and_then(|()| {
            Ok(Call::Spawn {
                name: args.text("name")?,
                task: args.text("task")?,
            })
        }),
        SEND_INPUT => args
            .only(&["target", "message", "interrupt"])
            .and_then(|()| {
                Ok(Call::SendInput {
                    target: args.text("target")?,
                    message: args.text("message")?,
                    interrupt: args.flag("interrupt")?,
                })
            }),
        WAIT_AGENT => args.only(&["targets", "timeout_ms"]).and_then(|()| {
            Ok(Call::Wait {
                targets: args.targets()?,
                timeout: args.timeout()?,
            })
        }),
        _ => return None,
    };
    Some(parsed)
}

struct Args<'a>(&'a JsonObject);

impl Args<'_> {
    fn only(&self, fields: &[&str]) -> Result<(), AgentError> {
        match self.0.keys().find(|k| !fields.contains(&k.as_str())) {
            Some(k) => Err(invalid(format!(
                "unknown field `{k}`; the fields are: {}",
                fields.join(", ")
            ))),
            None => Ok(()),
        }
    }

    /// A required, nonempty string.
    fn text(&self, field: &str) -> Result<String, AgentError> {
        match self.0.get(field) {
            None | Some(Value::Null) => Err(invalid(format!("`{field}` is required"))),
            Some(Value::String(s)) if s.trim().is_empty() => {
                Err(invalid(format!("`{field}` must not be empty")))
            }
            Some(Value::String(s)) => Ok(s.clone()),
            Some(other) => Err(invalid(format!(
                "`{field}` must be a string, not {}",
                kind(other)
            ))),
        }
    }

    fn flag(&self, field: &str) -> Result<bool, AgentError> {
        match self.0.get(field) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(other) => Err(invalid(format!(
                "`{field}` must be true or false, not {}",
                kind(other)
            ))),
        }
    }

    fn targets(&self) -> Result<Vec<String>, AgentError> {
        let items = match self.0.get("targets") {
            None | Some(Value::Null) => return Err(invalid("`targets` is required")),
            Some(Value::Array(items)) => items,
            Some(other) => {
                return Err(invalid(format!(
                    "`targets` must be a list of agent_ids, not {}",
                    kind(other)
                )));
            }
        };
        if items.is_empty() {
            return Err(invalid("`targets` must name at least one agent_id"));
        }
        let mut targets: Vec<String> = Vec::with_capacity(items.len());
        let mut seen = std::collections::HashSet::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            match item {
                Value::String(s) if s.trim().is_empty() => {
                    return Err(invalid(format!("`targets[{i}]` must not be empty")));
                }
                Value::String(s) if !seen.insert(s.as_str()) => {
                    return Err(invalid(format!("`targets` lists {s} twice")));
                }
                Value::String(s) => targets.push(s.clone()),
                other => {
                    return Err(invalid(format!(
                        "`targets[{i}]` must be a string, not {}",
                        kind(other)
                    )));
                }
            }
        }
        Ok(targets)
    }

    fn timeout(&self) -> Result<Duration, AgentError> {
        match self.0.get("timeout_ms") {
            None | Some(Value::Null) => Ok(DEFAULT_WAIT),
            Some(Value::Number(n)) => {
                // JSON Schema's `integer` includes 1000.0, which some clients send. As a
                // float, every whole number in range is exact.
                let ms = match (n.as_u64(), n.as_i64()) {
                    (Some(u), _) => Some(u as f64),
                    (None, Some(i)) => Some(i as f64),
                    (None, None) => n.as_f64().filter(|f| f.fract() == 0.0),
                };
                match ms {
                    Some(ms) if (0.0..=MAX_WAIT_MS as f64).contains(&ms) => {
                        Ok(Duration::from_millis(ms as u64))
                    }
                    Some(_) => Err(invalid(format!(
                        "`timeout_ms` is {n}; it must be from 0 to {MAX_WAIT_MS}"
                    ))),
                    None => Err(invalid(
                        "`timeout_ms` must be a whole number of milliseconds",
                    )),
                }
            }
            Some(other) => Err(invalid(format!(
                "`timeout_ms` must be an integer, not {}",
                kind(other)
            ))),
        }
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// A success: the JSON as `structuredContent` and as one text block.
pub fn success(value: Value) -> CallToolResult {
    let mut result = CallToolResult::success(vec![ContentBlock::text(value.to_string())]);
    result.structured_content = Some(value);
    result
}

/// A failure: `{"error": {"code", "message"}}` as `structuredContent` and text, `isError`.
pub fn failure(error: &AgentError) -> CallToolResult {
    let value = json!({ "error": error_json(error) });
    let mut result = CallToolResult::error(vec![ContentBlock::text(value.to_string())]);
    result.structured_content = Some(value);
    result
}

pub fn accepted_json(accepted: &Accepted, with_queue: bool) -> Value {
    let mut value = json!({
        "agent_id": accepted.agent_id,
        "name": accepted.name,
        "status": "running",
    });
    if with_queue {
        value["queued"] = json!(accepted.queued);
    }
    value
}

pub fn wait_json(timed_out: bool, agents: &[Snapshot]) -> Value {
    json!({
        "timed_out": timed_out,
        "agents": agents.iter().map(snapshot_json).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(tool: &str, args: Value) -> Result<Call, AgentError> {
        parse_call(tool, args.as_object()).unwrap()
    }

    #[test]
    fn agent_lines_keep_descriptions_up_to_the_cap_whole() {
        let whole = "w".repeat(AGENT_DESCRIPTION_CHARS);
        assert_eq!(agent_line("a", &whole), format!("- a: {whole}"));
        let longer = format!("{whole}é");
        assert_eq!(agent_line("a", &longer), format!("- a: {whole}…"));
        assert_eq!(agent_line("a", "two\n  lines"), "- a: two lines");
    }

    fn refusal(tool: &str, args: Value) -> String {
        let e = call(tool, args).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidInput);
        e.message
    }

    #[test]
    fn arguments_are_checked_field_by_field() {
        assert_eq!(
            call(SPAWN_AGENT, json!({"name": "r", "task": "t"})).unwrap(),
            Call::Spawn {
                name: "r".into(),
                task: "t".into()
            }
        );
        assert_eq!(
            refusal(SPAWN_AGENT, json!({"task": "t"})),
            "`name` is required"
        );
        assert_eq!(
            refusal(SPAWN_AGENT, json!({"name": "r", "task": " "})),
            "`task` must not be empty"
        );
        assert_eq!(
            refusal(SPAWN_AGENT, json!({"name": 3, "task": "t"})),
            "`name` must be a string, not a number"
        );
        assert!(
            refusal(SPAWN_AGENT, json!({"name": "r", "task": "t", "x": 1}))
                .contains("unknown field `x`")
        );
        assert_eq!(
            call(SEND_INPUT, json!({"target": "a", "message": "m"})).unwrap(),
            Call::SendInput {
                target: "a".into(),
                message: "m".into(),
                interrupt: false
            }
        );
        assert!(
            refusal(
                SEND_INPUT,
                json!({"target": "a", "message": "m", "interrupt": "yes"})
            )
            .contains("`interrupt`")
        );
        assert_eq!(
            call(WAIT_AGENT, json!({"targets": ["a"]})).unwrap(),
            Call::Wait {
                targets: vec!["a".into()],
                timeout: Duration::from_millis(30_000)
            },
            "SPEC §4.3: the default wait is 30 s"
        );
        assert_eq!(
            call(WAIT_AGENT, json!({"targets": ["a"], "timeout_ms": 300_000})).unwrap(),
            Call::Wait {
                targets: vec!["a".into()],
                timeout: Duration::from_millis(300_000)
            },
            "the maximum itself is accepted"
        );
        assert_eq!(
            refusal(WAIT_AGENT, json!({"targets": []})),
            "`targets` must name at least one agent_id"
        );
        assert_eq!(
            refusal(WAIT_AGENT, json!({"targets": ["a", "a"]})),
            "`targets` lists a twice"
        );
        assert_eq!(
            refusal(WAIT_AGENT, json!({"targets": [""]})),
            "`targets[0]` must not be empty"
        );
        assert!(
            refusal(WAIT_AGENT, json!({"targets": ["a"], "timeout_ms": 300001}))
                .contains("from 0 to 300000")
        );
        assert!(
            refusal(WAIT_AGENT, json!({"targets": ["a"], "timeout_ms": -1}))
                .contains("from 0 to 300000")
        );
        assert!(
            refusal(WAIT_AGENT, json!({"targets": ["a"], "timeout_ms": 1.5}))
                .contains("whole number")
        );
        assert!(call(WAIT_AGENT, json!({"targets": ["a"], "timeout_ms": 0})).is_ok());
        match call(WAIT_AGENT, json!({"targets": ["a"], "timeout_ms": 1000.0})) {
            Ok(Call::Wait { timeout, .. }) => assert_eq!(timeout, Duration::from_millis(1000)),
            other => panic!("a whole float is an integer to JSON Schema: {other:?}"),
        }
        assert!(
            refusal(
                WAIT_AGENT,
                json!({"targets": ["a"], "timeout_ms": 300001.0})
            )
            .contains("from 0 to 300000")
        );
        assert!(
            refusal(WAIT_AGENT, json!({"targets": ["a"], "timeout_ms": -0.5}))
                .contains("whole number")
        );
        assert!(parse_call("other", None).is_none());
        assert_eq!(
            parse_call(SPAWN_AGENT, None).unwrap().unwrap_err().message,
            "`name` is required"
        );
    }

    #[test]
    fn results_carry_the_same_json_twice() {
        let r = failure(&AgentError::new(ErrorCode::QueueFull, "full"));
        assert_eq!(r.is_error, Some(true));
        let expected = json!({"error": {"code": "queue_full", "message": "full"}});
        assert_eq!(r.structured_content, Some(expected.clone()));
        let text = r.content[0].as_text().unwrap().text.clone();
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), expected);
    }
}
