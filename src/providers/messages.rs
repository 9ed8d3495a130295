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
//! The reply, streamed or whole, is read in `messages_reply`.

use reqwest::header::{HeaderMap, HeaderValue};
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::classify::AttemptError;
use super::credentials::{ApiKey, json_headers};
use super::history::{Entry, GroupedMessages, History, Role};
use super::messages_reply::{MessagesStream, parse_message};
use super::models::{self, EffortSupport, ThinkingKind, thinking_budget};
use super::reply::{Reply, ToolOutput};
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
        // The budget stands for the effort even where the model refused the effort
        // parameter: dropping it must not turn thinking off.
        let thinking = match (request.thinking(), request.thinking_effort()) {
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
        ToolList::new(tools, &WireRules::MESSAGES, |sorted| {
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
        Box::new(MessagesStream::new(provider, secrets))
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
