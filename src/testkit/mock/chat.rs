//! The Chat Completions side of the mock: validation as OpenAI's API does it (in its words),
//! and rendering, as the server the mock plays ([`ChatServer`]) streams it.
//!
//! - OpenAI: every chunk with `index`ed tool-call fragments (the id, type and name in the
//!   first, the arguments in pieces after), `finish_reason` `tool_calls`, the usage in a last
//!   chunk of its own when `stream_options.include_usage` asks for it, then `data: [DONE]`.
//!   Unknown fields are refused, at the top ("Unrecognized request argument supplied") and in
//!   a message ("Additional properties are not allowed").
//! - DeepSeek: the same chunks, with the model's thinking in `reasoning_content` deltas
//!   before the answer when the script asks for reasoning; a later request must send it back
//!   on an assistant message that called tools, exactly ("The reasoning_content in the
//!   thinking mode must be passed back to the API."). Usage adds `prompt_cache_hit_tokens`.
//! - Gemini: each call whole in one delta, without `index`, ids like `function-call-…`, the
//!   first call of a reply with a thought signature in `extra_content` that must come back
//!   on it ("Function call is missing a thought_signature …"), `finish_reason` `stop` even
//!   for calls, usage on every chunk; errors as a JSON list, and unknown fields refused as
//!   "Invalid JSON payload received. Unknown name …".

use axum::http::HeaderMap;
use serde_json::{Value, json};

use super::cache::CachedUsage;
use super::responses::{LEVEL_ORDER, quoted_levels};
use super::script::{ChatServer, MockEngine, MockWire, ModelRefuses, ScriptedReply};
use super::sse::{DONE_EVENT, Event, pieces};
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
    refused_parameter(st, body)?;
    validate_tools(st, body)?;
    let Some(messages) = body["messages"].as_array().filter(|m| !m.is_empty()) else {
        return Err(bad(st, Some("messages"), "[] is too short - 'messages'"));
    };
    validate_messages(st, messages)?;
    context_overflow(st, body)
}

/// A conversation longer than the mock's context (its size in characters over four, as
/// tokens), in the words of the server it plays.
fn context_overflow(st: &MockState, body: &Value) -> Result<(), Refusal> {
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
    for (key, value) in message.as_object().into_iter().flatten() {
        if ASSISTANT_FIELDS.contains(&key.as_str()) {
            continue;
        }
        if !st
            .issued
            .chat_extras
            .contains(&(key.clone(), value.to_string()))
        {
            return Err(unknown_field(st, key, Some(&format!("messages.{n}"))));
        }
    }
    for (k, call) in calls.into_iter().flatten().enumerate() {
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
        for (key, value) in call.as_object().into_iter().flatten() {
            if matches!(key.as_str(), "id" | "type" | "function") {
                continue;
            }
            if !st
                .issued
                .chat_extras
                .contains(&(key.clone(), value.to_string()))
            {
                return Err(unknown_field(
                    st,
                    key,
                    Some(&format!("messages.{n}.tool_calls.{k}")),
                ));
            }
        }
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
            return Err(with_code(
                bad(
                    st,
                    None,
                    "The reasoning_content in the thinking mode must be passed back to the API.",
                ),
                "invalid_request_error",
            ));
        }
    }
    Ok(())
}

/// The reply as the parts a message and its chunks are made of.
struct Parts {
    id: String,
    content: String,
    reasoning: Option<String>,
    refusal: Option<String>,
    /// `(id, name, arguments as sent, extra_content)`.
    calls: Vec<(String, String, String, Option<Value>)>,
    finish: &'static str,
    usage: Value,
}

/// The parts of `reply`, recording what a later request must send back.
fn parts(st: &mut MockState, reply: &ScriptedReply, cached: Option<CachedUsage>) -> Parts {
    let n = st.next_id();
    let server = st.chat_server;
    let reasoning =
        (reply.reasoning && server == ChatServer::DeepSeek).then(|| format!("Thinking {n}."));
    let content = [reply.commentary.as_deref(), reply.text.as_deref()]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join("\n\n");
    let count = reply.tool_calls.len();
    let mut calls = Vec::with_capacity(count);
    for (k, (name, arguments)) in reply.tool_calls.iter().enumerate() {
        let id = match server {
            ChatServer::Gemini => format!("function-call-{n}-{k}"),
            ChatServer::OpenAi | ChatServer::DeepSeek => format!("call_{n}_{k}"),
        };
        let whole = arguments.to_string();
        let arguments = if reply.cut_off && k + 1 == count {
            // The limit struck while the model wrote this one.
            whole.chars().take(whole.chars().count() / 2).collect()
        } else {
            whole
        };
        // Gemini 3 signs the first call of each reply.
        let signature = (server == ChatServer::Gemini && k == 0)
            .then(|| json!({"google": {"thought_signature": format!("sig-{n}")}}));
        if let Some(signature) = &signature {
            st.issued
                .thought_signatures
                .insert(id.clone(), signature.clone());
            st.issued
                .chat_extras
                .insert(("extra_content".to_owned(), signature.to_string()));
        }
        if let Some(reasoning) = &reasoning {
            st.issued
                .call_reasoning_content
                .insert(id.clone(), reasoning.clone());
        }
        calls.push((id, name.clone(), arguments, signature));
    }
    if let Some(reasoning) = &reasoning {
        st.issued
            .chat_extras
            .insert(("reasoning_content".to_owned(), json!(reasoning).to_string()));
    }
    let finish = if reply.filtered {
        "content_filter"
    } else if reply.cut_off {
        "length"
    } else if !calls.is_empty() && server != ChatServer::Gemini {
        "tool_calls"
    } else {
        "stop"
    };
    let (scripted_input, output) = reply.usage;
    let (input, read) = cached.map_or((scripted_input, 0), |c| (c.input, c.read));
    let mut usage = json!({"prompt_tokens": input, "completion_tokens": output,
        "total_tokens": input + output,
        "prompt_tokens_details": {"cached_tokens": read, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
            "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}});
    if server == ChatServer::DeepSeek {
        usage["prompt_cache_hit_tokens"] = json!(read);
        usage["prompt_cache_miss_tokens"] = json!(input - read.min(input));
    }
    Parts {
        id: format!("chatcmpl-mock{n}"),
        content,
        reasoning,
        refusal: reply.refusal.clone(),
        calls,
        finish,
        usage,
    }
}

/// The whole `chat.completion` a request without `stream: true` gets.
pub(super) fn render(
    st: &mut MockState,
    request: &Value,
    reply: &ScriptedReply,
    cached: Option<CachedUsage>,
) -> Value {
    let parts = parts(st, reply, cached);
    let mut message = json!({"role": "assistant",
        "content": if parts.content.is_empty() { Value::Null } else { json!(parts.content) },
        "refusal": parts.refusal, "annotations": []});
    if let Some(reasoning) = &parts.reasoning {
        message["reasoning_content"] = json!(reasoning);
    }
    if !parts.calls.is_empty() {
        message["tool_calls"] = Value::Array(
            parts
                .calls
                .iter()
                .map(|(id, name, arguments, signature)| {
                    let mut call = json!({"id": id, "type": "function",
                        "function": {"name": name, "arguments": arguments}});
                    if let Some(signature) = signature {
                        call["extra_content"] = signature.clone();
                    }
                    call
                })
                .collect(),
        );
    }
    json!({"id": parts.id, "object": "chat.completion", "created": 1_760_000_000,
        "model": request["model"], "choices": [{"index": 0, "message": message,
        "logprobs": null, "finish_reason": parts.finish}], "usage": parts.usage,
        "service_tier": "default", "system_fingerprint": "fp_mock"})
}

/// The chunks a streamed request gets, then `[DONE]`, as the server the mock plays sends
/// them.
pub(super) fn events(
    st: &mut MockState,
    request: &Value,
    reply: &ScriptedReply,
    cached: Option<CachedUsage>,
) -> Vec<Event> {
    let server = st.chat_server;
    let parts = parts(st, reply, cached);
    let include_usage = request["stream_options"]["include_usage"] == true;
    let model = request["model"].clone();
    let mut deltas: Vec<(Value, Option<&str>)> = Vec::new();
    let chars = reply.stream.delta_chars;
    let first = if parts.calls.is_empty() && parts.refusal.is_none() {
        json!({"role": "assistant", "content": "", "refusal": null})
    } else {
        json!({"role": "assistant", "content": null, "refusal": null})
    };
    deltas.push((first, None));
    for piece in pieces(parts.reasoning.as_deref().unwrap_or(""), chars) {
        deltas.push((json!({"reasoning_content": piece}), None));
    }
    for piece in pieces(&parts.content, chars) {
        deltas.push((json!({"content": piece}), None));
    }
    for piece in pieces(parts.refusal.as_deref().unwrap_or(""), chars) {
        deltas.push((json!({"refusal": piece}), None));
    }
    for (index, (id, name, arguments, signature)) in parts.calls.iter().enumerate() {
        if server == ChatServer::Gemini {
            let mut call = json!({"id": id, "type": "function",
                "function": {"name": name, "arguments": arguments}});
            if let Some(signature) = signature {
                call["extra_content"] = signature.clone();
            }
            deltas.push((json!({"tool_calls": [call]}), None));
            continue;
        }
        deltas.push((
            json!({"tool_calls": [{"index": index, "id": id, "type": "function",
                "function": {"name": name, "arguments": ""}}]}),
            None,
        ));
        for piece in pieces(arguments, chars) {
            deltas.push((
                json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}),
                None,
            ));
        }
    }
    deltas.push((json!({}), Some(parts.finish)));
    let total = deltas.len();
    let mut events: Vec<Event> = deltas
        .into_iter()
        .enumerate()
        .map(|(i, (delta, finish))| {
            let mut chunk = json!({"id": parts.id, "object": "chat.completion.chunk",
                "created": 1_760_000_000, "model": model, "service_tier": "default",
                "system_fingerprint": "fp_mock",
                "choices": [{"index": 0, "delta": delta, "logprobs": null,
                             "finish_reason": finish}]});
            match server {
                // Gemini's usage grows with every chunk; the last one is the reply's.
                ChatServer::Gemini => {
                    let mut usage = parts.usage.clone();
                    let output = usage["completion_tokens"].as_u64().unwrap_or(0);
                    usage["completion_tokens"] = json!(output * (i as u64 + 1) / total as u64);
                    chunk["usage"] = usage;
                }
                _ if include_usage => chunk["usage"] = Value::Null,
                _ => {}
            }
            if server == ChatServer::OpenAi {
                chunk["obfuscation"] = json!("mock");
            }
            (String::new(), chunk)
        })
        .collect();
    if include_usage && server != ChatServer::Gemini {
        events.push((
            String::new(),
            json!({"id": parts.id, "object": "chat.completion.chunk", "created": 1_760_000_000,
                "model": model, "service_tier": "default", "system_fingerprint": "fp_mock",
                "choices": [], "usage": parts.usage}),
        ));
    }
    events.push((DONE_EVENT.to_owned(), Value::Null));
    events
}
