//! Sessions: the model loop of one run and the activity it reports.
//!
//! | module | job |
//! | --- | --- |
//! | [`activity`] | the coarse phases a running session reports (SPEC §7) |
//! | [`run`] | the model loop of one run (SPEC §6), independent of MCP |
//! | [`observer`] | what a run reads and reports: queued input, activity, usage, tool calls |
//! | [`outcome`] | how a run ends: an answer, or a failure with its partial result |
//! | [`budget`] | the run's limits (`max_turns`, tool calls, tokens, seconds) and their errors |
//! | [`tool_round`] | the tool calls of one reply: checked, then run concurrently |
//! | [`answer`] | a final answer against the agent's `output_schema` |
//! | [`session`] | one session: frozen definition, conversation, queue, status, timing |
//! | [`manager`] | every session, the run permits, retention, and the run tasks |
//! | [`record`] | the JSON of a session record |
//! | [`wait`] | waiting on sessions, with what they do meanwhile |

pub mod activity;
pub mod answer;
pub mod budget;
pub mod manager;
pub mod observer;
pub mod outcome;
pub mod record;
pub mod run;
pub mod session;
pub mod tool_round;
pub mod wait;
