//! Running one subagent from a terminal (`mcp-agents run` and `mcp-agents demo`): the same
//! session manager the server uses, live activity on stderr, the result on stdout.
//!
//! On a terminal the activity is one status line redrawn in place (with a spinner and the
//! time spent in the current phase); otherwise each transition is one plain line, so logs and
//! CI output stay readable.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::exit::{EXIT_FAILED, EXIT_INTERRUPTED};
use crate::limits::{SERVER_SHUTDOWN_BOUND, TERMINAL_WAIT};
use crate::sessions::manager::SessionManager;
use crate::sessions::record::snapshot_json;
use crate::sessions::session::{Snapshot, Status, short_id};
use crate::sessions::wait::{Progress, Step, WaitEvent};

/// Spawns `name` on `task`, shows its activity until it ends, prints the outcome.
pub async fn run_agent(
    manager: Arc<SessionManager>,
    name: &str,
    task: &str,
    json: bool,
    cancel: CancellationToken,
) -> ExitCode {
    let accepted = match manager.spawn(name, task) {
        Ok(accepted) => accepted,
        Err(e) => {
            eprintln!("error: {}: {}", e.code, e.message);
            if json {
                // The shape of a refused tool call, so scripts read one place.
                println!(
                    "{}",
                    serde_json::json!({"error": {"code": e.code.as_str(), "message": e.message}})
                );
            }
            return ExitCode::from(EXIT_FAILED);
        }
    };
    let mut display = Display::new(std::io::stderr().is_terminal());
    display.started(&accepted.name, &accepted.agent_id);
    let outcome = follow(&manager, &accepted.agent_id, &mut display, &cancel).await;
    display.clear();
    manager.shutdown(SERVER_SHUTDOWN_BOUND).await;
    match outcome {
        Some(snapshot) => report(&snapshot, json),
        None => {
            eprintln!("mcp-agents: interrupted; the agent and its MCP servers were stopped");
            ExitCode::from(EXIT_INTERRUPTED)
        }
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
    loop {
        // Each wait starts by reporting the current activity; the display skips what it
        // has shown already.
        let mut waiter = manager.wait(&ids, TERMINAL_WAIT).ok()?;
        loop {
            tokio::select! {
                () = cancel.cancelled() => return None,
                _ = ticker.tick(), if display.live => display.redraw(&manager.snapshot(id).ok()?),
                event = waiter.next() => match event {
                    WaitEvent::Progress(steps) => {
                        for step in &steps {
                            display.transition(step);
                        }
                        if display.live {
                            display.redraw(&manager.snapshot(id).ok()?);
                        }
                    }
                    WaitEvent::Finished { timed_out: false, mut agents } => return agents.pop(),
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
    match &snapshot.status {
        Status::Completed(answer) => {
            if !json {
                println!("{}", answer.text);
            }
            if answer.refused {
                eprintln!("mcp-agents: {} declined the task (refused)", snapshot.name);
            }
            let t = &snapshot.totals;
            eprintln!(
                "mcp-agents: {} completed in {:.1} s: {}, {}, {} input and {} output tokens",
                snapshot.name,
                snapshot.total_elapsed.as_secs_f64(),
                count(u64::from(t.turns), "turn"),
                count(t.tool_calls, "tool call"),
                t.input_tokens,
                t.output_tokens
            );
            ExitCode::SUCCESS
        }
        Status::Failed(failure) => {
            let e = &failure.error;
            if let Some(partial) = failure.partial_result.as_deref().filter(|_| !json) {
                // The work done is not lost: the last text goes where a result would.
                println!("{partial}");
                eprintln!("mcp-agents: the text above is the agent's partial result");
            }
            eprintln!("error: {}: {}", e.code, e.message);
            ExitCode::from(EXIT_FAILED)
        }
        Status::Running => ExitCode::from(EXIT_FAILED),
    }
}

fn count(n: u64, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// How often the live status line is redrawn (its spinner and elapsed time move).
const REDRAW_INTERVAL: Duration = Duration::from_millis(120);

/// The activity display on stderr.
struct Display {
    live: bool,
    spinner: usize,
    drawn: bool,
    /// The last transition shown as a line.
    shown: u64,
}

const SPINNER: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

impl Display {
    fn new(live: bool) -> Self {
        Display {
            live,
            spinner: 0,
            drawn: false,
            shown: 0,
        }
    }

    /// The agent was spawned (a plain line; on a terminal the status line follows).
    fn started(&mut self, name: &str, id: &str) {
        if !self.live {
            eprintln!("[{name} {} +0.0s] spawned", short_id(id));
        }
    }

    /// A transition: one line when not live (each once); the live line is redrawn by the
    /// caller.
    fn transition(&mut self, progress: &Progress) {
        let Step::Activity { seq, activity, at } = &progress.step else {
            return;
        };
        if self.live || *seq <= self.shown {
            return;
        }
        self.shown = *seq;
        eprintln!(
            "[{} {} +{:.1}s] {} · {}",
            progress.name,
            short_id(&progress.agent_id),
            at.as_secs_f64(),
            activity.phase.as_str(),
            activity.summary
        );
    }

    fn redraw(&mut self, snapshot: &Snapshot) {
        let Some(line) = status_line(snapshot) else {
            return;
        };
        self.spinner = (self.spinner + 1) % SPINNER.len();
        let mut stderr = std::io::stderr().lock();
        let _ = write!(
            stderr,
            "\r\x1b[2K{} {} {line}",
            SPINNER[self.spinner], snapshot.name
        );
        let _ = stderr.flush();
        self.drawn = true;
    }

    fn clear(&mut self) {
        if self.drawn {
            let mut stderr = std::io::stderr().lock();
            let _ = write!(stderr, "\r\x1b[2K");
            let _ = stderr.flush();
            self.drawn = false;
        }
    }
}

/// `phase · summary · elapsed`, for a running snapshot.
fn status_line(snapshot: &Snapshot) -> Option<String> {
    let (activity, elapsed) = snapshot.activity.as_ref()?;
    Some(format!(
        "{} · {} · {:.1} s",
        activity.phase.as_str(),
        activity.summary,
        elapsed.as_secs_f64()
    ))
}
