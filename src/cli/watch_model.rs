//! What `mcp-agents watch` shows, kept apart from the terminal (SPEC §7.1): the servers of
//! the workspace and their agents as the status lines said them, which agent is selected,
//! the screen (the list, an agent's detail, a stop to confirm), and what a key does. Fields
//! later issues add to a record (`question`, `usage.cost_usd`) are read when present.

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use serde_json::Value;

/// One server of the workspace.
pub(super) struct ServerView {
    pub pid: u32,
    /// Its `server` object, as last said.
    pub server: Value,
    /// It went away: its last picture stays, its clocks stop.
    pub gone: bool,
}

/// One agent, as its server last said it.
pub(super) struct AgentView {
    pub pid: u32,
    pub record: Value,
    /// When the record arrived: a running agent's clock goes on from there.
    pub received: Instant,
}

impl AgentView {
    pub(super) fn id(&self) -> &str {
        self.record["agent_id"].as_str().unwrap_or_default()
    }

    pub(super) fn name(&self) -> &str {
        self.record["name"].as_str().unwrap_or_default()
    }

    pub(super) fn short_id(&self) -> &str {
        let id = self.id();
        id.get(..8).unwrap_or(id)
    }

    pub(super) fn is_running(&self) -> bool {
        self.record["status"] == "running"
    }

    /// `running`, `asking` (a question waits), `completed`, `stopped` (cancelled) or
    /// `failed`.
    pub(super) fn status(&self) -> &str {
        match self.record["status"].as_str().unwrap_or("?") {
            "running" if self.question().is_some() => "asking",
            "failed" if self.record["error"]["code"] == "cancelled" => "stopped",
            other => other,
        }
    }

    /// The question waiting for the parent's answer (SPEC §4.5), if any.
    pub(super) fn question(&self) -> Option<&str> {
        self.record["question"].as_str().filter(|q| !q.is_empty())
    }

    /// What it does now, or how it ended: the activity, the question, the first line of the
    /// result, or the error.
    pub(super) fn now(&self) -> String {
        let r = &self.record;
        if let Some(question) = self.question() {
            return format!("asks: {question}");
        }
        match r["status"].as_str() {
            Some("running") => r["activity"]["summary"]
                .as_str()
                .unwrap_or("Starting")
                .to_owned(),
            Some("completed") => r["result"].as_str().unwrap_or_default().to_owned(),
            _ => format!(
                "{}: {}",
                r["error"]["code"].as_str().unwrap_or("failed"),
                r["error"]["message"].as_str().unwrap_or_default()
            ),
        }
    }

    /// Its total time, going on from the record's while it runs and its server is there.
    pub(super) fn elapsed(&self, now: Instant, live: bool) -> Duration {
        let said = Duration::from_millis(self.record["total_elapsed_ms"].as_u64().unwrap_or(0));
        if self.is_running() && live {
            said + now.saturating_duration_since(self.received)
        } else {
            said
        }
    }

    pub(super) fn tokens(&self) -> u64 {
        let usage = &self.record["usage"];
        usage["input_tokens"].as_u64().unwrap_or(0) + usage["output_tokens"].as_u64().unwrap_or(0)
    }

    /// `usage.cost_usd`, when its model has a price (SPEC §5.1).
    pub(super) fn cost(&self) -> Option<f64> {
        self.record["usage"]["cost_usd"].as_f64()
    }

    pub(super) fn files_changed(&self) -> u64 {
        let listed = self.record["files_changed"]
            .as_array()
            .map_or(0, |f| f.len() as u64);
        listed + self.record["unlisted_changes"].as_u64().unwrap_or(0)
    }
}

/// Which screen is up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Mode {
    List,
    Detail,
    /// `stop <name>? y/n`, for this agent of this server.
    ConfirmStop {
        pid: u32,
        agent_id: String,
    },
}

/// What a key asks of the loop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Action {
    Nothing,
    Quit,
    Stop { pid: u32, agent_id: String },
}

/// The whole picture.
pub(super) struct Watch {
    pub workspace: String,
    pub servers: Vec<ServerView>,
    /// By server, each server's in the order they came (spawn order).
    pub agents: Vec<AgentView>,
    pub selected: usize,
    pub mode: Mode,
    /// A line for the person: what a stop did, or why it cannot be done.
    pub note: Option<String>,
    /// A look for servers started since is under way.
    pub looking: bool,
}

impl Watch {
    pub(super) fn new(workspace: String) -> Self {
        Watch {
            workspace,
            servers: Vec::new(),
            agents: Vec::new(),
            selected: 0,
            mode: Mode::List,
            note: None,
            looking: false,
        }
    }

    /// A server connected, with its snapshot.
    pub(super) fn add_server(&mut self, pid: u32, snapshot: &Value, now: Instant) {
        self.servers.push(ServerView {
            pid,
            server: snapshot["server"].clone(),
            gone: false,
        });
        for agent in snapshot["agents"].as_array().into_iter().flatten() {
            self.put_agent(pid, agent.clone(), now);
        }
    }

    /// A line from server `pid`.
    pub(super) fn apply(&mut self, pid: u32, line: Value, now: Instant) {
        match line["type"].as_str() {
            Some("agent") => self.put_agent(pid, line["agent"].clone(), now),
            Some("stopped") if line["agent"].is_object() => {
                let agent = line["agent"].clone();
                self.note = Some(format!(
                    "stopped {} {}",
                    agent["name"].as_str().unwrap_or_default(),
                    line["agent_id"]
                        .as_str()
                        .and_then(|i| i.get(..8))
                        .unwrap_or_default()
                ));
                self.put_agent(pid, agent, now);
            }
            Some("forgotten") => {
                let id = line["agent_id"].as_str().unwrap_or_default();
                if let Some(at) = self
                    .agents
                    .iter()
                    .position(|a| a.pid == pid && a.id() == id)
                {
                    self.agents.remove(at);
                    if at < self.selected {
                        self.selected -= 1;
                    }
                    self.clamp_selection();
                }
            }
            Some("server") => {
                if let Some(server) = self.servers.iter_mut().find(|s| s.pid == pid) {
                    server.server = line["server"].clone();
                }
            }
            Some("error") => {
                let message = line["error"]["message"]
                    .as_str()
                    .unwrap_or("the server refused");
                self.note = Some(format!("could not stop: {message}"));
            }
            _ => {}
        }
    }

    /// Server `pid` went away.
    pub(super) fn gone(&mut self, pid: u32) {
        if let Some(server) = self.servers.iter_mut().find(|s| s.pid == pid) {
            server.gone = true;
        }
        if matches!(&self.mode, Mode::ConfirmStop { pid: p, .. } if *p == pid) {
            self.mode = Mode::List;
        }
    }

    pub(super) fn is_live(&self, pid: u32) -> bool {
        self.servers.iter().any(|s| s.pid == pid && !s.gone)
    }

    /// The agent the selection is on.
    pub(super) fn selected_agent(&self) -> Option<&AgentView> {
        self.agents.get(self.selected)
    }

    fn put_agent(&mut self, pid: u32, record: Value, received: Instant) {
        let id = record["agent_id"].as_str().unwrap_or_default().to_owned();
        let view = AgentView {
            pid,
            record,
            received,
        };
        match self
            .agents
            .iter_mut()
            .find(|a| a.pid == pid && a.id() == id)
        {
            Some(agent) => *agent = view,
            None => {
                // Grouped by server, in the order the servers came.
                let order = |p: u32| self.servers.iter().position(|s| s.pid == p);
                let at = self
                    .agents
                    .iter()
                    .rposition(|a| order(a.pid) <= order(pid))
                    .map_or(0, |i| i + 1);
                self.agents.insert(at, view);
                if at <= self.selected && self.agents.len() > 1 {
                    self.selected += 1;
                }
            }
        }
        self.clamp_selection();
    }

    fn clamp_selection(&mut self) {
        self.selected = self.selected.min(self.agents.len().saturating_sub(1));
    }

    /// What `key` does on the screen that is up.
    pub(super) fn key(&mut self, key: KeyEvent) -> Action {
        if key.kind == KeyEventKind::Release {
            return Action::Nothing;
        }
        let ctrl_c =
            key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c');
        if ctrl_c || key.code == KeyCode::Char('q') {
            return Action::Quit;
        }
        match std::mem::replace(&mut self.mode, Mode::List) {
            Mode::ConfirmStop { pid, agent_id } => match key.code {
                KeyCode::Char('y' | 'Y') => return Action::Stop { pid, agent_id },
                KeyCode::Char('n' | 'N') | KeyCode::Esc => self.note = None,
                _ => self.mode = Mode::ConfirmStop { pid, agent_id },
            },
            Mode::Detail => match key.code {
                KeyCode::Esc | KeyCode::Backspace | KeyCode::Left => {}
                KeyCode::Char('s') => self.ask_stop(Mode::Detail),
                _ => self.mode = Mode::Detail,
            },
            Mode::List => match key.code {
                KeyCode::Up | KeyCode::Char('k') => self.selected = self.selected.saturating_sub(1),
                KeyCode::Down | KeyCode::Char('j') => {
                    self.selected += 1;
                    self.clamp_selection();
                }
                KeyCode::Enter | KeyCode::Right if self.selected_agent().is_some() => {
                    self.mode = Mode::Detail;
                }
                KeyCode::Char('s') => self.ask_stop(Mode::List),
                _ => {}
            },
        }
        Action::Nothing
    }

    /// `s`: asks to confirm stopping the selected agent, or says why it cannot be stopped.
    fn ask_stop(&mut self, back: Mode) {
        self.mode = back;
        let Some(agent) = self.selected_agent() else {
            return;
        };
        let who = format!("{} {}", agent.name(), agent.short_id());
        if !self.is_live(agent.pid) {
            self.note = Some(format!("{who}: its server has gone"));
        } else if !agent.is_running() {
            self.note = Some(format!("{who} is not running"));
        } else {
            self.mode = Mode::ConfirmStop {
                pid: agent.pid,
                agent_id: agent.id().to_owned(),
            };
            self.note = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn press(watch: &mut Watch, code: KeyCode) -> Action {
        watch.key(KeyEvent::new(code, KeyModifiers::NONE))
    }

    fn picture() -> Watch {
        let mut watch = Watch::new("/w".into());
        let snapshot = json!({
            "server": {"pid": 7},
            "agents": [
                {"agent_id": "aaaaaaaa11", "name": "done", "status": "completed", "result": "Ok."},
                {"agent_id": "bbbbbbbb22", "name": "busy", "status": "running",
                 "question": "Which file?", "total_elapsed_ms": 1000},
            ],
        });
        watch.add_server(7, &snapshot, Instant::now());
        watch
    }

    #[test]
    fn keys_select_open_and_stop_only_a_running_agent_after_yes() {
        let mut watch = picture();
        assert_eq!(press(&mut watch, KeyCode::Char('s')), Action::Nothing);
        assert_eq!(watch.note.as_deref(), Some("done aaaaaaaa is not running"));
        assert_eq!(watch.mode, Mode::List);
        press(&mut watch, KeyCode::Down);
        assert_eq!(watch.selected_agent().map(AgentView::name), Some("busy"));
        assert_eq!(
            watch.selected_agent().map(AgentView::status),
            Some("asking")
        );
        press(&mut watch, KeyCode::Enter);
        assert_eq!(watch.mode, Mode::Detail);
        press(&mut watch, KeyCode::Char('s'));
        assert!(matches!(watch.mode, Mode::ConfirmStop { .. }));
        assert_eq!(press(&mut watch, KeyCode::Char('n')), Action::Nothing);
        assert_eq!(watch.mode, Mode::List);
        press(&mut watch, KeyCode::Char('s'));
        assert_eq!(
            press(&mut watch, KeyCode::Char('y')),
            Action::Stop {
                pid: 7,
                agent_id: "bbbbbbbb22".into()
            }
        );
        watch.gone(7);
        press(&mut watch, KeyCode::Char('s'));
        assert_eq!(
            watch.note.as_deref(),
            Some("busy bbbbbbbb: its server has gone")
        );
        assert_eq!(press(&mut watch, KeyCode::Char('q')), Action::Quit);
    }

    #[test]
    fn lines_update_add_and_forget_agents_and_keep_the_selection_on_its_agent() {
        let mut watch = picture();
        press(&mut watch, KeyCode::Down);
        let now = Instant::now();
        let stopped = json!({"agent_id": "bbbbbbbb22", "name": "busy", "status": "failed",
                             "error": {"code": "cancelled", "message": "stopped from mcp-agents watch"}});
        watch.apply(7, json!({"type": "agent", "agent": stopped}), now);
        assert_eq!(
            watch.selected_agent().map(AgentView::status),
            Some("stopped")
        );
        watch.add_server(9, &json!({"server": {"pid": 9}, "agents": []}), now);
        let new = json!({"agent_id": "cccccccc33", "name": "new", "status": "running"});
        watch.apply(9, json!({"type": "agent", "agent": new}), now);
        let first = json!({"agent_id": "dddddddd44", "name": "first", "status": "running"});
        watch.apply(7, json!({"type": "agent", "agent": first}), now);
        let names: Vec<&str> = watch.agents.iter().map(AgentView::name).collect();
        assert_eq!(names, ["done", "busy", "first", "new"], "grouped by server");
        assert_eq!(watch.selected_agent().map(AgentView::name), Some("busy"));
        watch.apply(
            7,
            json!({"type": "forgotten", "agent_id": "aaaaaaaa11"}),
            now,
        );
        assert_eq!(watch.agents.len(), 3);
        assert_eq!(watch.selected_agent().map(AgentView::name), Some("busy"));
    }
}
