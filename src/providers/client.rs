//! A client for one definition's provider and model: the endpoint, the key read for this
//! run, the wire format, the output limit, the prompt cache key, and the retries around each
//! request, including the one retry without an optional parameter the model refuses
//! (SPEC §6.1), which the session's conversation remembers for its later requests.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

use url::Url;

use super::classify::named_output_maximum;
use super::conversation::Conversation;
use super::credentials::{ApiKey, Audience, Credential};
use super::error::{ProviderError, ProviderFailure};
use super::formats::format;
use super::models;
use super::output_room::{context_room, refuses_output_limit};
use super::reply::{ModelSettings, Reply, StopReason};
use super::retry::{self, RequestEvents, RetryNotice, RetryPolicy, Target};
use super::strict::fits_strict_subset;
use super::unsupported::OptionalParam;
use super::wire::{Request, ToolList, WireFormat};
use crate::definition::{
    AgentDefinition, AuthHeader, CacheKey, EndpointSource, ProviderConfig, ProviderKind, WireApi,
};
use crate::error::AgentError;
use crate::limits::{DEFAULT_MAX_OUTPUT_TOKENS, MODEL_MAX_OUTPUT_TOKENS, REASONING_ROOM_TOKENS};
use crate::redact::Secrets;
use crate::toolbox::ToolSpec;

mod adjust;

/// A client for one definition's provider and model, holding the key read for this run.
#[derive(Clone)]
pub struct ProviderClient {
    http: reqwest::Client,
    label: String,
    wire: &'static dyn WireFormat,
    endpoint: Url,
    key: ApiKey,
    auth: AuthHeader,
    settings: ModelSettings,
    retry: RetryPolicy,
    /// The longest reply asked for; lowered to the maximum a provider names when it refuses
    /// more (the model's, or the room a small context window leaves the input, which shrinks
    /// as the conversation grows), and kept for the requests after.
    max_output_tokens: Arc<AtomicU32>,
    /// Whether a lowered output limit was said on stderr: once per run, however often a
    /// small window's room lowers it again.
    output_limit_warned: Arc<AtomicBool>,
    /// Whether the definition set `max_output_tokens` (for the warning's wording).
    output_limit_from_definition: bool,
    /// The definition's file, as its warnings name it.
    source: String,
    /// The key, and whatever else the run must never show (its children's credentials):
    /// hidden from every message, before any cut.
    secrets: Secrets,
    /// `prompt_cache_key`: the same for every request of this definition in this
    /// workspace, so they reach the cache that holds their prefix.
    prompt_cache_key: String,
    /// Whether requests carry it: always on Responses; on Chat Completions only to OpenAI's
    /// own endpoint, since other servers of that API may refuse a field they do not know
    /// (Gemini's does).
    sends_cache_key: bool,
    /// What a failure to connect says besides the endpoint's origin: that the server's
    /// `*_BASE_URL` was not set, when the agent went to its provider's own endpoint for that
    /// reason.
    connect_hint: Option<String>,
    /// The models to try, in order, when this one cannot answer before a run's first reply
    /// (SPEC §5.1): on the same endpoint and wire.
    fallback_models: Arc<[String]>,
}

impl std::fmt::Debug for ProviderClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderClient")
            .field("label", &self.label)
            .field("endpoint", &self.endpoint.origin().ascii_serialization())
            .field("model", &self.settings.model)
            .field("max_output_tokens", &self.max_output_tokens())
            .finish_non_exhaustive()
    }
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
        let rules = provider.wire_api.rules();
        let endpoint = endpoint(&provider.base_url, provider.wire_api);
        let limit = definition
            .max_output_tokens
            .unwrap_or_else(|| default_max_output_tokens(&definition.model.id));
        let secrets = Secrets::new([key.expose()]);
        ProviderClient {
            http: crate::net::provider_client(&endpoint).clone(),
            label,
            wire: format(provider.wire_api),
            endpoint,
            key,
            auth: provider.auth.unwrap_or(rules.auth),
            settings: ModelSettings {
                model: definition.model.id.clone(),
                temperature: definition.temperature,
                reasoning_effort: definition.reasoning_effort,
                strict_output_schema: definition
                    .output_schema
                    .as_ref()
                    .map(|s| s.json())
                    .filter(|s| fits_strict_subset(s))
                    .map(|s| Arc::new(s.clone())),
                output_limit_as_max_tokens: rules.max_tokens_for_some_servers
                    && ignores_completion_tokens(&provider.base_url),
            },
            retry: RetryPolicy::default(),
            max_output_tokens: Arc::new(AtomicU32::new(limit)),
            output_limit_warned: Arc::default(),
            output_limit_from_definition: definition.max_output_tokens.is_some(),
            source: definition.source.path.display().to_string(),
            secrets,
            prompt_cache_key: prompt_cache_key(None, definition),
            sends_cache_key: match rules.cache_key {
                CacheKey::Always => true,
                CacheKey::Never => false,
                CacheKey::OpenAiOnly => is_openai(&provider.base_url),
            },
            connect_hint: connect_hint(provider),
            fallback_models: definition.fallback_models.clone().into(),
        }
    }

    /// The models to fall back to, in order (the definition's `fallback_models`).
    pub fn fallback_models(&self) -> &[String] {
        &self.fallback_models
    }

    /// The same client asking `model` instead (a fallback, SPEC §5.1): the same endpoint,
    /// key and wire; the output limit is the definition's, else the new model's default.
    pub fn with_model(&self, model: &str) -> Self {
        let mut client = self.clone();
        client.settings.model = model.to_owned();
        // Its own limit: what a provider says of one model's maximum is not the other's.
        let limit = if self.output_limit_from_definition {
            self.max_output_tokens()
        } else {
            default_max_output_tokens(model)
        };
        client.max_output_tokens = Arc::new(AtomicU32::new(limit));
        client
    }

    /// What this client's run must never show: its key, and the values given to
    /// [`hiding`](Self::hiding).
    pub fn secrets(&self) -> &Secrets {
        &self.secrets
    }

    /// A client that also hides `values` (the run's other credentials, such as its child
    /// servers' tokens) from everything it quotes.
    pub fn hiding<S: AsRef<str>>(mut self, values: impl IntoIterator<Item = S>) -> Self {
        self.secrets = self.secrets.with(values);
        self
    }

    /// The prompt cache key for `definition` in `workspace` (the session manager's; a client
    /// made without one keys by the definition alone).
    pub fn with_workspace(mut self, workspace: &Path, definition: &AgentDefinition) -> Self {
        self.prompt_cache_key = prompt_cache_key(Some(workspace), definition);
        self
    }

    /// The tools of a run, in the form this client's API takes, encoded once.
    pub fn prepare_tools(&self, tools: &[ToolSpec]) -> Result<ToolList, ProviderError> {
        self.wire
            .encode_tools(tools)
            .map_err(|e| ProviderError::failed(format!("cannot encode the tools: {e}")))
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

    /// The longest reply requests ask for now, in tokens.
    pub fn max_output_tokens(&self) -> u32 {
        self.max_output_tokens.load(Ordering::Relaxed)
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
        let tools = self.prepare_tools(tools)?;
        self.complete_with(system, conversation, &tools, &|n: &RetryNotice| on_retry(n))
            .await
    }

    /// [`complete`](Self::complete) with tools prepared once for the run, telling `events`
    /// about retries and when the reply begins to arrive. A refusal of an optional parameter
    /// (SPEC §6.1) is answered by sending the request again without it, once per parameter
    /// (a refused kind of thinking is replaced by the other kind first), and a refused effort
    /// level by sending it once with the nearest level the model takes; `conversation` keeps
    /// what was learned for the session's later requests. A refused `max_output_tokens` is
    /// retried once with the maximum the provider named, and a reply cut off before it wrote
    /// anything (its reasoning took the whole limit) is asked for once more with a larger
    /// limit, then fails rather than being continued.
    pub async fn complete_with(
        &self,
        system: &str,
        conversation: &Conversation,
        tools: &ToolList,
        events: &dyn RequestEvents,
    ) -> Result<Reply, ProviderError> {
        let redacted = Redacted {
            secrets: &self.secrets,
            events,
        };
        self.lower_effort_the_table_refuses(conversation);
        let mut lowered_output_limit = false;
        let mut raised_output_limit = false;
        loop {
            let limit = self.max_output_tokens();
            let e = match self
                .send(system, conversation, tools, limit, &redacted)
                .await
            {
                Ok(reply) if wrote_nothing(&reply) => {
                    if raised_output_limit || !self.raise_output_limit(limit) {
                        return Err(self.cut_off_before_writing(limit, raised_output_limit));
                    }
                    raised_output_limit = true;
                    continue;
                }
                Ok(reply) => return Ok(reply),
                Err(e) => e,
            };
            match e.failure {
                ProviderFailure::Unsupported(param) if self.drop_param(conversation, param, &e) => {
                    continue;
                }
                ProviderFailure::ReasoningWithTools if self.reason_none(conversation, &e) => {
                    continue;
                }
                // DeepSeek in thinking mode before any reply thought: every assistant
                // message goes with `reasoning_content` from now on (once).
                ProviderFailure::ReasoningEcho if conversation.learned().echo_reasoning() => {
                    continue;
                }
                ProviderFailure::EffortLevel(listed)
                    if self.lower_effort(conversation, listed, &e)
                        || self.drop_param(conversation, OptionalParam::Effort, &e) =>
                {
                    continue;
                }
                ProviderFailure::Failed | ProviderFailure::Unsupported(_)
                    if !lowered_output_limit =>
                {
                    self.lower_output_limit(limit, e, &redacted)?;
                    lowered_output_limit = true;
                }
                _ => return Err(self.given_up(e)),
            }
        }
    }

    /// Lowers the output limit from `limit` to the maximum a refusal names (the model's, or
    /// the room its context window leaves the input), for this request and the later ones;
    /// the refusal, as the request's failure, when it names none lower.
    fn lower_output_limit(
        &self,
        limit: u32,
        refusal: ProviderError,
        events: &dyn RequestEvents,
    ) -> Result<(), ProviderError> {
        let Some(maximum) = named_output_maximum(&refusal.message).filter(|m| *m < limit) else {
            return Err(self.given_up(refusal));
        };
        let room = context_room(&refusal.message);
        // Warned once: a window's room shrinks as the conversation grows, and each later
        // request it no longer fits is lowered again the same way.
        if !self.output_limit_warned.swap(true, Ordering::Relaxed) {
            let why = match room {
                Some(room) => format!(
                    "its context window of {} tokens leaves {maximum} for a reply after the \
                     input; later requests are lowered again as the conversation grows (set \
                     `max_output_tokens` to what the window can spare)",
                    room.window
                ),
                None => format!(
                    "using the model's maximum of {maximum} it named{}",
                    if self.output_limit_from_definition {
                        " (the definition's `max_output_tokens` is more than the model allows)"
                    } else {
                        ""
                    }
                ),
            };
            tracing::warn!(
                "{}: {} refused max_output_tokens {limit} for {}; {why}",
                self.source,
                self.label,
                self.settings.model,
            );
        }
        events.adjusting(&format!(
            "max_output_tokens {limit} refused, asking again with {maximum}"
        ));
        self.max_output_tokens.store(maximum, Ordering::Relaxed);
        Ok(())
    }

    /// A failure nothing is left to retry, as the caller sees it: a refusal of the output
    /// limit that names no room that fits says which field to set.
    fn given_up(&self, failure: ProviderError) -> ProviderError {
        let mut failure = failure.settled();
        if failure.failure == ProviderFailure::Failed && refuses_output_limit(&failure.message) {
            failure.message.push_str(&format!(
                "; set `max_output_tokens` in {} to what the model and its context window \
                 allow",
                self.source
            ));
        }
        failure
    }

    /// Raises the output limit from `limit` for a reply its reasoning filled: to twice the
    /// limit or [`REASONING_ROOM_TOKENS`], whichever is more, within the model's maximum
    /// (the table's, else the default); false when the limit is that already. Warns once;
    /// the client keeps the higher limit for its later requests.
    fn raise_output_limit(&self, limit: u32) -> bool {
        let ceiling = default_max_output_tokens(&self.settings.model);
        let raised = limit
            .saturating_mul(2)
            .max(REASONING_ROOM_TOKENS)
            .min(ceiling);
        if raised <= limit {
            return false;
        }
        tracing::warn!(
            "{}: {}'s reply from {} was cut off at max_output_tokens {limit} before it wrote \
             anything (its reasoning took the whole limit); asking once more with {raised}{}",
            self.source,
            self.label,
            self.settings.model,
            if self.output_limit_from_definition {
                " (the definition's `max_output_tokens` leaves too little room for this \
                 model's reasoning)"
            } else {
                ""
            }
        );
        self.max_output_tokens.store(raised, Ordering::Relaxed);
        true
    }

    /// The failure of a request whose replies were cut off before they wrote anything.
    fn cut_off_before_writing(&self, limit: u32, raised: bool) -> ProviderError {
        ProviderError::failed(format!(
            "{}'s reply from {} was cut off at max_output_tokens {limit} before it wrote \
             anything: its reasoning took the whole limit{}. It is not continued, since a \
             continuation would start its reasoning again; raise `max_output_tokens` or lower \
             `reasoning_effort`",
            self.label,
            self.settings.model,
            if raised {
                ", after it was raised once"
            } else {
                ", the most this model allows"
            }
        ))
    }

    async fn send(
        &self,
        system: &str,
        conversation: &Conversation,
        tools: &ToolList,
        max_output_tokens: u32,
        events: &dyn RequestEvents,
    ) -> Result<Reply, ProviderError> {
        let request = Request {
            settings: &self.settings,
            system,
            history: conversation.history(),
            tools,
            max_output_tokens,
            learned: conversation.learned(),
            prompt_cache_key: self
                .sends_cache_key
                .then_some(self.prompt_cache_key.as_str()),
        };
        let body = self
            .wire
            .encode(&request)
            .map_err(|e| ProviderError::failed(format!("cannot encode the request: {e}")))?;
        let headers = self.wire.headers(&self.key, self.auth);
        let target = Target {
            client: &self.http,
            url: &self.endpoint,
            headers: &headers,
            body: body.into(),
            provider: &self.label,
            secrets: &self.secrets,
            wire: self.wire,
            connect_hint: self.connect_hint.as_deref(),
        };
        // Quotes hid the secrets before they were cut; this catches any other route.
        let mut reply = retry::send_with_retries(&target, &self.retry, events)
            .await
            .map_err(|e| ProviderError {
                message: self.secrets.redact(&e.message).into_owned(),
                ..e
            })?;
        // A tool sent under another name (`tool_names`) is called by its own; the history
        // keeps the name the provider used.
        for call in &mut reply.tool_calls {
            let own = tools.tool_name(&call.name);
            if own != call.name {
                call.name = own.to_owned();
            }
        }
        Ok(reply)
    }
}

/// For an agent that went to its provider's own endpoint because the server's `*_BASE_URL`
/// was not set when it started: says so, since a gateway user who sees a public endpoint
/// fail has usually not passed that variable to the server (Codex passes only what
/// `env_vars` lists).
fn connect_hint(provider: &ProviderConfig) -> Option<String> {
    let var = provider.kind.base_url_var()?;
    (provider.base_url_source == EndpointSource::BuiltIn).then(|| {
        format!(
            "{var} is not set in this server's environment, so this is {}'s own endpoint; \
             to reach a gateway, give the server {var} (in Codex, list it in `env_vars`; \
             docs/clients.md, \"Keys, gateways and subscriptions\")",
            provider.kind
        )
    })
}

/// Whether a reply was cut off by its output limit before it wrote anything the history can
/// keep: no text, no call, no item (a Responses reasoning item or a Messages thinking block
/// the limit cut off cannot be sent back on its own).
fn wrote_nothing(reply: &Reply) -> bool {
    reply.stop == StopReason::CutOff
        && reply.items.is_empty()
        && reply.tool_calls.is_empty()
        && reply.text.trim().is_empty()
}

/// Whether `base_url` is OpenAI's own API.
fn is_openai(base_url: &Url) -> bool {
    base_url.host_str() == Some("api.openai.com")
}

/// Whether a Chat Completions endpoint is known to ignore `max_completion_tokens` without an
/// error, so that only `max_tokens` limits a reply there: DeepSeek's API ("max_completion_tokens:
/// 5 → 76 output tokens, finish stop; max_tokens: 5 → 5 tokens, finish length",
/// earendil-works/pi#8018).
fn ignores_completion_tokens(base_url: &Url) -> bool {
    base_url.host_str() == Some("api.deepseek.com")
}

/// `mcp-agents-` and 16 hex digits of a stable hash of the workspace, the definition's file
/// and name, and the model: at most 64 characters, as the API requires, and nothing of the
/// paths themselves.
fn prompt_cache_key(workspace: Option<&Path>, definition: &AgentDefinition) -> String {
    let mut text = String::new();
    if let Some(workspace) = workspace {
        text.push_str(&workspace.display().to_string());
    }
    for part in [
        definition.source.path.display().to_string(),
        definition.name.clone(),
        definition.model.id.clone(),
    ] {
        text.push('\0');
        text.push_str(&part);
    }
    let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("mcp-agents-{hash:016x}")
}

/// What the provider says is quoted in errors and activity; never a secret with it.
struct Redacted<'a> {
    secrets: &'a Secrets,
    events: &'a dyn RequestEvents,
}

impl RequestEvents for Redacted<'_> {
    fn retrying(&self, notice: &RetryNotice) {
        self.events.retrying(&RetryNotice {
            reason: self.secrets.redact(&notice.reason).into_owned(),
            ..notice.clone()
        })
    }

    fn receiving(&self, left: Duration) {
        self.events.receiving(left)
    }

    fn adjusting(&self, what: &str) {
        self.events.adjusting(&self.secrets.redact(what))
    }

    fn time_left(&self) -> Option<Duration> {
        self.events.time_left()
    }
}

/// The output limit of `model` when its definition sets none: the documented maximum of its
/// family, else [`DEFAULT_MAX_OUTPUT_TOKENS`]. A gateway's id is read as the model table
/// reads it ([`models::table_id`]): `anthropic/claude-opus-4.6` is `claude-opus-4-6`, not
/// the `claude-opus-4` of a smaller limit.
pub fn default_max_output_tokens(model: &str) -> u32 {
    let id = models::table_id(model);
    MODEL_MAX_OUTPUT_TOKENS
        .iter()
        .find(|(prefix, _)| id.starts_with(prefix))
        .map_or(DEFAULT_MAX_OUTPUT_TOKENS, |(_, max)| *max)
}

/// `{base_url}/responses`, `{base_url}/v1/messages` or `{base_url}/chat/completions`.
pub fn endpoint(base_url: &Url, wire: WireApi) -> Url {
    let mut url = base_url.clone();
    let path = url.path().trim_end_matches('/').to_owned();
    url.set_path(&format!("{path}{}", format(wire).path()));
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
        assert_eq!(
            endpoint(
                &u("https://generativelanguage.googleapis.com/v1beta/openai/"),
                WireApi::ChatCompletions
            )
            .as_str(),
            "https://generativelanguage.googleapis.com/v1beta/openai/chat/completions"
        );
    }

    #[test]
    fn chat_requests_carry_what_their_endpoint_takes() {
        let u = |s: &str| Url::parse(s).unwrap();
        assert!(is_openai(&u("https://api.openai.com/v1")));
        assert!(!is_openai(&u(
            "https://generativelanguage.googleapis.com/v1beta/openai"
        )));
        assert!(ignores_completion_tokens(&u("https://api.deepseek.com")));
        assert!(ignores_completion_tokens(&u("https://api.deepseek.com/v1")));
        assert!(!ignores_completion_tokens(&u("https://api.openai.com/v1")));
    }

    #[test]
    fn output_limits_default_to_the_model_familys_maximum() {
        assert_eq!(default_max_output_tokens("claude-opus-4-6"), 128_000);
        assert_eq!(
            default_max_output_tokens("claude-sonnet-4-5-20250929"),
            64_000
        );
        assert_eq!(
            default_max_output_tokens("claude-opus-4-1-20250805"),
            32_000
        );
        assert_eq!(default_max_output_tokens("claude-3-5-haiku-latest"), 8_192);
        assert_eq!(default_max_output_tokens("gpt-5.4"), 128_000);
        assert_eq!(default_max_output_tokens("openai/gpt-5.6-luna"), 128_000);
        assert_eq!(default_max_output_tokens("gpt-5-chat-latest"), 16_384);
        assert_eq!(default_max_output_tokens("gpt-4o-mini"), 16_384);
        assert_eq!(default_max_output_tokens("o4-mini"), 100_000);
        for claude_5 in [
            "claude-sonnet-5-5",
            "claude-opus-5",
            "claude-haiku-5-5-20261007",
            "claude-fable-5-2",
            "anthropic/claude-mythos-5.2",
        ] {
            assert_eq!(default_max_output_tokens(claude_5), 128_000, "{claude_5}");
        }
        assert_eq!(default_max_output_tokens("local-model"), 32_000);
        // Gateway spellings of a Claude id.
        assert_eq!(
            default_max_output_tokens("anthropic/claude-opus-4.6"),
            128_000
        );
        assert_eq!(
            default_max_output_tokens("anthropic/claude-opus-4.5"),
            64_000
        );
        assert_eq!(
            default_max_output_tokens("us.anthropic.claude-sonnet-4-5-20250929-v1:0"),
            64_000
        );
    }
}
