//! A `tools/call` from arguments to result (SPEC §4): the arguments are read into the
//! tool's typed struct ([`super::schema`]), every refusal is an `invalid_input` that names
//! the field, and results carry their JSON twice (`structuredContent` and one text block).

use std::collections::HashSet;
use std::fmt;
use std::time::Duration;

use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use rmcp::schemars;
use serde::Deserialize;
use serde::de::{DeserializeOwned, Deserializer, Error as _};
use serde_json::{Value, json};

use super::schema::{
    Flag, OptionalText, ReturnWhenArg, SEND_INPUT, SPAWN_AGENT, SendInputArgs, SpawnArgs, Targets,
    Text, WAIT_AGENT, WaitArgs, WaitTimeout, field_names,
};
use crate::definition::Catalog;
use crate::error::{AgentError, ErrorCode};
use crate::limits::{HTTP_LONG_WAITS, HTTP_SHORT_WAIT, MAX_WAIT_MS};
use crate::sessions::{Accepted, require_text};
use crate::sessions::{ReturnWhen, Snapshot, short_id};
use crate::sessions::{error_json, snapshot_json, summary_line};

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
    /// `send_input` with `stop: true`; the message, if any, is the reason.
    Stop {
        target: String,
        reason: Option<String>,
    },
    Wait {
        targets: Vec<String>,
        timeout: Duration,
        return_when: ReturnWhen,
    },
}

/// `unknown_agent` for an agent the parent model may not start: its file says a model
/// must not pick it (SPEC §3, Copilot's `disable-model-invocation`), so `spawn_agent` does not
/// list it; the message says why, and how a person runs it.
pub(super) fn not_offered(catalog: &Catalog, name: &str) -> Option<AgentError> {
    let definition = catalog.get(name)?;
    let setting = definition.hand_only?;
    Some(AgentError::new(
        ErrorCode::UnknownAgent,
        format!(
            "the agent `{name}` is not offered to models: its file ({}) sets `{setting}`, \
             which says a model must not pick it; a person can run it with `mcp-agents run \
             {name} TASK`",
            definition.source.path.display()
        ),
    ))
}

fn invalid(message: impl Into<String>) -> AgentError {
    AgentError::new(ErrorCode::InvalidInput, message)
}

/// Checks a call's arguments against the tool's schema, naming the field at fault.
/// `None` when `tool` is not one of the three.
pub fn parse_call(tool: &str, arguments: Option<&JsonObject>) -> Option<Result<Call, AgentError>> {
    let empty = JsonObject::new();
    let arguments = arguments.unwrap_or(&empty);
    if let Some(kind) = arguments.get(super::arguments::MARKER) {
        if !matches!(tool, SPAWN_AGENT | SEND_INPUT | WAIT_AGENT) {
            return None;
        }
        let kind = kind.as_str().unwrap_or("not an object");
        return Some(Err(invalid(format!(
            "`arguments` must be a JSON object with the tool's fields, not {kind}"
        ))));
    }
    let call = match tool {
        SPAWN_AGENT => read::<SpawnArgs>(arguments).map(|a| Call::Spawn {
            name: a.name.0,
            task: a.task.0,
        }),
        SEND_INPUT => read::<SendInputArgs>(arguments).and_then(send_input_call),
        WAIT_AGENT => read::<WaitArgs>(arguments).map(|a| Call::Wait {
            targets: a.targets.0,
            timeout: a.timeout_ms.0,
            return_when: a.return_when.0,
        }),
        _ => return None,
    };
    Some(call)
}

/// `send_input`'s fields that go together (SPEC §4.2): `message` is required unless `stop`
/// is true (it is then the reason), and `stop` does not go with `interrupt`.
fn send_input_call(args: SendInputArgs) -> Result<Call, AgentError> {
    let target = args.target.0;
    match (args.stop.0, args.interrupt.0, args.message.0) {
        (true, true, _) => Err(invalid(
            "`stop` and `interrupt` cannot both be true: interrupt cancels the current step and \
             goes on with the queued input, stop ends the run; send one of them",
        )),
        (true, false, reason) => Ok(Call::Stop { target, reason }),
        (false, interrupt, Some(message)) => Ok(Call::SendInput {
            target,
            message,
            interrupt,
        }),
        (false, _, None) => Err(invalid("`message` is required (unless `stop` is true)")),
    }
}

/// Reads `arguments` into `T`. The field types' checks say what is wrong with a value
/// ("must not be empty"); the path of the failure names the field; serde's own complaints
/// (a missing or unknown field) are put in the same words.
fn read<T: DeserializeOwned + schemars::JsonSchema + std::any::Any>(
    arguments: &JsonObject,
) -> Result<T, AgentError> {
    serde_path_to_error::deserialize(arguments).map_err(|e| {
        let field = e.path().to_string();
        let message = e.into_inner().to_string();
        if let Some(missing) = quoted_after(&message, "missing field ") {
            return invalid(format!("`{missing}` is required"));
        }
        if let Some(unknown) = quoted_after(&message, "unknown field ") {
            return invalid(format!(
                "unknown field `{unknown}`; the fields are: {}",
                field_names::<T>().join(", ")
            ));
        }
        // A rule's message has [`FIELD`] where the field's path goes, so that a rule about
        // one element of a list (`targets[0]`) can name it.
        invalid(message.replacen(FIELD, &field, 1))
    })
}

/// Where a rule's message names its field; [`read`] fills it in.
const FIELD: &str = "{field}";

/// The text between the backquotes that follow `prefix` in serde's message.
fn quoted_after<'m>(message: &'m str, prefix: &str) -> Option<&'m str> {
    let rest = message.strip_prefix(prefix)?.strip_prefix('`')?;
    rest.split('`').next()
}

/// A rule's failure, with [`FIELD`] where the field's name goes.
fn rule<E: serde::de::Error>(what: impl fmt::Display) -> E {
    E::custom(format!("`{FIELD}` {what}"))
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

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::Null => Err(rule("is required")),
            Value::String(s) => require_text(FIELD, &s)
                .map(|()| Text(s))
                .map_err(|e| D::Error::custom(e.message)),
            other => Err(rule(format!("must be a string, not {}", kind(&other)))),
        }
    }
}

impl<'de> Deserialize<'de> for OptionalText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::Null => Ok(OptionalText(None)),
            Value::String(s) => require_text(FIELD, &s)
                .map(|()| OptionalText(Some(s)))
                .map_err(|e| D::Error::custom(e.message)),
            other => Err(rule(format!("must be a string, not {}", kind(&other)))),
        }
    }
}

impl<'de> Deserialize<'de> for ReturnWhenArg {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::Null => Ok(ReturnWhenArg::default()),
            Value::String(s) if s == "all" => Ok(ReturnWhenArg(ReturnWhen::All)),
            Value::String(s) if s == "any" => Ok(ReturnWhenArg(ReturnWhen::Any)),
            Value::String(s) => Err(rule(format!("is {s:?}; it must be \"all\" or \"any\""))),
            other => Err(rule(format!(
                "must be \"all\" or \"any\", not {}",
                kind(&other)
            ))),
        }
    }
}

impl<'de> Deserialize<'de> for Flag {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::Null => Ok(Flag(false)),
            Value::Bool(b) => Ok(Flag(b)),
            other => Err(rule(format!("must be true or false, not {}", kind(&other)))),
        }
    }
}

impl<'de> Deserialize<'de> for Targets {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let items = match Value::deserialize(d)? {
            Value::Null => return Err(rule("is required")),
            Value::Array(items) => items,
            other => {
                return Err(rule(format!(
                    "must be a list of agent_ids, not {}",
                    kind(&other)
                )));
            }
        };
        if items.is_empty() {
            return Err(rule("must name at least one agent_id"));
        }
        let mut targets: Vec<String> = Vec::with_capacity(items.len());
        let mut seen = HashSet::with_capacity(items.len());
        for (i, item) in items.into_iter().enumerate() {
            // An element's rule names the element: `targets[0]`.
            let element = format!("{FIELD}[{i}]");
            match item {
                Value::String(s) if let Err(e) = require_text(&element, &s) => {
                    return Err(D::Error::custom(e.message));
                }
                Value::String(s) if !seen.insert(s.clone()) => {
                    return Err(rule(format!("lists {s} twice")));
                }
                Value::String(s) => targets.push(s),
                other => {
                    return Err(D::Error::custom(format!(
                        "`{element}` must be a string, not {}",
                        kind(&other)
                    )));
                }
            }
        }
        Ok(Targets(targets))
    }
}

impl<'de> Deserialize<'de> for WaitTimeout {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let n = match Value::deserialize(d)? {
            Value::Null => return Ok(WaitTimeout::default()),
            Value::Number(n) => n,
            other => return Err(rule(format!("must be an integer, not {}", kind(&other)))),
        };
        // JSON Schema's `integer` includes 1000.0, which some clients send. As a float,
        // every whole number in range is exact.
        let ms = match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => Some(u as f64),
            (None, Some(i)) => Some(i as f64),
            (None, None) => n.as_f64().filter(|f| f.fract() == 0.0),
        };
        match ms {
            Some(ms) if (0.0..=MAX_WAIT_MS as f64).contains(&ms) => {
                Ok(WaitTimeout(Duration::from_millis(ms as u64)))
            }
            Some(_) => Err(rule(format!("is {n}; it must be from 0 to {MAX_WAIT_MS}"))),
            None => Err(rule("must be a whole number of milliseconds")),
        }
    }
}

/// A success: the JSON as `structuredContent` and as one text block.
pub(super) fn success(value: Value) -> CallToolResult {
    success_with_lines(value, &[])
}

/// A success whose text block opens with `lines` for people, then the JSON on a line of its
/// own (SPEC §4.3); `structuredContent` is the JSON alone.
fn success_with_lines(value: Value, lines: &[String]) -> CallToolResult {
    let mut text = String::new();
    for line in lines {
        text.push_str(line);
        text.push('\n');
    }
    text.push_str(&value.to_string());
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(value);
    result
}

/// A failure: `{"error": {"code", "message"}}` as `structuredContent` and text, `isError`.
pub(super) fn failure(error: &AgentError) -> CallToolResult {
    let value = json!({ "error": error_json(error) });
    let mut result = CallToolResult::error(vec![ContentBlock::text(value.to_string())]);
    result.structured_content = Some(value);
    result
}

/// `<name> <first 8 of id>`, as a human line names an agent.
fn who(accepted: &Accepted) -> String {
    format!("{} {}", accepted.name, short_id(&accepted.agent_id))
}

/// `spawn_agent`'s result (with the model and provider, SPEC §4.1, and the agent's `note`
/// when it lacks tools its definition asks for), its one-line `summary` first: a client that
/// shows the first line of an answer shows that (SPEC §4.3).
pub(super) fn spawned_json(accepted: &Accepted, note: Option<String>) -> Value {
    let mut summary = format!(
        "{}: started in the background on {} ({})",
        who(accepted),
        accepted.model,
        accepted.provider
    );
    if let Some(note) = &note {
        summary.push_str("; ");
        summary.push_str(note);
    }
    let mut value = json!({
        "summary": summary,
        "agent_id": accepted.agent_id,
        "name": accepted.name,
        "status": "running",
        "model": accepted.model,
        "provider": accepted.provider,
    });
    if let Some(note) = note {
        value["note"] = json!(note);
    }
    value
}

/// `send_input`'s result (with the queue's length, SPEC §4.2; the question it answered,
/// SPEC §4.5), its one-line `summary` first: what became of the message (`interrupt` is the
/// call's).
pub(super) fn queued_json(accepted: &Accepted, interrupt: bool) -> Value {
    let queued = accepted.queued;
    let what = if accepted.answered.is_some() {
        "running; this message answered its question and it goes on with it".to_owned()
    } else if accepted.resumed {
        "resumed: a new run on its conversation, starting with this message".to_owned()
    } else if interrupt {
        format!("interrupting its current step; it goes on with this message ({queued} queued)")
    } else {
        format!("running; this message is queued for its next step ({queued} queued)")
    };
    let mut value = json!({
        "summary": format!("{}: {what}", who(accepted)),
        "agent_id": accepted.agent_id,
        "name": accepted.name,
        "status": "running",
        "queued": accepted.queued,
    });
    if let Some(question) = &accepted.answered {
        value["answered_question"] = json!(question);
    }
    value
}

/// `send_input`'s result after a stop: the agent's record, with `queued` always there, and
/// its human line first as `summary`.
pub(super) fn stopped_json(record: &Snapshot) -> Value {
    let mut value = json!({"summary": summary_line(record)});
    if let (Value::Object(answer), Value::Object(fields)) = (&mut value, snapshot_json(record)) {
        answer.extend(fields);
    }
    value["queued"] = json!(record.queued);
    value
}

/// What a wait shortened for lack of a long-wait slot says (SPEC §10).
pub(super) fn shortened_wait_note() -> String {
    format!(
        "this server is already holding {HTTP_LONG_WAITS} long waits over HTTP, the most it \
         holds at once so that other clients are not locked out; this wait was shortened to \
         {} s. Call wait_agent again to keep waiting",
        HTTP_SHORT_WAIT.as_secs()
    )
}

/// `wait_agent`'s result: one human line per agent, then the JSON (SPEC §4.3), whose first
/// key, `summary`, holds the same lines (Claude Code and Codex give their model the JSON,
/// not the text), with the server's spend beside the agents (SPEC §5.1; an MCP task's
/// result, one agent's record, has none); a `note` (a shortened wait) is in all three.
pub(super) fn wait_result(
    timed_out: bool,
    agents: &[Snapshot],
    server_spend: Option<Value>,
    note: Option<String>,
) -> CallToolResult {
    let mut lines: Vec<String> = agents.iter().map(summary_line).collect();
    if let Some(note) = &note {
        lines.push(format!("note: {note}"));
    }
    let mut answer = json!({
        "summary": lines.join("\n"),
        "timed_out": timed_out,
        "agents": agents.iter().map(snapshot_json).collect::<Vec<_>>(),
    });
    if let Some(spend) = server_spend {
        answer["server_spend"] = spend;
    }
    if let Some(note) = note {
        answer["note"] = json!(note);
    }
    success_with_lines(answer, &lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(tool: &str, args: Value) -> Result<Call, AgentError> {
        parse_call(tool, args.as_object()).unwrap()
    }

    fn refusal(tool: &str, args: Value) -> String {
        let e = call(tool, args).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidInput);
        e.message
    }

    #[test]
    fn spawn_agent_arguments_are_checked_field_by_field() {
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
    }

    #[test]
    fn send_input_arguments_are_checked_field_by_field() {
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
            refusal(SEND_INPUT, json!({"target": "a"})),
            "`message` is required (unless `stop` is true)"
        );
        assert_eq!(
            call(SEND_INPUT, json!({"target": "a", "stop": true})).unwrap(),
            Call::Stop {
                target: "a".into(),
                reason: None
            },
            "SPEC §4.2: the message is optional with stop"
        );
        assert_eq!(
            call(
                SEND_INPUT,
                json!({"target": "a", "stop": true, "message": "wrong file"})
            )
            .unwrap(),
            Call::Stop {
                target: "a".into(),
                reason: Some("wrong file".into())
            }
        );
        assert!(
            refusal(
                SEND_INPUT,
                json!({"target": "a", "stop": true, "interrupt": true})
            )
            .starts_with("`stop` and `interrupt` cannot both be true"),
            "SPEC §4.2: stop with interrupt is invalid_input"
        );
        assert_eq!(
            refusal(
                SEND_INPUT,
                json!({"target": "a", "stop": true, "message": " "})
            ),
            "`message` must not be empty"
        );
    }

    #[test]
    fn wait_agent_arguments_are_checked_field_by_field() {
        assert_eq!(
            call(WAIT_AGENT, json!({"targets": ["a"]})).unwrap(),
            Call::Wait {
                targets: vec!["a".into()],
                timeout: Duration::from_millis(30_000),
                return_when: ReturnWhen::All,
            },
            "SPEC §4.3: the default wait is 30 s, for all targets"
        );
        match call(WAIT_AGENT, json!({"targets": ["a"], "return_when": "any"})) {
            Ok(Call::Wait { return_when, .. }) => assert_eq!(return_when, ReturnWhen::Any),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            refusal(
                WAIT_AGENT,
                json!({"targets": ["a"], "return_when": "first"})
            ),
            "`return_when` is \"first\"; it must be \"all\" or \"any\""
        );
        assert_eq!(
            call(WAIT_AGENT, json!({"targets": ["a"], "timeout_ms": 300_000})).unwrap(),
            Call::Wait {
                targets: vec!["a".into()],
                timeout: Duration::from_millis(300_000),
                return_when: ReturnWhen::All,
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
    }

    #[test]
    fn wait_agent_timeouts_are_whole_milliseconds_up_to_the_maximum() {
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
    }

    #[test]
    fn another_tool_is_not_ours_and_no_arguments_are_missing_ones() {
        assert!(parse_call("other", None).is_none());
        assert_eq!(
            parse_call(SPAWN_AGENT, None).unwrap().unwrap_err().message,
            "`name` is required"
        );
    }

    fn accepted(queued: usize, resumed: bool) -> Accepted {
        Accepted {
            agent_id: "f79152ba0c1d4e2f8a9b0c1d2e3f4a5b".into(),
            name: "fixer".into(),
            model: "gpt-5.4".into(),
            provider: "openai",
            queued,
            resumed,
            answered: None,
        }
    }

    /// The first key of an answer's JSON, as the text block shows it first.
    fn first_key(value: &Value) -> &str {
        value.as_object().unwrap().keys().next().unwrap()
    }

    #[test]
    fn spawn_and_send_input_answers_open_with_a_one_line_summary() {
        let spawned = spawned_json(&accepted(0, false), None);
        assert_eq!(first_key(&spawned), "summary");
        assert_eq!(
            spawned["summary"],
            "fixer f79152ba: started in the background on gpt-5.4 (openai)"
        );
        let noted = spawned_json(&accepted(0, false), Some("runs here without Bash".into()));
        assert_eq!(
            noted["summary"],
            "fixer f79152ba: started in the background on gpt-5.4 (openai); runs here without \
             Bash"
        );
        let queued = queued_json(&accepted(2, false), false);
        assert_eq!(first_key(&queued), "summary");
        assert_eq!(
            queued["summary"],
            "fixer f79152ba: running; this message is queued for its next step (2 queued)"
        );
        assert_eq!(
            queued_json(&accepted(1, false), true)["summary"],
            "fixer f79152ba: interrupting its current step; it goes on with this message (1 \
             queued)"
        );
        assert_eq!(
            queued_json(&accepted(1, true), false)["summary"],
            "fixer f79152ba: resumed: a new run on its conversation, starting with this message"
        );
        for value in [spawned, queued] {
            assert!(!value["summary"].as_str().unwrap().contains('\n'));
        }
    }

    #[test]
    fn a_shortened_wait_s_note_is_a_line_of_its_summary_too() {
        let result = wait_result(true, &[], None, Some("call again".into()));
        let answer = result.structured_content.unwrap();
        assert_eq!(first_key(&answer), "summary");
        assert_eq!(answer["summary"], "note: call again");
        assert_eq!(answer["note"], "call again");
        let text = &result.content[0].as_text().unwrap().text;
        assert!(text.starts_with("note: call again\n{\"summary\":\"note: call again\""));
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
