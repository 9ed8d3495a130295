//! `mcp-agents`: an MCP server that lets a parent agent delegate focused tasks to subagents
//! defined in plain files (see `README.md` and `docs/`).
//!
//! | module | layer |
//! | --- | --- |
//! | [`definition`] | the canonical agent definition and the rules shared by every format |
//! | [`discovery`] | walking the workspace and loading the catalog of agents and skills |
//! | [`cli`] | the command line, shared by the `mcp-agents` and `modelcontextprotocol` binaries |
//! | [`check`] | the `check` command's table and JSON report |
//! | [`logging`] | stderr logging in the `warning: <file>: <reason>` style |

pub mod check;
pub mod cli;
pub mod definition;
pub mod discovery;
pub mod logging;
