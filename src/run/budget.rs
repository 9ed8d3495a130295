//! The limits of one run (SPEC §6 step 5): `max_turns`, and the budget of tool calls, tokens
//! and wall-clock seconds ([`RunLimits`]), what the run has spent ([`Spent`]), and the
//! `turn_limit` / `budget_exceeded` errors, each naming the limit and the amount used.
//!
//! When each is checked: turns and tokens before each model request (tokens also after each
//! reply, since only a reply says how many it took), tool calls before each call, and the
//! deadline all the time: it cancels the request, tool call or child startup in flight. So
//! no budget is overshot by more than one provider reply.

use std::time::Duration;

use tokio::time::Instant;

use super::activity::Activity;
use crate::definition::RunBudget;
use crate::error::{AgentError, ErrorCode};

/// What one run may spend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunLimits {
    pub max_turns: u32,
    pub budget: RunBudget,
    /// When the run started (its child servers' startup included), for `max_run_seconds`.
    pub started: Instant,
    /// How long the run has waited for its parent's answers (SPEC §4.5): not counted
    /// against `max_run_seconds`, so the deadline moves by it.
    pub parked: Duration,
}

impl RunLimits {
    /// `max_turns` and no budget, starting now.
    pub fn turns(max_turns: u32) -> Self {
        RunLimits {
            max_turns,
            budget: RunBudget::default(),
            started: Instant::now(),
            parked: Duration::ZERO,
        }
    }

    /// When `max_run_seconds` runs out, if the budget has it: that long after the start,
    /// plus the time the run waited for its parent.
    pub fn deadline(&self) -> Option<Instant> {
        let seconds = self.budget.max_run_seconds?;
        self.started
            .checked_add(Duration::from_secs(u64::from(seconds)))?
            .checked_add(self.parked)
    }

    /// `activity` with its bound no later than the run's deadline: what is in flight ends
    /// there at the latest, so `operation_timeout_remaining_ms` says so (SPEC §4.3).
    pub fn bounded(&self, mut activity: Activity) -> Activity {
        if let Some(deadline) = self.deadline() {
            let left = deadline.saturating_duration_since(Instant::now());
            activity.timeout = Some(activity.timeout.map_or(left, |bound| bound.min(left)));
        }
        activity
    }
}

/// What a run has spent so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Spent {
    pub turns: u32,
    pub tool_calls: u32,
    /// Input and output tokens as the provider reported them, cached included.
    pub tokens: u64,
}

/// What to tell the parent about raising a budget. A resumed run starts a fresh budget.
const RAISE: &str = "raise it in the definition (or the server's default), or give the agent a \
    smaller task; send_input continues the agent with a fresh budget";

impl RunLimits {
    /// Before a model request: the turns are used up, or the tokens are (any request would
    /// pass a budget it has reached), or the time is.
    pub fn before_request(&self, spent: &Spent) -> Option<AgentError> {
        if spent.turns >= self.max_turns {
            return Some(AgentError::new(
                ErrorCode::TurnLimit,
                format!(
                    "the run needed more than {} model requests (max_turns); raise max_turns \
                     in the definition or give the agent a smaller task",
                    self.max_turns
                ),
            ));
        }
        if let Some(max) = self.budget.max_run_tokens
            && spent.tokens >= u64::from(max)
        {
            return Some(self.over_tokens(spent));
        }
        if self.deadline().is_some_and(|d| Instant::now() >= d) {
            return Some(self.out_of_time("its next model request was not made"));
        }
        None
    }

    /// After a reply: the tokens passed the budget.
    pub fn after_reply(&self, spent: &Spent) -> Option<AgentError> {
        let max = self.budget.max_run_tokens?;
        (spent.tokens > u64::from(max)).then(|| self.over_tokens(spent))
    }

    fn over_tokens(&self, spent: &Spent) -> AgentError {
        let max = self.budget.max_run_tokens.unwrap_or_default();
        AgentError::new(
            ErrorCode::BudgetExceeded,
            format!(
                "the run used {} tokens (input and output, as the provider reported them), \
                 reaching its max_run_tokens of {max}, so it stopped; {RAISE}",
                spent.tokens
            ),
        )
    }

    /// How many more tool calls the budget allows (`None`: no limit).
    pub fn calls_left(&self, spent: &Spent) -> Option<u32> {
        self.budget
            .max_tool_calls
            .map(|max| max.saturating_sub(spent.tool_calls))
    }

    /// The budget of tool calls ran out with `refused` calls not made.
    pub fn out_of_calls(&self, spent: &Spent, refused: usize) -> AgentError {
        let max = self.budget.max_tool_calls.unwrap_or_default();
        AgentError::new(
            ErrorCode::BudgetExceeded,
            format!(
                "the run made {} tool calls, its max_tool_calls of {max}, and asked for {refused} \
                 more, which were not made; {RAISE}",
                spent.tool_calls
            ),
        )
    }

    /// `max_run_seconds` passed; `cancelled` says what was stopped.
    pub fn out_of_time(&self, cancelled: &str) -> AgentError {
        let max = self.budget.max_run_seconds.unwrap_or_default();
        AgentError::new(
            ErrorCode::BudgetExceeded,
            format!(
                "the run reached its max_run_seconds of {max} s and stopped ({cancelled}); \
                 {RAISE}"
            ),
        )
    }
}

/// What a tool call that `max_run_seconds` stopped tells the model.
pub(super) fn out_of_time_result(max_run_seconds: u32) -> String {
    format!(
        "cancelled: the run reached its time budget (max_run_seconds {max_run_seconds}) before \
         this call finished"
    )
}

/// What a tool call the budget of calls did not allow tells the model.
pub(super) fn out_of_calls_result(max_tool_calls: u32) -> String {
    format!(
        "not made: the run has used all {max_tool_calls} tool calls of its budget \
         (max_tool_calls)"
    )
}

/// What a tool call of a reply that passed the token budget tells the model.
pub(super) fn out_of_tokens_result(max_run_tokens: u32) -> String {
    format!(
        "not made: the run has used its token budget (max_run_tokens {max_run_tokens}) with the \
         reply that asked for it"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(budget: RunBudget) -> RunLimits {
        RunLimits {
            budget,
            ..RunLimits::turns(5)
        }
    }

    #[tokio::test(start_paused = true)]
    async fn an_activitys_bound_ends_at_the_run_deadline_at_the_latest() {
        let call = || Activity::tool_call("gh", "search", Duration::from_secs(60));
        let none = limits(RunBudget::default());
        assert_eq!(none.bounded(call()).timeout, Some(Duration::from_secs(60)));
        let timed = limits(RunBudget {
            max_run_seconds: Some(10),
            ..RunBudget::default()
        });
        tokio::time::advance(Duration::from_secs(4)).await;
        assert_eq!(timed.bounded(call()).timeout, Some(Duration::from_secs(6)));
        assert_eq!(
            timed.bounded(Activity::child_shutdown()).timeout,
            Some(Duration::from_secs(5)),
            "a shorter bound stays"
        );
        tokio::time::advance(Duration::from_secs(20)).await;
        assert_eq!(timed.bounded(call()).timeout, Some(Duration::ZERO));
    }

    #[tokio::test(start_paused = true)]
    async fn each_limit_is_checked_where_the_spec_says() {
        let spent = |turns, tool_calls, tokens| Spent {
            turns,
            tool_calls,
            tokens,
        };
        let none = limits(RunBudget::default());
        assert_eq!(none.before_request(&spent(4, 99, u64::MAX)), None);
        assert_eq!(
            none.before_request(&spent(5, 0, 0)).unwrap().code,
            ErrorCode::TurnLimit
        );
        assert_eq!(none.calls_left(&spent(0, 7, 0)), None);

        let tokens = limits(RunBudget {
            max_run_tokens: Some(100),
            ..RunBudget::default()
        });
        assert_eq!(
            tokens.after_reply(&spent(1, 0, 100)),
            None,
            "reaching is not passing"
        );
        assert!(
            tokens.before_request(&spent(1, 0, 100)).is_some(),
            "but no request fits"
        );
        let over = tokens.after_reply(&spent(1, 0, 101)).unwrap();
        assert_eq!(over.code, ErrorCode::BudgetExceeded);
        assert!(over.message.contains("101 tokens"), "{}", over.message);
        assert!(
            over.message.contains("max_run_tokens of 100"),
            "{}",
            over.message
        );

        let calls = limits(RunBudget {
            max_tool_calls: Some(3),
            ..RunBudget::default()
        });
        assert_eq!(calls.calls_left(&spent(0, 1, 0)), Some(2));
        assert_eq!(calls.calls_left(&spent(0, 5, 0)), Some(0));
        let e = calls.out_of_calls(&spent(0, 3, 0), 2);
        assert!(e.message.contains("max_tool_calls of 3"), "{}", e.message);

        let time = limits(RunBudget {
            max_run_seconds: Some(2),
            ..RunBudget::default()
        });
        assert_eq!(time.deadline(), Some(time.started + Duration::from_secs(2)));
        let parked = RunLimits {
            parked: Duration::from_secs(7),
            ..time
        };
        assert_eq!(
            parked.deadline(),
            Some(time.started + Duration::from_secs(9)),
            "time waiting for the parent is not counted"
        );
        assert_eq!(time.before_request(&spent(0, 0, 0)), None);
        tokio::time::advance(Duration::from_secs(2)).await;
        let late = time.before_request(&spent(0, 0, 0)).unwrap();
        assert!(
            late.message.contains("max_run_seconds of 2 s"),
            "{}",
            late.message
        );
    }
}
