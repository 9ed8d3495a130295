//! The built-in prices (SPEC §5.1): for the models of the model table
//! (`discovery::model_table`, `providers::models`) whose price could be read from a public
//! source, each row with that source and the day it was read. A model whose price could not
//! be sourced is not here, never estimated from its neighbours: its records say it has no
//! price, and `--prices FILE` can give one. Left out for that reason (docs/decisions.md,
//! "Prices"): Claude Opus 5.5, Fable 5.2 and Mythos 5.2 (no cache-write price published
//! where we could read it), Claude Haiku 5.5 (billed at five times the rate for a prompt past
//! 100,000 tokens, which one price per token cannot say), Claude Sonnet 4.6, the GPT-5.5 and
//! GPT-5.4 `pro` models (no cached-input price), Gemini models, and retired models.
//!
//! Anthropic's cache-write column is the 5-minute write, the only lifetime this server asks
//! for (`cache_control: {"type": "ephemeral"}`). OpenAI bills no cache write: its rows
//! price a written token as plain input. OpenAI's standard rates hold below 270K tokens of
//! context (its pricing page); longer prompts cost more than these rows say.

/// Where a row's numbers were read.
pub(super) struct Source {
    pub(super) what: &'static str,
    pub(super) read: &'static str,
}

const ANTHROPIC_PRICING: Source = Source {
    what: "Anthropic's pricing page, \"Model pricing\" \
           (platform.claude.com/docs/en/about-claude/pricing)",
    read: "2026-12-06",
};
const SONNET_5_PAGE: Source = Source {
    what: "Anthropic's Claude Sonnet 5 model page, \"Pricing\" \
           (platform.claude.com/docs/models/sonnet-5/overview)",
    read: "2026-12-06",
};
const SONNET_5_5_PAGE: Source = Source {
    what: "Anthropic's Claude Sonnet 5.5 model page, \"Pricing\" \
           (platform.claude.com/docs/models/sonnet-5-5/overview), with cache hits at $0.10 \
           since Anthropic's cut of 2026-10-07 (as price tables checked against \
           platform.claude.com on 2026-10-24 and 2026-12-01 record it)",
    read: "2026-12-06",
};
const CLAUDE_PRICING_JANUARY: Source = Source {
    what: "claude.com/pricing, as quoted with its date by d-kimuson/claude-code-viewer \
           (src/server/core/session/constants/pricing.ts, \"Last updated: 2026-01-08\")",
    read: "2026-12-06",
};
const OPENAI_PRICING: Source = Source {
    what: "OpenAI's API pricing page, standard tier \
           (developers.openai.com/api/docs/pricing), as quoted on 2026-06-04 by \
           tokenmix.ai and in June 2026 by morphllm.com",
    read: "2026-12-06",
};

/// One model's row: its id as the provider spells it, USD per million tokens of input,
/// cache reads, cache writes and output, and the source.
pub(super) struct Row {
    pub(super) id: &'static str,
    pub(super) input: f64,
    pub(super) cache_read: f64,
    pub(super) cache_write: f64,
    pub(super) output: f64,
    pub(super) source: &'static Source,
}

const fn row(
    id: &'static str,
    [input, cache_read, cache_write, output]: [f64; 4],
    source: &'static Source,
) -> Row {
    Row {
        id,
        input,
        cache_read,
        cache_write,
        output,
        source,
    }
}

/// The built-in rows. A row matches its id, its id with a date (`-20250929`,
/// `-2026-03-05`) and `-latest` (`providers::models` matches the same way).
pub(super) static ROWS: &[Row] = &[
    // Anthropic: input, cache hits, 5-minute cache writes, output.
    row(
        "claude-fable-5-1",
        [10.0, 0.25, 12.5, 50.0],
        &ANTHROPIC_PRICING,
    ),
    row(
        "claude-mythos-5-1",
        [10.0, 0.25, 12.5, 50.0],
        &ANTHROPIC_PRICING,
    ),
    row(
        "claude-fable-5",
        [10.0, 1.0, 12.5, 50.0],
        &ANTHROPIC_PRICING,
    ),
    row(
        "claude-mythos-5",
        [10.0, 1.0, 12.5, 50.0],
        &ANTHROPIC_PRICING,
    ),
    row("claude-opus-5", [5.0, 0.5, 6.25, 25.0], &ANTHROPIC_PRICING),
    row(
        "claude-opus-4-8",
        [5.0, 0.5, 6.25, 25.0],
        &ANTHROPIC_PRICING,
    ),
    row(
        "claude-opus-4-7",
        [5.0, 0.5, 6.25, 25.0],
        &ANTHROPIC_PRICING,
    ),
    row(
        "claude-opus-4-6",
        [5.0, 0.5, 6.25, 25.0],
        &ANTHROPIC_PRICING,
    ),
    row(
        "claude-opus-4-5",
        [5.0, 0.5, 6.25, 25.0],
        &ANTHROPIC_PRICING,
    ),
    row("claude-sonnet-5-5", [2.0, 0.1, 2.5, 10.0], &SONNET_5_5_PAGE),
    row("claude-sonnet-5", [2.0, 0.2, 2.5, 10.0], &SONNET_5_PAGE),
    row(
        "claude-haiku-4-5",
        [1.0, 0.1, 1.25, 5.0],
        &CLAUDE_PRICING_JANUARY,
    ),
    // OpenAI: input, cached input, input again (no write is billed), output.
    row("gpt-5.5", [5.0, 0.5, 5.0, 30.0], &OPENAI_PRICING),
    row("gpt-5.4", [2.5, 0.25, 2.5, 15.0], &OPENAI_PRICING),
    row("gpt-5.4-mini", [0.75, 0.075, 0.75, 4.5], &OPENAI_PRICING),
    row("gpt-5.4-nano", [0.2, 0.02, 0.2, 1.25], &OPENAI_PRICING),
];

/// The row of `model`, if the table has one.
pub(super) fn find(model: &str) -> Option<&'static Row> {
    ROWS.iter().find(|row| {
        model == row.id
            || model.strip_prefix(row.id).is_some_and(|rest| {
                rest == "-latest"
                    || rest
                        .strip_prefix("-20")
                        .is_some_and(|d| d.starts_with(|c: char| c.is_ascii_digit()))
            })
    })
}

impl Row {
    /// "Anthropic's pricing page, … (…), read 2026-12-06".
    pub(super) fn source_text(&self) -> String {
        format!("{}, read {}", self.source.what, self.source.read)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_matches_its_id_dated_and_latest_but_never_a_neighbour() {
        assert_eq!(find("claude-opus-5").unwrap().id, "claude-opus-5");
        assert_eq!(
            find("claude-sonnet-5-20260724").unwrap().id,
            "claude-sonnet-5"
        );
        assert_eq!(find("gpt-5.4-2026-03-05").unwrap().id, "gpt-5.4");
        assert_eq!(
            find("claude-haiku-4-5-latest").unwrap().id,
            "claude-haiku-4-5"
        );
        assert_eq!(find("gpt-5.4-mini").unwrap().id, "gpt-5.4-mini");
        assert!(find("claude-opus-5-5").is_none(), "Opus 5.5 is not Opus 5");
        assert!(find("claude-haiku-5-5").is_none());
        assert!(find("gpt-5.5-pro").is_none());
        assert!(find("mock-model").is_none());
    }

    #[test]
    fn every_row_is_reachable_sourced_and_sane() {
        for row in ROWS {
            assert_eq!(find(row.id).unwrap().id, row.id);
            assert!(row.source_text().contains(", read 2026-"), "{}", row.id);
            let prices = [row.input, row.cache_read, row.cache_write, row.output];
            assert!(prices.iter().all(|p| *p > 0.0), "{}", row.id);
            assert!(
                row.cache_read < row.input,
                "{}: a cache hit is cheaper",
                row.id
            );
            assert!(row.output > row.input, "{}", row.id);
        }
    }
}
