//! What the registry answers when a call cannot be done (SPEC §4, §11): each refusal names
//! what was wrong and what to do instead, so a parent model can act on it without guessing.

use crate::definition::{AgentDefinition, Catalog};
use crate::error::{AgentError, ErrorCode};
use crate::limits::{ServerLimits, UNKNOWN_AGENT_IDS_LISTED};

/// The rule for every text the tools take (a task, a message, a name, an id): it must hold
/// more than whitespace. The tools' argument checks and `mcp-agents run` both come here.
pub fn require_text(field: &str, text: &str) -> Result<(), AgentError> {
    if text.trim().is_empty() {
        return Err(AgentError::new(
            ErrorCode::InvalidInput,
            format!("`{field}` must not be empty"),
        ));
    }
    Ok(())
}

/// `spawn_agent` names no agent of `catalog`. A file that defines the name was rejected:
/// say which and why, in the words `mcp-agents run` uses (SPEC §4.1); else list the agents.
pub(super) fn no_agent_named(catalog: &Catalog, name: &str) -> AgentError {
    if let Some(rejected) = catalog.rejection_of(name) {
        return AgentError::new(ErrorCode::UnknownAgent, rejected);
    }
    let names: Vec<&str> = catalog.offered().map(|a| a.name.as_str()).collect();
    let known = if names.is_empty() {
        "this workspace has no usable agents".to_owned()
    } else {
        format!("the agents are: {}", names.join(", "))
    };
    let rejected = if catalog.has_rejections() {
        "; some definition files were rejected (`mcp-agents check` says why)"
    } else {
        ""
    };
    AgentError::new(
        ErrorCode::UnknownAgent,
        format!("there is no agent named `{name}`; {known}{rejected}"),
    )
}

/// A session the registry holds, as `unknown_agent` lists it: its recency, id and name.
pub(super) type Held<'a> = (u64, &'a str, &'a str);

/// `unknown_agent` for `missing`, listing the ids still `held` (SPEC §4.3), the most
/// recently used first, so a parent that lost track of its agents can find them again.
pub(super) fn unknown_ids(
    mut held: Vec<Held<'_>>,
    missing: &[&str],
    limits: &ServerLimits,
) -> AgentError {
    held.sort_by(|a, b| b.cmp(a));
    let listed: Vec<String> = held
        .iter()
        .take(UNKNOWN_AGENT_IDS_LISTED)
        .map(|(_, id, name)| format!("{id} ({name})"))
        .collect();
    let holding = match held.len() {
        0 => "no agents are held now".to_owned(),
        n if n > listed.len() => format!(
            "the {} most recently used of the {n} agents held now are: {}",
            listed.len(),
            listed.join(", ")
        ),
        _ => format!("the agents held now are: {}", listed.join(", ")),
    };
    AgentError::new(
        ErrorCode::UnknownAgent,
        format!(
            "no agent has the id {}; {holding}. Ids are valid until the server restarts, \
             and a finished agent is forgotten once {} newer ones have finished (or sooner \
             when the finished agents' histories together pass {} MiB)",
            missing.join(", "),
            limits.retained_terminal,
            limits.retained_history_bytes / (1024 * 1024)
        ),
    )
}

/// Every run permit is taken.
pub(super) fn at_capacity(limits: &ServerLimits) -> AgentError {
    AgentError::new(
        ErrorCode::CapacityExceeded,
        format!(
            "{} agents are already running, the most this server runs at once; wait for one \
             to finish (wait_agent) and try again",
            limits.concurrent_runs
        ),
    )
}

/// Agent `short_id` holds as much queued input as it may.
pub(super) fn queue_full(short_id: &str, queued: usize) -> AgentError {
    AgentError::new(
        ErrorCode::QueueFull,
        format!(
            "agent {short_id} already has {queued} queued inputs, the most it holds; wait for \
             it to take them (wait_agent) before sending more"
        ),
    )
}

/// An answer to question `question` of agent `short_id`, which is not pending (SPEC §4.5).
pub(super) fn no_question(short_id: &str, question: u64) -> AgentError {
    AgentError::new(
        ErrorCode::InvalidInput,
        format!(
            "agent {short_id} is not waiting for an answer to question {question}: it was \
             answered already, no answer came in time, or its run ended"
        ),
    )
}

/// `definition` preloads the skill `name`, which no skill root defines.
pub(super) fn skill_missing(definition: &AgentDefinition, name: &str) -> AgentError {
    AgentError::new(
        ErrorCode::SkillNotFound,
        format!(
            "agent `{}` preloads the skill `{name}`, which no skill root defines ({}); add it \
             or remove it from the definition, then restart the server",
            definition.name,
            Catalog::skill_roots().collect::<Vec<_>>().join(", ")
        ),
    )
}
