//! OpenAI Responses (`POST {base_url}/responses`), stateless: `store: false`, the whole
//! history in `input` every time, reasoning carried by `encrypted_content`, the reply
//! streamed. Caching is automatic for a prefix seen before; `prompt_cache_key` (stable per
//! definition and workspace) routes the requests of one agent to where that prefix is.
//!
//! The reply, streamed or whole, is read in `responses_reply`.

use reqwest::header::HeaderMap;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::classify::AttemptError;
use super::credentials::{ApiKey, json_headers};
use super::history::FlatItems;
use super::reply::{Reply, ToolOutput};
use super::responses_reply::{ResponsesStream, parse_response};
use super::tool_schema;
use super::unsupported::OptionalParam;
use super::wire::{ReplyStream, Request, ToolList, WireFormat, raw_item};
use crate::definition::{AuthHeader, WireRules};
use crate::redact::Secrets;
use crate::toolbox::ToolSpec;

/// The Responses wire format.
pub(super) struct Responses;

impl WireFormat for Responses {
    fn path(&self) -> &'static str {
        "/responses"
    }

    fn headers(&self, key: &ApiKey, auth: AuthHeader) -> HeaderMap {
        json_headers(key, auth)
    }

    fn encode(&self, request: &Request<'_>) -> serde_json::Result<Vec<u8>> {
        let settings = request.settings;
        let tools = request.tools.encoded();
        let body = Body {
            model: &settings.model,
            instructions: request.system,
            input: request.history.as_items(),
            store: false,
            stream: true,
            include: request
                .sends(OptionalParam::EncryptedReasoning)
                .then_some(["reasoning.encrypted_content"]),
            max_output_tokens: request.max_output_tokens,
            tools,
            tool_choice: tools.is_some().then_some("auto"),
            parallel_tool_calls: tools.is_some().then_some(true),
            reasoning: request.effort().map(|e| Effort { effort: e.as_str() }),
            temperature: settings
                .temperature
                .filter(|_| request.sends(OptionalParam::Temperature)),
            text: settings
                .strict_output_schema
                .as_deref()
                .map(|schema| TextConfig {
                    format: TextFormat {
                        kind: "json_schema",
                        name: OUTPUT_FORMAT_NAME,
                        schema,
                        strict: true,
                    },
                }),
            prompt_cache_key: request.prompt_cache_key,
        };
        serde_json::to_vec(&body)
    }

    fn encode_tools(&self, tools: &[ToolSpec]) -> serde_json::Result<ToolList> {
        ToolList::new(tools, &WireRules::RESPONSES, |sorted| {
            let shaped = tool_schema::shape_each(&WireRules::RESPONSES, sorted);
            let tools: Vec<FunctionTool<'_>> = shaped
                .iter()
                .map(|(t, s)| FunctionTool {
                    kind: "function",
                    name: &t.name,
                    description: &s.description,
                    parameters: &s.schema,
                    // MCP schemas rarely meet strict mode's rules (every property
                    // required, no additional properties); the child validates arguments.
                    strict: false,
                })
                .collect();
            serde_json::value::to_raw_value(&tools)
        })
    }

    fn may_send(&self, param: OptionalParam) -> bool {
        matches!(
            param,
            OptionalParam::Temperature | OptionalParam::EncryptedReasoning | OptionalParam::Effort
        )
    }

    fn stream(&self, provider: &str, secrets: &Secrets) -> Box<dyn ReplyStream> {
        Box::new(ResponsesStream::new(provider, secrets))
    }

    fn parse(
        &self,
        _provider: &str,
        secrets: &Secrets,
        body: Value,
    ) -> Result<Reply, AttemptError> {
        parse_response(body, secrets)
    }

    /// User input as a `message` item.
    fn user_text(&self, text: &str) -> Box<RawValue> {
        raw_item(&json!({
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": text}],
        }))
    }

    /// A `function_call_output`. The API has no error flag, so a failure says so in its
    /// text. Text alone is a string; with images, a list of `input_text` and `input_image`
    /// parts (the images as data URLs).
    fn tool_output(&self, output: &ToolOutput) -> Box<RawValue> {
        let text = if output.is_error {
            format!("Error: {}", output.text_for_model())
        } else {
            output.content.clone()
        };
        let content = if output.images.is_empty() {
            Value::String(text)
        } else {
            let mut parts = Vec::with_capacity(output.images.len() + 1);
            if !text.is_empty() {
                parts.push(json!({"type": "input_text", "text": text}));
            }
            for image in &output.images {
                parts.push(json!({
                    "type": "input_image",
                    "image_url": format!("data:{};base64,{}", image.media_type, image.data),
                }));
            }
            Value::Array(parts)
        };
        raw_item(&json!({
            "type": "function_call_output",
            "call_id": output.call_id,
            "output": content,
        }))
    }
}

/// The request body, in the order the fields have always been sent (a stable prefix).
#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    instructions: &'a str,
    input: FlatItems<'a>,
    store: bool,
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    include: Option<[&'static str; 1]>,
    max_output_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<&'a RawValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    parallel_tool_calls: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning: Option<Effort>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<TextConfig<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_cache_key: Option<&'a str>,
}

/// The name the output schema is sent under (`^[a-zA-Z0-9_-]{1,64}$`).
const OUTPUT_FORMAT_NAME: &str = "final_answer";

/// `text: {format: {type: "json_schema", name, schema, strict: true}}`: the agent's
/// `output_schema`, when it fits strict mode (SPEC §6 step 4).
#[derive(Serialize)]
struct TextConfig<'a> {
    format: TextFormat<'a>,
}

#[derive(Serialize)]
struct TextFormat<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    name: &'static str,
    schema: &'a Value,
    strict: bool,
}

#[derive(Serialize)]
struct FunctionTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
    strict: bool,
}

#[derive(Serialize)]
struct Effort {
    effort: &'static str,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_output_schema_goes_out_as_a_strict_text_format() {
        use super::super::history::History;
        use super::super::reply::ModelSettings;
        let schema = json!({"type": "object", "properties": {"a": {"type": "string"}},
                            "required": ["a"], "additionalProperties": false});
        let settings = |strict: Option<Value>| ModelSettings {
            model: "m".into(),
            temperature: None,
            reasoning_effort: None,
            strict_output_schema: strict.map(std::sync::Arc::new),
            output_limit_as_max_tokens: false,
        };
        use super::super::unsupported::Learned;
        let body = |settings: &ModelSettings| -> Value {
            let history = History::default();
            let request = Request {
                settings,
                system: "s",
                history: &history,
                tools: &ToolList::default(),
                max_output_tokens: 100,
                learned: &Learned::default(),
                prompt_cache_key: None,
            };
            serde_json::from_slice(&Responses.encode(&request).unwrap()).unwrap()
        };
        assert_eq!(
            body(&settings(Some(schema.clone())))["text"],
            json!({"format": {"type": "json_schema", "name": "final_answer", "schema": schema,
                              "strict": true}})
        );
        assert!(body(&settings(None)).get("text").is_none());
    }
}
