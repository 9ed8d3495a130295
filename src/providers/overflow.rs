//! Whether an error says the input does not fit the model's context window: by its code or
//! type where the provider has one for it, else by the words providers and engines use.
//! Each phrase is specific to an overflow, so a refusal of the output limit (a request, not
//! the input, too large) is never read as one.

/// Error codes and types that say the input does not fit the context window: OpenAI's
/// `code` `context_length_exceeded`, and llama.cpp's server's `type`
/// `exceed_context_size_error` (its `code` is the HTTP status, 400).
const OVERFLOW_CODES: &[&str] = &["context_length_exceeded", "exceed_context_size_error"];

/// Phrases providers and engines use when the input no longer fits, matched
/// case-insensitively after the codes. Each is specific to an overflow: "context length"
/// alone would also match a refusal of the output limit.
const OVERFLOW_PHRASES: &[&str] = &[
    // OpenAI, OpenRouter and compatible servers ("This model's maximum context length is
    // 16384 tokens. However, you requested …", also vLLM's older and current wording).
    "exceeds the context window",
    "maximum context length",
    "context length exceeded",
    "context_length_exceeded",
    // Anthropic: "prompt is too long: 208310 tokens > 200000 maximum".
    "prompt is too long",
    "exceed context limit",
    "input is too long for",
    // llama.cpp's server: "request (20034 tokens) exceeds the available context size (8192
    // tokens), try increasing it".
    "exceeds the available context size",
    // vLLM: "… However, the model's context length is only 4096 tokens, resulting in a
    // maximum input length of …", "The decoder prompt (length 8825) is longer than the
    // maximum model length of 8192.", "The prompt (total length 25938) is too long to fit
    // into the model (context length 4096)."
    "context length is only",
    "longer than the maximum model length",
    "too long to fit into the model",
    // Ollama: "the prompt is longer than the context length currently available to the
    // model; …", "the input length exceeds the context length" (and "input exceeds maximum
    // context length and cannot be truncated further", "input length (N tokens) exceeds the
    // model's maximum context length (M tokens)", which "maximum context length" above
    // catches).
    "longer than the context length",
    "exceeds the context length",
    // LM Studio: "Trying to keep the first 111490 tokens when context the overflows. However,
    // the model is loaded with context length of only 32768 tokens, …" (its typo), and its
    // MLX backend's "Context size has been exceeded".
    "context length of only",
    "when context the overflows",
    "context size has been exceeded",
    // Gemini: "The input token count (1196265) exceeds the maximum number of tokens allowed
    // (1048575)."
    "exceeds the maximum number of tokens allowed",
    // TGI: "Input validation error: `inputs` must have less than 4096 tokens. Given: 5000"
    // (HTTP 422).
    "`inputs` must have less than",
];

/// Whether an error's labels (its code, its type) or its message say the input does not
/// fit the context window.
pub(super) fn is_context_overflow(labels: &[Option<&str>], message: &str) -> bool {
    if labels
        .iter()
        .flatten()
        .any(|label| OVERFLOW_CODES.contains(label))
    {
        return true;
    }
    let lower = message.to_lowercase();
    OVERFLOW_PHRASES.iter().any(|p| lower.contains(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overflow_is_recognised_by_code_and_by_phrase() {
        assert!(is_context_overflow(&[Some("context_length_exceeded")], ""));
        assert!(is_context_overflow(
            &[None, Some("exceed_context_size_error")],
            ""
        ));
        assert!(is_context_overflow(
            &[None],
            "prompt is too long: 208310 tokens > 200000 maximum"
        ));
        assert!(is_context_overflow(
            &[None],
            "This endpoint's maximum context length is 32768 tokens."
        ));
        assert!(!is_context_overflow(
            &[None],
            "max_tokens: 21333 > 4096, which is the maximum allowed"
        ));
        assert!(!is_context_overflow(
            &[Some("invalid_request_error")],
            "Invalid 'max_output_tokens': integer above maximum value."
        ));
        assert!(is_context_overflow(
            &[None],
            "The input token count (1196265) exceeds the maximum number of tokens allowed \
             (1048575)."
        ));
    }

    /// The wordings other engines document (their sources are at [`OVERFLOW_PHRASES`]),
    /// each recognised from its message alone.
    #[test]
    fn every_documented_engine_wording_is_an_overflow() {
        let wordings = [
            // llama.cpp's server.
            "request (20034 tokens) exceeds the available context size (8192 tokens), try \
             increasing it",
            // vLLM, current and older releases.
            "You passed 9000 input tokens and requested 100 output tokens. However, the \
             model's context length is only 8192 tokens, resulting in a maximum input length \
             of 8092 tokens. Please reduce the length of the input prompt.",
            "This model's maximum context length is 131072 tokens. However, you requested \
             1024 output tokens and your prompt contains at least 130049 input tokens, for a \
             total of at least 131073 tokens. (parameter=input_tokens, value=130049)",
            "The decoder prompt (length 8825) is longer than the maximum model length of 8192.",
            "The prompt (total length 25938) is too long to fit into the model (context \
             length 4096).",
            // Ollama.
            "the prompt is longer than the context length currently available to the model; \
             shorten the prompt, adjust the context length in settings, or use a model with a \
             longer context length",
            "the input length exceeds the context length",
            "input exceeds maximum context length and cannot be truncated further",
            "input length (9000 tokens) exceeds the model's maximum context length (8192 \
             tokens)",
            // LM Studio.
            "Trying to keep the first 111490 tokens when context the overflows. However, the \
             model is loaded with context length of only 32768 tokens, which is not enough. \
             Try to load the model with a larger context length, or provide a shorter input.",
            "Context size has been exceeded.",
        ];
        for wording in wordings {
            assert!(is_context_overflow(&[None], wording), "{wording}");
        }
    }
}
