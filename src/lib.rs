//! `mcp-agents`: an MCP server that lets a parent agent delegate focused tasks to subagents
//! defined in plain files (see `README.md` and `docs/`; the layering is in
//! `docs/architecture.md`).
//!
//! | module | layer |
//! | --- | --- |
//! | [`limits`] | every bound of SPEC §12, named, with its section |
//! | [`clients`] | the MCP clients this server knows: their names, tool-call timeouts, the wait advised |
//! | [`error`] | the error codes of SPEC §11 |
//! | [`redact`] | secret hiding for logs, errors and `Debug` |
//! | [`text`] | text cut to a size on a character boundary |
//! | [`net`] | the shared HTTP clients |
//! | [`memory`] | freed memory given back to the system after evictions (glibc's `malloc_trim`) |
//! | [`console`] | stderr written from one thread behind a bounded queue, never blocking |
//! | [`logging`] | stderr logging in the `warning: <file>: <reason>` style |
//! | [`definition`] | the canonical agent definition, the catalog, and the rules every format shares |
//! | [`discovery`] | walking the workspace and loading the catalog of agents and skills |
//! | [`toolbox`] | the loop's tool vocabulary, between sessions and child_mcp |
//! | [`providers`] | the OpenAI Responses and Anthropic Messages wire clients |
//! | [`child_mcp`] | child MCP servers as the tools of a run |
//! | [`spend`] | spend set once: model prices, the server's spend and its caps |
//! | [`run`] | the model loop of one run: provider requests, tool rounds, budgets, the answer |
//! | [`sessions`] | the session registry: sessions, run permits, retention, waiting |
//! | [`status`] | watching from outside: each server's private status socket and what it says |
//! | [`server`] | the MCP server: the three tools over stdio and streamable HTTP |
//! | [`workspace`] | the built-in `workspace` child server: read-only tools over the workspace |
//! | [`workspace_contract`] | what the workspace server and the rest agree on: the places it never changes, a change's answer |
//! | [`testkit`] | loopback model endpoints and a fixture child server, for the demo and tests |
//! | [`cli`] | the command line, shared by the `mcp-agents` and `modelcontextprotocol` binaries |

pub mod child_mcp;
pub mod cli;
pub mod clients;
pub mod console;
pub mod definition;
pub mod discovery;
pub mod error;
pub mod limits;
pub mod logging;
pub mod memory;
pub mod net;
pub mod providers;
pub mod redact;
pub mod run;
pub mod server;
pub mod sessions;
pub mod spend;
pub mod status;
pub mod testkit;
pub mod text;
pub mod toolbox;
pub mod workspace;
pub mod workspace_contract;

// The system allocator unless a feature picks another, for every binary of the package; the
// features exist to measure the others (docs/performance.md, "Memory after eviction").
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
#[cfg(all(feature = "jemalloc", not(feature = "mimalloc")))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;
