//! The stored history: every item exactly as bytes of provider JSON, each tagged with who
//! said it. Nothing here parses an item again; a request is encoded by copying the bytes.
//!
//! One entry is one Responses `input` item, or one Messages content block. Messages groups
//! the blocks of consecutive entries of the same role into one message when it encodes a
//! request, so appending never has to reach back into a message already stored.

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::value::RawValue;

/// Who an entry belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

/// One stored item.
#[derive(Debug, Clone)]
pub struct Entry {
    pub role: Role,
    pub item: Box<RawValue>,
}

/// The items of one conversation, in order, and their size.
#[derive(Debug, Clone, Default)]
pub struct History {
    entries: Vec<Entry>,
    bytes: usize,
}

/// Histories compare by their bytes (`RawValue` has no `PartialEq` of its own).
impl PartialEq for History {
    fn eq(&self, other: &Self) -> bool {
        self.entries.len() == other.entries.len()
            && self
                .entries
                .iter()
                .zip(&other.entries)
                .all(|(a, b)| a.role == b.role && a.item.get() == b.item.get())
    }
}

impl History {
    pub fn push(&mut self, role: Role, item: Box<RawValue>) {
        self.bytes += item.get().len();
        self.entries.push(Entry { role, item });
    }

    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The bytes of JSON held (what the retention budget of SPEC §5 counts).
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Every item as one flat JSON array (Responses `input`), borrowed.
    pub fn as_items(&self) -> FlatItems<'_> {
        FlatItems(&self.entries)
    }

    /// Every item grouped into `{"role", "content": [...]}` messages (Messages `messages`),
    /// borrowed.
    pub fn as_messages(&self) -> GroupedMessages<'_> {
        GroupedMessages(&self.entries)
    }
}

/// [`History::as_items`].
pub struct FlatItems<'a>(&'a [Entry]);

impl Serialize for FlatItems<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.0.len()))?;
        for entry in self.0 {
            seq.serialize_element(&entry.item)?;
        }
        seq.end()
    }
}

/// [`History::as_messages`].
pub struct GroupedMessages<'a>(&'a [Entry]);

impl Serialize for GroupedMessages<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(None)?;
        for group in self.0.chunk_by(|a, b| a.role == b.role) {
            seq.serialize_element(&Message(group))?;
        }
        seq.end()
    }
}

/// Consecutive entries of one role, as one message.
struct Message<'a>(&'a [Entry]);

impl Serialize for Message<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(2))?;
        // `chunk_by` never yields an empty group.
        map.serialize_entry("role", self.0[0].role.as_str())?;
        map.serialize_entry("content", &FlatItems(self.0))?;
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_owned()).unwrap()
    }

    #[test]
    fn items_are_encoded_as_stored_and_grouped_by_role() {
        let mut history = History::default();
        history.push(Role::User, raw(r#"{"type":"text","text":"hi"}"#));
        history.push(Role::Assistant, raw(r#"{"type":"text", "text":"a"}"#));
        history.push(
            Role::Assistant,
            raw(r#"{"type":"tool_use","id":"t","name":"n","input":{}}"#),
        );
        history.push(
            Role::User,
            raw(r#"{"type":"tool_result","tool_use_id":"t","content":"x"}"#),
        );
        history.push(Role::User, raw(r#"{"type":"text","text":"more"}"#));
        assert_eq!(
            serde_json::to_string(&history.as_messages()).unwrap(),
            r#"[{"role":"user","content":[{"type":"text","text":"hi"}]},{"role":"assistant","content":[{"type":"text", "text":"a"},{"type":"tool_use","id":"t","name":"n","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"x"},{"type":"text","text":"more"}]}]"#
        );
        assert!(
            serde_json::to_string(&history.as_items())
                .unwrap()
                .starts_with(r#"[{"type":"text","text":"hi"},{"type":"text", "text":"a"}"#),
            "the bytes are copied, not re-encoded"
        );
        assert_eq!(history.len(), 5);
        assert_eq!(
            history.bytes(),
            history
                .entries()
                .iter()
                .map(|e| e.item.get().len())
                .sum::<usize>()
        );
    }
}
