//! `mcp-agents`: see `mcp_agents::cli`.

use clap::Parser;

fn main() -> std::process::ExitCode {
    mcp_agents::cli::run(mcp_agents::cli::Cli::parse())
}
