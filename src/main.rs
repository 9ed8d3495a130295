//! `mcp-agents`: see `mcp_agents::cli`.

use clap::Parser;

// Only to measure them against the system allocator (docs/performance.md).
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
#[cfg(all(feature = "jemalloc", not(feature = "mimalloc")))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> std::process::ExitCode {
    mcp_agents::cli::run(mcp_agents::cli::Cli::parse())
}
