//! A final answer against the agent's `output_schema` (SPEC §6 step 4): what the model is
//! told about the schema, how an answer is read as JSON (the whole text, or one fenced
//! `json` code block), the repair turn's message, and the `invalid_output` error.

use serde_json::Value;

use crate::definition::CompiledSchema;
use crate::definition::{describe_violations, describe_violations_masked};
use crate::error::{AgentError, ErrorCode};

/// What the system context says about the answer's shape, after the instructions.
pub fn schema_instructions(schema: &CompiledSchema) -> String {
    // Pretty-printed: models read it more reliably; deterministic, so the prefix of every
    // request stays the same for prompt caching.
    let pretty = serde_json::to_string_pretty(schema.json()).unwrap_or_default();
    format!(
        "## Final answer format\n\nYour final answer (the reply in which you call no tool) must \
         be a single JSON value that satisfies this JSON Schema, and nothing else: no prose \
         before or after it.\n\n```json\n{pretty}\n```"
    )
}

/// How an answer measured up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Checked {
    Valid(Value),
    Invalid {
        /// For the model's repair turn: the errors, quoting its values.
        for_model: String,
        /// For the error message: the same without the values.
        masked: String,
    },
}

/// Parses `text` as JSON (or as one fenced `json` code block) and validates it.
pub(super) fn check(schema: &CompiledSchema, text: &str) -> Checked {
    let value = match parse(text) {
        Ok(value) => value,
        Err(why) => {
            return Checked::Invalid {
                for_model: why.clone(),
                masked: why,
            };
        }
    };
    let violations = schema.violations(&value);
    if violations.is_empty() {
        return Checked::Valid(value);
    }
    Checked::Invalid {
        for_model: format!(
            "it does not satisfy the schema: {}",
            describe_violations(&violations)
        ),
        masked: format!(
            "it does not satisfy the schema: {}",
            describe_violations_masked(&violations)
        ),
    }
}

/// The JSON of an answer: the whole text, or the inside of the one fenced `json` block the
/// whole text is.
fn parse(text: &str) -> Result<Value, String> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err("it is empty".to_owned());
    }
    let json = fenced_json(trimmed).unwrap_or(trimmed);
    serde_json::from_str(json).map_err(|e| {
        format!(
            "it is not valid JSON (line {}, column {}: {e})",
            e.line(),
            e.column()
        )
    })
}

fn fenced_json(text: &str) -> Option<&str> {
    let inner = text.strip_prefix("```json")?.strip_suffix("```")?;
    let inner = inner
        .strip_prefix('\n')
        .or_else(|| inner.strip_prefix("\r\n"))?;
    (!inner.contains("```")).then_some(inner)
}

/// The user turn that gives the model its one more try.
pub(super) fn repair_request(for_model: &str) -> String {
    format!(
        "Your final answer does not match the required output format: {for_model}. Reply again \
         with only a JSON value that satisfies the JSON Schema given in your instructions."
    )
}

/// The run's failure after the repair turn failed too.
pub(super) fn invalid_output(masked: &str) -> AgentError {
    AgentError::new(
        ErrorCode::InvalidOutput,
        format!(
            "the agent's final answer did not satisfy its output_schema, even after one more \
             turn with the validation errors: {masked}. The answer is in partial_result; \
             send_input can ask the agent to fix it, or adjust the schema or the instructions"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> CompiledSchema {
        CompiledSchema::compile(&json!({
            "type": "object",
            "properties": {"verdict": {"enum": ["ok", "bad"]}},
            "required": ["verdict"]
        }))
        .unwrap()
    }

    #[test]
    fn answers_are_read_as_json_or_one_fenced_block() {
        let valid = Checked::Valid(json!({"verdict": "ok"}));
        assert_eq!(check(&schema(), r#" {"verdict": "ok"} "#), valid);
        assert_eq!(
            check(&schema(), "```json\n{\"verdict\": \"ok\"}\n```"),
            valid
        );
        for text in [
            "",
            "The verdict is ok.",
            "Here: ```json\n{\"verdict\": \"ok\"}\n```",
            "```json\n{}\n```\n```json\n{}\n```",
        ] {
            assert!(
                matches!(check(&schema(), text), Checked::Invalid { .. }),
                "{text:?}"
            );
        }
    }

    #[test]
    fn violations_go_to_the_model_with_values_and_to_the_parent_without() {
        let Checked::Invalid { for_model, masked } = check(&schema(), r#"{"verdict": "maybe"}"#)
        else {
            panic!("invalid")
        };
        assert!(for_model.contains("`/verdict`"), "{for_model}");
        assert!(for_model.contains("maybe"), "{for_model}");
        assert!(!masked.contains("maybe"), "{masked}");
        let Checked::Invalid { for_model, .. } = check(&schema(), "{}") else {
            panic!("invalid")
        };
        assert!(for_model.contains("`/verdict`: required"), "{for_model}");
        assert!(invalid_output(&masked).message.contains("partial_result"));
    }
}
