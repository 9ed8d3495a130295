//! What a new run is given from the catalog and the environment: its system context (the
//! instructions, each preloaded skill, the output schema's instructions; FORMATS.md §5) and
//! its provider client, with the key read now and every secret of the workspace hidden
//! (SPEC §10).

use std::sync::Arc;

use super::refusals::skill_missing;
use crate::definition::{AgentDefinition, Catalog};
use crate::error::AgentError;
use crate::providers::{Credential, ProviderClient, RetryPolicy};
use crate::run::schema_instructions;
use crate::toolbox::EnvLookup;

pub(super) struct RunSetup {
    catalog: Arc<Catalog>,
    env: EnvLookup,
    retry: RetryPolicy,
    /// The variables holding the credentials the catalog's agents are configured with,
    /// each once (the catalog does not change; their values are read per run).
    secret_vars: Vec<String>,
}

impl RunSetup {
    pub(super) fn new(catalog: Arc<Catalog>, env: EnvLookup, retry: RetryPolicy) -> Self {
        let mut secret_vars: Vec<String> = catalog
            .agents()
            .iter()
            .flat_map(|definition| definition.secret_vars())
            .map(str::to_owned)
            .collect();
        secret_vars.sort_unstable();
        secret_vars.dedup();
        RunSetup {
            catalog,
            env,
            retry,
            secret_vars,
        }
    }

    /// Instructions, then each preloaded skill in the listed order (FORMATS.md §5).
    pub(super) fn system_context(
        &self,
        definition: &AgentDefinition,
    ) -> Result<String, AgentError> {
        let mut system = definition.instructions.clone();
        for name in &definition.skills {
            let skill = self.catalog.skills().get(name);
            let skill = skill.ok_or_else(|| skill_missing(definition, name))?;
            system.push_str("\n\n");
            system.push_str(&skill.preload_text());
        }
        if let Some(schema) = &definition.output_schema {
            system.push_str("\n\n");
            system.push_str(&schema_instructions(schema));
        }
        Ok(system)
    }

    /// The client of a run of `definition`, with the key read now, hiding every secret
    /// of the workspace ([`Self::workspace_secrets`]); all of them are kept off stderr from
    /// now on.
    pub(super) fn provider_for(
        &self,
        definition: &AgentDefinition,
    ) -> Result<ProviderClient, AgentError> {
        let env = self.env.clone();
        let client = ProviderClient::for_run(definition, move |var| env(var))?
            .with_retry_policy(self.retry.clone())
            .with_workspace(self.catalog.workspace(), definition)
            .hiding(self.workspace_secrets());
        crate::redact::hide_on_stderr(client.secrets());
        Ok(client)
    }

    /// The variable holding `definition`'s key when it is unset or empty now (the one it
    /// would read first), for the marks of `spawn_agent`'s description (SPEC §4.1); `None`
    /// when the key is there. A variable name that looks like a key itself is not shown.
    pub(super) fn missing_key(&self, definition: &AgentDefinition) -> Option<String> {
        let env = self.env.clone();
        let missing = Credential::resolve(&definition.provider, move |var| env(var)).err()?;
        Some(if crate::definition::is_showable_var_name(&missing.var) {
            missing.var
        } else {
            "its key variable".to_owned()
        })
    }

    /// The values, read now, of every credential the workspace's agents are configured with:
    /// their keys and their child servers' tokens. A run hides them all, not only its own:
    /// a model may have read another agent's token from a file or a tool.
    fn workspace_secrets(&self) -> Vec<String> {
        self.secret_vars
            .iter()
            .filter_map(|var| (self.env)(var))
            .collect()
    }
}
