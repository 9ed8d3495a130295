//! `modelcontextprotocol agents [DIR] …`: the server under the original reference's spelling.

use clap::Parser;
use mcp_agents::cli::{ModelContextProtocolCli, ModelContextProtocolCommand, run};

// Only to measure them against the system allocator (docs/performance.md).
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
#[cfg(all(feature = "jemalloc", not(feature = "mimalloc")))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> std::process::ExitCode {
    let ModelContextProtocolCommand::Agents(cli) = ModelContextProtocolCli::parse().command;
    run(cli)
}
