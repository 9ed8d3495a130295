//! The model loop of one run (SPEC §6): ask the provider, settle the turn, run the tools the
//! reply asks for, check the budgets, and repeat until a reply asks for none. It sees the
//! provider through `providers` and the tools only through `toolbox`; it knows nothing of
//! MCP, of sessions or of the registry that starts runs (`sessions`, the layer above).
//!
//! | file | job |
//! | --- | --- |
//! | `model_loop` | the loop itself ([`run_model_loop`]) and what it is given ([`RunContext`]) |
//! | `activity` | the coarse phases a running session reports (SPEC §7) |
//! | `observer` | what a run reads and reports: queued input, activity, usage, tool calls |
//! | `outcome` | how a run ends: an answer, or a failure with its partial result |
//! | `budget` | the run's limits (`max_turns`, tool calls, tokens, seconds) and their errors |
//! | `tool_round` | the tool calls of one reply: checked, then run concurrently |
//! | `answer` | a final answer against the agent's `output_schema` |
//! | `fallback` | the model a run asks, and its fallback models when that one cannot answer |
//!
//! The face below is what `sessions` (which starts runs and keeps their sessions), the
//! benches and the tests name.

mod activity;
mod answer;
mod budget;
mod fallback;
mod model_loop;
mod observer;
mod outcome;
mod tool_round;

pub use activity::{Activity, Phase};
pub use answer::schema_instructions;
pub use budget::{RunLimits, Spent};
pub use model_loop::{RunContext, run_model_loop};
pub use observer::{Inbox, ModelAttempt, RunObserver, ToolUse, UsageDelta};
pub use outcome::{Answer, Failure, RunOutcome, partial_result};
pub use tool_round::{INTERRUPTED_RESULT, STOPPED_RESULT, until};
