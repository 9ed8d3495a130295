//! `mcp-agents check --servers`: each child server of every agent started as a run would
//! start it (its environment, its startup bound, MCP 2026-07-28 required), its tools listed,
//! then stopped; what fails becomes the agent's `will_fail_at_spawn` warning, as a missing
//! key does. Each configuration is started once, however many agents share it, and at most
//! [`CHECK_SERVER_STARTS`] at a time.

use std::sync::Arc;

use futures_util::StreamExt;

use super::readiness::Started;
use crate::child_mcp::{ChildServers, SelfCommand};
use crate::definition::{Catalog, ChildServerConfig};
use crate::limits::CHECK_SERVER_STARTS;
use crate::toolbox::EnvLookup;

/// Starts every distinct child server of `catalog`'s agents and says which failed, for
/// which agent.
pub(super) async fn start_servers(catalog: &Catalog, itself: SelfCommand) -> Started {
    let env: EnvLookup = Arc::new(|var| std::env::var(var).ok());
    let children = ChildServers::new(env).with_self_command(itself);
    // Each distinct (name, configuration) once, with the agents that have it.
    let mut distinct: Vec<(&str, &ChildServerConfig, Vec<&str>)> = Vec::new();
    for agent in catalog.agents() {
        for (server, config) in &agent.mcp_servers {
            match distinct
                .iter_mut()
                .find(|(name, c, _)| *name == server.as_str() && *c == config)
            {
                Some((_, _, agents)) => agents.push(agent.name.as_str()),
                None => distinct.push((server, config, vec![agent.name.as_str()])),
            }
        }
    }
    let workspace = catalog.workspace();
    let children = &children;
    let results: Vec<(usize, Result<usize, String>)> =
        futures_util::stream::iter(distinct.iter().enumerate())
            .map(|(i, (server, config, _))| async move {
                (i, children.try_start(server, config, workspace).await)
            })
            .buffer_unordered(CHECK_SERVER_STARTS)
            .collect()
            .await;
    let mut started = Started {
        servers: distinct.len(),
        ..Started::default()
    };
    for (i, result) in results {
        let Err(why) = result else { continue };
        let (server, _, agents) = &distinct[i];
        for agent in agents {
            started
                .failures
                .insert(((*agent).to_owned(), (*server).to_owned()), why.clone());
        }
    }
    started
}
