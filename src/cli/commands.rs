//! The wiring of the commands that read a workspace, between their parsed arguments and
//! their own files: the workspace opened and loaded, the warnings that concern the command
//! logged, and the options checked before anything loads.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use super::check::{Layout, run_check};
use super::exit::{EXIT_INTERRUPTED, EXIT_USAGE};
use super::probe::start_servers;
use super::readiness::Checks;
use super::run::{preflight, read_task, report_refusal, run_agent};
use super::runtime::{server_manager, with_runtime};
use super::serve::terminal_hint;
use super::terminal;
use super::warnings::Readable;
use super::{status, watch};
use crate::child_mcp::SelfCommand;
use crate::definition::{Catalog, Effect, Warning};
use crate::discovery::{LoadOptions, Workspace, load_catalog};
use crate::server::{HttpOptions, ServeOptions};
use crate::spend::ServerSpend;

/// `mcp-agents check`: the layout the flags and the terminal ask for; with `--servers`, the
/// child servers started first.
pub(super) fn check(
    dir: Option<PathBuf>,
    options: &LoadOptions,
    json: bool,
    wide: bool,
    servers: bool,
    itself: SelfCommand,
    spend: &ServerSpend,
) -> ExitCode {
    let Some(catalog) = open_and_load(dir, options) else {
        return ExitCode::from(EXIT_USAGE);
    };
    let layout = match (json, wide, terminal::stdout_columns()) {
        (true, _, _) => Layout::Json,
        (false, false, Some(width)) => Layout::Fit(width),
        (false, _, _) => Layout::Wide,
    };
    let env = |var: &str| std::env::var(var).ok();
    if !servers {
        let checks = Checks {
            spend: Some(spend),
            ..Checks::env(&env)
        };
        return run_check(&catalog, layout, &checks, spend);
    }
    with_runtime(|cancel| async move {
        let started = tokio::select! {
            () = cancel.cancelled() => return ExitCode::from(EXIT_INTERRUPTED),
            started = start_servers(&catalog, itself) => started,
        };
        let checks = Checks {
            env: &env,
            started: Some(started),
            spend: Some(spend),
        };
        run_check(&catalog, layout, &checks, spend)
    })
}

/// What `mcp-agents run` is asked to do.
pub(super) struct RunCommand {
    pub workspace: Option<PathBuf>,
    pub name: String,
    pub task: String,
    pub json: bool,
}

/// `mcp-agents run`.
pub(super) fn run(
    command: RunCommand,
    options: &LoadOptions,
    itself: SelfCommand,
    spend: Arc<ServerSpend>,
) -> ExitCode {
    let RunCommand {
        workspace,
        name,
        task,
        json,
    } = command;
    let task = match read_task(task) {
        Ok(task) => task,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let Some(catalog) = open_and_load(workspace, options) else {
        return ExitCode::from(EXIT_USAGE);
    };
    // Only what concerns this agent, when it loaded (a rejection is the error below): the
    // rest of the workspace is `check`'s.
    if catalog.get(&name).is_some() {
        for warning in catalog.warnings_about(&name) {
            log_warning(warning);
        }
    }
    if let Err(e) = preflight(&catalog, &name, &|var| std::env::var(var).ok()) {
        return report_refusal(&e, json);
    }
    with_runtime(|cancel| async move {
        let manager = server_manager(catalog, itself, spend);
        run_agent(manager, &name, &task, json, cancel).await
    })
}

/// `mcp-agents [DIR]`: the server, on stdio or, with `http`, over HTTP.
pub(super) fn serve(
    dir: Option<PathBuf>,
    options: &LoadOptions,
    http: Option<HttpOptions>,
    serving: ServeOptions,
    itself: SelfCommand,
    spend: Arc<ServerSpend>,
) -> ExitCode {
    // Checked before the catalog loads: a bad option is one line, not the last of the
    // definitions' warnings.
    let listen = match http.map(|http| http.prepare(|var| std::env::var(var).ok())) {
        Some(Ok(listen)) => Some(listen),
        Some(Err(message)) => {
            eprintln!("error: {message}");
            return ExitCode::from(EXIT_USAGE);
        }
        None => None,
    };
    let Some(catalog) = open_and_load(dir, options) else {
        return ExitCode::from(EXIT_USAGE);
    };
    log_catalog_warnings(&catalog);
    warn_when_nothing_is_offered(&catalog);
    if listen.is_none() && std::io::stdin().is_terminal() {
        eprintln!("{}", terminal_hint(&catalog));
    }
    super::serve::serve(catalog, listen, serving, itself, spend)
}

/// The catalog's warnings as the server starts; the files one default model would fix are
/// said once, as `check` says them.
fn log_catalog_warnings(catalog: &Catalog) {
    let readable = Readable::of(catalog.warnings());
    for warning in &readable.each {
        log_warning(warning);
    }
    if let Some(line) = &readable.default_model {
        tracing::warn!(target: crate::logging::REJECTED, "{line}");
    }
}

/// Says why a server offers no tools, when it offers none.
fn warn_when_nothing_is_offered(catalog: &Catalog) {
    if catalog.agents().is_empty() && catalog.has_rejections() {
        tracing::warn!(
            "no usable agent definitions in {} (the rejected ones are listed above); no tools \
             are offered",
            catalog.workspace().display()
        );
    } else if catalog.agents().is_empty() {
        tracing::warn!(
            "no agent definitions found in {} (looked in {}); no tools are offered",
            catalog.workspace().display(),
            crate::discovery::agent_roots()
                .collect::<Vec<_>>()
                .join(", ")
        );
    } else if catalog.offered().next().is_none() {
        tracing::warn!(
            "every agent in {} says a model must not pick it (Copilot's \
             `disable-model-invocation`); no tools are offered, and `mcp-agents run` runs them",
            catalog.workspace().display()
        );
    }
}

/// Logs a definition's warning: a rejected file's line starts with `rejected:`, as in
/// `check`.
fn log_warning(warning: &Warning) {
    if warning.effect == Effect::Rejected {
        tracing::warn!(target: crate::logging::REJECTED, "{warning}");
    } else {
        tracing::warn!("{warning}");
    }
}

fn open_and_load(dir: Option<PathBuf>, options: &LoadOptions) -> Option<Catalog> {
    open_workspace(dir).map(|workspace| load_catalog(&workspace, options))
}

/// `status` (with `json`: `Some`) or `watch` (`None`) for the workspace DIR names.
pub(super) fn watch(dir: Option<PathBuf>, json: Option<bool>) -> ExitCode {
    let Some(workspace) = open_workspace(dir) else {
        return ExitCode::from(EXIT_USAGE);
    };
    with_runtime(|cancel| async move {
        match json {
            Some(json) => status::run_status(workspace.path(), json).await,
            None => watch::run_watch(workspace.path(), cancel).await,
        }
    })
}

/// The workspace DIR names (default: the current directory), canonical; `None` after
/// saying why it cannot be.
fn open_workspace(dir: Option<PathBuf>) -> Option<Workspace> {
    let dir = dir.unwrap_or_else(|| PathBuf::from("."));
    match Workspace::open(&dir) {
        Ok(workspace) => Some(workspace),
        Err(message) => {
            eprintln!("error: {message}");
            None
        }
    }
}
