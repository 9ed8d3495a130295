//! The process around every command: the async runtime, the signals that stop it, and the
//! session manager wired to the real world (the process environment, child MCP servers,
//! the default retry policy and limits).

use std::process::ExitCode;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::child_mcp::SelfCommand;
use crate::definition::Catalog;
use crate::limits::ServerLimits;
use crate::providers::RetryPolicy;
use crate::sessions::{ManagerConfig, SessionManager};
use crate::spend::ServerSpend;
use crate::toolbox::EnvLookup;

/// The session manager of the server and `run` (inside the runtime): the process
/// environment for keys and children, the default retry policy and limits; built-in child
/// servers and the children's shims are started as `itself`.
pub(super) fn server_manager(
    catalog: Catalog,
    itself: SelfCommand,
    spend: Arc<ServerSpend>,
) -> Arc<SessionManager> {
    // Before any child starts: what a killed shim leaves comes back to us, and is killed as
    // it comes (SPEC §8.3).
    crate::child_mcp::become_subreaper();
    tokio::spawn(crate::child_mcp::kill_escapees_as_they_come());
    session_manager(
        catalog,
        Arc::new(|var| std::env::var(var).ok()),
        itself,
        spend,
    )
}

/// A session manager whose keys and child environments come from `env`, with the default
/// retry policy and limits, and `spend` (the server's, `run`'s and the demo's).
pub(crate) fn session_manager(
    catalog: Catalog,
    env: EnvLookup,
    itself: SelfCommand,
    spend: Arc<ServerSpend>,
) -> Arc<SessionManager> {
    SessionManager::new(
        Arc::new(catalog),
        ManagerConfig {
            env: env.clone(),
            tools: Arc::new(crate::child_mcp::ChildServers::new(env).with_self_command(itself)),
            retry: RetryPolicy::default(),
            limits: ServerLimits::default(),
            spend,
        },
    )
}

/// Runs `body` on a multi-threaded runtime, with a token that SIGINT or SIGTERM cancels.
pub(super) fn with_runtime<F, Fut>(body: F) -> ExitCode
where
    F: FnOnce(CancellationToken) -> Fut,
    Fut: std::future::Future<Output = ExitCode>,
{
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let code = runtime.block_on(async move {
        let cancel = CancellationToken::new();
        tokio::spawn(cancel_on_signal(cancel.clone()));
        body(cancel).await
    });
    // Runs are over and their children stopped; any group still listed, and what the
    // children left behind that came to this process as a subreaper, go too.
    crate::child_mcp::kill_all_groups();
    crate::child_mcp::kill_adopted();
    // The work is done (runs stopped, children shut down). A blocking read of stdin may
    // still wait for a line that never comes; dropping the runtime would wait for it.
    runtime.shutdown_background();
    code
}

/// Cancels `token` on SIGINT or SIGTERM.
async fn cancel_on_signal(token: CancellationToken) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let (Ok(mut interrupt), Ok(mut terminate)) = (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        ) else {
            return;
        };
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
    token.cancel();
}
