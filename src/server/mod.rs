//! The MCP server (SPEC §4, §10): the three tools over stdio or streamable HTTP, through
//! `rmcp`. This layer only translates between MCP and the session manager.
//!
//! | file | job |
//! | --- | --- |
//! | `arguments` | `tools/call` messages whose `arguments` is not an object, marked for the checks |
//! | `schema` | the three tools: typed arguments and the schemas generated from them, descriptions |
//! | `call` | a call's arguments read into those types, and the results' shapes |
//! | `handler` | the `rmcp` server handler: `tools/list`, `tools/call`, progress, the tasks hooks |
//! | `tasks` | the MCP tasks extension (`--mcp-tasks`): `spawn_agent` answered with a task, `tasks/get`, `tasks/cancel`, `tasks/update` |
//! | `stdio` | serving on stdin/stdout |
//! | `http` | serving streamable HTTP at `/mcp`, with Origin and bearer-token checks and the client bounds |
//! | `connections` | the HTTP accept loop and each connection's life, its requests and answers counted |
//! | `crowd` | who holds the HTTP connection slots: which one closes for a fresh client, which unread answers are given up |
//! | `legacy_sessions` | `rmcp`'s sessions for `initialize` clients, at most 64, least recently used closed first |
//! | `request_body` | an HTTP request body read into one buffer under its cap, refused up front when declared longer |
//! | `status_http` | `GET /status` and `GET /status/events`: the status endpoint over HTTP (SPEC §7.1) |
//! | `write_stall` | the bound on an HTTP answer its client does not read |

mod arguments;
mod call;
mod connections;
mod crowd;
mod handler;
mod http;
mod legacy_sessions;
mod request_body;
mod schema;
mod status_http;
mod stdio;
mod tasks;
mod write_stall;

pub use arguments::mark_non_object_arguments;
pub use call::{Call, parse_call};
pub use handler::ServeOptions;
pub use http::{HttpOptions, Listen, serve_http};
pub use schema::{SEND_INPUT, SPAWN_AGENT, WAIT_AGENT};
pub use stdio::{serve_stdio, serve_stdio_on};
