//! The server's spend over its life and the caps the person who runs it set (SPEC §5.1):
//! `--max-tokens` counts every input token (cache reads and writes included) and every
//! output token of every run; `--max-cost-usd` counts what those tokens cost at the
//! models' prices. Before each provider request, and before a spawn or a resume, the spend
//! so far is held against the caps: once one is reached, nothing asks a provider again.
//! Replies already in flight still land and count, so a cap is overshot by at most them.

use std::sync::Mutex;

use serde_json::{Value, json};

use super::price::{Price, Tokens, Usd};
use super::prices::PriceTable;
use crate::error::{AgentError, ErrorCode};

/// The caps, as set on the command line; `None`: no cap.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SpendCaps {
    pub max_tokens: Option<u64>,
    pub max_cost: Option<Usd>,
}

/// What the server has spent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Spent {
    tokens: u64,
    cost: Usd,
    /// Tokens of models without a price: counted in `tokens`, not in `cost`.
    unpriced_tokens: u64,
}

/// Who can raise a cap, and how: never a definition, never the parent.
const RAISE: &str = "only the person who runs the server can raise it, by restarting it with \
    a higher cap; until then no agent can be spawned or resumed";

/// The server's spend and caps, shared by every run.
#[derive(Debug, Default)]
pub struct ServerSpend {
    caps: SpendCaps,
    prices: PriceTable,
    spent: Mutex<Spent>,
}

impl ServerSpend {
    pub fn new(caps: SpendCaps, prices: PriceTable) -> Self {
        ServerSpend {
            caps,
            prices,
            spent: Mutex::new(Spent::default()),
        }
    }

    /// No cap, the built-in prices: what the server does when nobody set anything.
    pub fn unlimited() -> Self {
        ServerSpend::default()
    }

    pub fn caps(&self) -> SpendCaps {
        self.caps
    }

    pub fn prices(&self) -> &PriceTable {
        &self.prices
    }

    fn spent(&self) -> Spent {
        *self.spent.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Before a spawn or a resume of an agent on `model` at `provider`: refused once a cap
    /// is reached, or under a cost cap when the model has no price (its spend could not be
    /// counted). The model's price otherwise, if it has one.
    pub fn admit(&self, provider: &str, model: &str) -> Result<Option<Price>, AgentError> {
        self.check()?;
        let price = self.prices.lookup(provider, model);
        if price.is_none()
            && let Some(max) = self.caps.max_cost
        {
            return Err(AgentError::new(
                ErrorCode::BudgetExceeded,
                format!(
                    "the server caps its spend at {max} (--max-cost-usd) and no price is known \
                     for the model `{model}` (provider {provider}), so what it costs could not \
                     be counted; the person who runs the server can give its price with \
                     --prices FILE (LiteLLM's model_prices_and_context_window.json format) or \
                     run without --max-cost-usd"
                ),
            ));
        }
        Ok(price)
    }

    /// Before a provider request: `budget_exceeded` naming the cap and what was spent, once
    /// a cap is reached.
    pub fn check(&self) -> Result<(), AgentError> {
        let spent = self.spent();
        if let Some(max) = self.caps.max_tokens
            && spent.tokens >= max
        {
            return Err(AgentError::new(
                ErrorCode::BudgetExceeded,
                format!(
                    "the server has used {} tokens over all its runs (input, cache reads and \
                     writes included, and output), reaching its --max-tokens of {max}, so no \
                     further model request is made; {RAISE}",
                    spent.tokens
                ),
            ));
        }
        if let Some(max) = self.caps.max_cost
            && spent.cost >= max
        {
            return Err(AgentError::new(
                ErrorCode::BudgetExceeded,
                format!(
                    "the server has spent {} over all its runs (at the models' prices, cache \
                     reads and writes as billed), reaching its --max-cost-usd of {max}, so no \
                     further model request is made; {RAISE}",
                    spent.cost
                ),
            ));
        }
        Ok(())
    }

    /// A reply's tokens, and their cost when the model has a price.
    pub fn record(&self, tokens: &Tokens, cost: Option<Usd>) {
        let mut spent = self.spent.lock().unwrap_or_else(|p| p.into_inner());
        spent.tokens = spent.tokens.saturating_add(tokens.total());
        match cost {
            Some(cost) => spent.cost = spent.cost.saturating_add(cost),
            None => spent.unpriced_tokens = spent.unpriced_tokens.saturating_add(tokens.total()),
        }
    }

    /// `server_spend` (SPEC §5.1): `tokens`, `cost_usd` and the caps set, with
    /// `unpriced_tokens` when some tokens had no price (so `cost_usd` leaves them out).
    pub fn report(&self) -> Value {
        let spent = self.spent();
        let mut report = json!({"tokens": spent.tokens, "cost_usd": spent.cost.as_dollars()});
        if spent.unpriced_tokens > 0 {
            report["unpriced_tokens"] = json!(spent.unpriced_tokens);
        }
        if let Some(max) = self.caps.max_tokens {
            report["max_tokens"] = json!(max);
        }
        if let Some(max) = self.caps.max_cost {
            report["max_cost_usd"] = json!(max.as_dollars());
        }
        report
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(input: u64, output: u64) -> Tokens {
        Tokens {
            input,
            output,
            ..Tokens::default()
        }
    }

    #[test]
    fn a_token_cap_refuses_once_reached_and_names_itself_and_the_spend() {
        let spend = ServerSpend::new(
            SpendCaps {
                max_tokens: Some(1_000),
                max_cost: None,
            },
            PriceTable::builtin(),
        );
        spend.record(&tokens(900, 99), None);
        assert!(spend.check().is_ok(), "999 of 1000");
        spend.record(&tokens(1, 0), None);
        let e = spend.check().unwrap_err();
        assert_eq!(e.code, ErrorCode::BudgetExceeded);
        assert!(e.message.contains("used 1000 tokens"), "{}", e.message);
        assert!(e.message.contains("--max-tokens of 1000"), "{}", e.message);
        let e = spend.admit("openai", "gpt-5.4").unwrap_err();
        assert_eq!(e.code, ErrorCode::BudgetExceeded);
        assert_eq!(
            spend.report(),
            json!({"tokens": 1000, "cost_usd": 0.0, "unpriced_tokens": 1000, "max_tokens": 1000})
        );
    }

    #[test]
    fn a_cost_cap_counts_priced_tokens_and_refuses_models_without_a_price() {
        let spend = ServerSpend::new(
            SpendCaps {
                max_tokens: None,
                max_cost: Some(Usd::from_dollars(0.01)),
            },
            PriceTable::builtin(),
        );
        let price = spend.admit("openai", "gpt-5.4").unwrap().unwrap();
        let e = spend.admit("custom", "mock-model").unwrap_err();
        assert!(
            e.message
                .contains("no price is known for the model `mock-model`"),
            "{}",
            e.message
        );
        assert!(e.message.contains("--prices FILE"), "{}", e.message);
        // 4,000 input tokens at $2.50 a million: $0.01, the cap.
        let reply = tokens(4_000, 0);
        spend.record(&reply, Some(price.cost(&reply)));
        let e = spend.check().unwrap_err();
        assert!(e.message.contains("spent $0.0100"), "{}", e.message);
        assert!(
            e.message.contains("--max-cost-usd of $0.0100"),
            "{}",
            e.message
        );
        assert_eq!(spend.report()["max_cost_usd"], 0.01);
        assert_eq!(
            ServerSpend::unlimited().report(),
            json!({"tokens": 0, "cost_usd": 0.0})
        );
    }
}
