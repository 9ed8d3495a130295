//! The one integration-test binary: `support` holds the shared helpers, `suite` the tests
//! (see `suite/mod.rs`). Run one module with `cargo test --test all suite::run_loop`.

mod suite;
mod support;
