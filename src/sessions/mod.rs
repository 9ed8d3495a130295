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
//! | `feed` | what a session keeps for watchers: the bell it rings, its tool calls' timings |
//! | `watchers` | every session's changes and the stop, for watchers from outside (SPEC §7.1) |
//!
//! The face below is what the MCP server, the command line, the benches and the tests name.

mod feed;
mod hidden;
mod lifecycle;
mod manager;
mod record;
mod refusals;
mod session;
mod setup;
mod stop;
mod wait;
mod watchers;

pub use feed::CallTiming;
pub use manager::{Accepted, ManagerConfig, SessionManager};
pub use record::{changed_files, error_json, snapshot_json, summary_line};
pub use refusals::require_text;
pub use session::{FileChanged, FirstRun, Snapshot, Status, Totals, short_id};
pub use wait::{Progress, ReturnWhen, Step, WaitEvent};
pub use watchers::{Change, Changes, WATCH_STOP_MESSAGE, Watched};
