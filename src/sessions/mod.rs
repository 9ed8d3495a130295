//! Sessions (SPEC §5): the registry of every session of the process, the run permits,
//! retention, and waiting on sessions. The model loop a session's run executes is the `run`
//! layer below; this layer starts runs, keeps what they leave, and answers for them.
//!
//! | file | job |
//! | --- | --- |
//! | `manager` | every session, the run permits, retention, and the public calls ([`SessionManager`]) |
//! | `lifecycle` | one run, from its start to its session's terminal state |
//! | `stop` | the stop handoff: a run told to stop, the record it ends with |
//! | `setup` | what a new run is given: its system context, its provider client and secrets |
//! | `refusals` | what the registry answers when a call cannot be done |
//! | `session` | one session: frozen definition, conversation, queue, status, timing |
//! | `wait` | waiting on sessions, with what they do meanwhile |
//! | `record` | the JSON of a session record, and its one human line |
//! | `hidden` | a run's secrets hidden from its activity and outcome |
//!
//! The face below is what the MCP server, the command line, the benches and the tests name.

mod ask;
mod hidden;
mod lifecycle;
mod manager;
mod question;
mod record;
mod refusals;
#[cfg(test)]
mod run_harness;
mod session;
mod setup;
mod stop;
mod wait;

pub use manager::{Accepted, ManagerConfig, SessionManager};
pub use question::{ParentAnswer, Question};
pub use record::{changed_files, error_json, snapshot_json, summary_line};
pub use refusals::require_text;
pub use session::{FileChanged, Snapshot, Status, Totals, short_id};
pub use wait::{Progress, ReturnWhen, Step, WaitEvent};
