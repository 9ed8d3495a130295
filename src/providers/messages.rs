//! Anthropic Messages (`POST {base_url}/v1/messages`). Assistant content blocks, thinking
//! blocks with their signatures included, go back exactly as received.

use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderValue};
use serde_json::{Value, json};

use super::credentials::{ApiKey, insert_auth_header};
use super::error::{ProviderError, ProviderFailure};
use super::http::AttemptError;
use super::reply::{ModelSettings, Reply, StopReason, ToolCall, ToolOutput, Usage};
use crate::definition::AuthHeader;
use crate::limits::MESSAGES_MAX_TOKENS;
use crate::toolbox::ToolSpec;

/// The API version this client speaks.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

pub fn headers(key: &ApiKey, auth: AuthHeader) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(
        "anthropic-version",
        HeaderValue::from_static(ANTHROPIC_VERSION),
    );
    insert_auth_header(&mut headers, key, auth);
    headers
}

pub fn request_body(
    settings: &ModelSettings,
    system: &str,
    messages: &[Value],
    tools: &[ToolSpec],
) -> Value {
    let mut body = json!({
        "model": settings.model,
        "max_tokens": MESSAGES_MAX_TOKENS,
        "system": system,
        "messages": messages,
    });
    let map = body.as_object_mut().expect("a json! object literal");
    if !tools.is_empty() {
        let tools: Vec<Value> = tools
            .iter()
            .map(|t| {
                json!({
                    "name": t.name,
                    "description": t.description,
                    "input_schema": t.input_schema,
                })
            })
            .collect();
        map.insert("tools".into(), Value::Array(tools));
    }
    if let Some(effort) = settings.reasoning_effort {
        map.insert("output_config".into(), json!({ "effort": effort.as_str() }));
    }
    if let Some(t) = settings.temperature {
        map.insert("temperature".into(), json!(t));
    }
    body
}

/// User text goes into the last message when that is already a user message (after tool
/// results, which must come first), else into a new one.
pub fn push_user_texts(messages: &mut Vec<Value>, texts: &[String]) {
    let blocks = texts.iter().map(|t| json!({"type": "text", "text": t}));
    append_blocks(messages, "user", blocks.collect());
}

/// The assistant's content, as received. A continuation of a paused or cut-off reply joins
/// the assistant message it continues.
pub fn push_reply(messages: &mut Vec<Value>, reply: &Reply) {
    let mut blocks = reply.items.clone();
    if reply.stop == StopReason::Continue {
        // The API refuses an assistant turn that ends in whitespace when asked to continue it.
        if let Some(last) = blocks.last_mut()
            && last["type"] == "text"
            && let Some(text) = last["text"].as_str()
        {
            last["text"] = Value::String(text.trim_end().to_owned());
        }
    }
    append_blocks(messages, "assistant", blocks);
}

/// One `tool_result` block per output, in a user message right after the tool calls.
pub fn push_tool_outputs(messages: &mut Vec<Value>, outputs: &[ToolOutput]) {
    let blocks = outputs
        .iter()
        .map(|o| {
            let mut block = json!({
                "type": "tool_result",
                "tool_use_id": o.call_id,
                "content": o.content,
            });
            if o.is_error {
                block["is_error"] = json!(true);
            }
            block
        })
        .collect();
    append_blocks(messages, "user", blocks);
}

fn append_blocks(messages: &mut Vec<Value>, role: &str, blocks: Vec<Value>) {
    if blocks.is_empty() {
        return;
    }
    if let Some(last) = messages.last_mut()
        && last["role"] == role
        && let Some(content) = last["content"].as_array_mut()
    {
        content.extend(blocks);
        return;
    }
    messages.push(json!({"role": role, "content": blocks}));
}

pub fn parse_reply(mut body: Value) -> Result<Reply, AttemptError> {
    if body["type"] != "message" {
        return Err(malformed("its `type` is not \"message\""));
    }
    // Taken, not cloned: the blocks become the history's assistant turn.
    let Some(Value::Array(mut content)) = body.get_mut("content").map(Value::take) else {
        return Err(malformed("it has no `content` list"));
    };
    let mut text = String::new();
    let mut tool_calls = Vec::new();
    for block in &mut content {
        match block["type"].as_str() {
            Some("text") => text.push_str(block["text"].as_str().unwrap_or("")),
            Some("tool_use") => {
                let (Some(id), Some(name)) = (block["id"].as_str(), block["name"].as_str()) else {
                    return Err(malformed("a tool_use block has no id or name"));
                };
                let (call_id, name) = (id.to_owned(), name.to_owned());
                let arguments = match &block["input"] {
                    input @ Value::Object(_) => Ok(input.clone()),
                    _ => {
                        // The API accepts only an object here when the history is sent
                        // back, so the block is kept with an empty one; the model is told
                        // its arguments were unreadable.
                        block["input"] = json!({});
                        Err("the tool input is not a JSON object".to_owned())
                    }
                };
                tool_calls.push(ToolCall {
                    call_id,
                    name,
                    arguments,
                });
            }
            _ => {}
        }
    }
    let usage = &body["usage"];
    let count = |field: &str| usage[field].as_u64().unwrap_or(0);
    let usage = Usage {
        // Saturating: the counts are the provider's numbers, not ours to trust.
        input_tokens: count("input_tokens")
            .saturating_add(count("cache_creation_input_tokens"))
            .saturating_add(count("cache_read_input_tokens")),
        output_tokens: count("output_tokens"),
    };
    let stop = match body["stop_reason"].as_str() {
        _ if !tool_calls.is_empty() => StopReason::ToolUse,
        Some("pause_turn" | "max_tokens") => StopReason::Continue,
        Some("model_context_window_exceeded") => {
            return Err(AttemptError::Fatal(ProviderError {
                failure: ProviderFailure::ContextLimit,
                message: "the model stopped: model_context_window_exceeded".to_owned(),
            }));
        }
        Some("refusal") => {
            return Err(AttemptError::Fatal(ProviderError::failed(
                "the model declined to continue (stop reason: refusal)",
            )));
        }
        _ => StopReason::EndTurn,
    };
    Ok(Reply {
        items: content,
        text,
        tool_calls,
        usage,
        stop,
    })
}

fn malformed(what: &str) -> AttemptError {
    AttemptError::retryable(
        "malformed reply",
        format!("the provider's reply is not a Messages API message: {what}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(content: Value, stop: &str) -> Value {
        json!({"id": "msg_1", "type": "message", "role": "assistant", "content": content,
               "stop_reason": stop, "usage": {"input_tokens": 5, "output_tokens": 2,
               "cache_read_input_tokens": 3}})
    }

    #[test]
    fn parses_blocks_and_keeps_them_verbatim() {
        let content = json!([
            {"type": "thinking", "thinking": "hmm", "signature": "sig-1"},
            {"type": "text", "text": "Let me check."},
            {"type": "tool_use", "id": "toolu_1", "name": "get", "input": {"q": 1}}
        ]);
        let reply = parse_reply(message(content.clone(), "tool_use")).unwrap();
        assert_eq!(reply.items, content.as_array().unwrap().clone());
        assert_eq!(reply.text, "Let me check.");
        assert_eq!(reply.stop, StopReason::ToolUse);
        assert_eq!(reply.usage.input_tokens, 8, "cache tokens count as input");
    }

    #[test]
    fn provider_counts_that_would_overflow_saturate() {
        let mut body = message(json!([{"type": "text", "text": "x"}]), "end_turn");
        body["usage"]["input_tokens"] = json!(u64::MAX);
        let reply = parse_reply(body).unwrap();
        assert_eq!(reply.usage.input_tokens, u64::MAX);
    }

    #[test]
    fn a_tool_use_whose_input_is_not_an_object_is_kept_sendable() {
        let content = json!([{"type": "tool_use", "id": "t1", "name": "n", "input": "oops"}]);
        let reply = parse_reply(message(content, "tool_use")).unwrap();
        assert!(reply.tool_calls[0].arguments.is_err());
        assert_eq!(
            reply.items[0]["input"],
            json!({}),
            "the API takes only an object back"
        );
    }

    #[test]
    fn stop_reasons_map() {
        let text = json!([{"type": "text", "text": "partial "}]);
        assert_eq!(
            parse_reply(message(text.clone(), "pause_turn"))
                .unwrap()
                .stop,
            StopReason::Continue
        );
        assert_eq!(
            parse_reply(message(text.clone(), "end_turn")).unwrap().stop,
            StopReason::EndTurn
        );
        match parse_reply(message(text.clone(), "model_context_window_exceeded")) {
            Err(AttemptError::Fatal(e)) => assert_eq!(e.failure, ProviderFailure::ContextLimit),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            parse_reply(message(text, "refusal")),
            Err(AttemptError::Fatal(_))
        ));
    }

    #[test]
    fn tool_results_come_first_and_text_joins_them() {
        let mut messages = vec![json!({"role": "user", "content": "hi"})];
        let reply = parse_reply(message(
            json!([{"type": "tool_use", "id": "t1", "name": "n", "input": {}}]),
            "tool_use",
        ))
        .unwrap();
        push_reply(&mut messages, &reply);
        push_tool_outputs(
            &mut messages,
            &[ToolOutput {
                call_id: "t1".into(),
                content: "out".into(),
                is_error: true,
            }],
        );
        push_user_texts(&mut messages, &["also this".into()]);
        assert_eq!(messages.len(), 3);
        assert_eq!(
            messages[2],
            json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "out", "is_error": true},
                {"type": "text", "text": "also this"}
            ]})
        );
    }
}
