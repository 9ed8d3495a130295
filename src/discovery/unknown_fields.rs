//! Unknown fields that look like typos (SPEC §3.1): one check that reports an unknown field
//! within a slip of one the file's format knows ("did you mean `disallowedTools`?"). Unknown
//! fields stay ignored, since they may belong to another tool; a name that any format knows
//! is never reported (`mode` in a Claude file is OpenCode's).
//!
//! Each format's spec names its list of fields (`field_names`, the constants the parsers read
//! fields through): every field its parser reads and the fields of that tool it deliberately
//! ignores; `tests/suite/definition_fields.rs` checks that the published corpus raises no
//! report and that a typo of each list's fields does.

use super::field_names::{self as fields, Field};
use super::fields::Doc;
use crate::definition::closest;

/// One caveat for each top-level field of `doc` that the file's format does not know (the
/// common fields and `own`) and that is a slip of one it does. `formats` are the fields
/// every format knows besides the common ones: another tool's field is no slip.
pub(super) fn note_near_misses<'a>(
    doc: Doc<'_>,
    own: &[Field],
    formats: impl Iterator<Item = &'a [Field]>,
    caveats: &mut Vec<String>,
) {
    let others: Vec<&[Field]> = formats.collect();
    let known_anywhere = |field: &str| {
        std::iter::once(fields::COMMON)
            .chain(others.iter().copied())
            .any(|list| fields::spellings(list).any(|known| known == field))
    };
    let known = || fields::spellings(fields::COMMON).chain(fields::spellings(own));
    for field in doc.map().keys() {
        // Another tool's field is left alone, unless it only spells one of this format's
        // differently (`mcp-servers`, Copilot's, in a Claude file means `mcp_servers`).
        if known().any(|k| k == field)
            || (known_anywhere(field) && !known().any(|k| same_but_spelling(k, field)))
        {
            continue;
        }
        if let Some(meant) = closest(field, known()) {
            caveats.push(slip(field, meant, ""));
        }
    }
}

/// Whether `a` and `b` differ only in case, `_` and `-`.
fn same_but_spelling(a: &str, b: &str) -> bool {
    let bare = |s: &str| {
        s.chars()
            .filter(|c| *c != '_' && *c != '-')
            .map(|c| c.to_ascii_lowercase())
            .collect::<String>()
    };
    bare(a) == bare(b)
}

/// One caveat for each field of a child server entry that is a slip of a known one;
/// `place` names the server (`mcp_servers.github: `). Copilot's and Gemini's own server
/// fields are known everywhere, as other tools' fields are at the top level.
pub(super) fn note_server_near_misses(doc: Doc<'_>, place: &str, caveats: &mut Vec<String>) {
    let known =
        || fields::spellings(fields::SERVER).chain(fields::spellings(fields::FOREIGN_SERVER));
    for field in doc.map().keys() {
        if known().any(|known| known == field) {
            continue;
        }
        if let Some(meant) = closest(field, known()) {
            caveats.push(slip(field, meant, place));
        }
    }
}

fn slip(field: &str, meant: &str, place: &str) -> String {
    format!(
        "{place}`{field}` is not a field this runtime reads, so it is ignored; did you mean \
         `{meant}`?"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::definition::Format;
    use crate::discovery::{FORMATS, file_spec};

    fn notes(value: serde_json::Value, format: Format) -> Vec<String> {
        let mut caveats = Vec::new();
        let every = FORMATS
            .iter()
            .flat_map(|spec| spec.files.iter().map(|file| file.fields));
        let own = file_spec(format).unwrap().1.fields;
        note_near_misses(
            Doc::new(value.as_object().unwrap()),
            own,
            every,
            &mut caveats,
        );
        caveats
    }

    #[test]
    fn a_typo_of_a_known_field_is_reported_once_with_the_field_it_resembles() {
        let caveats = notes(
            json!({"disalowedTools": "mcp__acc__wipe", "mcp_server": {}, "Model": "x"}),
            Format::Claude,
        );
        assert_eq!(caveats.len(), 3, "{caveats:?}");
        assert!(
            caveats.iter().any(|c| c.contains("`disalowedTools`")
                && c.ends_with("did you mean `disallowedTools`?"))
        );
        assert!(
            caveats
                .iter()
                .any(|c| c.ends_with("did you mean `mcp_servers`?"))
        );
        assert!(caveats.iter().any(|c| c.ends_with("did you mean `model`?")));
    }

    #[test]
    fn another_tools_fields_are_not_typos() {
        // `mode` is OpenCode's, `sandbox_mode` Codex's, `effort` Claude's: in any file they
        // are another tool's, not slips.
        for format in [Format::CanonicalMarkdown, Format::Claude, Format::OpenCode] {
            assert!(
                notes(
                    json!({"mode": "subagent", "sandbox_mode": "x", "effort": "high", "topK": 3}),
                    format
                )
                .is_empty(),
                "{format}"
            );
        }
        // A format's own ignored fields are known too.
        assert!(notes(json!({"colour": "red"}), Format::OpenCode)[0].ends_with("`color`?"));
    }

    #[test]
    fn the_later_formats_typos_are_reported_in_their_own_files() {
        let copilot = notes(json!({"disable-model-invokation": true}), Format::Copilot);
        assert_eq!(copilot.len(), 1, "{copilot:?}");
        assert!(copilot[0].ends_with("did you mean `disable-model-invocation`?"));
        let cursor = notes(json!({"readonyl": true}), Format::Cursor);
        assert!(
            cursor[0].ends_with("did you mean `readonly`?"),
            "{cursor:?}"
        );
        let gemini = notes(json!({"max_turn": 3, "timeout_min": 2}), Format::Gemini);
        assert_eq!(gemini.len(), 2, "{gemini:?}");
        assert!(
            gemini
                .iter()
                .any(|c| c.ends_with("did you mean `max_turns`?"))
        );
        assert!(
            gemini
                .iter()
                .any(|c| c.ends_with("did you mean `timeout_mins`?"))
        );
        // Copilot reads only its own kebab spellings: the others are slips, not aliases.
        assert!(
            notes(json!({"disable_model_invocation": true}), Format::Copilot)[0]
                .ends_with("`disable-model-invocation`?")
        );
        // Another tool's field is not a typo in a Claude file, unless it spells one of
        // Claude's own another way.
        assert!(notes(json!({"readonly": true, "kind": "local"}), Format::Claude).is_empty());
        assert!(
            notes(json!({"mcp-servers": {}}), Format::Claude)[0]
                .ends_with("did you mean `mcp_servers`?")
        );
        assert!(notes(json!({"mcp-servers": {}}), Format::Copilot).is_empty());
    }

    #[test]
    fn server_fields_have_their_own_list() {
        let mut caveats = Vec::new();
        let entry = json!({"command": "x", "arg": ["a"], "disabled_tool": ["wipe"], "evn": {}});
        note_server_near_misses(
            Doc::new(entry.as_object().unwrap()),
            "mcp_servers.acc: ",
            &mut caveats,
        );
        // A short name is guessed only with two neighbours swapped (`evn`), not with a
        // letter missing (`arg`).
        assert_eq!(caveats.len(), 2, "{caveats:?}");
        assert_eq!(
            caveats[0],
            "mcp_servers.acc: `disabled_tool` is not a field this runtime reads, so it is \
             ignored; did you mean `disabled_tools`?"
        );
        assert!(caveats[1].ends_with(
            "`evn` is not a field this runtime reads, so it is ignored; did you mean `env`?"
        ));
    }
}
