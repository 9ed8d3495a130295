//! `grep`: lines matching a regular expression, with paths and line numbers, over the
//! workspace's files as ripgrep walks them (SPEC §8.6). The engine is ripgrep's own:
//! `grep-regex` for the pattern and `grep-searcher` for line-oriented search with context
//! and binary detection.
//!
//! Results are shown up to the call's `limit` (and the output cap); the search still runs
//! to the end so that the answer can say how many matching lines and files were left out.

use std::fs::File;

use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{
    BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkContextKind, SinkMatch,
};
use rmcp::schemars::{self, JsonSchema};
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use super::open::Refusal;
use super::output::{
    Answer, LINE_KEEP_BYTES, Page, count, json_len, json_size, quote, shorten, show_line,
};
use super::root::WorkspaceRoot;
use super::walk::{NameGlob, last_line, walk};
use crate::limits::{
    WORKSPACE_GREP_LINE_BYTES, WORKSPACE_GREP_RESULTS_MAX, WORKSPACE_PATTERN_BYTES,
    WORKSPACE_QUOTE_BYTES, WORKSPACE_REGEX_BYTES, WORKSPACE_REGEX_DFA_BYTES,
};

/// What `grep` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Matching lines as `path:line:text`, context as `path-line-text`.
    #[default]
    Content,
    /// The paths of files with a match.
    FilesWithMatches,
    /// `path:count` for each file with a match.
    Count,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Content => "content",
            Mode::FilesWithMatches => "files_with_matches",
            Mode::Count => "count",
        }
    }
}

/// What the model asked for, with defaults applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrepRequest {
    pub pattern: String,
    pub path: String,
    pub glob: Option<String>,
    pub mode: Mode,
    pub case_insensitive: bool,
    pub literal: bool,
    /// Lines shown before and after each match (content mode).
    pub context: u64,
    /// Results shown: lines (content) or files.
    pub limit: u64,
}

pub fn grep(
    root: &WorkspaceRoot,
    request: &GrepRequest,
    cancel: &CancellationToken,
) -> Result<Answer, String> {
    let target = root.resolve(&request.path)?;
    let shown_target = root.display(&target);
    let filter = request.glob.as_deref().map(NameGlob::new).transpose()?;
    let matcher = compile(request)?;
    let context = match request.mode {
        Mode::Content => request.context as usize,
        _ => 0,
    };
    let mut searcher = SearcherBuilder::new()
        .line_number(true)
        .binary_detection(BinaryDetection::quit(0))
        .heap_limit(Some(WORKSPACE_GREP_LINE_BYTES))
        .before_context(context)
        .after_context(context)
        .max_matches((request.mode == Mode::FilesWithMatches).then_some(1))
        .build();

    let mut state = State::new(request, &shown_target);
    if !target.is_dir() {
        // A file named by `path` is searched whatever the ignore rules and the glob say;
        // something that is not a regular file is refused before it is opened.
        let file = root
            .open_regular(&target)
            .map_err(|refusal| match refusal {
                Refusal::NotRegular(_) | Refusal::Link => format!(
                    "`{shown_target}` {}; `grep` searches regular files and directories",
                    refusal.reason()
                ),
                other => format!("`{shown_target}` {}", other.reason()),
            })?;
        state.search(&mut searcher, &matcher, &file, shown_target.clone(), cancel)?;
    } else {
        let mut walk = walk(root, &target);
        for entry in &mut walk {
            if cancel.is_cancelled() {
                return Err("the call was cancelled".to_owned());
            }
            let Ok(entry) = entry else {
                state.unreadable += 1;
                continue;
            };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            let relative = entry.path().strip_prefix(&target).unwrap_or(entry.path());
            if filter.as_ref().is_some_and(|f| !f.matches(relative)) {
                continue;
            }
            // Opened safely: the kind the directory listing gave may be stale (a file
            // swapped for a FIFO since would block a plain open forever).
            let Ok(file) = root.open_regular(entry.path()) else {
                state.unreadable += 1;
                continue;
            };
            let shown = root.display(entry.path());
            state.search(&mut searcher, &matcher, &file, shown, cancel)?;
        }
        state.ignore_notes = walk.notes();
    }
    Ok(state.finish(request, &shown_target))
}

/// The pattern as a matcher, within the length and compile-size limits; a bad pattern's
/// error quotes it cut, and the engine's reason only.
fn compile(request: &GrepRequest) -> Result<RegexMatcher, String> {
    if request.pattern.is_empty() {
        return Err("the pattern is empty".to_owned());
    }
    if request.pattern.len() > WORKSPACE_PATTERN_BYTES {
        return Err(format!(
            "the pattern is {} bytes long; a pattern is at most {WORKSPACE_PATTERN_BYTES} \
             bytes: search for a shorter part of the text",
            request.pattern.len()
        ));
    }
    RegexMatcherBuilder::new()
        .case_insensitive(request.case_insensitive)
        .fixed_strings(request.literal)
        .line_terminator(Some(b'\n'))
        .size_limit(WORKSPACE_REGEX_BYTES)
        .dfa_size_limit(WORKSPACE_REGEX_DFA_BYTES)
        .build(&request.pattern)
        .map_err(|e| {
            // The engine quotes the whole pattern with a caret under the fault; a short one
            // reads well as it is, a long one is cut to the reason on its last line.
            let full = e.to_string();
            let reason = if full.len() <= WORKSPACE_QUOTE_BYTES {
                full
            } else {
                last_line(&full)
            };
            format!(
                "`{}` is not a valid regular expression (Rust regex syntax, as ripgrep's; set \
                 `literal: true` to search for the text as written): {}",
                quote(&request.pattern),
                shorten(&reason)
            )
        })
}

/// `grep`'s structured content (its output schema).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(super) struct GrepOutput {
    pub pattern: String,
    /// The directory or file searched, relative to the workspace root.
    pub path: String,
    /// `content`, `files_with_matches` or `count`.
    pub mode: &'static str,
    /// Content mode: the matching lines shown.
    pub matches: Vec<GrepMatch>,
    /// The other modes: the files shown.
    pub files: Vec<GrepFile>,
    /// How many results (lines, or files) were shown.
    pub shown: u64,
    /// Matching lines in all (not counted in `files_with_matches` mode, which stops at a
    /// file's first match).
    pub total_matching_lines: Option<u64>,
    /// Files with at least one match.
    pub total_matching_files: u64,
    /// Files skipped because they hold binary data.
    pub binary_files_skipped: u64,
}

/// One matching line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(super) struct GrepMatch {
    /// Relative to the workspace root.
    pub path: String,
    /// From 1.
    pub line: u64,
    /// The line as shown (cut when it is very long).
    pub text: String,
}

/// A file with matches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(super) struct GrepFile {
    /// Relative to the workspace root.
    pub path: String,
    /// Its matching lines (`count` mode).
    pub count: Option<u64>,
}

/// Everything one call collects, across files.
struct State {
    mode: Mode,
    limit: u64,
    context: bool,
    page: Page,
    /// Results shown: lines in content mode, files otherwise.
    shown: u64,
    matches: Vec<GrepMatch>,
    files: Vec<GrepFile>,
    matching_lines: u64,
    matching_files: u64,
    binary_files: u64,
    unreadable: u64,
    /// Notes about ignore files that were not applied.
    ignore_notes: Vec<String>,
    /// Whether anything was printed yet (for `--` between files, with context).
    printed_any: bool,
}

impl State {
    fn new(request: &GrepRequest, shown_target: &str) -> State {
        State {
            mode: request.mode,
            limit: request.limit.clamp(1, WORKSPACE_GREP_RESULTS_MAX),
            context: request.mode == Mode::Content && request.context > 0,
            // The structured content repeats the pattern and the path.
            page: Page::reserving(json_len(&request.pattern) + json_len(shown_target)),
            shown: 0,
            matches: Vec::new(),
            files: Vec::new(),
            matching_lines: 0,
            matching_files: 0,
            binary_files: 0,
            unreadable: 0,
            ignore_notes: Vec::new(),
            printed_any: false,
        }
    }

    fn showing(&self) -> bool {
        self.shown < self.limit && !self.page.is_full()
    }

    fn search(
        &mut self,
        searcher: &mut Searcher,
        matcher: &RegexMatcher,
        file: &File,
        shown: String,
        cancel: &CancellationToken,
    ) -> Result<(), String> {
        let mut sink = FileSink {
            state: self,
            path: &shown,
            lines: 0,
            printed: false,
            last_match_shown: false,
            binary: false,
            cancel,
        };
        let searched = searcher.search_file(matcher, file, &mut sink);
        let (lines, binary) = (sink.lines, sink.binary);
        if cancel.is_cancelled() {
            return Err("the call was cancelled".to_owned());
        }
        match searched {
            Ok(()) => {}
            // Unreadable, vanished, or a line past the memory bound: counted, not fatal.
            Err(_) => {
                self.unreadable += 1;
                return Ok(());
            }
        }
        if binary {
            self.binary_files += 1;
        }
        if lines == 0 {
            return Ok(());
        }
        self.matching_files += 1;
        self.matching_lines += lines;
        match self.mode {
            Mode::Content => {}
            Mode::FilesWithMatches | Mode::Count => {
                if self.showing() {
                    let line = match self.mode {
                        Mode::Count => format!("{shown}:{lines}"),
                        _ => shown.clone(),
                    };
                    let entry = GrepFile {
                        path: shown,
                        count: (self.mode == Mode::Count).then_some(lines),
                    };
                    if self.page.push_charged(&line, json_size(&entry)) {
                        self.shown += 1;
                        self.files.push(entry);
                    }
                }
            }
        }
        Ok(())
    }

    fn finish(self, request: &GrepRequest, shown_target: &str) -> Answer {
        let mut notes = Vec::new();
        let files = |n| count(n, "file", "files");
        if self.matching_files == 0 {
            notes.push(format!(
                "no matches for `{}` in `{shown_target}`",
                quote(&request.pattern)
            ));
        } else {
            match self.mode {
                Mode::Content if self.shown < self.matching_lines => notes.push(format!(
                    "showing {} of {} matching lines in {}; {} left out: narrow the pattern, \
                     `path` or `glob`, or raise `limit` (at most {WORKSPACE_GREP_RESULTS_MAX})",
                    self.shown,
                    self.matching_lines,
                    files(self.matching_files),
                    self.matching_lines - self.shown
                )),
                Mode::FilesWithMatches | Mode::Count if self.shown < self.matching_files => notes
                    .push(format!(
                        "showing {} of {} with matches; {} left out: narrow the pattern, \
                         `path` or `glob`, or raise `limit` (at most \
                         {WORKSPACE_GREP_RESULTS_MAX})",
                        self.shown,
                        files(self.matching_files),
                        self.matching_files - self.shown
                    )),
                _ => {}
            }
        }
        if self.binary_files > 0 {
            notes.push(format!(
                "{} skipped as binary",
                count(self.binary_files, "file", "files")
            ));
        }
        if self.unreadable > 0 {
            notes.push(format!(
                "{} could not be searched",
                count(self.unreadable, "file or directory", "files or directories")
            ));
        }
        notes.extend(self.ignore_notes);
        let structured = GrepOutput {
            pattern: request.pattern.clone(),
            path: shown_target.to_owned(),
            mode: self.mode.as_str(),
            matches: self.matches,
            files: self.files,
            shown: self.shown,
            total_matching_lines: (self.mode != Mode::FilesWithMatches)
                .then_some(self.matching_lines),
            total_matching_files: self.matching_files,
            binary_files_skipped: self.binary_files,
        };
        Answer::new(self.page.finish(&notes), &structured)
    }
}

/// Receives one file's matches and context lines.
struct FileSink<'a> {
    state: &'a mut State,
    path: &'a str,
    /// Matching lines in this file.
    lines: u64,
    /// Whether a line of this file was printed.
    printed: bool,
    /// Whether the latest match was printed (its after-context is, then).
    last_match_shown: bool,
    binary: bool,
    cancel: &'a CancellationToken,
}

impl FileSink<'_> {
    fn print(&mut self, separator: char, number: u64, bytes: &[u8]) -> bool {
        let state = &mut *self.state;
        if state.context && !self.printed && state.printed_any && !state.page.push("--") {
            return false;
        }
        let line = without_terminator(bytes);
        let shown = show_line(&line[..line.len().min(LINE_KEEP_BYTES)], line.len() as u64);
        let text = format!("{}{separator}{number}{separator}{}", self.path, shown.text);
        // A matching line is repeated in the structured content; a context line is not.
        let entry = (separator == ':').then(|| GrepMatch {
            path: self.path.to_owned(),
            line: number,
            text: shown.text,
        });
        let charge = entry.as_ref().map_or(0, json_size);
        if !state.page.push_charged(&text, charge) {
            return false;
        }
        state.matches.extend(entry);
        self.printed = true;
        state.printed_any = true;
        true
    }
}

impl Sink for FileSink<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, found: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        if self.cancel.is_cancelled() {
            return Ok(false);
        }
        self.lines += 1;
        if self.state.mode != Mode::Content {
            return Ok(true);
        }
        self.last_match_shown = false;
        if self.state.showing() {
            let number = found.line_number().unwrap_or(0);
            if self.print(':', number, found.bytes()) {
                self.state.shown += 1;
                self.last_match_shown = true;
            }
        }
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, line: &SinkContext<'_>) -> Result<bool, Self::Error> {
        let show = match line.kind() {
            SinkContextKind::Before => self.state.showing(),
            SinkContextKind::After => self.last_match_shown,
            SinkContextKind::Other => false,
        };
        if show {
            self.print('-', line.line_number().unwrap_or(0), line.bytes());
        }
        Ok(true)
    }

    fn context_break(&mut self, _: &Searcher) -> Result<bool, Self::Error> {
        if self.printed && self.state.showing() {
            self.state.page.push("--");
        }
        Ok(true)
    }

    fn binary_data(&mut self, _: &Searcher, _offset: u64) -> Result<bool, Self::Error> {
        self.binary = true;
        Ok(false)
    }
}

fn without_terminator(bytes: &[u8]) -> &[u8] {
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    bytes.strip_suffix(b"\r").unwrap_or(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::WORKSPACE_GREP_RESULTS;
    use serde_json::Value;

    fn request(pattern: &str) -> GrepRequest {
        GrepRequest {
            pattern: pattern.to_owned(),
            path: String::new(),
            glob: None,
            mode: Mode::Content,
            case_insensitive: false,
            literal: false,
            context: 0,
            limit: WORKSPACE_GREP_RESULTS,
        }
    }

    fn workspace() -> (tempfile::TempDir, WorkspaceRoot) {
        let ws = tempfile::tempdir().unwrap();
        let write = |rel: &str, text: &[u8]| {
            let path = ws.path().join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write("src/a.rs", b"fn alpha() {}\nfn beta() {}\n// TODO: gamma\n");
        write("src/b.py", b"def Alpha():\n    pass\n");
        write("target/out.rs", b"fn alpha_built() {}\n");
        write(".gitignore", b"target/\n");
        write(".hidden/h.rs", b"fn alpha_hidden() {}\n");
        write("data.bin", b"alpha\x00\x01\x02");
        let root = WorkspaceRoot::open(ws.path()).unwrap();
        (ws, root)
    }

    fn run(root: &WorkspaceRoot, request: &GrepRequest) -> Answer {
        grep(root, request, &CancellationToken::new()).unwrap()
    }

    #[test]
    fn matches_come_with_paths_and_line_numbers_and_skip_ignored_hidden_and_binary_files() {
        let (_ws, root) = workspace();
        let answer = run(&root, &request("alpha"));
        assert_eq!(
            answer.text,
            "src/a.rs:1:fn alpha() {}\n[1 file skipped as binary]\n"
        );
        assert_eq!(answer.structured["matches"][0]["line"], 1);
        assert_eq!(answer.structured["total_matching_files"], 1);

        let answer = run(
            &root,
            &GrepRequest {
                case_insensitive: true,
                ..request("alpha")
            },
        );
        assert_eq!(
            answer.text,
            "src/a.rs:1:fn alpha() {}\nsrc/b.py:1:def Alpha():\n[1 file skipped as binary]\n"
        );
        // `path` names an ignored directory or file: searched.
        let answer = run(
            &root,
            &GrepRequest {
                path: "target".into(),
                ..request("alpha")
            },
        );
        assert_eq!(answer.text, "target/out.rs:1:fn alpha_built() {}\n");
        let answer = run(
            &root,
            &GrepRequest {
                path: ".hidden/h.rs".into(),
                ..request("alpha")
            },
        );
        assert_eq!(answer.text, ".hidden/h.rs:1:fn alpha_hidden() {}\n");
    }

    #[test]
    fn globs_modes_context_and_literals() {
        let (_ws, root) = workspace();
        let py = run(
            &root,
            &GrepRequest {
                glob: Some("*.py".into()),
                case_insensitive: true,
                ..request("alpha")
            },
        );
        assert_eq!(
            py.text, "src/b.py:1:def Alpha():\n",
            "the glob keeps data.bin out"
        );
        let files = run(
            &root,
            &GrepRequest {
                mode: Mode::FilesWithMatches,
                ..request("fn ")
            },
        );
        assert_eq!(files.text, "src/a.rs\n[1 file skipped as binary]\n");
        assert_eq!(files.structured["total_matching_lines"], Value::Null);
        let counts = run(
            &root,
            &GrepRequest {
                mode: Mode::Count,
                ..request("fn ")
            },
        );
        assert_eq!(counts.text, "src/a.rs:2\n[1 file skipped as binary]\n");
        let context = run(
            &root,
            &GrepRequest {
                context: 1,
                ..request("beta")
            },
        );
        assert_eq!(
            context.text,
            "src/a.rs-1-fn alpha() {}\nsrc/a.rs:2:fn beta() {}\nsrc/a.rs-3-// TODO: gamma\n\
             [1 file skipped as binary]\n"
        );
        let literal = run(
            &root,
            &GrepRequest {
                literal: true,
                ..request("beta()")
            },
        );
        assert!(
            literal.text.starts_with("src/a.rs:2:fn beta() {}\n["),
            "{}",
            literal.text
        );
        let error = grep(&root, &request("beta("), &CancellationToken::new()).unwrap_err();
        assert!(
            error.starts_with("`beta(` is not a valid regular expression"),
            "{error}"
        );
        let none = run(&root, &request("zeta"));
        assert_eq!(
            none.text,
            "[no matches for `zeta` in `.`]\n[1 file skipped as binary]\n"
        );
    }

    #[test]
    fn patterns_are_bounded_and_their_errors_short() {
        let (_ws, root) = workspace();
        let error =
            |pattern: &str| grep(&root, &request(pattern), &CancellationToken::new()).unwrap_err();
        assert_eq!(
            error(&"a".repeat(1_000_000)),
            "the pattern is 1000000 bytes long; a pattern is at most 4096 bytes: search for \
             a shorter part of the text"
        );
        // Compiled past the size limit: refused at once, not after 400 MB and seconds.
        let too_big = error(r"(?:\w{50}){100}");
        assert!(too_big.contains("exceeds size limit"), "{too_big}");
        let too_big = error(r"\w{1000}");
        assert!(too_big.contains("exceeds size limit"), "{too_big}");
        // A long bad pattern: the reason survives the cut, the pattern does not.
        let long = format!("({}", "a".repeat(4000));
        let unclosed = error(&long);
        assert!(unclosed.len() < 700, "{}", unclosed.len());
        assert!(unclosed.ends_with("error: unclosed group"), "{unclosed}");
        assert!(unclosed.starts_with("`(aaaa"), "{unclosed}");
        // Ordinary large classes and repetitions still work.
        for pattern in [r"\pL{100}", "[a-z]{1000}", "fn (alpha|beta)"] {
            assert!(
                grep(&root, &request(pattern), &CancellationToken::new()).is_ok(),
                "{pattern}"
            );
        }
        let none = run(&root, &request(&"z".repeat(4000)));
        assert!(none.text.len() < 500, "{}", none.text);
    }

    #[test]
    fn results_are_capped_and_the_rest_counted() {
        let ws = tempfile::tempdir().unwrap();
        for f in 0..3 {
            let text: String = (0..10).map(|i| format!("hit {i}\n")).collect();
            std::fs::write(ws.path().join(format!("f{f}.txt")), text).unwrap();
        }
        let root = WorkspaceRoot::open(ws.path()).unwrap();
        let answer = run(
            &root,
            &GrepRequest {
                limit: 12,
                ..request("hit")
            },
        );
        let lines: Vec<&str> = answer.text.lines().collect();
        assert_eq!(lines.len(), 13);
        assert_eq!(lines[11], "f1.txt:2:hit 1");
        assert_eq!(
            lines[12],
            "[showing 12 of 30 matching lines in 3 files; 18 left out: narrow the pattern, \
             `path` or `glob`, or raise `limit` (at most 2000)]"
        );
        let files = run(
            &root,
            &GrepRequest {
                limit: 2,
                mode: Mode::FilesWithMatches,
                ..request("hit")
            },
        );
        assert!(files.text.ends_with("[showing 2 of 3 files with matches; 1 left out: narrow the pattern, `path` or `glob`, or raise `limit` (at most 2000)]\n"), "{}", files.text);
    }

    #[test]
    fn context_groups_are_separated() {
        let ws = tempfile::tempdir().unwrap();
        let text: String = (1..=20).map(|i| format!("l{i}\n")).collect();
        std::fs::write(ws.path().join("a.txt"), &text).unwrap();
        std::fs::write(ws.path().join("b.txt"), "l5\n").unwrap();
        let root = WorkspaceRoot::open(ws.path()).unwrap();
        let answer = run(
            &root,
            &GrepRequest {
                context: 1,
                ..request("^l(5|15)$")
            },
        );
        assert_eq!(
            answer.text,
            "a.txt-4-l4\na.txt:5:l5\na.txt-6-l6\n--\na.txt-14-l14\na.txt:15:l15\na.txt-16-l16\n--\nb.txt:1:l5\n"
        );
    }
}
