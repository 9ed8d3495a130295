//! The one integration-test binary: `support` holds the shared helpers, `suite` the tests
//! (see `suite/mod.rs`). Run one module with `cargo test --test all suite::run_loop`.
// Tests and benchmarks may unwrap: a failure there is the report. They are binaries, with no
// face for `pub` to mark (Cargo.toml's lints).
#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

mod suite;
mod support;
