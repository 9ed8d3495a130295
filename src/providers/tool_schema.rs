//! Child tool schemas in the form each wire API accepts (SPEC §6.1 "Tool schemas").
//!
//! Every API wants a JSON Schema object of `type: "object"` at the top and refuses the whole
//! request otherwise: Messages refuses a top-level `oneOf`, `anyOf` or `allOf` ("input_schema
//! does not support oneOf, allOf, or anyOf at the top level"), Responses and Chat Completions
//! those and `enum` and `not` as well (`invalid_function_parameters`). Many published MCP servers have such tools,
//! and one of them would fail every request of its agent. So, at the top level only:
//!
//! - `allOf` is merged: the members' properties and `required` lists are united (a property
//!   two members describe differently becomes the `allOf` of both, which is allowed below
//!   the top), and their other keywords are kept where the top has none;
//! - `oneOf` / `anyOf` are folded: every alternative's properties become optional properties
//!   (one named by several alternatives in different ways becomes their `anyOf`), only what
//!   every alternative requires stays required, and the tool's description gains a line
//!   naming the alternatives, so the model still knows which combinations are meant;
//! - `enum` and `not` (Responses, Chat Completions) are dropped, with a line saying what they
//!   demanded;
//! - a schema that is not an object schema at all describes no arguments.
//!
//! Everything below the top level is sent as it is. The child's own schema stays what the
//! arguments are validated against; this is only what the model is shown. A schema the API
//! takes already is borrowed, not copied, so most tools cost nothing here.

use std::borrow::Cow;

use serde_json::{Map, Value, json};

use crate::definition::WireRules;
use crate::toolbox::ToolSpec;

/// The most characters of JSON a description line quotes from a dropped `enum` or `not`.
const QUOTED_SCHEMA_CHARS: usize = 300;
/// The most characters the lines added to a description take in all (a `oneOf` of a hundred
/// alternatives would otherwise add a page).
const NOTE_CHARS: usize = 1000;

/// A tool's description and schema as one API is sent them.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Shaped<'a> {
    pub description: Cow<'a, str>,
    pub schema: Cow<'a, Value>,
}

/// Each tool with its description and schema shaped for the wire of `rules` ([`shape`]), in
/// order.
pub(super) fn shape_each<'a>(
    rules: &WireRules,
    tools: &[&'a ToolSpec],
) -> Vec<(&'a ToolSpec, Shaped<'a>)> {
    tools
        .iter()
        .map(|&t| (t, shape(rules, &t.description, &t.input_schema)))
        .collect()
}

/// `schema` (with `description`) as the wire of `rules` accepts it.
pub(super) fn shape<'a>(rules: &WireRules, description: &'a str, schema: &'a Value) -> Shaped<'a> {
    let acceptable = schema.as_object().is_some_and(|map| {
        map.get("type") == Some(&json!("object"))
            && map.get("properties").is_none_or(Value::is_object)
            && !rules.schema_refuses.iter().any(|k| map.contains_key(*k))
    });
    if acceptable {
        return Shaped {
            description: Cow::Borrowed(description),
            schema: Cow::Borrowed(schema),
        };
    }
    let mut notes = Vec::new();
    let shaped = match schema {
        Value::Object(map) => top_level(rules, map, &mut notes),
        _ => empty_object(),
    };
    let mut note = notes.join(" ");
    if note.chars().count() > NOTE_CHARS {
        note = note.chars().take(NOTE_CHARS).collect::<String>() + "…";
    }
    let description = if note.is_empty() {
        Cow::Borrowed(description)
    } else if description.trim().is_empty() {
        Cow::Owned(note)
    } else {
        Cow::Owned(format!("{description}\n\n{note}"))
    };
    Shaped {
        description,
        schema: Cow::Owned(Value::Object(shaped)),
    }
}

fn empty_object() -> Map<String, Value> {
    let mut map = Map::new();
    map.insert("type".into(), json!("object"));
    map.insert("properties".into(), json!({}));
    map
}

/// Whether `schema` can describe an object: its `type` is `object`, includes it, or is
/// absent.
fn may_be_object(schema: &Map<String, Value>) -> bool {
    match schema.get("type") {
        None => true,
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(types)) => types.iter().any(|t| t == "object"),
        Some(_) => false,
    }
}

fn top_level(
    rules: &WireRules,
    schema: &Map<String, Value>,
    notes: &mut Vec<String>,
) -> Map<String, Value> {
    if !may_be_object(schema) {
        return empty_object();
    }
    let mut shaped = flatten(schema, notes);
    for (keyword, what) in [
        ("enum", "The arguments must be exactly one of"),
        ("not", "The arguments must not match"),
    ] {
        if rules.schema_refuses.contains(&keyword)
            && let Some(value) = shaped.remove(keyword)
        {
            notes.push(format!("{what}: {}.", compact(&value)));
        }
    }
    shaped.insert("type".into(), json!("object"));
    if !shaped.get("properties").is_some_and(Value::is_object) {
        shaped.insert("properties".into(), json!({}));
    }
    shaped
}

/// `schema` with its top-level `allOf` merged and `oneOf` / `anyOf` folded, recursively
/// for members that have their own.
fn flatten(schema: &Map<String, Value>, notes: &mut Vec<String>) -> Map<String, Value> {
    let mut base: Map<String, Value> = schema
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "allOf" | "oneOf" | "anyOf"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if let Some(Value::Array(members)) = schema.get("allOf") {
        for member in members {
            match member.as_object().filter(|m| may_be_object(m)) {
                Some(member) => {
                    let member = flatten(member, notes);
                    merge(&mut base, member);
                }
                None => notes.push(
                    "(A part of this tool's schema that is not an object schema is not shown.)"
                        .to_owned(),
                ),
            }
        }
    }
    let alternatives: Vec<&Value> = ["oneOf", "anyOf"]
        .iter()
        .filter_map(|k| schema.get(*k).and_then(Value::as_array))
        .flatten()
        .collect();
    if !alternatives.is_empty() {
        fold(&mut base, &alternatives, notes);
    }
    base
}

/// Merges an `allOf` member into `base`.
fn merge(base: &mut Map<String, Value>, member: Map<String, Value>) {
    for (key, value) in member {
        match key.as_str() {
            "properties" => {
                if let Value::Object(properties) = value {
                    add_properties(base, properties, "allOf");
                }
            }
            "required" => {
                if let Value::Array(names) = value {
                    add_required(base, names);
                }
            }
            "description" => {
                if let Value::String(more) = value {
                    match base.get_mut("description") {
                        Some(Value::String(text)) if !text.contains(more.as_str()) => {
                            text.push(' ');
                            text.push_str(&more);
                        }
                        Some(_) => {}
                        None => {
                            base.insert(key, Value::String(more));
                        }
                    }
                }
            }
            "$defs" | "definitions" => add_definitions(base, key, value),
            // The stricter of two answers, so that no member's limit is lost.
            "additionalProperties" if value == json!(false) => {
                base.insert(key, value);
            }
            "type" | "title" | "$schema" | "$id" => {}
            _ => {
                base.entry(key).or_insert(value);
            }
        }
    }
}

/// Adds `property` to `into`; a name already there with another schema takes both, under
/// `combine` (`allOf` for merged members, `anyOf` for alternatives).
fn add_property(into: &mut Map<String, Value>, name: String, property: Value, combine: &str) {
    match into.get_mut(&name) {
        None => {
            into.insert(name, property);
        }
        Some(existing) if *existing == property => {}
        Some(existing) => {
            let only_combined = existing.as_object().is_some_and(|m| m.len() == 1);
            if only_combined && let Some(Value::Array(list)) = existing.get_mut(combine) {
                if !list.contains(&property) {
                    list.push(property);
                }
                return;
            }
            let previous = existing.take();
            *existing = json!({ combine: [previous, property] });
        }
    }
}

/// Folds `oneOf` / `anyOf` alternatives into `base`: their properties become optional,
/// what all of them require stays required, and a note names the alternatives.
fn fold(base: &mut Map<String, Value>, alternatives: &[&Value], notes: &mut Vec<String>) {
    let mut forms = Vec::new();
    let mut common: Option<Vec<Value>> = None;
    let mut left_out = 0;
    for alternative in alternatives {
        let Some(alternative) = alternative.as_object().filter(|a| may_be_object(a)) else {
            left_out += 1;
            continue;
        };
        let alternative = flatten(alternative, notes);
        let required: Vec<Value> = alternative
            .get("required")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let properties = alternative
            .get("properties")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        forms.push(form(&alternative, &required, &properties));
        common = Some(match common {
            None => required.clone(),
            Some(so_far) => so_far
                .into_iter()
                .filter(|r| required.contains(r))
                .collect(),
        });
        add_properties(base, properties, "anyOf");
        for (key, value) in alternative {
            if matches!(key.as_str(), "$defs" | "definitions") {
                add_definitions(base, key, value);
            }
        }
    }
    if let Some(common) = common {
        add_required(base, common);
        if base
            .get("required")
            .and_then(Value::as_array)
            .is_some_and(Vec::is_empty)
        {
            base.remove("required");
        }
    }
    // Each alternative may have allowed only its own properties; together they allow all.
    if base.get("additionalProperties") == Some(&json!(false)) && forms.len() > 1 {
        base.remove("additionalProperties");
    }
    notes.extend(forms_note(&forms, left_out));
}

/// The lines that name the alternatives of a folded schema, and how many were left out.
fn forms_note(forms: &[String], left_out: usize) -> Vec<String> {
    let mut notes = Vec::new();
    if !forms.is_empty() {
        let listed: Vec<String> = forms
            .iter()
            .enumerate()
            .map(|(i, f)| format!("({}) {f}", i + 1))
            .collect();
        notes.push(format!(
            "The arguments take one of these forms: {}.",
            listed.join("; ")
        ));
    }
    if left_out > 0 {
        notes.push(format!(
            "({left_out} other form{} of arguments, not an object, {} not shown.)",
            if left_out == 1 { "" } else { "s" },
            if left_out == 1 { "is" } else { "are" }
        ));
    }
    notes
}

/// Adds `properties` to `base`'s, a name already there with another schema taking both
/// under `combine` ([`add_property`]).
fn add_properties(base: &mut Map<String, Value>, properties: Map<String, Value>, combine: &str) {
    let slot = base.entry("properties").or_insert_with(|| json!({}));
    if !slot.is_object() {
        *slot = json!({});
    }
    if let Value::Object(into) = slot {
        for (name, property) in properties {
            add_property(into, name, property, combine);
        }
    }
}

/// Adds the names in `required` to `base`'s `required` list, each once.
fn add_required(base: &mut Map<String, Value>, required: Vec<Value>) {
    let slot = base.entry("required").or_insert_with(|| json!([]));
    if let Value::Array(into) = slot {
        for name in required {
            if !into.contains(&name) {
                into.push(name);
            }
        }
    }
}

/// Adds the schemas of a `$defs` (or `definitions`) map to `base`'s under `key`, a name
/// already there keeping its own.
fn add_definitions(base: &mut Map<String, Value>, key: String, more: Value) {
    let slot = base.entry(key).or_insert_with(|| json!({}));
    if let (Value::Object(into), Value::Object(more)) = (slot, more) {
        for (name, def) in more {
            into.entry(name).or_insert(def);
        }
    }
}

/// One alternative in a few words: what it requires, else what it has, else its title.
fn form(
    alternative: &Map<String, Value>,
    required: &[Value],
    properties: &Map<String, Value>,
) -> String {
    let names = |list: Vec<&str>| {
        list.iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let title = alternative
        .get("title")
        .or_else(|| alternative.get("description"))
        .and_then(Value::as_str);
    let required: Vec<&str> = required.iter().filter_map(Value::as_str).collect();
    let shape = if !required.is_empty() {
        names(required)
    } else if !properties.is_empty() {
        format!(
            "any of {}",
            names(properties.keys().map(String::as_str).collect())
        )
    } else {
        "no arguments".to_owned()
    };
    match title {
        Some(title) if !title.trim().is_empty() => {
            let title: String = title.chars().take(80).collect();
            format!("{shape} ({})", title.trim())
        }
        _ => shape,
    }
}

/// `value` as compact JSON, cut at [`QUOTED_SCHEMA_CHARS`] characters.
fn compact(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= QUOTED_SCHEMA_CHARS {
        return text;
    }
    let cut: String = text.chars().take(QUOTED_SCHEMA_CHARS).collect();
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::definition::WireApi;

    fn shaped(api: WireApi, schema: Value) -> (String, Value) {
        let s = shape(api.rules(), "Does things.", &schema);
        (s.description.into_owned(), s.schema.into_owned())
    }

    #[test]
    fn an_acceptable_schema_is_borrowed() {
        let schema =
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "enum": [{}]});
        let s = shape(WireApi::AnthropicMessages.rules(), "d", &schema);
        assert!(
            matches!(s.schema, Cow::Borrowed(_)),
            "Messages takes a top-level enum"
        );
        let s = shape(WireApi::Responses.rules(), "d", &schema);
        assert!(matches!(s.schema, Cow::Owned(_)), "Responses does not");
    }

    #[test]
    fn all_of_is_merged() {
        let (description, schema) = shaped(
            WireApi::AnthropicMessages,
            json!({"allOf": [
                {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
                {"type": "object", "properties": {"path": {"minLength": 1}, "depth": {"type": "integer"}},
                 "required": ["depth"], "additionalProperties": false}
            ]}),
        );
        assert_eq!(description, "Does things.");
        assert_eq!(
            schema,
            json!({"properties": {
                        "path": {"allOf": [{"type": "string"}, {"minLength": 1}]},
                        "depth": {"type": "integer"}},
                   "required": ["path", "depth"], "additionalProperties": false,
                   "type": "object"})
        );
    }

    #[test]
    fn one_of_is_folded_into_optional_properties_and_a_line() {
        let (description, schema) = shaped(
            WireApi::Responses,
            json!({"type": "object",
            "properties": {"verbose": {"type": "boolean"}},
            "oneOf": [
                {"properties": {"id": {"type": "string"}, "kind": {"const": "a"}}, "required": ["id", "kind"]},
                {"properties": {"url": {"type": "string"}, "kind": {"const": "b"}}, "required": ["url", "kind"],
                 "title": "By URL"},
                {"type": "string"}
            ]}),
        );
        assert_eq!(
            schema,
            json!({"type": "object",
                   "properties": {"verbose": {"type": "boolean"}, "id": {"type": "string"},
                                  "kind": {"anyOf": [{"const": "a"}, {"const": "b"}]},
                                  "url": {"type": "string"}},
                   "required": ["kind"]})
        );
        assert_eq!(
            description,
            "Does things.\n\nThe arguments take one of these forms: (1) `id`, `kind`; (2) `url`, \
             `kind` (By URL). (1 other form of arguments, not an object, is not shown.)"
        );
    }

    #[test]
    fn responses_loses_a_top_level_enum_and_not_with_a_line() {
        let (description, schema) = shaped(
            WireApi::Responses,
            json!({"type": "object", "properties": {}, "not": {"required": ["x"]}}),
        );
        assert_eq!(schema, json!({"type": "object", "properties": {}}));
        assert!(description.ends_with("The arguments must not match: {\"required\":[\"x\"]}."));
    }

    #[test]
    fn non_object_schemas_describe_no_arguments() {
        for schema in [json!({"type": "string"}), json!(true), json!([1])] {
            let (description, shaped) = shaped(WireApi::AnthropicMessages, schema);
            assert_eq!(shaped, json!({"type": "object", "properties": {}}));
            assert_eq!(description, "Does things.");
        }
        let (_, shaped) = shaped(
            WireApi::Responses,
            json!({"type": ["object", "null"], "properties": {"a": {}}}),
        );
        assert_eq!(shaped, json!({"type": "object", "properties": {"a": {}}}));
    }

    #[test]
    fn the_added_lines_are_bounded() {
        let alternatives: Vec<Value> = (0..500)
            .map(|i| json!({"properties": {format!("p{i}"): {}}, "required": [format!("p{i}")]}))
            .collect();
        let (description, schema) =
            shaped(WireApi::AnthropicMessages, json!({"anyOf": alternatives}));
        assert!(description.chars().count() <= "Does things.\n\n".len() + NOTE_CHARS + 1);
        assert!(description.ends_with('…'));
        assert_eq!(schema["properties"].as_object().unwrap().len(), 500);
        assert!(
            schema.get("required").is_none(),
            "no property is required by all"
        );
    }

    #[test]
    fn nested_combinators_are_flattened_at_the_top_only() {
        let (_, schema) = shaped(
            WireApi::AnthropicMessages,
            json!({"anyOf": [{"allOf": [{"properties": {"a": {"oneOf": [{"type": "string"}, {"type": "integer"}]}}}]}]}),
        );
        assert_eq!(
            schema,
            json!({"properties": {"a": {"oneOf": [{"type": "string"}, {"type": "integer"}]}}, "type": "object"})
        );
    }
}
