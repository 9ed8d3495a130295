//! The MCP clients this server knows (SPEC §4.3): the name each reports itself by, how long
//! its current release lets one tool call run, and so the longest `timeout_ms` the
//! `wait_agent` description advises it, with where each number was checked. One table,
//! read by the server (the description, and how to set a server variable in that client's
//! configuration) and by the test that holds docs/clients.md to it.
//!
//! A client names itself in `initialize`'s `clientInfo`, or under MCP 2026-07-28 in every
//! request's `_meta["io.modelcontextprotocol/clientInfo"]` (Claude Code sends only that when
//! the server answers `server/discover`). A wait sends progress notifications only when an
//! agent's activity changes, never as a heartbeat (SPEC §4.3), so a client whose limit is
//! reset by progress is advised as if it were not.

use crate::limits::{MAX_WAIT_MS, UNKNOWN_CLIENT_WAIT_MS};

/// How the server is reached: a client's limits differ between the two.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    Stdio,
    Http,
}

/// The longest wait advised, and why, in words for the parent model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Advice {
    /// The `timeout_ms` advised.
    pub timeout_ms: u64,
    /// What the client does to a long call, completing "Your client, Codex, …".
    pub because: &'static str,
}

/// One client of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KnownClient {
    /// `clientInfo.name`, exactly as the client sends it.
    pub name: &'static str,
    /// What people call it.
    pub product: &'static str,
    /// The release checked.
    pub version: &'static str,
    /// Its tool-call timeout, as docs/clients.md states it.
    pub timeout: &'static str,
    pub stdio: Advice,
    pub http: Advice,
    /// Where the timeout was read (the client's source or docs at that release) and run.
    pub source: &'static str,
    /// How to give this server `MCP_AGENTS_DEFAULT_MODEL` in this client's configuration,
    /// when known.
    pub default_model_fix: Option<&'static str>,
}

impl KnownClient {
    pub fn advice(&self, transport: Transport) -> Advice {
        match transport {
            Transport::Stdio => self.stdio,
            Transport::Http => self.http,
        }
    }
}

/// Codex: a hard 300 s per call (`tool_timeout_sec` raises it), progress or not.
const CODEX_ADVICE: Advice = Advice {
    timeout_ms: 280_000,
    because: "aborts a tool call after 300 s whatever happens meanwhile (unless its \
              tool_timeout_sec says otherwise)",
};

const CLAUDE_CODE_FIX: &str = "in Claude Code, add \"env\": {\"MCP_AGENTS_DEFAULT_MODEL\": \
    \"anthropic/claude-sonnet-5-5\"} to this server's entry in .mcp.json (or add the server with \
    `claude mcp add agents -e MCP_AGENTS_DEFAULT_MODEL=anthropic/claude-sonnet-5-5 -- \
    mcp-agents`), then reconnect it with /mcp";

const CODEX_FIX: &str = "in Codex, add env = { MCP_AGENTS_DEFAULT_MODEL = \"openai/gpt-5.4\" } \
    to this server's [mcp_servers.agents] table in ~/.codex/config.toml, then start a new \
    session";

/// The clients whose limits were checked, in the order docs/clients.md lists them.
pub const KNOWN_CLIENTS: &[KnownClient] = &[
    KnownClient {
        name: "claude-code",
        product: "Claude Code",
        version: "2.1.332",
        timeout: "about 27.8 h per call (`MCP_TOOL_TIMEOUT`), and an idle limit reset only by \
                  a result or progress: 30 min on stdio, 5 min over HTTP",
        stdio: Advice {
            timeout_ms: MAX_WAIT_MS,
            because: "lets a tool call on stdio run for hours",
        },
        http: Advice {
            timeout_ms: 280_000,
            because: "aborts a tool call over HTTP after 300 s without news, and a wait sends \
                      news only when an agent's activity changes",
        },
        source: "the 2.1.332 binary (`MCP_TOOL_TIMEOUT ?? 1e8`, \
                 `CLAUDE_CODE_MCP_TOOL_IDLE_TIMEOUT ?? (stdio ? 1800000 : 300000)`); runs: 320 s \
                 on stdio returned, a silent 320 s over HTTP was aborted at 300 s; \
                 `scripts/try-real-clients`: a 100 s agent in one wait",
        default_model_fix: Some(CLAUDE_CODE_FIX),
    },
    KnownClient {
        name: "codex-mcp-client",
        product: "Codex",
        version: "0.171.0",
        timeout: "300 s per call (`tool_timeout_sec`), progress or not",
        stdio: CODEX_ADVICE,
        http: CODEX_ADVICE,
        source: "`codex-rs/codex-mcp/src/rmcp_client.rs` (`DEFAULT_TOOL_TIMEOUT` = 300 s); runs: \
                 320 s aborted at 300.0 s on stdio and HTTP, with progress every 10 s too; \
                 `scripts/try-real-clients`: a 100 s agent in one wait",
        default_model_fix: Some(CODEX_FIX),
    },
    KnownClient {
        name: "gemini-cli-mcp-client",
        product: "Gemini CLI",
        version: "0.61.0",
        timeout: "600 s per call (the server's `timeout`), progress or not",
        stdio: Advice {
            timeout_ms: MAX_WAIT_MS,
            because: "lets a tool call run 600 s",
        },
        http: Advice {
            timeout_ms: MAX_WAIT_MS,
            because: "lets a tool call run 600 s",
        },
        source: "`bundle/chunk-JDPZ4CE3.js` (`MCP_DEFAULT_TIMEOUT_MSEC = 10 * 60 * 1e3`); runs: \
                 320 s returned",
        default_model_fix: None,
    },
    KnownClient {
        name: "opencode",
        product: "OpenCode",
        version: "1.18.33",
        timeout: "60 s without a result or progress (the server's `timeout`)",
        stdio: Advice {
            timeout_ms: UNKNOWN_CLIENT_WAIT_MS,
            because: "aborts a tool call after 60 s without news, and a wait sends news only \
                      when an agent's activity changes",
        },
        http: Advice {
            timeout_ms: UNKNOWN_CLIENT_WAIT_MS,
            because: "aborts a tool call after 60 s without news, and a wait sends news only \
                      when an agent's activity changes",
        },
        source: "the 1.18.33 binary (`callTool(…, {resetTimeoutOnProgress: true, timeout})`, \
                 60000 by default); runs: a silent 100 s was aborted at 60.4 s",
        default_model_fix: None,
    },
];

/// What an unknown client is told: most clients are built on the TypeScript SDK, whose
/// requests time out after 60 s.
pub const UNKNOWN_CLIENT: Advice = Advice {
    timeout_ms: UNKNOWN_CLIENT_WAIT_MS,
    because: "is not one whose limits this server knows, and many clients abort a tool call \
              after 60 s",
};

/// The tool-call timeout of the clients the table does not know, as docs/clients.md states
/// it, and where that was checked.
pub const UNKNOWN_CLIENT_TIMEOUT: &str =
    "often 60 s (the TypeScript SDK's default request timeout)";
pub const UNKNOWN_CLIENT_SOURCE: &str =
    "the TypeScript SDK 1.32.2 (`DEFAULT_REQUEST_TIMEOUT_MSEC = 60000`)";

/// The client of the table named `name` (as it reported itself), if any.
pub fn identify(name: &str) -> Option<&'static KnownClient> {
    KNOWN_CLIENTS.iter().find(|client| client.name == name)
}

/// The sentence of `wait_agent`'s description that advises `client` (`None`: unknown)
/// served over `transport` how long to wait.
pub fn wait_advice(client: Option<&KnownClient>, transport: Transport) -> String {
    match client {
        Some(client) => {
            let advice = client.advice(transport);
            let limit = if advice.timeout_ms >= MAX_WAIT_MS {
                format!("timeout_ms up to {} is safe", advice.timeout_ms)
            } else {
                format!("keep timeout_ms at {} or less", advice.timeout_ms)
            };
            format!(
                "Your client, {}, {}: {limit}.",
                client.product, advice.because
            )
        }
        None => format!(
            "Many clients abort a tool call after 60 s, so keep timeout_ms at about {} or less \
             unless you know your client allows longer calls.",
            UNKNOWN_CLIENT.timeout_ms
        ),
    }
}

/// What to do when a variable this server needs, `var`, is not in its environment (an
/// agent's key, a child server's `${VAR}`): how Claude Code and Codex pass a variable to the
/// servers they start, and the restart it takes. `var` must be showable (a name, never a
/// value); the sentence ends without a period.
pub fn pass_variable_advice(var: &str) -> String {
    format!(
        "MCP clients pass their servers only the variables they are told to: in Claude Code \
         set it in the shell that starts `claude`, or in the server's `env` in .mcp.json; in \
         Codex list it in `env_vars` of [mcp_servers.agents] in config.toml. Then restart the \
         client (in Claude Code, /mcp reconnects the server) so that mcp-agents starts again \
         with {var}"
    )
}

/// How to give the server `MCP_AGENTS_DEFAULT_MODEL` in `client`'s configuration; for an
/// unknown client, in Claude Code's and in Codex's.
pub fn default_model_fix(client: Option<&KnownClient>) -> String {
    match client.and_then(|c| c.default_model_fix) {
        Some(fix) => fix.to_owned(),
        None => format!("{CLAUDE_CODE_FIX}; {CODEX_FIX}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_advice_fits_the_wait_bound_and_names_are_unique() {
        for (i, client) in KNOWN_CLIENTS.iter().enumerate() {
            for advice in [client.stdio, client.http] {
                assert!(advice.timeout_ms <= MAX_WAIT_MS, "{}", client.name);
            }
            assert!(
                KNOWN_CLIENTS[i + 1..].iter().all(|c| c.name != client.name),
                "{} twice",
                client.name
            );
        }
        assert_eq!(identify("codex-mcp-client").unwrap().product, "Codex");
        assert_eq!(
            identify("Codex"),
            None,
            "the name as reported, not the product"
        );
    }

    #[test]
    fn the_advice_reads_as_a_sentence_per_client_and_transport() {
        let codex = identify("codex-mcp-client");
        assert_eq!(
            wait_advice(codex, Transport::Stdio),
            "Your client, Codex, aborts a tool call after 300 s whatever happens meanwhile \
             (unless its tool_timeout_sec says otherwise): keep timeout_ms at 280000 or less."
        );
        let claude = identify("claude-code");
        assert!(
            wait_advice(claude, Transport::Stdio).ends_with("timeout_ms up to 300000 is safe.")
        );
        assert!(
            wait_advice(claude, Transport::Http).ends_with("keep timeout_ms at 280000 or less.")
        );
        assert!(wait_advice(None, Transport::Stdio).contains("about 55000 or less"));
    }
}
