//! An OpenAI Responses reply, streamed or whole, read into the items the history keeps and
//! the [`Reply`] the loop reads.
//!
//! A streamed reply is read the way the API documents and Codex does it: the items are those
//! of `response.output_item.done` (each the complete item; the deltas before it only
//! preview it), and the reply ends with `response.completed`, `response.incomplete` or
//! `response.failed`, whose `response` carries the status and usage. An `error` event is
//! classified like an HTTP error.
//!
//! A response, whole or assembled, is read in steps: how it ended (its status), its output
//! items made sendable back under `store: false`, its texts and calls, its usage.

use std::collections::BTreeMap;

use reqwest::header::HeaderMap;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::classify::{AttemptError, classify_error_event, quoted};
use super::error::{ProviderError, ProviderFailure, Unavailable};
use super::error_answer::{carries_error, requested_delay};
use super::overflow::is_context_overflow;
use super::reply::{CallArguments, Reply, StopReason, ToolCall, Usage};
use super::wire::{ReplyStream, raw_item};
use crate::redact::Secrets;

/// One streamed reply being read.
pub(super) struct ResponsesStream {
    provider: String,
    /// Hidden from what is quoted of the provider.
    secrets: Secrets,
    /// The complete items, by `output_index`.
    items: BTreeMap<u64, Value>,
}

impl ResponsesStream {
    pub(super) fn new(provider: &str, secrets: &Secrets) -> ResponsesStream {
        ResponsesStream {
            provider: provider.to_owned(),
            secrets: secrets.clone(),
            items: BTreeMap::new(),
        }
    }
}

const TERMINAL: [&str; 3] = [
    "response.completed",
    "response.incomplete",
    "response.failed",
];

impl ReplyStream for ResponsesStream {
    fn event(&mut self, event: &str, data: &str) -> Result<Option<Reply>, AttemptError> {
        // An event is a JSON object; anything else is as unreadable as text that is not JSON.
        let Some(mut value) = serde_json::from_str::<Value>(data)
            .ok()
            .filter(Value::is_object)
        else {
            // Like Codex, an unreadable event is skipped, unless it was the one that ends the
            // reply.
            if TERMINAL.contains(&event) {
                return Err(malformed(&format!("its `{event}` event is not JSON")));
            }
            return Ok(None);
        };
        let kind = value["type"].as_str().unwrap_or(event).to_owned();
        if !TERMINAL.contains(&kind.as_str()) && kind != "error" && carries_error(&value) {
            // What a gateway sends when the model failed mid-reply (LiteLLM's data-only
            // `{"error": {"message", "type", "code": "500"}}`): openai-python raises on any
            // event whose data carries an `error`, and so does this reader, classified by
            // its code like the HTTP error it stands for.
            return Err(classify_error_event(&self.provider, &self.secrets, &value));
        }
        match kind.as_str() {
            "response.output_item.done" => {
                let index = value["output_index"]
                    .as_u64()
                    .unwrap_or(self.items.len() as u64);
                self.items.insert(index, value["item"].take());
                Ok(None)
            }
            kind if TERMINAL.contains(&kind) => {
                let mut response = value["response"].take();
                if !response.is_object() {
                    return Err(malformed(&format!("its `{kind}` event has no response")));
                }
                if response["status"].is_null() {
                    // The spec does not require `status` (the SDK reads a missing one as
                    // null): the event that ends the reply says how it ended.
                    let status = kind.trim_start_matches("response.");
                    response["status"] = Value::String(status.to_owned());
                }
                if !self.items.is_empty() {
                    let items = std::mem::take(&mut self.items);
                    response["output"] = Value::Array(items.into_values().collect());
                }
                parse_response(response, &self.secrets).map(Some)
            }
            "error" => Err(classify_error_event(&self.provider, &self.secrets, &value)),
            // `response.created`, `.in_progress`, `.output_item.added`, the content part,
            // text, refusal, function-argument and reasoning deltas and their `.done`s, and
            // event types added later: previews of what `output_item.done` brings whole.
            _ => Ok(None),
        }
    }

    fn terminal_event(&self) -> &'static str {
        "response.completed"
    }
}

/// Reads a whole response. `failed` and a non-length `incomplete` become errors; a failure
/// the API marks as transient is retried. A response without `status` (the spec does not
/// require one) is read by what it holds: an error, an incomplete reason, or neither. What
/// is quoted of the provider hides `secrets`.
pub fn parse_response(mut body: Value, secrets: &Secrets) -> Result<Reply, AttemptError> {
    let cut_off = cut_off(&body, secrets)?;
    // Taken, not cloned: the items become the history.
    let Some(Value::Array(mut output)) = body.get_mut("output").map(Value::take) else {
        return Err(malformed("it has no `output` list"));
    };
    if cut_off {
        // A reasoning item must be followed by the item it led to; one the limit cut off
        // before that cannot be sent back.
        while output.last().is_some_and(|i| i["type"] == "reasoning") {
            output.pop();
        }
    }
    let Output {
        items,
        texts,
        tool_calls,
    } = read_output(output, cut_off)?;
    let refused = texts.refusal.is_some() && tool_calls.is_empty();
    Ok(Reply {
        items,
        text: texts.finish(refused),
        stop: StopReason::of(refused, cut_off, !tool_calls.is_empty()),
        tool_calls,
        usage: usage_of(&body["usage"]),
    })
}

/// Whether the output limit cut the response off; a response that failed, or stopped for
/// another reason, is the attempt's error.
fn cut_off(body: &Value, secrets: &Secrets) -> Result<bool, AttemptError> {
    let status = match body["status"].as_str() {
        Some(status) => status,
        None if carries_error(body) => "failed",
        None if !body["incomplete_details"]["reason"].is_null() => "incomplete",
        None => "completed",
    };
    match status {
        "completed" => Ok(false),
        "failed" => Err(failed_response(body, secrets)),
        "incomplete" => {
            let reason = body["incomplete_details"]["reason"]
                .as_str()
                .unwrap_or("unknown");
            // The schema's example spells it `max_tokens`; the enum says `max_output_tokens`.
            if !matches!(reason, "max_output_tokens" | "max_tokens") {
                return Err(AttemptError::Fatal(ProviderError::failed(format!(
                    "the model stopped before finishing its reply (incomplete: {})",
                    quoted(secrets, reason)
                ))));
            }
            Ok(true)
        }
        other => Err(AttemptError::Fatal(ProviderError::failed(format!(
            "the provider answered with a response whose status is {}, not \
             \"completed\"",
            if other.trim().is_empty() {
                "empty".to_owned()
            } else {
                format!("{:?}", quoted(secrets, other))
            }
        )))),
    }
}

/// What a response's output holds: the items to keep, its texts, its calls.
struct Output {
    items: Vec<Box<RawValue>>,
    texts: Texts,
    tool_calls: Vec<ToolCall>,
}

/// Reads the output items, each made sendable back.
fn read_output(output: Vec<Value>, cut_off: bool) -> Result<Output, AttemptError> {
    let mut items = Vec::with_capacity(output.len());
    let mut texts = Texts::default();
    let mut tool_calls = Vec::new();
    for item in output {
        let Value::Object(mut fields) = item else {
            return Err(malformed("an output item is not an object"));
        };
        match fields.get("type").and_then(Value::as_str) {
            Some("message") => texts.read(&fields),
            Some("function_call") => tool_calls.push(function_call(&mut fields, cut_off)?),
            Some("reasoning")
                if fields
                    .get("encrypted_content")
                    .is_none_or(|e| !e.is_string()) =>
            {
                // Without its encrypted content (a model that refused `include`), a reasoning
                // item cannot be sent back under `store: false`: the API would look its id
                // up and find nothing.
                continue;
            }
            _ => {}
        }
        // Under `store: false` the API keeps no items, so a server-issued `id` sent back
        // would be looked up and refused (404 "Item with id … not found"). Everything else
        // stays as sent.
        fields.remove("id");
        items.push(raw_item(&Value::Object(fields)));
    }
    Ok(Output {
        items,
        texts,
        tool_calls,
    })
}

fn usage_of(usage: &Value) -> Usage {
    let count = |v: &Value| v.as_u64().unwrap_or(0);
    Usage {
        input_tokens: count(&usage["input_tokens"]),
        output_tokens: count(&usage["output_tokens"]),
        cache_read_tokens: count(&usage["input_tokens_details"]["cached_tokens"]),
        cache_write_tokens: count(&usage["input_tokens_details"]["cache_write_tokens"]),
    }
}

/// The texts of a reply's messages, gathered to make its answer (SPEC §6.1 "Final text").
#[derive(Default)]
struct Texts {
    /// Every output text part, in order.
    all: Vec<String>,
    /// Those of messages whose `phase` is `final_answer`.
    final_answer: Vec<String>,
    /// What `refusal` parts said, joined.
    refusal: Option<String>,
}

impl Texts {
    fn read(&mut self, message: &Map<String, Value>) {
        let is_final = message.get("phase").and_then(Value::as_str) == Some("final_answer");
        for part in message
            .get("content")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            match part["type"].as_str() {
                Some("output_text") => {
                    if let Some(text) = part["text"].as_str() {
                        self.all.push(text.to_owned());
                        if is_final {
                            self.final_answer.push(text.to_owned());
                        }
                    }
                }
                Some("refusal") => {
                    let said = part["refusal"].as_str().unwrap_or("").to_owned();
                    match &mut self.refusal {
                        Some(text) if !said.is_empty() => {
                            text.push_str("\n\n");
                            text.push_str(&said);
                        }
                        Some(_) => {}
                        None => self.refusal = Some(said),
                    }
                }
                _ => {}
            }
        }
    }

    /// The answer: the refusal's text for a refusal; else the `final_answer` message's
    /// text when phases are present, else every part, joined with a blank line.
    fn finish(self, refused: bool) -> String {
        if refused {
            let said = self.refusal.unwrap_or_default();
            return if said.trim().is_empty() {
                "The model declined to answer (a refusal, with no text).".to_owned()
            } else {
                said
            };
        }
        let parts = if self.final_answer.is_empty() {
            self.all
        } else {
            self.final_answer
        };
        parts.join("\n\n")
    }
}

/// Why a call's `arguments` cannot be run.
enum Unusable {
    /// The JSON stops before its end: the model was still writing it when the reply ended.
    EndsEarly,
    /// Anything else: why, for the model.
    Unreadable(String),
}

/// Reads a `function_call` item and makes it sendable back: `arguments` that are not the
/// text of a JSON object (cut off, malformed, empty or missing) become `"{}"` in the item, as
/// the Messages path does with a tool input that is not an object. Such a call is never run,
/// so no other arguments could be true of it, and a server that parses the history refuses
/// them (llama.cpp's answers 500 "Failed to parse tool call arguments as JSON", every time).
fn function_call(fields: &mut Map<String, Value>, cut_off: bool) -> Result<ToolCall, AttemptError> {
    let field = |name: &str| fields.get(name).and_then(Value::as_str);
    let (Some(call_id), Some(name)) = (field("call_id"), field("name")) else {
        return Err(malformed("a function_call has no call_id or name"));
    };
    let (call_id, name) = (call_id.to_owned(), name.to_owned());
    let raw = field("arguments");
    let sendable = raw.is_some_and(|raw| !raw.trim().is_empty());
    let parsed = match raw {
        Some(raw) if raw.trim().is_empty() => Ok(Value::Object(Map::new())),
        Some(raw) => match serde_json::from_str::<Value>(raw) {
            Ok(object @ Value::Object(_)) => Ok(object),
            Ok(_) => Err(Unusable::Unreadable(
                "the arguments are not a JSON object".to_owned(),
            )),
            Err(e) if e.is_eof() => Err(Unusable::EndsEarly),
            Err(e) => Err(Unusable::Unreadable(format!(
                "the arguments are not valid JSON ({e})"
            ))),
        },
        None => Err(Unusable::Unreadable("the call has no arguments".to_owned())),
    };
    // In a reply cut off by the output limit, the call the model was still writing is
    // not complete; its status says so, or its arguments do not parse. Arguments that stop
    // before their JSON ends were cut off too, whatever the reply says: llama.cpp's server
    // marks a reply its limit cut off `completed`, and the call in it too.
    let unfinished = cut_off && (field("status") != Some("completed") || parsed.is_err());
    let arguments = match parsed {
        _ if unfinished => CallArguments::CutOff,
        Ok(object) => CallArguments::Object(object),
        Err(Unusable::EndsEarly) => CallArguments::CutOff,
        Err(Unusable::Unreadable(why)) => CallArguments::Unreadable(why),
    };
    if !(sendable && matches!(arguments, CallArguments::Object(_))) {
        fields.insert("arguments".to_owned(), Value::String("{}".to_owned()));
    }
    Ok(ToolCall {
        call_id,
        name,
        arguments,
    })
}

fn failed_response(body: &Value, secrets: &Secrets) -> AttemptError {
    let code = body["error"]["code"].as_str();
    let message = body["error"]["message"]
        .as_str()
        .unwrap_or("no error message");
    // The whole message is classified; a bounded part of it is quoted (SPEC §6.1).
    let full = format!(
        "the response failed ({}): {}",
        quoted(secrets, code.unwrap_or("no code")),
        quoted(secrets, message)
    );
    if is_context_overflow(&[code, body["error"]["type"].as_str()], message) {
        return AttemptError::Fatal(ProviderError {
            failure: ProviderFailure::ContextLimit,
            message: full,
        });
    }
    let retryable = |unavailable| AttemptError::Retryable {
        reason: code.unwrap_or_default().to_owned(),
        after: requested_delay(&HeaderMap::new(), message),
        timeout: false,
        message: full.clone(),
        unavailable,
    };
    match code {
        Some("server_error") => retryable(None),
        Some("rate_limit_exceeded") => retryable(Some(Unavailable::RateLimited)),
        Some("server_is_overloaded" | "slow_down") => retryable(Some(Unavailable::Overloaded)),
        Some("insufficient_quota") => AttemptError::Fatal(ProviderError {
            failure: ProviderFailure::Unavailable(Unavailable::Quota),
            message: full,
        }),
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
    use super::super::wire::read_events;
    use super::*;
    use serde_json::json;

    fn stream_of(events: &[Value]) -> Result<Option<Reply>, AttemptError> {
        let stream = ResponsesStream::new("openai", &Secrets::default());
        read_events(Box::new(stream), events)
    }

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
            "usage": {"input_tokens": 10, "output_tokens": 3, "input_tokens_details": {"cached_tokens": 4}}
        });
        let reply = parse_response(body, &Secrets::default()).unwrap();
        assert_eq!(reply.text, "Hi");
        assert_eq!(reply.stop, StopReason::ToolUse);
        assert_eq!(
            reply.tool_calls[0].arguments,
            CallArguments::Object(json!({"q": 1}))
        );
        assert_eq!(
            reply.usage,
            Usage {
                input_tokens: 10,
                output_tokens: 3,
                cache_read_tokens: 4,
                cache_write_tokens: 0,
            }
        );
        let items = reply.item_values();
        assert_eq!(
            items[0],
            json!({"type": "reasoning", "summary": [], "encrypted_content": "enc-1"})
        );
        assert!(items.iter().all(|i| i.get("id").is_none()));
    }

    #[test]
    fn a_refusal_part_is_a_refused_stop_with_its_text() {
        let body = json!({"status": "completed", "output": [
            {"type": "message", "id": "msg_1", "role": "assistant", "content": [
                {"type": "refusal", "refusal": "I can't help with that."}]}]});
        let reply = parse_response(body, &Secrets::default()).unwrap();
        assert_eq!(reply.text, "I can't help with that.");
        assert_eq!(reply.stop, StopReason::Refused);
        let plain = parse_response(
            json!({"status": "completed", "output": []}),
            &Secrets::default(),
        )
        .unwrap();
        assert_eq!(plain.stop, StopReason::EndTurn);
    }

    #[test]
    fn malformed_arguments_become_an_error_for_that_call() {
        let body = json!({"status": "completed", "output": [
            {"type": "function_call", "call_id": "c", "name": "n", "arguments": "{nope"}]});
        let reply = parse_response(body, &Secrets::default()).unwrap();
        assert!(matches!(
            reply.tool_calls[0].arguments,
            CallArguments::Unreadable(_)
        ));
        assert_eq!(
            reply.item_values()[0]["arguments"],
            "{}",
            "never sent back as received"
        );
    }

    /// llama.cpp's server marks a reply its output limit cut off `completed`, and the call
    /// in it, whose arguments stop mid-way: the call is cut off, never run, and goes back
    /// with `{}` (the server answers 500 to the arguments as received). Arguments that are
    /// empty, missing or not an object go back as `{}` too; an object goes back as written.
    #[test]
    fn arguments_that_end_early_are_a_cut_off_call_sent_back_as_an_empty_object() {
        let call = |arguments: Value| {
            let mut item = json!({"type": "function_call", "id": "fc_1", "call_id": "call_1",
                "name": "read", "status": "completed"});
            if !arguments.is_null() {
                item["arguments"] = arguments;
            }
            let reply = parse_response(
                json!({"status": "completed", "output": [item]}),
                &Secrets::default(),
            )
            .unwrap();
            (
                reply.tool_calls[0].arguments.clone(),
                reply.item_values()[0]["arguments"].clone(),
            )
        };
        assert_eq!(
            call(json!("{\"path\":")),
            (CallArguments::CutOff, json!("{}"))
        );
        assert_eq!(
            call(json!("{\"path\": \"notes.txt\"")),
            (CallArguments::CutOff, json!("{}"))
        );
        assert_eq!(
            call(json!("{\"path\": \"notes.txt\"}")),
            (
                CallArguments::Object(json!({"path": "notes.txt"})),
                json!("{\"path\": \"notes.txt\"}")
            ),
            "complete arguments go back byte for byte"
        );
        assert_eq!(
            call(json!("")),
            (CallArguments::Object(json!({})), json!("{}"))
        );
        assert!(matches!(
            call(Value::Null),
            (CallArguments::Unreadable(_), a) if a == "{}"
        ));
        assert!(matches!(
            call(json!("[1, 2]")),
            (CallArguments::Unreadable(_), a) if a == "{}"
        ));
    }

    #[test]
    fn failed_responses_are_classified() {
        let overflow = json!({"status": "failed", "error": {"code": "context_length_exceeded",
            "message": "Your input exceeds the context window of this model."}});
        match parse_response(overflow, &Secrets::default()) {
            Err(AttemptError::Fatal(e)) => assert_eq!(e.failure, ProviderFailure::ContextLimit),
            other => panic!("{other:?}"),
        }
        let transient =
            json!({"status": "failed", "error": {"code": "server_error", "message": "x"}});
        assert!(matches!(
            parse_response(transient, &Secrets::default()),
            Err(AttemptError::Retryable { .. })
        ));
        let filtered = json!({"status": "incomplete", "incomplete_details": {"reason": "content_filter"}, "output": []});
        let huge = json!({"status": "failed", "error": {"code": "invalid_prompt",
            "message": "m".repeat(20 * 1024 * 1024)}});
        match parse_response(huge, &Secrets::default()) {
            Err(AttemptError::Fatal(e)) => assert!(e.message.len() < 1200, "{}", e.message.len()),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            parse_response(filtered, &Secrets::default()),
            Err(AttemptError::Fatal(_))
        ));
    }

    #[test]
    fn a_reply_cut_off_by_the_limit_keeps_what_can_be_sent_back() {
        let body = json!({"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"},
        "output": [
            {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "a",
             "arguments": "{}", "status": "completed"},
            {"type": "function_call", "id": "fc_2", "call_id": "call_2", "name": "b",
             "arguments": "{\"path\": \"src/ma", "status": "incomplete"},
            {"type": "reasoning", "id": "rs_3", "summary": [], "encrypted_content": "enc"}
        ]});
        let reply = parse_response(body, &Secrets::default()).unwrap();
        assert_eq!(reply.stop, StopReason::CutOff);
        assert_eq!(
            reply.tool_calls[0].arguments,
            CallArguments::Object(json!({}))
        );
        assert_eq!(reply.tool_calls[1].arguments, CallArguments::CutOff);
        assert_eq!(
            reply.items.len(),
            2,
            "the trailing reasoning item is dropped"
        );
        assert_eq!(
            reply.item_values()[1]["arguments"],
            "{}",
            "the half-written arguments are not sent back"
        );
    }

    #[test]
    fn a_stream_is_read_from_its_done_items_and_its_last_event() {
        let call = json!({"type": "function_call", "id": "fc_1", "call_id": "call_1",
            "name": "get", "arguments": "{\"q\":1}", "status": "completed"});
        let reply = stream_of(&[
            json!({"type": "response.created", "response": {"status": "in_progress", "output": []}}),
            json!({"type": "response.output_item.added", "output_index": 0,
                   "item": {"type": "function_call", "call_id": "call_1", "name": "get", "arguments": ""}}),
            json!({"type": "response.function_call_arguments.delta", "output_index": 0, "delta": "{\"q\""}),
            json!({"type": "response.some_future_event"}),
            json!({"type": "response.output_item.done", "output_index": 0, "item": call}),
            json!({"type": "response.completed", "response": {"status": "completed", "output": [],
                   "usage": {"input_tokens": 7, "output_tokens": 2}}}),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(reply.stop, StopReason::ToolUse);
        assert_eq!(reply.usage.input_tokens, 7);
        assert_eq!(reply.item_values()[0]["call_id"], "call_1");

        let error = stream_of(&[
            json!({"type": "response.created", "response": {"status": "in_progress"}}),
            json!({"type": "error", "code": "server_is_overloaded", "message": "busy"}),
        ]);
        assert!(matches!(error, Err(AttemptError::Retryable { .. })));

        let failed = stream_of(&[
            json!({"type": "response.failed", "response": {"status": "failed",
            "error": {"code": "context_length_exceeded", "message": "too long"}}}),
        ]);
        assert!(
            matches!(failed, Err(AttemptError::Fatal(e)) if e.failure == ProviderFailure::ContextLimit)
        );
    }
}
