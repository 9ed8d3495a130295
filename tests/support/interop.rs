//! Where the third-party servers and clients installed by `scripts/install-interop` are.

use std::path::PathBuf;

/// The interop directory; fails the test with instructions when it is not installed.
pub fn dir() -> PathBuf {
    let dir = std::env::var_os("MCP_AGENTS_INTEROP_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/interop"));
    assert!(
        dir.join("venv/bin/python").exists() && dir.join("node/node_modules").exists(),
        "the interoperability dependencies are not installed in {}; run the test suite with \
         scripts/test, which installs them",
        dir.display()
    );
    dir
}

pub fn python() -> PathBuf {
    dir().join("venv/bin/python")
}

pub fn venv_bin(name: &str) -> PathBuf {
    dir().join("venv/bin").join(name)
}

pub fn node_bin(name: &str) -> PathBuf {
    dir().join("node/node_modules/.bin").join(name)
}

pub fn script(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/interop")
        .join(name)
}
