//! The `${VAR}` parser and renderer.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_agents::definition::Template;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(template) = Template::parse(&text) {
        let _ = template.render(|name| (name.len() % 2 == 0).then(|| name.to_owned()));
        let _ = format!("{template:?}");
    }
});
