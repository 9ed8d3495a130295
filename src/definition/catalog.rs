//! The catalog (SPEC §3): the agents and skills a workspace defines, as loaded at startup,
//! and the warnings about every file that could not be used as written. Plain data, built
//! by `discovery` and read by everyone else; it never changes after loading.
//!
//! The skill roots are here too, in precedence order; the agent roots are the definition
//! formats' folders (`discovery::agent_roots`).

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::agent::AgentDefinition;
use super::skill::SkillRegistry;

/// A folder skills are read from (SPEC §9), in precedence order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SkillRoot {
    Agents,
    Claude,
    Codex,
    OpenCode,
}

impl SkillRoot {
    pub const ALL: [SkillRoot; 4] = [
        SkillRoot::Agents,
        SkillRoot::Claude,
        SkillRoot::Codex,
        SkillRoot::OpenCode,
    ];

    /// The folder, relative to the workspace.
    pub fn path(self) -> &'static str {
        match self {
            SkillRoot::Agents => ".agents/skills",
            SkillRoot::Claude => ".claude/skills",
            SkillRoot::Codex => ".codex/skills",
            SkillRoot::OpenCode => ".opencode/skills",
        }
    }

    /// Lower comes first.
    pub fn precedence(self) -> usize {
        match self {
            SkillRoot::Agents => 0,
            SkillRoot::Claude => 1,
            SkillRoot::Codex => 2,
            SkillRoot::OpenCode => 3,
        }
    }
}

/// What happened to the file a warning is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Effect {
    /// The file is not used: it is invalid, unreadable, too large or not UTF-8.
    Rejected,
    /// The file is valid but another definition already has its name.
    Shadowed,
    /// A path was not searched or followed (a link out of its root, too deep).
    Skipped,
    /// The file is used, with a caveat.
    Loaded,
    /// The agent loaded, but a run would fail now: a variable or command it needs is missing
    /// (`check` readiness, SPEC §2; never part of the catalog's own warnings).
    WillFailAtSpawn,
}

impl Effect {
    pub fn as_str(self) -> &'static str {
        match self {
            Effect::Rejected => "rejected",
            Effect::Shadowed => "shadowed",
            Effect::Skipped => "skipped",
            Effect::Loaded => "loaded",
            Effect::WillFailAtSpawn => "will_fail_at_spawn",
        }
    }
}

/// One problem with one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// Relative to the workspace.
    pub file: PathBuf,
    pub reason: String,
    pub effect: Effect,
    /// The agent the file defines (or, when it was rejected, names), when known: what `run`
    /// reports about the one agent it runs.
    pub agent: Option<String>,
    /// A rejection whose one problem is that the server has no default model (the file
    /// uses its parent's model, or names none): the one a client's configuration fixes.
    default_model_fixes: bool,
}

impl Warning {
    /// A warning about `file` that names no agent.
    pub fn new(file: PathBuf, reason: String, effect: Effect) -> Self {
        Warning {
            file,
            reason,
            effect,
            agent: None,
            default_model_fixes: false,
        }
    }

    /// This warning, about the agent `name`.
    pub fn about(self, agent: Option<String>) -> Self {
        Warning { agent, ..self }
    }

    /// The word its line starts with: `rejected` for a file that is not used, else
    /// `warning`.
    pub fn label(&self) -> &'static str {
        match self.effect {
            Effect::Rejected => "rejected",
            _ => "warning",
        }
    }

    /// This rejection, marked as one a default model fixes when `wants` says so.
    pub fn wanting_default_model(self, wants: bool) -> Self {
        Warning {
            default_model_fixes: wants,
            ..self
        }
    }

    /// The file was rejected only because it uses its parent's model (or names none) and
    /// the server has no default model: the one rejection a client's configuration fixes.
    pub fn wants_default_model(&self) -> bool {
        self.effect == Effect::Rejected && self.default_model_fixes
    }
}

/// Why a definition that defers to its parent's model (Claude `model: inherit` or no model,
/// OpenCode and Codex files without one) is rejected when the server has no default model.
pub const PARENT_MODEL_REJECTION: &str = "the definition uses its parent's model (`model: \
    inherit` or no model), which this server cannot see; name a model in the file, or start \
    the server with --default-model PROVIDER/MODEL (or set MCP_AGENTS_DEFAULT_MODEL)";

impl fmt::Display for Warning {
    /// `<relative path>: <reason>`; callers prefix `warning: `.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.file.display(), self.reason)
    }
}

/// The agents and skills of a workspace, as loaded at startup.
#[derive(Debug, Clone)]
pub struct Catalog {
    workspace: PathBuf,
    agents: Vec<Arc<AgentDefinition>>,
    by_name: HashMap<String, usize>,
    skills: SkillRegistry,
    warnings: Vec<Warning>,
}

impl Catalog {
    /// A catalog of `agents`, whose names the loader has already made unique (a later
    /// duplicate would be unreachable by name).
    pub fn new(
        workspace: PathBuf,
        agents: Vec<Arc<AgentDefinition>>,
        skills: SkillRegistry,
        warnings: Vec<Warning>,
    ) -> Self {
        let mut by_name = HashMap::with_capacity(agents.len());
        for (index, agent) in agents.iter().enumerate() {
            by_name.entry(agent.name.clone()).or_insert(index);
        }
        Catalog {
            workspace,
            agents,
            by_name,
            skills,
            warnings,
        }
    }

    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// Agents in discovery order.
    pub fn agents(&self) -> &[Arc<AgentDefinition>] {
        &self.agents
    }

    /// The agents the parent model may start (`spawn_agent`'s list), in discovery order:
    /// every agent but those whose file says only a person may start them.
    pub fn offered(&self) -> impl Iterator<Item = &Arc<AgentDefinition>> {
        self.agents.iter().filter(|a| a.offered_to_model())
    }

    pub fn get(&self, name: &str) -> Option<&Arc<AgentDefinition>> {
        self.by_name.get(name).map(|&i| &self.agents[i])
    }

    pub fn skills(&self) -> &SkillRegistry {
        &self.skills
    }

    pub fn warnings(&self) -> &[Warning] {
        &self.warnings
    }

    /// The warnings about the agent `name` (its file's caveats, a file defining the same
    /// name that was shadowed, or a rejected file that names it).
    pub fn warnings_about<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Warning> {
        self.warnings
            .iter()
            .filter(move |w| w.agent.as_deref() == Some(name))
    }

    /// When the file that defines the agent `name` was rejected: which file and why, the
    /// words both `spawn_agent` and `mcp-agents run` answer a name that is not in the
    /// catalog with.
    pub fn rejection_of(&self, name: &str) -> Option<String> {
        let warning = self
            .warnings_about(name)
            .find(|w| w.effect == Effect::Rejected)?;
        Some(format!(
            "the agent `{name}` is defined in {}, which was rejected: {}",
            warning.file.display(),
            warning.reason
        ))
    }

    /// Whether the file that defines `name` was rejected for want of a default model.
    pub fn wants_default_model(&self, name: &str) -> bool {
        self.warnings_about(name).any(Warning::wants_default_model)
    }

    /// Whether any definition or skill file was rejected.
    pub fn has_rejections(&self) -> bool {
        self.warnings.iter().any(|w| w.effect == Effect::Rejected)
    }

    /// The folders skills are read from, in precedence order, for messages.
    pub fn skill_roots() -> impl Iterator<Item = &'static str> {
        SkillRoot::ALL.iter().map(|root| root.path())
    }
}
