//! The Messages side of the mock: validation as the real API does it, and rendering.

use std::collections::HashSet;

use axum::http::HeaderMap;
use serde_json::{Value, json};

use super::script::{MockWire, ScriptedReply};
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
    validate_tools(body)?;
    let Some(messages) = body["messages"].as_array().filter(|m| !m.is_empty()) else {
        return Err(bad("messages: at least one message is required"));
    };
    if messages[0]["role"] != "user" {
        return Err(bad("messages: first message must use the \"user\" role"));
    }
    validate_messages(st, messages)?;
    if let Some(limit) = st.context_limit {
        let size = body["messages"].to_string().len() + body["system"].to_string().len();
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
        for (m, block) in blocks.iter().enumerate() {
            match block["type"].as_str() {
                Some("tool_use") => {
                    if role != "assistant" {
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
                Some("tool_result") => {
                    let id = block["tool_use_id"].as_str().unwrap_or("");
                    if role != "user" || !previous_uses.contains(id) {
                        return Err(bad(&format!(
                            "messages.{n}.content.{m}: unexpected `tool_use_id` found in `tool_result` blocks: {id}. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
                        )));
                    }
                }
                Some("thinking") => {
                    let signature = block["signature"].as_str().unwrap_or("");
                    if st.issued.thinking.get(signature).map(String::as_str)
                        != block["thinking"].as_str()
                    {
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
        }
        if role == "assistant" {
            let uses = tool_use_ids(message);
            if !uses.is_empty() {
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
            }
        }
    }
    Ok(())
}

pub(super) fn render(st: &mut MockState, request: &Value, reply: &ScriptedReply) -> Value {
    let n = st.next_id();
    let mut content = Vec::new();
    if reply.reasoning {
        let thinking = format!("Thinking {n}.");
        let signature = format!("sig-{n}");
        st.issued
            .thinking
            .insert(signature.clone(), thinking.clone());
        content.push(json!({"type": "thinking", "thinking": thinking, "signature": signature}));
    }
    if let Some(text) = &reply.text {
        content.push(json!({"type": "text", "text": text}));
    }
    for (k, (name, input)) in reply.tool_calls.iter().enumerate() {
        content.push(json!({"type": "tool_use", "id": format!("toolu_{n}_{k}"), "name": name, "input": input}));
    }
    let stop = reply.stop_reason.clone().unwrap_or_else(|| {
        if reply.tool_calls.is_empty() {
            "end_turn"
        } else {
            "tool_use"
        }
        .to_owned()
    });
    let (input_tokens, output_tokens) = reply.usage;
    json!({
        "id": format!("msg_{n}"), "type": "message", "role": "assistant", "model": request["model"],
        "content": content, "stop_reason": stop, "stop_sequence": null,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens}
    })
}
