//! Anthropic Messages (`POST {base_url}/v1/messages`), streamed. Assistant content blocks,
//! thinking blocks with their signatures included, go back exactly as received.
//!
//! Prompt caching is explicit on this API: a request marks up to 4 breakpoints
//! (`cache_control`), and the provider caches the prefix up to each. This client marks the
//! last tool (the tools are the same for every request of a definition), the system block
//! (tools and system are the same for every spawn of a definition), the block that was
//! newest in the previous request (what that request wrote, read back now), and the newest
//! block (written now, read by the next request).
//!
//! Reasoning effort turns thinking on, in the kind the model takes (`models`): the current
//! models get `thinking: {type: "adaptive"}` with `output_config.effort` (they think only
//! when asked, and decide how much by the effort); Claude 4.5 and the earlier models, which
//! refuse adaptive thinking, get `thinking: {type: "enabled", budget_tokens}` with a budget
//! the effort stands for, below `max_tokens`, and the effort itself only where the model
//! takes it (Opus 4.5). A model that refuses the kind sent is asked with the other.
//!
//! Text blocks that are empty or only whitespace are not kept from a reply (the API returns
//! them, before a `tool_use`, and refuses them back: "text content blocks must be
//! non-empty"), and a failed tool's result always carries a short text ("content cannot be
//! empty if `is_error` is true").
//!
//! A streamed reply is assembled as the official SDK does it: `message_start` carries the
//! message without content, each block opens with `content_block_start` (text, tool use,
//! thinking, redacted thinking, server tool use and results, kinds added later), grows with
//! `content_block_delta` (text, tool input JSON, thinking, signature, citations) and closes
//! with `content_block_stop`; `message_delta` brings the stop reason and the final usage,
//! and `message_stop` ends the reply. `ping` keeps the connection alive. An `error` event
//! (an overloaded API mid-reply) is classified like the HTTP status it stands for.

use reqwest::header::{HeaderMap, HeaderValue};
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::classify::{AttemptError, classify_error_event, quoted};
use super::credentials::{ApiKey, json_headers};
use super::error::{ProviderError, ProviderFailure};
use super::history::{Entry, GroupedMessages, History, Role};
use super::models::{self, EffortSupport, ThinkingKind, thinking_budget};
use super::reply::{CallArguments, Reply, StopReason, ToolCall, ToolOutput, Usage};
use super::tool_schema;
use super::unsupported::OptionalParam;
use super::wire::{ReplyStream, Request, ToolList, WireFormat, raw_item};
use crate::definition::{AuthHeader, WireRules};
use crate::redact::Secrets;
use crate::toolbox::ToolSpec;

/// The API version this client speaks.
pub(super) const ANTHROPIC_VERSION: &str = "2023-06-01";

/// The Messages wire format.
pub(super) struct Messages;

impl WireFormat for Messages {
    fn path(&self) -> &'static str {
        "/v1/messages"
    }

    fn headers(&self, key: &ApiKey, auth: AuthHeader) -> HeaderMap {
        let mut headers = json_headers(key, auth);
        headers.insert(
            "anthropic-version",
            HeaderValue::from_static(ANTHROPIC_VERSION),
        );
        headers
    }

    fn encode(&self, request: &Request<'_>) -> serde_json::Result<Vec<u8>> {
        let settings = request.settings;
        let effort = request.effort();
        let thinking = match (request.thinking(), effort) {
            (Some(ThinkingKind::Adaptive), _) => Some(Thinking::Adaptive),
            (Some(ThinkingKind::Budget), Some(effort)) => {
                thinking_budget(effort, request.max_output_tokens)
                    .map(|budget_tokens| Thinking::Enabled { budget_tokens })
            }
            _ => None,
        };
        // A model that takes no effort parameter (Sonnet and Haiku 4.5) has it as the budget.
        let takes_effort =
            models::traits(&settings.model).is_none_or(|t| t.effort != EffortSupport::Refused);
        let body = Body {
            model: &settings.model,
            max_tokens: request.max_output_tokens,
            system: (!request.system.is_empty()).then_some([SystemBlock {
                kind: "text",
                text: request.system,
                cache_control: EPHEMERAL,
            }]),
            messages: request
                .history
                .as_messages_marked(&breakpoints(request.history)),
            stream: true,
            tools: request.tools.encoded(),
            thinking,
            output_config: effort.filter(|_| takes_effort).map(|effort| Effort {
                effort: effort.as_str(),
            }),
            temperature: settings
                .temperature
                .filter(|_| request.sends(OptionalParam::Temperature)),
        };
        serde_json::to_vec(&body)
    }

    /// The tools, the last one a cache breakpoint.
    fn encode_tools(&self, tools: &[ToolSpec]) -> serde_json::Result<ToolList> {
        ToolList::new(tools, |sorted| {
            let shaped = tool_schema::shape_each(&WireRules::MESSAGES, sorted);
            let last = shaped.len().saturating_sub(1);
            let tools: Vec<Tool<'_>> = shaped
                .iter()
                .enumerate()
                .map(|(i, (t, s))| Tool {
                    name: &t.name,
                    description: &s.description,
                    input_schema: &s.schema,
                    cache_control: (i == last).then_some(EPHEMERAL),
                })
                .collect();
            serde_json::value::to_raw_value(&tools)
        })
    }

    fn may_send(&self, param: OptionalParam) -> bool {
        matches!(
            param,
            OptionalParam::Temperature
                | OptionalParam::Effort
                | OptionalParam::AdaptiveThinking
                | OptionalParam::BudgetThinking
        )
    }

    fn stream(&self, provider: &str, secrets: &Secrets) -> Box<dyn ReplyStream> {
        Box::new(MessagesStream {
            provider: provider.to_owned(),
            secrets: secrets.clone(),
            message: None,
            blocks: Vec::new(),
        })
    }

    fn parse(
        &self,
        _provider: &str,
        secrets: &Secrets,
        body: Value,
    ) -> Result<Reply, AttemptError> {
        parse_message(body, secrets)
    }

    fn user_text(&self, text: &str) -> Box<RawValue> {
        raw_item(&json!({"type": "text", "text": text}))
    }

    /// A `tool_result` block; the history puts it, with the others of the round, in the
    /// user message right after the tool calls. Text alone is a string; with images, a list
    /// of `text` and `image` blocks (an empty text block is refused, so none is sent). A
    /// failure always has a text ([`ToolOutput::text_for_model`]).
    fn tool_output(&self, output: &ToolOutput) -> Box<RawValue> {
        let text = output.text_for_model();
        let content = if output.images.is_empty() {
            Value::String(text.into_owned())
        } else {
            let mut blocks = Vec::with_capacity(output.images.len() + 1);
            if !text.trim().is_empty() {
                blocks.push(json!({"type": "text", "text": text}));
            }
            for image in &output.images {
                blocks.push(json!({"type": "image", "source": {
                    "type": "base64", "media_type": image.media_type, "data": image.data}}));
            }
            Value::Array(blocks)
        };
        let mut block = json!({
            "type": "tool_result",
            "tool_use_id": output.call_id,
            "content": content,
        });
        if output.is_error {
            block["is_error"] = json!(true);
        }
        raw_item(&block)
    }
}

#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<[SystemBlock<'a>; 1]>,
    messages: GroupedMessages<'a>,
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<&'a RawValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking: Option<Thinking>,
    #[serde(skip_serializing_if = "Option::is_none")]
    output_config: Option<Effort>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
}

/// `{"type": "ephemeral"}`: the 5-minute cache a breakpoint asks for.
#[derive(Serialize, Clone, Copy)]
struct CacheControl {
    #[serde(rename = "type")]
    kind: &'static str,
}

const EPHEMERAL: CacheControl = CacheControl { kind: "ephemeral" };

#[derive(Serialize)]
struct SystemBlock<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
    cache_control: CacheControl,
}

#[derive(Serialize)]
struct Tool<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_control: Option<CacheControl>,
}

/// `{"type": "adaptive"}` or `{"type": "enabled", "budget_tokens": N}`.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
enum Thinking {
    Adaptive,
    Enabled { budget_tokens: u32 },
}

#[derive(Serialize)]
struct Effort {
    effort: &'static str,
}

/// The blocks a request marks as breakpoints: the newest, and the one that was newest in
/// the request before (the last block before the newest assistant turn). Thinking blocks
/// cannot carry a breakpoint, so the nearest earlier block that can stands in.
fn breakpoints(history: &History) -> Vec<usize> {
    let entries = history.entries();
    let mut marks = Vec::with_capacity(2);
    if let Some(newest) = cacheable_at_or_before(entries, entries.len()) {
        marks.push(newest);
    }
    let last_assistant = entries.iter().rposition(|e| e.role == Role::Assistant);
    if let Some(last_assistant) = last_assistant {
        let turn_start = entries[..=last_assistant]
            .iter()
            .rposition(|e| e.role != Role::Assistant)
            .map_or(0, |i| i + 1);
        if let Some(previous) = cacheable_at_or_before(entries, turn_start)
            && !marks.contains(&previous)
        {
            marks.push(previous);
        }
    }
    marks
}

/// The last entry before `end` that may carry `cache_control`.
fn cacheable_at_or_before(entries: &[Entry], end: usize) -> Option<usize> {
    #[derive(serde::Deserialize)]
    struct Kind<'a> {
        #[serde(borrow, rename = "type")]
        kind: Option<&'a str>,
    }
    entries[..end.min(entries.len())].iter().rposition(|e| {
        serde_json::from_str::<Kind<'_>>(e.item.get()).is_ok_and(|k| {
            matches!(
                k.kind,
                Some("text" | "image" | "document" | "tool_use" | "tool_result")
            )
        })
    })
}

/// One streamed reply being assembled.
struct MessagesStream {
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
            "message_start" => {
                let message = value["message"].take();
                // Written into below (deltas, content), so it must be an object.
                if !message.is_object() {
                    return Err(malformed("its message_start holds no message object"));
                }
                self.message = Some(message);
            }
            "content_block_start" => {
                let Some(index) = index else {
                    return Err(malformed("a content_block_start has no index"));
                };
                // Blocks start in order (the index is the block's place in the content
                // list), so an index past the next one is not taken as an allocation size.
                if index > self.blocks.len() {
                    return Err(malformed("a content_block_start skips past the next index"));
                }
                let mut block = value["content_block"].take();
                if !block.is_object() {
                    return Err(malformed("a content_block_start holds no block object"));
                }
                if block["type"] == "tool_use" && block.get("input").is_none() {
                    // llama.cpp's server starts a tool use without the `input: {}` the API
                    // sends; its input still comes in `input_json_delta`s.
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
            }
            "content_block_delta" => {
                let Some(block) = index
                    .and_then(|i| self.blocks.get_mut(i))
                    .and_then(Option::as_mut)
                else {
                    return Err(malformed("a content_block_delta names no open block"));
                };
                let delta = &value["delta"];
                let text = |field: &str| delta[field].as_str().unwrap_or("");
                match delta["type"].as_str() {
                    Some("text_delta") => append(&mut block.value, "text", text("text")),
                    Some("input_json_delta") => block
                        .input_json
                        .get_or_insert_with(String::new)
                        .push_str(text("partial_json")),
                    Some("thinking_delta") => {
                        append(&mut block.value, "thinking", text("thinking"))
                    }
                    Some("signature_delta") => {
                        block.value["signature"] = Value::String(text("signature").to_owned())
                    }
                    Some("citations_delta") => {
                        let citation = delta["citation"].clone();
                        match &mut block.value["citations"] {
                            Value::Array(list) => list.push(citation),
                            slot => *slot = Value::Array(vec![citation]),
                        }
                    }
                    // Delta kinds added later: the block as it started is kept.
                    _ => {}
                }
            }
            "content_block_stop" => {
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
            "message_delta" => {
                let Some(message) = self.message.as_mut() else {
                    return Err(malformed("a message_delta came before message_start"));
                };
                if let Value::Object(delta) = value["delta"].take() {
                    for (key, v) in delta {
                        message[key] = v;
                    }
                }
                // The final counts; fields it leaves out keep message_start's.
                if let Value::Object(usage) = value["usage"].take() {
                    if !message["usage"].is_object() {
                        message["usage"] = Value::Object(Map::new());
                    }
                    for (key, v) in usage.into_iter().filter(|(_, v)| !v.is_null()) {
                        message["usage"][key] = v;
                    }
                }
            }
            "message_stop" => {
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
                return read_message(message, &self.secrets, &Evidence::Streamed { unclosed })
                    .map(Some);
            }
            "error" => {
                return Err(classify_error_event(&self.provider, &self.secrets, &value));
            }
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
    let stop_reason = body["stop_reason"].as_str().unwrap_or("");
    let stop = match stop_reason {
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
    };
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
    let last = content.len().saturating_sub(1);
    let mut text = String::new();
    let mut tool_calls = Vec::new();
    for (i, block) in content.iter_mut().enumerate() {
        match block["type"].as_str() {
            Some("text") => text.push_str(block["text"].as_str().unwrap_or("")),
            Some("tool_use") => {
                let cut = stop == StopReason::CutOff
                    && match evidence {
                        Evidence::Whole => i == last,
                        Evidence::Streamed { unclosed } => {
                            ends_early(&block["input"])
                                || block["id"]
                                    .as_str()
                                    .is_some_and(|id| unclosed.iter().any(|u| u == id))
                        }
                    };
                tool_calls.push(tool_use(block, cut)?)
            }
            _ => {}
        }
    }
    if stop == StopReason::Paused
        && let Some(last) = content.last_mut()
        && last["type"] == "text"
        && let Some(trimmed) = last["text"].as_str().map(str::trim_end)
    {
        // The API refuses an assistant turn that ends in whitespace when asked to go on
        // with it; the answer keeps the text as written.
        last["text"] = Value::String(trimmed.to_owned());
    }
    let usage = &body["usage"];
    let count = |field: &str| usage[field].as_u64().unwrap_or(0);
    let usage = Usage {
        // Saturating: the counts are the provider's numbers, not ours to trust.
        input_tokens: count("input_tokens")
            .saturating_add(count("cache_creation_input_tokens"))
            .saturating_add(count("cache_read_input_tokens")),
        output_tokens: count("output_tokens"),
        cache_read_tokens: count("cache_read_input_tokens"),
        cache_write_tokens: count("cache_creation_input_tokens"),
    };
    let stop = match stop {
        StopReason::EndTurn if !tool_calls.is_empty() => StopReason::ToolUse,
        other => other,
    };
    if stop == StopReason::Refused {
        // What the model said before it stopped, else the provider's explanation.
        if text.trim().is_empty() {
            let quote = |text: &str| quoted(secrets, text);
            let explanation = body["stop_details"]["explanation"].as_str().map(quote);
            let category = body["stop_details"]["category"].as_str().map(quote);
            text = match (explanation, category) {
                (Some(explanation), _) => explanation,
                (None, Some(category)) => {
                    format!("The model declined to answer (refusal, category {category}).")
                }
                (None, None) => "The model declined to answer (refusal).".to_owned(),
            };
        }
    }
    Ok(Reply {
        items: content.iter().map(raw_item).collect(),
        text,
        tool_calls,
        usage,
        stop,
    })
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
    use super::*;

    fn message(content: Value, stop: &str) -> Value {
        json!({"id": "msg_1", "type": "message", "role": "assistant", "content": content,
               "stop_reason": stop, "usage": {"input_tokens": 5, "output_tokens": 2,
               "cache_read_input_tokens": 3}})
    }

    fn stream_of(events: &[Value]) -> Result<Option<Reply>, AttemptError> {
        let mut stream = Messages.stream("anthropic", &Secrets::default());
        let mut last = Ok(None);
        for event in events {
            let name = event["type"].as_str().unwrap().to_owned();
            last = stream.event(&name, &event.to_string());
            if !matches!(last, Ok(None)) {
                break;
            }
        }
        last
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
