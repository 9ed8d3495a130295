//! `mcp-agents [DIR]`: serving MCP on stdio or streamable HTTP until the client goes away
//! or a signal arrives, then stopping every run within the shutdown bound; and the child
//! servers this program also is (`workspace-tools`, the hidden `fixture-server`).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use super::runtime::{server_manager, with_runtime};
use crate::child_mcp::SelfCommand;
use crate::definition::Catalog;
use crate::limits::SERVER_SHUTDOWN_BOUND;
use crate::server::{Listen, ServeOptions};
use crate::spend::ServerSpend;
use crate::status::{ServerInfo, StatusSocket};

/// Runs the server until the client goes away or a signal arrives, then stops every run.
pub(super) fn serve(
    catalog: Catalog,
    http: Option<Listen>,
    options: ServeOptions,
    itself: SelfCommand,
    spend: Arc<ServerSpend>,
) -> ExitCode {
    // From here on the client may not read our stderr: nothing may wait for it.
    crate::console::queue_from_now();
    let code = with_runtime(|shutdown| async move {
        let manager = server_manager(catalog, itself, spend);
        let transport = if http.is_some() { "http" } else { "stdio" };
        let info = ServerInfo::new(&manager, transport);
        // Removed when dropped, at the end of this body, whichever way the server stops.
        let status = match StatusSocket::start(manager.clone(), info.clone()) {
            Ok(socket) => Some(socket),
            Err(reason) => {
                tracing::warn!(
                    "no status socket, so `mcp-agents watch` cannot see this server: {reason}"
                );
                None
            }
        };
        // A signal stops the runs and answers pending waits at once, so the transport can
        // close; the HTTP server then gets the shutdown bound to finish.
        tokio::spawn({
            let (manager, shutdown) = (manager.clone(), shutdown.clone());
            async move {
                shutdown.cancelled().await;
                manager.begin_shutdown();
            }
        });
        let served = match http {
            Some(listen) => tokio::select! {
                served = crate::server::serve_http(
                    manager.clone(),
                    options,
                    listen,
                    shutdown.clone(),
                    |addr| {
                        info.set_url(format!("http://{addr}/mcp"));
                        crate::console::line(&format!("mcp-agents: serving MCP at http://{addr}/mcp"));
                    },
                ) => served,
                () = async {
                    shutdown.cancelled().await;
                    tokio::time::sleep(SERVER_SHUTDOWN_BOUND).await;
                } => Ok(()),
            },
            None => tokio::select! {
                served = crate::server::serve_stdio(manager.clone(), options) => served,
                () = shutdown.cancelled() => Ok(()),
            },
        };
        manager.shutdown(SERVER_SHUTDOWN_BOUND).await;
        drop(status);
        match served {
            Ok(()) => ExitCode::SUCCESS,
            Err(message) => {
                crate::console::line(&format!("error: {message}"));
                ExitCode::FAILURE
            }
        }
    });
    crate::console::flush();
    code
}

/// The one line the stdio server prints when started by hand on a terminal (SPEC §2): what
/// it waits for, and how to try it instead.
pub(super) fn terminal_hint(catalog: &Catalog) -> String {
    let agents = catalog.agents().len();
    format!(
        "mcp-agents: serving MCP on stdio for {} ({agents} agent{}); this waits for an MCP \
         client on standard input (Ctrl-C stops it). To try it by hand: `mcp-agents demo`, or \
         `mcp-agents run NAME TASK`; to add it to Claude Code: `claude mcp add --scope \
         project agents -- mcp-agents`",
        catalog.workspace().display(),
        if agents == 1 { "" } else { "s" }
    )
}

/// `mcp-agents workspace-tools DIR`: the built-in workspace server (SPEC §8.6) on stdio.
pub(super) fn run_workspace_tools(dir: PathBuf) -> ExitCode {
    until_signal(async move { crate::workspace::serve_stdio(&dir).await })
}

/// The hidden `mcp-agents fixture-server`.
pub(super) fn run_fixture(options: crate::testkit::FixtureOptions) -> ExitCode {
    until_signal(crate::testkit::run_fixture_server(options))
}

/// Runs a child server until it ends or a signal arrives.
fn until_signal(server: impl Future<Output = Result<(), String>>) -> ExitCode {
    with_runtime(|cancel| async move {
        // The runtime's signal handlers replace the default action, so a signal must end
        // the server here.
        let served = tokio::select! {
            served = server => served,
            () = cancel.cancelled() => Ok(()),
        };
        match served {
            Ok(()) => ExitCode::SUCCESS,
            Err(message) => {
                eprintln!("error: {message}");
                ExitCode::FAILURE
            }
        }
    })
}
