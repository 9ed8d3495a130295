//! A conversation kept in one wire API's own form (SPEC §6): the history is the provider's
//! raw items, appended to and never rewritten, and what the session learned about its
//! model's requests ([`Learned`]): the optional parameters it refuses, left out of every later
//! request of the session, in this run and the ones after, and the effort level and kind of
//! thinking it takes instead of the ones it refused.

use serde_json::value::RawValue;

use super::formats::format;
use super::history::{History, Role};
use super::reply::{Reply, ToolOutput};
use super::unsupported::Learned;
use super::wire::WireFormat;
use crate::definition::WireApi;

/// A conversation in one wire API's native form. It only grows; nothing is summarized,
/// pruned or rewritten.
#[derive(Clone)]
pub struct Conversation {
    api: WireApi,
    wire: &'static dyn WireFormat,
    history: History,
    learned: Learned,
}

impl std::fmt::Debug for Conversation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Conversation")
            .field("api", &self.api)
            .field("items", &self.history.len())
            .field("bytes", &self.history.bytes())
            .finish()
    }
}

impl PartialEq for Conversation {
    fn eq(&self, other: &Self) -> bool {
        self.api == other.api && self.history == other.history
    }
}

impl Conversation {
    pub fn new(api: WireApi) -> Self {
        Conversation {
            api,
            wire: format(api),
            history: History::default(),
            learned: Learned::default(),
        }
    }

    /// What this session's model refused, and what it takes instead (SPEC §6.1).
    pub fn learned(&self) -> &Learned {
        &self.learned
    }

    pub fn api(&self) -> WireApi {
        self.api
    }

    /// The stored items (Responses `input` items, Messages content blocks, Chat Completions
    /// messages), as received.
    pub fn history(&self) -> &History {
        &self.history
    }

    /// The stored items parsed into JSON values: a copy, for tests and diagnostics (the loop
    /// never reads them back).
    pub fn items(&self) -> Vec<serde_json::Value> {
        self.history
            .entries()
            .iter()
            .map(|e| serde_json::from_str(e.item.get()).unwrap_or(serde_json::Value::Null))
            .collect()
    }

    /// How many items are stored.
    pub fn len(&self) -> usize {
        self.history.len()
    }

    pub fn is_empty(&self) -> bool {
        self.history.is_empty()
    }

    /// The bytes of JSON the history holds (SPEC §5 retention).
    pub fn bytes(&self) -> usize {
        self.history.bytes()
    }

    /// Adds user input, in order.
    pub fn push_user_texts(&mut self, texts: &[String]) {
        for text in texts {
            self.history.push(Role::User, self.wire.user_text(text));
        }
    }

    /// Adds the model's reply (a copy of its items). A paused reply's continuation joins the
    /// assistant turn it continues.
    pub fn push_reply(&mut self, reply: &Reply) {
        self.push_reply_items(reply.items.clone());
    }

    /// Adds the model's reply items, taken (the loop's way: nothing is copied).
    pub fn push_reply_items(&mut self, items: Vec<Box<RawValue>>) {
        for item in items {
            self.history.push(Role::Assistant, item);
        }
    }

    /// Adds one result per call, in the order given (and, on Chat Completions, a user
    /// message with the images they returned after them).
    pub fn push_tool_outputs(&mut self, outputs: &[ToolOutput]) {
        for item in self.wire.tool_outputs(outputs) {
            self.history.push(Role::User, item);
        }
    }
}
