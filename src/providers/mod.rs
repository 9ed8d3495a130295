//! Providers: the two wire APIs a subagent's model loop talks to.
//!
//! | module | job |
//! | --- | --- |
//! | [`credentials`] | the key, read from the definition's `env_key` when a run starts |
//! | [`http`] | the shared HTTP client, timeouts, retries and error classification |
//! | [`responses`] | OpenAI Responses: `POST {base_url}/responses` |
//! | [`messages`] | Anthropic Messages: `POST {base_url}/v1/messages` |
//!
//! History is kept as the provider's own JSON items ([`Conversation`]) and sent back as
//! received, so reasoning items, thinking blocks and fields this code does not know about
//! survive every round trip. Only what the loop needs is read into typed values ([`Reply`]).
//! Requests are not streamed: each is one JSON body, bounded by the request timeout.
//! This layer knows nothing about MCP.

pub mod credentials;
pub mod http;
pub mod messages;
pub mod responses;

use serde_json::Value;
use url::Url;

use crate::definition::{AgentDefinition, ProviderKind, ReasoningEffort, WireApi};
use crate::error::{AgentError, ErrorCode};
use crate::toolbox::ToolSpec;
pub use credentials::ApiKey;
pub use http::{RetryNotice, RetryPolicy};

/// One tool call the model asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// `call_id` (Responses) or `tool_use.id` (Messages): what the result must name.
    pub call_id: String,
    pub name: String,
    /// The arguments object, or why they could not be read (a Responses call carries them
    /// as a JSON string, which may be malformed).
    pub arguments: Result<Value, String>,
}

/// Tokens the provider reported for one request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// Why the model stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// Done: the text is the answer.
    EndTurn,
    /// It asked for the tools in [`Reply::tool_calls`].
    ToolUse,
    /// It paused or ran out of output tokens mid-answer (Messages `pause_turn`,
    /// `max_tokens`); sending the history back as it is lets it continue.
    Continue,
}

/// One reply, in typed form plus the raw items that go into the history.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// What to append to the history, exactly as the provider sent it (Responses output
    /// items without their server ids; Messages content blocks).
    pub items: Vec<Value>,
    /// The reply's text, concatenated.
    pub text: String,
    pub tool_calls: Vec<ToolCall>,
    pub usage: Usage,
    pub stop: StopReason,
}

/// A tool's answer, as the model will see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutput {
    pub call_id: String,
    pub content: String,
    pub is_error: bool,
}

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

/// The model and its settings, as a request needs them.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelSettings {
    pub model: String,
    pub temperature: Option<f64>,
    pub reasoning_effort: Option<ReasoningEffort>,
}

/// How a request failed, after any retries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProviderFailure {
    /// Connect or request timeout.
    Timeout,
    /// The history no longer fits the model's context window.
    ContextLimit,
    /// Refused, failed after retries, or answered with something unusable.
    Failed,
}

/// A provider failure with a message quoting the provider (never request headers).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ProviderError {
    pub failure: ProviderFailure,
    pub message: String,
}

impl ProviderError {
    pub fn failed(message: impl Into<String>) -> Self {
        ProviderError {
            failure: ProviderFailure::Failed,
            message: message.into(),
        }
    }
}

impl From<ProviderError> for AgentError {
    fn from(e: ProviderError) -> Self {
        let code = match e.failure {
            ProviderFailure::Timeout => ErrorCode::ProviderTimeout,
            ProviderFailure::ContextLimit => ErrorCode::ContextLimit,
            ProviderFailure::Failed => ErrorCode::ProviderError,
        };
        let message = match e.failure {
            ProviderFailure::ContextLimit => format!(
                "{}; the conversation no longer fits the model's context window. Spawn a \
                 fresh agent for a narrower task",
                e.message
            ),
            _ => e.message,
        };
        AgentError::new(code, message)
    }
}

/// A client for one definition's provider and model, holding the key read for this run.
#[derive(Debug, Clone)]
pub struct ProviderClient {
    http: reqwest::Client,
    label: String,
    wire: WireApi,
    endpoint: Url,
    key: ApiKey,
    settings: ModelSettings,
    retry: RetryPolicy,
}

impl ProviderClient {
    /// A client for `definition`'s provider with `key`, sharing the process's HTTP client.
    pub fn new(definition: &AgentDefinition, key: ApiKey) -> Self {
        let provider = &definition.provider;
        let label = match provider.kind {
            ProviderKind::Custom => provider
                .base_url
                .host_str()
                .unwrap_or("custom provider")
                .to_owned(),
            kind => kind.as_str().to_owned(),
        };
        let endpoint = endpoint(&provider.base_url, provider.wire_api);
        ProviderClient {
            http: crate::net::provider_client(&endpoint).clone(),
            label,
            wire: provider.wire_api,
            endpoint,
            key,
            settings: ModelSettings {
                model: definition.model.id.clone(),
                temperature: definition.temperature,
                reasoning_effort: definition.reasoning_effort,
            },
            retry: RetryPolicy::default(),
        }
    }

    /// A client with the key read now from the definition's `env_key` through `lookup`
    /// (`std::env::var` in the server). Called at the start of every run, so a refreshed
    /// key is picked up; a missing or empty variable is `missing_credential`.
    pub fn for_run(
        definition: &AgentDefinition,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, AgentError> {
        let key = ApiKey::lookup(&definition.provider.env_key, lookup)?;
        Ok(Self::new(definition, key))
    }

    /// Replaces the retry policy (tests use short or no retries).
    pub fn with_retry_policy(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// The provider's name for activity and messages: `openai`, `anthropic`, or the host of
    /// a custom endpoint.
    pub fn label(&self) -> &str {
        &self.label
    }

    pub fn model(&self) -> &str {
        &self.settings.model
    }

    /// Asks for the next reply. Retries transient failures (reporting each through
    /// `on_retry`); the error says why it gave up.
    pub async fn complete(
        &self,
        system: &str,
        conversation: &Conversation,
        tools: &[ToolSpec],
        on_retry: &(dyn Fn(&RetryNotice) + Send + Sync),
    ) -> Result<Reply, ProviderError> {
        let (body, headers) = match self.wire {
            WireApi::Responses => (
                responses::request_body(&self.settings, system, conversation.items(), tools),
                responses::headers(&self.key),
            ),
            WireApi::AnthropicMessages => (
                messages::request_body(&self.settings, system, conversation.items(), tools),
                messages::headers(&self.key),
            ),
        };
        let parse: fn(Value) -> Result<Reply, http::AttemptError> = match self.wire {
            WireApi::Responses => responses::parse_reply,
            WireApi::AnthropicMessages => messages::parse_reply,
        };
        // What the provider says is quoted in errors and activity; never the key with it.
        let redacted_retry = |notice: &RetryNotice| {
            on_retry(&RetryNotice {
                reason: self.key.redact(&notice.reason),
                ..notice.clone()
            })
        };
        http::post_with_retries(
            &self.http,
            &self.endpoint,
            headers,
            &body,
            &self.label,
            &self.retry,
            parse,
            &redacted_retry,
        )
        .await
        .map_err(|e| ProviderError {
            message: self.key.redact(&e.message),
            ..e
        })
    }
}

/// `{base_url}/responses` or `{base_url}/v1/messages`.
pub fn endpoint(base_url: &Url, wire: WireApi) -> Url {
    let mut url = base_url.clone();
    let path = url.path().trim_end_matches('/').to_owned();
    let suffix = match wire {
        WireApi::Responses => "/responses",
        WireApi::AnthropicMessages => "/v1/messages",
    };
    url.set_path(&format!("{path}{suffix}"));
    url
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_append_the_wire_path() {
        let u = |s: &str| Url::parse(s).unwrap();
        assert_eq!(
            endpoint(&u("https://api.openai.com/v1"), WireApi::Responses).as_str(),
            "https://api.openai.com/v1/responses"
        );
        assert_eq!(
            endpoint(&u("https://openrouter.ai/api/v1/"), WireApi::Responses).as_str(),
            "https://openrouter.ai/api/v1/responses"
        );
        assert_eq!(
            endpoint(&u("https://api.anthropic.com"), WireApi::AnthropicMessages).as_str(),
            "https://api.anthropic.com/v1/messages"
        );
        assert_eq!(
            endpoint(&u("http://127.0.0.1:9/gw"), WireApi::AnthropicMessages).as_str(),
            "http://127.0.0.1:9/gw/v1/messages"
        );
    }
}
