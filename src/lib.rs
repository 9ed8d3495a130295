//! `mcp-agents`: an MCP server that lets a parent agent delegate focused tasks to subagents
//! defined in plain files (see `README.md` and `docs/`).
//!
//! | module | layer |
//! | --- | --- |
//! | [`definition`] | the canonical agent definition and the rules shared by every format |
//! | [`discovery`] | walking the workspace and loading the catalog of agents and skills |
//! | [`cli`] | the command line, shared by the `mcp-agents` and `modelcontextprotocol` binaries |
//! | [`logging`] | stderr logging in the `warning: <file>: <reason>` style |
//! | [`error`] | the error codes of SPEC §11 |
//! | [`providers`] | the OpenAI Responses and Anthropic Messages wire clients |
//! | [`testkit`] | loopback model endpoints and a fixture child server, for the demo and tests |
//! | [`sessions`] | sessions, the session manager and the model loop of one run |
//! | [`server`] | the MCP server: the three tools over stdio and streamable HTTP |

pub mod child_mcp;
pub mod cli;
pub mod definition;
pub mod discovery;
pub mod error;
pub mod limits;
pub mod logging;
pub mod net;
pub mod providers;
pub mod redact;
pub mod server;
pub mod sessions;
pub mod testkit;
pub mod toolbox;
