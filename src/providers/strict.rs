//! Whether a JSON Schema fits the Responses API's strict structured outputs, so that an
//! agent's `output_schema` can be sent as `text.format` (SPEC §6 step 4). The rules are
//! those of OpenAI's structured outputs guide: the root is an object; every object lists
//! each of its properties in `required` and sets `additionalProperties: false`; only the
//! keywords below appear; nesting, property count and enum size stay within bounds. A
//! schema that does not fit is still given to the model in the instructions and validated
//! on the answer; only the API-side constraint is left out.

use serde_json::{Map, Value};

use crate::limits::{STRICT_SCHEMA_DEPTH, STRICT_SCHEMA_ENUM_VALUES, STRICT_SCHEMA_PROPERTIES};

/// Keywords strict mode accepts in any subschema.
const KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "$ref",
    "$defs",
    "definitions",
    "description",
    "title",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
];

/// The `format` values strict mode knows.
const FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// Whether `schema` can be sent as a strict `json_schema` text format.
pub(super) fn fits_strict_subset(schema: &Value) -> bool {
    let Value::Object(root) = schema else {
        return false;
    };
    // The root must be an object schema itself, not a union or a reference.
    if root.get("type") != Some(&Value::String("object".into())) || root.contains_key("anyOf") {
        return false;
    }
    let mut budget = Budget {
        properties: 0,
        enum_values: 0,
    };
    fits(root, 1, &mut budget)
}

struct Budget {
    properties: usize,
    enum_values: usize,
}

/// Whether `schema`, nested `depth` objects deep (the root is 1), fits.
fn fits(schema: &Map<String, Value>, depth: usize, budget: &mut Budget) -> bool {
    let known = |k: &String| KEYWORDS.contains(&k.as_str()) || (depth == 1 && k == "$schema");
    if !schema.keys().all(known) {
        return false;
    }
    if let Some(format) = schema.get("format")
        && !format.as_str().is_some_and(|f| FORMATS.contains(&f))
    {
        return false;
    }
    if let Some(values) = schema.get("enum") {
        let Some(values) = values.as_array() else {
            return false;
        };
        budget.enum_values += values.len();
        if budget.enum_values > STRICT_SCHEMA_ENUM_VALUES {
            return false;
        }
    }
    if let Some(reference) = schema.get("$ref")
        && !reference.as_str().is_some_and(|r| r.starts_with("#/"))
    {
        return false;
    }
    let is_object = match schema.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(types)) => types.iter().any(|t| t == "object"),
        _ => schema.contains_key("properties"),
    };
    if is_object && (depth > STRICT_SCHEMA_DEPTH || !object_fits(schema, budget)) {
        return false;
    }
    // Only objects nest deeper; an array's items or a union's members are at the same level.
    let inner = depth + usize::from(is_object);
    let sub = |value: &Value, budget: &mut Budget| match value {
        Value::Object(map) => fits(map, inner, budget),
        _ => false,
    };
    if let Some(properties) = schema.get("properties") {
        let Some(properties) = properties.as_object() else {
            return false;
        };
        if !properties.values().all(|p| sub(p, budget)) {
            return false;
        }
    }
    if let Some(items) = schema.get("items")
        && !sub(items, budget)
    {
        return false;
    }
    if let Some(any_of) = schema.get("anyOf") {
        let Some(any_of) = any_of.as_array() else {
            return false;
        };
        if !any_of.iter().all(|s| sub(s, budget)) {
            return false;
        }
    }
    for defs in ["$defs", "definitions"] {
        if let Some(defs) = schema.get(defs) {
            let Some(defs) = defs.as_object() else {
                return false;
            };
            if !defs.values().all(|d| sub(d, budget)) {
                return false;
            }
        }
    }
    true
}

/// Every property required, nothing else allowed.
fn object_fits(schema: &Map<String, Value>, budget: &mut Budget) -> bool {
    if schema.get("additionalProperties") != Some(&Value::Bool(false)) {
        return false;
    }
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().collect::<Vec<_>>())
        .unwrap_or_default();
    budget.properties += properties.len();
    if budget.properties > STRICT_SCHEMA_PROPERTIES {
        return false;
    }
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    properties.iter().all(|p| required.contains(&p.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strict_schemas_fit_and_loose_ones_do_not() {
        let strict = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "verdict": {"type": "string", "enum": ["ok", "bad"]},
                "findings": {"type": "array", "items": {
                    "type": "object",
                    "properties": {"line": {"type": "integer"}, "note": {"type": ["string", "null"]}},
                    "required": ["line", "note"], "additionalProperties": false}}
            },
            "required": ["verdict", "findings"],
            "additionalProperties": false
        });
        assert!(fits_strict_subset(&strict));
        let cases = [
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}),
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false}),
            json!({"type": "array", "items": {"type": "string"}}),
            json!({"type": "object", "properties": {"a": {"type": "string", "minLength": 1}},
                   "required": ["a"], "additionalProperties": false}),
            json!({"type": "object", "properties": {"a": {"allOf": [{"type": "string"}]}},
                   "required": ["a"], "additionalProperties": false}),
            json!({"type": "object", "properties": {"a": {"$ref": "https://x/y.json"}},
                   "required": ["a"], "additionalProperties": false}),
            json!({"anyOf": [{"type": "object"}]}),
        ];
        for case in cases {
            assert!(!fits_strict_subset(&case), "{case}");
        }
    }

    #[test]
    fn nesting_deeper_than_the_bound_does_not_fit() {
        let mut schema = json!({"type": "string"});
        for _ in 0..STRICT_SCHEMA_DEPTH {
            schema = json!({"type": "object", "properties": {"a": schema},
                            "required": ["a"], "additionalProperties": false});
        }
        assert!(fits_strict_subset(&schema), "the bound itself fits");
        let deeper = json!({"type": "object", "properties": {"a": schema},
                            "required": ["a"], "additionalProperties": false});
        assert!(!fits_strict_subset(&deeper));
    }
}
