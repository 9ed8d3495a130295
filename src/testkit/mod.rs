//! Stand-ins for the world outside, for the offline demo and for tests: loopback model
//! endpoints that speak the real wire formats ([`mock`]) and a real child MCP server
//! ([`fixture_server`], run as the hidden `mcp-agents fixture-server`).
//!
//! The demo needs both, so they ship in the binary. Helpers that only tests use (a ready
//! definition, a key made from a string) are compiled only for tests, behind the `testkit`
//! feature that the test suite and benchmarks turn on.

pub mod fixture_server;
pub mod mock;
