//! The `check` command's report: a table of agents (or one JSON object) and every warning.

use std::process::ExitCode;

use serde_json::{Value, json};

use super::exit::EXIT_REJECTED;
use crate::definition::{AgentDefinition, ModelOrigin, ProviderKind};
use crate::definition::{Catalog, Effect};

/// The model column: the id the agent will really use, and where it came from.
pub fn model_label(definition: &AgentDefinition) -> String {
    let model = &definition.model;
    match &model.origin {
        ModelOrigin::Explicit => model.id.clone(),
        ModelOrigin::ClaudeAlias { alias, env: None } => format!("{} ({alias})", model.id),
        ModelOrigin::ClaudeAlias {
            alias,
            env: Some(var),
        } => format!("{} ({alias} via {var})", model.id),
        ModelOrigin::ServerDefault => format!("{} (server default)", model.id),
    }
}

fn provider_label(definition: &AgentDefinition) -> String {
    let provider = &definition.provider;
    match provider.kind {
        ProviderKind::Custom => format!(
            "custom ({}, {})",
            provider.base_url.host_str().unwrap_or("?"),
            provider.wire_api.as_str()
        ),
        kind => kind.as_str().to_owned(),
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

/// The agents table and a summary line, for stdout.
pub fn render_table(catalog: &Catalog) -> String {
    let header = [
        "NAME", "SOURCE", "FORMAT", "PROVIDER", "MODEL", "SERVERS", "SKILLS", "BUDGET",
    ];
    let rows: Vec<[String; 8]> = catalog
        .agents()
        .iter()
        .map(|d| {
            [
                d.name.clone(),
                d.source.path.display().to_string(),
                d.source.format.to_string(),
                provider_label(d),
                model_label(d),
                list_or_dash(d.mcp_servers.keys()),
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
    out.push_str(&summary(catalog));
    out.push('\n');
    out
}

fn summary(catalog: &Catalog) -> String {
    let agents = catalog.agents().len();
    let skills = catalog.skills().len();
    let rejected = catalog
        .warnings()
        .iter()
        .filter(|w| w.effect == Effect::Rejected)
        .count();
    let mut text = if agents == 0 {
        format!(
            "no agents found (looked in {})",
            Catalog::agent_roots().collect::<Vec<_>>().join(", ")
        )
    } else {
        format!("{agents} agent{}", if agents == 1 { "" } else { "s" })
    };
    text.push_str(&format!(
        ", {skills} skill{}, {} warning{}",
        if skills == 1 { "" } else { "s" },
        catalog.warnings().len(),
        if catalog.warnings().len() == 1 {
            ""
        } else {
            "s"
        }
    ));
    if rejected > 0 {
        text.push_str(&format!(
            " ({rejected} file{} rejected)",
            if rejected == 1 { "" } else { "s" }
        ));
    }
    text
}

/// The JSON report: `{"workspace", "agents", "skills", "warnings"}`; paths are relative to
/// the workspace, and shown lossily when they are not UTF-8 (JSON strings must be).
pub fn render_json(catalog: &Catalog) -> Value {
    let agents: Vec<Value> = catalog
        .agents()
        .iter()
        .map(|d| {
            let (origin, alias) = match &d.model.origin {
                ModelOrigin::Explicit => ("explicit", None),
                ModelOrigin::ClaudeAlias { alias, .. } => ("alias", Some(alias.as_str())),
                ModelOrigin::ServerDefault => ("server-default", None),
            };
            json!({
                "name": d.name,
                "description": d.description,
                "file": d.source.path.to_string_lossy(),
                "format": d.source.format.as_str(),
                "provider": d.provider.kind.as_str(),
                "base_url": d.provider.base_url.as_str(),
                "wire_api": d.provider.wire_api.as_str(),
                "env_key": d.provider.env_key,
                "model": d.model.id,
                "model_origin": origin,
                "model_alias": alias,
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
                "mcp_servers": d.mcp_servers.keys().collect::<Vec<_>>(),
                "skills": d.skills,
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
        .map(|w| json!({"file": w.file.to_string_lossy(), "reason": w.reason, "effect": w.effect.as_str()}))
        .collect();
    json!({
        "workspace": catalog.workspace().to_string_lossy(),
        "agents": agents,
        "skills": skills,
        "warnings": warnings,
    })
}

/// Prints the warnings, then the report; exits 1 when a definition was rejected.
pub fn run_check(catalog: &Catalog, json: bool) -> ExitCode {
    for warning in catalog.warnings() {
        eprintln!("warning: {warning}");
    }
    if json {
        println!("{:#}", render_json(catalog));
    } else {
        print!("{}", render_table(catalog));
    }
    if catalog.has_rejections() {
        ExitCode::from(EXIT_REJECTED)
    } else {
        ExitCode::SUCCESS
    }
}
