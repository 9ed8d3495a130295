//! The frontmatter splitter and the YAML parsing with its lenient retry, and TOML.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_agents::discovery::{
    parse_frontmatter, parse_json_object, parse_toml, split_frontmatter,
};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(split) = split_frontmatter(&text) {
        let _ = parse_frontmatter(split.yaml);
    }
    let _ = parse_frontmatter(&text);
    let _ = parse_toml(&text);
    let _ = parse_json_object(&text);
});
