//! A Messages reply, streamed or whole, read into the blocks the history keeps and the
//! [`Reply`] the loop reads.
//!
//! A streamed reply is assembled as the official SDK does it, one handler per event:
//! `message_start` carries the message without content, each block opens with
//! `content_block_start` (text, tool use, thinking, redacted thinking, server tool use and
//! results, kinds added later), grows with `content_block_delta` (text, tool input JSON,
//! thinking, signature, citations) and closes with `content_block_stop`; `message_delta`
//! brings the stop reason and the final usage, and `message_stop` ends the reply. `ping`
//! keeps the connection alive. An `error` event (an overloaded API mid-reply) is classified
//! like the HTTP status it stands for.
//!
//! A message, whole or assembled, is read in steps: its stop reason; the blocks that can be
//! sent back (no blank text, no call of a refusal, no thinking the limit cut off before its
//! signature); its text and tool calls; its usage; and for a refusal, what the model or the
//! provider said.

use serde_json::{Map, Value};

use super::classify::{AttemptError, classify_error_event, quoted};
use super::error::{ProviderError, ProviderFailure};
use super::reply::{CallArguments, Reply, StopReason, ToolCall, Usage};
use super::wire::{ReplyStream, raw_item};
use crate::redact::Secrets;

/// One streamed reply being assembled.
pub(super) struct MessagesStream {
    provider: String,
    /// Hidden from what is quoted of the provider.
    secrets: Secrets,
    /// `message_start`'s message, which gets the content, stop reason and usage.
    message: Option<Value>,
    /// The content blocks, by index.
    blocks: Vec<Option<Block>>,
}

/// One content block being assembled.
struct Block {
    value: Value,
    /// A tool use's input, as JSON text so far (`input_json_delta`).
    input_json: Option<String>,
    /// Whether its `content_block_stop` came.
    stopped: bool,
}

impl Block {
    /// Grows the block by one `content_block_delta`'s `delta`.
    fn add(&mut self, delta: &Value) {
        let text = |field: &str| delta[field].as_str().unwrap_or("");
        match delta["type"].as_str() {
            Some("text_delta") => append(&mut self.value, "text", text("text")),
            Some("input_json_delta") => self
                .input_json
                .get_or_insert_with(String::new)
                .push_str(text("partial_json")),
            Some("thinking_delta") => append(&mut self.value, "thinking", text("thinking")),
            Some("signature_delta") => {
                self.value["signature"] = Value::String(text("signature").to_owned())
            }
            Some("citations_delta") => {
                let citation = delta["citation"].clone();
                match &mut self.value["citations"] {
                    Value::Array(list) => list.push(citation),
                    slot => *slot = Value::Array(vec![citation]),
                }
            }
            // Delta kinds added later: the block as it started is kept.
            _ => {}
        }
    }

    /// The block as the non-streamed reply holds it. A tool input that is not JSON (cut off
    /// mid-way) is left as the text received, which the reply reader marks as unreadable.
    fn finish(mut self) -> Value {
        if let Some(json) = self.input_json.take()
            && !json.trim().is_empty()
        {
            self.value["input"] =
                serde_json::from_str::<Value>(&json).unwrap_or(Value::String(json));
        }
        self.value
    }
}

/// Appends `more` to the string field `name` of `block` (creating it if absent).
fn append(block: &mut Value, name: &str, more: &str) {
    match &mut block[name] {
        Value::String(text) => text.push_str(more),
        slot => *slot = Value::String(more.to_owned()),
    }
}

impl MessagesStream {
    pub(super) fn new(provider: &str, secrets: &Secrets) -> MessagesStream {
        MessagesStream {
            provider: provider.to_owned(),
            secrets: secrets.clone(),
            message: None,
            blocks: Vec::new(),
        }
    }

    /// `message_start`: the message, without its content yet.
    fn message_start(&mut self, event: &mut Value) -> Result<(), AttemptError> {
        let message = event["message"].take();
        // Written into below (deltas, content), so it must be an object.
        if !message.is_object() {
            return Err(malformed("its message_start holds no message object"));
        }
        self.message = Some(message);
        Ok(())
    }

    /// `content_block_start`: a block opens at `index`.
    fn block_start(&mut self, index: Option<usize>, event: &mut Value) -> Result<(), AttemptError> {
        let Some(index) = index else {
            return Err(malformed("a content_block_start has no index"));
        };
        // Blocks start in order (the index is the block's place in the content list), so an
        // index past the next one is not taken as an allocation size.
        if index > self.blocks.len() {
            return Err(malformed("a content_block_start skips past the next index"));
        }
        let mut block = event["content_block"].take();
        if !block.is_object() {
            return Err(malformed("a content_block_start holds no block object"));
        }
        if block["type"] == "tool_use" && block.get("input").is_none() {
            // llama.cpp's server starts a tool use without the `input: {}` the API sends; its
            // input still comes in `input_json_delta`s.
            block["input"] = Value::Object(Map::new());
        }
        let input_json = block.get("input").map(|_| String::new());
        if self.blocks.len() == index {
            self.blocks.push(None);
        }
        self.blocks[index] = Some(Block {
            value: block,
            input_json,
            stopped: false,
        });
        Ok(())
    }

    /// `content_block_delta`: the open block at `index` grows.
    fn block_delta(&mut self, index: Option<usize>, event: &Value) -> Result<(), AttemptError> {
        let Some(block) = index
            .and_then(|i| self.blocks.get_mut(i))
            .and_then(Option::as_mut)
        else {
            return Err(malformed("a content_block_delta names no open block"));
        };
        block.add(&event["delta"]);
        Ok(())
    }

    /// `content_block_stop`: the block at `index` is whole.
    fn block_stop(&mut self, index: Option<usize>) {
        if let Some(slot) = index.and_then(|i| self.blocks.get_mut(i))
            && let Some(block) = slot.take()
        {
            *slot = Some(Block {
                value: block.finish(),
                input_json: None,
                stopped: true,
            });
        }
    }

    /// `message_delta`: the stop reason, and the final counts (fields it leaves out keep
    /// `message_start`'s).
    fn message_delta(&mut self, event: &mut Value) -> Result<(), AttemptError> {
        let Some(message) = self.message.as_mut() else {
            return Err(malformed("a message_delta came before message_start"));
        };
        if let Value::Object(delta) = event["delta"].take() {
            for (key, v) in delta {
                message[key] = v;
            }
        }
        if let Value::Object(usage) = event["usage"].take() {
            if !message["usage"].is_object() {
                message["usage"] = Value::Object(Map::new());
            }
            for (key, v) in usage.into_iter().filter(|(_, v)| !v.is_null()) {
                message["usage"][key] = v;
            }
        }
        Ok(())
    }

    /// `message_stop`: the message, with its blocks, read as a whole one is.
    fn message_stop(&mut self) -> Result<Reply, AttemptError> {
        let Some(mut message) = self.message.take() else {
            return Err(malformed("message_stop came before message_start"));
        };
        let blocks: Vec<Block> = std::mem::take(&mut self.blocks)
            .into_iter()
            .flatten()
            .collect();
        let unclosed: Vec<String> = blocks
            .iter()
            .filter(|b| !b.stopped && b.value["type"] == "tool_use")
            .filter_map(|b| b.value["id"].as_str().map(str::to_owned))
            .collect();
        let content = blocks.into_iter().map(Block::finish).collect();
        message["content"] = Value::Array(content);
        read_message(message, &self.secrets, &Evidence::Streamed { unclosed })
    }
}

impl ReplyStream for MessagesStream {
    fn event(&mut self, event: &str, data: &str) -> Result<Option<Reply>, AttemptError> {
        // An event is a JSON object; anything else is as unreadable as text that is not JSON.
        let Some(mut value) = serde_json::from_str::<Value>(data)
            .ok()
            .filter(Value::is_object)
        else {
            if event == "message_stop" || event == "error" {
                return Err(malformed(&format!("its `{event}` event is not JSON")));
            }
            return Ok(None);
        };
        let kind = value["type"].as_str().unwrap_or(event).to_owned();
        let index = value["index"].as_u64().map(|i| i as usize);
        match kind.as_str() {
            "message_start" => self.message_start(&mut value)?,
            "content_block_start" => self.block_start(index, &mut value)?,
            "content_block_delta" => self.block_delta(index, &value)?,
            "content_block_stop" => self.block_stop(index),
            "message_delta" => self.message_delta(&mut value)?,
            "message_stop" => return self.message_stop().map(Some),
            "error" => return Err(classify_error_event(&self.provider, &self.secrets, &value)),
            // `ping`, and event types added later.
            _ => {}
        }
        Ok(None)
    }

    fn terminal_event(&self) -> &'static str {
        "message_stop"
    }
}

/// What a reply shows of whether a tool use in it was complete, when the output limit
/// stopped the reply (`max_tokens`).
enum Evidence {
    /// A whole (non-streamed) message shows nothing: its last block, if a tool use, is the
    /// call the limit interrupted (llama.cpp's server even replaces its partial input with
    /// `{}`).
    Whole,
    /// A stream shows each block's input JSON as it came and whether the block was closed:
    /// a tool use is cut off when its JSON stops before its end or its `content_block_stop`
    /// never came (these ids). A server may close a block and then say `max_tokens`
    /// (llama.cpp does, whether or not the JSON was complete), so the stop event alone
    /// proves nothing.
    Streamed { unclosed: Vec<String> },
}

impl Evidence {
    /// Whether the tool use `block`, the `i`th of `count`, is the one the limit cut off.
    fn cut_off(&self, block: &Value, i: usize, count: usize) -> bool {
        match self {
            Evidence::Whole => i + 1 == count,
            Evidence::Streamed { unclosed } => {
                ends_early(&block["input"])
                    || block["id"]
                        .as_str()
                        .is_some_and(|id| unclosed.iter().any(|u| u == id))
            }
        }
    }
}

/// Reads a whole message. What is quoted of the provider hides `secrets`.
pub fn parse_message(body: Value, secrets: &Secrets) -> Result<Reply, AttemptError> {
    read_message(body, secrets, &Evidence::Whole)
}

/// Reads a message, whole or assembled from a stream (`evidence`). What is quoted of the
/// provider hides `secrets`.
fn read_message(
    mut body: Value,
    secrets: &Secrets,
    evidence: &Evidence,
) -> Result<Reply, AttemptError> {
    if body["type"] != "message" {
        return Err(malformed("its `type` is not \"message\""));
    }
    // Taken, not cloned: the blocks become the history's assistant turn.
    let Some(Value::Array(mut content)) = body.get_mut("content").map(Value::take) else {
        return Err(malformed("it has no `content` list"));
    };
    let stop = stop_of(&body)?;
    keep_sendable(&mut content, stop);
    let (mut text, tool_calls) = read_blocks(&mut content, stop, evidence)?;
    if stop == StopReason::Paused {
        trim_paused(&mut content);
    }
    let stop = match stop {
        StopReason::EndTurn if !tool_calls.is_empty() => StopReason::ToolUse,
        other => other,
    };
    if stop == StopReason::Refused && text.trim().is_empty() {
        text = refusal_text(&body, secrets);
    }
    Ok(Reply {
        items: content.iter().map(raw_item).collect(),
        text,
        tool_calls,
        usage: usage_of(&body["usage"]),
        stop,
    })
}

/// How the message stopped; a context window it overflowed is the run's failure.
fn stop_of(body: &Value) -> Result<StopReason, AttemptError> {
    Ok(match body["stop_reason"].as_str().unwrap_or("") {
        "max_tokens" => StopReason::CutOff,
        "pause_turn" => StopReason::Paused,
        "model_context_window_exceeded" => {
            return Err(AttemptError::Fatal(ProviderError {
                failure: ProviderFailure::ContextLimit,
                message: "the model stopped: model_context_window_exceeded".to_owned(),
            }));
        }
        "refusal" => StopReason::Refused,
        _ => StopReason::EndTurn,
    })
}

/// Leaves only the blocks the API takes back.
fn keep_sendable(content: &mut Vec<Value>, stop: StopReason) {
    if stop == StopReason::Refused {
        // A call the model began before it was stopped is not run, and is not kept: no
        // result could follow it.
        content.retain(|b| b["type"] != "tool_use");
    }
    // The API sends empty text blocks (before a `tool_use`, anthropic-sdk-python#461) and
    // refuses them back ("text content blocks must be non-empty", "… must contain
    // non-whitespace text"); they say nothing, so they are not kept. Other blocks, thinking
    // and its signature among them, stay exactly as received.
    content.retain(|b| !is_blank_text(b));
    if stop == StopReason::CutOff {
        // Thinking the limit cut off before its signature cannot be sent back.
        while content.last().is_some_and(|b| {
            b["type"] == "thinking" && b["signature"].as_str().is_none_or(str::is_empty)
        }) {
            content.pop();
        }
    }
}

/// The text of the message and its tool calls (each `tool_use` made sendable back).
fn read_blocks(
    content: &mut [Value],
    stop: StopReason,
    evidence: &Evidence,
) -> Result<(String, Vec<ToolCall>), AttemptError> {
    let count = content.len();
    let mut text = String::new();
    let mut tool_calls = Vec::new();
    for (i, block) in content.iter_mut().enumerate() {
        match block["type"].as_str() {
            Some("text") => text.push_str(block["text"].as_str().unwrap_or("")),
            Some("tool_use") => {
                let cut = stop == StopReason::CutOff && evidence.cut_off(block, i, count);
                tool_calls.push(tool_use(block, cut)?)
            }
            _ => {}
        }
    }
    Ok((text, tool_calls))
}

/// The API refuses an assistant turn that ends in whitespace when asked to go on with it;
/// the answer keeps the text as written.
fn trim_paused(content: &mut [Value]) {
    if let Some(last) = content.last_mut()
        && last["type"] == "text"
        && let Some(trimmed) = last["text"].as_str().map(str::trim_end)
    {
        last["text"] = Value::String(trimmed.to_owned());
    }
}

/// The counts of `usage`; what was read from and written to the cache is input too.
fn usage_of(usage: &Value) -> Usage {
    let count = |field: &str| usage[field].as_u64().unwrap_or(0);
    Usage {
        // Saturating: the counts are the provider's numbers, not ours to trust.
        input_tokens: count("input_tokens")
            .saturating_add(count("cache_creation_input_tokens"))
            .saturating_add(count("cache_read_input_tokens")),
        output_tokens: count("output_tokens"),
        cache_read_tokens: count("cache_read_input_tokens"),
        cache_write_tokens: count("cache_creation_input_tokens"),
    }
}

/// A refusal with nothing said before it: the provider's explanation, else its category.
fn refusal_text(body: &Value, secrets: &Secrets) -> String {
    let quote = |text: &str| quoted(secrets, text);
    let explanation = body["stop_details"]["explanation"].as_str().map(quote);
    let category = body["stop_details"]["category"].as_str().map(quote);
    match (explanation, category) {
        (Some(explanation), _) => explanation,
        (None, Some(category)) => {
            format!("The model declined to answer (refusal, category {category}).")
        }
        (None, None) => "The model declined to answer (refusal).".to_owned(),
    }
}

/// Whether `block` is a text block with nothing but whitespace in it.
fn is_blank_text(block: &Value) -> bool {
    block["type"] == "text" && block["text"].as_str().is_none_or(|t| t.trim().is_empty())
}

/// Whether a streamed tool input is JSON that stops before its end (the stream's reader
/// leaves an input that does not parse as its text).
fn ends_early(input: &Value) -> bool {
    input
        .as_str()
        .is_some_and(|json| serde_json::from_str::<Value>(json).is_err_and(|e| e.is_eof()))
}

/// Reads a `tool_use` block, making it sendable back when its input is not an object.
fn tool_use(block: &mut Value, being_written: bool) -> Result<ToolCall, AttemptError> {
    let (Some(id), Some(name)) = (block["id"].as_str(), block["name"].as_str()) else {
        return Err(malformed("a tool_use block has no id or name"));
    };
    let (call_id, name) = (id.to_owned(), name.to_owned());
    let arguments = match &block["input"] {
        // The call the limit interrupted, however much of its input arrived.
        _ if being_written => CallArguments::CutOff,
        input @ Value::Object(_) => CallArguments::Object(input.clone()),
        _ => CallArguments::Unreadable("the tool input is not a JSON object".to_owned()),
    };
    if !block["input"].is_object() {
        // The API takes only an object here when the history is sent back.
        block["input"] = Value::Object(Map::new());
    }
    Ok(ToolCall {
        call_id,
        name,
        arguments,
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
    use super::super::wire::read_events;
    use super::*;
    use serde_json::json;

    fn message(content: Value, stop: &str) -> Value {
        json!({"id": "msg_1", "type": "message", "role": "assistant", "content": content,
               "stop_reason": stop, "usage": {"input_tokens": 5, "output_tokens": 2,
               "cache_read_input_tokens": 3}})
    }

    fn stream_of(events: &[Value]) -> Result<Option<Reply>, AttemptError> {
        let stream = MessagesStream::new("anthropic", &Secrets::default());
        read_events(Box::new(stream), events)
    }

    #[test]
    fn parses_blocks_and_keeps_them_verbatim() {
        let content = json!([
            {"type": "thinking", "thinking": "hmm", "signature": "sig-1"},
            {"type": "text", "text": "Let me check."},
            {"type": "tool_use", "id": "toolu_1", "name": "get", "input": {"q": 1}}
        ]);
        let reply =
            parse_message(message(content.clone(), "tool_use"), &Secrets::default()).unwrap();
        assert_eq!(reply.item_values(), content.as_array().unwrap().clone());
        assert_eq!(reply.text, "Let me check.");
        assert_eq!(reply.stop, StopReason::ToolUse);
        assert_eq!(reply.usage.input_tokens, 8, "cache tokens count as input");
    }

    #[test]
    fn provider_counts_that_would_overflow_saturate() {
        let mut body = message(json!([{"type": "text", "text": "x"}]), "end_turn");
        body["usage"]["input_tokens"] = json!(u64::MAX);
        let reply = parse_message(body, &Secrets::default()).unwrap();
        assert_eq!(reply.usage.input_tokens, u64::MAX);
    }

    #[test]
    fn a_tool_use_whose_input_is_not_an_object_is_kept_sendable() {
        let content = json!([{"type": "tool_use", "id": "t1", "name": "n", "input": "oops"}]);
        let reply = parse_message(message(content, "tool_use"), &Secrets::default()).unwrap();
        assert!(matches!(
            reply.tool_calls[0].arguments,
            CallArguments::Unreadable(_)
        ));
        assert_eq!(
            reply.item_values()[0]["input"],
            json!({}),
            "the API takes only an object back"
        );
    }

    #[test]
    fn stop_reasons_map() {
        let text = json!([{"type": "text", "text": "partial "}]);
        let paused =
            parse_message(message(text.clone(), "pause_turn"), &Secrets::default()).unwrap();
        assert_eq!(paused.stop, StopReason::Paused);
        assert_eq!(
            paused.item_values()[0]["text"],
            "partial",
            "trailing whitespace is trimmed before the API is asked to go on"
        );
        assert_eq!(
            paused.text, "partial ",
            "the answer keeps the text as written"
        );
        let cut = parse_message(message(text.clone(), "max_tokens"), &Secrets::default()).unwrap();
        assert_eq!(cut.stop, StopReason::CutOff);
        assert_eq!(
            parse_message(message(text.clone(), "end_turn"), &Secrets::default())
                .unwrap()
                .stop,
            StopReason::EndTurn
        );
        match parse_message(
            message(text.clone(), "model_context_window_exceeded"),
            &Secrets::default(),
        ) {
            Err(AttemptError::Fatal(e)) => assert_eq!(e.failure, ProviderFailure::ContextLimit),
            other => panic!("{other:?}"),
        }
        let refused = parse_message(message(text, "refusal"), &Secrets::default()).unwrap();
        assert_eq!(refused.stop, StopReason::Refused);
        assert_eq!(refused.text, "partial ", "what it said before it stopped");
        let mut silent = message(
            json!([{"type": "tool_use", "id": "t", "name": "n", "input": {}}]),
            "refusal",
        );
        silent["stop_details"] = json!({"type": "refusal", "category": "cyber",
                                        "explanation": "e".repeat(5000)});
        let refused = parse_message(silent, &Secrets::default()).unwrap();
        assert_eq!(refused.stop, StopReason::Refused);
        assert!(refused.text.starts_with("eee") && refused.text.chars().count() <= 1001);
        assert!(
            refused.tool_calls.is_empty() && refused.items.is_empty(),
            "a call it began is not kept"
        );
    }

    #[test]
    fn a_tool_call_cut_off_by_the_limit_is_marked_and_kept_sendable() {
        let content = json!([
            {"type": "tool_use", "id": "t1", "name": "a", "input": {"x": 1}},
            {"type": "tool_use", "id": "t2", "name": "b", "input": "{\"path\": \"src/ma"},
            {"type": "thinking", "thinking": "and then", "signature": ""}
        ]);
        let reply = parse_message(message(content, "max_tokens"), &Secrets::default()).unwrap();
        assert_eq!(reply.stop, StopReason::CutOff);
        assert_eq!(
            reply.tool_calls[0].arguments,
            CallArguments::Object(json!({"x": 1}))
        );
        assert_eq!(reply.tool_calls[1].arguments, CallArguments::CutOff);
        let items = reply.item_values();
        assert_eq!(items.len(), 2, "unsigned thinking cannot go back");
        assert_eq!(items[1]["input"], json!({}));
    }

    /// The events of a llama.cpp-style reply with one tool use: its start without
    /// `input`, `partial_json` in pieces, the block's stop if `closed`, then `stop`.
    fn one_call(partial_json: &[&str], closed: bool, stop: &str) -> Reply {
        let mut events = vec![
            json!({"type": "message_start", "message": {"id": "chatcmpl-1", "type": "message",
                "role": "assistant", "content": [], "stop_reason": null, "stop_sequence": null,
                "usage": {"cache_read_input_tokens": 233, "input_tokens": 1, "output_tokens": 0}}}),
            json!({"type": "content_block_start", "index": 0,
                   "content_block": {"type": "tool_use", "id": "3YPm", "name": "read_file"}}),
        ];
        for piece in partial_json {
            events.push(json!({"type": "content_block_delta", "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": piece}}));
        }
        if closed {
            events.push(json!({"type": "content_block_stop", "index": 0}));
        }
        events.push(json!({"type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": 28}}));
        events.push(json!({"type": "message_stop"}));
        stream_of(&events).unwrap().unwrap()
    }

    /// llama.cpp's server closes the tool use block before `max_tokens` whether or not its
    /// JSON was complete (issue 25): a complete input is a call to run, one that stops
    /// mid-way is cut off, and so is a block whose `content_block_stop` never came.
    #[test]
    fn a_streamed_call_is_cut_off_only_when_its_json_or_its_block_is_unfinished() {
        let complete = one_call(
            &["{", "\"path\"", ": \"notes.txt\"", "}"],
            true,
            "max_tokens",
        );
        assert_eq!(complete.stop, StopReason::CutOff);
        assert_eq!(
            complete.tool_calls[0].arguments,
            CallArguments::Object(json!({"path": "notes.txt"})),
            "closed, and its JSON is whole: it runs"
        );
        let half = one_call(&["{", "\"path\"", ":"], true, "max_tokens");
        assert_eq!(half.tool_calls[0].arguments, CallArguments::CutOff);
        assert_eq!(half.item_values()[0]["input"], json!({}));
        let unclosed = one_call(&["{\"path\": \"notes.txt\"}"], false, "max_tokens");
        assert_eq!(unclosed.tool_calls[0].arguments, CallArguments::CutOff);
        let broken = one_call(&["{nope}"], true, "max_tokens");
        assert!(
            matches!(broken.tool_calls[0].arguments, CallArguments::Unreadable(_)),
            "malformed, not unfinished: {:?}",
            broken.tool_calls[0].arguments
        );
        let no_arguments = one_call(&[], true, "tool_use");
        assert_eq!(
            no_arguments.tool_calls[0].arguments,
            CallArguments::Object(json!({})),
            "a start without `input` and no deltas is a call without arguments"
        );
        assert_eq!(
            no_arguments.item_values()[0],
            json!({"type": "tool_use", "id": "3YPm", "name": "read_file", "input": {}})
        );
    }

    #[test]
    fn a_stream_assembles_the_message_a_whole_reply_would_be() {
        let reply = stream_of(&[
            json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
                "role": "assistant", "model": "m", "content": [], "stop_reason": null,
                "stop_sequence": null, "usage": {"input_tokens": 10, "cache_read_input_tokens": 4,
                "output_tokens": 1}}}),
            json!({"type": "ping"}),
            json!({"type": "content_block_start", "index": 0,
                   "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
            json!({"type": "content_block_delta", "index": 0,
                   "delta": {"type": "thinking_delta", "thinking": "Let me "}}),
            json!({"type": "content_block_delta", "index": 0,
                   "delta": {"type": "thinking_delta", "thinking": "think."}}),
            json!({"type": "content_block_delta", "index": 0,
                   "delta": {"type": "signature_delta", "signature": "sig-9"}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "content_block_start", "index": 1,
                   "content_block": {"type": "redacted_thinking", "data": "opaque"}}),
            json!({"type": "content_block_stop", "index": 1}),
            json!({"type": "content_block_start", "index": 2,
                   "content_block": {"type": "text", "text": ""}}),
            json!({"type": "content_block_delta", "index": 2,
                   "delta": {"type": "text_delta", "text": "Checking"}}),
            json!({"type": "content_block_delta", "index": 2,
                   "delta": {"type": "citations_delta", "citation": {"type": "char_location", "cited_text": "x"}}}),
            json!({"type": "content_block_stop", "index": 2}),
            json!({"type": "content_block_start", "index": 3,
                   "content_block": {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}}),
            json!({"type": "content_block_delta", "index": 3,
                   "delta": {"type": "input_json_delta", "partial_json": "{\"query\": \"x\"}"}}),
            json!({"type": "content_block_stop", "index": 3}),
            json!({"type": "content_block_start", "index": 4,
                   "content_block": {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []}}),
            json!({"type": "content_block_stop", "index": 4}),
            json!({"type": "content_block_start", "index": 5,
                   "content_block": {"type": "tool_use", "id": "toolu_1", "name": "get", "input": {}}}),
            json!({"type": "content_block_delta", "index": 5,
                   "delta": {"type": "input_json_delta", "partial_json": "{\"q\": "}}),
            json!({"type": "content_block_delta", "index": 5,
                   "delta": {"type": "input_json_delta", "partial_json": "1}"}}),
            json!({"type": "content_block_stop", "index": 5}),
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null},
                   "usage": {"output_tokens": 42}}),
            json!({"type": "message_stop"}),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(reply.stop, StopReason::ToolUse);
        assert_eq!(reply.text, "Checking");
        assert_eq!(reply.usage.input_tokens, 14);
        assert_eq!(reply.usage.output_tokens, 42);
        assert_eq!(
            reply.item_values(),
            vec![
                json!({"type": "thinking", "thinking": "Let me think.", "signature": "sig-9"}),
                json!({"type": "redacted_thinking", "data": "opaque"}),
                json!({"type": "text", "text": "Checking", "citations": [{"type": "char_location", "cited_text": "x"}]}),
                json!({"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "x"}}),
                json!({"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []}),
                json!({"type": "tool_use", "id": "toolu_1", "name": "get", "input": {"q": 1}}),
            ]
        );
        assert_eq!(
            reply.tool_calls.len(),
            1,
            "server tools are not ours to run"
        );

        let overloaded = stream_of(&[
            json!({"type": "message_start", "message": {"type": "message", "content": []}}),
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        ]);
        assert!(matches!(overloaded, Err(AttemptError::Retryable { .. })));
    }
}
