//! Sessions: the model loop of one run and the activity it reports.
//!
//! | module | job |
//! | --- | --- |
//! | [`activity`] | the coarse phases a running session reports (SPEC §7) |
//! | [`run`] | the model loop of one run (SPEC §6), independent of MCP |

pub mod activity;
pub mod run;
