//! Child tool names in the form each wire API accepts (SPEC §6.1), as `tool_schema` does for
//! their schemas.
//!
//! The tools are named `<server>__<tool>` within `[A-Za-z0-9_-]{1,64}` (`child_mcp`), which
//! every API takes but one: Gemini's function declarations must start with a letter or an
//! underscore ("Invalid function name. Must start with a letter or an underscore. …", its
//! SDK's and Vertex's types say the same), and a child server named `7zip` gives
//! `7zip__echo`. On a wire whose rules say so ([`WireRules::tool_name_starts_with_letter`]),
//! such a name gets `_` in front, is cut to 64 characters if it grows past them, and is kept
//! apart from every other tool's name; a call by that name is mapped back to the tool's own
//! name (the wire's `ToolList::tool_name`, which reads [`renamed`]'s pairs), so the loop,
//! activity and the child never see it.

use std::collections::HashSet;

use crate::definition::WireRules;
use crate::limits::TOOL_NAME_CHARS;
use crate::toolbox::ToolSpec;

/// What a name that may not start as it does gets in front.
const PREFIX: char = '_';

/// The tools of `tools` (by position) whose names the wire of `rules` takes only shaped,
/// each with the name it is sent under: unique among all the names sent.
pub(super) fn renamed(rules: &WireRules, tools: &[&ToolSpec]) -> Vec<(usize, String)> {
    if !rules.tool_name_starts_with_letter {
        return Vec::new();
    }
    let taken: HashSet<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    let mut chosen: Vec<(usize, String)> = Vec::new();
    for (at, tool) in tools.iter().enumerate() {
        if starts_with_letter(&tool.name) {
            continue;
        }
        let name = unique(&format!("{PREFIX}{}", tool.name), |candidate| {
            taken.contains(candidate) || chosen.iter().any(|(_, c)| c == candidate)
        });
        chosen.push((at, name));
    }
    chosen
}

/// Whether `name` starts with an ASCII letter or an underscore.
fn starts_with_letter(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphabetic() || c == PREFIX)
}

/// `name` cut to [`TOOL_NAME_CHARS`], or, if that is `taken`, with `_2`, `_3`, … at its end
/// (the names are ASCII: `child_mcp` made them so).
fn unique(name: &str, taken: impl Fn(&str) -> bool) -> String {
    let cut = |name: &str, room: usize| name.chars().take(room).collect::<String>();
    let first = cut(name, TOOL_NAME_CHARS);
    if !taken(&first) {
        return first;
    }
    (2u32..)
        .map(|n| {
            let suffix = format!("_{n}");
            cut(name, TOOL_NAME_CHARS - suffix.len()) + &suffix
        })
        .find(|candidate| !taken(candidate))
        .unwrap_or(first)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(name: &str) -> ToolSpec {
        ToolSpec {
            name: name.to_owned(),
            description: String::new(),
            input_schema: json!({"type": "object"}),
        }
    }

    #[test]
    fn names_that_start_with_a_digit_or_dash_get_an_underscore_on_chat_completions() {
        let specs = [spec("7zip__echo"), spec("fx__echo"), spec("-x__y")];
        let tools: Vec<&ToolSpec> = specs.iter().collect();
        assert_eq!(
            renamed(&WireRules::CHAT_COMPLETIONS, &tools),
            [(0, "_7zip__echo".to_owned()), (2, "_-x__y".to_owned())]
        );
        assert!(renamed(&WireRules::RESPONSES, &tools).is_empty());
        assert!(renamed(&WireRules::MESSAGES, &tools).is_empty());
    }

    #[test]
    fn shaped_names_stay_within_64_characters_and_apart_from_the_others() {
        let long = format!("9{}", "a".repeat(63));
        let specs = [
            spec("7zip__echo"),
            spec("_7zip__echo"),
            spec(&long),
            spec(&format!("_{}", &long[..63])),
        ];
        let tools: Vec<&ToolSpec> = specs.iter().collect();
        let names = renamed(&WireRules::CHAT_COMPLETIONS, &tools);
        assert_eq!(
            names[0],
            (0, "_7zip__echo_2".to_owned()),
            "taken by another tool"
        );
        assert_eq!(names[1].0, 2);
        assert_eq!(names[1].1.len(), TOOL_NAME_CHARS);
        assert!(names[1].1.starts_with("_9") && names[1].1.ends_with("_2"));
    }
}
