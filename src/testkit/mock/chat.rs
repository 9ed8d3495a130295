//! The Chat Completions side of the mock: validation as OpenAI's API does it (in its words),
//! and as the server the mock plays ([`ChatServer`]) adds to it; the reply, as that server
//! streams it, is rendered in `chat_reply`.
//!
//! - OpenAI: every chunk with `index`ed tool-call fragments (the id, type and name in the
//!   first, the arguments in pieces after), `finish_reason` `tool_calls`, the usage in a last
//!   chunk of its own when `stream_options.include_usage` asks for it, then `data: [DONE]`.
//!   Unknown fields are refused, at the top ("Unrecognized request argument supplied") and in
//!   a message ("Additional properties are not allowed").
//! - DeepSeek: the same chunks, with the model's thinking in `reasoning_content` deltas
//!   before the answer when the script asks for reasoning; a later request must send it back
//!   on an assistant message that called tools, exactly ("The reasoning_content in the
//!   thinking mode must be passed back to the API."), and, once it has sent any (thinking
//!   mode), `reasoning_content` on every assistant message that called tools, empty where
//!   the reply did not think. Usage adds `prompt_cache_hit_tokens`.
//! - Gemini: each call whole in one delta, without `index`, ids like `function-call-…`, the
//!   first call of a reply with a thought signature in `extra_content` that must come back
//!   on it ("Function call is missing a thought_signature …"), `finish_reason` `stop` even
//!   for calls, usage on every chunk; errors as a JSON list, unknown fields refused as
//!   "Invalid JSON payload received. Unknown name …", and a function name that does not
//!   start with a letter or an underscore refused as Google's API refuses it.

use axum::http::HeaderMap;
use serde_json::{Value, json};

use super::responses::{LEVEL_ORDER, quoted_levels};
use super::script::{ChatServer, MockEngine, MockWire, ModelRefuses};
use super::state::{MockState, Refusal, valid_tool_name};

/// The request fields of `openai`'s `CompletionCreateParams`: anything else is refused.
const KNOWN_FIELDS: &[&str] = &[
    "messages",
    "model",
    "audio",
    "frequency_penalty",
    "function_call",
    "functions",
    "logit_bias",
    "logprobs",
    "max_completion_tokens",
    "max_tokens",
    "metadata",
    "modalities",
    "moderation",
    "n",
    "parallel_tool_calls",
    "prediction",
    "presence_penalty",
    "prompt_cache_key",
    "prompt_cache_options",
    "prompt_cache_retention",
    "reasoning_effort",
    "response_format",
    "safety_identifier",
    "seed",
    "service_tier",
    "stop",
    "store",
    "stream",
    "stream_options",
    "temperature",
    "tool_choice",
    "tools",
    "top_logprobs",
    "top_p",
    "user",
    "verbosity",
    "web_search_options",
];

/// The fields of an assistant message the SDK's type has.
const ASSISTANT_FIELDS: &[&str] = &[
    "role",
    "content",
    "refusal",
    "tool_calls",
    "name",
    "audio",
    "function_call",
];

/// A refusal in the shape of the server the mock plays: OpenAI's `{"error": {…}}`, Gemini's
/// the same inside a one-element list, with its `status` and a numeric `code`.
fn refusal(st: &MockState, status: u16, param: Option<&str>, message: &str) -> Refusal {
    let body = match st.chat_server {
        ChatServer::Gemini => json!([{"error": {"code": status, "message": message,
            "status": if status == 400 { "INVALID_ARGUMENT" } else { "UNAVAILABLE" }}}]),
        ChatServer::OpenAi | ChatServer::DeepSeek => json!({"error": {"message": message,
            "type": "invalid_request_error", "param": param, "code": null}}),
    };
    Refusal {
        status,
        message: message.to_owned(),
        body,
    }
}

fn bad(st: &MockState, param: Option<&str>, message: &str) -> Refusal {
    refusal(st, 400, param, message)
}

/// Sets `code` on an OpenAI-shaped refusal.
fn with_code(mut refusal: Refusal, code: &str) -> Refusal {
    if refusal.body["error"].is_object() {
        refusal.body["error"]["code"] = json!(code);
    }
    refusal
}

pub(super) fn validate(st: &MockState, headers: &HeaderMap, body: &Value) -> Result<(), Refusal> {
    super::auth::check(st, MockWire::Chat, headers)?;
    super::chat_engines::validate(st, body)?;
    validate_fields(st, body)?;
    refused_parameter(st, body)?;
    validate_tools(st, body)?;
    let Some(messages) = body["messages"].as_array().filter(|m| !m.is_empty()) else {
        return Err(bad(st, Some("messages"), "[] is too short - 'messages'"));
    };
    validate_messages(st, messages)?;
    context_fits(st, body)
}

/// The request's own fields: known ones, a model, `stream_options` only with a stream, an
/// output limit of at least 1, an effort OpenAI has, a `prompt_cache_key` of at most 64.
fn validate_fields(st: &MockState, body: &Value) -> Result<(), Refusal> {
    if let Some(unknown) = body
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, _)| k.as_str())
        .find(|k| !KNOWN_FIELDS.contains(k))
    {
        return Err(unknown_field(st, unknown, None));
    }
    if body["model"].as_str().is_none_or(str::is_empty) {
        return Err(bad(st, None, "you must provide a model parameter"));
    }
    if body.get("stream_options").is_some() && body["stream"] != true {
        return Err(bad(
            st,
            Some("stream_options"),
            "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
        ));
    }
    for field in ["max_completion_tokens", "max_tokens"] {
        if let Some(value) = body.get(field).filter(|v| !v.is_null())
            && value.as_u64().is_none_or(|v| v < 1)
        {
            return Err(bad(
                st,
                Some(field),
                &format!(
                    "Invalid '{field}': integer below minimum value. Expected a value >= 1, but got {value} instead."
                ),
            ));
        }
    }
    if let Some(effort) = body.get("reasoning_effort").filter(|v| !v.is_null())
        && !effort.as_str().is_some_and(|e| LEVEL_ORDER.contains(&e))
    {
        return Err(bad(
            st,
            Some("reasoning_effort"),
            &format!(
                "Invalid value: {effort}. Supported values are: 'none', 'minimal', 'low', 'medium', 'high', 'xhigh', and 'max'."
            ),
        ));
    }
    if let Some(key) = body["prompt_cache_key"].as_str()
        && key.chars().count() > 64
    {
        return Err(with_code(
            bad(
                st,
                Some("prompt_cache_key"),
                &format!(
                    "Invalid 'prompt_cache_key': string too long. Expected a string with maximum length 64, but got a string with length {} instead.",
                    key.chars().count()
                ),
            ),
            "string_above_max_length",
        ));
    }
    Ok(())
}

/// The messages fit the context window the mock plays, or the refusal says they do not.
fn context_fits(st: &MockState, body: &Value) -> Result<(), Refusal> {
    if let Some(limit) = st.context_limit {
        let size = body["messages"].to_string().len();
        if size > limit && st.engine == MockEngine::LlamaCpp {
            return Err(super::llama_cpp::overflow(size / 4, limit / 4));
        }
        if size > limit {
            let message = match st.chat_server {
                ChatServer::Gemini => format!(
                    "The input token count ({}) exceeds the maximum number of tokens allowed ({}).",
                    size / 4,
                    limit / 4
                ),
                ChatServer::OpenAi | ChatServer::DeepSeek => format!(
                    "This model's maximum context length is {} tokens. However, your messages resulted in {} tokens. Please reduce the length of the messages.",
                    limit / 4,
                    size / 4
                ),
            };
            return Err(with_code(
                bad(st, Some("messages"), &message),
                "context_length_exceeded",
            ));
        }
    }
    Ok(())
}

/// A field the server does not know, in its words.
fn unknown_field(st: &MockState, name: &str, at: Option<&str>) -> Refusal {
    match (st.chat_server, at) {
        (ChatServer::Gemini, _) => bad(
            st,
            None,
            &format!("Invalid JSON payload received. Unknown name \"{name}\": Cannot find field."),
        ),
        (_, None) => bad(
            st,
            None,
            &format!("Unrecognized request argument supplied: {name}"),
        ),
        (_, Some(at)) => bad(
            st,
            None,
            &format!("Additional properties are not allowed ('{name}' was unexpected) - '{at}'"),
        ),
    }
}

/// The 400 a model that does not take a parameter gives, in OpenAI's (and Azure's) words.
fn refused_parameter(st: &MockState, body: &Value) -> Result<(), Refusal> {
    let unsupported = |param: &str| {
        Err(with_code(
            bad(
                st,
                Some(param),
                &format!("Unsupported parameter: '{param}' is not supported with this model."),
            ),
            "unsupported_parameter",
        ))
    };
    if st.refuses.contains(&ModelRefuses::Temperature) && !body["temperature"].is_null() {
        return unsupported("temperature");
    }
    if st.refuses.contains(&ModelRefuses::Effort) && !body["reasoning_effort"].is_null() {
        return unsupported("reasoning_effort");
    }
    // What Azure before 2024-08-01 and many proxies answer for a field they do not know.
    for (refused, field) in [
        (ModelRefuses::CompletionTokens, "max_completion_tokens"),
        (ModelRefuses::StreamOptions, "stream_options"),
    ] {
        if st.refuses.contains(&refused) && body.get(field).is_some() {
            return Err(unknown_field(st, field, None));
        }
    }
    if let (Some(levels), Some(effort)) = (&st.efforts, body["reasoning_effort"].as_str())
        && !levels.iter().any(|l| l == effort)
    {
        if st.chat_server == ChatServer::Gemini {
            // discuss.ai.google.dev/t/117875: the levels in alphabetical order.
            let mut sorted = levels.clone();
            sorted.sort();
            return Err(bad(
                st,
                None,
                &format!(
                    "Invalid reasoning_effort: {effort}. Valid values are: {}",
                    sorted.join(", ")
                ),
            ));
        }
        let list = quoted_levels(levels);
        return Err(with_code(
            bad(
                st,
                Some("reasoning_effort"),
                &format!(
                    "Unsupported value: 'reasoning_effort' does not support '{effort}' with this model. Supported values are: {list}."
                ),
            ),
            "unsupported_value",
        ));
    }
    Ok(())
}

fn validate_tools(st: &MockState, body: &Value) -> Result<(), Refusal> {
    let Some(tools) = body.get("tools").filter(|t| !t.is_null()) else {
        return Ok(());
    };
    let Some(tools) = tools.as_array() else {
        return Err(bad(
            st,
            Some("tools"),
            "Invalid type for 'tools': expected an array.",
        ));
    };
    if tools.len() > 128 {
        return Err(bad(
            st,
            Some("tools"),
            &format!(
                "Invalid 'tools': array too long. Expected an array with maximum length 128, but got an array with length {} instead.",
                tools.len()
            ),
        ));
    }
    for (i, tool) in tools.iter().enumerate() {
        if tool["type"] != "function" || !tool["function"].is_object() {
            return Err(bad(
                st,
                Some(&format!("tools[{i}]")),
                &format!("Missing required parameter: 'tools[{i}].function'."),
            ));
        }
        let function = &tool["function"];
        let name = function["name"].as_str().unwrap_or("");
        if st.chat_server == ChatServer::Gemini
            && !name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        {
            // Google's function-declaration rule, as its API words it (kaitranntt/ccs#25,
            // google-gemini/gemini-cli#12425); the OpenAI-compatible endpoint turns the
            // tools into one list of declarations.
            return Err(bad(
                st,
                None,
                &format!(
                    "The GenerateContentRequest proto is invalid:\n  * tools[0].function_declarations[{i}].name: [FIELD_INVALID] Invalid function name. Must start with a letter or an underscore. Must be a-z, A-Z, 0-9, or contain underscores (_), dots (.), colons (:), or dashes (-), with a maximum length of 64."
                ),
            ));
        }
        if !valid_tool_name(name) {
            return Err(bad(
                st,
                Some(&format!("tools[{i}].function.name")),
                &format!(
                    "Invalid 'tools[{i}].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'."
                ),
            ));
        }
        let parameters = &function["parameters"];
        let top_level = ["oneOf", "anyOf", "allOf", "enum", "not"]
            .into_iter()
            .find(|k| parameters.get(*k).is_some());
        if parameters["type"] != "object" || top_level.is_some() {
            return Err(with_code(
                bad(
                    st,
                    Some(&format!("tools[{i}].function.parameters")),
                    &format!(
                        "Invalid schema for function '{name}': schema must be a JSON Schema of 'type: \"object\"', got 'type: \"{}\"'{}.",
                        parameters["type"].as_str().unwrap_or("None"),
                        top_level.map_or(String::new(), |k| format!(
                            " and it must not have '{k}' at the top level"
                        ))
                    ),
                ),
                "invalid_function_parameters",
            ));
        }
    }
    Ok(())
}

fn validate_messages(st: &MockState, messages: &[Value]) -> Result<(), Refusal> {
    // The calls still to be answered, from the last assistant message with `tool_calls`.
    let mut pending: Vec<&str> = Vec::new();
    let mut pending_from = 0;
    let mut answering = false;
    for (n, message) in messages.iter().enumerate() {
        let role = message["role"].as_str().unwrap_or("");
        if role != "tool" && !pending.is_empty() {
            return Err(bad(
                st,
                Some(&format!("messages.[{pending_from}].role")),
                &format!(
                    "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: {}",
                    pending.join(", ")
                ),
            ));
        }
        match role {
            "system" | "developer" | "user" => {
                answering = false;
                validate_content(st, n, role, &message["content"])?;
            }
            "assistant" => {
                validate_assistant(st, n, message)?;
                pending = message["tool_calls"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|c| c["id"].as_str())
                    .collect();
                pending_from = n;
                answering = !pending.is_empty();
            }
            "tool" => {
                let id = message["tool_call_id"].as_str().unwrap_or("");
                if !answering {
                    return Err(bad(
                        st,
                        Some(&format!("messages.[{n}].role")),
                        "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
                    ));
                }
                pending.retain(|p| *p != id);
                if message["content"]
                    .as_array()
                    .is_some_and(|parts| parts.iter().any(|p| p["type"] == "image_url"))
                {
                    return Err(bad(
                        st,
                        Some(&format!("messages.[{n}].content")),
                        &format!(
                            "Invalid 'messages[{n}]'. Image URLs are only allowed for messages with role 'user', but this message with role 'tool' contains an image URL."
                        ),
                    ));
                }
                validate_content(st, n, role, &message["content"])?;
            }
            other => {
                return Err(bad(
                    st,
                    Some(&format!("messages.[{n}].role")),
                    &format!(
                        "Invalid value: '{other}'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'."
                    ),
                ));
            }
        }
    }
    if !pending.is_empty() {
        return Err(bad(
            st,
            Some(&format!("messages.[{pending_from}].role")),
            &format!(
                "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: {}",
                pending.join(", ")
            ),
        ));
    }
    Ok(())
}

/// The content of a system, user or tool message: a string, or a list of parts (text, and
/// images in a user message, as base64 data URLs here).
fn validate_content(st: &MockState, n: usize, role: &str, content: &Value) -> Result<(), Refusal> {
    let parts = match content {
        Value::String(_) => return Ok(()),
        Value::Array(parts) if !parts.is_empty() => parts,
        _ => {
            return Err(bad(
                st,
                Some(&format!("messages[{n}].content")),
                &format!(
                    "Invalid type for 'messages[{n}].content': expected one of a string or array of objects, but got {content} instead."
                ),
            ));
        }
    };
    for (j, part) in parts.iter().enumerate() {
        let url = part["image_url"]["url"].as_str().unwrap_or("");
        let ok = match part["type"].as_str() {
            Some("text") => part["text"].is_string(),
            Some("image_url") if role == "user" => {
                url.starts_with("data:image/") && url.contains(";base64,")
            }
            _ => false,
        };
        if !ok {
            return Err(bad(
                st,
                Some(&format!("messages[{n}].content[{j}]")),
                &format!(
                    "Invalid value for 'messages[{n}].content[{j}]': expected a text or image_url part."
                ),
            ));
        }
    }
    Ok(())
}

/// An assistant message: content or calls, well-formed calls, and the fields a provider
/// added sent back exactly as it issued them (and required where it requires them).
fn validate_assistant(st: &MockState, n: usize, message: &Value) -> Result<(), Refusal> {
    let calls = message["tool_calls"].as_array();
    if message["content"].is_null()
        && calls.is_none_or(Vec::is_empty)
        && message["refusal"].is_null()
    {
        return Err(bad(
            st,
            Some(&format!("messages.[{n}].content")),
            &format!(
                "Invalid value for 'content': expected a string, got null. - 'messages.[{n}]'"
            ),
        ));
    }
    extras_as_issued(st, message, ASSISTANT_FIELDS, &format!("messages.{n}"))?;
    for (k, call) in calls.into_iter().flatten().enumerate() {
        validate_call(st, n, k, call, message)?;
    }
    if in_thinking_mode(st)
        && calls.is_some_and(|c| !c.is_empty())
        && !message["reasoning_content"].is_string()
    {
        // Even a turn whose reply did not think (deepseek-ai/deepseek-harness#739).
        return Err(reasoning_not_passed_back(st));
    }
    Ok(())
}

/// Whether the mock plays DeepSeek in thinking mode: it has sent reasoning in a reply.
/// DeepSeek then needs `reasoning_content` back on every assistant message of a tool loop,
/// empty where the reply had none (its thinking-mode guide).
fn in_thinking_mode(st: &MockState) -> bool {
    st.chat_server == ChatServer::DeepSeek
        && st
            .issued
            .chat_extras
            .iter()
            .any(|(key, _)| key == "reasoning_content")
}

/// DeepSeek's refusal of a tool loop sent back without its reasoning.
fn reasoning_not_passed_back(st: &MockState) -> Refusal {
    with_code(
        bad(
            st,
            None,
            "The reasoning_content in the thinking mode must be passed back to the API.",
        ),
        "invalid_request_error",
    )
}

/// The fields of `object` beyond the `known` ones are those the provider added, sent back
/// exactly as it issued them; `at` is where, in the refusal.
fn extras_as_issued(
    st: &MockState,
    object: &Value,
    known: &[&str],
    at: &str,
) -> Result<(), Refusal> {
    for (key, value) in object.as_object().into_iter().flatten() {
        if known.contains(&key.as_str()) {
            continue;
        }
        if !st
            .issued
            .chat_extras
            .contains(&(key.clone(), value.to_string()))
        {
            return Err(unknown_field(st, key, Some(at)));
        }
    }
    Ok(())
}

/// Call `k` of the assistant message `n`: well-formed, with what the provider added to it
/// (Gemini's thought signature on the call, DeepSeek's reasoning on its message).
fn validate_call(
    st: &MockState,
    n: usize,
    k: usize,
    call: &Value,
    message: &Value,
) -> Result<(), Refusal> {
    let at = format!("messages[{n}].tool_calls[{k}]");
    let (Some(id), Some(name), Some(_)) = (
        call["id"].as_str(),
        call["function"]["name"].as_str(),
        call["function"]["arguments"].as_str(),
    ) else {
        return Err(bad(
            st,
            Some(&at),
            &format!("Missing required parameter: '{at}.function.arguments'."),
        ));
    };
    if call["type"] != "function" {
        return Err(bad(
            st,
            Some(&at),
            &format!("Invalid value for '{at}.type'."),
        ));
    }
    extras_as_issued(
        st,
        call,
        &["id", "type", "function"],
        &format!("messages.{n}.tool_calls.{k}"),
    )?;
    if let Some(signature) = st.issued.thought_signatures.get(id)
        && call.get("extra_content") != Some(signature)
    {
        return Err(bad(
            st,
            None,
            &format!(
                "Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:{name}` , position {}. please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.",
                n + 1
            ),
        ));
    }
    if let Some(reasoning) = st.issued.call_reasoning_content.get(id)
        && message.get("reasoning_content").and_then(Value::as_str) != Some(reasoning.as_str())
    {
        return Err(reasoning_not_passed_back(st));
    }
    Ok(())
}
