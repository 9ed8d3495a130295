//! The argument checks of the three tools, on any JSON, and the transports' marking of
//! `tools/call` messages whose `arguments` is not an object, on any bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_agents::server::{SEND_INPUT, SPAWN_AGENT, WAIT_AGENT, parse_call};

fuzz_target!(|data: &[u8]| {
    if let Some(marked) = mcp_agents::server::mark_non_object_arguments(data) {
        // A marked message is JSON whose arguments the checks then refuse.
        let message: serde_json::Value = serde_json::from_slice(&marked).expect("marked JSON");
        if let Some(serde_json::Value::Object(arguments)) = message["params"].get("arguments") {
            let refused = parse_call(SPAWN_AGENT, Some(arguments));
            assert!(matches!(refused, Some(Err(_))), "a marked call is refused");
        }
    }
    let Ok(serde_json::Value::Object(arguments)) = serde_json::from_slice(data) else {
        return;
    };
    for tool in [SPAWN_AGENT, SEND_INPUT, WAIT_AGENT] {
        let _ = parse_call(tool, Some(&arguments));
    }
});
