//! A conversation kept in one wire API's own form (SPEC §6): the history is the provider's
//! raw items, appended to and never rewritten.

use serde_json::Value;

use super::reply::{Reply, ToolOutput};
use super::{messages, responses};
use crate::definition::WireApi;

/// A conversation in one wire API's native form. It only grows; nothing is summarized,
/// pruned or rewritten.
#[derive(Debug, Clone, PartialEq)]
pub struct Conversation {
    wire: WireApi,
    items: Vec<Value>,
}

impl Conversation {
    pub fn new(wire: WireApi) -> Self {
        Conversation {
            wire,
            items: Vec::new(),
        }
    }

    /// The raw items (Responses `input` items or Messages `messages`).
    pub fn items(&self) -> &[Value] {
        &self.items
    }

    /// Adds user input, in order.
    pub fn push_user_texts(&mut self, texts: &[String]) {
        match self.wire {
            WireApi::Responses => responses::push_user_texts(&mut self.items, texts),
            WireApi::AnthropicMessages => messages::push_user_texts(&mut self.items, texts),
        }
    }

    /// Adds the model's reply.
    pub fn push_reply(&mut self, reply: &Reply) {
        match self.wire {
            WireApi::Responses => self.items.extend(reply.items.iter().cloned()),
            WireApi::AnthropicMessages => messages::push_reply(&mut self.items, reply),
        }
    }

    /// Adds one result per call, in the order given.
    pub fn push_tool_outputs(&mut self, outputs: &[ToolOutput]) {
        match self.wire {
            WireApi::Responses => responses::push_tool_outputs(&mut self.items, outputs),
            WireApi::AnthropicMessages => messages::push_tool_outputs(&mut self.items, outputs),
        }
    }
}
