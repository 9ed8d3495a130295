//! MCP over HTTP written by hand, for tests and benchmarks that need what a client library
//! hides: how many connections there are, whether one is kept alive, and whether its
//! answers are read at all.

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

/// A 2026-07-28 request for `method` (and the tool `name` of a `tools/call`) with `params`,
/// as HTTP/1.1 bytes, its connection kept alive or closed after the answer.
pub fn mcp_request(method: &str, name: Option<&str>, params: Value, keep_alive: bool) -> Vec<u8> {
    let mut params = params;
    params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                             "io.modelcontextprotocol/clientCapabilities": {}});
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let name = name
        .map(|n| format!("Mcp-Name: {n}\r\n"))
        .unwrap_or_default();
    let connection = if keep_alive { "keep-alive" } else { "close" };
    format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMcp-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: {method}\r\n{name}Connection: {connection}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Asks for the tool list on a kept-alive `stream` and reads up to its answer's event;
/// `false` when the connection is gone.
pub async fn ask_for_tools(stream: &mut BufReader<TcpStream>) -> bool {
    let sent = stream
        .get_mut()
        .write_all(&mcp_request("tools/list", None, json!({}), true))
        .await;
    if sent.is_err() {
        return false;
    }
    let mut line = String::new();
    loop {
        line.clear();
        match stream.read_line(&mut line).await {
            Ok(0) | Err(_) => return false,
            Ok(_) if line.starts_with("data:") => return true,
            Ok(_) => {}
        }
    }
}
