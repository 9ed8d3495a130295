//! The MCP tasks extension for `spawn_agent` (SPEC §4.4; SEP-2663, `--mcp-tasks`): a
//! client that declares the extension on its `spawn_agent` call gets a task instead of the
//! §4.1 answer, and follows it with `tasks/get` and `tasks/cancel`.
//!
//! The task is the agent's first run, and its id is the agent_id: everything a task says
//! is read from the session registry when asked ([`SessionManager::first_run`]), so there is
//! no second registry of tasks that could disagree with it. `rmcp`'s `TaskManager` is not
//! used: it runs a future per task under ids of its own making, keeps its own states and
//! discards them on its own clock.
//!
//! | the agent's first run | the task |
//! | --- | --- |
//! | running | `working`, `statusMessage` its human line |
//! | ended, stopped (`cancelled`, by `tasks/cancel`, `send_input` `stop` or a person) | `cancelled` |
//! | ended otherwise | `completed`, `result` what `wait_agent` on it returns (`isError` when it failed) |
//!
//! A question the agent asks its parent (SPEC §4.5) is one more row: `input_required`, read
//! in [`payload`] from the record's pending question, and answered by `tasks/update` in
//! [`update`].

use std::time::SystemTime;

use chrono::{DateTime, SecondsFormat, Utc};
use rmcp::ErrorData as McpError;
use rmcp::model::{
    CreateTaskResult, DetailedTask, ElicitRequest, ElicitRequestParams, ElicitResult,
    ElicitationAction, ElicitationSchema, EnumSchema, GetTaskResult, InputRequest, InputRequests,
    JsonObject, PrimitiveSchemaDefinition, StringSchema, Task, TaskPayload, TaskStatus,
    UpdateTaskParams,
};
use serde_json::Value;

use super::call;
use crate::error::{AgentError, ErrorCode};
use crate::limits::TASK_POLL_INTERVAL;
use crate::sessions::{
    FirstRun, ParentAnswer, Question, SessionManager, Snapshot, Status, summary_line,
};

/// Why a run stopped by `tasks/cancel` stopped, as its record says (`stopped by the parent:
/// …`).
const CANCELLED_BY_CLIENT: &str = "its client cancelled the task (tasks/cancel)";

/// How a task's result is shaped for the connection that asks: `resultType` is a 2026-07-28
/// field, and a `wait_agent` answer to an older client goes without it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Era {
    Modern,
    Legacy,
}

/// The task a `spawn_agent` call is answered with: the new agent, `working`.
pub(super) fn created(agent_id: &str, first: &FirstRun) -> CreateTaskResult {
    CreateTaskResult::new(task(agent_id, first, TaskStatus::Working))
}

/// `tasks/get`: the agent's first run, as the task's current state.
pub(super) fn get(manager: &SessionManager, id: &str, era: Era) -> Result<GetTaskResult, McpError> {
    let first = manager.first_run(id).map_err(|e| no_task(id, &e))?;
    let payload = payload(&first.record, era);
    let task = task(id, &first, payload.status());
    Ok(GetTaskResult::new(DetailedTask::new(task, payload)))
}

/// `tasks/cancel`: `send_input` with `stop` on the first run (SPEC §4.4), answered once the
/// run has stopped (under a second), so the next `tasks/get` says `cancelled`. A task
/// already ended, or whose first run has ended and a later one runs, is left as it is.
pub(super) async fn cancel(manager: &SessionManager, id: &str) -> Result<(), McpError> {
    manager
        .stop_first_run(id, CANCELLED_BY_CLIENT)
        .await
        .map_err(|e| match e.code {
            ErrorCode::UnknownAgent => no_task(id, &e),
            _ => McpError::internal_error(e.message, None),
        })
}

/// `tasks/update`: the person's answer to the question the task asked (SPEC §4.4, §4.5).
/// `accept` with the field's value is the answer; `decline` or `cancel` tell the agent to
/// decide for itself. The answer goes to [`SessionManager::answer_question`], the same door
/// `send_input` uses, so the first answer by either path wins and a second is refused
/// (`-32602`), as is a response to anything but the question pending now.
pub(super) fn update(manager: &SessionManager, params: &UpdateTaskParams) -> Result<(), McpError> {
    let id = &params.task_id;
    let first = manager.first_run(id).map_err(|e| no_task(id, &e))?;
    let pending = first
        .record
        .question
        .as_ref()
        .filter(|_| matches!(first.record.status, Status::Running));
    let Some(question) = pending else {
        return Err(McpError::invalid_params(
            format!(
                "task {id} asks nothing now ({}); there is no question to answer",
                summary_line(&first.record)
            ),
            None,
        ));
    };
    let key = request_key(question.id);
    let response = single_response(params, &key)?;
    let answer = parent_answer(response, &key)?;
    manager
        .answer_question(id, question.id, answer)
        .map(|_| ())
        .map_err(|e| McpError::invalid_params(e.message, None))
}

/// The one response `params` holds, which must be to `key` (the pending question's request).
fn single_response<'a>(params: &'a UpdateTaskParams, key: &str) -> Result<&'a Value, McpError> {
    let mut responses = params.input_responses.iter();
    match (responses.next(), responses.next()) {
        (Some((k, response)), None) if k == key => Ok(response),
        (Some((k, _)), None) => Err(McpError::invalid_params(
            format!(
                "inputResponses answers {k}, which is not pending; the pending request is {key}"
            ),
            None,
        )),
        _ => Err(McpError::invalid_params(
            format!(
                "inputResponses must hold exactly one response, to {key}; it holds {}",
                params.input_responses.len()
            ),
            None,
        )),
    }
}

/// An elicitation result as the agent's answer: `accept` with a nonempty `answer` string is
/// the answer; `decline` and `cancel` are [`ParentAnswer::Declined`].
fn parent_answer(response: &Value, key: &str) -> Result<ParentAnswer, McpError> {
    let result: ElicitResult = serde_json::from_value(response.clone()).map_err(|e| {
        McpError::invalid_params(format!("{key} is not an elicitation result: {e}"), None)
    })?;
    match result.action {
        ElicitationAction::Accept => {
            let text = result
                .content
                .as_ref()
                .and_then(|content| content.get(ANSWER_FIELD))
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|text| !text.is_empty());
            text.map(|text| ParentAnswer::Text(text.to_owned()))
                .ok_or_else(|| {
                    McpError::invalid_params(
                        format!(
                            "{key} accepted without an answer: content.{ANSWER_FIELD} must be a \
                             nonempty string"
                        ),
                        None,
                    )
                })
        }
        _ => Ok(ParentAnswer::Declined),
    }
}

/// The task's fields for `first` (`taskId` the agent_id), in `status`.
fn task(id: &str, first: &FirstRun, status: TaskStatus) -> Task {
    let mut task = Task::new(id, status, iso(first.created), iso(first.updated))
        .with_status_message(summary_line(&first.record))
        .with_poll_interval_ms(u64::try_from(TASK_POLL_INTERVAL.as_millis()).unwrap_or(1000));
    task.ttl_ms = ttl(first);
    task
}

/// `ttlMs` (docs/decisions.md, "How long a task is kept"): a running agent is never
/// forgotten, so no limit (`null`) while the first run runs; once it has ended, the agent is
/// kept only while it is among the 64 most recently used (SPEC §5), which promises no time
/// at all: from its end on it may go at any moment, and `ttlMs` says so (creation to end).
fn ttl(first: &FirstRun) -> Option<u64> {
    first.record.status.is_terminal().then(|| {
        let lived = first.updated.duration_since(first.created);
        u64::try_from(lived.unwrap_or_default().as_millis()).unwrap_or(u64::MAX)
    })
}

/// What the task holds besides its fields.
fn payload(record: &Snapshot, era: Era) -> TaskPayload {
    match &record.status {
        Status::Running => match &record.question {
            Some(question) => TaskPayload::InputRequired {
                input_requests: InputRequests::from([(
                    request_key(question.id),
                    InputRequest::Elicitation(elicitation(question)),
                )]),
            },
            None => TaskPayload::Working,
        },
        Status::Failed(failure) if failure.error.code == ErrorCode::Cancelled => {
            TaskPayload::Cancelled
        }
        Status::Completed(_) | Status::Failed(_) => TaskPayload::Completed {
            result: wait_answer(record, era),
        },
    }
}

/// The one field of the form a question is asked with.
const ANSWER_FIELD: &str = "answer";

/// The `inputRequests` key of question `id`: new for every question the session asks, so
/// that a response meant for an earlier one is never taken for the current one.
fn request_key(id: u64) -> String {
    format!("question-{id}")
}

/// The elicitation a question is asked with (SPEC §4.4): a form with one required string
/// field, an `enum` of the agent's options when it gave some, the question as its message.
fn elicitation(question: &Question) -> ElicitRequest {
    let field = if question.options.is_empty() {
        PrimitiveSchemaDefinition::String(StringSchema::new().description("your answer"))
    } else {
        PrimitiveSchemaDefinition::Enum(EnumSchema::builder(question.options.clone()).build())
    };
    // The builder refuses only a required field it has no property for; this one has.
    let schema = ElicitationSchema::builder()
        .required_property(ANSWER_FIELD, field)
        .build()
        .unwrap_or_else(|_| ElicitationSchema::new(Default::default()));
    ElicitRequest::new(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: question.text.clone(),
        requested_schema: schema,
    })
}

/// The `CallToolResult` `wait_agent` returns for this one agent, as a JSON object; a failed
/// run's with `isError: true` (SPEC §4.4).
fn wait_answer(record: &Snapshot, era: Era) -> JsonObject {
    let mut result = call::wait_result(false, std::slice::from_ref(record), None, None);
    if matches!(record.status, Status::Failed(_)) {
        result.is_error = Some(true);
    }
    if era == Era::Legacy {
        result.result_type = None;
    }
    match serde_json::to_value(result) {
        Ok(Value::Object(object)) => object,
        // A `CallToolResult` is always an object.
        _ => JsonObject::new(),
    }
}

/// `-32602` for an id that names no task (SPEC §4.4, SEP-2663): never spawned, or forgotten.
fn no_task(id: &str, error: &AgentError) -> McpError {
    McpError::invalid_params(format!("no task {id}: {}", error.message), None)
}

/// ISO 8601 in UTC, to the millisecond.
fn iso(at: SystemTime) -> String {
    DateTime::<Utc>::from(at).to_rfc3339_opts(SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::run::{Answer, Failure};
    use crate::sessions::Totals;

    fn first_run(status: Status) -> FirstRun {
        let created = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        FirstRun {
            record: Snapshot {
                agent_id: "f79152ba0c1d4e2f8a9b0c1d2e3f4a5b".into(),
                name: "fixer".into(),
                model: "m".into(),
                provider: "openai",
                status,
                total_elapsed: Duration::from_millis(2_500),
                totals: Totals::default(),
                tools_used: Vec::new(),
                files_changed: Vec::new(),
                unlisted_changes: 0,
                queued: 0,
                model_attempts: Vec::new(),
                question: None,
                activity: None,
                version: 1,
            },
            created,
            updated: created + Duration::from_millis(2_500),
        }
    }

    fn detailed(first: &FirstRun) -> Value {
        let payload = payload(&first.record, Era::Modern);
        let task = task(&first.record.agent_id, first, payload.status());
        serde_json::to_value(DetailedTask::new(task, payload)).unwrap()
    }

    #[test]
    fn a_running_first_run_is_a_working_task_without_a_time_limit() {
        let first = first_run(Status::Running);
        let task = detailed(&first);
        assert_eq!(task["taskId"], "f79152ba0c1d4e2f8a9b0c1d2e3f4a5b");
        assert_eq!(task["status"], "working");
        assert_eq!(task["statusMessage"], summary_line(&first.record));
        assert_eq!(task["createdAt"], "2027-01-15T08:00:00.000Z");
        assert_eq!(task["lastUpdatedAt"], "2027-01-15T08:00:02.500Z");
        assert_eq!(
            task["ttlMs"],
            Value::Null,
            "a running agent is never forgotten"
        );
        assert_eq!(task["pollIntervalMs"], 1000);
        assert!(task.get("result").is_none());
    }

    #[test]
    fn an_ended_first_run_completes_the_task_with_the_wait_answer() {
        let done = first_run(Status::Completed(Answer::from("Fixed.")));
        let task = detailed(&done);
        assert_eq!(task["status"], "completed");
        let wait = call::wait_result(false, std::slice::from_ref(&done.record), None, None);
        assert_eq!(task["result"], serde_json::to_value(&wait).unwrap());
        assert_eq!(task["result"]["isError"], false);
        assert_eq!(
            task["ttlMs"], 2500,
            "from its end on, nothing is promised: kept while among the most recently used"
        );

        let failure = Failure {
            error: AgentError::new(ErrorCode::TurnLimit, "needed more than 5 turns"),
            partial_result: Some("Half way.".into()),
        };
        let failed = detailed(&first_run(Status::Failed(failure)));
        assert_eq!(
            failed["status"], "completed",
            "a failed run is a tool error"
        );
        assert_eq!(failed["result"]["isError"], true);
        let record = &failed["result"]["structuredContent"]["agents"][0];
        assert_eq!(record["error"]["code"], "turn_limit");
        assert_eq!(record["partial_result"], "Half way.");
    }

    #[test]
    fn a_stopped_first_run_is_a_cancelled_task_and_a_legacy_result_has_no_result_type() {
        let stopped = Failure {
            error: AgentError::new(ErrorCode::Cancelled, "stopped by the parent"),
            partial_result: Some("so far".into()),
        };
        let task = detailed(&first_run(Status::Failed(stopped)));
        assert_eq!(task["status"], "cancelled");
        assert!(
            task["statusMessage"]
                .as_str()
                .unwrap()
                .contains("partial_result is kept")
        );
        assert!(task.get("result").is_none());

        let done = first_run(Status::Completed(Answer::from("Done.")));
        let modern = wait_answer(&done.record, Era::Modern);
        assert_eq!(modern["resultType"], "complete");
        let legacy = wait_answer(&done.record, Era::Legacy);
        assert!(
            legacy.get("resultType").is_none(),
            "as wait_agent answers an older client"
        );
    }
}
