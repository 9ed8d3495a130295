//! The MCP server (SPEC §4, §10): the three tools over stdio or streamable HTTP, through
//! `rmcp`. This layer only translates between MCP and the session manager.
//!
//! | module | job |
//! | --- | --- |
//! | [`arguments`] | `tools/call` messages whose `arguments` is not an object, marked for the checks |
//! | [`schema`] | the three tools: typed arguments and the schemas generated from them, descriptions |
//! | [`call`] | a call's arguments read into those types, and the results' shapes |
//! | [`handler`] | the `rmcp` server handler: `tools/list`, `tools/call`, progress |
//! | [`stdio`] | serving on stdin/stdout |
//! | [`http`] | serving streamable HTTP at `/mcp`, with Origin and bearer-token checks and the client bounds |
//! | [`legacy_sessions`] | `rmcp`'s sessions for `initialize` clients, at most 64, least recently used closed first |

pub mod arguments;
pub mod call;
pub mod handler;
pub mod http;
pub mod legacy_sessions;
pub mod schema;
pub mod stdio;
