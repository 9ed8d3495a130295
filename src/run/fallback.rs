//! The model a run asks, and its fallbacks (SPEC §5.1 `fallback_models`): when the run's
//! model cannot answer before the run's first reply (a rate limit that outlasted the
//! retries, a quota or billing refusal, an overload, an unknown or retired model), the next
//! fallback is asked the same request, on the same endpoint and wire, so the conversation
//! stays valid. Any other failure, or one after the first reply, ends the run as before.

use super::observer::{ModelAttempt, RunObserver};
use crate::error::AgentError;
use crate::providers::{ProviderClient, ProviderError, ProviderFailure};

/// Which model of the agent's a run asks now.
#[derive(Default)]
pub(super) struct Models {
    /// The client of the fallback asked now; `None` while it is the agent's own model.
    switched: Option<ProviderClient>,
    /// How many of the fallbacks have been taken.
    taken: usize,
    /// Whether a reply has arrived in this run: from then on there is no falling back.
    replied: bool,
}

impl Models {
    /// The client to ask now: the fallback taken last, else the agent's own (`primary`).
    pub(super) fn current<'a>(&'a self, primary: &'a ProviderClient) -> &'a ProviderClient {
        self.switched.as_ref().unwrap_or(primary)
    }

    /// A reply arrived: the model that sent it answers the rest of the run.
    pub(super) fn replied(&mut self) {
        self.replied = true;
    }

    /// After `failure` of the current model: whether the run goes on with the next
    /// fallback, which `observer` is told about (the model left and why). False when the
    /// failure is not one a fallback mends, a reply came already, or none is left.
    pub(super) fn fall_back(
        &mut self,
        primary: &ProviderClient,
        failure: &ProviderError,
        observer: &dyn RunObserver,
    ) -> bool {
        let ProviderFailure::Unavailable(why) = failure.failure else {
            return false;
        };
        if self.replied {
            return false;
        }
        let Some(next) = primary.fallback_models().get(self.taken) else {
            return false;
        };
        let current = self.current(primary);
        let mut error = AgentError::from(failure.clone());
        error.message = format!("{}: {}", why.as_str(), error.message);
        tracing::warn!(
            "{}'s model {} could not answer ({}); falling back to {next}",
            current.label(),
            current.model(),
            error.message
        );
        let left = ModelAttempt {
            model: current.model().to_owned(),
            error,
        };
        observer.model_left(&left, next);
        self.switched = Some(primary.with_model(next));
        self.taken += 1;
        true
    }
}
