//! What a wire API is to the rest of this layer: one type per format (`responses`,
//! `messages`) behind [`WireFormat`], which the client and the conversation call once per
//! step: encode a request from the history, read a streamed (or, from a server that ignores
//! `stream`, a whole) reply into a [`Reply`], and turn user text and tool outputs into
//! history items.

use reqwest::header::HeaderMap;
use serde_json::Value;
use serde_json::value::RawValue;

use super::classify::AttemptError;
use super::credentials::ApiKey;
use super::history::History;
use super::reply::{ModelSettings, Reply, ToolOutput};
use crate::definition::AuthHeader;
use crate::toolbox::ToolSpec;

/// Everything one request body is built from, borrowed.
pub struct Request<'a> {
    pub settings: &'a ModelSettings,
    pub system: &'a str,
    pub history: &'a History,
    pub tools: &'a [ToolSpec],
    pub max_output_tokens: u32,
}

/// One wire API.
pub trait WireFormat: Send + Sync {
    /// Appended to the base URL: `/responses`, `/v1/messages`.
    fn path(&self) -> &'static str;

    /// Content type, API version, and the key in the header `auth` names.
    fn headers(&self, key: &ApiKey, auth: AuthHeader) -> HeaderMap;

    /// The request body, streamed, with the history copied in as stored.
    fn encode(&self, request: &Request<'_>) -> serde_json::Result<Vec<u8>>;

    /// A reader for one streamed reply.
    fn stream(&self, provider: &str) -> Box<dyn ReplyStream>;

    /// A whole reply, from a server that answered with one JSON body.
    fn parse(&self, provider: &str, body: Value) -> Result<Reply, AttemptError>;

    /// A user turn's text as a history item.
    fn user_text(&self, text: &str) -> Box<RawValue>;

    /// A tool's result as a history item.
    fn tool_output(&self, output: &ToolOutput) -> Box<RawValue>;
}

/// The events of one streamed reply, fed in order.
pub trait ReplyStream: Send {
    /// Takes one event (`event` is the SSE event name, `data` its data). Returns the reply
    /// once the event that ends it arrived; an `error` event or a failed response is an
    /// error.
    fn event(&mut self, event: &str, data: &str) -> Result<Option<Reply>, AttemptError>;

    /// The event that ends a reply, for the message when the stream ends without it.
    fn terminal_event(&self) -> &'static str;
}

/// Encodes `value` as a raw history item. Only plain JSON values built here reach this, and
/// those always encode.
pub fn raw_item(value: &Value) -> Box<RawValue> {
    serde_json::value::to_raw_value(value)
        // A `Value` always serializes: its keys are strings and its numbers finite.
        .expect("a JSON value encodes")
}
