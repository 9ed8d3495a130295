//! Watching from outside (SPEC §7.1): every server's status socket, private to its user,
//! and what it says: a snapshot of the server and its agents (each as its `wait_agent`
//! record with its human line, never more of a result than its first line), the changes
//! as they happen, and one request, stopping an agent. `GET /status` and
//! `GET /status/events` say the same over HTTP (the `server` layer routes them); `mcp-agents
//! status` and `watch` read it (`cli`).
//!
//! | file | job |
//! | --- | --- |
//! | `place` | the private directory and the sockets' names (a hash of the workspace, the pid), stale ones told apart |
//! | `report` | the JSON lines: the snapshot, each change, the server's totals and spend |
//! | `listener` | the server's socket: same-uid peers only, the feed to each, the stop requests |
//! | `client` | the readers' side: every live server of a workspace in every directory it may be in, connected, stale sockets removed |

mod client;
mod listener;
mod place;
mod report;

pub use client::{Connection, Found, StatusLines, StatusRequests, connect_all};
pub use listener::StatusSocket;
pub use report::{ServerInfo, StatusFeed, agent_json};
