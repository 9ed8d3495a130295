//! A running session's coarse activity (SPEC §7): which phase it is in, a short phrase for
//! people, and the operation's own time limit. Never prompts, model text or tool arguments.

use crate::limits::{
    CHILD_CALL_TIMEOUT, CHILD_SHUTDOWN_TIMEOUT, CHILD_STARTUP_TIMEOUT, PROVIDER_REQUEST_TIMEOUT,
};
use std::time::Duration;

use crate::definition::AgentDefinition;

/// Calls a summary of concurrent calls names before "and N more".
const TOOL_CALLS_NAMED: usize = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Starting,
    ChildMcpStartup,
    ProviderRequest,
    ToolCall,
    ChildMcpShutdown,
    /// The agent asked its parent a question and waits for the answer (SPEC §4.5).
    WaitingForInput,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Starting => "starting",
            Phase::ChildMcpStartup => "child_mcp_startup",
            Phase::ProviderRequest => "provider_request",
            Phase::ToolCall => "tool_call",
            Phase::ChildMcpShutdown => "child_mcp_shutdown",
            Phase::WaitingForInput => "waiting_for_input",
        }
    }
}

/// One activity transition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Activity {
    pub phase: Phase,
    /// A short human phrase: "Waiting for gpt-5 (turn 3 of 32)", "Calling github.search".
    pub summary: String,
    pub tool: Option<String>,
    pub target: Option<String>,
    /// The current operation's time limit, if it has one.
    pub timeout: Option<Duration>,
    /// In a tool call: every call of the round as `server.tool`, in the reply's order
    /// (names only, as the summary); empty otherwise.
    pub calls: Vec<String>,
}

impl Activity {
    pub fn starting() -> Self {
        Activity {
            phase: Phase::Starting,
            summary: "Starting".to_owned(),
            tool: None,
            target: None,
            timeout: None,
            calls: Vec::new(),
        }
    }

    /// Starting `definition`'s child servers, or `None` when it has none. They start in
    /// parallel: one activity names them all, bounded by the longest of their startup
    /// timeouts.
    pub fn child_startup(definition: &AgentDefinition) -> Option<Self> {
        let servers = &definition.mcp_servers;
        let bound = servers.values().map(|c| c.startup_timeout).max()?;
        let names = servers
            .keys()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(", ");
        Some(Activity {
            phase: Phase::ChildMcpStartup,
            summary: format!("Starting MCP server {names}"),
            tool: None,
            target: Some(names),
            timeout: Some(bound.min(CHILD_STARTUP_TIMEOUT)),
            calls: Vec::new(),
        })
    }

    pub fn provider_request(provider: &str, model: &str, turn: u32, max_turns: u32) -> Self {
        Activity {
            phase: Phase::ProviderRequest,
            summary: format!("Waiting for {model} (turn {turn} of {max_turns})"),
            tool: None,
            target: Some(provider.to_owned()),
            timeout: Some(PROVIDER_REQUEST_TIMEOUT),
            calls: Vec::new(),
        }
    }

    /// The reply began to arrive: it may go on for `left` more at most (the request's
    /// ceiling; silences within it are bounded by the request timeout).
    pub fn receiving(
        provider: &str,
        model: &str,
        turn: u32,
        max_turns: u32,
        left: Duration,
    ) -> Self {
        Activity {
            phase: Phase::ProviderRequest,
            summary: format!("Receiving {model}'s reply (turn {turn} of {max_turns})"),
            tool: None,
            target: Some(provider.to_owned()),
            timeout: Some(left),
            calls: Vec::new(),
        }
    }

    pub fn tool_call(server: &str, tool: &str, timeout: Duration) -> Self {
        Activity {
            phase: Phase::ToolCall,
            summary: format!("Calling {server}.{tool}"),
            tool: Some(tool.to_owned()),
            target: Some(server.to_owned()),
            timeout: Some(timeout.min(CHILD_CALL_TIMEOUT)),
            calls: vec![format!("{server}.{tool}")],
        }
    }

    /// The calls of one reply, running at once: one of them is [`tool_call`](Self::tool_call);
    /// several are named together, bounded by the longest of their timeouts.
    pub fn tool_calls(calls: &[(&str, &str)], timeout: Duration) -> Self {
        if let [(server, tool)] = calls {
            return Activity::tool_call(server, tool, timeout);
        }
        let mut servers: Vec<&str> = Vec::new();
        let mut tools: Vec<&str> = Vec::new();
        for (server, tool) in calls {
            if !servers.contains(server) {
                servers.push(server);
            }
            if !tools.contains(tool) {
                tools.push(tool);
            }
        }
        let named: Vec<String> = calls
            .iter()
            .take(TOOL_CALLS_NAMED)
            .map(|(server, tool)| format!("{server}.{tool}"))
            .collect();
        let more = calls.len().saturating_sub(TOOL_CALLS_NAMED);
        let rest = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        Activity {
            phase: Phase::ToolCall,
            summary: format!(
                "Calling {} tools at once: {}{rest}",
                calls.len(),
                named.join(", ")
            ),
            tool: Some(tools.join(", ")),
            target: Some(servers.join(", ")),
            timeout: Some(timeout.min(CHILD_CALL_TIMEOUT)),
            calls: calls
                .iter()
                .map(|(server, tool)| format!("{server}.{tool}"))
                .collect(),
        }
    }

    /// The agent asked its parent a question (SPEC §4.5): it waits at most `timeout` for the
    /// answer. The question is in the session's record, never in its activity (SPEC §7).
    pub fn waiting_for_input(timeout: Duration) -> Self {
        Activity {
            phase: Phase::WaitingForInput,
            summary: "Waiting for the parent's answer".to_owned(),
            tool: None,
            target: None,
            timeout: Some(timeout),
            calls: Vec::new(),
        }
    }

    pub fn child_shutdown() -> Self {
        Activity {
            phase: Phase::ChildMcpShutdown,
            summary: "Closing MCP servers".to_owned(),
            tool: None,
            target: None,
            timeout: Some(CHILD_SHUTDOWN_TIMEOUT),
            calls: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concurrent_calls_are_one_activity_that_names_them() {
        let one = Activity::tool_calls(&[("gh", "search")], Duration::from_secs(30));
        assert_eq!(
            one,
            Activity::tool_call("gh", "search", Duration::from_secs(30))
        );
        let many = Activity::tool_calls(
            &[
                ("gh", "search"),
                ("gh", "get"),
                ("docs", "read"),
                ("gh", "search"),
            ],
            Duration::from_secs(60),
        );
        assert_eq!(many.phase, Phase::ToolCall);
        assert_eq!(
            many.summary,
            "Calling 4 tools at once: gh.search, gh.get, docs.read and 1 more"
        );
        assert_eq!(many.target.as_deref(), Some("gh, docs"));
        assert_eq!(many.tool.as_deref(), Some("search, get, read"));
        assert_eq!(many.timeout, Some(Duration::from_secs(60)));
        assert_eq!(
            many.calls,
            ["gh.search", "gh.get", "docs.read", "gh.search"],
            "every call, beyond the three the summary names"
        );
    }
}
