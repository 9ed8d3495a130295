//! Optional request parameters a model refuses (SPEC §6.1 "Parameters a model refuses"): how
//! a refusal is recognised, and the set a session has learned to leave out.
//!
//! A 400 that names an optional parameter as unsupported for the model (`temperature`, the
//! `include` of encrypted reasoning, reasoning effort, adaptive thinking) is retried once
//! without it, and the session's later requests leave it out too. What the providers say,
//! as reported:
//!
//! | parameter | provider | the refusal |
//! | --- | --- | --- |
//! | `temperature` | OpenAI reasoning models | `param: "temperature"`, "Unsupported parameter: 'temperature' is not supported with this model." (code `unsupported_parameter`), or "Unsupported value: 'temperature' does not support 0.1 …" |
//! | `temperature` | Anthropic, Opus 4.7 and later | "`temperature` is deprecated for this model." |
//! | `include` | OpenAI non-reasoning models | `param: "include"`, "Encrypted content is not supported with this model." |
//! | effort | OpenAI | `param: "reasoning.effort"`, "Unsupported parameter: 'reasoning.effort' …" |
//! | effort | Anthropic | "This model does not support the effort parameter." |
//! | thinking | Anthropic | "adaptive thinking is not supported on this model" |

use std::sync::atomic::{AtomicU8, Ordering};

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
    Thinking,
}

impl OptionalParam {
    pub const ALL: [OptionalParam; 4] = [
        OptionalParam::Temperature,
        OptionalParam::EncryptedReasoning,
        OptionalParam::Effort,
        OptionalParam::Thinking,
    ];

    fn bit(self) -> u8 {
        match self {
            OptionalParam::Temperature => 1,
            OptionalParam::EncryptedReasoning => 2,
            OptionalParam::Effort => 4,
            OptionalParam::Thinking => 8,
        }
    }

    /// The parameter as the request spells it.
    pub fn request_field(self) -> &'static str {
        match self {
            OptionalParam::Temperature => "temperature",
            OptionalParam::EncryptedReasoning => "include: [\"reasoning.encrypted_content\"]",
            OptionalParam::Effort => "reasoning effort",
            OptionalParam::Thinking => "thinking: {type: \"adaptive\"}",
        }
    }

    /// The definition field whose value can no longer be honoured without it; none for the
    /// encrypted reasoning every Responses request asks for (a model that refuses it has no
    /// reasoning items to carry).
    pub fn definition_field(self) -> Option<&'static str> {
        match self {
            OptionalParam::Temperature => Some("temperature"),
            OptionalParam::EncryptedReasoning => None,
            OptionalParam::Effort | OptionalParam::Thinking => Some("reasoning_effort"),
        }
    }
}

/// The parameters a session has learned its model refuses. Shared by the runs of one
/// session through its conversation; set once per parameter, never cleared.
#[derive(Debug, Default)]
pub struct Dropped(AtomicU8);

impl Clone for Dropped {
    fn clone(&self) -> Self {
        Dropped(AtomicU8::new(self.0.load(Ordering::Relaxed)))
    }
}

impl Dropped {
    pub fn contains(&self, param: OptionalParam) -> bool {
        self.0.load(Ordering::Relaxed) & param.bit() != 0
    }

    /// Adds `param`; false if it was already there.
    pub fn insert(&self, param: OptionalParam) -> bool {
        self.0.fetch_or(param.bit(), Ordering::Relaxed) & param.bit() == 0
    }
}

/// Words providers use to say a parameter cannot be used with this model.
const REFUSAL_WORDS: &[&str] = &[
    "not supported",
    "unsupported",
    "does not support",
    "deprecated",
    "not available for this model",
];

/// The optional parameter a 400's error names as refused for the model, if any: by the
/// `param` field OpenAI sets, else by the message's words (Anthropic's errors name no param).
pub(super) fn named_in(param: Option<&str>, message: &str) -> Option<OptionalParam> {
    match param.map(str::trim) {
        Some("temperature") => return Some(OptionalParam::Temperature),
        Some("include" | "include[0]") => return Some(OptionalParam::EncryptedReasoning),
        Some(p) if p == "reasoning" || p.starts_with("reasoning.") => {
            return Some(OptionalParam::Effort);
        }
        _ => {}
    }
    let lower = message.to_lowercase();
    if lower.contains("encrypted content is not supported") {
        return Some(OptionalParam::EncryptedReasoning);
    }
    if !REFUSAL_WORDS.iter().any(|w| lower.contains(w)) {
        return None;
    }
    if lower.contains("temperature") {
        Some(OptionalParam::Temperature)
    } else if lower.contains("adaptive thinking")
        || lower.contains("thinking.type.adaptive\" is not")
        || (lower.contains("thinking") && !lower.contains("effort"))
    {
        Some(OptionalParam::Thinking)
    } else if lower.contains("effort") {
        Some(OptionalParam::Effort)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_are_read_from_the_param_or_the_message() {
        use OptionalParam::*;
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
                Some(Thinking),
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
    fn the_set_remembers_each_parameter_once() {
        let dropped = Dropped::default();
        assert!(!dropped.contains(OptionalParam::Temperature));
        assert!(dropped.insert(OptionalParam::Temperature));
        assert!(!dropped.insert(OptionalParam::Temperature));
        assert!(dropped.contains(OptionalParam::Temperature));
        assert!(!dropped.contains(OptionalParam::Effort));
        assert!(dropped.clone().contains(OptionalParam::Temperature));
    }
}
