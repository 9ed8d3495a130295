//! What a wire API is to the rest of this layer: one type per format (`responses`,
//! `messages`, `chat`) behind [`WireFormat`], which the client and the conversation call once per
//! step: encode a request from the history, read a streamed (or, from a server that ignores
//! `stream`, a whole) reply into a [`Reply`], and turn user text and tool outputs into
//! history items. A run's tools are encoded once ([`ToolList`]), in the form the API accepts
//! and in a stable order, and copied into every request as bytes.

use reqwest::header::HeaderMap;
use serde_json::Value;
use serde_json::value::RawValue;

use super::classify::AttemptError;
use super::credentials::ApiKey;
use super::history::History;
use super::models::{ThinkingKind, preferred_thinking};
use super::reply::{ModelSettings, Reply, ToolOutput};
use super::tool_names;
use super::unsupported::{Learned, OptionalParam};
use crate::definition::{AuthHeader, ReasoningEffort, WireRules};
use crate::redact::Secrets;
use crate::toolbox::ToolSpec;

/// Everything one request body is built from, borrowed.
pub struct Request<'a> {
    pub settings: &'a ModelSettings,
    pub system: &'a str,
    pub history: &'a History,
    pub tools: &'a ToolList,
    pub max_output_tokens: u32,
    /// What the model refused before: the request leaves those parameters out, and sends
    /// the effort level and the kind of thinking it takes instead.
    pub learned: &'a Learned,
    /// `prompt_cache_key`: stable per definition and workspace (Responses; Chat Completions
    /// to OpenAI's own endpoint only).
    pub prompt_cache_key: Option<&'a str>,
}

impl Request<'_> {
    /// Whether the request carries `param`, where its API has it ([`carries`]).
    pub fn sends(&self, param: OptionalParam) -> bool {
        carries(self.settings, self.learned, param)
    }

    /// The reasoning effort the request carries: the definition's, or the level the model
    /// takes instead of it ([`effort`]).
    pub fn effort(&self) -> Option<ReasoningEffort> {
        effort(self.settings, self.learned)
    }

    /// The thinking a Messages request asks for ([`thinking`]).
    pub(crate) fn thinking(&self) -> Option<ThinkingKind> {
        thinking(self.settings, self.learned)
    }

    /// The effort a thinking budget stands for: the level the request would carry, even
    /// once the model refused the effort parameter itself. A model that takes a budget but
    /// no effort (Claude 4.5 behind a gateway's name) still thinks as much as the
    /// definition asks; only the parameter goes.
    pub(crate) fn thinking_effort(&self) -> Option<ReasoningEffort> {
        let written = self.settings.reasoning_effort?;
        Some(self.learned.effort().unwrap_or(written))
    }
}

/// Whether a request with `settings` carries `param` on an API that has it: set by the
/// definition (encrypted reasoning always), and not refused by the model before.
pub(super) fn carries(settings: &ModelSettings, learned: &Learned, param: OptionalParam) -> bool {
    !learned.contains(param)
        && match param {
            OptionalParam::Temperature => settings.temperature.is_some(),
            OptionalParam::Effort => effort(settings, learned).is_some(),
            OptionalParam::AdaptiveThinking => {
                thinking(settings, learned) == Some(ThinkingKind::Adaptive)
            }
            OptionalParam::BudgetThinking => {
                thinking(settings, learned) == Some(ThinkingKind::Budget)
            }
            OptionalParam::EncryptedReasoning
            | OptionalParam::StreamUsage
            | OptionalParam::ImageParts => true,
            OptionalParam::CompletionTokens => !settings.output_limit_as_max_tokens,
        }
}

/// The effort level a request carries: none once the model refused the parameter; the
/// level the model takes once it refused the definition's (or its default: `none` for a
/// model that refuses to reason with tools on Chat Completions); else the definition's.
pub(super) fn effort(settings: &ModelSettings, learned: &Learned) -> Option<ReasoningEffort> {
    if learned.contains(OptionalParam::Effort) {
        return None;
    }
    learned.effort().or(settings.reasoning_effort)
}

/// The kind of thinking a Messages request with `settings` asks for: with a
/// `reasoning_effort`, the kind the model table gives the model (adaptive for a model it does
/// not know), else, once the model refused that kind, the other; none once it refused both.
pub(super) fn thinking(settings: &ModelSettings, learned: &Learned) -> Option<ThinkingKind> {
    settings.reasoning_effort?;
    let preferred = preferred_thinking(&settings.model);
    [preferred, preferred.other()]
        .into_iter()
        .find(|kind| !learned.contains(thinking_param(*kind)))
}

/// The optional parameter a kind of thinking is sent as.
pub(super) fn thinking_param(kind: ThinkingKind) -> OptionalParam {
    match kind {
        ThinkingKind::Adaptive => OptionalParam::AdaptiveThinking,
        ThinkingKind::Budget => OptionalParam::BudgetThinking,
    }
}

/// A run's tools, encoded once as the JSON array one API takes.
#[derive(Debug, Clone, Default)]
pub struct ToolList {
    encoded: Option<Box<RawValue>>,
    /// The tools sent under another name than their own (`tool_names`): the name sent,
    /// then the tool's own.
    renamed: Vec<(String, String)>,
}

impl ToolList {
    /// The encoded array; `None` when there are no tools (the field is left out).
    pub fn encoded(&self) -> Option<&RawValue> {
        self.encoded.as_deref()
    }

    pub fn is_empty(&self) -> bool {
        self.encoded.is_none()
    }

    /// `tools` as the array `encode` made of them (`None` for no tools), each under the
    /// name the wire of `rules` takes (`tool_names`).
    pub fn new(
        tools: &[ToolSpec],
        rules: &WireRules,
        encode: impl FnOnce(&[&ToolSpec]) -> serde_json::Result<Box<RawValue>>,
    ) -> serde_json::Result<ToolList> {
        if tools.is_empty() {
            return Ok(ToolList::default());
        }
        // By name, so that the prefix is the same whatever order the children listed them
        // in (names are unique).
        let mut sorted: Vec<&ToolSpec> = tools.iter().collect();
        sorted.sort_by(|a, b| a.name.cmp(&b.name));
        let renamed = tool_names::renamed(rules, &sorted);
        let copies: Vec<ToolSpec> = renamed
            .iter()
            .map(|(at, name)| ToolSpec {
                name: name.clone(),
                ..sorted[*at].clone()
            })
            .collect();
        let mut sent = sorted.clone();
        for ((at, _), copy) in renamed.iter().zip(&copies) {
            sent[*at] = copy;
        }
        Ok(ToolList {
            encoded: Some(encode(&sent)?),
            renamed: renamed
                .into_iter()
                .map(|(at, name)| (name, sorted[at].name.clone()))
                .collect(),
        })
    }

    /// The tool's own name for a call by `name`: the name it was sent under mapped back.
    pub fn tool_name<'a>(&'a self, name: &'a str) -> &'a str {
        self.renamed
            .iter()
            .find(|(sent, _)| sent == name)
            .map_or(name, |(_, own)| own.as_str())
    }
}

/// One wire API.
pub trait WireFormat: Send + Sync {
    /// Appended to the base URL: `/responses`, `/v1/messages`, `/chat/completions`.
    fn path(&self) -> &'static str;

    /// Content type, API version, and the key in the header `auth` names.
    fn headers(&self, key: &ApiKey, auth: AuthHeader) -> HeaderMap;

    /// The request body, streamed, with the history copied in as stored.
    fn encode(&self, request: &Request<'_>) -> serde_json::Result<Vec<u8>>;

    /// A run's tools as this API takes them (schemas reshaped, SPEC §6.1), once per run.
    fn encode_tools(&self, tools: &[ToolSpec]) -> serde_json::Result<ToolList>;

    /// Whether this API's requests can carry `param` at all.
    fn may_send(&self, param: OptionalParam) -> bool;

    /// A reader for one streamed reply; what it quotes of the provider hides `secrets`.
    fn stream(&self, provider: &str, secrets: &Secrets) -> Box<dyn ReplyStream>;

    /// A whole reply, from a server that answered with one JSON body.
    fn parse(&self, provider: &str, secrets: &Secrets, body: Value) -> Result<Reply, AttemptError>;

    /// A user turn's text as a history item.
    fn user_text(&self, text: &str) -> Box<RawValue>;

    /// A tool's result as a history item.
    fn tool_output(&self, output: &ToolOutput) -> Box<RawValue>;

    /// The results of one round of calls, in order, as history items: one per result, unless
    /// the API needs more (Chat Completions puts the images the tools returned in a user
    /// message after the results, since its tool messages take text only).
    fn tool_outputs(&self, outputs: &[ToolOutput]) -> Vec<Box<RawValue>> {
        outputs.iter().map(|o| self.tool_output(o)).collect()
    }
}

/// The events of one streamed reply, fed in order.
pub trait ReplyStream: Send {
    /// Takes one event (`event` is the SSE event name, `data` its data). Returns the reply
    /// once the event that ends it arrived; an `error` event or a failed response is an
    /// error.
    fn event(&mut self, event: &str, data: &str) -> Result<Option<Reply>, AttemptError>;

    /// The event that ends a reply, for the message when the stream ends without it.
    fn terminal_event(&self) -> &'static str;

    /// The reply, when the stream ended without [`terminal_event`](Self::terminal_event) but
    /// what came is whole as the API's own SDK reads it; `None` when the reply broke off.
    fn ended_without_terminal_event(&mut self) -> Result<Option<Reply>, AttemptError> {
        Ok(None)
    }
}

/// Feeds `events` (each named by its `type`) to `stream` until one ends the reply or fails.
#[cfg(test)]
pub(super) fn read_events(
    mut stream: Box<dyn ReplyStream>,
    events: &[Value],
) -> Result<Option<Reply>, AttemptError> {
    let mut last = Ok(None);
    for event in events {
        let name = event["type"].as_str().unwrap_or("");
        last = stream.event(name, &event.to_string());
        if !matches!(last, Ok(None)) {
            break;
        }
    }
    last
}

/// Encodes `value` as a raw history item. Only plain JSON values built here reach this, and
/// those always encode.
pub(super) fn raw_item(value: &Value) -> Box<RawValue> {
    #[expect(
        clippy::expect_used,
        reason = "a `Value` always serializes: its keys are strings and its numbers finite"
    )]
    serde_json::value::to_raw_value(value).expect("a JSON value encodes")
}
