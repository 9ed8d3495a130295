//! The Messages side of the mock: validation as the real API does it, and rendering.

use std::collections::HashSet;

use axum::http::HeaderMap;
use serde_json::{Value, json};

use super::cache::CachedUsage;
use super::script::{MockEngine, MockWire, ModelRefuses, ScriptedReply};
use super::sse::{Event, Writer, pieces};
use super::state::{MockState, Refusal, refusal, valid_tool_name};

fn bad(message: &str) -> Refusal {
    refusal(
        MockWire::Messages,
        400,
        "invalid_request_error",
        None,
        message,
    )
}

pub(super) fn validate(st: &MockState, headers: &HeaderMap, body: &Value) -> Result<(), Refusal> {
    super::auth::check(st, MockWire::Messages, headers)?;
    if headers.get("anthropic-version").is_none() {
        return Err(bad("anthropic-version: header is required"));
    }
    if body["model"].as_str().is_none_or(str::is_empty) {
        return Err(bad("model: Field required"));
    }
    if body["max_tokens"].as_u64().is_none_or(|m| m == 0) {
        return Err(bad("max_tokens: Field required"));
    }
    refused_parameter(st, body)?;
    validate_thinking(body)?;
    validate_system(body)?;
    validate_tools(body)?;
    count_breakpoints(body)?;
    let Some(messages) = body["messages"].as_array().filter(|m| !m.is_empty()) else {
        return Err(bad("messages: at least one message is required"));
    };
    if messages[0]["role"] != "user" {
        return Err(bad("messages: first message must use the \"user\" role"));
    }
    validate_messages(st, messages)?;
    if body["thinking"]["type"] == "enabled" {
        thinking_turn_starts_with_thinking(messages)?;
    }
    if let Some(last) = messages.last()
        && last["role"] == "assistant"
    {
        // Claude 4.6 and later refuse a conversation that ends with the assistant's turn
        // (prefill); going on after `pause_turn` by sending the paused content back is the
        // documented exception.
        // A breakpoint on the block is a marker, not part of what goes back.
        let tail = last["content"]
            .as_array()
            .and_then(|blocks| blocks.last())
            .map(|block| {
                let mut block = block.clone();
                if let Some(map) = block.as_object_mut() {
                    map.remove("cache_control");
                }
                block.to_string()
            });
        if !tail.is_some_and(|t| st.issued.paused.contains(&t)) {
            return Err(bad(
                "This model does not support assistant message prefill. The conversation must end with a user message.",
            ));
        }
    }
    if let Some(limit) = st.context_limit {
        let size = body["messages"].to_string().len() + body["system"].to_string().len();
        if size > limit && st.engine == MockEngine::LlamaCpp {
            return Err(super::llama_cpp::overflow(size / 4, limit / 4));
        }
        if size > limit {
            return Err(bad(&format!(
                "prompt is too long: {} tokens > {} maximum",
                size / 4,
                limit / 4
            )));
        }
    }
    Ok(())
}

/// The 400 a model that does not take a parameter gives, in Anthropic's words.
fn refused_parameter(st: &MockState, body: &Value) -> Result<(), Refusal> {
    if st.refuses.contains(&ModelRefuses::Temperature) && !body["temperature"].is_null() {
        return Err(bad("`temperature` is deprecated for this model."));
    }
    if st.refuses.contains(&ModelRefuses::AdaptiveThinking)
        && body["thinking"]["type"] == "adaptive"
    {
        return Err(bad("adaptive thinking is not supported on this model"));
    }
    if st.refuses.contains(&ModelRefuses::BudgetThinking) && body["thinking"]["type"] == "enabled" {
        return Err(bad(
            "\"thinking.type.enabled\" is not supported for this model. Use \"thinking.type.adaptive\" and \"output_config.effort\" to control thinking behavior.",
        ));
    }
    if st.refuses.contains(&ModelRefuses::Effort) && !body["output_config"]["effort"].is_null() {
        return Err(bad("This model does not support the effort parameter."));
    }
    if let (Some(levels), Some(effort)) = (&st.efforts, body["output_config"]["effort"].as_str())
        && !levels.iter().any(|l| l == effort)
    {
        // The levels listed alphabetically, as the API does (diegosouzapw/OmniRoute#7276).
        let mut sorted = levels.clone();
        sorted.sort();
        return Err(bad(&format!(
            "This model does not support effort level '{effort}'. Supported levels: {}.",
            sorted.join(", ")
        )));
    }
    Ok(())
}

fn validate_thinking(body: &Value) -> Result<(), Refusal> {
    let thinking = &body["thinking"];
    if thinking.is_null() {
        return Ok(());
    }
    match thinking["type"].as_str() {
        Some("adaptive" | "disabled") => {}
        Some("enabled") => {
            let budget = thinking["budget_tokens"].as_u64().unwrap_or(0);
            if budget < 1024 {
                return Err(bad(
                    "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024",
                ));
            }
            if budget >= body["max_tokens"].as_u64().unwrap_or(0) {
                return Err(bad(
                    "`max_tokens` must be greater than `thinking.budget_tokens`.",
                ));
            }
        }
        _ => {
            return Err(bad(
                "thinking.type: Input should be 'enabled', 'disabled' or 'adaptive'",
            ));
        }
    }
    if thinking["type"] != "disabled" && body["temperature"].as_f64().is_some_and(|t| t != 1.0) {
        return Err(bad(
            "`temperature` may only be set to 1 when thinking is enabled or in adaptive mode.",
        ));
    }
    Ok(())
}

/// With budget thinking, the assistant message answered by the last user message's tool
/// results (the turn still in progress) must begin with its thinking (n8n-io/n8n#22550, with
/// the API's words).
fn thinking_turn_starts_with_thinking(messages: &[Value]) -> Result<(), Refusal> {
    let Some(last) = messages.len().checked_sub(1) else {
        return Ok(());
    };
    let answers_tools = messages[last]["content"]
        .as_array()
        .is_some_and(|blocks| blocks.iter().any(|b| b["type"] == "tool_result"));
    if !answers_tools || last == 0 {
        return Ok(());
    }
    let n = last - 1;
    let first = &messages[n]["content"][0]["type"];
    if messages[n]["role"] == "assistant"
        && !matches!(first.as_str(), Some("thinking" | "redacted_thinking"))
    {
        return Err(bad(&format!(
            "messages.{n}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{}`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking",
            first.as_str().unwrap_or("nothing")
        )));
    }
    Ok(())
}

fn validate_system(body: &Value) -> Result<(), Refusal> {
    match &body["system"] {
        Value::Null | Value::String(_) => Ok(()),
        Value::Array(blocks) => {
            for (i, block) in blocks.iter().enumerate() {
                if block["type"] != "text" || block["text"].as_str().is_none_or(str::is_empty) {
                    return Err(bad(&format!(
                        "system.{i}: text content blocks must be non-empty"
                    )));
                }
            }
            Ok(())
        }
        _ => Err(bad(
            "system: Input should be a valid string or a list of text blocks",
        )),
    }
}

/// At most 4 breakpoints, and none on a thinking block.
fn count_breakpoints(body: &Value) -> Result<(), Refusal> {
    let marked = |v: &Value| v.get("cache_control").is_some_and(|c| !c.is_null());
    let mut found = usize::from(marked(body));
    found += body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| marked(t))
        .count();
    found += body["system"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|b| marked(b))
        .count();
    for message in body["messages"].as_array().into_iter().flatten() {
        for block in message["content"].as_array().into_iter().flatten() {
            if marked(block) {
                if matches!(
                    block["type"].as_str(),
                    Some("thinking" | "redacted_thinking")
                ) {
                    return Err(bad(
                        "messages: thinking blocks cannot be marked with cache_control",
                    ));
                }
                found += 1;
            }
            found += block["content"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|b| marked(b))
                .count();
        }
    }
    if found > 4 {
        return Err(bad(&format!(
            "A maximum of 4 blocks with cache_control may be provided. Found {found}."
        )));
    }
    Ok(())
}

fn validate_tools(body: &Value) -> Result<(), Refusal> {
    let Some(tools) = body.get("tools").and_then(Value::as_array) else {
        return Ok(());
    };
    for (i, tool) in tools.iter().enumerate() {
        let name = tool["name"].as_str().unwrap_or("");
        if !valid_tool_name(name) {
            return Err(bad(&format!(
                "tools.{i}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'"
            )));
        }
        if tool["input_schema"]["type"] != "object" {
            return Err(bad(&format!(
                "tools.{i}.custom.input_schema.type: Input should be 'object'"
            )));
        }
        if ["oneOf", "allOf", "anyOf"]
            .iter()
            .any(|k| tool["input_schema"].get(*k).is_some())
        {
            return Err(bad(&format!(
                "tools.{i}.custom.input_schema: input_schema does not support oneOf, allOf, or anyOf at the top level"
            )));
        }
    }
    Ok(())
}

/// The `tool_use` ids of an assistant message.
fn tool_use_ids(message: &Value) -> Vec<&str> {
    message["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|b| b["type"] == "tool_use")
        .filter_map(|b| b["id"].as_str())
        .collect()
}

fn validate_messages(st: &MockState, messages: &[Value]) -> Result<(), Refusal> {
    for (n, message) in messages.iter().enumerate() {
        let role = message["role"].as_str().unwrap_or("");
        if role != "user" && role != "assistant" {
            return Err(bad(&format!(
                "messages.{n}.role: Input should be 'user' or 'assistant'"
            )));
        }
        let blocks: Vec<&Value> = match &message["content"] {
            Value::String(_) => Vec::new(),
            Value::Array(blocks) if !blocks.is_empty() => blocks.iter().collect(),
            _ => {
                return Err(bad(&format!(
                    "messages.{n}: all messages must have non-empty content"
                )));
            }
        };
        let previous_uses: HashSet<&str> = match n.checked_sub(1).map(|p| &messages[p]) {
            Some(prev) if prev["role"] == "assistant" => tool_use_ids(prev).into_iter().collect(),
            _ => HashSet::new(),
        };
        let turn = Turn {
            n,
            role,
            blocks: &blocks,
            previous_uses: &previous_uses,
        };
        for m in 0..blocks.len() {
            validate_block(st, &turn, m)?;
        }
        if role == "assistant" {
            every_use_answered(messages, n, message)?;
        }
    }
    Ok(())
}

/// The message a block is in: its place, its role, its blocks, and the tool uses of the
/// assistant message before it.
struct Turn<'a> {
    n: usize,
    role: &'a str,
    blocks: &'a [&'a Value],
    previous_uses: &'a HashSet<&'a str>,
}

/// Block `m` of the message `turn`.
fn validate_block(st: &MockState, turn: &Turn<'_>, m: usize) -> Result<(), Refusal> {
    let (n, block) = (turn.n, turn.blocks[m]);
    match block["type"].as_str() {
        Some("tool_use") => {
            if turn.role != "assistant" {
                return Err(bad(&format!(
                    "messages.{n}.content.{m}: tool_use blocks are only allowed in assistant messages"
                )));
            }
            if !block["input"].is_object() {
                return Err(bad(&format!(
                    "messages.{n}.content.{m}.tool_use.input: Input should be an object"
                )));
            }
        }
        Some("tool_result") => validate_tool_result(turn, m)?,
        Some("text") if block["text"].as_str().is_none_or(str::is_empty) => {
            return Err(bad("messages: text content blocks must be non-empty"));
        }
        Some("text") if block["text"].as_str().is_some_and(|t| t.trim().is_empty()) => {
            // anthropics/claude-code#23440.
            return Err(bad(
                "messages: text content blocks must contain non-whitespace text",
            ));
        }
        Some("thinking") => {
            let signature = block["signature"].as_str().unwrap_or("");
            if st.issued.thinking.get(signature).map(String::as_str) != block["thinking"].as_str() {
                return Err(bad(&format!(
                    "messages.{n}.content.{m}: Invalid `signature` in `thinking` block"
                )));
            }
        }
        Some("text" | "redacted_thinking" | "image" | "document") => {}
        other => {
            return Err(bad(&format!(
                "messages.{n}.content.{m}.type: unknown block type {other:?}"
            )));
        }
    }
    Ok(())
}

/// A `tool_result` block (block `m` of `turn`): in a user message, answering a use of the
/// message before, first in its message, with content when it is an error, and text or
/// images inside.
fn validate_tool_result(turn: &Turn<'_>, m: usize) -> Result<(), Refusal> {
    let (n, block) = (turn.n, turn.blocks[m]);
    let id = block["tool_use_id"].as_str().unwrap_or("");
    if turn.role != "user" || !turn.previous_uses.contains(id) {
        return Err(bad(&format!(
            "messages.{n}.content.{m}: unexpected `tool_use_id` found in `tool_result` blocks: {id}. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
        )));
    }
    let empty = match &block["content"] {
        Value::Null => true,
        Value::String(text) => text.is_empty(),
        Value::Array(parts) => parts.is_empty(),
        _ => false,
    };
    if block["is_error"] == true && empty {
        // jlevy/markform#153, bytedance/trae-agent#230.
        return Err(bad(&format!(
            "messages.{n}.content.{m}.tool_result: content cannot be empty if `is_error` is true"
        )));
    }
    if turn.blocks[..m].iter().any(|b| b["type"] != "tool_result") {
        return Err(bad(&format!(
            "messages.{n}: `tool_result` blocks must come first in the content of a user message, before any other content"
        )));
    }
    for (k, inner) in block["content"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let ok = match inner["type"].as_str() {
            Some("text") => inner["text"].as_str().is_some_and(|t| !t.is_empty()),
            Some("image") => {
                inner["source"]["type"] == "base64"
                    && matches!(
                        inner["source"]["media_type"].as_str(),
                        Some("image/png" | "image/jpeg" | "image/gif" | "image/webp")
                    )
                    && inner["source"]["data"]
                        .as_str()
                        .is_some_and(|d| !d.is_empty())
            }
            _ => false,
        };
        if !ok {
            return Err(bad(&format!(
                "messages.{n}.content.{m}.content.{k}: text content blocks must be non-empty, and images need a base64 source of a supported media type"
            )));
        }
    }
    Ok(())
}

/// Every tool use of the assistant message `n` has its result in the next message.
fn every_use_answered(messages: &[Value], n: usize, message: &Value) -> Result<(), Refusal> {
    let uses = tool_use_ids(message);
    if uses.is_empty() {
        return Ok(());
    }
    let answered: HashSet<&str> = messages
        .get(n + 1)
        .filter(|next| next["role"] == "user")
        .and_then(|next| next["content"].as_array())
        .into_iter()
        .flatten()
        .filter(|b| b["type"] == "tool_result")
        .filter_map(|b| b["tool_use_id"].as_str())
        .collect();
    let missing: Vec<&str> = uses
        .into_iter()
        .filter(|id| !answered.contains(id))
        .collect();
    if !missing.is_empty() {
        return Err(bad(&format!(
            "messages.{}: `tool_use` ids were found without `tool_result` blocks immediately after: {}. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
            n + 1,
            missing.join(", ")
        )));
    }
    Ok(())
}

/// The reply as the whole message a non-streamed request gets; `cached` is the emulated
/// cache's count of the request's input tokens, when it is on.
pub(super) fn render(
    st: &mut MockState,
    request: &Value,
    reply: &ScriptedReply,
    cached: Option<CachedUsage>,
) -> Value {
    let n = st.next_id();
    let mut content = Vec::new();
    // With budget thinking on, the model always thinks first.
    if reply.reasoning || request["thinking"]["type"] == "enabled" {
        let thinking = format!("Thinking {n}.");
        let signature = format!("sig-{n}");
        st.issued
            .thinking
            .insert(signature.clone(), thinking.clone());
        content.push(json!({"type": "thinking", "thinking": thinking, "signature": signature}));
    }
    if let Some(commentary) = &reply.commentary {
        content.push(json!({"type": "text", "text": commentary}));
    }
    if let Some(text) = &reply.text {
        content.push(json!({"type": "text", "text": text}));
    }
    let calls = reply.tool_calls.len();
    for (k, (name, input)) in reply.tool_calls.iter().enumerate() {
        // A call the limit cut off has only part of its input; a whole reply holds no more
        // of it than an empty object.
        let input = if reply.cut_off && k + 1 == calls {
            json!({})
        } else {
            input.clone()
        };
        content.push(json!({"type": "tool_use", "id": format!("toolu_{n}_{k}"), "name": name, "input": input}));
    }
    let stop = reply.stop_reason.clone().unwrap_or_else(|| {
        if reply.refusal.is_some() || reply.filtered {
            "refusal"
        } else if reply.cut_off {
            "max_tokens"
        } else if reply.tool_calls.is_empty() {
            "end_turn"
        } else {
            "tool_use"
        }
        .to_owned()
    });
    if stop == "pause_turn"
        && let Some(last) = content.last()
    {
        // What the client sends back to go on, trailing whitespace trimmed as the API wants.
        let mut tail = last.clone();
        if let Some(text) = tail["text"].as_str() {
            tail["text"] = json!(text.trim_end());
        }
        st.issued.paused.insert(tail.to_string());
    }
    let (input_tokens, output_tokens) = reply.usage;
    let usage = match cached {
        Some(c) => json!({"input_tokens": c.input, "cache_read_input_tokens": c.read,
                          "cache_creation_input_tokens": c.written, "output_tokens": output_tokens}),
        None => json!({"input_tokens": input_tokens, "output_tokens": output_tokens}),
    };
    let mut message = json!({
        "id": format!("msg_{n}"), "type": "message", "role": "assistant", "model": request["model"],
        "content": content, "stop_reason": stop, "stop_sequence": null, "usage": usage
    });
    if let Some(said) = &reply.refusal {
        message["stop_details"] = json!({"type": "refusal", "category": null, "explanation": said});
    }
    message
}

/// The events a streamed request gets for `message`, in the API's order: `message_start`,
/// a `ping`, each block started, grown in deltas and stopped, then `message_delta` with the
/// stop reason and usage, and `message_stop`. A tool call the limit cut off streams half of
/// its input.
pub(super) fn events(message: &Value, reply: &ScriptedReply, delta_chars: usize) -> Vec<Event> {
    let mut out = Writer::new(false);
    let mut started = message.clone();
    started["content"] = json!([]);
    started["stop_reason"] = Value::Null;
    started["stop_sequence"] = Value::Null;
    if started.get("stop_details").is_some() {
        started["stop_details"] = Value::Null;
    }
    started["usage"]["output_tokens"] = json!(1);
    out.push("message_start", json!({"message": started}));
    out.push("ping", json!({}));
    let blocks = message["content"].as_array().cloned().unwrap_or_default();
    let last = blocks.len().saturating_sub(1);
    for (index, block) in blocks.iter().enumerate() {
        match block["type"].as_str() {
            Some("text") => text_events(&mut out, index, block, delta_chars),
            Some("thinking") => thinking_events(&mut out, index, block, delta_chars),
            Some("tool_use") => {
                let input = if reply.cut_off && index == last {
                    let whole = reply
                        .tool_calls
                        .last()
                        .map(|(_, a)| a.to_string())
                        .unwrap_or_default();
                    whole.chars().take(whole.chars().count() / 2).collect()
                } else {
                    block["input"].to_string()
                };
                tool_use_events(&mut out, index, block, &input, delta_chars);
            }
            _ => out.push(
                "content_block_start",
                json!({"index": index, "content_block": block}),
            ),
        }
        out.push("content_block_stop", json!({"index": index}));
    }
    out.push(
        "message_delta",
        json!({"delta": {"stop_reason": message["stop_reason"], "stop_sequence": null,
                         "stop_details": message.get("stop_details").cloned().unwrap_or(Value::Null)},
        "usage": {"output_tokens": message["usage"]["output_tokens"]}}),
    );
    out.push("message_stop", json!({}));
    out.finish()
}

/// A text block's start and its text in deltas.
fn text_events(out: &mut Writer, index: usize, block: &Value, delta_chars: usize) {
    out.push(
        "content_block_start",
        json!({"index": index, "content_block": {"type": "text", "text": ""}}),
    );
    for piece in pieces(block["text"].as_str().unwrap_or(""), delta_chars) {
        out.push(
            "content_block_delta",
            json!({"index": index, "delta": {"type": "text_delta", "text": piece}}),
        );
    }
}

/// A thinking block's start, its thinking in deltas, then its signature.
fn thinking_events(out: &mut Writer, index: usize, block: &Value, delta_chars: usize) {
    out.push(
        "content_block_start",
        json!({"index": index,
        "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
    );
    for piece in pieces(block["thinking"].as_str().unwrap_or(""), delta_chars) {
        out.push(
            "content_block_delta",
            json!({"index": index, "delta": {"type": "thinking_delta", "thinking": piece}}),
        );
    }
    out.push(
        "content_block_delta",
        json!({"index": index,
        "delta": {"type": "signature_delta", "signature": block["signature"]}}),
    );
}

/// A tool use's start with an empty input, then `input` (as much as was written) in deltas.
fn tool_use_events(out: &mut Writer, index: usize, block: &Value, input: &str, delta_chars: usize) {
    let mut start = block.clone();
    start["input"] = json!({});
    out.push(
        "content_block_start",
        json!({"index": index, "content_block": start}),
    );
    for piece in pieces(input, delta_chars) {
        out.push(
            "content_block_delta",
            json!({"index": index, "delta": {"type": "input_json_delta", "partial_json": piece}}),
        );
    }
}
