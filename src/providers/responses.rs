//! OpenAI Responses (`POST {base_url}/responses`), stateless: `store: false`, the whole
//! history in `input` every time, reasoning carried by `encrypted_content`.

use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderValue};
use serde_json::{Map, Value, json};

use super::credentials::ApiKey;
use super::error::{ProviderError, ProviderFailure};
use super::http::{AttemptError, is_context_overflow};
use super::reply::{ModelSettings, Reply, StopReason, ToolCall, ToolOutput, Usage};
use crate::limits::PROVIDER_MESSAGE_CHARS;
use crate::toolbox::ToolSpec;

pub fn headers(key: &ApiKey) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    if let Ok(mut value) = HeaderValue::from_str(&format!("Bearer {}", key.expose())) {
        value.set_sensitive(true);
        headers.insert(AUTHORIZATION, value);
    }
    headers
}

pub fn request_body(
    settings: &ModelSettings,
    system: &str,
    input: &[Value],
    tools: &[ToolSpec],
) -> Value {
    let mut body = json!({
        "model": settings.model,
        "instructions": system,
        "input": input,
        "store": false,
        "stream": false,
        "include": ["reasoning.encrypted_content"],
    });
    let map = body.as_object_mut().expect("a json! object literal");
    if !tools.is_empty() {
        let tools: Vec<Value> = tools
            .iter()
            .map(|t| {
                json!({
                    "type": "function",
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.input_schema,
                    // MCP schemas rarely meet strict mode's rules (every property required,
                    // no additional properties); the child validates arguments instead.
                    "strict": false,
                })
            })
            .collect();
        map.insert("tools".into(), Value::Array(tools));
        map.insert("tool_choice".into(), json!("auto"));
        map.insert("parallel_tool_calls".into(), json!(true));
    }
    if let Some(effort) = settings.reasoning_effort {
        map.insert("reasoning".into(), json!({ "effort": effort.as_str() }));
    }
    if let Some(t) = settings.temperature {
        map.insert("temperature".into(), json!(t));
    }
    body
}

/// User input as `message` items.
pub fn push_user_texts(items: &mut Vec<Value>, texts: &[String]) {
    for text in texts {
        items.push(json!({
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": text}],
        }));
    }
}

/// One `function_call_output` per result. The API has no error flag, so a failure says so
/// in its text.
pub fn push_tool_outputs(items: &mut Vec<Value>, outputs: &[ToolOutput]) {
    for output in outputs {
        let text = if output.is_error {
            format!("Error: {}", output.content)
        } else {
            output.content.clone()
        };
        items.push(json!({
            "type": "function_call_output",
            "call_id": output.call_id,
            "output": text,
        }));
    }
}

/// Reads a response body. `status: failed` and `incomplete` become errors; a failure the
/// API marks as transient is retried.
pub fn parse_reply(mut body: Value) -> Result<Reply, AttemptError> {
    let status = body["status"].as_str().unwrap_or("");
    match status {
        "completed" => {}
        "failed" => return Err(failed_response(&body)),
        "incomplete" => {
            let reason = body["incomplete_details"]["reason"]
                .as_str()
                .unwrap_or("unknown");
            return Err(AttemptError::Fatal(ProviderError::failed(format!(
                "the model stopped before finishing its reply (incomplete: {reason})"
            ))));
        }
        other => {
            return Err(AttemptError::Fatal(ProviderError::failed(format!(
                "the provider answered with a response whose status is {other:?}, not \
                 \"completed\""
            ))));
        }
    }
    // Taken, not cloned: the items become the history.
    let Some(Value::Array(output)) = body.get_mut("output").map(Value::take) else {
        return Err(malformed("it has no `output` list"));
    };
    let mut items = Vec::with_capacity(output.len());
    let mut text = String::new();
    let mut tool_calls = Vec::new();
    for item in output {
        let Value::Object(mut fields) = item else {
            return Err(malformed("an output item is not an object"));
        };
        match fields.get("type").and_then(Value::as_str) {
            Some("message") => {
                for part in fields
                    .get("content")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if part["type"] == "output_text"
                        && let Some(t) = part["text"].as_str()
                    {
                        text.push_str(t);
                    }
                }
            }
            Some("function_call") => tool_calls.push(function_call(&fields)?),
            _ => {}
        }
        // Under `store: false` the API keeps no items, so a server-issued `id` sent back
        // would be looked up and refused (404 "Item with id … not found"). Everything else
        // stays as sent.
        fields.remove("id");
        items.push(Value::Object(fields));
    }
    let usage = Usage {
        input_tokens: body["usage"]["input_tokens"].as_u64().unwrap_or(0),
        output_tokens: body["usage"]["output_tokens"].as_u64().unwrap_or(0),
    };
    let stop = if tool_calls.is_empty() {
        StopReason::EndTurn
    } else {
        StopReason::ToolUse
    };
    Ok(Reply {
        items,
        text,
        tool_calls,
        usage,
        stop,
    })
}

fn function_call(fields: &Map<String, Value>) -> Result<ToolCall, AttemptError> {
    let field = |name: &str| fields.get(name).and_then(Value::as_str);
    let (Some(call_id), Some(name)) = (field("call_id"), field("name")) else {
        return Err(malformed("a function_call has no call_id or name"));
    };
    let arguments = match field("arguments") {
        Some(raw) => serde_json::from_str::<Value>(if raw.trim().is_empty() { "{}" } else { raw })
            .map_err(|e| format!("the arguments are not valid JSON ({e})"))
            .and_then(|v| match v {
                Value::Object(_) => Ok(v),
                _ => Err("the arguments are not a JSON object".to_owned()),
            }),
        None => Err("the call has no arguments".to_owned()),
    };
    Ok(ToolCall {
        call_id: call_id.to_owned(),
        name: name.to_owned(),
        arguments,
    })
}

fn failed_response(body: &Value) -> AttemptError {
    let code = body["error"]["code"].as_str();
    let message = body["error"]["message"]
        .as_str()
        .unwrap_or("no error message");
    // The whole message is classified; a bounded part of it is quoted (SPEC §6.1).
    let quoted = super::http::snippet(message, PROVIDER_MESSAGE_CHARS)
        .unwrap_or_else(|| "no error message".to_owned());
    let full = format!(
        "the response failed ({}): {quoted}",
        code.unwrap_or("no code")
    );
    if is_context_overflow(code, message) {
        return AttemptError::Fatal(ProviderError {
            failure: ProviderFailure::ContextLimit,
            message: full,
        });
    }
    match code {
        Some("server_error" | "rate_limit_exceeded" | "server_is_overloaded" | "slow_down") => {
            AttemptError::Retryable {
                reason: code.unwrap_or_default().to_owned(),
                after: super::http::requested_delay(&HeaderMap::new(), message),
                timeout: false,
                message: full,
            }
        }
        _ => AttemptError::Fatal(ProviderError::failed(full)),
    }
}

fn malformed(what: &str) -> AttemptError {
    AttemptError::retryable(
        "malformed reply",
        format!("the provider's reply is not a Responses API response: {what}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_text_calls_reasoning_and_usage() {
        let body = json!({
            "id": "resp_1", "object": "response", "status": "completed",
            "output": [
                {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "enc-1"},
                {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get",
                 "arguments": "{\"q\":1}", "status": "completed"},
                {"type": "message", "id": "msg_1", "role": "assistant",
                 "content": [{"type": "output_text", "text": "Hi", "annotations": []}]}
            ],
            "usage": {"input_tokens": 10, "output_tokens": 3}
        });
        let reply = parse_reply(body).unwrap();
        assert_eq!(reply.text, "Hi");
        assert_eq!(reply.stop, StopReason::ToolUse);
        assert_eq!(reply.tool_calls[0].arguments, Ok(json!({"q": 1})));
        assert_eq!(
            reply.usage,
            Usage {
                input_tokens: 10,
                output_tokens: 3
            }
        );
        assert_eq!(
            reply.items[0],
            json!({"type": "reasoning", "summary": [], "encrypted_content": "enc-1"})
        );
        assert!(reply.items.iter().all(|i| i.get("id").is_none()));
    }

    #[test]
    fn malformed_arguments_become_an_error_for_that_call() {
        let body = json!({"status": "completed", "output": [
            {"type": "function_call", "call_id": "c", "name": "n", "arguments": "{nope"}]});
        let reply = parse_reply(body).unwrap();
        assert!(reply.tool_calls[0].arguments.is_err());
    }

    #[test]
    fn failed_responses_are_classified() {
        let overflow = json!({"status": "failed", "error": {"code": "context_length_exceeded",
            "message": "Your input exceeds the context window of this model."}});
        match parse_reply(overflow) {
            Err(AttemptError::Fatal(e)) => assert_eq!(e.failure, ProviderFailure::ContextLimit),
            other => panic!("{other:?}"),
        }
        let transient =
            json!({"status": "failed", "error": {"code": "server_error", "message": "x"}});
        assert!(matches!(
            parse_reply(transient),
            Err(AttemptError::Retryable { .. })
        ));
        let huge = json!({"status": "failed", "error": {"code": "invalid_prompt",
            "message": "m".repeat(20 * 1024 * 1024)}});
        match parse_reply(huge) {
            Err(AttemptError::Fatal(e)) => assert!(e.message.len() < 1200, "{}", e.message.len()),
            other => panic!("{other:?}"),
        }
        let incomplete = json!({"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}, "output": []});
        assert!(matches!(
            parse_reply(incomplete),
            Err(AttemptError::Fatal(_))
        ));
    }
}
