//! The argument checks of the three tools, on any JSON.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_agents::server::tools::{SEND_INPUT, SPAWN_AGENT, WAIT_AGENT, parse_call};

fuzz_target!(|data: &[u8]| {
    let Ok(serde_json::Value::Object(arguments)) = serde_json::from_slice(data) else {
        return;
    };
    for tool in [SPAWN_AGENT, SEND_INPUT, WAIT_AGENT] {
        let _ = parse_call(tool, Some(&arguments));
    }
});
