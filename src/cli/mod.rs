//! The command line (SPEC §2), shared by `mcp-agents` and `modelcontextprotocol agents`.
//!
//! | file | job |
//! | --- | --- |
//! | `exit` | the exit statuses |
//! | `commands` | the wiring of `check`, `run` and the server: the workspace loaded, its warnings |
//! | `runtime` | the async runtime, signals, and the session manager wired to the process |
//! | `serve` | `mcp-agents [DIR]`: the stdio or HTTP server |
//! | `check` | `mcp-agents check`: the table and JSON report |
//! | `readiness` | what a run of each agent would miss now, for `check` |
//! | `probe` | `check --servers`: each agent's child servers started as a run would |
//! | `warnings` | the warnings as a person reads them: grouped by file, default-model rejections said once |
//! | `run` | `mcp-agents run`: one subagent from a terminal, with live activity |
//! | `status_line` | `run`'s live status line on a terminal |
//! | `terminal` | the terminal's width, which `check`, the demo and the status line fit, and words wrapped to it |
//! | `demo` | `mcp-agents demo`: the offline demo |
//! | `status` | `mcp-agents status`: every server running for a workspace, a line per agent |
//! | `watch` | `mcp-agents watch`: the live full-screen view, with stop |
//! | `watch_model` | what the watch shows and what its keys do, apart from the terminal |
//! | `watch_draw` | drawing the watch with `ratatui`: columns fitted to the width, the detail |

mod check;
mod commands;
mod demo;
mod exit;
mod probe;
mod question;
mod readiness;
mod run;
mod runtime;
mod serve;
mod status;
mod status_line;
mod terminal;
mod warnings;
mod watch;
mod watch_draw;
mod watch_model;

pub use demo::{EXAMPLE_WORKSPACE, RESULT as DEMO_RESULT};

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use crate::child_mcp::SelfCommand;
use crate::definition::{ModelAllowList, RunBudget};
use crate::discovery::{DefaultModel, LoadOptions};
use crate::server::{HttpOptions, ServeOptions};
use crate::spend::{PriceTable, ServerSpend, SpendCaps, Usd};
use commands::RunCommand;
use runtime::with_runtime;

const ABOUT: &str = "An MCP server that lets any MCP client delegate focused tasks to \
subagents defined in the workspace's .agents/agents, .claude/agents, .codex/agents and \
.opencode/agents files.";

/// `mcp-agents [DIR] [OPTIONS]` or `mcp-agents check [DIR] [--json]`.
#[derive(Debug, Parser)]
#[command(
    name = "mcp-agents",
    version,
    about = ABOUT,
    args_conflicts_with_subcommands = true,
    after_help = "Examples:\n  \
        mcp-agents demo                            try it offline, no key needed\n  \
        mcp-agents check                           list the agents this directory defines\n  \
        mcp-agents                                 serve MCP on stdio (what a client launches)\n  \
        mcp-agents . --http 127.0.0.1:8765         serve http://127.0.0.1:8765/mcp\n  \
        mcp-agents run reviewer \"Review PR 12\"     run one agent from the terminal\n  \
        mcp-agents watch                           watch the agents of the servers running here\n\n\
        Logs and warnings go to stderr; RUST_LOG sets their level (default: warn). \
        Configuring clients: docs/clients.md. Writing agents: docs/agents.md."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,

    /// Workspace to serve (default: the current directory)
    #[arg(value_name = "DIR")]
    pub dir: Option<PathBuf>,

    /// The workspace, as an option (the same as DIR)
    #[arg(long = "workspace", value_name = "DIR", conflicts_with = "dir")]
    pub workspace: Option<PathBuf>,

    /// Serve streamable HTTP at http://ADDR/mcp instead of stdio (ADDR is HOST:PORT;
    /// a non-loopback HOST needs --auth-token-env)
    #[arg(long, value_name = "ADDR")]
    pub http: Option<String>,

    /// With --http: require `Authorization: Bearer <value of VAR>` on every request
    #[arg(long, value_name = "VAR", requires = "http")]
    pub auth_token_env: Option<String>,

    /// Serve the MCP tasks extension: a client that declares it (interactive Claude Code)
    /// gets spawn_agent as a background task and is told the result when the agent ends
    #[arg(long, env = "MCP_AGENTS_MCP_TASKS", value_parser = clap::builder::BoolishValueParser::new(),
          action = clap::ArgAction::SetTrue)]
    pub mcp_tasks: bool,

    #[command(flatten)]
    pub common: CommonOptions,
}

/// Options every command takes.
#[derive(Debug, Args)]
pub struct CommonOptions {
    /// Model for definitions that use their parent's model (Claude `model: inherit` or no
    /// model, Codex and OpenCode files without a model); PROVIDER is openai, anthropic or
    /// gemini, and a Claude alias (sonnet, opus, haiku, fable) stands for anthropic/ALIAS
    #[arg(
        long,
        global = true,
        env = "MCP_AGENTS_DEFAULT_MODEL",
        value_name = "PROVIDER/MODEL"
    )]
    pub default_model: Option<DefaultModel>,

    /// Most child tool calls one run may make; definitions may set less, not more
    #[arg(long, global = true, env = "MCP_AGENTS_MAX_TOOL_CALLS", value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_tool_calls: Option<u32>,

    /// Most tokens (input and output, as the provider reports them) one run may use;
    /// definitions may set less, not more
    #[arg(long, global = true, env = "MCP_AGENTS_MAX_RUN_TOKENS", value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_run_tokens: Option<u32>,

    /// Most wall-clock seconds one run may take; definitions may set less, not more
    #[arg(long, global = true, env = "MCP_AGENTS_MAX_RUN_SECONDS", value_name = "SECONDS",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_run_seconds: Option<u32>,

    /// The models this server may run: PROVIDER/MODEL globs separated by commas, `*`
    /// matching any characters (openai/gpt-5*,anthropic/claude-haiku-*); a definition whose
    /// model is outside is rejected, a fallback outside is dropped
    #[arg(
        long,
        global = true,
        env = "MCP_AGENTS_ALLOW_MODELS",
        value_name = "PATTERN,..."
    )]
    pub allow_models: Option<ModelAllowList>,

    /// Most tokens the whole server may use over its life, every run together (input with
    /// cache reads and writes, and output); a definition cannot lift it
    #[arg(long, global = true, env = "MCP_AGENTS_MAX_TOKENS", value_name = "N",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_tokens: Option<u64>,

    /// Most US dollars the whole server may spend over its life, at the models' prices;
    /// an agent whose model has no price cannot be spawned under it
    #[arg(long, global = true, env = "MCP_AGENTS_MAX_COST_USD", value_name = "USD",
          value_parser = parse_dollars)]
    pub max_cost_usd: Option<Usd>,

    /// Prices that add to or override the built-in ones, in the format of LiteLLM's
    /// model_prices_and_context_window.json
    #[arg(long, global = true, env = "MCP_AGENTS_PRICES", value_name = "FILE")]
    pub prices: Option<PathBuf>,
}

/// `--max-cost-usd`: an amount of dollars above zero (`5`, `0.50`).
fn parse_dollars(text: &str) -> Result<Usd, String> {
    match text.trim().parse::<f64>() {
        Ok(dollars) if dollars.is_finite() && dollars > 0.0 => Ok(Usd::from_dollars(dollars)),
        _ => Err(format!(
            "`{text}` is not an amount of US dollars above zero, such as 5 or 0.50"
        )),
    }
}

impl CommonOptions {
    /// The server's spend caps and prices (SPEC §5.1); the error names a `--prices` file
    /// that cannot be read.
    pub fn spend(&self) -> Result<ServerSpend, String> {
        let prices = match &self.prices {
            Some(path) => PriceTable::with_file(path)?,
            None => PriceTable::builtin(),
        };
        let caps = SpendCaps {
            max_tokens: self.max_tokens,
            max_cost: self.max_cost_usd,
        };
        Ok(ServerSpend::new(caps, prices))
    }

    /// The server's run budget.
    pub fn budget(&self) -> RunBudget {
        RunBudget {
            max_tool_calls: self.max_tool_calls,
            max_run_tokens: self.max_run_tokens,
            max_run_seconds: self.max_run_seconds,
        }
    }
}

/// The workspace a command looks at: DIR, or `--workspace DIR`.
#[derive(Debug, Args)]
pub struct WorkspaceDir {
    /// The workspace (default: the current directory)
    #[arg(value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// The workspace, as an option (the same as DIR)
    #[arg(long = "workspace", value_name = "DIR", conflicts_with = "dir")]
    pub workspace: Option<PathBuf>,
}

impl WorkspaceDir {
    fn path(self) -> Option<PathBuf> {
        self.dir.or(self.workspace)
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Load the catalog exactly as the server would; print each agent and every warning.
    /// Exits with 1 when any definition was rejected.
    Check {
        #[command(flatten)]
        workspace: WorkspaceDir,
        /// Print one JSON object {"workspace", "agents", "skills", "warnings"} instead
        #[arg(long)]
        json: bool,
        /// Print the whole table however wide it is (on a terminal narrower than the table,
        /// `check` shows one block per agent instead)
        #[arg(long, conflicts_with = "json")]
        wide: bool,
        /// Also start each agent's MCP servers as a run would (each within its startup
        /// bound), and warn about those that would fail: this runs the commands the
        /// definitions name
        #[arg(long)]
        servers: bool,
    },
    /// Run one subagent from the terminal: its activity live on stderr, its result on
    /// stdout. Exits with 1 (printing the error code) when it fails, 130 on Ctrl-C.
    Run {
        /// Workspace holding the agent (default: the current directory)
        #[arg(long, value_name = "DIR")]
        workspace: Option<PathBuf>,
        /// The agent's name
        name: String,
        /// The task; `-` reads it from standard input
        task: String,
        /// Print the final wait_agent record as JSON instead of the result text
        #[arg(long)]
        json: bool,
    },
    /// Every mcp-agents server running for DIR (several clients may each run one), and a
    /// line per agent, read from their status sockets; exits 0 when none runs
    Status {
        #[command(flatten)]
        workspace: WorkspaceDir,
        /// Print the servers' snapshots as one JSON list instead (`[]` when none runs)
        #[arg(long)]
        json: bool,
    },
    /// A live full-screen view of the agents of every server running for DIR: what each
    /// does, its tool calls, and `s` to stop one (without a terminal, prints what `status`
    /// prints)
    Watch {
        #[command(flatten)]
        workspace: WorkspaceDir,
    },
    /// The offline demo: a scripted model on loopback, and the example workspace's reviewer
    /// reading its code through the built-in workspace server; needs no API key and no
    /// network
    Demo {
        /// Print the final wait_agent record as JSON instead of the result text
        #[arg(long)]
        json: bool,
    },
    /// Serve the built-in workspace tools (read, list, glob, grep, edit, write) for DIR
    /// over MCP stdio: the child server agents get to read and change the code
    /// (docs/agents.md)
    WorkspaceTools {
        /// The workspace the tools are confined to
        #[arg(value_name = "DIR")]
        dir: PathBuf,
    },
    /// A child MCP server for tests and the offline demo
    #[command(hide = true)]
    FixtureServer(crate::testkit::FixtureOptions),
    /// A stdio child's shim: starts the child the server SERVER_PID tells it over descriptor
    /// 3, and kills everything the child leaves when it exits or the server dies
    #[command(hide = true)]
    ChildShim {
        /// The server's pid (this process's parent)
        server: u32,
    },
}

/// `modelcontextprotocol agents …`: the same program under the name the original
/// reference uses.
#[derive(Debug, Parser)]
#[command(
    name = "modelcontextprotocol",
    version,
    about = "The mcp-agents server, as `modelcontextprotocol agents`"
)]
pub struct ModelContextProtocolCli {
    #[command(subcommand)]
    pub command: ModelContextProtocolCommand,
}

#[derive(Debug, Subcommand)]
pub enum ModelContextProtocolCommand {
    /// Exactly `mcp-agents`, with the same arguments and options
    Agents(Cli),
}

/// Runs a parsed command line of `mcp-agents`.
pub fn run(cli: Cli) -> ExitCode {
    run_as(cli, &[])
}

/// Runs a parsed command line of `modelcontextprotocol agents`.
pub fn run_agents(cli: Cli) -> ExitCode {
    run_as(cli, &["agents"])
}

/// Runs a parsed command line; `prefix` is what this program needs before a subcommand to
/// start itself as a built-in child server.
fn run_as(cli: Cli, prefix: &[&str]) -> ExitCode {
    // A child's shim first: nothing below concerns it, and it must stay one thread (it reads
    // SIGCHLD from a signalfd, which a thread that does not block the signal would take).
    if let Some(Command::ChildShim { server }) = cli.command {
        return crate::child_mcp::run_child_shim(server);
    }
    crate::logging::init();
    let itself = SelfCommand::current(prefix);
    let budget = cli.common.budget();
    // Read only by the commands that run agents or show them: a child server this program
    // also is never reads a `--prices` file it inherited through the environment.
    let spend = || match cli.common.spend() {
        Ok(spend) => Ok(std::sync::Arc::new(spend)),
        Err(message) => {
            eprintln!("error: {message}");
            Err(ExitCode::from(exit::EXIT_USAGE))
        }
    };
    let mut options = LoadOptions::from_process_env(cli.common.default_model.clone(), budget);
    options.allow_models = cli.common.allow_models.clone();
    match cli.command {
        Some(Command::Check {
            workspace,
            json,
            wide,
            servers,
        }) => match spend() {
            Ok(spend) => commands::check(
                workspace.path(),
                &options,
                json,
                wide,
                servers,
                itself,
                &spend,
            ),
            Err(code) => code,
        },
        Some(Command::Run {
            workspace,
            name,
            task,
            json,
        }) => {
            let command = RunCommand {
                workspace,
                name,
                task,
                json,
            };
            match spend() {
                Ok(spend) => commands::run(command, &options, itself, spend),
                Err(code) => code,
            }
        }
        Some(Command::Demo { json }) => {
            with_runtime(|cancel| async move { demo::run_demo(json, itself, cancel).await })
        }
        Some(Command::Status { workspace, json }) => commands::watch(workspace.path(), Some(json)),
        Some(Command::Watch { workspace }) => commands::watch(workspace.path(), None),
        Some(Command::WorkspaceTools { dir }) => serve::run_workspace_tools(dir),
        Some(Command::FixtureServer(options)) => serve::run_fixture(options),
        Some(Command::ChildShim { server }) => crate::child_mcp::run_child_shim(server),
        None => {
            let http = cli.http.map(|addr| HttpOptions {
                addr,
                auth_token_env: cli.auth_token_env,
            });
            let serving = ServeOptions {
                mcp_tasks: cli.mcp_tasks,
            };
            match spend() {
                Ok(spend) => {
                    let dir = cli.dir.or(cli.workspace);
                    commands::serve(dir, &options, http, serving, itself, spend)
                }
                Err(code) => code,
            }
        }
    }
}
