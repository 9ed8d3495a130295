//! What a client learns from a refusal, for the rest of the session: a parameter left out
//! or replaced, an effort level lowered (before the first request when the model table
//! knows it is refused), `reasoning_effort: none` where reasoning with tools is refused
//! (SPEC §6.1). Each warns once; the session's conversation remembers what was learned.

use super::ProviderClient;
use crate::definition::ReasoningEffort;
use crate::providers::conversation::Conversation;
use crate::providers::error::ProviderError;
use crate::providers::models::{self, EffortLevels, EffortSupport, ThinkingKind};
use crate::providers::unsupported::OptionalParam;
use crate::providers::wire::{carries, effort, thinking, thinking_param};

impl ProviderClient {
    /// Leaves `param` out of this session's requests from now on, if the request carried
    /// it and it was not left out already, warning once; false if there is nothing to drop.
    /// A refused kind of thinking gives way to the other kind, when the model has not refused
    /// that one too.
    pub(super) fn drop_param(
        &self,
        conversation: &Conversation,
        param: OptionalParam,
        refusal: &ProviderError,
    ) -> bool {
        let learned = conversation.learned();
        let carried = self.wire.may_send(param) && carries(&self.settings, learned, param);
        if !carried || !learned.insert(param) {
            return false;
        }
        let refused_thinking = matches!(
            param,
            OptionalParam::AdaptiveThinking | OptionalParam::BudgetThinking
        );
        let instead = thinking(&self.settings, learned)
            .filter(|_| refused_thinking)
            .map(thinking_param);
        let honoured = match (instead, param.definition_field()) {
            (Some(other), _) if other != param => format!(
                "this agent's requests ask for {} instead from now on",
                other.request_field()
            ),
            _ if param.replacement().is_some() => format!(
                "this agent's requests send {} instead from now on",
                param.replacement().unwrap_or_default()
            ),
            // Thinking with a budget still carries the effort (a 4.5 model behind a
            // gateway's name refuses both adaptive thinking and the effort parameter).
            _ if param == OptionalParam::Effort
                && self.wire.may_send(OptionalParam::BudgetThinking)
                && thinking(&self.settings, learned) == Some(ThinkingKind::Budget) =>
            {
                "this agent's requests leave it out from now on, and the thinking budget \
                 alone carries the definition's `reasoning_effort`"
                    .to_owned()
            }
            (_, Some(field)) => format!(
                "the definition's `{field}` cannot be honoured with this model, so this \
                 agent's requests leave {} out from now on",
                param.request_field()
            ),
            (_, None) => format!(
                "this agent's requests leave {} out from now on",
                param.request_field()
            ),
        };
        tracing::warn!(
            "{}: {} refused {} for {} ({}); {honoured}",
            self.source,
            self.label,
            param.request_field(),
            self.settings.model,
            refusal.message
        );
        true
    }

    /// Before the session's first request: sends the nearest effort level the model takes
    /// instead of the definition's when the model table knows the model refuses it (Opus 4.5
    /// `max`, Opus 4.6 `xhigh`), learned as a refusal would teach it, and warns once; the
    /// request the provider would refuse is never sent.
    pub(super) fn lower_effort_the_table_refuses(&self, conversation: &Conversation) {
        let learned = conversation.learned();
        if learned.effort().is_some() {
            return;
        }
        let Some(written) = effort(&self.settings, learned) else {
            return;
        };
        let Some((nearest, levels)) = models::effort_instead(&self.settings.model, written) else {
            return;
        };
        if learned.lower_effort(nearest) {
            tracing::warn!(
                "{}: {} does not take reasoning_effort {} (it takes {}); this agent's \
                 requests use {} instead, the nearest level",
                self.source,
                self.settings.model,
                written.as_str(),
                levels.names(),
                nearest.as_str()
            );
        }
    }

    /// Sends `reasoning_effort: "none"` from now on, as a refusal of reasoning with function
    /// tools says to (OpenAI's reasoning models on Chat Completions refuse any other effort
    /// with tools, their own default included), warning once that the model's reasoning with
    /// tools needs the Responses API; false when `none` was sent already.
    pub(super) fn reason_none(&self, conversation: &Conversation, refusal: &ProviderError) -> bool {
        if !self.wire.may_send(OptionalParam::Effort)
            || !conversation.learned().send_effort(ReasoningEffort::None)
        {
            return false;
        }
        tracing::warn!(
            "{}: {} refused {}'s reasoning with function tools on Chat Completions ({}); this \
             agent's requests send reasoning_effort none from now on, so the model does not \
             reason. Its reasoning with tools needs the Responses API: set `wire_api: \
             responses`",
            self.source,
            self.label,
            self.settings.model,
            refusal.message
        );
        true
    }

    /// Sends the nearest effort level the model takes from now on, if the request carried
    /// an effort and no level was learned before: from the levels the refusal lists, else
    /// the model table's. Warns once; false when there is no level to send instead.
    pub(super) fn lower_effort(
        &self,
        conversation: &Conversation,
        listed: EffortLevels,
        refusal: &ProviderError,
    ) -> bool {
        let learned = conversation.learned();
        let Some(sent) = effort(&self.settings, learned) else {
            return false;
        };
        let (accepted, from) = if listed.is_empty() {
            match models::traits(&self.settings.model).map(|t| t.effort) {
                Some(EffortSupport::Levels(levels)) => (levels, "the levels this model takes"),
                _ => return false,
            }
        } else {
            (listed, "the levels it lists")
        };
        let Some(nearest) = accepted.nearest(sent).filter(|n| *n != sent) else {
            return false;
        };
        if !learned.lower_effort(nearest) {
            return false;
        }
        tracing::warn!(
            "{}: {} refused reasoning_effort {} for {} ({}); this agent's requests use {} \
             from now on, the nearest of {from} ({})",
            self.source,
            self.label,
            sent.as_str(),
            self.settings.model,
            refusal.message,
            nearest.as_str(),
            accepted.names()
        );
        true
    }
}
