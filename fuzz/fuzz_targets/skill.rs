//! The SKILL.md parser.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_agents::discovery::parse_skill;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = parse_skill(&text, "folder", "folder/SKILL.md".into(), &mut Vec::new());
});
