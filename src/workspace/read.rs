//! `read`: a text file's lines, numbered as `cat -n` numbers them, from `offset` for
//! `limit` lines (SPEC §8.6).
//!
//! The file is read in blocks up to the end of the requested range and no further: lines
//! before the range are only counted, lines in it keep at most what can be shown of them,
//! and past the range one more byte says whether more lines follow (the total is not
//! counted: the first lines of an 8 GiB file cost what they cost in a small one). Memory
//! stays bounded whatever the file's size or its longest line, and so does time: a read
//! scans at most [`WORKSPACE_READ_SCAN_BYTES`] of a file, and when it stops there before
//! the lines asked for, it says in which line (issue 34: a line of a tebibyte of NULs in a
//! sparse file otherwise kept a read going for minutes).

use std::io::{BufRead, BufReader, Read};

use rmcp::schemars::{self, JsonSchema};
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use super::open::Refusal;
use super::output::{Answer, LINE_KEEP_BYTES, Page, count, json_len, show_line};
use super::root::WorkspaceRoot;
use super::seen::{Hashing, Seen};
use crate::limits::{
    TOOL_OUTPUT_BYTES, WORKSPACE_BINARY_SNIFF_BYTES, WORKSPACE_CHANGE_BYTES, WORKSPACE_LINE_CHARS,
    WORKSPACE_READ_LINES, WORKSPACE_READ_SCAN_BYTES,
};

/// What the model asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadRequest {
    pub path: String,
    /// The first line to show, from 1.
    pub offset: u64,
    /// How many lines to show.
    pub limit: u64,
}

impl ReadRequest {
    pub fn new(path: &str, offset: Option<u64>, limit: Option<u64>) -> Self {
        ReadRequest {
            path: path.to_owned(),
            offset: offset.unwrap_or(1).max(1),
            limit: limit.unwrap_or(WORKSPACE_READ_LINES).max(1),
        }
    }
}

/// One line in the requested range, as shown.
struct Line {
    number: u64,
    text: String,
}

/// What a scan of the file found.
#[derive(Default)]
struct Scan {
    lines: Vec<Line>,
    /// How many lines the file has, when the scan reached its end.
    total: Option<u64>,
    lossy: bool,
    cut: u64,
    /// The kept lines' text as JSON, in bytes; past the output cap no more lines are kept
    /// (they could not be shown) and the scan stops.
    bytes: usize,
    /// Where the scan stopped at [`WORKSPACE_READ_SCAN_BYTES`] before the range ended: the
    /// line it was in.
    stopped: Option<Stopped>,
}

/// Where a scan stopped at its byte bound.
#[derive(Debug, Clone, Copy)]
struct Stopped {
    line: u64,
    /// Whether some of the line had been read (else the bound fell at its start).
    inside: bool,
}

impl Stopped {
    fn place(self) -> String {
        if self.inside {
            format!("inside line {}", self.line)
        } else {
            format!("at the start of line {}", self.line)
        }
    }
}

impl Scan {
    fn room(&self) -> bool {
        self.bytes <= TOOL_OUTPUT_BYTES
    }
}

/// Reads as `read` does, remembering nothing (the benches' entry).
pub fn read(
    root: &WorkspaceRoot,
    request: &ReadRequest,
    cancel: &CancellationToken,
) -> Result<Answer, String> {
    read_noting(root, request, cancel, None)
}

/// `read`; with `seen`, the file's content hash is remembered as read by this run (a file of
/// at most [`WORKSPACE_CHANGE_BYTES`], which `edit` and `write` may then change), hashed
/// from the very bytes the lines were read from, in the same pass.
pub(super) fn read_noting(
    root: &WorkspaceRoot,
    request: &ReadRequest,
    cancel: &CancellationToken,
    seen: Option<&Seen>,
) -> Result<Answer, String> {
    let path = root.resolve(&request.path)?;
    let shown = root.display(&path);
    let file = root.open_regular(&path).map_err(|refusal| match refusal {
        Refusal::NotRegular("a directory") => format!(
            "`{shown}` is a directory; use `list` to see its entries or `glob` to find files in it"
        ),
        other => format!("`{shown}` {}", other.reason()),
    })?;
    let changeable = file
        .metadata()
        .is_ok_and(|meta| meta.len() <= WORKSPACE_CHANGE_BYTES);
    let scan = match seen.filter(|_| changeable) {
        Some(seen) => {
            let mut reader = Hashing::new(&file);
            let scan = scan(&mut reader, &shown, request, cancel)?;
            if let Ok(Some(hash)) = reader.finish(WORKSPACE_CHANGE_BYTES) {
                seen.remember(&path, hash);
            }
            scan
        }
        None => scan(&file, &shown, request, cancel)?,
    };
    answer(&shown, request, &scan)
}

/// The answer to `request` from what the scan found.
fn answer(shown: &str, request: &ReadRequest, scan: &Scan) -> Result<Answer, String> {
    if scan.total == Some(0) {
        return Ok(Answer::new(
            format!("[`{shown}` is empty]\n"),
            &structured(shown, request, scan, 0, None, false),
        ));
    }
    if let Some(total) = scan.total
        && request.offset > total
    {
        return Err(format!(
            "`{shown}` has {}; offset {} is past its end",
            count(total, "line", "lines"),
            request.offset
        ));
    }
    if let Some(stopped) = scan.stopped
        && scan.lines.is_empty()
    {
        let before = if request.offset > stopped.line {
            format!("line {}", request.offset)
        } else {
            "its end".to_owned()
        };
        return Err(format!(
            "`{shown}`: `read` scans at most the first {} MiB of a file, and it stopped there \
             {}, before {before}",
            WORKSPACE_READ_SCAN_BYTES / (1024 * 1024),
            stopped.place()
        ));
    }
    let mut page = Page::reserving(json_len(shown));
    let mut shown_lines = 0;
    for line in &scan.lines {
        if !page.push_numbered(line.number, &line.text) {
            break;
        }
        shown_lines += 1;
    }
    let last = request.offset + shown_lines - 1;
    let next = match (scan.total, scan.stopped) {
        // Nothing past the bound can be read: there is nowhere to continue.
        (_, Some(stopped)) => (last + 1 < stopped.line).then_some(last + 1),
        (Some(total), None) => (last < total).then_some(last + 1),
        (None, None) => Some(last + 1),
    };
    let notes = notes(request, scan, last, next);
    let full = page.is_full();
    let structured = structured(shown, request, scan, shown_lines, next, full);
    Ok(Answer::new(page.finish(&notes), &structured))
}

/// What the answer says after the lines: where to continue, what was cut, where the scan
/// stopped.
fn notes(request: &ReadRequest, scan: &Scan, last: u64, next: Option<u64>) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(next) = next {
        notes.push(format!(
            "lines {}-{last} shown; more lines follow; continue with offset {next}",
            request.offset
        ));
    }
    if scan.cut > 0 {
        notes.push(format!(
            "{} longer than {WORKSPACE_LINE_CHARS} characters {} cut",
            count(scan.cut, "line", "lines"),
            if scan.cut == 1 { "was" } else { "were" }
        ));
    }
    if scan.lossy {
        notes.push("the file is not valid UTF-8: invalid bytes are shown as U+FFFD".to_owned());
    }
    if let Some(stopped) = scan.stopped
        && next.is_none()
    {
        notes.push(format!(
            "`read` scans at most the first {} MiB of a file: it stopped there, {}, so lines \
             {} and after cannot be shown",
            WORKSPACE_READ_SCAN_BYTES / (1024 * 1024),
            stopped.place(),
            stopped.line
        ));
    }
    notes
}

/// `read`'s structured content (its output schema): where the lines shown sit in the file.
/// The lines themselves are the text block (numbered); repeating up to 1 MiB of them here
/// would double every answer on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(super) struct ReadOutput {
    /// The file, relative to the workspace root.
    pub path: String,
    /// The number of the first line shown (0 when none is).
    pub first_line: u64,
    /// The number of the last line shown (0 when none is).
    pub last_line: u64,
    /// How many lines the file has: known when the lines shown reach its end, `null` when
    /// more lines follow (they are not read, so not counted).
    pub total_lines: Option<u64>,
    /// Where to continue (`offset`) when lines follow the ones shown.
    pub next_offset: Option<u64>,
    /// How many of the lines shown were cut at the line-length limit.
    pub long_lines_cut: u64,
    /// Whether the file is not valid UTF-8 (invalid bytes are shown as U+FFFD).
    pub invalid_utf8: bool,
    /// Whether the answer reached the output cap before the last requested line.
    pub output_cut: bool,
    /// The line `read` stopped in when it had scanned as much of the file as one read
    /// scans, before the last requested line (`null` when it did not stop): no line from
    /// there on can be shown.
    pub scan_stopped_at_line: Option<u64>,
}

fn structured(
    shown: &str,
    request: &ReadRequest,
    scan: &Scan,
    shown_lines: u64,
    next: Option<u64>,
    output_cut: bool,
) -> ReadOutput {
    let range = |n: u64| if shown_lines == 0 { 0 } else { n };
    ReadOutput {
        path: shown.to_owned(),
        first_line: range(request.offset),
        last_line: range(request.offset + shown_lines.saturating_sub(1)),
        total_lines: if next.is_some() { None } else { scan.total },
        next_offset: next,
        long_lines_cut: scan.cut,
        invalid_utf8: scan.lossy,
        output_cut,
        scan_stopped_at_line: scan.stopped.map(|s| s.line),
    }
}

/// Reads the file up to the end of the requested range (or of what the output cap can
/// show), keeping those lines, and then no further than one byte to know whether more
/// follow. Refuses a file with a NUL byte in its first block or in a line that would be
/// shown.
fn scan(
    file: impl Read,
    shown: &str,
    request: &ReadRequest,
    cancel: &CancellationToken,
) -> Result<Scan, String> {
    let mut reader = BufReader::with_capacity(64 * 1024, file);
    let first = request.offset;
    let end = request.offset.saturating_add(request.limit);
    let mut out = Scan::default();
    // The number of the line being read, its kept bytes and its length so far.
    let mut number: u64 = 1;
    let mut kept: Vec<u8> = Vec::new();
    let mut len: u64 = 0;
    let mut position: u64 = 0;
    let mut last_byte = None;
    loop {
        if cancel.is_cancelled() {
            return Err("the call was cancelled".to_owned());
        }
        let block = reader
            .fill_buf()
            .map_err(|e| format!("`{shown}` cannot be read: {e}"))?;
        if block.is_empty() {
            break;
        }
        if number >= end || !out.room() {
            // Past the range (or past what can be shown), and more bytes follow: stop.
            return Ok(out);
        }
        if position >= WORKSPACE_READ_SCAN_BYTES {
            // As far as one read scans, wherever the lines end: a line of a tebibyte costs
            // what 256 MiB of lines costs.
            out.stopped = Some(Stopped {
                line: number,
                inside: len > 0,
            });
            return Ok(out);
        }
        let size = block.len();
        if position < WORKSPACE_BINARY_SNIFF_BYTES {
            let sniffed = (WORKSPACE_BINARY_SNIFF_BYTES - position).min(size as u64) as usize;
            if memchr::memchr(0, &block[..sniffed]).is_some() {
                return Err(binary(shown));
            }
        }
        last_byte = block.last().copied();
        let mut at = 0;
        while at < size {
            if number >= end || !out.room() {
                // Bytes follow the range within this block.
                return Ok(out);
            }
            let (segment, ends_line) = match memchr::memchr(b'\n', &block[at..]) {
                Some(i) => (&block[at..at + i], true),
                None => (&block[at..], false),
            };
            at += segment.len() + usize::from(ends_line);
            let keeping = number >= first;
            if keeping {
                let room = LINE_KEEP_BYTES.saturating_sub(kept.len());
                kept.extend_from_slice(&segment[..segment.len().min(room)]);
            }
            len += segment.len() as u64;
            if ends_line {
                if keeping {
                    keep(&mut out, number, &kept, len, shown)?;
                    kept.clear();
                }
                number += 1;
                len = 0;
            }
        }
        position += size as u64;
        reader.consume(size);
    }
    // The end of the file. A last line without a newline is a line too.
    if last_byte.is_some_and(|b| b != b'\n') {
        if number >= first && number < end && out.room() {
            keep(&mut out, number, &kept, len, shown)?;
        }
        out.total = Some(number);
    } else {
        out.total = Some(number - 1);
    }
    Ok(out)
}

fn keep(out: &mut Scan, number: u64, kept: &[u8], len: u64, shown: &str) -> Result<(), String> {
    if memchr::memchr(0, kept).is_some() {
        return Err(format!(
            "{} (a NUL byte on line {number})",
            binary(shown).trim_end_matches('.')
        ));
    }
    let line = show_line(kept, len);
    out.lossy |= line.lossy;
    out.cut += u64::from(line.cut);
    // The number, a tab and a newline around the text (as JSON).
    out.bytes += json_len(&line.text) + 11;
    out.lines.push(Line {
        number,
        text: line.text,
    });
    Ok(())
}

fn binary(shown: &str) -> String {
    format!("`{shown}` looks binary; `read` shows text files only.")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup(files: &[(&str, &[u8])]) -> (tempfile::TempDir, WorkspaceRoot) {
        let dir = tempfile::tempdir().unwrap();
        for (name, bytes) in files {
            std::fs::write(dir.path().join(name), bytes).unwrap();
        }
        let root = WorkspaceRoot::open(dir.path()).unwrap();
        (dir, root)
    }

    fn run(
        root: &WorkspaceRoot,
        path: &str,
        offset: Option<u64>,
        limit: Option<u64>,
    ) -> Result<Answer, String> {
        read(
            root,
            &ReadRequest::new(path, offset, limit),
            &CancellationToken::new(),
        )
    }

    #[test]
    fn lines_are_numbered_and_ranges_say_where_to_go_on() {
        let text: String = (1..=10).map(|i| format!("line {i}\n")).collect();
        let (_d, root) = setup(&[("a.txt", text.as_bytes())]);
        let all = run(&root, "a.txt", None, None).unwrap();
        assert_eq!(all.text.lines().next(), Some("     1\tline 1"));
        assert_eq!(all.text.lines().count(), 10, "no note when all is shown");
        assert_eq!(all.structured["total_lines"], 10);
        assert_eq!(all.structured["next_offset"], serde_json::Value::Null);

        let part = run(&root, "a.txt", Some(3), Some(2)).unwrap();
        assert_eq!(
            part.text,
            "     3\tline 3\n     4\tline 4\n[lines 3-4 shown; more lines follow; continue with offset 5]\n"
        );
        assert_eq!(part.structured["first_line"], 3);
        assert_eq!(part.structured["last_line"], 4);
        assert_eq!(part.structured["next_offset"], 5);
        assert_eq!(part.structured["total_lines"], serde_json::Value::Null);

        let tail = run(&root, "a.txt", Some(10), Some(5)).unwrap();
        assert_eq!(tail.text, "    10\tline 10\n");
        assert_eq!(tail.structured["total_lines"], 10);
        // The range ends at the last line: nothing follows, so nothing is said.
        let exact = run(&root, "a.txt", Some(9), Some(2)).unwrap();
        assert_eq!(exact.text, "     9\tline 9\n    10\tline 10\n");
        assert_eq!(exact.structured["next_offset"], serde_json::Value::Null);
        assert_eq!(
            run(&root, "a.txt", Some(11), None).unwrap_err(),
            "`a.txt` has 10 lines; offset 11 is past its end"
        );
    }

    #[test]
    fn a_last_line_without_newline_counts_and_crlf_is_dropped() {
        let (_d, root) = setup(&[("a.txt", b"one\r\ntwo"), ("empty.txt", b"")]);
        let answer = run(&root, "a.txt", None, None).unwrap();
        assert_eq!(answer.text, "     1\tone\n     2\ttwo\n");
        assert_eq!(answer.structured["total_lines"], 2);
        let empty = run(&root, "empty.txt", None, None).unwrap();
        assert_eq!(empty.text, "[`empty.txt` is empty]\n");
    }

    #[test]
    fn binary_is_refused_and_bad_utf8_is_shown_lossily() {
        let (_d, root) = setup(&[
            ("bin", b"\x7fELF\x00\x01"),
            ("latin1.txt", b"caf\xe9\nok\n"),
        ]);
        assert_eq!(
            run(&root, "bin", None, None).unwrap_err(),
            "`bin` looks binary; `read` shows text files only."
        );
        let answer = run(&root, "latin1.txt", None, None).unwrap();
        assert_eq!(
            answer.text,
            "     1\tcaf\u{FFFD}\n     2\tok\n[the file is not valid UTF-8: invalid bytes are shown as U+FFFD]\n"
        );
        assert_eq!(answer.structured["invalid_utf8"], true);
        // A NUL past the first block, on a line that is shown.
        let mut late = "text\n".repeat(3000).into_bytes();
        late.extend_from_slice(b"a\x00b\n");
        let (_d, root) = setup(&[("late.bin", &late)]);
        assert!(
            run(&root, "late.bin", Some(2990), None)
                .unwrap_err()
                .contains("a NUL byte on line 3001")
        );
        assert!(
            run(&root, "late.bin", None, Some(10)).is_ok(),
            "not shown, not refused"
        );
    }

    #[test]
    fn long_lines_are_cut_and_counted() {
        let long = format!("{}\nshort\n", "y".repeat(100_000));
        let (_d, root) = setup(&[("min.js", long.as_bytes())]);
        let answer = run(&root, "min.js", None, None).unwrap();
        let first = answer.text.lines().next().unwrap();
        assert!(first.starts_with(&format!("     1\t{}", "y".repeat(WORKSPACE_LINE_CHARS))));
        assert!(
            first.ends_with("[line cut at 2000 characters; it has 100000 bytes]"),
            "{first}"
        );
        assert!(
            answer
                .text
                .ends_with("[1 line longer than 2000 characters was cut]\n")
        );
        assert_eq!(answer.structured["long_lines_cut"], 1);
    }

    #[test]
    fn directories_and_missing_files_are_explained() {
        let (d, root) = setup(&[]);
        std::fs::create_dir(d.path().join("src")).unwrap();
        assert!(
            run(&root, "src", None, None)
                .unwrap_err()
                .contains("is a directory; use `list`")
        );
        assert_eq!(
            run(&root, "nope.rs", None, None).unwrap_err(),
            "`nope.rs` does not exist in the workspace"
        );
    }

    #[test]
    fn reading_stops_at_the_end_of_the_range() {
        let (d, root) = setup(&[("big.txt", b"")]);
        // More text than the binary sniff looks at, then 1 TiB of nothing: a hole, read as
        // NUL bytes if read at all.
        let text: String = (1..=1000).map(|i| format!("line {i:>4}\n")).collect();
        let file = std::fs::File::options()
            .write(true)
            .open(d.path().join("big.txt"))
            .unwrap();
        std::io::Write::write_all(&mut &file, text.as_bytes()).unwrap();
        file.set_len(1 << 40).unwrap();
        let answer = run(&root, "big.txt", None, Some(10)).unwrap();
        assert!(answer.text.starts_with("     1\tline    1\n"));
        assert!(
            answer
                .text
                .ends_with("    10\tline   10\n[lines 1-10 shown; more lines follow; continue with offset 11]\n"),
            "{}",
            answer.text
        );
        assert_eq!(answer.structured["total_lines"], serde_json::Value::Null);
        // The range ends with the text: the NUL bytes after it are not read either.
        let answer = run(&root, "big.txt", Some(991), Some(10)).unwrap();
        assert!(
            answer.text.ends_with("continue with offset 1001]\n"),
            "{}",
            answer.text
        );
    }

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let (d, root) = setup(&[]);
        let c = std::ffi::CString::new(d.path().join("pipe").to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        assert_eq!(
            run(&root, "pipe", None, None).unwrap_err(),
            "`pipe` is a FIFO, not a regular file"
        );
    }

    #[test]
    fn a_cancelled_call_stops() {
        let (_d, root) = setup(&[("a.txt", b"x\n")]);
        let cancel = CancellationToken::new();
        cancel.cancel();
        assert_eq!(
            read(&root, &ReadRequest::new("a.txt", None, None), &cancel).unwrap_err(),
            "the call was cancelled"
        );
    }
}
