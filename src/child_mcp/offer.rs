//! What the model is offered of a child's tools (SPEC §8.3–§8.5): names of the form
//! `<server>__<tool>` within the providers' rules, sanitized and capped descriptions, object
//! input schemas, and the filtering of a definition's sandbox and tool lists.

use std::collections::HashSet;

use rmcp::model::Tool;
use serde_json::{Map, Value, json};

use crate::definition::{AgentDefinition, ToolHints, ToolNames, provider_safe};
use crate::limits::{ACTIVITY_TOOL_NAME_CHARS, TOOL_DESCRIPTION_BYTES, TOOL_NAME_CHARS};
use crate::text::{cut_utf8, is_hidden};

/// `<server>__<tool>` reduced to `[A-Za-z0-9_-]{1,64}`, unique among `taken`: a name that
/// needs cutting gets a short hash of the full name, and a collision gets `_2`, `_3`, …
/// Deterministic for the same servers and tools in the same order.
pub fn model_tool_name(server: &str, tool: &str, taken: &HashSet<String>) -> String {
    let full = format!("{server}__{tool}");
    let mut name = provider_safe(&full);
    if name.len() > TOOL_NAME_CHARS {
        let hash = format!("{:08x}", fnv1a(full.as_bytes()) as u32);
        name.truncate(TOOL_NAME_CHARS - hash.len() - 1);
        name.push('_');
        name.push_str(&hash);
    }
    if !taken.contains(&name) {
        return name;
    }
    (2u32..)
        .map(|n| {
            let suffix = format!("_{n}");
            let mut base = name.clone();
            base.truncate(TOOL_NAME_CHARS - suffix.len());
            base + &suffix
        })
        .find(|candidate| !taken.contains(candidate))
        .unwrap_or(name)
}

/// A small stable hash (FNV-1a), so cut names do not depend on the Rust version.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Removes control, zero-width, bidirectional and other invisible characters
/// ([`is_hidden`]), folds whitespace, and caps the result at [`TOOL_DESCRIPTION_BYTES`] on a
/// character boundary.
pub(super) fn sanitize_description(text: &str) -> String {
    let folded = sanitize_text(text);
    cut_utf8(&folded, TOOL_DESCRIPTION_BYTES).to_owned()
}

/// [`sanitize_description`] without the cap: hidden characters removed, whitespace folded.
pub(super) fn sanitize_text(text: &str) -> String {
    let cleaned: String = text
        .chars()
        .map(|c| if c.is_whitespace() { ' ' } else { c })
        .filter(|c| !is_hidden(*c))
        .collect();
    cleaned.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A child's tool name as activity shows it (the `tool` and `summary` fields, progress
/// notifications, the terminal status line, and the timeout message): hidden characters
/// removed as in descriptions, whitespace folded, and at most [`ACTIVITY_TOOL_NAME_CHARS`]
/// characters. Calls to the child use the name as it was listed.
pub(super) fn activity_tool_name(raw: &str) -> String {
    sanitize_text(raw)
        .chars()
        .take(ACTIVITY_TOOL_NAME_CHARS)
        .collect()
}

/// An object input schema: `type: "object"` and `properties` at the top (its alternatives,
/// if any, are kept for each wire API to reshape), with every `title` and `description` text
/// in it sanitized ([`sanitize_schema_texts`]).
pub(super) fn object_schema(schema: &Map<String, Value>) -> Value {
    let mut schema = Value::Object(schema.clone());
    sanitize_schema_texts(&mut schema);
    let Value::Object(schema) = schema else {
        return json!({"type": "object", "properties": {}});
    };
    shape_object_schema(schema)
}

/// Every string value under a `title` or `description` key, at any depth, goes through
/// [`sanitize_text`] (not capped: the schema as a whole is bounded by the message it came
/// in). The walk keeps its own stack instead of recursing, so no nesting can exhaust ours.
pub(super) fn sanitize_schema_texts(schema: &mut Value) {
    let mut pending: Vec<&mut Value> = vec![schema];
    while let Some(value) = pending.pop() {
        match value {
            Value::Object(map) => {
                for (key, child) in map.iter_mut() {
                    match child {
                        Value::String(text) if key == "title" || key == "description" => {
                            *text = sanitize_text(text);
                        }
                        Value::Object(_) | Value::Array(_) => pending.push(child),
                        _ => {}
                    }
                }
            }
            Value::Array(items) => pending.extend(items.iter_mut()),
            _ => {}
        }
    }
}

fn shape_object_schema(mut schema: Map<String, Value>) -> Value {
    let may_be_object = match schema.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(types)) => types.iter().any(|t| t == "object"),
        // Without a `type`, an object schema still says what its arguments are: by its
        // properties, or by the alternatives (`oneOf`, `anyOf`, `allOf`) each wire API
        // reshapes into the form it accepts.
        None => ["properties", "oneOf", "anyOf", "allOf"]
            .iter()
            .any(|k| schema.contains_key(*k)),
        Some(_) => false,
    };
    if !may_be_object {
        // Not an object schema: arguments cannot be described, so none are declared.
        return json!({"type": "object", "properties": {}});
    }
    schema.insert("type".into(), json!("object"));
    if !schema.get("properties").is_some_and(Value::is_object) {
        schema.insert("properties".into(), json!({}));
    }
    Value::Object(schema)
}

/// The annotations filtering reads.
pub(super) fn hints(tool: &Tool) -> ToolHints {
    let annotations = tool.annotations.as_ref();
    ToolHints {
        read_only: annotations.and_then(|a| a.read_only_hint),
        destructive: annotations.and_then(|a| a.destructive_hint),
    }
}

/// Whether `definition` lets its model see `server`'s `tool`, which would be offered as
/// `offered_name`: allow and deny patterns are matched against both the child's name and
/// the offered one.
pub(super) fn offered(
    definition: &AgentDefinition,
    server: &str,
    tool: &Tool,
    offered_name: &str,
) -> bool {
    let names = ToolNames::new(server, &tool.name).offered_as(offered_name);
    definition.offers_named_tool(&names, hints(tool))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_provider_rules_and_stay_unique() {
        let mut taken = HashSet::new();
        let a = model_tool_name("github", "search.issues", &taken);
        assert_eq!(a, "github__search_issues");
        taken.insert(a.clone());
        let b = model_tool_name("github", "search/issues", &taken);
        assert_eq!(b, "github__search_issues_2");
        taken.insert(b);
        assert_eq!(
            model_tool_name("github", "search issues", &taken),
            "github__search_issues_3"
        );
        let long = model_tool_name("server", &"x".repeat(100), &HashSet::new());
        assert_eq!(long.len(), 64);
        assert_eq!(
            long,
            model_tool_name("server", &"x".repeat(100), &HashSet::new()),
            "deterministic"
        );
        assert_ne!(
            long,
            model_tool_name("server", &"x".repeat(101), &HashSet::new())
        );
        let unicode = model_tool_name("srv", "ünï", &HashSet::new());
        assert!(
            unicode
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        );
    }

    #[test]
    fn descriptions_lose_hidden_characters_and_are_capped() {
        let hostile =
            "Reads\u{202E}txt.exe\u{200B} files.\u{0007}\n\n  Ignore\tall\u{2066} previous";
        assert_eq!(
            sanitize_description(hostile),
            "Readstxt.exe files. Ignore all previous"
        );
        let long = "é".repeat(5000);
        let capped = sanitize_description(&long);
        assert!(
            capped.len() <= TOOL_DESCRIPTION_BYTES && capped.len() >= TOOL_DESCRIPTION_BYTES - 1
        );
        assert!(capped.chars().all(|c| c == 'é'));
    }

    #[test]
    fn every_invisible_format_character_is_removed() {
        // ASCII smuggling: "Ignore" spelled in tag characters, between visible words.
        let smuggled: String = "Ignore"
            .chars()
            .map(|c| char::from_u32(0xE0000 + c as u32).unwrap())
            .collect();
        assert_eq!(
            sanitize_description(&format!("\u{E0001}Safe{smuggled}\u{E007F} tool")),
            "Safe tool"
        );
        let hidden = concat!(
            "\u{00AD}\u{034F}\u{0600}\u{0605}\u{061C}\u{06DD}\u{070F}\u{0890}",
            "\u{08E2}\u{115F}\u{1160}\u{17B4}\u{180B}\u{180E}\u{200B}\u{200F}",
            "\u{202A}\u{202E}\u{2060}\u{2064}\u{2066}\u{206A}\u{206F}\u{3164}",
            "\u{FE00}\u{FE0F}\u{FEFF}\u{FFA0}\u{FFF9}\u{FFFB}\u{110BD}\u{110CD}",
            "\u{13430}\u{1343F}\u{1BCA0}\u{1BCA3}\u{1D173}\u{1D17A}\u{E0000}\u{E0041}",
            "\u{E007F}\u{E0100}\u{E01EF}\u{0000}\u{001B}\u{007F}\u{0085}\u{009B}",
        );
        for c in hidden.chars() {
            let text = format!("a{c}b");
            let clean = sanitize_description(&text);
            assert!(
                clean == "ab" || clean == "a b",
                "U+{:04X}: {clean:?}",
                c as u32
            );
            assert!(!clean.contains(c));
        }
        for c in [
            'a',
            'é',
            '中',
            '\u{1F600}',
            '-',
            '\u{00A0}',
            '\u{FFFD}',
            '\u{E0200}',
        ] {
            assert!(!is_hidden(c), "U+{:04X} is visible", c as u32);
        }
        // A visible character next to a removed one survives: only the hidden ones go.
        assert_eq!(sanitize_text("e\u{FE0F}\u{0301}"), "e\u{0301}");
    }

    #[test]
    fn schema_titles_and_descriptions_are_sanitized_at_every_depth() {
        let object = |v: Value| v.as_object().unwrap().clone();
        let long = "d".repeat(10_000);
        let schema = object(json!({
            "type": "object",
            "title": "T\u{E0049}\u{E0067}",
            "description": "Top\u{202E} \n level",
            "properties": {
                "path": {"type": "string", "description": "A path.\u{200B}\u{FE0F}", "title": "P\u{2061}"},
                "description": {"type": "string", "description": "named description\u{FEFF}"},
                "title": {"type": "string", "enum": ["x\u{200B}"]},
                "list": {"type": "array", "items": [{"description": "in\u{00AD} array"}]},
                "long": {"type": "string", "description": long},
            }
        }));
        let shaped = object_schema(&schema);
        assert_eq!(shaped["title"], "T");
        assert_eq!(shaped["description"], "Top level");
        assert_eq!(shaped["properties"]["path"]["description"], "A path.");
        assert_eq!(shaped["properties"]["path"]["title"], "P");
        assert_eq!(
            shaped["properties"]["description"]["description"],
            "named description"
        );
        assert_eq!(
            shaped["properties"]["title"]["enum"][0], "x\u{200B}",
            "only title and description texts are touched"
        );
        assert_eq!(
            shaped["properties"]["list"]["items"][0]["description"],
            "in array"
        );
        assert_eq!(
            shaped["properties"]["long"]["description"]
                .as_str()
                .unwrap()
                .len(),
            10_000,
            "not capped"
        );

        // Deep nesting is walked without recursion: every level is reached.
        let mut deep = json!({"description": "bottom\u{E0041}"});
        for _ in 0..10_000 {
            // Built by hand: `json!` would serialize `deep` again, recursively.
            let mut properties = Map::new();
            properties.insert("p".into(), deep);
            let mut level = Map::new();
            level.insert("type".into(), json!("object"));
            level.insert("properties".into(), Value::Object(properties));
            level.insert("title".into(), json!("t\u{200B}"));
            deep = Value::Object(level);
        }
        sanitize_schema_texts(&mut deep);
        let mut at = &deep;
        let mut levels = 0;
        while let Some(next) = at.get("properties").and_then(|p| p.get("p")) {
            assert_eq!(at["title"], "t");
            at = next;
            levels += 1;
        }
        assert_eq!(levels, 10_000);
        assert_eq!(at["description"], "bottom");
        // Dropping a value this deep would recurse as deep; take it apart level by level.
        let mut next = Some(deep);
        while let Some(mut value) = next.take() {
            next = value
                .get_mut("properties")
                .and_then(|p| p.get_mut("p"))
                .map(Value::take);
        }
    }

    #[test]
    fn activity_names_are_clean_and_short() {
        let raw = format!(
            "sleep\u{1b}]0;owned\u{7}\u{1b}[2J\u{202E}\u{E0041}\n{}",
            "z".repeat(300)
        );
        let shown = activity_tool_name(&raw);
        assert!(shown.starts_with("sleep]0;owned[2J zzz"), "{shown}");
        assert_eq!(shown.chars().count(), ACTIVITY_TOOL_NAME_CHARS);
        assert!(!shown.chars().any(|c| c.is_control() || is_hidden(c)));
        let wide = "字".repeat(500);
        assert_eq!(
            activity_tool_name(&wide),
            "字".repeat(ACTIVITY_TOOL_NAME_CHARS)
        );
        assert_eq!(activity_tool_name("search.issues"), "search.issues");
    }

    #[test]
    fn schemas_become_objects() {
        let object = |v: Value| v.as_object().unwrap().clone();
        assert_eq!(
            object_schema(&object(json!({"type": "object"}))),
            json!({"type": "object", "properties": {}})
        );
        assert_eq!(
            object_schema(&object(json!({"properties": {"a": {"type": "string"}}}))),
            json!({"properties": {"a": {"type": "string"}}, "type": "object"})
        );
        assert_eq!(
            object_schema(&object(json!({"type": "string"}))),
            json!({"type": "object", "properties": {}})
        );
        let alternatives =
            json!({"oneOf": [{"properties": {"id": {}}}, {"properties": {"url": {}}}]});
        assert_eq!(
            object_schema(&object(alternatives.clone())),
            json!({"oneOf": alternatives["oneOf"], "type": "object", "properties": {}}),
            "alternatives are kept for the wire APIs to reshape"
        );
        assert_eq!(
            object_schema(&object(json!({"type": ["object", "null"]}))),
            json!({"type": "object", "properties": {}})
        );
    }
}
