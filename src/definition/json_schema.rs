//! JSON Schema through the `jsonschema` crate: a schema compiled once ([`CompiledSchema`]: an
//! agent's `output_schema` when the catalog loads, a child tool's `inputSchema` once per
//! run), and what a value gets wrong, as JSON pointers and messages ([`Violation`]), for the
//! model to fix (SPEC §6 steps 3–4).

use std::fmt;
use std::sync::Arc;

use jsonschema::error::ValidationErrorKind;
use serde_json::Value;

use crate::limits::SCHEMA_VIOLATIONS_SHOWN;

/// A schema and its compiled validator. Two are equal when their schemas are.
#[derive(Clone)]
pub struct CompiledSchema {
    json: Arc<Value>,
    validator: Arc<jsonschema::Validator>,
}

/// Why a schema does not compile: where in the schema (a JSON pointer, empty for the whole
/// schema) and what is wrong there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaError {
    pub pointer: String,
    pub message: String,
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.pointer.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "at `{}`: {}", self.pointer, self.message)
        }
    }
}

/// Where in `schema` the first `$ref` is whose target `message` names (`/properties/a/$ref`
/// for `#/$defs/nope`, which the message gives as `/$defs/nope`).
fn ref_named_in(schema: &Value, message: &str) -> Option<String> {
    fn walk(value: &Value, at: &mut String, message: &str) -> Option<String> {
        match value {
            Value::Object(map) => {
                if let Some(Value::String(target)) = map.get("$ref") {
                    let target = target.trim_start_matches('#');
                    if !target.is_empty() && message.contains(target) {
                        return Some(format!("{at}/$ref"));
                    }
                }
                for (key, child) in map {
                    let len = at.len();
                    at.push('/');
                    at.push_str(&key.replace('~', "~0").replace('/', "~1"));
                    let found = walk(child, at, message);
                    at.truncate(len);
                    if found.is_some() {
                        return found;
                    }
                }
                None
            }
            Value::Array(items) => items.iter().enumerate().find_map(|(i, child)| {
                let mut at = format!("{at}/{i}");
                walk(child, &mut at, message)
            }),
            _ => None,
        }
    }
    walk(schema, &mut String::new(), message)
}

/// One thing a value gets wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// Where in the value, as a JSON pointer (`/query`, `/items/0/id`; empty for the value
    /// itself). A missing property is named by the pointer it would have.
    pub pointer: String,
    /// What is wrong, quoting the offending value (for the model, whose value it is).
    pub message: String,
    /// The same without the value (for error messages, which never quote model text).
    pub masked: String,
}

/// A schema error's message is quoted up to this many characters: it can quote a whole
/// subschema.
const SCHEMA_MESSAGE_CHARS: usize = 300;

impl CompiledSchema {
    /// Compiles `schema` (its `$schema` picks the draft; 2020-12 without one). References
    /// outside the schema are not fetched, so a schema that needs them does not compile.
    pub fn compile(schema: &Value) -> Result<Self, SchemaError> {
        match jsonschema::validator_for(schema) {
            Ok(validator) => Ok(CompiledSchema {
                json: Arc::new(schema.clone()),
                validator: Arc::new(validator),
            }),
            Err(e) => {
                let mut message = e.to_string();
                let mut pointer = e.instance_path().to_string();
                if matches!(e.kind(), ValidationErrorKind::Referencing(_)) {
                    // The crate names the reference's target, not where the `$ref` is.
                    if let Some(at) = ref_named_in(schema, &message) {
                        pointer = at;
                    }
                    // The crate's own advice names its build features; ours names the fix.
                    if let Some(cut) = message.find(" and retrieving it failed") {
                        message.truncate(cut);
                    }
                    message.push_str(
                        "; references outside the schema are not fetched: keep the schema \
                         whole, with `$defs` and `#/$defs/…` references",
                    );
                }
                Err(SchemaError {
                    pointer,
                    message: message.chars().take(SCHEMA_MESSAGE_CHARS).collect(),
                })
            }
        }
    }

    /// The schema as written.
    pub fn json(&self) -> &Value {
        &self.json
    }

    /// Everything `value` gets wrong; empty when it is valid.
    pub fn violations(&self, value: &Value) -> Vec<Violation> {
        self.validator
            .iter_errors(value)
            .map(|e| {
                let at = e.instance_path().to_string();
                match e.kind() {
                    ValidationErrorKind::Required { property } => {
                        let name = property.as_str().map_or_else(
                            || property.to_string(),
                            |s| s.replace('~', "~0").replace('/', "~1"),
                        );
                        Violation {
                            pointer: format!("{at}/{name}"),
                            message: "required".to_owned(),
                            masked: "required".to_owned(),
                        }
                    }
                    _ => Violation {
                        pointer: at,
                        message: e.to_string(),
                        masked: e.masked().to_string(),
                    },
                }
            })
            .collect()
    }
}

/// The violations as lines for the model: "`/query`: required", at most
/// [`SCHEMA_VIOLATIONS_SHOWN`] of them, then how many more there are.
pub fn describe_violations(violations: &[Violation]) -> String {
    describe(violations, |v| &v.message)
}

/// [`describe_violations`] without the offending values, for error messages.
pub fn describe_violations_masked(violations: &[Violation]) -> String {
    describe(violations, |v| &v.masked)
}

fn describe(violations: &[Violation], text: impl Fn(&Violation) -> &str) -> String {
    let mut lines: Vec<String> = violations
        .iter()
        .take(SCHEMA_VIOLATIONS_SHOWN)
        .map(|v| {
            let at = if v.pointer.is_empty() {
                "(the value itself)"
            } else {
                v.pointer.as_str()
            };
            format!("`{at}`: {}", text(v))
        })
        .collect();
    if violations.len() > SCHEMA_VIOLATIONS_SHOWN {
        lines.push(format!(
            "and {} more",
            violations.len() - SCHEMA_VIOLATIONS_SHOWN
        ));
    }
    lines.join("; ")
}

impl PartialEq for CompiledSchema {
    fn eq(&self, other: &Self) -> bool {
        self.json == other.json
    }
}

impl fmt::Debug for CompiledSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("CompiledSchema").field(&self.json).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_reference_that_does_not_resolve_is_named_where_it_is() {
        let schema = json!({"type": "object", "properties": {
            "a": {"type": "string"}, "b": {"$ref": "#/$defs/nope"}}});
        let Err(e) = CompiledSchema::compile(&schema) else {
            panic!("compiled a reference to nothing")
        };
        assert_eq!(e.pointer, "/properties/b/$ref", "{e}");
        let remote =
            json!({"prefixItems": [{"type": "string"}, {"$ref": "https://x.example/s.json"}]});
        let Err(e) = CompiledSchema::compile(&remote) else {
            panic!("fetched a remote reference")
        };
        assert_eq!(e.pointer, "/prefixItems/1/$ref", "{e}");
    }

    #[test]
    fn violations_name_the_pointer_and_missing_properties_by_their_own() {
        let schema = CompiledSchema::compile(&json!({
            "type": "object",
            "properties": {"query": {"type": "string"}, "n": {"type": "integer", "minimum": 1}},
            "required": ["query"]
        }))
        .unwrap();
        assert!(schema.violations(&json!({"query": "x", "n": 2})).is_empty());
        let found = schema.violations(&json!({"n": 0}));
        assert_eq!(found.len(), 2, "{found:?}");
        let described = describe_violations(&found);
        assert!(described.contains("`/query`: required"), "{described}");
        assert!(described.contains("`/n`: 0 is less than"), "{described}");
        let masked = describe_violations_masked(&schema.violations(&json!({"query": 42})));
        assert!(masked.starts_with("`/query`: "), "{masked}");
        assert!(
            !masked.contains("42"),
            "masked messages quote no value: {masked}"
        );
        let root = describe_violations(&schema.violations(&json!([1])));
        assert!(root.starts_with("`(the value itself)`"), "{root}");
    }

    #[test]
    fn a_schema_that_does_not_compile_says_where() {
        let e = CompiledSchema::compile(&json!({
            "type": "object", "properties": {"age": {"type": "integr"}}
        }))
        .unwrap_err();
        assert_eq!(e.pointer, "/properties/age/type");
        assert!(
            e.to_string().starts_with("at `/properties/age/type`: "),
            "{e}"
        );
        let remote = CompiledSchema::compile(&json!({"$ref": "https://example.com/s.json"}))
            .unwrap_err()
            .to_string();
        assert!(remote.contains("https://example.com/s.json"), "{remote}");
        assert!(remote.contains("are not fetched"), "{remote}");
        assert!(!remote.contains("feature"), "{remote}");
    }

    #[test]
    fn only_the_first_violations_are_listed() {
        let schema =
            CompiledSchema::compile(&json!({"type": "array", "items": {"type": "string"}}))
                .unwrap();
        let found = schema.violations(&json!((0..15).collect::<Vec<_>>()));
        let described = describe_violations(&found);
        assert!(described.ends_with("; and 5 more"), "{described}");
    }
}
