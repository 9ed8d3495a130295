//! The `check` command's report: a table of agents (or one JSON object) and every warning,
//! the catalog's and readiness's (what a run would miss now). `KEY` is the variable the key is
//! read from and the header it goes in; `SERVERS` (JSON `mcp_servers`) are the child servers a
//! definition configures itself;
//! `WORKSPACE` (`workspace_tools`) the tools of the built-in workspace server it gets.

use std::process::ExitCode;

use serde_json::{Value, json};

use super::exit::EXIT_REJECTED;
use super::readiness::{self, Checks, Env};
use super::terminal::wrap_words;
use super::warnings::Readable;
use crate::definition::{AgentDefinition, EndpointSource, KeyChoice, ModelOrigin, ProviderKind};
use crate::definition::{BuiltinServer, Catalog, Effect, Warning};
use crate::spend::ServerSpend;
use crate::workspace_contract::{AGENT_CONFIG_DIRS, AGENT_CONFIG_FILES};

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

/// The model column: the id the agent will really use, where it came from, and the models
/// it falls back to.
pub(super) fn model_label(definition: &AgentDefinition) -> String {
    let label = origin_label(definition);
    match definition.fallback_models.as_slice() {
        [] => label,
        fallbacks => format!("{label}, falls back to {}", fallbacks.join(", ")),
    }
}

/// The model id, and where it came from.
fn origin_label(definition: &AgentDefinition) -> String {
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

/// The asks column: whether the agent may ask its parent (SPEC §4.5), and how long a
/// question waits for the answer.
fn asks_label(definition: &AgentDefinition) -> String {
    match definition.ask_parent {
        Some(ask) => format!("parent, {} s", ask.timeout.as_secs()),
        None => "-".to_owned(),
    }
}

/// The columns of the table, and the labels of a block.
const COLUMN_COUNT: usize = 11;
const COLUMNS: [&str; COLUMN_COUNT] = [
    "NAME",
    "SOURCE",
    "FORMAT",
    "PROVIDER",
    "KEY",
    "MODEL",
    "SERVERS",
    "WORKSPACE",
    "SKILLS",
    "ASKS",
    "BUDGET",
];

/// Spaces between two columns of the table.
const GAP: usize = 2;

/// Where a block's values begin: after two spaces and the longest label (`workspace`).
const BLOCK_INDENT: usize = 2 + "workspace".len() + GAP;

/// The agents (a table, or one block per agent when the table is wider than `width`), then
/// the summary, for stdout. `width` is the terminal's; `None` (`--wide`, or stdout is not a
/// terminal) always gives the table, whatever its width.
pub(super) fn render_table(catalog: &Catalog, checks: &Checks<'_>, width: Option<usize>) -> String {
    format!(
        "{}{}",
        render_agents(catalog, checks.env, width),
        render_summary(catalog, checks, width)
    )
}

/// The agents: a table, or one block per agent (and a blank line) when the table is wider
/// than `width`.
fn render_agents(catalog: &Catalog, env: Env<'_>, width: Option<usize>) -> String {
    let rows: Vec<[String; COLUMN_COUNT]> = catalog
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
                asks_label(d),
                d.budget.summary().unwrap_or_else(|| "-".to_owned()),
            ]
        })
        .collect();
    let mut widths = COLUMNS.map(str::len);
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let table_width = widths.iter().sum::<usize>() + GAP * (widths.len() - 1);
    match width {
        _ if rows.is_empty() => String::new(),
        Some(width) if table_width > width => format!("{}\n", blocks(&rows, width)),
        _ => table(&rows, &widths),
    }
}

/// The summary line and what follows it: what agents not ready to run need, where agents
/// are when the workspace has none, and whether child servers were started.
fn render_summary(catalog: &Catalog, checks: &Checks<'_>, width: Option<usize>) -> String {
    let wrap = |text: &str| match width {
        Some(width) => format!("{}\n", wrap_words(text, width, 0).join("\n")),
        None => format!("{text}\n"),
    };
    let not_ready = readiness_warnings(catalog, checks);
    let mut out = wrap(&summary(catalog, &not_ready));
    if !not_ready.is_empty() {
        out.push_str(&wrap(
            "Agents not ready to run need the variables and commands their warnings name, \
             in the environment the MCP client starts mcp-agents in (docs/clients.md, \
             \"Keys, gateways and subscriptions\").",
        ));
    }
    if let Some(note) = changes_note(catalog) {
        out.push_str(&wrap(&note));
    }
    if let Some(hint) = servers_hint(catalog, checks) {
        out.push_str(&wrap(&hint));
    }
    if catalog.agents().is_empty()
        && let Some((dir, root)) = nearest_parent_with_agents(catalog.workspace())
    {
        out.push_str(&wrap(&format!(
            "{} has {root}: the workspace is the directory given, or the current one; \
             run `mcp-agents check {}`",
            dir.display(),
            dir.display()
        )));
    }
    out
}

/// What the agents that may change files cannot change (SPEC §8.6; issue 34): said once,
/// naming them, when there are any.
fn changes_note(catalog: &Catalog) -> Option<String> {
    let changers: Vec<&str> = catalog
        .agents()
        .iter()
        .filter(|d| {
            d.workspace_tools()
                .iter()
                .any(|tool| BuiltinServer::Workspace.changes_files(tool))
        })
        .map(|d| d.name.as_str())
        .collect();
    (!changers.is_empty()).then(|| {
        format!(
            "Agents with edit or write ({}): edit/write cannot change agent definitions, skills \
             or client configuration ({}, {} and the like), nor anything in a git directory \
             (docs/agents.md, \"What edit and write never change\").",
            changers.join(", "),
            AGENT_CONFIG_DIRS[1],
            AGENT_CONFIG_FILES[0]
        )
    })
}

/// The header and one line per agent, each column as wide as its widest cell.
fn table(rows: &[[String; COLUMN_COUNT]], widths: &[usize; COLUMN_COUNT]) -> String {
    let mut out = String::new();
    let mut line = |cells: [&str; COLUMN_COUNT]| {
        let mut text = String::new();
        for (i, cell) in cells.iter().enumerate() {
            if i + 1 == cells.len() {
                text.push_str(cell);
            } else {
                text.push_str(&format!("{cell:<w$}{:GAP$}", "", w = widths[i]));
            }
        }
        out.push_str(text.trim_end());
        out.push('\n');
    };
    line(COLUMNS);
    for row in rows {
        line(row.each_ref().map(String::as_str));
    }
    out
}

/// One block per agent, for a terminal narrower than the table: the name, then one line per
/// column (`source` joins the file and its format), each value wrapped under itself within
/// `width`; a blank line between blocks.
fn blocks(rows: &[[String; COLUMN_COUNT]], width: usize) -> String {
    let mut out = String::new();
    for (i, row) in rows.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        for line in wrap_words(&row[0], width, 0) {
            out.push_str(&line);
            out.push('\n');
        }
        let source = format!("{} ({})", row[1], row[2]);
        let fields = std::iter::once(("source", source.as_str())).chain(
            COLUMNS
                .iter()
                .zip(row)
                .skip(3)
                .map(|(label, value)| (*label, value.as_str())),
        );
        for (label, value) in fields {
            let label = format!("  {}", label.to_ascii_lowercase());
            for (n, line) in wrap_words(value, width, BLOCK_INDENT).iter().enumerate() {
                if n == 0 {
                    out.push_str(&format!("{label:<BLOCK_INDENT$}"));
                }
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}

/// Readiness warnings for every agent of `catalog`.
fn readiness_warnings(catalog: &Catalog, checks: &Checks<'_>) -> Vec<Warning> {
    readiness::warnings(
        catalog.agents().iter().map(AsRef::as_ref),
        catalog.workspace(),
        checks,
    )
}

/// After the summary: `check --servers` starts the child servers, when any agent has one of
/// its own; with it, how many were started.
fn servers_hint(catalog: &Catalog, checks: &Checks<'_>) -> Option<String> {
    match &checks.started {
        Some(started) => Some(format!(
            "Started {} MCP server{} as a run would: {} of the agents' servers failed to \
             start (their warnings say why).",
            started.servers,
            if started.servers == 1 { "" } else { "s" },
            started.failures.len()
        )),
        None => catalog
            .agents()
            .iter()
            .any(|d| d.own_servers().next().is_some())
            .then(|| {
                "`mcp-agents check --servers` starts each agent's MCP servers as a run would, \
                 and says which would fail."
                    .to_owned()
            }),
    }
}

/// `6 agents (2 not ready to run), 1 rejected file, 0 skills, 3 warnings`: rejected files
/// are counted apart from the warnings, as their lines on stderr are.
fn summary(catalog: &Catalog, not_ready: &[Warning]) -> String {
    let plural = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    let agents = catalog.agents().len();
    let rejected = catalog
        .warnings()
        .iter()
        .filter(|w| w.effect == Effect::Rejected)
        .count();
    let warnings = catalog.warnings().len() - rejected + not_ready.len();
    let mut text = if agents > 0 {
        let mut text = plural(agents, "agent");
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
    } else if rejected > 0 {
        format!("no usable agents in {}", catalog.workspace().display())
    } else {
        format!(
            "no agents found in {} (looked in {})",
            catalog.workspace().display(),
            crate::discovery::agent_roots()
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    if rejected > 0 {
        text.push_str(&format!(", {}", plural(rejected, "rejected file")));
    }
    text.push_str(&format!(
        ", {}, {}",
        plural(catalog.skills().len(), "skill"),
        plural(warnings, "warning")
    ));
    text
}

/// The closest directory above `workspace` that has an agent root, and that root: what a
/// user who ran `check` from a subdirectory of their repository meant.
fn nearest_parent_with_agents(
    workspace: &std::path::Path,
) -> Option<(&std::path::Path, &'static str)> {
    workspace.ancestors().skip(1).find_map(|dir| {
        crate::discovery::agent_roots()
            .find(|root| dir.join(root).is_dir())
            .map(|root| (dir, root))
    })
}

/// The JSON report: `{"workspace", "agents", "skills", "warnings"}`; paths are relative to
/// the workspace, and shown lossily when they are not UTF-8 (JSON strings must be).
pub(super) fn render_json(catalog: &Catalog, checks: &Checks<'_>) -> Value {
    let env = checks.env;
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
                // Tried in order when the model cannot answer (SPEC §5.1).
                "fallback_models": d.fallback_models,
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
                // Whether it may ask its parent (SPEC §4.5), and how long a question waits.
                "ask_parent": d.ask_parent.is_some(),
                "ask_timeout_s": d.ask_parent.map(|ask| ask.timeout.as_secs()),
                "skills": d.skills,
                "needs": readiness::needs(d, catalog.workspace(), checks)
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
        .chain(&readiness_warnings(catalog, checks))
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

/// `server caps: --max-tokens 2000000, --max-cost-usd $5.0000`, when a cap is set.
fn caps_line(spend: &ServerSpend) -> Option<String> {
    let caps = spend.caps();
    let tokens = caps.max_tokens.map(|max| format!("--max-tokens {max}"));
    let cost = caps.max_cost.map(|max| format!("--max-cost-usd {max}"));
    let set: Vec<String> = [tokens, cost].into_iter().flatten().collect();
    (!set.is_empty()).then(|| format!("server caps: {}", set.join(", ")))
}

/// How `check` lays out its report on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Layout {
    /// The table within this many columns, or one block per agent when it is wider.
    Fit(usize),
    /// The whole table, however wide (`--wide`, or stdout is not a terminal).
    Wide,
    Json,
}

/// Prints the report and the warnings (a rejected file's line starts with `rejected:`; the
/// files one default model would fix are named in one line); exits 1 when a definition was
/// rejected (a run that would fail now does not change the status: the server's
/// environment may differ). On a terminal the warnings follow the agents, grouped under
/// their file and wrapped, and the summary ends the report; elsewhere each is one line on
/// stderr, before the report.
/// The report, and the server's spend caps (SPEC §5.1): under `server` in the JSON, a line
/// after the table when a cap is set.
pub(super) fn run_check(
    catalog: &Catalog,
    layout: Layout,
    checks: &Checks<'_>,
    spend: &ServerSpend,
) -> ExitCode {
    let readiness = readiness_warnings(catalog, checks);
    let readable = Readable::of(catalog.warnings().iter().chain(&readiness));
    match layout {
        Layout::Fit(width) => {
            use std::io::Write;
            print!("{}", render_agents(catalog, checks.env, Some(width)));
            let _ = std::io::stdout().flush();
            let grouped = readable.grouped(width);
            if !grouped.is_empty() {
                eprintln!("{grouped}");
            }
            print!("{}", render_summary(catalog, checks, Some(width)));
        }
        Layout::Wide | Layout::Json => {
            for line in readable.lines() {
                eprintln!("{line}");
            }
            match layout {
                Layout::Json => {
                    let mut report = render_json(catalog, checks);
                    report["server"] = spend.report();
                    println!("{report:#}");
                }
                _ => print!("{}", render_table(catalog, checks, None)),
            }
        }
    }
    if layout != Layout::Json
        && let Some(caps) = caps_line(spend)
    {
        println!("{caps}");
    }
    if catalog.has_rejections() {
        ExitCode::from(EXIT_REJECTED)
    } else {
        ExitCode::SUCCESS
    }
}
