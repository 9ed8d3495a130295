//! OpenAI Chat Completions (`POST {base_url}/chat/completions`, SPEC §6.2), streamed: the API
//! of Gemini's and DeepSeek's OpenAI-compatible endpoints, NVIDIA NIM, and every local engine
//! (llama.cpp's server, vLLM, LM Studio, Ollama).
//!
//! A request is `model`, `messages` (the system text first, then the history as stored),
//! `stream: true` with `stream_options: {include_usage: true}` (so the last chunk carries the
//! usage), the output limit as `max_completion_tokens`, the tools as `{type: "function",
//! function: {name, description, parameters}}` (schemas reshaped as for Responses: one
//! backend validates both), and only what the definition asks for besides:
//! `reasoning_effort`, `temperature`. `prompt_cache_key` goes to OpenAI's own endpoint only
//! (the client decides). Nothing else is sent: Gemini's endpoint refuses any field it does
//! not know, and others ignore what they do not know, so a field sent "just in case" either
//! fails the request or does nothing.
//!
//! A server that refuses `max_completion_tokens` (older vLLM, Azure before 2024-08-01,
//! proxies) gets the limit as `max_tokens` from then on, and DeepSeek's API, which ignores
//! `max_completion_tokens` without a word, gets `max_tokens` from the start; one that
//! refuses `stream_options` gets the request without it (`unsupported`).
//!
//! The history is the messages exchanged: a user's text as a `user` message, the model's
//! reply as the `assistant` message it streamed (`chat_reply`: its text, its `tool_calls`,
//! and the fields a provider adds that must go back, such as DeepSeek's `reasoning_content`
//! and Gemini's thought signatures), and each tool's result as a `tool` message naming its
//! call by `tool_call_id`, in the order of the calls. Tool messages take text only, so the
//! images a round of calls returned follow its results in one `user` message; an endpoint
//! that refuses image parts (DeepSeek's) gets each as a text note naming it from then on.
//!
//! A server in thinking mode (one that sent `reasoning_content` on any reply of the
//! conversation: DeepSeek, and the engines that speak its way) gets `reasoning_content` on
//! every assistant message, empty where the reply had none. DeepSeek refuses a tool loop's
//! assistant message without it ("The reasoning_content in the thinking mode must be passed
//! back to the API."), even one whose reply did not think, and ignores it where it needs
//! none; the field is added to the request, not to the stored message.

use reqwest::header::HeaderMap;
use serde::Serialize;
use serde::ser::{SerializeSeq, Serializer};
use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::chat_images;
use super::chat_reply::{ChatStream, parse_completion};
use super::classify::AttemptError;
use super::credentials::{ApiKey, json_headers};
use super::history::{Entry, History, Role, with_field};
use super::reply::{Reply, ToolOutput};
use super::tool_schema;
use super::unsupported::OptionalParam;
use super::wire::{ReplyStream, Request, ToolList, WireFormat, raw_item};
use crate::definition::{AuthHeader, WireRules};
use crate::redact::Secrets;
use crate::toolbox::ToolSpec;

/// The Chat Completions wire format.
pub(super) struct Chat;

impl WireFormat for Chat {
    fn path(&self) -> &'static str {
        "/chat/completions"
    }

    fn headers(&self, key: &ApiKey, auth: AuthHeader) -> HeaderMap {
        json_headers(key, auth)
    }

    fn encode(&self, request: &Request<'_>) -> serde_json::Result<Vec<u8>> {
        let settings = request.settings;
        let limit = request.max_output_tokens;
        let completion_tokens = request.sends(OptionalParam::CompletionTokens);
        let body = Body {
            model: &settings.model,
            messages: Messages {
                system: request.system,
                history: request.history,
                images: request.sends(OptionalParam::ImageParts),
                thinking: request.learned.echoes_reasoning(),
            },
            stream: true,
            stream_options: request
                .sends(OptionalParam::StreamUsage)
                .then_some(StreamOptions {
                    include_usage: true,
                }),
            max_completion_tokens: completion_tokens.then_some(limit),
            max_tokens: (!completion_tokens).then_some(limit),
            tools: request.tools.encoded(),
            reasoning_effort: request.effort().map(|e| e.as_str()),
            temperature: settings
                .temperature
                .filter(|_| request.sends(OptionalParam::Temperature)),
            prompt_cache_key: request.prompt_cache_key,
        };
        serde_json::to_vec(&body)
    }

    fn encode_tools(&self, tools: &[ToolSpec]) -> serde_json::Result<ToolList> {
        ToolList::new(tools, &WireRules::CHAT_COMPLETIONS, |sorted| {
            let shaped = tool_schema::shape_each(&WireRules::CHAT_COMPLETIONS, sorted);
            let tools: Vec<Tool<'_>> = shaped
                .iter()
                .map(|(t, s)| Tool {
                    kind: "function",
                    function: Function {
                        name: &t.name,
                        description: &s.description,
                        parameters: &s.schema,
                    },
                })
                .collect();
            serde_json::value::to_raw_value(&tools)
        })
    }

    fn may_send(&self, param: OptionalParam) -> bool {
        matches!(
            param,
            OptionalParam::Temperature
                | OptionalParam::Effort
                | OptionalParam::CompletionTokens
                | OptionalParam::StreamUsage
                | OptionalParam::ImageParts
        )
    }

    fn stream(&self, provider: &str, secrets: &Secrets) -> Box<dyn ReplyStream> {
        Box::new(ChatStream::new(provider, secrets))
    }

    fn parse(&self, provider: &str, secrets: &Secrets, body: Value) -> Result<Reply, AttemptError> {
        parse_completion(provider, secrets, body)
    }

    fn user_text(&self, text: &str) -> Box<RawValue> {
        raw_item(&json!({"role": "user", "content": text}))
    }

    /// A `tool` message. The API has no error flag, so a failure says so in its text, as on
    /// Responses; images are only announced here ([`tool_outputs`](Self::tool_outputs)).
    fn tool_output(&self, output: &ToolOutput) -> Box<RawValue> {
        let mut text = if output.is_error {
            format!("Error: {}", output.text_for_model())
        } else {
            output.content.clone()
        };
        if !output.images.is_empty() {
            let note = format!(
                "[{} image{} from this call follow in the next user message.]",
                output.images.len(),
                if output.images.len() == 1 { "" } else { "s" }
            );
            if !text.is_empty() {
                text.push_str("\n\n");
            }
            text.push_str(&note);
        }
        raw_item(&json!({
            "role": "tool",
            "tool_call_id": output.call_id,
            "content": text,
        }))
    }

    /// One `tool` message per result, then, if any tool returned images, one `user` message
    /// with them as `image_url` parts (data URLs), each call's introduced by a line naming
    /// it: an assistant message with `tool_calls` must be followed by all of their results
    /// before any other message.
    fn tool_outputs(&self, outputs: &[ToolOutput]) -> Vec<Box<RawValue>> {
        let mut items: Vec<Box<RawValue>> = outputs.iter().map(|o| self.tool_output(o)).collect();
        let mut parts = Vec::new();
        for output in outputs.iter().filter(|o| !o.images.is_empty()) {
            parts.push(json!({
                "type": "text",
                "text": format!("The images from tool call {}:", output.call_id),
            }));
            for image in &output.images {
                parts.push(json!({
                    "type": "image_url",
                    "image_url": {"url": format!("data:{};base64,{}", image.media_type, image.data)},
                }));
            }
        }
        if !parts.is_empty() {
            items.push(raw_item(&json!({"role": "user", "content": parts})));
        }
        items
    }
}

/// The request body, its fields always in this order (a stable prefix for the cache).
#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    messages: Messages<'a>,
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<StreamOptions>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_completion_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<&'a RawValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_effort: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_cache_key: Option<&'a str>,
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

#[derive(Serialize)]
struct Tool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: Function<'a>,
}

#[derive(Serialize)]
struct Function<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
}

/// `messages`: the system text as the first message (none when it is empty), then every
/// stored message as its bytes (with its images as text notes once the endpoint refused
/// them, `chat_images`).
struct Messages<'a> {
    system: &'a str,
    history: &'a History,
    /// Whether image parts go as they are.
    images: bool,
    /// Whether the server is known to be in thinking mode though no reply carried
    /// reasoning (a refusal taught it).
    thinking: bool,
}

#[derive(Serialize)]
struct SystemMessage<'a> {
    role: &'static str,
    content: &'a str,
}

impl Serialize for Messages<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let entries = self.history.entries();
        let system = (!self.system.is_empty()).then_some(SystemMessage {
            role: "system",
            content: self.system,
        });
        let mut seq =
            serializer.serialize_seq(Some(entries.len() + usize::from(system.is_some())))?;
        if let Some(system) = &system {
            seq.serialize_element(system)?;
        }
        let thinking_mode = self.thinking || entries.iter().any(reasons);
        for entry in entries {
            if thinking_mode && entry.role == Role::Assistant && !reasons(entry) {
                // Only an object gets the field, and every stored message is one.
                if let Some(item) = with_field(&entry.item, REASONING_CONTENT, "\"\"") {
                    seq.serialize_element(&item)?;
                    continue;
                }
            }
            match (!self.images)
                .then(|| chat_images::text_only(&entry.item))
                .flatten()
            {
                Some(text) => seq.serialize_element(&text)?,
                None => seq.serialize_element(&entry.item)?,
            }
        }
        seq.end()
    }
}

/// DeepSeek's field for a reply's thinking, which its thinking mode needs back on every
/// assistant message of a tool loop.
const REASONING_CONTENT: &str = "reasoning_content";

/// Whether `entry` is an assistant message that carries `reasoning_content`: the server
/// that sent it is in thinking mode. Its bytes are searched for the field's name followed by
/// the colon of a key: inside a JSON string every quote is escaped, so `"reasoning_content":`
/// there is `\"reasoning_content\":`, which does not match.
fn reasons(entry: &Entry) -> bool {
    entry.role == Role::Assistant && entry.item.get().contains("\"reasoning_content\":")
}

#[cfg(test)]
mod tests {
    use super::super::reply::ModelSettings;
    use super::super::unsupported::Learned;
    use super::*;
    use crate::definition::ReasoningEffort;
    use crate::toolbox::ToolImage;

    fn settings() -> ModelSettings {
        ModelSettings {
            model: "m".into(),
            temperature: None,
            reasoning_effort: None,
            strict_output_schema: None,
            output_limit_as_max_tokens: false,
        }
    }

    fn body(
        settings: &ModelSettings,
        history: &History,
        tools: &ToolList,
        learned: &Learned,
    ) -> Value {
        let request = Request {
            settings,
            system: "Be brief.",
            history,
            tools,
            max_output_tokens: 1000,
            learned,
            prompt_cache_key: None,
        };
        serde_json::from_slice(&Chat.encode(&request).unwrap()).unwrap()
    }

    #[test]
    fn a_request_carries_the_system_text_first_and_nothing_unasked() {
        let mut history = History::default();
        history.push(Role::User, Chat.user_text("Hi"));
        let value = body(
            &settings(),
            &history,
            &ToolList::default(),
            &Learned::default(),
        );
        assert_eq!(
            value,
            json!({"model": "m", "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Hi"}],
                "stream": true, "stream_options": {"include_usage": true},
                "max_completion_tokens": 1000})
        );
        let mut asked = settings();
        asked.reasoning_effort = Some(ReasoningEffort::High);
        asked.temperature = Some(0.2);
        let tools = Chat
            .encode_tools(&[ToolSpec {
                name: "t__get".into(),
                description: "Get.".into(),
                input_schema: json!({"oneOf": [{"type": "object", "properties": {"a": {}}}]}),
            }])
            .unwrap();
        let value = body(&asked, &history, &tools, &Learned::default());
        assert_eq!(value["reasoning_effort"], "high");
        assert_eq!(value["temperature"], 0.2);
        assert_eq!(value["tools"][0]["type"], "function");
        assert_eq!(value["tools"][0]["function"]["name"], "t__get");
        assert_eq!(
            value["tools"][0]["function"]["parameters"]["type"], "object",
            "a top-level oneOf is folded, as for Responses"
        );
        assert!(value["tools"][0]["function"].get("strict").is_none());
    }

    #[test]
    fn refused_parameters_are_left_out_or_renamed() {
        let history = History::default();
        let learned = Learned::default();
        learned.insert(OptionalParam::CompletionTokens);
        learned.insert(OptionalParam::StreamUsage);
        let value = body(&settings(), &history, &ToolList::default(), &learned);
        assert_eq!(value["max_tokens"], 1000);
        assert!(value.get("max_completion_tokens").is_none());
        assert!(value.get("stream_options").is_none());
        let mut deepseek = settings();
        deepseek.output_limit_as_max_tokens = true;
        let value = body(
            &deepseek,
            &history,
            &ToolList::default(),
            &Learned::default(),
        );
        assert_eq!(value["max_tokens"], 1000);
        assert!(value.get("max_completion_tokens").is_none());
    }

    #[test]
    fn in_thinking_mode_every_assistant_message_carries_reasoning_content() {
        let call = |id: &str| {
            json!({"id": id, "type": "function",
            "function": {"name": "t__get", "arguments": "{}"}})
        };
        let mut history = History::default();
        history.push(Role::User, Chat.user_text("Hi"));
        history.push(
            Role::Assistant,
            raw_item(&json!({"role": "assistant", "content": null, "tool_calls": [call("a")]})),
        );
        history.push(
            Role::User,
            Chat.tool_output(&ToolOutput::text("a", "ok", false)),
        );
        let tools = ToolList::default();
        let learned = Learned::default();
        let plain = body(&settings(), &history, &tools, &learned);
        assert!(
            plain["messages"][2].get("reasoning_content").is_none(),
            "no server said it thinks"
        );
        history.push(
            Role::Assistant,
            raw_item(&json!({"role": "assistant", "content": null,
                "tool_calls": [call("b")], "reasoning_content": "Hmm."})),
        );
        history.push(
            Role::User,
            Chat.tool_output(&ToolOutput::text("b", "ok", false)),
        );
        let thinking = body(&settings(), &history, &tools, &learned);
        assert_eq!(thinking["messages"][2]["reasoning_content"], "");
        assert_eq!(thinking["messages"][2]["tool_calls"][0]["id"], "a");
        assert_eq!(thinking["messages"][4]["reasoning_content"], "Hmm.");
        assert!(thinking["messages"][1].get("reasoning_content").is_none());
        assert!(
            !history.entries()[1]
                .item
                .get()
                .contains("reasoning_content"),
            "the stored message is unchanged"
        );
    }

    #[test]
    fn tool_results_are_tool_messages_and_their_images_follow_them() {
        let image = ToolImage {
            media_type: "image/png".into(),
            data: "iVBORw0KGgo=".into(),
        };
        let outputs = [
            ToolOutput {
                call_id: "call_1".into(),
                content: "a chart".into(),
                images: vec![image],
                is_error: false,
            },
            ToolOutput::text("call_2", "", true),
        ];
        let items: Vec<Value> = Chat
            .tool_outputs(&outputs)
            .iter()
            .map(|i| serde_json::from_str(i.get()).unwrap())
            .collect();
        assert_eq!(items.len(), 3);
        assert_eq!(items[0]["role"], "tool");
        assert_eq!(items[0]["tool_call_id"], "call_1");
        assert!(
            items[0]["content"]
                .as_str()
                .unwrap()
                .starts_with("a chart\n\n[1 image from this call")
        );
        assert_eq!(
            items[1],
            json!({"role": "tool", "tool_call_id": "call_2",
                   "content": format!("Error: {}", super::super::reply::SILENT_FAILURE_TEXT)})
        );
        assert_eq!(items[2]["role"], "user");
        assert_eq!(
            items[2]["content"][1]["image_url"]["url"],
            "data:image/png;base64,iVBORw0KGgo="
        );
        assert_eq!(
            Chat.tool_outputs(&outputs[1..]).len(),
            1,
            "no user message without images"
        );
    }
}
