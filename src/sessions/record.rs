//! The JSON of a session record (SPEC §4.3): what `wait_agent` returns for each target and
//! what `mcp-agents run --json` prints. One shape for both, built here from a [`Snapshot`].

use std::time::Duration;

use serde_json::{Value, json};

use super::session::{Snapshot, Status};
use crate::error::AgentError;

/// `{"code", "message"}`: a refused call's and a failed agent's error alike.
pub fn error_json(error: &AgentError) -> Value {
    json!({"code": error.code.as_str(), "message": error.message})
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

pub fn snapshot_json(s: &Snapshot) -> Value {
    let mut value = json!({
        "agent_id": s.agent_id,
        "name": s.name,
        "status": s.status.as_str(),
    });
    match &s.status {
        Status::Completed(answer) => {
            value["result"] = json!(answer.text);
            if answer.refused {
                value["refused"] = json!(true);
            }
            if let Some(structured) = &answer.structured {
                value["structured_result"] = structured.clone();
            }
        }
        Status::Failed(failure) => {
            value["error"] = error_json(&failure.error);
            if let Some(partial) = &failure.partial_result {
                value["partial_result"] = json!(partial);
            }
        }
        Status::Running => {}
    }
    value["model"] = json!(s.model);
    value["provider"] = json!(s.provider);
    value["total_elapsed_ms"] = json!(millis(s.total_elapsed));
    value["turns"] = json!(s.totals.turns);
    value["usage"] = json!({
        "input_tokens": s.totals.input_tokens,
        "output_tokens": s.totals.output_tokens,
        "cache_read_tokens": s.totals.cache_read_tokens,
        "cache_write_tokens": s.totals.cache_write_tokens,
        "tool_calls": s.totals.tool_calls,
    });
    value["tools_used"] = s
        .tools_used
        .iter()
        .map(|u| json!({"tool": u.tool, "calls": u.calls, "errors": u.errors}))
        .collect();
    if s.queued > 0 {
        value["queued"] = json!(s.queued);
    }
    if let Some((activity, elapsed)) = &s.activity {
        let mut a = json!({
            "phase": activity.phase.as_str(),
            "summary": activity.summary,
        });
        if let Some(tool) = &activity.tool {
            a["tool"] = json!(tool);
        }
        if let Some(target) = &activity.target {
            a["target"] = json!(target);
        }
        a["activity_elapsed_ms"] = json!(millis(*elapsed));
        if let Some(timeout) = activity.timeout {
            a["operation_timeout_remaining_ms"] = json!(millis(timeout.saturating_sub(*elapsed)));
        }
        value["activity"] = a;
    }
    value
}
