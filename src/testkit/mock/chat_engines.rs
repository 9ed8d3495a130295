//! The mock's Chat Completions as the servers besides OpenAI's that users point the wire
//! at, where they refuse what OpenAI's API takes ([`MockEngine`]), each in its own words and
//! error shape (issue 36):
//!
//! - vLLM (0.10 and later) with a context window ([`MockProvider::set_context_window`]): an
//!   output limit that the input leaves no room for is refused `400` "'max_tokens' or
//!   'max_completion_tokens' is too large: 32000. This model's maximum context length is
//!   32768 tokens and your request has 1000 input tokens (32000 > 32768 - 1000).", an input
//!   that fills the window alone "This model's maximum context length is 4096 tokens.
//!   However, your request has 5000 input tokens. Please reduce the length of the input
//!   messages.", both as `{"error": {"message", "type": "BadRequestError", "param", "code":
//!   400}}`;
//! - vLLM before 0.10: the same checks in its older words ("… However, you requested 33000
//!   tokens (1000 in the messages, 32000 in the completion). Please reduce the length of the
//!   messages or completion.") and its flat shape (`{"object": "error", "message", …}`);
//! - TGI: `422 {"error": "Input validation error: `inputs` tokens + `max_new_tokens` must be
//!   <= 4096. Given: 1000 `inputs` tokens and 32000 `max_new_tokens`", "error_type":
//!   "validation"}`;
//! - Mistral's API: `max_completion_tokens` refused as pydantic refuses an unknown field,
//!   `422 {"object": "error", "message": {"detail": [{"type": "extra_forbidden", "loc":
//!   ["body", "max_completion_tokens"], "msg": "Extra inputs are not permitted", "input":
//!   32000}]}, "type": "invalid_request_error", "param": null, "code": null}`
//!   (editor-code-assistant/eca#231).
//!
//! OpenAI's own endpoint refuses its reasoning models' reasoning with function tools
//! (`400`, `param: "reasoning_effort"`): gpt-5.2 and gpt-5.4 an effort other than `none`
//! ("Function tools with reasoning_effort are not supported for gpt-5.4 in
//! /v1/chat/completions. Please use /v1/responses instead.", pipecat-ai/pipecat#4043),
//! gpt-5.6 and gpt-6 their own default too, when no effort is sent ("… To use function
//! tools, use /v1/responses or set reasoning_effort to 'none'.",
//! GoogleChromeLabs/webmcp-tools#417).
//!
//! DeepSeek's API takes text only: a message with an `image_url` part is refused `400`
//! "Failed to deserialize the JSON body into the target type: messages[7]: unknown variant
//! `image_url`, expected `text` at line 1 column 114708" (1jehuang/jcode#310), code
//! `invalid_request_error`.
//!
//! The input is counted as one token per 4 bytes of the messages and tools, as sent.
//!
//! [`MockProvider::set_context_window`]: super::MockProvider::set_context_window

use serde_json::{Value, json};

use super::script::{ChatServer, MockEngine};
use super::state::{MockState, Refusal};

/// The refusal of the server the mock plays, if it refuses `body`.
pub(super) fn validate(st: &MockState, body: &Value) -> Result<(), Refusal> {
    if st.chat_server == ChatServer::DeepSeek {
        deepseek_text_only(body)?;
    }
    match st.engine {
        MockEngine::Mistral => mistral(body),
        MockEngine::Vllm | MockEngine::VllmLegacy => vllm(st, body),
        MockEngine::Tgi => tgi(st, body),
        MockEngine::Official => openai_reasoning_with_tools(body),
        MockEngine::LlamaCpp => Ok(()),
    }
}

/// OpenAI's refusal of reasoning with function tools, for the models that refuse it.
fn openai_reasoning_with_tools(body: &Value) -> Result<(), Refusal> {
    let model = body["model"].as_str().unwrap_or("");
    let tools = body["tools"].as_array().is_some_and(|t| !t.is_empty());
    let effort = body["reasoning_effort"].as_str();
    let refuses_default = ["gpt-5.6", "gpt-6"].iter().any(|f| model.starts_with(f));
    let refuses_effort = ["gpt-5.2", "gpt-5.4"].iter().any(|f| model.starts_with(f));
    let reasons = match effort {
        Some(effort) => effort != "none",
        None => refuses_default,
    };
    if !tools || !reasons || !(refuses_default || refuses_effort) || model.contains("-chat") {
        return Ok(());
    }
    let message = if refuses_default {
        format!(
            "Function tools with reasoning_effort are not supported for {model} in \
             /v1/chat/completions. To use function tools, use /v1/responses or set \
             reasoning_effort to 'none'."
        )
    } else {
        format!(
            "Function tools with reasoning_effort are not supported for {model} in \
             /v1/chat/completions. Please use /v1/responses instead."
        )
    };
    Err(Refusal {
        status: 400,
        body: json!({"error": {"message": message, "type": "invalid_request_error",
                               "param": "reasoning_effort", "code": null}}),
        message,
    })
}

/// DeepSeek's refusal of the first message with an image part.
fn deepseek_text_only(body: &Value) -> Result<(), Refusal> {
    let messages = body["messages"].as_array().map_or(&[][..], Vec::as_slice);
    let Some(n) = messages.iter().position(|m| {
        m["content"]
            .as_array()
            .is_some_and(|parts| parts.iter().any(|p| p["type"] == "image_url"))
    }) else {
        return Ok(());
    };
    let column = body
        .to_string()
        .find("\"image_url\"")
        .map_or(1, |at| at + 1);
    let message = format!(
        "Failed to deserialize the JSON body into the target type: messages[{n}]: unknown \
         variant `image_url`, expected `text` at line 1 column {column}"
    );
    Err(Refusal {
        status: 400,
        body: json!({"error": {"message": message, "type": "invalid_request_error",
                               "param": null, "code": "invalid_request_error"}}),
        message,
    })
}

/// The request's input, in the mock's tokens.
fn input_tokens(body: &Value) -> u64 {
    let tools = body.get("tools").map_or(0, |t| t.to_string().len());
    ((body["messages"].to_string().len() + tools) / 4) as u64
}

/// The output limit asked for, under either name.
fn output_limit(body: &Value) -> Option<u64> {
    body["max_completion_tokens"]
        .as_u64()
        .or_else(|| body["max_tokens"].as_u64())
}

fn vllm(st: &MockState, body: &Value) -> Result<(), Refusal> {
    let Some(window) = st.context_window else {
        return Ok(());
    };
    let input = input_tokens(body);
    let legacy = st.engine == MockEngine::VllmLegacy;
    let message = if input >= window {
        format!(
            "This model's maximum context length is {window} tokens. However, your request \
             has {input} input tokens. Please reduce the length of the input messages."
        )
    } else {
        match output_limit(body) {
            Some(limit) if input + limit > window && legacy => format!(
                "This model's maximum context length is {window} tokens. However, you \
                 requested {} tokens ({input} in the messages, {limit} in the completion). \
                 Please reduce the length of the messages or completion.",
                input + limit
            ),
            Some(limit) if input + limit > window => format!(
                "'max_tokens' or 'max_completion_tokens' is too large: {limit}. This model's \
                 maximum context length is {window} tokens and your request has {input} input \
                 tokens ({limit} > {window} - {input})."
            ),
            _ => return Ok(()),
        }
    };
    let body = if legacy {
        json!({"object": "error", "message": message, "type": "BadRequestError",
               "param": null, "code": 400})
    } else {
        json!({"error": {"message": message, "type": "BadRequestError", "param": null,
                         "code": 400}})
    };
    Err(Refusal {
        status: 400,
        message,
        body,
    })
}

fn tgi(st: &MockState, body: &Value) -> Result<(), Refusal> {
    let (Some(window), Some(limit)) = (st.context_window, output_limit(body)) else {
        return Ok(());
    };
    let input = input_tokens(body);
    if input + limit <= window {
        return Ok(());
    }
    let message = format!(
        "Input validation error: `inputs` tokens + `max_new_tokens` must be <= {window}. \
         Given: {input} `inputs` tokens and {limit} `max_new_tokens`"
    );
    Err(Refusal {
        status: 422,
        body: json!({"error": message, "error_type": "validation"}),
        message,
    })
}

fn mistral(body: &Value) -> Result<(), Refusal> {
    let Some(value) = body.get("max_completion_tokens") else {
        return Ok(());
    };
    let detail = json!({"detail": [{"type": "extra_forbidden",
        "loc": ["body", "max_completion_tokens"], "msg": "Extra inputs are not permitted",
        "input": value}]});
    Err(Refusal {
        status: 422,
        message: detail.to_string(),
        body: json!({"object": "error", "message": detail, "type": "invalid_request_error",
                     "param": null, "code": null}),
    })
}
