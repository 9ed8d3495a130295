//! The process's HTTP clients: one for providers, one for HTTP child servers, each built
//! once and shared (a `reqwest::Client` is a handle to one connection pool).
//!
//! | client | bounds | used for |
//! | --- | --- | --- |
//! | [`provider_client`] | connect 10 s, no redirects (a streamed reply's own bounds are the provider layer's) | model requests |
//! | [`child_client`] | connect 10 s, no redirects | streamable-HTTP child servers |
//!
//! Neither follows redirects: a redirect could carry a key or a child's credential header
//! to another host (SPEC §3.2, §8.3).
//!
//! TLS costs only what is used. Loading the system's root certificates is most of a short
//! run's CPU against a loopback model, so each client exists twice: a plain one for
//! `http://` endpoints (the https/loopback rule makes those loopback only), built without any
//! root store, and a TLS one built the first time an `https://` endpoint is used.

use std::sync::OnceLock;

use url::Url;

use crate::limits::{CHILD_HTTP_CONNECT_TIMEOUT, PROVIDER_CONNECT_TIMEOUT};

/// The client for requests to a provider at `url`. Only connecting is bounded here: a
/// streamed reply may rightly last longer than any total timeout, so the provider layer
/// bounds its start, its silences and its length itself (SPEC §6.1).
pub fn provider_client(url: &Url) -> &'static reqwest::Client {
    static PLAIN: OnceLock<reqwest::Client> = OnceLock::new();
    static TLS: OnceLock<reqwest::Client> = OnceLock::new();
    pick(url, &PLAIN, &TLS, || {
        reqwest::Client::builder().connect_timeout(PROVIDER_CONNECT_TIMEOUT)
    })
}

/// The client for an HTTP child server at `url`. Calls are bounded by the child layer
/// (each call and the startup have their own timeouts), so only connecting is bounded here.
pub fn child_client(url: &Url) -> &'static reqwest::Client {
    static PLAIN: OnceLock<reqwest::Client> = OnceLock::new();
    static TLS: OnceLock<reqwest::Client> = OnceLock::new();
    pick(url, &PLAIN, &TLS, || {
        reqwest::Client::builder().connect_timeout(CHILD_HTTP_CONNECT_TIMEOUT)
    })
}

/// A client for plain `http://` requests only (tests and tools that talk to loopback
/// servers): no root certificates are loaded for it.
pub fn loopback_client() -> &'static reqwest::Client {
    static PLAIN: OnceLock<reqwest::Client> = OnceLock::new();
    PLAIN.get_or_init(|| build(reqwest::Client::builder(), false))
}

fn pick(
    url: &Url,
    plain: &'static OnceLock<reqwest::Client>,
    tls: &'static OnceLock<reqwest::Client>,
    builder: impl FnOnce() -> reqwest::ClientBuilder,
) -> &'static reqwest::Client {
    if url.scheme() == "https" {
        tls.get_or_init(|| build(builder(), true))
    } else {
        plain.get_or_init(|| build(builder(), false))
    }
}

fn build(builder: reqwest::ClientBuilder, tls: bool) -> reqwest::Client {
    install_tls();
    let builder = builder
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("mcp-agents/", env!("CARGO_PKG_VERSION")));
    // An empty "only these roots" store: the platform's roots are never read for a client
    // that only ever speaks plain HTTP.
    let builder = if tls {
        builder
    } else {
        builder.tls_certs_only([])
    };
    #[expect(
        clippy::expect_used,
        reason = "building fails only when the TLS backend cannot initialize, which would make \
                  every endpoint of that kind unusable; there is nothing to fall back to"
    )]
    builder
        .build()
        .expect("the HTTP client needs a working TLS backend")
}

/// reqwest is built without a default TLS provider, and building a client without one
/// panics; ring is ours. Every client of this program is built after this call (rmcp's
/// HTTP client transport is handed ours). Installing twice is harmless: the first stays.
pub fn install_tls() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}
