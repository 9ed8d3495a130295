//! `modelcontextprotocol agents [DIR] …`: the server under the original reference's spelling.

use clap::Parser;
use mcp_agents::cli::{ModelContextProtocolCli, ModelContextProtocolCommand, run};

fn main() -> std::process::ExitCode {
    let ModelContextProtocolCommand::Agents(cli) = ModelContextProtocolCli::parse().command;
    run(cli)
}
