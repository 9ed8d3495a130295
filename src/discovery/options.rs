//! What loading takes: the workspace (canonical, an existing directory), the server's
//! default model, and the variables discovery itself reads.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::aliases::CLAUDE_ALIASES;
use crate::definition::{ModelAllowList, ProviderKind, RunBudget};

/// A canonical, existing workspace directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workspace {
    root: PathBuf,
}

impl Workspace {
    /// Canonicalizes `path` and checks that it is a directory. The error is one line that
    /// names the path.
    pub fn open(path: &Path) -> Result<Workspace, String> {
        let shown = path.display();
        let root = path.canonicalize().map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => format!("workspace {shown} does not exist"),
            _ => format!("workspace {shown} cannot be opened: {e}"),
        })?;
        if !root.is_dir() {
            return Err(format!("workspace {shown} is not a directory"));
        }
        Ok(Workspace { root })
    }

    pub fn path(&self) -> &Path {
        &self.root
    }
}

/// `--default-model PROVIDER/MODEL`: the model for definitions that defer to their parent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefaultModel {
    pub provider: ProviderKind,
    pub model: String,
}

impl std::str::FromStr for DefaultModel {
    type Err = String;

    /// `PROVIDER/MODEL`, or a bare Claude alias (`sonnet`, `opus`, `haiku`, `fable`) for
    /// `anthropic/ALIAS`; an alias resolves when the catalog loads, as in a Claude file.
    fn from_str(s: &str) -> Result<Self, String> {
        if let Some((alias, _, _)) = CLAUDE_ALIASES.iter().find(|(a, _, _)| *a == s.trim()) {
            return Ok(DefaultModel {
                provider: ProviderKind::Anthropic,
                model: (*alias).to_owned(),
            });
        }
        let usage = "expected PROVIDER/MODEL with PROVIDER openai, anthropic or gemini (for \
                     example anthropic/claude-sonnet-5-5), or one of sonnet, opus, haiku, fable";
        let (provider, model) = s
            .split_once('/')
            .filter(|(_, m)| !m.trim().is_empty())
            .ok_or_else(|| format!("{s:?}: {usage}"))?;
        match ProviderKind::parse(provider) {
            Some(kind) if kind != ProviderKind::Custom => Ok(DefaultModel {
                provider: kind,
                model: model.trim().to_owned(),
            }),
            _ => Err(format!("{s:?}: {usage}")),
        }
    }
}

/// What loading takes besides the workspace.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    pub default_model: Option<DefaultModel>,
    /// The server's run budget (`--max-tool-calls`, `--max-run-tokens`, `--max-run-seconds`):
    /// what a definition that sets none gets, and the most one may set (SPEC §3.1).
    pub budget: RunBudget,
    /// `--allow-models`: the models this server may run (SPEC §5.1); `None` allows any. A
    /// definition whose model is outside is rejected, a fallback outside is dropped.
    pub allow_models: Option<ModelAllowList>,
    /// Variables that discovery itself reads (Claude's alias overrides, the providers'
    /// `*_BASE_URL`), captured once so loading is repeatable and tests need not touch the
    /// process environment.
    pub env: HashMap<String, String>,
}

impl LoadOptions {
    /// Options with the variables discovery reads taken from this process's environment.
    pub fn from_process_env(default_model: Option<DefaultModel>, budget: RunBudget) -> Self {
        let endpoints = [ProviderKind::OpenAi, ProviderKind::Anthropic]
            .into_iter()
            .filter_map(ProviderKind::base_url_var);
        let env = CLAUDE_ALIASES
            .iter()
            .map(|(_, var, _)| *var)
            .chain(endpoints)
            .filter_map(|var| std::env::var(var).ok().map(|v| (var.to_owned(), v)))
            .collect();
        LoadOptions {
            default_model,
            budget,
            allow_models: None,
            env,
        }
    }
}
