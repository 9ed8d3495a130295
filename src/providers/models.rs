//! What a model takes, by its id: the kind of thinking a Claude model accepts on Messages,
//! the reasoning effort levels a model accepts, and the thinking budget an effort stands for
//! where a model takes a budget only (SPEC §6.1 "Parameters a model refuses"). The one table
//! of these facts, each row with its source; docs/agents.md shows it.
//!
//! Sources: Anthropic's thinking troubleshooting page ("Thinking support, defaults, and
//! rejected configurations by model": Opus 4.5, Haiku 4.5, Sonnet 4.5 and the earlier Claude 4
//! models take only `thinking: {type: "enabled", budget_tokens}` and refuse adaptive thinking
//! with "adaptive thinking is not supported on this model"; Opus and Sonnet 4.6 take both;
//! Opus 4.7 and later and the Claude 5 family take adaptive only), Anthropic's effort page
//! (which models take `output_config.effort` and which levels: Opus 4.5 is "the only
//! extended-thinking-only model that supports effort", low to high; Sonnet and Haiku 4.5
//! answer "This model does not support the effort parameter."), the levels OpenAI's own
//! 400s list for each model ("Supported values are: …", openai/openai-agents-python#2089 and
//! recorded probes), and those Gemini's OpenAI-compatible endpoint takes. A model not in the table is sent what its definition says, and a
//! refusal teaches the session the rest (`unsupported`).

use crate::definition::ReasoningEffort;
use crate::limits::{THINKING_BUDGET_MAX, THINKING_BUDGET_MIN};

/// The thinking a Messages model takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ThinkingKind {
    /// `thinking: {type: "adaptive"}`: the model decides how much, guided by the effort.
    Adaptive,
    /// `thinking: {type: "enabled", budget_tokens}`: a budget the effort is turned into.
    Budget,
}

impl ThinkingKind {
    /// The other kind, tried when a model refuses this one.
    pub(crate) fn other(self) -> ThinkingKind {
        match self {
            ThinkingKind::Adaptive => ThinkingKind::Budget,
            ThinkingKind::Budget => ThinkingKind::Adaptive,
        }
    }
}

/// A set of effort levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EffortLevels(u8);

impl EffortLevels {
    pub const NONE: EffortLevels = EffortLevels(0);

    /// The set of `levels`.
    pub const fn of(levels: &[ReasoningEffort]) -> EffortLevels {
        let mut bits = 0u8;
        let mut i = 0;
        while i < levels.len() {
            bits |= 1 << rank(levels[i]);
            i += 1;
        }
        EffortLevels(bits)
    }

    pub fn contains(self, level: ReasoningEffort) -> bool {
        self.0 & (1 << rank(level)) != 0
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The levels named in `names` (any order, unknown names skipped).
    pub fn from_names<'a>(names: impl IntoIterator<Item = &'a str>) -> EffortLevels {
        let levels: Vec<ReasoningEffort> = names
            .into_iter()
            .filter_map(|n| ReasoningEffort::parse(n.trim()))
            .collect();
        EffortLevels::of(&levels)
    }

    /// The levels, from the least effort to the most.
    pub fn iter(self) -> impl Iterator<Item = ReasoningEffort> {
        ReasoningEffort::ALL
            .into_iter()
            .map(|(_, level)| level)
            .filter(move |level| self.contains(*level))
    }

    /// The accepted level nearest to `wanted` (the lower one of two as near: never more
    /// effort than asked for when less is as close); `None` for an empty set.
    pub fn nearest(self, wanted: ReasoningEffort) -> Option<ReasoningEffort> {
        self.iter().min_by_key(|level| {
            let distance = rank(*level).abs_diff(rank(wanted));
            (distance, rank(*level) > rank(wanted))
        })
    }

    /// "low, medium, high".
    pub fn names(self) -> String {
        self.iter()
            .map(ReasoningEffort::as_str)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// A level's place from the least effort (`none`) to the most (`max`).
const fn rank(level: ReasoningEffort) -> u8 {
    match level {
        ReasoningEffort::None => 0,
        ReasoningEffort::Minimal => 1,
        ReasoningEffort::Low => 2,
        ReasoningEffort::Medium => 3,
        ReasoningEffort::High => 4,
        ReasoningEffort::XHigh => 5,
        ReasoningEffort::Max => 6,
    }
}

/// Whether a model takes a reasoning effort, and which levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EffortSupport {
    /// These levels.
    Levels(EffortLevels),
    /// No effort parameter at all: on Messages the effort becomes a thinking budget instead.
    Refused,
}

/// What one model takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ModelTraits {
    /// On Messages (Claude models); `None` for models of other families.
    pub(crate) thinking: Option<ThinkingKind>,
    pub(crate) effort: EffortSupport,
}

use ReasoningEffort::{High, Low, Max, Medium, Minimal, None as NoEffort, XHigh};

const LOW_TO_HIGH: EffortLevels = EffortLevels::of(&[Low, Medium, High]);
const LOW_TO_MAX_BUT_XHIGH: EffortLevels = EffortLevels::of(&[Low, Medium, High, Max]);
const LOW_TO_MAX: EffortLevels = EffortLevels::of(&[Low, Medium, High, XHigh, Max]);
const NONE_TO_HIGH: EffortLevels = EffortLevels::of(&[NoEffort, Low, Medium, High]);
const NONE_TO_XHIGH: EffortLevels = EffortLevels::of(&[NoEffort, Low, Medium, High, XHigh]);

const fn claude(thinking: ThinkingKind, effort: EffortSupport) -> ModelTraits {
    ModelTraits {
        thinking: Some(thinking),
        effort,
    }
}

const fn openai(levels: EffortLevels) -> ModelTraits {
    ModelTraits {
        thinking: None,
        effort: EffortSupport::Levels(levels),
    }
}

const BUDGET_ONLY: ModelTraits = claude(ThinkingKind::Budget, EffortSupport::Refused);

/// Models by id: a row matches the id itself, the id with a date (`-20250929`), and
/// `-latest`, so a later model of the family is never taken for an earlier one.
pub(crate) const MODEL_TRAITS: &[(&str, ModelTraits)] = &[
    // Extended (budget) thinking only; effort with it only on Opus 4.5.
    (
        "claude-opus-4-5",
        claude(ThinkingKind::Budget, EffortSupport::Levels(LOW_TO_HIGH)),
    ),
    ("claude-sonnet-4-5", BUDGET_ONLY),
    ("claude-haiku-4-5", BUDGET_ONLY),
    ("claude-opus-4-1", BUDGET_ONLY),
    ("claude-opus-4-0", BUDGET_ONLY),
    ("claude-opus-4", BUDGET_ONLY),
    ("claude-sonnet-4-0", BUDGET_ONLY),
    ("claude-sonnet-4", BUDGET_ONLY),
    ("claude-3-7-sonnet", BUDGET_ONLY),
    // Adaptive thinking (budget thinking deprecated), effort up to max but not xhigh.
    (
        "claude-opus-4-6",
        claude(
            ThinkingKind::Adaptive,
            EffortSupport::Levels(LOW_TO_MAX_BUT_XHIGH),
        ),
    ),
    (
        "claude-sonnet-4-6",
        claude(
            ThinkingKind::Adaptive,
            EffortSupport::Levels(LOW_TO_MAX_BUT_XHIGH),
        ),
    ),
    (
        "claude-mythos-preview",
        claude(
            ThinkingKind::Adaptive,
            EffortSupport::Levels(LOW_TO_MAX_BUT_XHIGH),
        ),
    ),
    // Adaptive thinking only, every level.
    (
        "claude-opus-4-7",
        claude(ThinkingKind::Adaptive, EffortSupport::Levels(LOW_TO_MAX)),
    ),
    (
        "claude-opus-4-8",
        claude(ThinkingKind::Adaptive, EffortSupport::Levels(LOW_TO_MAX)),
    ),
    // OpenAI reasoning models, by the levels their refusals list.
    ("o1", openai(LOW_TO_HIGH)),
    ("o1-pro", openai(LOW_TO_HIGH)),
    ("o3", openai(LOW_TO_HIGH)),
    ("o3-mini", openai(LOW_TO_HIGH)),
    ("o4-mini", openai(LOW_TO_HIGH)),
    (
        "gpt-5",
        openai(EffortLevels::of(&[Minimal, Low, Medium, High])),
    ),
    (
        "gpt-5-mini",
        openai(EffortLevels::of(&[Minimal, Low, Medium, High])),
    ),
    (
        "gpt-5-nano",
        openai(EffortLevels::of(&[Minimal, Low, Medium, High])),
    ),
    ("gpt-5-pro", openai(EffortLevels::of(&[High]))),
    ("gpt-5-codex", openai(LOW_TO_HIGH)),
    ("gpt-5.1", openai(NONE_TO_HIGH)),
    (
        "gpt-5.1-codex-max",
        openai(EffortLevels::of(&[Low, Medium, High, XHigh])),
    ),
    ("gpt-5.2", openai(NONE_TO_XHIGH)),
    ("gpt-5.2-chat-latest", openai(EffortLevels::of(&[Medium]))),
    (
        "gpt-5.2-pro",
        openai(EffortLevels::of(&[Medium, High, XHigh])),
    ),
    ("gpt-5.3-codex", openai(NONE_TO_XHIGH)),
    ("gpt-5.3-chat-latest", openai(EffortLevels::of(&[Medium]))),
    ("gpt-5.4", openai(NONE_TO_XHIGH)),
    ("gpt-5.4-mini", openai(NONE_TO_XHIGH)),
    ("gpt-5.4-nano", openai(NONE_TO_XHIGH)),
    (
        "gpt-5.4-pro",
        openai(EffortLevels::of(&[Medium, High, XHigh])),
    ),
    ("gpt-5.5", openai(NONE_TO_XHIGH)),
    (
        "gpt-5.5-pro",
        openai(EffortLevels::of(&[Medium, High, XHigh])),
    ),
    // Gemini 3 on its OpenAI-compatible endpoint, by what its refusals and forum reports say:
    // Flash "Valid values are: high, low, medium, none" (`minimal` refused despite the docs,
    // discuss.ai.google.dev/t/117875); Pro "Thinking level MEDIUM is not supported for this
    // model" and no way to turn thinking off (/t/112648).
    ("gemini-3-flash-preview", openai(NONE_TO_HIGH)),
    (
        "gemini-3-pro-preview",
        openai(EffortLevels::of(&[Low, High])),
    ),
];

/// The Claude 5 family, whose ids the table cannot list ahead: adaptive thinking, every
/// level (Anthropic's effort page).
const CLAUDE_5_FAMILIES: &[&str] = &[
    "claude-opus-5",
    "claude-sonnet-5",
    "claude-haiku-5",
    "claude-fable-5",
    "claude-mythos-5",
];

/// `model` as the tables spell it: a gateway's id read from after its last `/`
/// (`anthropic/claude-sonnet-4.5`) or from `claude-` on (Bedrock's
/// `us.anthropic.claude-sonnet-4-5-20250929-v1:0`), with dots in a Claude version read as
/// dashes.
pub(crate) fn table_id(model: &str) -> String {
    let id = model.rsplit('/').next().unwrap_or(model);
    match id.find("claude-") {
        Some(at) => id[at..].replace('.', "-"),
        None => id.to_owned(),
    }
}

/// The model's row, if the table knows it, by its id as the table spells it ([`table_id`]).
pub(crate) fn traits(model: &str) -> Option<ModelTraits> {
    let id = table_id(model);
    if let Some((_, traits)) = MODEL_TRAITS.iter().find(|(key, _)| {
        id == *key
            || id.strip_prefix(key).is_some_and(|rest| {
                rest == "-latest"
                    || rest
                        .strip_prefix("-20")
                        .is_some_and(|d| d.starts_with(|c: char| c.is_ascii_digit()))
            })
    }) {
        return Some(*traits);
    }
    CLAUDE_5_FAMILIES
        .iter()
        .any(|family| id.starts_with(family))
        .then_some(claude(
            ThinkingKind::Adaptive,
            EffortSupport::Levels(LOW_TO_MAX),
        ))
}

/// The level to send instead of `wanted` when the table knows `model` does not take it
/// (Opus 4.5 `max`, Opus 4.6 `xhigh`), with the levels it takes; `None` when the table does
/// not know the model, or the model takes `wanted`. The nearest level, as a refusal would
/// teach it ([`EffortLevels::nearest`]), but before any request is refused.
pub(crate) fn effort_instead(
    model: &str,
    wanted: ReasoningEffort,
) -> Option<(ReasoningEffort, EffortLevels)> {
    let EffortSupport::Levels(levels) = traits(model)?.effort else {
        return None;
    };
    let nearest = levels.nearest(wanted).filter(|level| *level != wanted)?;
    Some((nearest, levels))
}

/// The thinking kind a Messages request for `model` asks for first: the table's, else
/// adaptive (the current models' only kind).
pub(crate) fn preferred_thinking(model: &str) -> ThinkingKind {
    traits(model)
        .and_then(|t| t.thinking)
        .unwrap_or(ThinkingKind::Adaptive)
}

/// The part of `max_tokens` each effort gives to thinking when the model takes a budget:
/// OpenRouter's documented mapping of effort to `budget_tokens` (its reasoning-tokens page:
/// low 0.2, medium 0.5, high 0.8, and 0.95 above; Anthropic documents none).
fn budget_share(effort: ReasoningEffort) -> f64 {
    match effort {
        ReasoningEffort::None | ReasoningEffort::Minimal | ReasoningEffort::Low => 0.2,
        ReasoningEffort::Medium => 0.5,
        ReasoningEffort::High => 0.8,
        ReasoningEffort::XHigh | ReasoningEffort::Max => 0.95,
    }
}

/// The `budget_tokens` an effort stands for with `max_tokens`: its share, at least
/// [`THINKING_BUDGET_MIN`] (the API's minimum) and at most [`THINKING_BUDGET_MAX`], and
/// always below `max_tokens`, as the API requires; `None` when `max_tokens` leaves no room
/// for the minimum.
pub fn thinking_budget(effort: ReasoningEffort, max_tokens: u32) -> Option<u32> {
    if max_tokens <= THINKING_BUDGET_MIN {
        return None;
    }
    let share = (f64::from(max_tokens) * budget_share(effort)) as u32;
    Some(
        share
            .clamp(THINKING_BUDGET_MIN, THINKING_BUDGET_MAX)
            .min(max_tokens - 1),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_are_found_by_id_date_and_gateway_spelling() {
        let budget = Some(ThinkingKind::Budget);
        for id in [
            "claude-sonnet-4-5",
            "claude-sonnet-4-5-20250929",
            "anthropic/claude-sonnet-4.5",
            "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
            "claude-opus-4-20250514",
            "claude-3-7-sonnet-latest",
        ] {
            assert_eq!(traits(id).and_then(|t| t.thinking), budget, "{id}");
        }
        assert_eq!(
            preferred_thinking("claude-opus-4-6"),
            ThinkingKind::Adaptive
        );
        assert_eq!(
            preferred_thinking("claude-opus-5-5"),
            ThinkingKind::Adaptive
        );
        assert_eq!(
            preferred_thinking("claude-opus-4-9"),
            ThinkingKind::Adaptive,
            "a later model is not taken for an earlier one"
        );
        assert_eq!(preferred_thinking("qwen3"), ThinkingKind::Adaptive);
        assert_eq!(
            traits("claude-opus-4-5").map(|t| t.effort),
            Some(EffortSupport::Levels(LOW_TO_HIGH))
        );
        assert_eq!(
            traits("claude-haiku-4-5-20251001").map(|t| t.effort),
            Some(EffortSupport::Refused)
        );
        assert!(traits("gpt-5.4-2026-03-05").is_some(), "a dated OpenAI id");
        assert_eq!(
            traits("gemini-3-pro-preview").map(|t| t.effort),
            Some(EffortSupport::Levels(EffortLevels::of(&[Low, High])))
        );
        assert_eq!(
            traits("openai/gpt-5").map(|t| t.effort),
            Some(EffortSupport::Levels(EffortLevels::of(&[
                Minimal, Low, Medium, High
            ])))
        );
    }

    #[test]
    fn levels_the_table_knows_are_refused_are_lowered_before_any_request() {
        assert_eq!(
            effort_instead("claude-opus-4-5", Max),
            Some((High, LOW_TO_HIGH))
        );
        assert_eq!(
            effort_instead("claude-opus-4-6-20260205", XHigh).map(|(l, _)| l),
            Some(High)
        );
        assert_eq!(effort_instead("claude-opus-4-6", Max), None, "it takes max");
        assert_eq!(effort_instead("claude-opus-4-7", XHigh), None);
        assert_eq!(
            effort_instead("claude-sonnet-4-5", High),
            None,
            "no effort parameter at all: the budget carries it"
        );
        assert_eq!(effort_instead("corp-claude", Max), None, "not in the table");
    }

    #[test]
    fn the_nearest_level_is_the_closest_and_the_lower_of_two() {
        let nearest = |levels: EffortLevels, wanted| levels.nearest(wanted);
        assert_eq!(nearest(LOW_TO_MAX_BUT_XHIGH, XHigh), Some(High));
        assert_eq!(nearest(LOW_TO_HIGH, Max), Some(High));
        assert_eq!(nearest(NONE_TO_XHIGH, Max), Some(XHigh));
        assert_eq!(nearest(LOW_TO_HIGH, Minimal), Some(Low));
        assert_eq!(
            nearest(EffortLevels::of(&[Minimal, Low, Medium, High]), NoEffort),
            Some(Minimal)
        );
        assert_eq!(nearest(EffortLevels::NONE, High), None);
        assert_eq!(
            EffortLevels::from_names(["high", " low", "max", "medium", "bogus"]).names(),
            "low, medium, high, max"
        );
    }

    #[test]
    fn budgets_follow_the_effort_and_stay_below_max_tokens() {
        assert_eq!(thinking_budget(Low, 64_000), Some(12_800));
        assert_eq!(thinking_budget(High, 64_000), Some(THINKING_BUDGET_MAX));
        assert_eq!(thinking_budget(Medium, 4_000), Some(2_000));
        assert_eq!(thinking_budget(Low, 2_000), Some(THINKING_BUDGET_MIN));
        assert_eq!(thinking_budget(Max, 1_100), Some(1_045));
        assert_eq!(thinking_budget(Low, 1_025), Some(1_024));
        assert_eq!(thinking_budget(High, 1_024), None);
        for max_tokens in [1_025, 2_000, 10_000, 64_000, 128_000] {
            for (_, effort) in ReasoningEffort::ALL {
                let budget = thinking_budget(effort, max_tokens).unwrap();
                assert!((THINKING_BUDGET_MIN..max_tokens).contains(&budget));
            }
        }
    }
}
