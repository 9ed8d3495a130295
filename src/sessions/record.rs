//! The JSON of a session record (SPEC §4.3): what `wait_agent` returns for each target and
//! what `mcp-agents run --json` prints. One shape for both, built here from a [`Snapshot`];
//! and the one human line per record that opens a `wait_agent` answer's text.

use std::time::Duration;

use serde_json::{Value, json};

use super::session::{Snapshot, Status, short_id};
use crate::error::AgentError;
use crate::limits::{WAIT_LINE_FILES_NAMED, WAIT_LINE_QUOTE_CHARS};

/// One line a person (or a model skimming) reads first (SPEC §4.3):
/// `reviewer f79152ba: running 20 s, Calling workspace.grep (3 tool calls so far)`,
/// `reviewer f79152ba: asks: Which of the two files should I fix?`,
/// `reviewer f79152ba: completed in 24.2 s: <the first 100 characters of the result>`,
/// `reviewer f79152ba: failed in 3.1 s, turn_limit: <the first 100 characters of why>`.
/// An agent that changed files names them, in parentheses so that a path is never read as
/// the start of the result: `fixer 41aa07c2: completed in 9.0 s (changed 1 file: calc.py):
/// Fixed.` A session whose model has a price says what it cost so far (SPEC §5.1):
/// `reviewer f79152ba: completed in 24.2 s ($0.0123): …`, `(3 tool calls so far; $0.0040)`.
pub fn summary_line(s: &Snapshot) -> String {
    let who = format!("{} {}", s.name, short_id(&s.agent_id));
    let secs = s.total_elapsed.as_secs_f64();
    let named = files_named(s);
    let changed = named
        .as_ref()
        .map(|c| format!(" ({c})"))
        .unwrap_or_default();
    match &s.status {
        // A question is what the parent must see first (SPEC §4.5): the whole of it, on one
        // line.
        Status::Running if let Some(question) = &s.question => {
            let text: Vec<&str> = question.text.split_whitespace().collect();
            format!("{who}: asks: {}", text.join(" "))
        }
        Status::Running => {
            let calls = match s.totals.tool_calls {
                0 => "no tool calls so far".to_owned(),
                1 => "1 tool call so far".to_owned(),
                n => format!("{n} tool calls so far"),
            };
            let doing = s
                .activity
                .as_ref()
                .map(|(activity, _)| format!(", {}", activity.summary))
                .unwrap_or_default();
            let changed = named.map(|c| format!("; {c}")).unwrap_or_default();
            let cost = s.totals.cost.map(|c| format!("; {c}")).unwrap_or_default();
            format!(
                "{who}: running {} s{doing} ({calls}{cost}{changed})",
                s.total_elapsed.as_secs()
            )
        }
        Status::Completed(answer) => {
            let how = if answer.refused { ", refused" } else { "" };
            let how = format!("{}{how}", cost_shown(s));
            match quote(&answer.text) {
                Some(text) => format!("{who}: completed in {secs:.1} s{how}{changed}: {text}"),
                None => format!("{who}: completed in {secs:.1} s{how}{changed}, with no text"),
            }
        }
        Status::Failed(failure) => {
            let error = &failure.error;
            let why = quote(&error.message).unwrap_or_default();
            let kept = if failure.partial_result.is_some() {
                " (its partial_result is kept)"
            } else {
                ""
            };
            format!(
                "{who}: failed in {secs:.1} s{}{changed}, {}: {why}{kept}",
                cost_shown(s),
                error.code
            )
        }
    }
}

/// `changed 1 file: calc.py`, `changed 5 files: a.py, b.py, c.py and 2 more`: the files the
/// session created or modified, the first [`WAIT_LINE_FILES_NAMED`] by name; `None` when it
/// changed none.
fn files_named(s: &Snapshot) -> Option<String> {
    let changed = changed_files(s)?;
    let names: Vec<&str> = s
        .files_changed
        .iter()
        .take(WAIT_LINE_FILES_NAMED)
        .map(|f| f.path.as_str())
        .collect();
    let rest = s.files_changed.len() - names.len();
    // Past the listed files only changes are counted, not files: "and more".
    let more = match (rest, s.unlisted_changes) {
        (0, 0) => String::new(),
        (n, 0) => format!(" and {n} more"),
        _ => " and more".to_owned(),
    };
    Some(format!("{changed}: {}{more}", names.join(", ")))
}

/// `changed 3 files` (the files created or modified, over the session's life), or `None`
/// when it changed none.
pub fn changed_files(s: &Snapshot) -> Option<String> {
    let listed = s.files_changed.len() as u64;
    match (listed, s.unlisted_changes) {
        (0, 0) => None,
        (1, 0) => Some("changed 1 file".to_owned()),
        (n, 0) => Some(format!("changed {n} files")),
        (n, _) => Some(format!("changed more than {n} files")),
    }
}

/// `text` on one line, its whitespace folded, cut at [`WAIT_LINE_QUOTE_CHARS`] characters
/// with "…"; `None` when it holds nothing but whitespace.
fn quote(text: &str) -> Option<String> {
    let mut words = text.split_whitespace();
    let first = words.next()?;
    let mut line = String::from(first);
    for word in words {
        line.push(' ');
        line.push_str(word);
        if line.chars().count() > WAIT_LINE_QUOTE_CHARS {
            break;
        }
    }
    if line.chars().count() > WAIT_LINE_QUOTE_CHARS {
        line = line.chars().take(WAIT_LINE_QUOTE_CHARS).collect();
        line.push('…');
    }
    Some(line)
}

/// Why a record has no `cost_usd` (SPEC §5.1): never a guess.
fn no_price_note(s: &Snapshot) -> String {
    format!(
        "no cost_usd: no price is known for the model `{}` (provider {}); the person who runs \
         the server can give one with --prices FILE (LiteLLM's \
         model_prices_and_context_window.json format)",
        s.model, s.provider
    )
}

/// ` ($0.0123)`: what a priced session cost so far, for its line; nothing without a price.
fn cost_shown(s: &Snapshot) -> String {
    s.totals
        .cost
        .map(|cost| format!(" ({cost})"))
        .unwrap_or_default()
}

/// `{"code", "message"}`: a refused call's and a failed agent's error alike.
pub fn error_json(error: &AgentError) -> Value {
    json!({"code": error.code.as_str(), "message": error.message})
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// The models the latest run left before `model` was asked, and why (SPEC §5.1); `None`
/// when it asked only its own.
fn model_attempts_json(s: &Snapshot) -> Option<Value> {
    (!s.model_attempts.is_empty()).then(|| {
        s.model_attempts
            .iter()
            .map(|a| json!({"model": a.model, "provider": s.provider, "error": error_json(&a.error)}))
            .collect()
    })
}

/// A record's `usage`: its tokens and tool calls, and what they cost or why no cost is
/// known (SPEC §5.1).
fn usage_json(s: &Snapshot) -> Value {
    let mut usage = json!({
        "input_tokens": s.totals.input_tokens,
        "output_tokens": s.totals.output_tokens,
        "cache_read_tokens": s.totals.cache_read_tokens,
        "cache_write_tokens": s.totals.cache_write_tokens,
        "tool_calls": s.totals.tool_calls,
    });
    match s.totals.cost {
        Some(cost) => usage["cost_usd"] = json!(cost.as_dollars()),
        None => usage["cost_note"] = json!(no_price_note(s)),
    }
    usage
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
    if let Some(attempts) = model_attempts_json(s) {
        value["model_attempts"] = attempts;
    }
    value["total_elapsed_ms"] = json!(millis(s.total_elapsed));
    value["turns"] = json!(s.totals.turns);
    value["usage"] = usage_json(s);
    value["tools_used"] = s
        .tools_used
        .iter()
        .map(|u| json!({"tool": u.tool, "calls": u.calls, "errors": u.errors}))
        .collect();
    value["files_changed"] = s
        .files_changed
        .iter()
        .map(|f| json!({"path": f.path, "created": f.created, "changes": f.changes}))
        .collect();
    if s.unlisted_changes > 0 {
        value["unlisted_changes"] = json!(s.unlisted_changes);
    }
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
    if let Some(question) = &s.question {
        value["question"] = json!(question.text);
        if !question.options.is_empty() {
            value["options"] = json!(question.options);
        }
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;
    use crate::run::{Activity, Answer, Failure};
    use crate::sessions::Totals;

    fn snapshot(status: Status, elapsed_ms: u64, tool_calls: u64) -> Snapshot {
        Snapshot {
            agent_id: "f79152ba0c1d4e2f8a9b0c1d2e3f4a5b".into(),
            name: "reviewer".into(),
            model: "m".into(),
            provider: "openai",
            status,
            total_elapsed: Duration::from_millis(elapsed_ms),
            totals: Totals {
                tool_calls,
                ..Totals::default()
            },
            tools_used: Vec::new(),
            files_changed: Vec::new(),
            unlisted_changes: 0,
            queued: 0,
            model_attempts: Vec::new(),
            activity: None,
            question: None,
            version: 1,
        }
    }

    #[test]
    fn a_running_agent_says_what_it_does_and_how_many_calls_it_made() {
        let mut running = snapshot(Status::Running, 20_400, 3);
        running.activity = Some((
            Activity::tool_call("workspace", "grep", Duration::from_secs(60)),
            Duration::from_secs(2),
        ));
        assert_eq!(
            summary_line(&running),
            "reviewer f79152ba: running 20 s, Calling workspace.grep (3 tool calls so far)"
        );
        running.totals.tool_calls = 1;
        assert!(summary_line(&running).ends_with("(1 tool call so far)"));
        running.totals.tool_calls = 0;
        running.activity = None;
        assert_eq!(
            summary_line(&running),
            "reviewer f79152ba: running 20 s (no tool calls so far)"
        );
    }

    #[test]
    fn an_agent_that_asks_shows_its_whole_question_on_one_line_and_in_its_record() {
        let mut asking = snapshot(Status::Running, 20_400, 3);
        asking.activity = Some((
            Activity::waiting_for_input(Duration::from_secs(600)),
            Duration::from_secs(2),
        ));
        let long = format!(
            "Which of these\n two files should I fix? {}",
            "y".repeat(150)
        );
        asking.question = Some(crate::sessions::Question {
            id: 1,
            text: long,
            options: vec!["a.py".into(), "b.py".into()],
        });
        assert_eq!(
            summary_line(&asking),
            format!(
                "reviewer f79152ba: asks: Which of these two files should I fix? {}",
                "y".repeat(150)
            )
        );
        let record = snapshot_json(&asking);
        assert_eq!(record["status"], "running");
        assert_eq!(record["activity"]["phase"], "waiting_for_input");
        assert_eq!(
            record["activity"]["summary"],
            "Waiting for the parent's answer"
        );
        assert!(
            record["question"]
                .as_str()
                .unwrap()
                .starts_with("Which of these\n")
        );
        assert_eq!(record["options"], json!(["a.py", "b.py"]));
        asking.question.as_mut().unwrap().options.clear();
        assert!(snapshot_json(&asking).get("options").is_none());
    }

    #[test]
    fn a_completed_agent_quotes_the_start_of_its_result_on_one_line() {
        let long = format!("Found   two\nproblems:\n\n{}", "x".repeat(200));
        let line = summary_line(&snapshot(
            Status::Completed(long.as_str().into()),
            24_230,
            0,
        ));
        let quoted = format!("Found two problems: {}…", "x".repeat(80));
        assert_eq!(
            line,
            format!("reviewer f79152ba: completed in 24.2 s: {quoted}")
        );
        assert_eq!(quoted.chars().count(), WAIT_LINE_QUOTE_CHARS + 1);
        let short = summary_line(&snapshot(Status::Completed("LGTM.".into()), 900, 0));
        assert_eq!(short, "reviewer f79152ba: completed in 0.9 s: LGTM.");
        let refused = Answer {
            text: "I can't help with that.".into(),
            refused: true,
            structured: None,
        };
        assert_eq!(
            summary_line(&snapshot(Status::Completed(refused), 1_000, 0)),
            "reviewer f79152ba: completed in 1.0 s, refused: I can't help with that."
        );
        assert_eq!(
            summary_line(&snapshot(Status::Completed(" \n".into()), 1_000, 0)),
            "reviewer f79152ba: completed in 1.0 s, with no text"
        );
    }

    #[test]
    fn the_line_names_the_files_changed() {
        use super::super::session::FileChanged;
        let file = |path: &str| FileChanged {
            path: path.into(),
            created: false,
            changes: 2,
        };
        let mut done = snapshot(Status::Completed("Fixed.".into()), 2_000, 4);
        done.files_changed = vec![file("src/a.rs"), file("src/b.rs"), file("tests/c.rs")];
        assert_eq!(
            summary_line(&done),
            "reviewer f79152ba: completed in 2.0 s (changed 3 files: src/a.rs, src/b.rs, \
             tests/c.rs): Fixed."
        );
        done.files_changed.push(file("tests/d.rs"));
        done.files_changed.push(file("tests/e.rs"));
        assert!(
            summary_line(&done)
                .contains("(changed 5 files: src/a.rs, src/b.rs, tests/c.rs and 2 more)"),
            "the first three by name, the rest counted"
        );
        done.files_changed.truncate(1);
        let mut failed = done.clone();
        failed.status = Status::Failed(AgentError::new(ErrorCode::TurnLimit, "needed more").into());
        assert_eq!(
            summary_line(&failed),
            "reviewer f79152ba: failed in 2.0 s (changed 1 file: src/a.rs), turn_limit: needed more"
        );
        let mut running = done.clone();
        running.status = Status::Running;
        running.files_changed = vec![file("a"), file("b")];
        assert_eq!(
            summary_line(&running),
            "reviewer f79152ba: running 2 s (4 tool calls so far; changed 2 files: a, b)"
        );
        running.unlisted_changes = 5;
        assert_eq!(
            summary_line(&running),
            "reviewer f79152ba: running 2 s (4 tool calls so far; changed more than 2 files: \
             a, b and more)"
        );
        let record = snapshot_json(&done);
        assert_eq!(
            record["files_changed"],
            json!([{"path": "src/a.rs", "created": false, "changes": 2}])
        );
        assert!(record.get("unlisted_changes").is_none());
    }

    #[test]
    fn a_failed_agent_names_its_code_and_why_and_whether_work_was_kept() {
        let failure = Failure::with_partial(
            AgentError::new(ErrorCode::Cancelled, "stopped by the parent: wrong file"),
            "Half way there.",
            &crate::redact::Secrets::default(),
        );
        assert_eq!(
            summary_line(&snapshot(Status::Failed(failure), 3_140, 1)),
            "reviewer f79152ba: failed in 3.1 s, cancelled: stopped by the parent: wrong file \
             (its partial_result is kept)"
        );
        let bare = Failure::from(AgentError::new(ErrorCode::TurnLimit, "needed more than 3"));
        assert_eq!(
            summary_line(&snapshot(Status::Failed(bare), 3_140, 1)),
            "reviewer f79152ba: failed in 3.1 s, turn_limit: needed more than 3"
        );
    }
}
