//! Shared helpers for the integration tests, one module a kind of set-up:
//!
//! - [`builders`]: what most tests start from, built in one expression. A [`TestWorkspace`]
//!   (agents and files pointing at a mock provider, the marker their child processes carry,
//!   the server's environment) becomes a [`ServerUnderTest`] (the real binary over stdio,
//!   with a client), an [`HttpServerUnderTest`] (over HTTP, clients connect to it) or a
//!   [`MockWorkspace`] (written, served by nothing yet). [`TempWorkspace`] is a bare
//!   throwaway directory for discovery tests.
//! - [`binary`]: driving the real binary as Claude Code or Codex would (stdio, HTTP, both
//!   protocol generations, `mcp-agents run`), and the standard agents.
//! - [`cli`]: `mcp-agents check` and the other one-shot commands, and the example
//!   workspace in a prepared environment.
//! - [`children`]: agent definitions with child MCP servers (the `fixture-server`), and the
//!   process table, to prove no child outlives its run.
//! - [`run_kit`]: the provider clients, the model loop and in-process tools against the mock.
//! - [`workspace`]: the built-in workspace tools' server (`mcp-agents workspace-tools`).
//! - [`fixtures`]: fixture workspaces under `tests/fixtures/` and their `# expect:` lines.
//! - [`engine`], [`interop`], [`recording_proxy`]: the real engine, the other SDKs' clients
//!   and servers, and a proxy that records what reaches an engine.

pub mod binary;
pub mod builders;
pub mod children;
pub mod cli;
pub mod engine;
pub mod fixtures;
pub mod interop;
pub mod pty;
pub mod recording_proxy;
pub mod run_kit;
pub mod status;
pub mod workspace;

pub use builders::{
    HttpServerUnderTest, MockWorkspace, ServerUnderTest, TempWorkspace, TestWorkspace,
};
pub use fixtures::{
    agent_named, assert_no_warning_quotes, check_fixture, fixture_path, load_at, load_fixture,
    loading_reasons,
};

/// The string `field` of each object in the JSON array `list` (`"name"` of each tool, …).
pub fn each_str<'a>(list: &'a serde_json::Value, field: &str) -> Vec<&'a str> {
    list.as_array()
        .unwrap_or_else(|| panic!("not an array: {list}"))
        .iter()
        .map(|item| {
            item[field]
                .as_str()
                .unwrap_or_else(|| panic!("no string {field} in {item}"))
        })
        .collect()
}
