//! `mcp-agents status [DIR] [--json]` (SPEC §7.1): every server running for DIR and one
//! human line per agent, read from the servers' status sockets; `--json` is the list of
//! their snapshots (`[]` when none). No server running is not an error.

use std::path::Path;
use std::process::ExitCode;

use serde_json::Value;

use crate::status::connect_all;

/// Prints what the servers of `workspace` (canonical) are doing now.
pub(super) async fn run_status(workspace: &Path, json: bool) -> ExitCode {
    let found = connect_all(workspace, &[]).await;
    for problem in &found.problems {
        eprintln!("warning: {problem}");
    }
    if found.connections.is_empty() && !found.problems.is_empty() {
        // A server may be running where this could not look.
        return ExitCode::FAILURE;
    }
    let snapshots: Vec<Value> = found.connections.into_iter().map(|c| c.snapshot).collect();
    if json {
        println!("{:#}", Value::Array(snapshots));
    } else {
        print!("{}", status_text(workspace, &snapshots));
    }
    ExitCode::SUCCESS
}

/// The servers' blocks, each a line for the server then one per agent, or the one line
/// saying that none runs.
pub(super) fn status_text(workspace: &Path, snapshots: &[Value]) -> String {
    if snapshots.is_empty() {
        return format!(
            "no mcp-agents server is running for {}\n",
            workspace.display()
        );
    }
    let mut text = String::new();
    for (i, snapshot) in snapshots.iter().enumerate() {
        if i > 0 {
            text.push('\n');
        }
        text.push_str(&server_line(&snapshot["server"]));
        text.push('\n');
        let agents = snapshot["agents"].as_array().map_or(&[][..], Vec::as_slice);
        if agents.is_empty() {
            text.push_str("  no agents yet\n");
        }
        for agent in agents {
            text.push_str("  ");
            text.push_str(agent["line"].as_str().unwrap_or_default());
            text.push('\n');
        }
    }
    text
}

/// `mcp-agents server 4242 (stdio): 1 running, 2 completed, 0 failed · 12.3k tokens · 7 tool
/// calls`, and the spend when the server reports one.
pub(super) fn server_line(server: &Value) -> String {
    let agents = &server["agents"];
    let count = |key: &str| agents[key].as_u64().unwrap_or_default();
    let usage = &server["usage"];
    let tokens = usage["input_tokens"].as_u64().unwrap_or_default()
        + usage["output_tokens"].as_u64().unwrap_or_default();
    let mut line = format!(
        "mcp-agents server {} ({}): {} running, {} completed, {} failed · {} tokens · {} tool calls",
        server["pid"],
        server["url"]
            .as_str()
            .unwrap_or(server["transport"].as_str().unwrap_or("?")),
        count("running"),
        count("completed"),
        count("failed"),
        short_count(tokens),
        usage["tool_calls"].as_u64().unwrap_or_default(),
    );
    if let Some(spent) = spend_text(&server["server_spend"]) {
        line.push_str(" · ");
        line.push_str(&spent);
    }
    line
}

/// The server's spend (SPEC §5.1 `server_spend`: `tokens`, `cost_usd`, the caps set), when
/// it reports one.
pub(super) fn spend_text(spend: &Value) -> Option<String> {
    // Nothing priced spent and no cap in dollars: "$0.00 spent" would say nothing true.
    let said =
        spend["cost_usd"].as_f64().is_some_and(|c| c > 0.0) || spend["max_cost_usd"].is_number();
    let cost = spend["cost_usd"]
        .as_f64()
        .filter(|_| said)
        .map(|c| format!("${c:.2} spent"));
    let cap = spend["max_cost_usd"]
        .as_f64()
        .map(|c| format!("of ${c:.2}"));
    let tokens_cap = spend["max_tokens"]
        .as_u64()
        .map(|t| format!("token cap {}", short_count(t)));
    let parts: Vec<String> = [cost, cap, tokens_cap].into_iter().flatten().collect();
    (!parts.is_empty()).then(|| parts.join(" "))
}

/// `830`, `12.3k`, `4.1M`.
pub(super) fn short_count(n: u64) -> String {
    #[expect(clippy::cast_precision_loss, reason = "a count shown to one decimal")]
    let f = n as f64;
    match n {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => format!("{:.1}k", f / 1e3),
        _ => format!("{:.1}M", f / 1e6),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_block_per_server_and_a_line_per_agent() {
        let ws = Path::new("/w");
        assert_eq!(
            status_text(ws, &[]),
            "no mcp-agents server is running for /w\n"
        );
        let snapshot = json!({
            "server": {"pid": 42, "transport": "stdio",
                       "agents": {"running": 1, "completed": 0, "failed": 0},
                       "usage": {"input_tokens": 12000, "output_tokens": 345, "tool_calls": 3}},
            "agents": [{"line": "reviewer f79152ba: running 2 s (no tool calls so far)"}],
        });
        assert_eq!(
            status_text(ws, &[snapshot]),
            "mcp-agents server 42 (stdio): 1 running, 0 completed, 0 failed · 12.3k tokens · \
             3 tool calls\n  reviewer f79152ba: running 2 s (no tool calls so far)\n"
        );
        assert_eq!(
            spend_text(&json!({"cost_usd": 0.5, "max_cost_usd": 2.0})).as_deref(),
            Some("$0.50 spent of $2.00")
        );
        assert_eq!(spend_text(&Value::Null), None);
        assert_eq!(
            spend_text(&json!({"tokens": 120, "cost_usd": 0.0, "unpriced_tokens": 120})),
            None,
            "nothing priced, no cap: nothing to say"
        );
        assert_eq!(
            spend_text(&json!({"tokens": 9, "cost_usd": 0.0, "max_tokens": 5000})).as_deref(),
            Some("token cap 5.0k")
        );
    }
}
