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
//! | `question` | a question an agent asked its parent: what the record shows, its answers |
//! | `ask` | the `ask_parent` tool, served in process next to the run's child tools |
//!
//! The face below is what the MCP server, the command line, the benches and the tests name.
//!
//! # Questions to the parent, and answering them from elsewhere (SPEC §4.5, §4.4)
//!
//! A run of an agent that may ask (`AgentDefinition::ask_parent`) can park on a question.
//! While it waits, [`Snapshot::question`] is `Some(`[`Question`]`)`: its `id` (numbering the
//! session's questions from 1, stable while it waits), its `text` and its `options`; the
//! activity's phase is `waiting_for_input`, and every [`Waiter`] naming the session returns
//! at once (after a [`Step::Asked`] progress step). The question is answered by the first
//! of:
//!
//! - [`SessionManager::send_input`] without `interrupt`: its message is the answer
//!   ([`Accepted::answered`] names the question);
//! - [`SessionManager::answer_question`]`(target, question_id, answer)`, with
//!   [`ParentAnswer::Text`] or [`ParentAnswer::Declined`] (the agent is told the person
//!   declined and decides for itself): `Ok(`[`Question`]`)` when it took the question,
//!   `Err` with `unknown_agent`, or `invalid_input` when that question is not pending (an
//!   earlier one, one already answered, timed out, or a run that ended). This is the seam
//!   for MCP tasks: `input_required` while `Snapshot::question` is `Some`, the elicitation
//!   built from it, `tasks/update` answered through `answer_question` (an error → -32602).
//!
//! Either way the question leaves the session's state before the call returns, and the
//! session's waiters are woken. Unanswered, it times out after `ask_timeout_s`; `interrupt`
//! and `stop` end it as they end any step (`ask`, `manager`).

mod ask;
mod feed;
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
mod watchers;

pub use feed::CallTiming;
pub use manager::{Accepted, ManagerConfig, SessionManager};
pub use question::{ParentAnswer, Question};
pub use record::{changed_files, error_json, snapshot_json, summary_line};
pub use refusals::require_text;
pub use session::{FileChanged, FirstRun, Snapshot, Status, Totals, short_id};
pub use wait::{Progress, ReturnWhen, Step, WaitEvent, Waiter};
pub use watchers::{Change, Changes, WATCH_STOP_MESSAGE, Watched};
