//! Spend set once (SPEC §5.1): what a model costs and what the server may spend, set by the
//! person who runs the server and never by a definition.
//!
//! | file | job |
//! | --- | --- |
//! | `price` | a model's [`Price`] per million tokens of each kind, [`Tokens`], and [`Usd`] amounts |
//! | `table` | the built-in prices, each row with its source and the day it was read |
//! | `litellm` | prices from a file in LiteLLM's `model_prices_and_context_window.json` format |
//! | `prices` | the [`PriceTable`] a server uses: the file's prices over the built-in ones |
//! | `meter` | the server's spend over its life against its caps ([`ServerSpend`], [`SpendCaps`]) |
//!
//! The face below is what the session registry (which prices each reply and asks before
//! each request), the status endpoint, the MCP server and the command line name.

mod litellm;
mod meter;
mod price;
mod prices;
mod table;

pub use meter::{ServerSpend, SpendCaps};
pub use price::{Price, Tokens, Usd};
pub use prices::PriceTable;
