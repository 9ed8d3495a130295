//! The workspace the benchmarks serve: one agent, `worker`, on a mock's Responses endpoint,
//! its key read from the variable the benchmarks set.

use super::mock::MockProvider;

/// The variable the benchmarks pass the mock's key in.
pub const BENCH_KEY_VAR: &str = "MCP_AGENTS_BENCH_KEY";

/// A new temporary workspace with one agent, `worker`, on `mock`'s Responses endpoint.
pub fn bench_workspace(mock: &MockProvider) -> std::io::Result<tempfile::TempDir> {
    let ws = tempfile::tempdir()?;
    let dir = ws.path().join(".agents/agents");
    std::fs::create_dir_all(&dir)?;
    std::fs::write(
        dir.join("worker.md"),
        format!(
            "---\nname: worker\ndescription: Bench agent.\nmodel: mock-model\n\
             model_provider: custom\nbase_url: {}\nenv_key: {BENCH_KEY_VAR}\n\
             wire_api: responses\n---\nWork.\n",
            mock.responses_base_url()
        ),
    )?;
    Ok(ws)
}
