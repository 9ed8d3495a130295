//! The three tools as the parent model sees them (SPEC §4): names, descriptions, input and
//! output schemas, and the workflow instructions.
//!
//! Each tool's input is one typed struct, and its JSON Schema is generated from that struct
//! (`schemars`, as `rmcp` does for its own tools), so the schema a client sees and the
//! checks its arguments meet cannot drift apart. Each field's type carries both halves of
//! its rule: the schema it declares ([`JsonSchema`]) and the check that turns a bad value
//! into an `invalid_input` message naming the field (its `Deserialize`, in `call.rs`).

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use rmcp::handler::server::common::schema_for_input;
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use rmcp::schemars::{self, JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::definition::{AgentDefinition, BuiltinServer};
use crate::limits::{AGENT_DESCRIPTION_CHARS, DEFAULT_WAIT, MAX_WAIT_MS};
use crate::sessions::ReturnWhen;

pub const SPAWN_AGENT: &str = "spawn_agent";
pub const SEND_INPUT: &str = "send_input";
pub const WAIT_AGENT: &str = "wait_agent";

/// What `model` means in a result.
const MODEL_FIELD: &str = "the model id the agent's requests really send (a fallback model \
    once the agent's own could not answer: see model_attempts)";
/// What `provider` means in a result.
const PROVIDER_FIELD: &str = "the agent's provider: openai, anthropic, gemini or custom";

/// What the server tells the parent model about the workflow.
const INSTRUCTIONS: &str = "This server runs subagents defined in this workspace, each \
with its own model and tools, in the background.\n\
1. spawn_agent starts one on a self-contained task and returns its agent_id at once.\n\
2. Keep working; then call wait_agent with the ids and the timeout_ms its description \
advises for your client (a wait returns as soon as the agents finish, so a long one costs \
nothing when the work is quick).\n\
3. While an agent runs, wait_agent shows its `activity` (what it is doing and for how long); \
a timeout returns control and cancels nothing, so wait again.\n\
4. Continue a finished agent, or steer a running one, with send_input (interrupt: true \
cancels its current step first; stop: true ends its run, keeping its partial work).\n\
5. Before relying on a result, read it whole: partial_result keeps a failed agent's work, \
refused: true means it declined, tools_used shows what it really did.\n\
6. If an agent fails with context_limit, spawn a fresh agent for a narrower task (or, when \
its error says its reply filled the context window, give it a lower max_output_tokens).\n\
7. An agent here may also be one of your client's own subagents (the same .claude/agents \
file). Use spawn_agent to run it in the background on its own model and MCP servers while you \
keep working. Agents here read the workspace; those marked \"edits files\" in spawn_agent's \
list also change files in it (edit, write; never outside it); none runs shell commands, so \
use your client's own subagent tool when the task needs commands run (builds, tests).";

/// What the instructions add under `--mcp-tasks` (SPEC §4.4): a client that runs
/// `spawn_agent` as a background task brings its model the result itself. The other clients
/// of the same server still spawn and wait, so the default steps stay as they are.
const TASKS_INSTRUCTIONS: &str = "8. If your client runs spawn_agent as a background task \
(it tells you the call was moved to the background and that a notification will bring the \
result), do not call wait_agent for that agent: keep working, and the notification brings \
what wait_agent would return. Its task id is the agent_id: send_input works on it as on any \
agent (a follow-up, or stop: true), and wait_agent shows it at any time.";

/// The instructions the server gives: the default ones, and with `tasks` (`--mcp-tasks`)
/// one step more.
pub(super) fn instructions(tasks: bool) -> String {
    if tasks {
        format!("{INSTRUCTIONS}\n{TASKS_INSTRUCTIONS}")
    } else {
        INSTRUCTIONS.to_owned()
    }
}

/// `summary` in a success shape: the answer's first key.
fn summary_field(what: &str) -> Value {
    json!({"type": "string", "description": what})
}

/// `spawn_agent`'s arguments.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct SpawnArgs {
    /// Which agent to start.
    pub name: Text,
    /// The task, self-contained: what to do, the context it needs, and what to return.
    pub task: Text,
}

/// `send_input`'s arguments.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct SendInputArgs {
    /// The agent_id.
    pub target: Text,
    /// What to tell the agent; with stop, why it is stopped (optional then).
    #[serde(default)]
    pub message: OptionalText,
    /// Cancel the agent's current step first.
    #[serde(default)]
    pub interrupt: Flag,
    /// End the agent's run now, keeping its partial work; the agent stays resumable.
    #[serde(default)]
    pub stop: Flag,
}

/// `wait_agent`'s arguments.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct WaitArgs {
    /// The agent_ids to wait for.
    pub targets: Targets,
    /// Longest wait, in milliseconds.
    #[serde(default)]
    pub timeout_ms: WaitTimeout,
    /// Return when all targets have finished, or as soon as any one has.
    #[serde(default)]
    pub return_when: ReturnWhenArg,
}

/// A required, nonempty string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Text(pub String);

/// A nonempty string that may be absent (or null).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct OptionalText(pub Option<String>);

/// A boolean that is false when absent or null.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Flag(pub bool);

/// One or more distinct, nonempty agent_ids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Targets(pub Vec<String>);

/// `return_when`: `"all"` (the default) or `"any"`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct ReturnWhenArg(pub ReturnWhen);

/// `timeout_ms`: a whole number of milliseconds from 0 to [`MAX_WAIT_MS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct WaitTimeout(pub Duration);

impl Default for WaitTimeout {
    fn default() -> Self {
        WaitTimeout(DEFAULT_WAIT)
    }
}

impl JsonSchema for Text {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        "Text".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "string", "minLength": 1})
    }
}

impl JsonSchema for OptionalText {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        "OptionalText".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "string", "minLength": 1})
    }
}

impl JsonSchema for Flag {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        "Flag".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "boolean", "default": false})
    }
}

impl JsonSchema for Targets {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        "Targets".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "array",
            "minItems": 1,
            "uniqueItems": true,
            "items": {"type": "string", "minLength": 1}
        })
    }
}

impl JsonSchema for ReturnWhenArg {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        "ReturnWhen".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "string", "enum": ["all", "any"], "default": "all"})
    }
}

impl JsonSchema for WaitTimeout {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        "WaitTimeout".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let default = u64::try_from(DEFAULT_WAIT.as_millis()).unwrap_or(MAX_WAIT_MS);
        json_schema!({"type": "integer", "minimum": 0, "maximum": MAX_WAIT_MS, "default": default})
    }
}

/// The input schema generated from `T`, without the `$schema` line (the MCP default
/// dialect, 2020-12, is the one generated).
fn input_schema<T: JsonSchema + std::any::Any>() -> Arc<JsonObject> {
    // Fails only for a struct whose schema is not an object; ours are, and
    // `the_input_schemas_are_pinned` holds them to it.
    let mut schema = schema_for_input::<T>()
        .map(|s| s.as_ref().clone())
        .unwrap_or_default();
    schema.remove("$schema");
    Arc::new(schema)
}

/// The field names of `T`'s schema, for the "unknown field" message.
pub(super) fn field_names<T: JsonSchema + std::any::Any>() -> Vec<String> {
    input_schema::<T>()
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default()
}

fn object(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

/// One line per agent for the description: `name: description`, whitespace collapsed, cut
/// at [`AGENT_DESCRIPTION_CHARS`], then its marks in parentheses (`read-only here: no Edit`,
/// `needs OPENAI_API_KEY`).
fn agent_line(name: &str, description: &str, marks: &[String]) -> String {
    let flat = description.split_whitespace().collect::<Vec<_>>().join(" ");
    let cut: String = flat.chars().take(AGENT_DESCRIPTION_CHARS).collect();
    let ellipsis = if cut.len() < flat.len() { "…" } else { "" };
    let marks: String = marks.iter().map(|m| format!(" ({m})")).collect();
    format!("- {name}: {cut}{ellipsis}{marks}")
}

/// What the parent should know about an agent before it picks it (SPEC §4.1): the tools its
/// file asks for that it does not get here, and the key variable that was unset when the
/// server started (`missing_key`).
pub(super) fn agent_marks(agent: &AgentDefinition, missing_key: Option<String>) -> Vec<String> {
    what_it_can_do(agent)
        .into_iter()
        .chain(agent.offer_note())
        .chain(missing_key.map(|var| format!("needs {var}")))
        .collect()
}

/// What an agent can do where it differs from the unmarked case, reading the workspace
/// (issue 39): `edits files` with the workspace tools that change files, `no tools: answers
/// from its instructions alone` with no tool at all, `only github tools` with only its own
/// servers' tools.
fn what_it_can_do(agent: &AgentDefinition) -> Option<String> {
    let workspace = BuiltinServer::Workspace;
    let tools = agent.workspace_tools();
    if tools.iter().any(|tool| workspace.changes_files(tool)) {
        return Some("edits files".to_owned());
    }
    if !tools.is_empty() {
        return None;
    }
    let servers: Vec<&str> = agent
        .own_servers()
        .filter(|server| agent.tools.may_allow_server(server))
        .map(String::as_str)
        .collect();
    Some(if servers.is_empty() {
        "no tools: answers from its instructions alone".to_owned()
    } else {
        format!("only {} tools", servers.join(", "))
    })
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

/// What `spawn_agent`'s description adds under `--mcp-tasks` (SPEC §4.4).
const TASKS_SPAWN_NOTE: &str = " When your client runs this call as a background task, the \
result (what wait_agent returns) reaches you as a notification once the agent has finished: \
keep working, without wait_agent.";

/// `spawn_agent`, offering `agents`, each with its marks ([`agent_marks`]); with `tasks`
/// (`--mcp-tasks`) its description says what a task brings.
pub(super) fn spawn_agent_tool(agents: &[(&AgentDefinition, Vec<String>)], tasks: bool) -> Tool {
    let names: Vec<&str> = agents.iter().map(|(a, _)| a.name.as_str()).collect();
    let list: Vec<String> = agents
        .iter()
        .map(|(a, marks)| agent_line(&a.name, &a.description, marks))
        .collect();
    let description = format!(
        "Start a subagent in the background on a focused task and return its agent_id at \
         once, before it does any work, with the model and provider it will use. The subagent \
         has its own model and tools and does not see this conversation: put everything it \
         needs in `task`. Keep working, then collect the result with wait_agent. At most 8 \
         agents run at once; finished agents do not count. An unmarked agent reads this \
         workspace (read, list, glob, grep) and uses its own MCP servers' tools; one marked \
         \"edits files\" also changes files in the workspace (edit, write; never outside it); \
         \"no tools\": it answers from its instructions alone and sees no file; \"only X \
         tools\": it sees no workspace file. No agent here runs shell commands: \"runs here \
         without\" or \"read-only here: no\" names tools its definition asks for that it \
         lacks here. \"needs VAR\": it cannot start until the server is restarted with that \
         key.{}\n\nAgents:\n{}",
        if tasks { TASKS_SPAWN_NOTE } else { "" },
        list.join("\n")
    );
    // The catalog's names are known only at startup: they join the generated schema.
    let mut input = input_schema::<SpawnArgs>().as_ref().clone();
    if let Some(Value::Object(name)) = input.get_mut("properties").and_then(|p| p.get_mut("name")) {
        name.insert("enum".into(), json!(names));
    }
    let output = result_schema(json!({
        "type": "object",
        "properties": {"summary": summary_field("one line for people: the agent, that \
                           it started, on which model"),
                       "agent_id": {"type": "string"}, "name": {"type": "string"},
                       "status": {"type": "string", "enum": ["running"]},
                       "model": {"type": "string", "description": MODEL_FIELD},
                       "provider": {"type": "string", "description": PROVIDER_FIELD},
                       "note": {"type": "string", "description": "present when the agent \
                           lacks tools its definition asks for: which, e.g. \"runs here \
                           without Bash\""}},
        "required": ["summary", "agent_id", "name", "status", "model", "provider"]
    }));
    Tool::new(SPAWN_AGENT, description, Arc::new(input))
        .with_raw_output_schema(object(output))
        .annotate(
            ToolAnnotations::with_title("Spawn agent")
                .read_only(false)
                .destructive(false)
                .idempotent(false)
                .open_world(true),
        )
}

pub(super) fn send_input_tool() -> Tool {
    let description = "Send a message to an agent. While it runs, the message is queued and \
        delivered at its next step, after any pending tool results (at most 16 queued). With \
        interrupt: true, its current model request or tool call is cancelled first and it \
        continues with the queued input, this message included. A completed or failed agent \
        is resumed with this message on the same conversation (it needs a free run slot). \
        With stop: true (message optional, then the reason), the agent's run ends at once: \
        its model request or tool call is abandoned, its MCP servers are shut down, it \
        becomes failed with the code cancelled, keeping its partial_result, usage and any \
        queued input, and its run slot is free; the answer is its record as wait_agent shows \
        it. Stopping a finished agent changes nothing. A stopped agent resumes like any \
        failed one. An agent that asked you a question (its record's question) waits for \
        your answer: send_input's message is the answer, and it goes on at once.";
    let output = result_schema(json!({
        "type": "object",
        "properties": {"summary": summary_field("one line for people: what became of \
                           the message (queued, interrupting, resumed), or after stop the \
                           agent's line as wait_agent opens with it"),
                       "agent_id": {"type": "string"}, "name": {"type": "string"},
                       "status": {"type": "string", "enum": ["running", "completed", "failed"],
                                  "description": "running, except after stop: the agent's \
                                      status then (failed with the code cancelled, or the \
                                      status it had already reached)"},
                       "queued": {"type": "integer", "minimum": 0},
                       "answered_question": {"type": "string", "description": "present when \
                           the agent was waiting for an answer: the question this message \
                           answered (it was not queued)"}},
        "required": ["summary", "agent_id", "name", "status", "queued"]
    }));
    Tool::new(SEND_INPUT, description, input_schema::<SendInputArgs>())
        .with_raw_output_schema(object(output))
        .annotate(
            ToolAnnotations::with_title("Send input to agent")
                .read_only(false)
                .destructive(false)
                .idempotent(false)
                .open_world(true),
        )
}

/// `wait_agent`, its description ending with `advice`: the longest wait the calling client
/// takes (`crate::clients::wait_advice`).
pub(super) fn wait_agent_tool(advice: &str) -> Tool {
    let description = format!(
        "Wait until every listed agent has finished (with return_when: \"any\", until the \
        first one has), or until timeout_ms passes, and return each agent's status: its \
        result or error, the model it used, turns, token usage and its cost in USD when the \
        model has a price, the tools it really called \
        (tools_used), the files it changed (files_changed) and elapsed time, and for a \
        running agent its current activity (phase, \
        what it is doing, for how long). The text answer opens with one line per agent. It is \
        an event wait: it returns as soon as the agents finish, so a long timeout_ms costs \
        nothing when the work is quick; timeout_ms 0 returns a snapshot. A timeout only \
        returns control: agents keep running, so wait again (send_input with stop: true ends \
        one). Results stay available and can be read again. Read before trusting a result: \
        a failed agent's partial_result holds the work it did before failing; refused: true \
        means the model declined the task and result is its refusal; tools_used shows \
        whether it ran the searches or calls its result claims. An agent may ask you a \
        question: the wait then returns at once with its question (and options) in its \
        record and its line reading \"asks: …\"; answer with send_input. {advice}"
    );
    let output = result_schema(json!({
        "type": "object",
        "properties": {"summary": summary_field("one line per agent, for people and \
                           for a quick read: its status, what it is doing or the start of its \
                           result or error, and the files it changed (then the note's line, \
                           if any)"),
                       "timed_out": {"type": "boolean", "description": "the timeout passed \
                           first: some agent still runs (with return_when \"any\": none has \
                           finished)"},
                       "agents": {"type": "array", "items": agent_record_schema()},
                       "server_spend": server_spend_schema(),
                       "note": {"type": "string", "description": "present when the server \
                           shortened this wait (over HTTP, with many clients waiting at \
                           once): call wait_agent again to keep waiting"}},
        "required": ["summary", "timed_out", "agents"]
    }));
    Tool::new(WAIT_AGENT, description, input_schema::<WaitArgs>())
        .with_raw_output_schema(object(output))
        .annotate(
            ToolAnnotations::with_title("Wait for agents")
                .read_only(true)
                .destructive(false)
                .idempotent(true)
                .open_world(false),
        )
}

/// One agent's record in `wait_agent`'s answer (SPEC §4.3; `sessions::snapshot_json`).
fn agent_record_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "agent_id": {"type": "string"}, "name": {"type": "string"},
            "status": {"type": "string", "enum": ["running", "completed", "failed"]},
            "result": {"type": "string", "description": "completed: the final answer (a \
                refusal's text when refused is true)"},
            "refused": {"type": "boolean", "description": "present and true when the model \
                declined the task: result is then its refusal, not an answer"},
            "structured_result": {"description": "completed, for an agent with an output \
                schema: the answer parsed as JSON, which satisfied the schema"},
            "error": {
                "type": "object",
                "properties": {"code": {"type": "string"}, "message": {"type": "string"}},
                "required": ["code", "message"],
                "description": "failed: why; budget_exceeded and invalid_output name the \
                    limit or the schema errors"
            },
            "partial_result": {"type": "string", "description": "failed: the last text the \
                agent wrote before it failed (at most 64 KiB), so its work is not lost"},
            "model": {"type": "string", "description": MODEL_FIELD},
            "provider": {"type": "string", "description": PROVIDER_FIELD},
            "model_attempts": model_attempts_schema(),
            "total_elapsed_ms": {"type": "integer"}, "turns": {"type": "integer"},
            "usage": usage_schema(),
            "tools_used": tools_used_schema(),
            "files_changed": files_changed_schema(),
            "unlisted_changes": {"type": "integer", "minimum": 1, "description": "present \
                when the agent changed more files than files_changed lists: the changes to \
                the files not listed"},
            "queued": {"type": "integer"},
            "activity": {"type": "object"},
            "question": {"type": "string", "description": "running: the agent asked you this \
                and waits for your answer (activity phase waiting_for_input); answer it \
                with send_input"},
            "options": {"type": "array", "items": {"type": "string"}, "description": "the \
                answers the agent suggested for its question, if any"}
        },
        "required": ["agent_id", "name", "status", "model", "provider", "total_elapsed_ms",
                     "turns", "usage", "tools_used", "files_changed"]
    })
}

/// A record's `usage`: the session's tokens and tool calls over its life.
fn usage_schema() -> Value {
    json!({"type": "object", "properties": {
        "input_tokens": {"type": "integer"}, "output_tokens": {"type": "integer"},
        "cache_read_tokens": {"type": "integer"}, "cache_write_tokens": {"type": "integer"},
        "tool_calls": {"type": "integer"},
        "cost_usd": {"type": "number", "minimum": 0, "description": "what the tokens cost \
            in US dollars at the model's price, cache reads and writes as billed"},
        "cost_note": {"type": "string", "description": "present instead of cost_usd when \
            the model has no price: why"}},
        "required": ["input_tokens", "output_tokens", "cache_read_tokens",
                     "cache_write_tokens", "tool_calls"]})
}

/// A record's `model_attempts` (SPEC §5.1).
fn model_attempts_schema() -> Value {
    json!({
        "type": "array",
        "description": "present when the latest run's model could not answer (rate \
            limited past the retries, out of quota, overloaded, unknown or retired) and \
            it fell back: each model left, in order, and why; model names the one asked \
            after them",
        "items": {
            "type": "object",
            "properties": {
                "model": {"type": "string"},
                "provider": {"type": "string"},
                "error": {
                    "type": "object",
                    "properties": {"code": {"type": "string"}, "message": {"type": "string"}},
                    "required": ["code", "message"]
                }
            },
            "required": ["model", "provider", "error"]
        }
    })
}

/// `wait_agent`'s `server_spend` (SPEC §5.1): the whole server's spend and caps.
fn server_spend_schema() -> Value {
    json!({"type": "object", "description": "what the whole server has spent over its life, \
        every agent together, and the caps its runner set (past a cap no agent makes \
        another model request, and spawns and resumes fail with budget_exceeded)",
        "properties": {
            "tokens": {"type": "integer", "minimum": 0},
            "cost_usd": {"type": "number", "minimum": 0},
            "unpriced_tokens": {"type": "integer", "minimum": 1, "description": "tokens of \
                models without a price, which cost_usd leaves out"},
            "max_tokens": {"type": "integer", "minimum": 1},
            "max_cost_usd": {"type": "number"}},
        "required": ["tokens", "cost_usd"]})
}

/// A record's `tools_used`.
fn tools_used_schema() -> Value {
    json!({
        "type": "array",
        "description": "every child tool the agent called over its life, with how \
            many calls and how many failed; a result that claims a search with no \
            search here did not search",
        "items": {
            "type": "object",
            "properties": {"tool": {"type": "string"},
                           "calls": {"type": "integer", "minimum": 0},
                           "errors": {"type": "integer", "minimum": 0}},
            "required": ["tool", "calls", "errors"]
        }
    })
}

/// A record's `files_changed`.
fn files_changed_schema() -> Value {
    json!({
        "type": "array",
        "description": "every file of the workspace the agent created or modified \
            over its life (with its edit and write tools), relative to the workspace, \
            with how many changes; review these before trusting the work",
        "items": {
            "type": "object",
            "properties": {"path": {"type": "string"},
                           "created": {"type": "boolean"},
                           "changes": {"type": "integer", "minimum": 1}},
            "required": ["path", "created", "changes"]
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_lines_keep_descriptions_up_to_the_cap_whole() {
        let whole = "w".repeat(AGENT_DESCRIPTION_CHARS);
        assert_eq!(agent_line("a", &whole, &[]), format!("- a: {whole}"));
        let longer = format!("{whole}é");
        assert_eq!(agent_line("a", &longer, &[]), format!("- a: {whole}…"));
        assert_eq!(agent_line("a", "two\n  lines", &[]), "- a: two lines");
        let marks = ["read-only here: no Edit".to_owned(), "needs K".to_owned()];
        assert_eq!(
            agent_line("a", "Fix.", &marks),
            "- a: Fix. (read-only here: no Edit) (needs K)"
        );
    }

    /// Every success shape opens with a required `summary` (SPEC §4.3), and the error shape
    /// stays `{"error": …}` (SPEC §4).
    #[test]
    fn the_output_schemas_open_with_summary() {
        let tools = [
            spawn_agent_tool(&[], false),
            send_input_tool(),
            wait_agent_tool("advice"),
        ];
        for tool in tools {
            let schema = Value::Object(tool.output_schema.unwrap().as_ref().clone());
            let (success, error) = (&schema["anyOf"][0], &schema["anyOf"][1]);
            let properties = success["properties"].as_object().unwrap();
            assert_eq!(
                properties.keys().next().unwrap(),
                "summary",
                "{}",
                tool.name
            );
            assert_eq!(properties["summary"]["type"], "string");
            assert_eq!(success["required"][0], "summary", "{}", tool.name);
            assert_eq!(error["required"], json!(["error"]));
        }
    }

    #[test]
    fn only_mcp_tasks_changes_the_instructions_and_spawn_agent_s_description() {
        assert_eq!(instructions(false), INSTRUCTIONS);
        assert_eq!(
            instructions(true),
            format!("{INSTRUCTIONS}\n{TASKS_INSTRUCTIONS}")
        );
        let (plain, tasks) = (spawn_agent_tool(&[], false), spawn_agent_tool(&[], true));
        let (plain, tasks) = (plain.description.unwrap(), tasks.description.unwrap());
        assert!(!plain.contains(TASKS_SPAWN_NOTE));
        assert_eq!(tasks.replacen(TASKS_SPAWN_NOTE, "", 1), plain);
    }

    /// The schemas clients see, pinned: a change to an argument struct shows here.
    #[test]
    fn the_input_schemas_are_pinned() {
        let schema = |s: Arc<JsonObject>| Value::Object(s.as_ref().clone());
        assert_eq!(
            schema(input_schema::<SpawnArgs>()),
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "minLength": 1, "description": "Which agent to start."},
                    "task": {"type": "string", "minLength": 1,
                             "description": "The task, self-contained: what to do, the context it needs, and what to return."}
                },
                "required": ["name", "task"],
                "additionalProperties": false
            })
        );
        assert_eq!(
            schema(input_schema::<SendInputArgs>()),
            json!({
                "type": "object",
                "properties": {
                    "target": {"type": "string", "minLength": 1, "description": "The agent_id."},
                    "message": {"type": "string", "minLength": 1,
                                "description": "What to tell the agent; with stop, why it is stopped (optional then)."},
                    "interrupt": {"type": "boolean", "default": false,
                                  "description": "Cancel the agent's current step first."},
                    "stop": {"type": "boolean", "default": false,
                             "description": "End the agent's run now, keeping its partial work; the agent stays resumable."}
                },
                "required": ["target"],
                "additionalProperties": false
            })
        );
        assert_eq!(
            schema(input_schema::<WaitArgs>()),
            json!({
                "type": "object",
                "properties": {
                    "targets": {"type": "array", "minItems": 1, "uniqueItems": true,
                                "items": {"type": "string", "minLength": 1},
                                "description": "The agent_ids to wait for."},
                    "timeout_ms": {"type": "integer", "minimum": 0, "maximum": 300000,
                                   "default": 30000, "description": "Longest wait, in milliseconds."},
                    "return_when": {"type": "string", "enum": ["all", "any"], "default": "all",
                                    "description": "Return when all targets have finished, or as soon as any one has."}
                },
                "required": ["targets"],
                "additionalProperties": false
            })
        );
        assert_eq!(
            field_names::<SendInputArgs>(),
            ["target", "message", "interrupt", "stop"]
        );
    }
}
