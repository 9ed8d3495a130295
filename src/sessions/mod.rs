//! Sessions: the model loop of one run and the activity it reports.
//!
//! | module | job |
//! | --- | --- |
//! | [`activity`] | the coarse phases a running session reports (SPEC §7) |
//! | [`run`] | the model loop of one run (SPEC §6), independent of MCP |
//! | [`session`] | one session: frozen definition, conversation, queue, status, timing |
//! | [`manager`] | every session, the run permits, retention, and the run tasks |
//! | [`record`] | the JSON of a session record |
//! | [`wait`] | waiting on sessions, with what they do meanwhile |

pub mod activity;
pub mod manager;
pub mod record;
pub mod run;
pub mod session;
pub mod wait;
