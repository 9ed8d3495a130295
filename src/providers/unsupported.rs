//! Optional request parameters a model refuses (SPEC §6.1 "Parameters a model refuses"): how
//! a refusal is recognised, and what a session has learned from them ([`Learned`]).
//!
//! A 400 that names an optional parameter as unsupported for the model (`temperature`, the
//! `include` of encrypted reasoning, reasoning effort, a kind of thinking) is retried once
//! without it, and the session's later requests leave it out too; a refused kind of thinking
//! is replaced by the other kind first. A 400 that refuses an effort *level* is retried once
//! with the nearest level the model takes, from the levels the refusal lists (both providers
//! list them) or the model table (`models`). What the providers say, as reported:
//!
//! | parameter | provider | the refusal |
//! | --- | --- | --- |
//! | `temperature` | OpenAI reasoning models | `param: "temperature"`, "Unsupported parameter: 'temperature' is not supported with this model." (code `unsupported_parameter`), or "Unsupported value: 'temperature' does not support 0.1 …" |
//! | `temperature` | Anthropic, Opus 4.7 and later | "`temperature` is deprecated for this model." |
//! | `include` | OpenAI non-reasoning models | `param: "include"`, "Encrypted content is not supported with this model." |
//! | effort | OpenAI | `param: "reasoning.effort"`, "Unsupported parameter: 'reasoning.effort' …" |
//! | effort | Anthropic | "This model does not support the effort parameter." |
//! | effort level | OpenAI | `param: "reasoning.effort"`, code `unsupported_value`, "Unsupported value: 'minimal' is not supported with the 'gpt-5.1' model. Supported values are: 'none', 'low', 'medium', and 'high'." (openai/openai-agents-python#2089) |
//! | effort level | Anthropic | "This model does not support effort level 'xhigh'. Supported levels: high, low, max, medium." |
//! | adaptive thinking | Anthropic, Claude 4.5 and earlier | "adaptive thinking is not supported on this model" |
//! | budget thinking | Anthropic, Opus 4.7 and later | "\"thinking.type.enabled\" is not supported for this model. Use \"thinking.type.adaptive\" and \"output_config.effort\" to control thinking behavior." |
//! | effort | OpenAI Chat Completions, non-reasoning models | `param: "reasoning_effort"`, "Unsupported parameter: 'reasoning_effort' is not supported with this model." |
//! | effort level | OpenAI Chat Completions | `param: "reasoning_effort"`, "Unsupported value: 'reasoning_effort' does not support 'none' with this model. Supported values are: 'minimal', 'low', 'medium', and 'high'." (Kilo-Org/cloud#3807) |
//! | effort level | Gemini's OpenAI-compatible endpoint | "Invalid reasoning_effort: minimal. Valid values are: high, low, medium, none" (discuss.ai.google.dev/t/117875); "Thinking level MEDIUM is not supported for this model. Please retry with other thinking level" (/t/112648, lists none) |
//! | effort with tools | OpenAI Chat Completions, gpt-5.2, gpt-5.4 | `param: "reasoning_effort"`, "Function tools with reasoning_effort are not supported for gpt-5.4 in /v1/chat/completions. Please use /v1/responses instead." |
//! | effort with tools | OpenAI Chat Completions, gpt-5.6, gpt-6 (their default effort too) | "… To use function tools, use /v1/responses or set reasoning_effort to 'none'." |
//! | `max_completion_tokens` | Azure before 2024-08-01, proxies, xAI | "Unrecognized request argument supplied: max_completion_tokens"; vLLM before 0.6.4 "[{'type': 'extra_forbidden', 'loc': ('body', 'max_completion_tokens'), 'msg': 'Extra inputs are not permitted', …}]" (vllm-project/vllm#10078) |
//! | `image_url` parts | DeepSeek, a text-only llama.cpp | "… messages[7]: unknown variant \`image_url\`, expected \`text\` …", "image input is not supported - hint: …" |
//! | `stream_options` | the same servers, Fireworks, Databricks | "Unrecognized request argument supplied: stream_options", "Extra inputs are not permitted, field: 'stream_options'" (FlowiseAI/Flowise#2866), "Argument not supported on this model: stream_options" |
//!
//! A refusal of reasoning with function tools is answered as its second form says: the
//! session's requests send `reasoning_effort: "none"` from then on (the model's reasoning
//! with tools needs the Responses API, which a warning says once).
//!
//! A Chat Completions request whose `max_completion_tokens` is refused is sent again with the
//! same limit as `max_tokens`, its older name; one whose `stream_options` is refused, without
//! it (the reply then may carry no usage); one whose image parts are refused, with each
//! image replaced by a text note naming it (`chat_images`). Gemini's endpoint refuses unknown fields as
//! `Invalid JSON payload received. Unknown name "X": Cannot find field.`, also recognised.

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

use super::models::EffortLevels;
use crate::definition::ReasoningEffort;

/// An optional parameter a request may carry and a model may refuse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OptionalParam {
    /// `temperature` (both APIs).
    Temperature,
    /// Responses `include: ["reasoning.encrypted_content"]`.
    EncryptedReasoning,
    /// Responses `reasoning.effort`, Messages `output_config.effort`.
    Effort,
    /// Messages `thinking: {type: "adaptive"}`.
    AdaptiveThinking,
    /// Messages `thinking: {type: "enabled", budget_tokens}`.
    BudgetThinking,
    /// Chat Completions `max_completion_tokens`: refused, the limit goes as `max_tokens`.
    CompletionTokens,
    /// Chat Completions `stream_options: {include_usage: true}`.
    StreamUsage,
    /// Chat Completions `image_url` parts (a text-only endpoint): refused, each image goes
    /// as a text note naming it.
    ImageParts,
}

impl OptionalParam {
    pub const ALL: [OptionalParam; 8] = [
        OptionalParam::Temperature,
        OptionalParam::EncryptedReasoning,
        OptionalParam::Effort,
        OptionalParam::AdaptiveThinking,
        OptionalParam::BudgetThinking,
        OptionalParam::CompletionTokens,
        OptionalParam::StreamUsage,
        OptionalParam::ImageParts,
    ];

    fn bit(self) -> u8 {
        match self {
            OptionalParam::Temperature => 1,
            OptionalParam::EncryptedReasoning => 2,
            OptionalParam::Effort => 4,
            OptionalParam::AdaptiveThinking => 8,
            OptionalParam::BudgetThinking => 16,
            OptionalParam::CompletionTokens => 32,
            OptionalParam::StreamUsage => 64,
            OptionalParam::ImageParts => 128,
        }
    }

    /// The parameter as the request spells it.
    pub fn request_field(self) -> &'static str {
        match self {
            OptionalParam::Temperature => "temperature",
            OptionalParam::EncryptedReasoning => "include: [\"reasoning.encrypted_content\"]",
            OptionalParam::Effort => "reasoning effort",
            OptionalParam::AdaptiveThinking => "thinking: {type: \"adaptive\"}",
            OptionalParam::BudgetThinking => "thinking: {type: \"enabled\", budget_tokens}",
            OptionalParam::CompletionTokens => "max_completion_tokens",
            OptionalParam::StreamUsage => "stream_options: {include_usage: true}",
            OptionalParam::ImageParts => "image_url parts",
        }
    }

    /// What a request sends in its place once the model refused it, if anything.
    pub fn replacement(self) -> Option<&'static str> {
        match self {
            OptionalParam::CompletionTokens => Some("max_tokens"),
            OptionalParam::ImageParts => Some("a text note naming each image"),
            _ => None,
        }
    }

    /// The definition field whose value can no longer be honoured without it; none for the
    /// parameters every request of a wire carries (a model that refuses encrypted reasoning
    /// has no reasoning items to carry; the output limit still goes as `max_tokens`; without
    /// `stream_options` only the usage figures may be missing).
    pub fn definition_field(self) -> Option<&'static str> {
        match self {
            OptionalParam::Temperature => Some("temperature"),
            OptionalParam::EncryptedReasoning
            | OptionalParam::CompletionTokens
            | OptionalParam::StreamUsage
            | OptionalParam::ImageParts => None,
            OptionalParam::Effort
            | OptionalParam::AdaptiveThinking
            | OptionalParam::BudgetThinking => Some("reasoning_effort"),
        }
    }
}

/// What a session has learned its model refuses: the parameters to leave out, the effort
/// level to send instead of the definition's, and whether its server is in a thinking mode
/// that needs `reasoning_content` back on every assistant message. Shared by the runs of one
/// session through its conversation; each is learned once and never forgotten.
#[derive(Debug, Default)]
pub struct Learned {
    dropped: AtomicU8,
    /// The effort level sent instead of the definition's: 0 for none, else its place in
    /// [`ReasoningEffort::ALL`] plus one.
    effort: AtomicU8,
    /// DeepSeek refused an assistant message without `reasoning_content`: the server is in
    /// thinking mode though no reply of this session has thought yet.
    reasoning_echo: AtomicBool,
}

impl Clone for Learned {
    fn clone(&self) -> Self {
        Learned {
            dropped: AtomicU8::new(self.dropped.load(Ordering::Relaxed)),
            effort: AtomicU8::new(self.effort.load(Ordering::Relaxed)),
            reasoning_echo: AtomicBool::new(self.reasoning_echo.load(Ordering::Relaxed)),
        }
    }
}

impl Learned {
    pub fn contains(&self, param: OptionalParam) -> bool {
        self.dropped.load(Ordering::Relaxed) & param.bit() != 0
    }

    /// Adds `param`; false if it was already there.
    pub fn insert(&self, param: OptionalParam) -> bool {
        self.dropped.fetch_or(param.bit(), Ordering::Relaxed) & param.bit() == 0
    }

    /// The effort level to send instead of the definition's, once one was refused.
    pub fn effort(&self) -> Option<ReasoningEffort> {
        let slot = self.effort.load(Ordering::Relaxed);
        ReasoningEffort::ALL
            .get(usize::from(slot).checked_sub(1)?)
            .map(|(_, level)| *level)
    }

    /// Sends `level` from now on; false if a level was learned before (it is learned once).
    pub fn lower_effort(&self, level: ReasoningEffort) -> bool {
        self.effort
            .compare_exchange(0, slot(level), Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
    }

    /// Sends `level` from now on, whatever was learned before and whether or not the
    /// definition sets an effort (a refusal that says which level to send); false if that is
    /// the level sent already.
    pub fn send_effort(&self, level: ReasoningEffort) -> bool {
        self.effort.swap(slot(level), Ordering::Relaxed) != slot(level)
    }

    /// Whether every assistant message goes with `reasoning_content` (empty where the reply
    /// had none), as a refusal taught.
    pub fn echoes_reasoning(&self) -> bool {
        self.reasoning_echo.load(Ordering::Relaxed)
    }

    /// Sends `reasoning_content` on every assistant message from now on; false if it was
    /// learned before.
    pub fn echo_reasoning(&self) -> bool {
        !self.reasoning_echo.swap(true, Ordering::Relaxed)
    }
}

/// The place of `level` in [`ReasoningEffort::ALL`] plus one, as [`Learned`] keeps it.
fn slot(level: ReasoningEffort) -> u8 {
    ReasoningEffort::ALL
        .iter()
        .position(|(_, l)| *l == level)
        .map_or(0, |i| i as u8 + 1)
}

/// What a 400 refuses, when it is about an optional parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Refused {
    /// The parameter, whatever its value.
    Param(OptionalParam),
    /// The effort level sent; the levels the refusal lists (empty when it lists none).
    EffortLevel(EffortLevels),
    /// Any effort but `none` with function tools (OpenAI's reasoning models on Chat
    /// Completions), whether the request sent one or the model's default stood in.
    ReasoningWithTools,
    /// An assistant message without `reasoning_content` to a server in thinking mode
    /// (DeepSeek: "The reasoning_content in the thinking mode must be passed back to the
    /// API."), even when no reply of the conversation thought.
    ReasoningEcho,
}

/// Words providers use to say a parameter cannot be used with this model, or that they do
/// not know it (OpenAI and Azure "Unrecognized request argument supplied", pydantic servers
/// "Extra inputs are not permitted", Gemini "Unknown name").
const REFUSAL_WORDS: &[&str] = &[
    "not supported",
    "unsupported",
    "does not support",
    "deprecated",
    "not available for this model",
    "unrecognized request argument",
    "extra inputs are not permitted",
    "extra_forbidden",
    "unknown name",
    "unknown parameter",
];

/// Words a text-only Chat Completions endpoint refuses an image part in: DeepSeek's
/// "Failed to deserialize the JSON body into the target type: messages[7]: unknown variant
/// `image_url`, expected `text` at line 1 column 114708" (1jehuang/jcode#310), llama.cpp's
/// server without a vision projector "image input is not supported - hint: if this is
/// unexpected, you may need to provide the mmproj".
const IMAGE_REFUSALS: &[&str] = &[
    "unknown variant `image_url`",
    "image input is not supported",
];

/// The Chat Completions parameters a server may not know, by the name a refusal uses.
const CHAT_PARAMS: [(&str, OptionalParam); 2] = [
    ("max_completion_tokens", OptionalParam::CompletionTokens),
    ("stream_options", OptionalParam::StreamUsage),
];

/// Whether a lower-cased refusal names `name` as what it refuses, not as the parameter to
/// use instead (OpenAI: "Unsupported parameter: 'max_tokens' is not supported with this
/// model. Use 'max_completion_tokens' instead.").
fn refuses_name(lower: &str, name: &str) -> bool {
    lower.contains(name)
        && !["use '", "use `", "use \"", "use "]
            .iter()
            .any(|before| lower.contains(&format!("{before}{name}")))
}

/// What a 400's error refuses, if it is an optional parameter: by the `param` field OpenAI
/// sets, else by the message's words (Anthropic's errors name no param).
pub(super) fn named_in(param: Option<&str>, message: &str) -> Option<Refused> {
    let lower = message.to_lowercase();
    if lower.contains("function tools with reasoning_effort are not supported") {
        // gpt-5.4: "… Please use /v1/responses instead."; gpt-5.6: "… To use function tools,
        // use /v1/responses or set reasoning_effort to 'none'." (both `param:
        // "reasoning_effort"`).
        return Some(Refused::ReasoningWithTools);
    }
    if lower.contains("reasoning_content") && lower.contains("must be passed back") {
        return Some(Refused::ReasoningEcho);
    }
    let refusing = REFUSAL_WORDS.iter().any(|w| lower.contains(w));
    match param.map(str::trim) {
        Some("temperature") => return Some(Refused::Param(OptionalParam::Temperature)),
        Some("include" | "include[0]") => {
            return Some(Refused::Param(OptionalParam::EncryptedReasoning));
        }
        Some(p) if p == "reasoning" || p.starts_with("reasoning.") || p == "reasoning_effort" => {
            // "Unsupported value: 'minimal' is not supported with the 'gpt-5.1' model.
            // Supported values are: …" refuses a level; "Unsupported parameter" the whole.
            return Some(if lower.starts_with("unsupported value") {
                Refused::EffortLevel(listed_levels(&lower, "supported values are:"))
            } else {
                Refused::Param(OptionalParam::Effort)
            });
        }
        // The limit itself, refused for its value ("max_tokens is too large: …") or its
        // name: not a parameter the request can go without.
        Some("max_tokens") => return None,
        Some(p) => {
            // "max_completion_tokens is too large" names the parameter but refuses its
            // value: only the words of a refusal make it the parameter's.
            if let Some((_, param)) = CHAT_PARAMS.iter().find(|(name, _)| *name == p) {
                return refusing.then_some(Refused::Param(*param));
            }
        }
        None => {}
    }
    if IMAGE_REFUSALS.iter().any(|words| lower.contains(words)) {
        return Some(Refused::Param(OptionalParam::ImageParts));
    }
    if lower.contains("encrypted content is not supported") {
        return Some(Refused::Param(OptionalParam::EncryptedReasoning));
    }
    if lower.contains("invalid reasoning_effort") {
        // Gemini: "Invalid reasoning_effort: minimal. Valid values are: high, low, …".
        return Some(Refused::EffortLevel(listed_levels(
            &lower,
            "valid values are:",
        )));
    }
    if !refusing {
        return None;
    }
    if let Some((_, param)) = CHAT_PARAMS
        .iter()
        .find(|(name, _)| refuses_name(&lower, name))
    {
        return Some(Refused::Param(*param));
    }
    let param = if lower.contains("temperature") {
        OptionalParam::Temperature
    } else if lower.contains("does not support effort level") {
        return Some(Refused::EffortLevel(listed_levels(
            &lower,
            "supported levels:",
        )));
    } else if lower.contains("thinking level") {
        // Gemini: "Thinking level MEDIUM is not supported for this model. Please retry with
        // other thinking level" (the level the effort was sent as; it lists none).
        return Some(Refused::EffortLevel(EffortLevels::NONE));
    } else if lower.contains("reasoning_effort") {
        OptionalParam::Effort
    } else if lower.contains("thinking.type.enabled\" is not supported") {
        OptionalParam::BudgetThinking
    } else if lower.contains("adaptive thinking")
        || lower.contains("thinking.type.adaptive\" is not")
        || (lower.contains("thinking") && !lower.contains("effort"))
    {
        OptionalParam::AdaptiveThinking
    } else if lower.contains("effort") {
        OptionalParam::Effort
    } else {
        return None;
    };
    Some(Refused::Param(param))
}

/// The levels listed after `marker` in a lower-cased refusal: Anthropic's bare
/// "high, low, max, medium." or OpenAI's quoted "'none', 'low', 'medium', and 'high'.".
fn listed_levels(lower: &str, marker: &str) -> EffortLevels {
    let Some(at) = lower.find(marker) else {
        return EffortLevels::NONE;
    };
    let list = &lower[at + marker.len()..];
    EffortLevels::from_names(
        list.split([',', '\'', '.', ' ', '\n'])
            .map(str::trim)
            .filter(|word| !word.is_empty() && *word != "and"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_are_read_from_the_param_or_the_message() {
        use OptionalParam::*;
        let named_in = |param, message| match named_in(param, message) {
            Some(Refused::Param(p)) => Some(p),
            _ => None,
        };
        let cases = [
            (
                Some("temperature"),
                "Unsupported parameter: 'temperature' is not supported with this model.",
                Some(Temperature),
            ),
            (
                Some("temperature"),
                "Unsupported value: 'temperature' does not support 0.1 with this model. Only the default (1) value is supported.",
                Some(Temperature),
            ),
            (
                Some("include"),
                "Encrypted content is not supported with this model.",
                Some(EncryptedReasoning),
            ),
            (
                Some("reasoning.effort"),
                "Unsupported parameter: 'reasoning.effort' is not supported with this model.",
                Some(Effort),
            ),
            (
                None,
                "`temperature` is deprecated for this model.",
                Some(Temperature),
            ),
            (
                None,
                "This model does not support the effort parameter.",
                Some(Effort),
            ),
            (
                None,
                "adaptive thinking is not supported on this model",
                Some(AdaptiveThinking),
            ),
            (
                None,
                "\"thinking.type.enabled\" is not supported for this model. Use \"thinking.type.adaptive\" and \"output_config.effort\" to control thinking behavior.",
                Some(BudgetThinking),
            ),
            (
                None,
                "temperature: Input should be less than or equal to 1",
                None,
            ),
            (
                None,
                "messages.1.content.0: Invalid `signature` in `thinking` block",
                None,
            ),
            (
                Some("input"),
                "No tool output found for function call c.",
                None,
            ),
            (
                None,
                "prompt is too long: 208310 tokens > 200000 maximum",
                None,
            ),
        ];
        for (param, message, expected) in cases {
            assert_eq!(named_in(param, message), expected, "{message}");
        }
    }

    #[test]
    fn chat_completions_refused_parameters_are_read() {
        use OptionalParam::*;
        let named_in = |param, message| match named_in(param, message) {
            Some(Refused::Param(p)) => Some(p),
            _ => None,
        };
        let cases = [
            (
                None,
                "Unrecognized request argument supplied: max_completion_tokens",
                Some(CompletionTokens),
            ),
            (
                None,
                "[{'type': 'extra_forbidden', 'loc': ('body', 'max_completion_tokens'), 'msg': 'Extra inputs are not permitted', 'input': 64}]",
                Some(CompletionTokens),
            ),
            (
                None,
                "Unrecognized request argument supplied: stream_options",
                Some(StreamUsage),
            ),
            (
                None,
                "Invalid JSON payload received. Unknown name \"stream_options\": Cannot find field.",
                Some(StreamUsage),
            ),
            (
                None,
                "Argument not supported on this model: stream_options",
                Some(StreamUsage),
            ),
            (
                Some("reasoning_effort"),
                "Unsupported parameter: 'reasoning_effort' is not supported with this model.",
                Some(Effort),
            ),
            (
                None,
                "Unrecognized request argument supplied: reasoning_effort",
                Some(Effort),
            ),
            // The limit's value, or our fallback name, refused: not a parameter to drop.
            (
                Some("max_completion_tokens"),
                "max_completion_tokens is too large: 100000. This model supports at most 16384 completion tokens.",
                None,
            ),
            (
                Some("max_tokens"),
                "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
                None,
            ),
            (
                None,
                "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
                None,
            ),
        ];
        for (param, message, expected) in cases {
            assert_eq!(named_in(param, message), expected, "{message}");
        }
    }

    #[test]
    fn chat_completions_refused_levels_are_read() {
        let levels = |param, message| match named_in(param, message) {
            Some(Refused::EffortLevel(levels)) => Some(levels),
            _ => None,
        };
        use ReasoningEffort::{High, Low, Medium, Minimal};
        assert_eq!(
            levels(
                Some("reasoning_effort"),
                "Unsupported value: 'reasoning_effort' does not support 'none' with this model. Supported values are: 'minimal', 'low', 'medium', and 'high'."
            ),
            Some(EffortLevels::of(&[Minimal, Low, Medium, High]))
        );
        assert_eq!(
            levels(
                None,
                "Invalid reasoning_effort: minimal. Valid values are: high, low, medium, none"
            ),
            Some(EffortLevels::of(&[
                ReasoningEffort::None,
                Low,
                Medium,
                High
            ]))
        );
        assert_eq!(
            levels(
                None,
                "Thinking level MEDIUM is not supported for this model. Please retry with other thinking level"
            ),
            Some(EffortLevels::NONE)
        );
    }

    #[test]
    fn refused_levels_are_read_with_the_levels_listed() {
        use ReasoningEffort::{High, Low, Max, Medium};
        let levels = |param, message| match named_in(param, message) {
            Some(Refused::EffortLevel(levels)) => Some(levels),
            _ => None,
        };
        assert_eq!(
            levels(
                None,
                "This model does not support effort level 'xhigh'. Supported levels: high, low, max, medium."
            ),
            Some(EffortLevels::of(&[Low, Medium, High, Max]))
        );
        assert_eq!(
            levels(
                Some("reasoning.effort"),
                "Unsupported value: 'minimal' is not supported with the 'gpt-5.1' model. Supported values are: 'none', 'low', 'medium', and 'high'."
            ),
            Some(EffortLevels::of(&[
                ReasoningEffort::None,
                Low,
                Medium,
                High
            ]))
        );
        assert_eq!(
            levels(
                Some("reasoning.effort"),
                "Unsupported value: 'reasoning.effort' does not support 'xhigh' with this model. Supported values are: 'low', 'medium', and 'high'."
            ),
            Some(EffortLevels::of(&[Low, Medium, High]))
        );
        assert_eq!(
            levels(
                Some("reasoning.effort"),
                "Unsupported value: 'max' is not supported with the 'gpt-5-pro' model. Supported values are: 'high'."
            ),
            Some(EffortLevels::of(&[High]))
        );
        assert_eq!(
            levels(Some("reasoning.effort"), "Unsupported value: 'max'."),
            Some(EffortLevels::NONE),
            "a refusal that lists nothing still refuses the level"
        );
    }

    #[test]
    fn deepseeks_refusal_of_a_turn_without_reasoning_is_learned_once() {
        let message = "The reasoning_content in the thinking mode must be passed back to the API.";
        assert_eq!(named_in(None, message), Some(Refused::ReasoningEcho));
        let learned = Learned::default();
        assert!(!learned.echoes_reasoning());
        assert!(learned.echo_reasoning());
        assert!(!learned.echo_reasoning(), "learned once");
        assert!(learned.clone().echoes_reasoning(), "kept by a clone");
    }

    #[test]
    fn a_refusal_of_reasoning_with_tools_is_read_before_its_param() {
        for message in [
            "Function tools with reasoning_effort are not supported for gpt-5.4 in /v1/chat/completions. Please use /v1/responses instead.",
            "Function tools with reasoning_effort are not supported for gpt-5.6-terra in /v1/chat/completions. To use function tools, use /v1/responses or set reasoning_effort to 'none'.",
        ] {
            assert_eq!(
                named_in(Some("reasoning_effort"), message),
                Some(Refused::ReasoningWithTools),
                "{message}"
            );
        }
        let learned = Learned::default();
        assert!(learned.lower_effort(ReasoningEffort::High));
        assert!(
            learned.send_effort(ReasoningEffort::None),
            "whatever came before"
        );
        assert!(!learned.send_effort(ReasoningEffort::None), "sent already");
        assert_eq!(learned.effort(), Some(ReasoningEffort::None));
    }

    #[test]
    fn the_set_remembers_each_parameter_once() {
        let dropped = Learned::default();
        assert!(!dropped.contains(OptionalParam::Temperature));
        assert!(dropped.insert(OptionalParam::Temperature));
        assert!(!dropped.insert(OptionalParam::Temperature));
        assert!(dropped.contains(OptionalParam::Temperature));
        assert!(!dropped.contains(OptionalParam::Effort));
        assert!(dropped.clone().contains(OptionalParam::Temperature));
        assert_eq!(dropped.effort(), None);
        assert!(dropped.lower_effort(ReasoningEffort::High));
        assert!(!dropped.lower_effort(ReasoningEffort::Low), "learned once");
        assert_eq!(dropped.clone().effort(), Some(ReasoningEffort::High));
    }
}
