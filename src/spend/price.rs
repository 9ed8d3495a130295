//! What one model costs and what a request's tokens come to: a [`Price`] per million tokens
//! for each kind of token the providers bill apart (input, cache reads, cache writes,
//! output), with where it comes from, and [`Usd`], an amount kept in whole nanodollars so
//! that sums over a server's life stay exact and comparable.

use std::fmt;

/// An amount of US dollars, in nanodollars (10⁻⁹ USD). The cheapest price in the table,
/// $0.02 per million tokens, is 20 nanodollars a token, so a reply's cost is rounded once,
/// to less than a nanodollar, and sums never drift.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Usd {
    nanos: u64,
}

const NANOS_PER_DOLLAR: f64 = 1e9;

impl Usd {
    pub const ZERO: Usd = Usd { nanos: 0 };

    /// `dollars`, rounded to the nearest nanodollar; negative or not a number: zero.
    pub fn from_dollars(dollars: f64) -> Usd {
        let nanos = (dollars * NANOS_PER_DOLLAR).round();
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "clamped to u64's range first; NaN becomes zero"
        )]
        let nanos = if nanos.is_nan() || nanos <= 0.0 {
            0
        } else if nanos >= u64::MAX as f64 {
            u64::MAX
        } else {
            nanos as u64
        };
        Usd { nanos }
    }

    pub fn as_dollars(self) -> f64 {
        #[expect(clippy::cast_precision_loss, reason = "exact below $9 million")]
        let nanos = self.nanos as f64;
        nanos / NANOS_PER_DOLLAR
    }

    pub fn saturating_add(self, other: Usd) -> Usd {
        Usd {
            nanos: self.nanos.saturating_add(other.nanos),
        }
    }
}

/// `$0.0123`: four decimals, enough to tell a cheap run from a free one.
impl fmt::Display for Usd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "${:.4}", self.as_dollars())
    }
}

/// The tokens of one request (or of many), as the providers report them: `input` counts
/// every input token, and of them `cache_read` and `cache_write` say how many the provider
/// read from or wrote to its prompt cache (SPEC §4.3 `usage`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tokens {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
}

impl Tokens {
    /// What `--max-tokens` counts: every input token, cache reads and writes included, and
    /// every output token (SPEC §5.1).
    pub fn total(&self) -> u64 {
        self.input.saturating_add(self.output)
    }
}

/// What a model costs, in USD per million tokens of each kind, and where that comes from.
#[derive(Debug, Clone, PartialEq)]
pub struct Price {
    /// Input tokens read neither from nor into the prompt cache.
    pub input: f64,
    /// Input tokens read from the prompt cache (Anthropic's "cache hits", OpenAI's "cached
    /// input").
    pub cache_read: f64,
    /// Input tokens written to the prompt cache: Anthropic's 5-minute cache writes (the
    /// only kind this server asks for); OpenAI bills no write, so its rows say the input
    /// price.
    pub cache_write: f64,
    pub output: f64,
    /// Where the price was read and when (`Anthropic's pricing page, read 2026-12-06`; a
    /// `--prices` file's path and entry).
    pub source: String,
}

impl Price {
    /// What `tokens` cost at this price: each input token at the rate its kind is billed at
    /// (read from the cache, written to it, or neither), and every output token.
    pub fn cost(&self, tokens: &Tokens) -> Usd {
        let plain = tokens
            .input
            .saturating_sub(tokens.cache_read)
            .saturating_sub(tokens.cache_write);
        #[expect(clippy::cast_precision_loss, reason = "token counts far below 2^52")]
        let per_million = plain as f64 * self.input
            + tokens.cache_read as f64 * self.cache_read
            + tokens.cache_write as f64 * self.cache_write
            + tokens.output as f64 * self.output;
        Usd::from_dollars(per_million / 1e6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn price() -> Price {
        Price {
            input: 2.0,
            cache_read: 0.1,
            cache_write: 2.5,
            output: 10.0,
            source: "test".into(),
        }
    }

    #[test]
    fn each_kind_of_input_token_is_billed_at_its_own_rate() {
        let tokens = Tokens {
            input: 10_000,
            output: 1_000,
            cache_read: 6_000,
            cache_write: 2_000,
        };
        // 2,000 plain × $2 + 6,000 read × $0.10 + 2,000 written × $2.50 + 1,000 out × $10,
        // per million: $0.004 + $0.0006 + $0.005 + $0.01.
        assert_eq!(price().cost(&tokens), Usd::from_dollars(0.0196));
        assert_eq!(price().cost(&tokens).to_string(), "$0.0196");
        assert_eq!(tokens.total(), 11_000);
    }

    #[test]
    fn amounts_round_to_nanodollars_and_never_go_negative_or_wrap() {
        assert_eq!(Usd::from_dollars(-1.0), Usd::ZERO);
        assert_eq!(Usd::from_dollars(f64::NAN), Usd::ZERO);
        assert_eq!(
            Usd::from_dollars(f64::INFINITY).as_dollars(),
            u64::MAX as f64 / 1e9
        );
        assert_eq!(Usd::from_dollars(0.000_000_000_4), Usd::ZERO);
        assert_eq!(Usd::from_dollars(1.5).as_dollars(), 1.5);
        let most = Usd::from_dollars(f64::MAX);
        assert_eq!(most.saturating_add(most), most);
        // A reported count larger than the input it is part of costs no negative tokens.
        let odd = Tokens {
            input: 5,
            cache_read: 9,
            ..Tokens::default()
        };
        assert_eq!(price().cost(&odd), Usd::from_dollars(9.0 * 0.1 / 1e6));
    }
}
