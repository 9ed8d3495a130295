//! The stored history: every item exactly as bytes of provider JSON, each tagged with who
//! said it. Nothing here parses an item again; a request is encoded by copying the bytes.
//!
//! One entry is one Responses `input` item, or one Messages content block. Messages groups
//! the blocks of consecutive entries of the same role into one message when it encodes a
//! request, so appending never has to reach back into a message already stored. A Messages
//! request can mark a few blocks as prompt-cache breakpoints ([`History::as_messages_marked`]):
//! those are encoded with `"cache_control": {"type": "ephemeral"}` added, the rest as stored.

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
        GroupedMessages {
            entries: &self.entries,
            marked: Vec::new(),
        }
    }

    /// [`as_messages`](Self::as_messages), the entries at `marks` carrying a cache
    /// breakpoint.
    pub fn as_messages_marked(&self, marks: &[usize]) -> GroupedMessages<'_> {
        let marked = marks
            .iter()
            .filter(|&&i| i < self.entries.len())
            .filter_map(|&i| with_cache_control(&self.entries[i].item).map(|item| (i, item)))
            .collect();
        GroupedMessages {
            entries: &self.entries,
            marked,
        }
    }
}

/// `item` (a JSON object) with `"cache_control": {"type": "ephemeral"}` added as its last
/// field; `None` if it is not an object.
fn with_cache_control(item: &RawValue) -> Option<Box<RawValue>> {
    with_field(item, "cache_control", r#"{"type":"ephemeral"}"#)
}

/// `item` (a JSON object that has no field `name`) with the field `name` added last, its
/// value the JSON text `value`, for a request only: the stored item is not changed. `None`
/// if `item` is not an object.
pub(super) fn with_field(item: &RawValue, name: &str, value: &str) -> Option<Box<RawValue>> {
    let text = item.get().trim_end();
    let inner = text.strip_suffix('}')?;
    if !inner.trim_start().starts_with('{') {
        return None;
    }
    let separator = if inner.trim_end().ends_with('{') {
        ""
    } else {
        ","
    };
    let name = serde_json::to_string(name).ok()?;
    RawValue::from_string(format!("{inner}{separator}{name}:{value}}}")).ok()
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
pub struct GroupedMessages<'a> {
    entries: &'a [Entry],
    /// Entries encoded with a cache breakpoint instead of as stored, by index.
    marked: Vec<(usize, Box<RawValue>)>,
}

impl Serialize for GroupedMessages<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(None)?;
        let mut start = 0;
        for group in self.entries.chunk_by(|a, b| a.role == b.role) {
            seq.serialize_element(&Message {
                group,
                start,
                marked: &self.marked,
            })?;
            start += group.len();
        }
        seq.end()
    }
}

/// Consecutive entries of one role, as one message; `start` is the first one's index.
struct Message<'a> {
    group: &'a [Entry],
    start: usize,
    marked: &'a [(usize, Box<RawValue>)],
}

impl Serialize for Message<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(2))?;
        // `chunk_by` never yields an empty group.
        map.serialize_entry("role", self.group[0].role.as_str())?;
        map.serialize_entry(
            "content",
            &Blocks {
                group: self.group,
                start: self.start,
                marked: self.marked,
            },
        )?;
        map.end()
    }
}

/// A message's blocks: each as stored, or marked.
struct Blocks<'a> {
    group: &'a [Entry],
    start: usize,
    marked: &'a [(usize, Box<RawValue>)],
}

impl Serialize for Blocks<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.group.len()))?;
        for (offset, entry) in self.group.iter().enumerate() {
            let index = self.start + offset;
            match self.marked.iter().find(|(i, _)| *i == index) {
                Some((_, marked)) => seq.serialize_element(marked)?,
                None => seq.serialize_element(&entry.item)?,
            }
        }
        seq.end()
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
            serde_json::to_string(&history.as_messages_marked(&[2, 4, 99])).unwrap(),
            r#"[{"role":"user","content":[{"type":"text","text":"hi"}]},{"role":"assistant","content":[{"type":"text", "text":"a"},{"type":"tool_use","id":"t","name":"n","input":{},"cache_control":{"type":"ephemeral"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"x"},{"type":"text","text":"more","cache_control":{"type":"ephemeral"}}]}]"#,
            "marked blocks gain a breakpoint; an index past the end is ignored"
        );
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
