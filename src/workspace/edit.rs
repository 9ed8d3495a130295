//! `edit`: replaces one exact piece of a file's text with another (SPEC §8.6), or every
//! occurrence of it with `replace_all`, and shows the changed lines with their numbers.
//!
//! The text is matched byte for byte, so any encoding survives the parts left alone. `read`
//! shows lines without their `\r`: when `old_text` is not found as written in a file with
//! CRLF line endings, it is looked for with CRLF endings, and `new_text` gets them too.

use memchr::memmem;
use rmcp::schemars::{self, JsonSchema};
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use super::change::{IfMissing, change};
use super::output::{Answer, Page, count, json_len, show_line};
use super::state::State;
use crate::limits::{WORKSPACE_EDIT_CONTEXT_LINES, WORKSPACE_EDIT_SHOWN_LINES};
use crate::workspace_contract::ChangedFile;

/// What the model asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct EditRequest {
    pub path: String,
    pub old_text: String,
    pub new_text: String,
    pub replace_all: bool,
}

/// `edit`'s structured content (its output schema).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(super) struct EditOutput {
    /// The file (`created` is left out: `edit` changes existing files only).
    #[serde(flatten)]
    pub file: ChangedFile,
    /// How many places were replaced.
    pub replacements: u64,
    /// The first and last line of the file, as it is now, that the change touched.
    pub first_changed_line: u64,
    pub last_changed_line: u64,
}

/// The new content and where the replaced text now sits, as line ranges (from 1).
#[derive(Debug)]
struct Replaced {
    content: Vec<u8>,
    ranges: Vec<(u64, u64)>,
}

pub(super) fn edit(
    state: &State,
    request: &EditRequest,
    cancel: &CancellationToken,
) -> Result<Answer, String> {
    if request.old_text.is_empty() {
        return Err(
            "`old_text` is empty: give the exact text to replace (to create a file, or \
                    to replace all of one, use `write`)"
                .to_owned(),
        );
    }
    if request.old_text == request.new_text {
        return Err("`old_text` and `new_text` are the same: nothing would change".to_owned());
    }
    let changed = change(
        state,
        &request.path,
        IfMissing::Refuse,
        cancel,
        |current, shown| {
            let replaced = replace(current.unwrap_or_default(), request, shown)?;
            Ok((replaced.content.clone(), replaced))
        },
    )?;
    let replaced = changed.detail;
    let shown = changed.shown;
    let n = replaced.ranges.len() as u64;
    let first = replaced.ranges.first().map_or(1, |r| r.0);
    let last = replaced.ranges.last().map_or(1, |r| r.1);
    let mut page = Page::reserving(json_len(&shown));
    page.push(&format!(
        "Edited `{shown}`: {} replaced. The lines around the change, as they are now:",
        count(n, "occurrence", "occurrences")
    ));
    let (shown_lines, left_out) = numbered(&mut page, &replaced.content, &replaced.ranges);
    let mut notes = Vec::new();
    if left_out > 0 {
        notes.push(format!(
            "{shown_lines} lines shown; {} more changed lines not shown (`read` the file to \
             see them)",
            left_out
        ));
    }
    let output = EditOutput {
        file: ChangedFile {
            path: shown,
            created: None,
        },
        replacements: n,
        first_changed_line: first,
        last_changed_line: last,
    };
    Ok(Answer::new(page.finish(&notes), &output))
}

/// Replaces `old_text` in `current`: exactly one place, or every one with `replace_all`.
fn replace(current: &[u8], request: &EditRequest, shown: &str) -> Result<Replaced, String> {
    let (mut old, mut new) = (
        request.old_text.as_bytes().to_vec(),
        request.new_text.as_bytes().to_vec(),
    );
    let mut places: Vec<usize> = memmem::find_iter(current, &old).collect();
    if places.is_empty() && memmem::find(current, b"\r\n").is_some() {
        let crlf = |text: &str| {
            text.replace("\r\n", "\n")
                .replace('\n', "\r\n")
                .into_bytes()
        };
        let old_crlf = crlf(&request.old_text);
        if old_crlf != old {
            places = memmem::find_iter(current, &old_crlf).collect();
            old = old_crlf;
            new = crlf(&request.new_text);
        }
    }
    match places.len() {
        0 => {
            return Err(format!(
                "`old_text` was not found in `{shown}`: it must match the file exactly, \
                 indentation and line breaks included (without `read`'s line numbers); `read` \
                 the lines again and copy them"
            ));
        }
        1 => {}
        _ if request.replace_all => {}
        many => {
            let lines: Vec<String> = places
                .iter()
                .take(10)
                .map(|&at| line_of(current, at).to_string())
                .collect();
            let more = if many > 10 { ", …" } else { "" };
            return Err(format!(
                "`old_text` occurs {many} times in `{shown}` (on lines {}{more}); include more \
                 of the surrounding lines so that it occurs once, or set `replace_all` to \
                 replace every one",
                lines.join(", ")
            ));
        }
    }
    let mut content = Vec::with_capacity(current.len() + places.len() * new.len());
    let mut ranges = Vec::with_capacity(places.len());
    let mut from = 0;
    let mut line: u64 = 1;
    for &at in &places {
        line += count_lines(&current[from..at]);
        content.extend_from_slice(&current[from..at]);
        // The new text's last line is changed; the line after a final newline is not.
        let span = count_lines(new.strip_suffix(b"\n").unwrap_or(&new));
        ranges.push((line, line + span));
        content.extend_from_slice(&new);
        line += count_lines(&new);
        from = at + old.len();
    }
    content.extend_from_slice(&current[from..]);
    Ok(Replaced { content, ranges })
}

fn count_lines(bytes: &[u8]) -> u64 {
    memchr::memchr_iter(b'\n', bytes).count() as u64
}

fn line_of(content: &[u8], at: usize) -> u64 {
    1 + count_lines(&content[..at])
}

/// Shows the lines of `ranges` in `content`, with [`WORKSPACE_EDIT_CONTEXT_LINES`] around
/// each, groups that overlap merged and separate ones divided by `--`, at most
/// [`WORKSPACE_EDIT_SHOWN_LINES`] lines. Returns the lines shown and the changed lines left
/// out.
fn numbered(page: &mut Page, content: &[u8], ranges: &[(u64, u64)]) -> (u64, u64) {
    let context = WORKSPACE_EDIT_CONTEXT_LINES as u64;
    let mut groups: Vec<(u64, u64)> = Vec::new();
    for &(first, last) in ranges {
        let (from, to) = (first.saturating_sub(context).max(1), last + context);
        match groups.last_mut() {
            Some(group) if from <= group.1 + 1 => group.1 = group.1.max(to),
            _ => groups.push((from, to)),
        }
    }
    let lines: Vec<&[u8]> = content.split(|b| *b == b'\n').collect();
    // A file ending with a newline has no line after it.
    let total = if content.ends_with(b"\n") {
        lines.len() as u64 - 1
    } else {
        lines.len() as u64
    };
    let mut shown = 0u64;
    let mut left_out = 0u64;
    for (i, &(from, to)) in groups.iter().enumerate() {
        let to = to.min(total.max(1));
        if i > 0 && shown < WORKSPACE_EDIT_SHOWN_LINES as u64 {
            page.push("--");
        }
        for number in from..=to {
            let text = lines
                .get(usize::try_from(number - 1).unwrap_or(usize::MAX))
                .copied()
                .unwrap_or_default();
            let changed = ranges.iter().any(|r| (r.0..=r.1).contains(&number));
            if shown >= WORKSPACE_EDIT_SHOWN_LINES as u64
                || !page.push_numbered(number, &show_line(text, text.len() as u64).text)
            {
                left_out += u64::from(changed);
                continue;
            }
            shown += 1;
        }
    }
    (shown, left_out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(old: &str, new: &str, all: bool) -> EditRequest {
        EditRequest {
            path: "a.txt".into(),
            old_text: old.into(),
            new_text: new.into(),
            replace_all: all,
        }
    }

    #[test]
    fn one_place_is_replaced_and_its_lines_found() {
        let r = replace(b"a\nb\nc\n", &request("b\n", "x\ny\n", false), "a.txt").unwrap();
        assert_eq!(r.content, b"a\nx\ny\nc\n");
        assert_eq!(r.ranges, [(2, 3)]);
        let r = replace(b"a b a", &request("a", "c", true), "a.txt").unwrap();
        assert_eq!(r.content, b"c b c");
        assert_eq!(r.ranges.len(), 2);
    }

    #[test]
    fn many_places_need_replace_all_and_none_is_an_error_that_says_why() {
        let e = replace(b"x\nx\n", &request("x", "y", false), "a.txt").unwrap_err();
        assert!(
            e.contains("occurs 2 times") && e.contains("lines 1, 2"),
            "{e}"
        );
        let e = replace(b"x\n", &request("z", "y", false), "a.txt").unwrap_err();
        assert!(e.contains("was not found"), "{e}");
    }

    #[test]
    fn crlf_files_match_text_written_with_newlines() {
        let r = replace(b"a\r\nb\r\nc\r\n", &request("a\nb", "a\nB", false), "a").unwrap();
        assert_eq!(r.content, b"a\r\nB\r\nc\r\n");
    }

    #[test]
    fn the_answer_shows_the_changed_lines_with_context() {
        let content: Vec<u8> = (1..=20)
            .map(|i| format!("l{i}\n"))
            .collect::<String>()
            .into();
        let mut page = Page::reserving(0);
        let (shown, left) = numbered(&mut page, &content, &[(10, 10), (12, 12)]);
        assert_eq!((shown, left), (9, 0));
        let text = page.finish(&[]);
        assert!(text.starts_with("     7\tl7\n"), "{text}");
        assert!(text.ends_with("    15\tl15\n"), "{text}");
        let mut page = Page::reserving(0);
        numbered(&mut page, &content, &[(1, 1), (20, 20)]);
        let text = page.finish(&[]);
        assert!(text.contains("     4\tl4\n--\n    17\tl17\n"), "{text}");
        assert!(text.ends_with("    20\tl20\n"), "{text}");
    }
}
