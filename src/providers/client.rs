//! A client for one definition's provider and model: the endpoint, the key read for this
//! run, the wire API, and the retries around each request.

use serde_json::Value;
use url::Url;

use super::conversation::Conversation;
use super::credentials::{ApiKey, Audience, Credential};
use super::error::ProviderError;
use super::http::{self, RetryNotice, RetryPolicy};
use super::reply::{ModelSettings, Reply};
use super::{messages, responses};
use crate::definition::{AgentDefinition, AuthHeader, ProviderKind, WireApi};
use crate::error::AgentError;
use crate::toolbox::ToolSpec;

/// A client for one definition's provider and model, holding the key read for this run.
#[derive(Debug, Clone)]
pub struct ProviderClient {
    http: reqwest::Client,
    label: String,
    wire: WireApi,
    endpoint: Url,
    key: ApiKey,
    auth: AuthHeader,
    settings: ModelSettings,
    retry: RetryPolicy,
}

impl ProviderClient {
    /// A client for `definition`'s provider with `key`, sharing the process's HTTP client.
    /// The key goes in the header the definition's `auth` names, else the wire's own.
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
            auth: provider
                .auth
                .unwrap_or_else(|| AuthHeader::default_for(provider.wire_api)),
            settings: ModelSettings {
                model: definition.model.id.clone(),
                temperature: definition.temperature,
                reasoning_effort: definition.reasoning_effort,
            },
            retry: RetryPolicy::default(),
        }
    }

    /// A client with the key read now from the definition's `env_key` (or the variable
    /// that stands in for it, [`Credential::resolve`]) through `lookup` (`std::env::var` in
    /// the server). Called at the start of every run, so a refreshed key is picked up; a
    /// missing or empty variable is `missing_credential`.
    pub fn for_run(
        definition: &AgentDefinition,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, AgentError> {
        let credential = Credential::resolve(&definition.provider, lookup)
            .map_err(|missing| missing.to_error(Audience::McpClient))?;
        let mut client = Self::new(definition, credential.key);
        client.auth = credential.auth;
        Ok(client)
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
                responses::headers(&self.key, self.auth),
            ),
            WireApi::AnthropicMessages => (
                messages::request_body(&self.settings, system, conversation.items(), tools),
                messages::headers(&self.key, self.auth),
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
