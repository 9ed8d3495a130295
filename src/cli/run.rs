//! Running one subagent from a terminal (`mcp-agents run` and `mcp-agents demo`): the same
//! session manager the server uses, live activity on stderr, the result on stdout.
//!
//! On a terminal the activity is one status line redrawn in place (`status_line`: what the
//! agent is doing, then the time spent on it); otherwise each transition is one plain line,
//! so logs and CI output stay readable. A question the agent asks is put to the person
//! (`question`).

use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::exit::{EXIT_FAILED, EXIT_INTERRUPTED};
use super::question::ask_the_person;
use super::readiness::{self, Need};
use super::status_line::StatusLine;
use super::terminal::{fit, stderr_columns};
use crate::definition::{Catalog, Effect};
use crate::error::{AgentError, ErrorCode};
use crate::limits::{
    SERVER_SHUTDOWN_BOUND, TERMINAL_FILES_SHOWN, TERMINAL_TASK_BYTES, TERMINAL_WAIT,
};
use crate::providers::{Audience, Credential};
use crate::run::Phase;
use crate::sessions::SessionManager;
use crate::sessions::snapshot_json;
use crate::sessions::{Progress, ReturnWhen, Step, WaitEvent};
use crate::sessions::{Snapshot, Status, changed_files, short_id};

/// `TASK`, or with `-` the task read from standard input (SPEC §2).
pub(super) fn read_task(task: String) -> Result<String, String> {
    if task != "-" {
        return Ok(task);
    }
    use std::io::Read;
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        eprintln!("mcp-agents: reading the task from standard input; end it with Ctrl-D");
    }
    let mut bytes = Vec::new();
    let limit = u64::try_from(TERMINAL_TASK_BYTES).unwrap_or(u64::MAX);
    stdin
        .lock()
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read the task from standard input: {e}"))?;
    if bytes.len() > TERMINAL_TASK_BYTES {
        return Err(format!(
            "the task on standard input is larger than {} MiB; give the agent a narrower task \
             and let it read files through its tools",
            TERMINAL_TASK_BYTES / (1024 * 1024)
        ));
    }
    String::from_utf8(bytes).map_err(|_| "the task on standard input is not UTF-8".to_owned())
}

/// Before `run` spawns `name`: the checks spawning makes, worded for a terminal (what to do
/// in this shell, not in an MCP client), with "did you mean" for a mistyped name and the
/// reason when the file defining that name was rejected. `env` is the process environment.
pub(super) fn preflight(
    catalog: &Catalog,
    name: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(), AgentError> {
    let Some(definition) = catalog.get(name) else {
        return Err(unknown_agent(catalog, name));
    };
    for skill in &definition.skills {
        if catalog.skills().get(skill).is_none() {
            let guess = catalog
                .skills()
                .closest(skill)
                .map(|s| format!("; did you mean `{s}`?"))
                .unwrap_or_default();
            return Err(AgentError::new(
                ErrorCode::SkillNotFound,
                format!(
                    "agent `{name}` ({}) preloads the skill `{skill}`, which no skill root \
                     defines ({}){guess}; add the skill or remove it from `skills`, then run \
                     the command again",
                    definition.source.path.display(),
                    Catalog::skill_roots().collect::<Vec<_>>().join(", ")
                ),
            ));
        }
    }
    Credential::resolve(&definition.provider, env)
        .map(drop)
        .map_err(|missing| missing.to_error(Audience::Terminal))?;
    // A child server's `${VAR}` that is not set would fail the run's startup, after the
    // spawn; said here, worded for this shell.
    let unset_child_variable = readiness::needs(
        definition,
        catalog.workspace(),
        &readiness::Checks::env(env),
    )
    .into_iter()
    .find_map(|need| match need {
        Need::Variable { name, used_by, .. } if used_by.starts_with("mcp_servers.") => {
            Some((name, used_by))
        }
        _ => None,
    });
    if let Some((var, used_by)) = unset_child_variable {
        return Err(AgentError::new(
            ErrorCode::ChildMcpStartupError,
            format!(
                "agent `{name}` ({}) needs the environment variable {var} ({used_by}), which \
                 is not set; set it in this shell (export {var}=…) and run the command again",
                definition.source.path.display()
            ),
        ));
    }
    Ok(())
}

/// `unknown_agent` for `run`: the file that defines the name when it was rejected, and why;
/// else the name it is probably a slip of.
fn unknown_agent(catalog: &Catalog, name: &str) -> AgentError {
    let message = match catalog.rejection_of(name) {
        Some(rejected) => rejected,
        None => {
            let names = || catalog.agents().iter().map(|a| a.name.as_str());
            let mut message = format!("there is no agent named `{name}`");
            if let Some(guess) = crate::definition::closest(name, names()) {
                message.push_str(&format!("; did you mean `{guess}`?"));
            }
            if catalog.agents().is_empty() {
                message.push_str("; this workspace has no usable agents");
            } else {
                let all: Vec<&str> = names().collect();
                message.push_str(&format!(" (the agents are: {})", all.join(", ")));
            }
            let rejected = catalog
                .warnings()
                .iter()
                .filter(|w| w.effect == Effect::Rejected)
                .count();
            if rejected > 0 {
                message.push_str(&format!(
                    "; {rejected} definition file{} rejected (`mcp-agents check` says why)",
                    if rejected == 1 { " was" } else { "s were" }
                ));
            }
            message
        }
    };
    AgentError::new(ErrorCode::UnknownAgent, message)
}

/// A refusal before any run: `error: CODE: message` on stderr, and with `--json` the shape of
/// a refused tool call on stdout, so scripts read one place.
pub(super) fn report_refusal(e: &AgentError, json: bool) -> ExitCode {
    eprintln!("error: {}: {}", e.code, e.message);
    if json {
        println!(
            "{}",
            serde_json::json!({"error": {"code": e.code.as_str(), "message": e.message}})
        );
    }
    ExitCode::from(EXIT_FAILED)
}

/// Spawns `name` on `task`, shows its activity until it ends, prints the outcome.
pub(super) async fn run_agent(
    manager: Arc<SessionManager>,
    name: &str,
    task: &str,
    json: bool,
    cancel: CancellationToken,
) -> ExitCode {
    let accepted = match manager.spawn(name, task) {
        Ok(accepted) => accepted,
        Err(e) => return report_refusal(&e, json),
    };
    let model = manager
        .catalog()
        .get(&accepted.name)
        .map(|d| d.model.id.clone())
        .unwrap_or_default();
    let mut display = Display::new(std::io::stderr().is_terminal(), model);
    display.started(&accepted.name, &accepted.agent_id);
    let outcome = follow(&manager, &accepted.agent_id, &mut display, &cancel).await;
    display.clear();
    let code = match outcome {
        Some(snapshot) => report(&snapshot, json),
        // Ctrl-C stops the agent as a parent's `stop` does (SPEC §4.2): its work so far is
        // printed as a failed run's is.
        None => match manager.stop(&accepted.agent_id, Some(CTRL_C_REASON)).await {
            Ok(mut snapshot) => {
                interrupted_from_terminal(&mut snapshot);
                report(&snapshot, json);
                eprintln!("mcp-agents: interrupted; the agent and its MCP servers were stopped");
                ExitCode::from(EXIT_INTERRUPTED)
            }
            Err(e) => {
                eprintln!("error: {}: {}", e.code, e.message);
                ExitCode::from(EXIT_INTERRUPTED)
            }
        },
    };
    manager.shutdown(SERVER_SHUTDOWN_BOUND).await;
    code
}

/// Why a run ended by Ctrl-C was stopped, as its error message says.
const CTRL_C_REASON: &str = "interrupted from the terminal (Ctrl-C)";

/// A run stopped with Ctrl-C, as the person who pressed it reads it (issue 39): no parent
/// stopped it, and a run stopped before it wrote any text says it has no partial result.
fn interrupted_from_terminal(snapshot: &mut Snapshot) {
    if let Status::Failed(failure) = &mut snapshot.status
        && failure.error.code == ErrorCode::Cancelled
    {
        failure.error.message = match failure.partial_result {
            Some(_) => CTRL_C_REASON.to_owned(),
            None => format!("{CTRL_C_REASON}; no partial result"),
        };
    }
}

/// Shows `id`'s activity until it is terminal (`Some`) or `cancel` fires (`None`).
async fn follow(
    manager: &SessionManager,
    id: &str,
    display: &mut Display,
    cancel: &CancellationToken,
) -> Option<Snapshot> {
    let ids = [id.to_owned()];
    let mut ticker = tokio::time::interval(REDRAW_INTERVAL);
    // The last question put to the person: a wait returns only on a later one.
    let mut handled = 0;
    loop {
        // Each wait starts by reporting the current activity; the display skips what it
        // has shown already.
        let waiter = manager.wait(&ids, TERMINAL_WAIT, ReturnWhen::All).ok()?;
        let mut waiter = waiter.handled(handled);
        loop {
            tokio::select! {
                () = cancel.cancelled() => return None,
                _ = ticker.tick(), if display.is_live() => display.redraw(&manager.snapshot(id).ok()?),
                event = waiter.next() => match event {
                    WaitEvent::Progress(steps) => {
                        for step in &steps {
                            display.transition(step);
                        }
                        if display.is_live() {
                            display.redraw(&manager.snapshot(id).ok()?);
                        }
                    }
                    WaitEvent::Finished { timed_out: false, mut agents } => {
                        let agent = agents.pop()?;
                        let Some(question) = agent.question.clone() else { return Some(agent) };
                        // The agent asked (SPEC §4.5): the person at the terminal answers.
                        display.clear();
                        ask_the_person(manager, &agent, &question, cancel).await?;
                        handled = question.id;
                        break;
                    }
                    // The wait's own bound passed; the agent runs on, so wait again.
                    WaitEvent::Finished { timed_out: true, .. } => break,
                },
            }
        }
    }
}

fn report(snapshot: &Snapshot, json: bool) -> ExitCode {
    if json {
        println!("{:#}", snapshot_json(snapshot));
    }
    // On a terminal, lines are wrapped at spaces: the terminal would break words.
    let width = stderr_columns();
    let say = |line: &str| eprintln!("{}", fit(line, width));
    // What it changed, whether it completed or not: the person reviews it either way.
    let files = files_line(snapshot);
    match &snapshot.status {
        Status::Completed(answer) => {
            if !json {
                println!("{}", answer.text);
            }
            if answer.refused {
                say(&format!(
                    "mcp-agents: {} declined the task (refused)",
                    snapshot.name
                ));
            }
            say(&completed_line(snapshot));
            files.iter().for_each(|line| say(line));
            ExitCode::SUCCESS
        }
        Status::Failed(failure) => {
            let e = &failure.error;
            if let Some(partial) = failure.partial_result.as_deref().filter(|_| !json) {
                // The work done is not lost: the last text goes where a result would.
                println!("{partial}");
                say("mcp-agents: the text above is the agent's partial result");
            }
            files.iter().for_each(|line| say(line));
            say(&format!("error: {}: {}", e.code, e.message));
            ExitCode::from(EXIT_FAILED)
        }
        Status::Running => ExitCode::from(EXIT_FAILED),
    }
}

/// The summary of a completed run on stderr; the cache reads show whether prompt caching
/// paid (SPEC §6.1), when the provider reported any, and the cost what it came to, when the
/// model has a price (SPEC §5.1).
fn completed_line(snapshot: &Snapshot) -> String {
    let t = &snapshot.totals;
    let cached = match t.cache_read_tokens {
        0 => String::new(),
        read => format!(" ({read} read from the prompt cache)"),
    };
    let cost = t.cost.map(|c| format!(", {c}")).unwrap_or_default();
    format!(
        "mcp-agents: {} completed in {:.1} s: {}, {}, {} input tokens{cached} and {} output \
         tokens{cost}",
        snapshot.name,
        snapshot.total_elapsed.as_secs_f64(),
        count(u64::from(t.turns), "turn"),
        count(t.tool_calls, "tool call"),
        t.input_tokens,
        t.output_tokens
    )
}

/// The files the agent created or modified, on stderr after the summary (SPEC §4.3
/// `files_changed`): `mcp-agents: fixer changed 2 files: src/a.rs (created), src/b.rs (3
/// changes)`; the first [`TERMINAL_FILES_SHOWN`] by name, the rest counted.
fn files_line(snapshot: &Snapshot) -> Option<String> {
    let changed = changed_files(snapshot)?;
    let mut named: Vec<String> = snapshot
        .files_changed
        .iter()
        .take(TERMINAL_FILES_SHOWN)
        .map(|f| match (f.created, f.changes) {
            (true, 1) => format!("{} (created)", f.path),
            (true, n) => format!("{} (created, {n} changes)", f.path),
            (false, 1) => f.path.clone(),
            (false, n) => format!("{} ({n} changes)", f.path),
        })
        .collect();
    let rest = snapshot
        .files_changed
        .len()
        .saturating_sub(TERMINAL_FILES_SHOWN);
    if rest > 0 {
        named.push(format!("and {rest} more (--json lists them all)"));
    }
    Some(format!(
        "mcp-agents: {} {changed}: {}",
        snapshot.name,
        named.join(", ")
    ))
}

fn count(n: u64, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// How often the live status line is redrawn (its spinner and elapsed time move).
const REDRAW_INTERVAL: Duration = Duration::from_millis(120);

/// The activity display on stderr: the live status line on a terminal, else one plain
/// line per transition.
struct Display {
    live: Option<StatusLine>,
    /// The model id, which the live line shortens first when it does not fit.
    model: String,
    /// The last transition handled.
    shown: u64,
    /// On the live line: the tool calls running, and when they began, until the next
    /// transition says how they ended.
    calling: Option<(Vec<String>, Duration)>,
}

impl Display {
    fn new(terminal: bool, model: String) -> Self {
        Display {
            live: if terminal { StatusLine::start() } else { None },
            model,
            shown: 0,
            calling: None,
        }
    }

    fn is_live(&self) -> bool {
        self.live.is_some()
    }

    /// The agent was spawned (a plain line; on a terminal the status line follows).
    fn started(&mut self, name: &str, id: &str) {
        if !self.is_live() {
            eprintln!("[{name} {} +0.0s] spawned", short_id(id));
        }
    }

    /// A transition, each once: one plain line when not live; on the live line (which the
    /// caller redraws), the tool calls it ends are kept as lines above it.
    fn transition(&mut self, progress: &Progress) {
        let Step::Activity { seq, activity, at } = &progress.step else {
            return;
        };
        if *seq <= self.shown {
            return;
        }
        self.shown = *seq;
        let Some(line) = &self.live else {
            eprintln!(
                "[{} {} +{:.1}s] {} · {}",
                progress.name,
                short_id(&progress.agent_id),
                at.as_secs_f64(),
                activity.phase.as_str(),
                activity.summary
            );
            return;
        };
        // The loop asks the model again once every call of a round has its answer; any
        // other next step (closing the servers) means the round was cut short.
        if let Some((calls, since)) = self.calling.take()
            && activity.phase == Phase::ProviderRequest
        {
            for text in finished_calls(&calls, at.saturating_sub(since)) {
                line.println(&text);
            }
        }
        if activity.phase == Phase::ToolCall {
            self.calling = Some((activity.calls.clone(), *at));
        }
    }

    /// Redraws the live line: the agent and what it is doing, then how long for.
    fn redraw(&mut self, snapshot: &Snapshot) {
        let (Some(line), Some((activity, elapsed))) = (&self.live, &snapshot.activity) else {
            return;
        };
        let text = format!("{} · {}", snapshot.name, activity.summary);
        line.show(&text, &self.model, *elapsed);
    }

    fn clear(&mut self) {
        if let Some(line) = self.live.take() {
            line.finish();
        }
    }
}

/// The lines a finished round of tool calls leaves above the live line: one per call, its
/// name only (as the activity shows it), and how long the round took.
fn finished_calls(calls: &[String], took: Duration) -> Vec<String> {
    let together = match calls.len() {
        0 | 1 => String::new(),
        n => format!(", {n} at once"),
    };
    calls
        .iter()
        .map(|call| format!("  called {call} ({:.1} s{together})", took.as_secs_f64()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sessions::Totals;

    fn completed(totals: Totals) -> Snapshot {
        Snapshot {
            agent_id: "9f3c".into(),
            name: "review".into(),
            model: "claude-sonnet-4-6".into(),
            provider: "anthropic",
            status: Status::Completed("Done.".into()),
            total_elapsed: Duration::from_millis(2_500),
            totals,
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
    fn the_files_changed_are_named_after_the_summary() {
        use crate::sessions::FileChanged;
        let mut snapshot = completed(Totals::default());
        assert_eq!(files_line(&snapshot), None);
        snapshot.files_changed = vec![
            FileChanged {
                path: "src/a.rs".into(),
                created: true,
                changes: 1,
            },
            FileChanged {
                path: "src/b.rs".into(),
                created: false,
                changes: 3,
            },
        ];
        assert_eq!(
            files_line(&snapshot).unwrap(),
            "mcp-agents: review changed 2 files: src/a.rs (created), src/b.rs (3 changes)"
        );
    }

    #[test]
    fn a_finished_round_leaves_one_line_per_call() {
        let took = Duration::from_millis(1_240);
        assert_eq!(
            finished_calls(&["fx.echo".into()], took),
            ["  called fx.echo (1.2 s)"]
        );
        assert_eq!(
            finished_calls(&["gh.search".into(), "gh.search".into()], took),
            [
                "  called gh.search (1.2 s, 2 at once)",
                "  called gh.search (1.2 s, 2 at once)"
            ]
        );
    }

    #[test]
    fn the_summary_line_shows_cache_reads_when_there_were_any() {
        let mut totals = Totals {
            turns: 3,
            input_tokens: 9_000,
            output_tokens: 120,
            tool_calls: 2,
            ..Totals::default()
        };
        assert_eq!(
            completed_line(&completed(totals)),
            "mcp-agents: review completed in 2.5 s: 3 turns, 2 tool calls, 9000 input tokens \
             and 120 output tokens"
        );
        totals.cache_read_tokens = 6_144;
        totals.cache_write_tokens = 2_048;
        assert_eq!(
            completed_line(&completed(totals)),
            "mcp-agents: review completed in 2.5 s: 3 turns, 2 tool calls, 9000 input tokens \
             (6144 read from the prompt cache) and 120 output tokens"
        );
        totals.cost = Some(crate::spend::Usd::from_dollars(0.0123));
        assert_eq!(
            completed_line(&completed(totals)),
            "mcp-agents: review completed in 2.5 s: 3 turns, 2 tool calls, 9000 input tokens \
             (6144 read from the prompt cache) and 120 output tokens, $0.0123"
        );
    }
}
