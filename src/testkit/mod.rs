//! Stand-ins for the world outside, for the offline demo and for tests: loopback model
//! endpoints that speak the real wire formats (`mock`) and a real child MCP server
//! (`fixture_server`, run as the hidden `mcp-agents fixture-server`); for tests, MCP over
//! HTTP written by hand (`raw_http`).
//!
//! The demo needs both, so they ship in the binary. Helpers that only tests use (a ready
//! definition, a key made from a string) are compiled only for tests, behind the `testkit`
//! feature that the test suite and benchmarks turn on.

#[cfg(any(test, feature = "testkit"))]
mod bench_kit;
mod fixture_server;
mod mock;
#[cfg(any(test, feature = "testkit"))]
mod raw_http;

#[cfg(any(test, feature = "testkit"))]
pub use bench_kit::{BENCH_KEY_VAR, bench_workspace};
pub use fixture_server::{
    FixtureOptions, ONE_PIXEL_PNG, kept_across_exec, lookup_schema, odd_tool_name,
    run as run_fixture_server,
};
pub use mock::{
    ChatServer, MockAuth, MockEngine, MockProvider, MockWire, ModelRefuses, Recorded,
    RecordedOutcome, ScriptedReply, Step, StreamFault, StreamShape,
};
#[cfg(any(test, feature = "testkit"))]
pub use mock::{Verdict, check_with_oracle, mock_definition};
#[cfg(any(test, feature = "testkit"))]
pub use raw_http::{ask_for_tools, mcp_request};
