//! `mcp-agents watch [DIR]` (SPEC §7.1): a full-screen live view of every server running
//! for DIR, read from their status sockets. It redraws when a server says something, when a
//! key is pressed, and once a second for the clocks (then also looking for servers that
//! started since). A server that goes away is said to have gone, its last picture kept.
//! Without a terminal it prints what `status` prints.

use std::collections::HashMap;
use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use crossterm::event::{Event, KeyEvent};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::status::run_status;
use super::watch_draw::draw;
use super::watch_model::{Action, Watch};
use crate::limits::WATCH_TICK;
use crate::status::{Found, StatusRequests, connect_all};

/// What the loop wakes for, besides its clock.
enum Wake {
    Key(KeyEvent),
    /// The terminal changed size.
    Resized,
    Line(u32, Value),
    Gone(u32),
    /// Servers found since the last look.
    Found(Found),
}

/// Watches `workspace` (canonical) until `q`, Ctrl-C or `cancel`.
pub(super) async fn run_watch(workspace: &Path, cancel: CancellationToken) -> ExitCode {
    if !std::io::stdout().is_terminal() {
        return run_status(workspace, false).await;
    }
    let mut terminal = match ratatui::try_init() {
        Ok(terminal) => terminal,
        Err(e) => {
            // Whatever was set up before the failure is undone.
            ratatui::restore();
            eprintln!("error: cannot take over the terminal: {e}");
            return ExitCode::FAILURE;
        }
    };
    let (wake, mut wakes) = mpsc::channel(256);
    let keys_done = Arc::new(AtomicBool::new(false));
    read_keys(wake.clone(), keys_done.clone());
    let mut watch = Watch::new(workspace.display().to_string());
    let mut requests: HashMap<u32, StatusRequests> = HashMap::new();
    let mut tick = tokio::time::interval(WATCH_TICK);
    let code = loop {
        if let Err(e) = terminal.draw(|frame| draw(frame, &watch, Instant::now())) {
            break Err(format!("cannot draw: {e}"));
        }
        let woke = tokio::select! {
            () = cancel.cancelled() => break Ok(()),
            woke = wakes.recv() => woke,
            _ = tick.tick() => {
                if !watch.looking {
                    watch.looking = true;
                    look_for_servers(workspace, &watch, wake.clone());
                }
                continue;
            }
        };
        let Some(woke) = woke else { break Ok(()) };
        // Everything already there is taken before the next frame: a server's batch of
        // lines is drawn once, whole.
        let mut next = Some(woke);
        let mut quit = false;
        while let Some(woke) = next.take() {
            quit |= handle(woke, &mut watch, &mut requests, &wake).await;
            next = if quit { None } else { wakes.try_recv().ok() };
        }
        if quit {
            break Ok(());
        }
    };
    keys_done.store(true, Ordering::Relaxed);
    ratatui::restore();
    match code {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Applies one wake to the picture; `true` when it asks to quit.
async fn handle(
    woke: Wake,
    watch: &mut Watch,
    requests: &mut HashMap<u32, StatusRequests>,
    wake: &mpsc::Sender<Wake>,
) -> bool {
    match woke {
        Wake::Key(key) => match watch.key(key) {
            Action::Quit => return true,
            Action::Stop { pid, agent_id } => stop(watch, requests, pid, &agent_id).await,
            Action::Nothing => {}
        },
        Wake::Resized => {}
        Wake::Line(pid, line) => watch.apply(pid, line, Instant::now()),
        Wake::Gone(pid) => {
            requests.remove(&pid);
            watch.gone(pid);
        }
        Wake::Found(found) => {
            watch.looking = false;
            // Where nothing could be found, say why.
            if let Some(problem) = found.problems.first()
                && watch.servers.is_empty()
                && found.connections.is_empty()
            {
                watch.note = Some(problem.clone());
            }
            for connection in found.connections {
                watch.add_server(connection.pid, &connection.snapshot, Instant::now());
                requests.insert(connection.pid, connection.requests);
                forward(connection.pid, connection.lines, wake.clone());
            }
        }
    }
    false
}

/// Sends server `pid` the stop of `agent_id`; its answer comes as a line.
async fn stop(
    watch: &mut Watch,
    requests: &mut HashMap<u32, StatusRequests>,
    pid: u32,
    agent_id: &str,
) {
    let short = agent_id.get(..8).unwrap_or(agent_id);
    watch.note = Some(match requests.get_mut(&pid) {
        Some(server) => match server.stop(agent_id).await {
            Ok(()) => format!("stopping {short}…"),
            Err(e) => e,
        },
        None => format!("{short}: its server has gone"),
    });
}

/// Connects, in the background, to the servers of `workspace` not shown yet.
fn look_for_servers(workspace: &Path, watch: &Watch, wake: mpsc::Sender<Wake>) {
    let known: Vec<u32> = watch.servers.iter().map(|s| s.pid).collect();
    let workspace = workspace.to_owned();
    tokio::spawn(async move {
        let found = connect_all(&workspace, &known).await;
        let _ = wake.send(Wake::Found(found)).await;
    });
}

/// Passes server `pid`'s lines on until it goes away.
fn forward(pid: u32, mut lines: crate::status::StatusLines, wake: mpsc::Sender<Wake>) {
    tokio::spawn(async move {
        while let Some(line) = lines.next().await {
            if wake.send(Wake::Line(pid, line)).await.is_err() {
                return;
            }
        }
        let _ = wake.send(Wake::Gone(pid)).await;
    });
}

/// Reads the terminal's keys on a thread of its own (crossterm's reads block), until `done`.
fn read_keys(wake: mpsc::Sender<Wake>, done: Arc<AtomicBool>) {
    std::thread::spawn(move || {
        while !done.load(Ordering::Relaxed) {
            match crossterm::event::poll(WATCH_TICK / 4) {
                Ok(false) => continue,
                Ok(true) => {}
                Err(_) => return,
            }
            let woke = match crossterm::event::read() {
                Ok(Event::Key(key)) => Wake::Key(key),
                Ok(Event::Resize(..)) => Wake::Resized,
                Ok(_) => continue,
                Err(_) => return,
            };
            if wake.blocking_send(woke).is_err() {
                return;
            }
        }
    });
}
