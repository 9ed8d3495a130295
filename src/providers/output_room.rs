//! What a refusal of the output limit says about the room a reply has: servers with a small
//! context window (vLLM, TGI, a local engine) refuse a request whose input and output limit
//! together overflow it, and name the window and the input; the room left is the limit that
//! fits. Only an input that leaves less than [`MIN_REPLY_ROOM_TOKENS`] is a conversation that
//! no longer fits. The wordings, as the servers write them:
//!
//! | server | the refusal |
//! | --- | --- |
//! | vLLM 0.10 and later | "'max_tokens' or 'max_completion_tokens' is too large: 32000. This model's maximum context length is 32768 tokens and your request has 1000 input tokens (32000 > 32768 - 1000)." |
//! | vLLM before, DeepSeek | "This model's maximum context length is 16384 tokens. However, you requested 122946 tokens (112946 in the messages, 10000 in the completion). Please reduce the length of the messages or completion." (vllm-project/vllm#20409) |
//! | vLLM, later wordings | "… However, you requested 1024 output tokens and your prompt contains at least 130049 input tokens …"; "… However, your request has 8 input tokens plus 2045 'max_tokens'. …" (vllm-project/vllm#33425) |
//! | TGI (HTTP 422) | "Input validation error: \`inputs\` tokens + \`max_new_tokens\` must be <= 32768. Given: 1000 \`inputs\` tokens and 32000 \`max_new_tokens\`" (huggingface/text-generation-inference#628) |
//!
//! Each names the output limit (or "in the completion", "output tokens"), which tells it
//! from vLLM's refusal of an input alone ("… your request has 40000 input tokens. Please
//! reduce the length of the input messages."), an overflow (`overflow`).

use crate::limits::MIN_REPLY_ROOM_TOKENS;

/// A context window and the input a refusal says the request had, in tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Room {
    pub(super) window: u32,
    pub(super) input: u32,
}

impl Room {
    /// The longest reply the window leaves room for.
    pub(super) fn left(self) -> u32 {
        self.window.saturating_sub(self.input)
    }

    /// Whether that is room enough for a reply ([`MIN_REPLY_ROOM_TOKENS`]).
    pub(super) fn fits_a_reply(self) -> bool {
        self.left() >= MIN_REPLY_ROOM_TOKENS
    }
}

/// What a refusal of the output limit says about the context window, when it is one that
/// names the window and the input.
pub(super) fn context_room(message: &str) -> Option<Room> {
    let lower = message.to_lowercase();
    let about_the_output = [
        "max_tokens",
        "max_completion_tokens",
        "max_new_tokens",
        "in the completion",
        "output tokens",
    ]
    .iter()
    .any(|marker| lower.contains(marker));
    if !about_the_output {
        return None;
    }
    let window = number_after(&lower, "maximum context length is").or_else(|| {
        lower
            .contains("tokens + `max_new_tokens`")
            .then(|| number_after(&lower, "must be <="))
            .flatten()
    })?;
    let input = number_after(&lower, "your request has")
        .or_else(|| number_before(&lower, " in the messages"))
        .or_else(|| number_after(&lower, "contains at least"))
        .or_else(|| number_after(&lower, "given:"))?;
    Some(Room { window, input })
}

/// Whether an error refuses the output limit itself (its name, and words that say it is too
/// large), whatever else it says: one that names no room gets told to set
/// `max_output_tokens`.
pub(super) fn refuses_output_limit(message: &str) -> bool {
    let lower = message.to_lowercase();
    let named = [
        "max_tokens",
        "max_completion_tokens",
        "max_new_tokens",
        "max_output_tokens",
    ]
    .iter()
    .any(|name| lower.contains(name));
    named
        && ["too large", "must be <=", "maximum", "exceed", "above"]
            .iter()
            .any(|words| lower.contains(words))
}

/// The number right after `marker` in `lower` (spaces skipped).
pub(super) fn number_after(lower: &str, marker: &str) -> Option<u32> {
    let at = lower.find(marker)? + marker.len();
    let digits: String = lower[at..]
        .trim_start()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// The number right before `marker` (spaces skipped).
fn number_before(lower: &str, marker: &str) -> Option<u32> {
    let at = lower.find(marker)?;
    let before = lower[..at].trim_end();
    let start = before
        .char_indices()
        .rev()
        .take_while(|(_, c)| c.is_ascii_digit())
        .last()
        .map(|(i, _)| i)?;
    before[start..].parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_wording_names_the_window_and_the_input() {
        let room = |window, input| Some(Room { window, input });
        let cases = [
            (
                "'max_tokens' or 'max_completion_tokens' is too large: 32000. This model's \
                 maximum context length is 32768 tokens and your request has 1000 input tokens \
                 (32000 > 32768 - 1000).",
                room(32_768, 1_000),
            ),
            (
                "This model's maximum context length is 16384 tokens. However, you requested \
                 122946 tokens (112946 in the messages, 10000 in the completion). Please reduce \
                 the length of the messages or completion.",
                room(16_384, 112_946),
            ),
            (
                "This model's maximum context length is 131072 tokens. However, you requested \
                 1024 output tokens and your prompt contains at least 130049 input tokens, for \
                 a total of at least 131073 tokens. (parameter=input_tokens, value=130049)",
                room(131_072, 130_049),
            ),
            (
                "This model's maximum context length is 2048 tokens. However, your request has \
                 8 input tokens plus 2045 'max_tokens'. Please reduce one or the other.",
                room(2_048, 8),
            ),
            (
                "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096. \
                 Given: 1000 `inputs` tokens and 32000 `max_new_tokens`",
                room(4_096, 1_000),
            ),
            (
                "This model's maximum context length is 4096 tokens. However, your request has \
                 5000 input tokens. Please reduce the length of the input messages.",
                None,
            ),
            (
                "max_tokens: 21333 > 4096, which is the maximum allowed",
                None,
            ),
        ];
        for (message, expected) in cases {
            assert_eq!(context_room(message), expected, "{message}");
        }
    }

    #[test]
    fn a_reply_needs_room() {
        assert!(
            Room {
                window: 32_768,
                input: 1_000
            }
            .fits_a_reply()
        );
        assert_eq!(
            Room {
                window: 32_768,
                input: 1_000
            }
            .left(),
            31_768
        );
        assert!(
            !Room {
                window: 131_072,
                input: 130_049
            }
            .fits_a_reply()
        );
        assert!(
            !Room {
                window: 4_096,
                input: 5_000
            }
            .fits_a_reply()
        );
    }

    #[test]
    fn refusals_of_the_output_limit_are_told_apart() {
        assert!(refuses_output_limit("max_tokens is too large: 999999"));
        assert!(refuses_output_limit(
            "Input validation error: `max_new_tokens` must be <= 192. Given: 1000"
        ));
        assert!(!refuses_output_limit("Invalid value for 'model'."));
        assert!(!refuses_output_limit(
            "Unsupported parameter: 'max_tokens' is not supported with this model."
        ));
    }
}
