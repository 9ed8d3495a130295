//! The `check` command's report: a table of agents (or one JSON object) and every warning,
//! the catalog's and readiness's (what a run would miss now). `KEY` is the variable the key is
//! read from and the header it goes in; `SERVERS` (JSON `mcp_servers`) are the child servers a
//! definition configures itself;
//! `WORKSPACE` (`workspace_tools`) the tools of the built-in workspace server it gets.

use std::process::ExitCode;

use serde_json::{Value, json};

use super::exit::EXIT_REJECTED;
use super::readiness::{self, Env};
use crate::definition::{AgentDefinition, EndpointSource, KeyChoice, ModelOrigin, ProviderKind};
use crate::definition::{Catalog, Effect, Warning};

/// The variable a run of `definition` would read its key from now, and its header.
fn key_choice(definition: &AgentDefinition, env: Env<'_>) -> KeyChoice {
    definition
        .provider
        .key_choice(|var| env(var).is_some_and(|v| !v.trim().is_empty()))
}

/// The key column: the variable and the header, never the value.
fn key_label(choice: &KeyChoice) -> String {
    format!("{} ({})", choice.var, choice.auth.as_str())
}

/// The model column: the id the agent will really use, and where it came from.
pub(super) fn model_label(definition: &AgentDefinition) -> String {
    let model = &definition.model;
    match &model.origin {
        ModelOrigin::Explicit => model.id.clone(),
        ModelOrigin::ClaudeAlias { alias, env: None } => format!("{} ({alias})", model.id),
        ModelOrigin::ClaudeAlias {
            alias,
            env: Some(var),
        } => format!("{} ({alias} via {var})", model.id),
        ModelOrigin::ServerDefault => format!("{} (server default)", model.id),
        ModelOrigin::Translated { written } => format!("{} (from {written})", model.id),
    }
}

/// The provider column: the kind, the endpoint when it is not the built-in one (with the
/// variable it came from when that was the environment), and the wire API when it is not the
/// provider's own (`openai (chat-completions)`; a custom provider always shows it).
fn provider_label(definition: &AgentDefinition) -> String {
    let provider = &definition.provider;
    // The host and port only: the rest of a URL is not for display (crate::redact).
    let host = match (provider.base_url.host_str(), provider.base_url.port()) {
        (Some(host), Some(port)) => format!("{host}:{port}"),
        (host, None) => host.unwrap_or("?").to_owned(),
        (None, Some(_)) => "?".to_owned(),
    };
    let own_wire = provider.kind.defaults().map(|(_, _, wire)| wire);
    let wire = (own_wire != Some(provider.wire_api)).then_some(provider.wire_api.as_str());
    let and_wire = wire.map_or(String::new(), |w| format!(", {w}"));
    match (provider.kind, &provider.base_url_source) {
        (ProviderKind::Custom, _) => format!("custom ({host}, {})", provider.wire_api.as_str()),
        (kind, EndpointSource::BuiltIn) => match wire {
            Some(wire) => format!("{kind} ({wire})"),
            None => kind.as_str().to_owned(),
        },
        (kind, EndpointSource::Definition) => format!("{kind} ({host}{and_wire})"),
        (kind, EndpointSource::Environment(var)) => {
            format!("{kind} ({host} via {var}{and_wire})")
        }
    }
}

fn list_or_dash<'a>(items: impl Iterator<Item = &'a String>) -> String {
    let joined = items.map(String::as_str).collect::<Vec<_>>().join(", ");
    if joined.is_empty() {
        "-".to_owned()
    } else {
        joined
    }
}

/// The workspace column: the built-in workspace server's tools the agent gets.
fn workspace_label(definition: &AgentDefinition) -> String {
    let tools = definition.workspace_tools();
    if tools.is_empty() {
        "-".to_owned()
    } else {
        tools.join(", ")
    }
}

/// The agents table and a summary line, for stdout.
pub(super) fn render_table(catalog: &Catalog, env: Env<'_>) -> String {
    let header = [
        "NAME",
        "SOURCE",
        "FORMAT",
        "PROVIDER",
        "KEY",
        "MODEL",
        "SERVERS",
        "WORKSPACE",
        "SKILLS",
        "BUDGET",
    ];
    let rows: Vec<[String; 10]> = catalog
        .agents()
        .iter()
        .map(|d| {
            [
                d.name.clone(),
                d.source.path.display().to_string(),
                d.source.format.to_string(),
                provider_label(d),
                key_label(&key_choice(d, env)),
                model_label(d),
                list_or_dash(d.own_servers()),
                workspace_label(d),
                list_or_dash(d.skills.iter()),
                d.budget.summary().unwrap_or_else(|| "-".to_owned()),
            ]
        })
        .collect();
    let mut widths = header.map(str::len);
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let mut line = |cells: &[&str]| {
        let mut text = String::new();
        for (i, cell) in cells.iter().enumerate() {
            if i + 1 == cells.len() {
                text.push_str(cell);
            } else {
                text.push_str(&format!("{cell:<w$}  ", w = widths[i]));
            }
        }
        out.push_str(text.trim_end());
        out.push('\n');
    };
    if !rows.is_empty() {
        line(&header);
        for row in &rows {
            line(&row.each_ref().map(String::as_str));
        }
    }
    let not_ready = readiness_warnings(catalog, env);
    out.push_str(&summary(catalog, &not_ready));
    out.push('\n');
    if !not_ready.is_empty() {
        out.push_str(
            "Agents not ready to run need the variables and commands their warnings name, \
             in the environment the MCP client starts mcp-agents in (docs/clients.md, \
             \"Keys, gateways and subscriptions\").\n",
        );
    }
    if rows.is_empty()
        && let Some((dir, root)) = nearest_parent_with_agents(catalog.workspace())
    {
        out.push_str(&format!(
            "{} has {root}: the workspace is the directory given, or the current one; \
             run `mcp-agents check {}`\n",
            dir.display(),
            dir.display()
        ));
    }
    out
}

/// Readiness warnings for every agent of `catalog`.
fn readiness_warnings(catalog: &Catalog, env: Env<'_>) -> Vec<Warning> {
    readiness::warnings(
        catalog.agents().iter().map(AsRef::as_ref),
        catalog.workspace(),
        env,
    )
}

fn summary(catalog: &Catalog, not_ready: &[Warning]) -> String {
    let agents = catalog.agents().len();
    let warnings = catalog.warnings().len() + not_ready.len();
    let skills = catalog.skills().len();
    let rejected = catalog
        .warnings()
        .iter()
        .filter(|w| w.effect == Effect::Rejected)
        .count();
    let mut text = if agents == 0 {
        format!(
            "no agents found in {} (looked in {})",
            catalog.workspace().display(),
            Catalog::agent_roots().collect::<Vec<_>>().join(", ")
        )
    } else {
        let mut text = format!("{agents} agent{}", if agents == 1 { "" } else { "s" });
        if !not_ready.is_empty() {
            text.push_str(&format!(" ({} not ready to run)", not_ready.len()));
        }
        let hand_only = agents - catalog.offered().count();
        if hand_only > 0 {
            text.push_str(&format!(
                " ({hand_only} not offered to the parent model: `mcp-agents run` only)"
            ));
        }
        text
    };
    text.push_str(&format!(
        ", {skills} skill{}, {warnings} warning{}",
        if skills == 1 { "" } else { "s" },
        if warnings == 1 { "" } else { "s" }
    ));
    if rejected > 0 {
        text.push_str(&format!(
            " ({rejected} file{} rejected)",
            if rejected == 1 { "" } else { "s" }
        ));
    }
    text
}

/// The closest directory above `workspace` that has an agent root, and that root: what a
/// user who ran `check` from a subdirectory of their repository meant.
fn nearest_parent_with_agents(
    workspace: &std::path::Path,
) -> Option<(&std::path::Path, &'static str)> {
    workspace.ancestors().skip(1).find_map(|dir| {
        Catalog::agent_roots()
            .find(|root| dir.join(root).is_dir())
            .map(|root| (dir, root))
    })
}

/// The JSON report: `{"workspace", "agents", "skills", "warnings"}`; paths are relative to
/// the workspace, and shown lossily when they are not UTF-8 (JSON strings must be).
pub(super) fn render_json(catalog: &Catalog, env: Env<'_>) -> Value {
    let agents: Vec<Value> = catalog
        .agents()
        .iter()
        .map(|d| {
            let (origin, alias, written) = match &d.model.origin {
                ModelOrigin::Explicit => ("explicit", None, None),
                ModelOrigin::ClaudeAlias { alias, .. } => ("alias", Some(alias.as_str()), None),
                ModelOrigin::ServerDefault => ("server-default", None, None),
                ModelOrigin::Translated { written } => ("translated", None, Some(written)),
            };
            let key = key_choice(d, env);
            json!({
                "name": d.name,
                "description": d.description,
                "file": d.source.path.to_string_lossy(),
                "format": d.source.format.as_str(),
                "provider": d.provider.kind.as_str(),
                "base_url": d.provider.base_url.as_str(),
                "base_url_source": d.provider.base_url_source.label(),
                "wire_api": d.provider.wire_api.as_str(),
                "env_key": d.provider.env_key,
                "key_variable": key.var,
                "auth": key.auth.as_str(),
                "model": d.model.id,
                "model_origin": origin,
                "model_alias": alias,
                // The model as another tool's file wrote it, for a translated one.
                "model_written": written,
                "max_turns": d.max_turns,
                // What each request asks for: the definition's, else the model's default.
                "max_output_tokens": d
                    .max_output_tokens
                    .unwrap_or_else(|| crate::providers::default_max_output_tokens(&d.model.id)),
                // The budget each run really gets: the server's defaults applied.
                "max_tool_calls": d.budget.max_tool_calls,
                "max_run_tokens": d.budget.max_run_tokens,
                "max_run_seconds": d.budget.max_run_seconds,
                "output_schema": d.output_schema.as_ref().map(|s| s.json()),
                "sandbox": d.sandbox.as_str(),
                // False for an agent only a person may start (`mcp-agents run`): its file
                // says a model must not pick it (`hand_only`, as written).
                "offered_to_model": d.offered_to_model(),
                "hand_only": d.hand_only,
                "mcp_servers": d.own_servers().collect::<Vec<_>>(),
                "workspace_tools": d.workspace_tools(),
                "skills": d.skills,
                "needs": readiness::needs(d, catalog.workspace(), env)
                    .iter()
                    .map(readiness::Need::to_json)
                    .collect::<Vec<_>>(),
            })
        })
        .collect();
    let skills: Vec<Value> = catalog
        .skills()
        .iter()
        .map(|s| json!({"name": s.name, "description": s.description, "file": s.path.to_string_lossy()}))
        .collect();
    let warnings: Vec<Value> = catalog
        .warnings()
        .iter()
        .chain(&readiness_warnings(catalog, env))
        .map(|w| {
            json!({
                "file": w.file.to_string_lossy(),
                "reason": w.reason,
                "effect": w.effect.as_str(),
                "agent": w.agent,
            })
        })
        .collect();
    json!({
        "workspace": catalog.workspace().to_string_lossy(),
        "agents": agents,
        "skills": skills,
        "warnings": warnings,
    })
}

/// Prints the warnings, then the report; exits 1 when a definition was rejected (a run
/// that would fail now does not change the status: the server's environment may differ).
pub(super) fn run_check(catalog: &Catalog, json: bool, env: Env<'_>) -> ExitCode {
    for warning in catalog
        .warnings()
        .iter()
        .chain(&readiness_warnings(catalog, env))
    {
        eprintln!("warning: {warning}");
    }
    if json {
        println!("{:#}", render_json(catalog, env));
    } else {
        print!("{}", render_table(catalog, env));
    }
    if catalog.has_rejections() {
        ExitCode::from(EXIT_REJECTED)
    } else {
        ExitCode::SUCCESS
    }
}
