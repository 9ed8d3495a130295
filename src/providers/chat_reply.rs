//! Reading a Chat Completions reply (SPEC §6.2): the chunks of a stream, or a whole
//! `chat.completion` from a server that ignored `stream: true`, assembled into the assistant
//! message the history keeps and the [`Reply`] the loop reads.
//!
//! A stream is `data:` lines of `chat.completion.chunk` objects and ends with `data:
//! [DONE]`. The first choice's `delta`s are joined: `content` and `refusal` text in order,
//! and `tool_calls` fragments by their `index` (the id, type and name come with a call's
//! first fragment, its `arguments` in pieces after; a server that repeats the id or the name
//! in every fragment does not get them doubled, as openai-python's accumulator would). Some
//! servers bend this, and are read as they behave (research notes in docs/decisions.md):
//! Gemini sends each call whole without an `index` (told apart by its `id`) and ends a
//! tool-call reply with `finish_reason: "stop"`, so whether the model asked for tools is read
//! from the calls, not the reason; usage may come on every chunk (the last one counts,
//! never a sum); a mid-stream failure is a `data: {"error": …}` line, classified like the
//! HTTP error it stands for; a stream that ends without a `finish_reason` broke off, and one
//! that ends after it but without `data: [DONE]` (older TGI, some llama.cpp forks) is
//! complete, as openai-python reads it.
//!
//! `finish_reason` `length` is a reply cut off by the output limit: the call the model was
//! still writing (the last one, or any whose arguments do not parse) is never run, and is
//! kept with `{}` as its arguments so the history stays valid for every server (llama.cpp
//! parses them). `content_filter`, or a `refusal`, is the model declining: the reply is a
//! refusal, and any call it began is dropped. Usage: `prompt_tokens` (every input token),
//! `completion_tokens`, and the cache reads of `prompt_tokens_details.cached_tokens`
//! (DeepSeek: `prompt_cache_hit_tokens`).
//!
//! What a provider adds to the message and needs back is kept on it, exactly as sent, and
//! only when the provider sent it: `reasoning_content` (DeepSeek's thinking mode refuses a
//! history whose tool-call turns lack it; llama.cpp and vLLM send and read it too),
//! `reasoning` and `reasoning_details` (vLLM 0.16 and later, OpenRouter), and `extra_content`
//! on the message or a call (Gemini 3's thought signatures, which its API requires back on
//! the calls). Other fields of the deltas (`role`, `audio`, `annotations`, fields added
//! later) are not kept: sending a field back that a strict server does not know fails the
//! request.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::classify::{AttemptError, classify_error_event};
use super::error_answer::carries_error;
use super::reply::{CallArguments, Reply, StopReason, ToolCall, Usage};
use super::wire::{ReplyStream, raw_item};
use crate::redact::Secrets;

/// Message fields a provider adds that go back with the message.
const MESSAGE_EXTRAS: [&str; 4] = [
    "reasoning_content",
    "reasoning",
    "reasoning_details",
    "extra_content",
];

/// Tool-call fields a provider adds that go back with the call.
const CALL_EXTRAS: [&str; 1] = ["extra_content"];

/// What the data of the last event of a stream is.
const DONE: &str = "[DONE]";

/// One streamed reply being read.
pub(super) struct ChatStream {
    provider: String,
    /// What a quote of the provider's words must hide.
    secrets: Secrets,
    message: Assembly,
}

impl ChatStream {
    pub(super) fn new(provider: &str, secrets: &Secrets) -> ChatStream {
        ChatStream {
            provider: provider.to_owned(),
            secrets: secrets.clone(),
            message: Assembly::default(),
        }
    }
}

impl ReplyStream for ChatStream {
    fn event(&mut self, event: &str, data: &str) -> Result<Option<Reply>, AttemptError> {
        if data.trim() == DONE {
            let message = std::mem::take(&mut self.message);
            if message.finish.is_none() {
                return Err(AttemptError::BrokeOff {
                    reason: "stream ended early".to_owned(),
                    timeout: false,
                    message: format!(
                        "{} ended its reply stream with no `finish_reason` (a server that \
                         failed mid-reply)",
                        self.provider
                    ),
                });
            }
            return message.finish(&self.provider).map(Some);
        }
        // A chunk is a JSON object; anything else is skipped, as openai-python's reader
        // would fail on it only if it had to use it.
        let Some(value) = serde_json::from_str::<Value>(data)
            .ok()
            .filter(Value::is_object)
        else {
            return Ok(None);
        };
        if event == "error" || carries_error(&value) {
            return Err(classify_error_event(&self.provider, &self.secrets, &value));
        }
        self.message.add_chunk(&value);
        Ok(None)
    }

    fn terminal_event(&self) -> &'static str {
        "data: [DONE]"
    }

    /// A stream that ended without `data: [DONE]` after a chunk with a `finish_reason` is
    /// complete, as openai-python reads it (its iterator stops at the end of the body, and
    /// the accumulated message has its reason): older TGI releases and some llama.cpp forks
    /// never send `[DONE]`. Sending it again would bill the reply twice.
    fn ended_without_terminal_event(&mut self) -> Result<Option<Reply>, AttemptError> {
        if self.message.finish.is_none() {
            return Ok(None);
        }
        std::mem::take(&mut self.message)
            .finish(&self.provider)
            .map(Some)
    }
}

/// Reads a whole `chat.completion` (a server that answered `stream: true` with one body).
/// What is quoted of the provider hides `secrets`.
pub(super) fn parse_completion(
    provider: &str,
    secrets: &Secrets,
    body: Value,
) -> Result<Reply, AttemptError> {
    if carries_error(&body) {
        return Err(classify_error_event(provider, secrets, &body));
    }
    let Some(choice) = body["choices"].as_array().and_then(|c| c.first()) else {
        return Err(malformed("it has no `choices`"));
    };
    let Some(message) = choice["message"].as_object() else {
        return Err(malformed("its choice has no `message` object"));
    };
    let mut assembly = Assembly::default();
    for (key, value) in message {
        match key.as_str() {
            "content" => match value {
                Value::String(text) => assembly.content.push_str(text),
                // A list of text parts, which some servers answer with.
                Value::Array(parts) => {
                    for part in parts {
                        assembly
                            .content
                            .push_str(part["text"].as_str().unwrap_or(""));
                    }
                }
                _ => {}
            },
            "refusal" => assembly.add_refusal(value),
            "tool_calls" => {
                for (i, call) in value.as_array().into_iter().flatten().enumerate() {
                    assembly.add_whole_call(i, call);
                }
            }
            key => assembly.add_extra(key, value),
        }
    }
    assembly.finish = Some(
        choice["finish_reason"]
            .as_str()
            .unwrap_or("stop")
            .to_owned(),
    );
    if body["usage"].is_object() {
        assembly.usage = Some(body["usage"].clone());
    }
    assembly.finish(provider)
}

/// A reply being assembled from its chunks (or read from a whole message).
#[derive(Default)]
struct Assembly {
    content: String,
    /// What `refusal` said, once it said anything.
    refusal: Option<String>,
    extras: Map<String, Value>,
    calls: Vec<CallParts>,
    /// Where each call is in `calls`, by the `index` its fragments carry.
    by_index: HashMap<u64, usize>,
    /// … and by its `id`, for servers that send no `index`.
    by_id: HashMap<String, usize>,
    finish: Option<String>,
    /// The last usage sent (a server may send it on every chunk).
    usage: Option<Value>,
}

/// One tool call being assembled.
#[derive(Default)]
struct CallParts {
    id: Option<String>,
    kind: Option<String>,
    name: Option<String>,
    arguments: String,
    extras: Map<String, Value>,
}

impl Assembly {
    fn add_chunk(&mut self, chunk: &Value) {
        if chunk["usage"].is_object() {
            self.usage = Some(chunk["usage"].clone());
        }
        for choice in chunk["choices"].as_array().into_iter().flatten() {
            // One choice is asked for (`n` is never sent); another is not this reply.
            if choice["index"].as_u64().unwrap_or(0) != 0 {
                continue;
            }
            if let Some(delta) = choice["delta"].as_object() {
                for (key, value) in delta {
                    match key.as_str() {
                        "content" => self.content.push_str(value.as_str().unwrap_or("")),
                        "refusal" => self.add_refusal(value),
                        "tool_calls" => {
                            for fragment in value.as_array().into_iter().flatten() {
                                self.add_fragment(fragment);
                            }
                        }
                        key => self.add_extra(key, value),
                    }
                }
            }
            if let Some(reason) = choice["finish_reason"].as_str() {
                self.finish = Some(reason.to_owned());
            }
        }
    }

    fn add_refusal(&mut self, value: &Value) {
        if let Some(text) = value.as_str().filter(|t| !t.is_empty()) {
            self.refusal.get_or_insert_default().push_str(text);
        }
    }

    fn add_extra(&mut self, key: &str, value: &Value) {
        if MESSAGE_EXTRAS.contains(&key) && !value.is_null() {
            join(&mut self.extras, key, value);
        }
    }

    /// One streamed `tool_calls` entry: a new call, or more of one already begun.
    fn add_fragment(&mut self, fragment: &Value) {
        let id = fragment["id"].as_str().filter(|id| !id.is_empty());
        let name = fragment["function"]["name"]
            .as_str()
            .filter(|n| !n.is_empty());
        let found = match (fragment["index"].as_u64(), id) {
            (Some(index), _) => self.by_index.get(&index).copied(),
            (None, Some(id)) => self.by_id.get(id).copied(),
            // Neither: more of the last call, unless it names itself anew.
            (None, None) => self
                .calls
                .len()
                .checked_sub(1)
                .filter(|&last| name.is_none() || self.calls[last].name.is_none()),
        };
        let at = found.unwrap_or_else(|| {
            self.calls.push(CallParts::default());
            self.calls.len() - 1
        });
        if let Some(index) = fragment["index"].as_u64() {
            self.by_index.entry(index).or_insert(at);
        }
        if let Some(id) = id {
            self.by_id.entry(id.to_owned()).or_insert(at);
        }
        let call = &mut self.calls[at];
        if call.id.is_none() {
            call.id = id.map(str::to_owned);
        }
        if call.kind.is_none() {
            call.kind = fragment["type"].as_str().map(str::to_owned);
        }
        if call.name.is_none() {
            call.name = name.map(str::to_owned);
        }
        match &fragment["function"]["arguments"] {
            Value::String(more) => call.arguments.push_str(more),
            // Some servers send the arguments as an object, whole.
            object @ Value::Object(_) => call.arguments.push_str(&object.to_string()),
            _ => {}
        }
        for key in CALL_EXTRAS {
            if let Some(value) = fragment.get(key).filter(|v| !v.is_null()) {
                join(&mut call.extras, key, value);
            }
        }
    }

    /// One call of a whole message, at position `i`.
    fn add_whole_call(&mut self, i: usize, call: &Value) {
        let mut fragment = call.clone();
        fragment["index"] = Value::from(i);
        self.add_fragment(&fragment);
    }

    /// The reply, once the stream (or the body) said how it ended.
    fn finish(self, provider: &str) -> Result<Reply, AttemptError> {
        let finish = self.finish.as_deref().unwrap_or("stop");
        match finish {
            // OpenRouter's: the generation failed after it began.
            "error" => {
                return Err(AttemptError::BrokeOff {
                    reason: "the reply failed".to_owned(),
                    timeout: false,
                    message: format!(
                        "{provider} ended its reply with finish_reason \"error\" (the model \
                         failed mid-reply)"
                    ),
                });
            }
            _ if self.calls.iter().any(|c| c.name.is_none()) => {
                return Err(malformed("a tool call has no name"));
            }
            _ => {}
        }
        let cut_off = finish == "length";
        let filtered = finish == "content_filter";
        let refused = filtered || (self.refusal.is_some() && self.calls.is_empty());
        let usage = usage(self.usage.as_ref());

        let mut message = Map::new();
        message.insert("role".into(), Value::from("assistant"));
        let mut tool_calls = Vec::new();
        let mut entries = Vec::new();
        if !refused {
            let last = self.calls.len().saturating_sub(1);
            for (i, call) in self.calls.into_iter().enumerate() {
                let (call, entry) = call.finish(cut_off && i == last, cut_off);
                tool_calls.push(call);
                entries.push(entry);
            }
        }
        let content = self.content;
        let wrote = !content.is_empty() || !entries.is_empty() || self.refusal.is_some();
        message.insert(
            "content".into(),
            if content.is_empty() && !entries.is_empty() {
                Value::Null
            } else {
                // Never absent without calls: llama.cpp refuses an assistant message with
                // neither `content` nor `tool_calls`.
                Value::String(content.clone())
            },
        );
        if let Some(refusal) = &self.refusal {
            message.insert("refusal".into(), Value::String(refusal.clone()));
        }
        if !entries.is_empty() {
            message.insert("tool_calls".into(), Value::Array(entries));
        }
        message.extend(self.extras);
        // A reply that wrote nothing is not kept: a cut-off one is asked for again (its
        // reasoning took the limit), a filtered one has nothing to go back.
        let keep = wrote || !(cut_off || refused);
        let stop = StopReason::of(refused, cut_off, !tool_calls.is_empty());
        let text = match (&self.refusal, refused) {
            (Some(said), true) if !said.trim().is_empty() => said.clone(),
            (_, true) if !content.trim().is_empty() => content,
            (_, true) if filtered => "The model's reply was withheld by the provider's content \
                                      filter (finish_reason content_filter)."
                .to_owned(),
            (_, true) => "The model declined to answer (a refusal, with no text).".to_owned(),
            (_, false) => content,
        };
        Ok(Reply {
            items: if keep {
                vec![raw_item(&Value::Object(message))]
            } else {
                Vec::new()
            },
            text,
            tool_calls,
            usage,
            stop,
        })
    }
}

impl CallParts {
    /// The call as the loop runs it, and as the history keeps it. `being_written`: the
    /// limit struck while the model wrote it; `cut_off`: the reply was cut off.
    fn finish(self, being_written: bool, cut_off: bool) -> (ToolCall, Value) {
        let parsed = if self.arguments.trim().is_empty() {
            Ok(Value::Object(Map::new()))
        } else {
            serde_json::from_str::<Value>(&self.arguments)
                .map_err(|e| format!("the arguments are not valid JSON ({e})"))
                .and_then(|v| match v {
                    Value::Object(_) => Ok(v),
                    _ => Err("the arguments are not a JSON object".to_owned()),
                })
        };
        let arguments = match parsed {
            _ if being_written || (cut_off && parsed.is_err()) => CallArguments::CutOff,
            Ok(object) => CallArguments::Object(object),
            Err(why) => CallArguments::Unreadable(why),
        };
        // Arguments that are not an object go back as `{}`: servers that render the
        // history through a chat template (llama.cpp) parse them.
        let sent_arguments = match &arguments {
            CallArguments::Object(_) if !self.arguments.trim().is_empty() => self.arguments,
            _ => "{}".to_owned(),
        };
        let id = self.id.unwrap_or_else(made_up_id);
        let name = self.name.unwrap_or_default();
        let mut entry = Map::new();
        entry.insert("id".into(), Value::String(id.clone()));
        entry.insert(
            "type".into(),
            Value::String(self.kind.unwrap_or_else(|| "function".to_owned())),
        );
        let mut function = Map::new();
        function.insert("name".into(), Value::String(name.clone()));
        function.insert("arguments".into(), Value::String(sent_arguments));
        entry.insert("function".into(), Value::Object(function));
        entry.extend(self.extras);
        (
            ToolCall {
                call_id: id,
                name,
                arguments,
            },
            Value::Object(entry),
        )
    }
}

/// An id for a call a server sent without one: the tool message must name it.
fn made_up_id() -> String {
    format!("call_{:016x}", rand::random::<u64>())
}

/// Adds `more` to the field `key` of `fields`: text is appended (a streamed field comes in
/// pieces), lists extended, objects merged key by key (a value sent again replaces the one
/// before, so a signature repeated on two chunks is not doubled).
fn join(fields: &mut Map<String, Value>, key: &str, more: &Value) {
    match fields.get_mut(key) {
        None => {
            fields.insert(key.to_owned(), more.clone());
        }
        Some(slot) => match (slot, more) {
            (Value::String(text), Value::String(piece)) => text.push_str(piece),
            (Value::Array(items), Value::Array(added)) => items.extend(added.iter().cloned()),
            (Value::Object(object), Value::Object(added)) => {
                for (k, v) in added {
                    if v.is_null() {
                        continue;
                    }
                    if v.is_object() && object.get(k).is_some_and(Value::is_object) {
                        join(object, k, v);
                    } else {
                        object.insert(k.clone(), v.clone());
                    }
                }
            }
            (slot, more) => *slot = more.clone(),
        },
    }
}

fn usage(usage: Option<&Value>) -> Usage {
    let Some(usage) = usage else {
        return Usage::default();
    };
    let count = |v: &Value| v.as_u64().unwrap_or(0);
    let details = &usage["prompt_tokens_details"];
    Usage {
        input_tokens: count(&usage["prompt_tokens"]),
        output_tokens: count(&usage["completion_tokens"]),
        cache_read_tokens: details["cached_tokens"]
            .as_u64()
            .unwrap_or_else(|| count(&usage["prompt_cache_hit_tokens"])),
        cache_write_tokens: count(&details["cache_write_tokens"]),
    }
}

fn malformed(what: &str) -> AttemptError {
    AttemptError::retryable(
        "malformed reply",
        format!("the provider's reply is not a Chat Completions reply: {what}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn chunk(delta: Value, finish: Option<&str>) -> Value {
        json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
               "model": "m", "choices": [{"index": 0, "delta": delta, "logprobs": null,
               "finish_reason": finish}], "usage": null})
    }

    fn usage_chunk(prompt: u64, completion: u64, cached: u64) -> Value {
        json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
               "model": "m", "choices": [], "usage": {"prompt_tokens": prompt,
               "completion_tokens": completion, "total_tokens": prompt + completion,
               "prompt_tokens_details": {"cached_tokens": cached}}})
    }

    /// Feeds the chunks, then `[DONE]`.
    fn read(chunks: &[Value]) -> Result<Reply, AttemptError> {
        let mut stream = ChatStream::new("p", &Secrets::default());
        for c in chunks {
            if let Some(reply) = stream.event("message", &c.to_string())? {
                return Ok(reply);
            }
        }
        stream
            .event("message", "[DONE]")
            .map(|r| r.expect("[DONE] ends the reply"))
    }

    #[test]
    fn fragments_are_joined_by_index_and_ids_are_not_doubled() {
        let reply = read(&[
            chunk(
                json!({"role": "assistant", "content": null, "tool_calls": [{"index": 0,
                "id": "call_a", "type": "function", "function": {"name": "search",
                "arguments": ""}}], "refusal": null}),
                None,
            ),
            chunk(
                json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"qu"}}]}),
                None,
            ),
            // A server that repeats the id and name in every fragment.
            chunk(
                json!({"tool_calls": [{"index": 0, "id": "call_a", "function": {"name": "search",
                "arguments": "ery\":\"rust\"}"}}]}),
                None,
            ),
            chunk(
                json!({"tool_calls": [{"index": 1, "id": "call_b", "type": "function",
                "function": {"name": "read_file", "arguments": "{\"path\":\"README.md\"}"}}]}),
                None,
            ),
            chunk(json!({}), Some("tool_calls")),
            usage_chunk(1843, 41, 1664),
        ])
        .unwrap();
        assert_eq!(reply.stop, StopReason::ToolUse);
        assert_eq!(
            reply
                .tool_calls
                .iter()
                .map(|c| (c.call_id.as_str(), c.name.as_str()))
                .collect::<Vec<_>>(),
            [("call_a", "search"), ("call_b", "read_file")]
        );
        assert_eq!(
            reply.tool_calls[0].arguments,
            CallArguments::Object(json!({"query": "rust"}))
        );
        assert_eq!(
            reply.usage,
            Usage {
                input_tokens: 1843,
                output_tokens: 41,
                cache_read_tokens: 1664,
                cache_write_tokens: 0
            }
        );
        assert_eq!(
            reply.item_values(),
            [json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_a", "type": "function", "function": {"name": "search",
                 "arguments": "{\"query\":\"rust\"}"}},
                {"id": "call_b", "type": "function", "function": {"name": "read_file",
                 "arguments": "{\"path\":\"README.md\"}"}}]})]
        );
    }

    #[test]
    fn gemini_calls_without_index_and_a_stop_reason_are_calls() {
        let reply = read(&[
            chunk(
                json!({"role": "assistant", "tool_calls": [
                {"id": "function-call-1", "type": "function", "function": {"name": "a",
                 "arguments": "{}"}, "extra_content": {"google": {"thought_signature": "sig"}}},
                {"id": "function-call-2", "type": "function", "function": {"name": "b",
                 "arguments": "{\"x\":1}"}}]}),
                None,
            ),
            usage_chunk(10, 2, 0),
            chunk(json!({}), Some("stop")),
            usage_chunk(10, 5, 0),
        ])
        .unwrap();
        assert_eq!(reply.stop, StopReason::ToolUse);
        assert_eq!(reply.tool_calls.len(), 2);
        assert_eq!(reply.usage.output_tokens, 5, "the last usage, not a sum");
        let item = &reply.item_values()[0];
        assert_eq!(
            item["tool_calls"][0]["extra_content"],
            json!({"google": {"thought_signature": "sig"}}),
            "the signature goes back on its call"
        );
        assert!(item["tool_calls"][1].get("extra_content").is_none());
    }

    #[test]
    fn reasoning_content_is_kept_on_the_message_as_sent() {
        let reply = read(&[
            chunk(
                json!({"role": "assistant", "content": null, "reasoning_content": "Let "}),
                None,
            ),
            chunk(json!({"reasoning_content": "me think."}), None),
            chunk(json!({"content": "42", "reasoning_content": null}), None),
            chunk(json!({}), Some("stop")),
        ])
        .unwrap();
        assert_eq!(reply.text, "42");
        assert_eq!(
            reply.item_values(),
            [json!({"role": "assistant", "content": "42", "reasoning_content": "Let me think."})]
        );
    }

    #[test]
    fn a_cut_off_reply_never_runs_the_call_it_was_writing() {
        let reply = read(&[
            chunk(
                json!({"role": "assistant", "tool_calls": [{"index": 0, "id": "c1",
                "type": "function", "function": {"name": "a", "arguments": "{}"}}]}),
                None,
            ),
            chunk(
                json!({"tool_calls": [{"index": 1, "id": "c2", "type": "function",
                "function": {"name": "b", "arguments": "{\"path\": \"src/ma"}}]}),
                None,
            ),
            chunk(json!({}), Some("length")),
        ])
        .unwrap();
        assert_eq!(reply.stop, StopReason::CutOff);
        assert_eq!(
            reply.tool_calls[0].arguments,
            CallArguments::Object(json!({}))
        );
        assert_eq!(reply.tool_calls[1].arguments, CallArguments::CutOff);
        assert_eq!(
            reply.item_values()[0]["tool_calls"][1]["function"]["arguments"],
            "{}"
        );
        // Cut off before it wrote anything: nothing to keep.
        let nothing = read(&[
            chunk(
                json!({"role": "assistant", "reasoning_content": "hmm"}),
                None,
            ),
            chunk(json!({}), Some("length")),
        ])
        .unwrap();
        assert_eq!(nothing.stop, StopReason::CutOff);
        assert!(nothing.items.is_empty() && nothing.text.is_empty());
    }

    #[test]
    fn refusals_and_filtered_replies_are_refused() {
        let refused = read(&[
            chunk(
                json!({"role": "assistant", "content": null, "refusal": "I can't "}),
                None,
            ),
            chunk(json!({"refusal": "help with that."}), None),
            chunk(json!({}), Some("stop")),
        ])
        .unwrap();
        assert_eq!(refused.stop, StopReason::Refused);
        assert_eq!(refused.text, "I can't help with that.");
        assert_eq!(
            refused.item_values(),
            [json!({"role": "assistant", "content": "", "refusal": "I can't help with that."})]
        );
        let filtered = read(&[
            chunk(
                json!({"role": "assistant", "tool_calls": [{"index": 0, "id": "c",
                "function": {"name": "a", "arguments": "{}"}}]}),
                None,
            ),
            chunk(json!({}), Some("content_filter")),
        ])
        .unwrap();
        assert_eq!(filtered.stop, StopReason::Refused);
        assert!(filtered.tool_calls.is_empty() && filtered.items.is_empty());
        assert!(
            filtered.text.contains("content filter"),
            "{}",
            filtered.text
        );
    }

    #[test]
    fn a_stream_without_a_finish_reason_or_with_an_error_broke_off() {
        let mut stream = ChatStream::new("p", &Secrets::default());
        stream
            .event(
                "message",
                &chunk(json!({"content": "par"}), None).to_string(),
            )
            .unwrap();
        assert!(matches!(
            stream.event("message", "[DONE]"),
            Err(AttemptError::BrokeOff { .. })
        ));
        let mut stream = ChatStream::new("p", &Secrets::default());
        let error = json!({"error": {"message": "The server had an error while processing your request.",
                                     "type": "server_error", "param": null, "code": null}});
        assert!(matches!(
            stream.event("message", &error.to_string()),
            Err(AttemptError::Retryable { .. })
        ));
        assert!(matches!(
            read(&[chunk(json!({"content": "x"}), Some("error"))]),
            Err(AttemptError::BrokeOff { .. })
        ));
    }

    #[test]
    fn a_whole_completion_is_read_like_a_stream() {
        let body = json!({"id": "chatcmpl-1", "object": "chat.completion", "created": 1,
            "model": "m", "choices": [{"index": 0, "message": {"role": "assistant",
            "content": null, "tool_calls": [{"id": "call_1", "type": "function",
            "function": {"name": "get", "arguments": "{\"q\":1}"}}], "refusal": null},
            "finish_reason": "tool_calls"}], "usage": {"prompt_tokens": 7,
            "completion_tokens": 3, "total_tokens": 10, "prompt_cache_hit_tokens": 4}});
        let reply = parse_completion("p", &Secrets::default(), body).unwrap();
        assert_eq!(reply.stop, StopReason::ToolUse);
        assert_eq!(reply.usage.cache_read_tokens, 4, "DeepSeek's spelling");
        assert_eq!(
            reply.tool_calls[0].arguments,
            CallArguments::Object(json!({"q": 1}))
        );
        assert!(matches!(
            parse_completion(
                "p",
                &Secrets::default(),
                json!({"object": "chat.completion"})
            ),
            Err(AttemptError::Retryable { .. })
        ));
    }
}
