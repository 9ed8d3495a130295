//! Every bound the server holds to, in one place (SPEC §12), each with the section of SPEC.md
//! it comes from. Nothing else in the code spells a limit as a literal: a module that needs
//! one names it from here, so changing a limit is a one-line change that every message,
//! activity and check follows.
//!
//! The bounds that are not SPEC §12's (retry pacing, the largest reply read, how much of a
//! provider's message is quoted) are here too, below the SPEC's, for the same reason.

use std::ops::RangeInclusive;
use std::time::Duration;

// ----- Sessions (SPEC §5) -----

/// Runs executing at once across the process (SPEC §5, §12).
pub const CONCURRENT_RUNS: usize = 8;
/// Inputs `send_input` may queue on one session (SPEC §4.2, §12).
pub const QUEUED_INPUTS: usize = 16;
/// Terminal sessions retained before the least recently used is evicted (SPEC §5, §12).
pub const RETAINED_TERMINAL_SESSIONS: usize = 64;
/// The retained terminal sessions' histories together, in bytes of provider JSON; past it
/// the least recently used are evicted (SPEC §5, §12).
pub const RETAINED_HISTORY_BYTES: usize = 512 * 1024 * 1024;
/// How long after an eviction freed memory is given back to the system, gathering the
/// evictions in between into one pass (SPEC §5).
pub const MEMORY_TRIM_DELAY: Duration = Duration::from_secs(1);

/// The server-wide limits of SPEC §5 and §12 the session manager enforces, in one value so
/// tests can lower them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerLimits {
    pub concurrent_runs: usize,
    pub queued_inputs: usize,
    pub retained_terminal: usize,
    /// The retained terminal sessions' histories together, in bytes.
    pub retained_history_bytes: usize,
}

impl Default for ServerLimits {
    fn default() -> Self {
        ServerLimits {
            concurrent_runs: CONCURRENT_RUNS,
            queued_inputs: QUEUED_INPUTS,
            retained_terminal: RETAINED_TERMINAL_SESSIONS,
            retained_history_bytes: RETAINED_HISTORY_BYTES,
        }
    }
}

// ----- Spend set once (SPEC §5.1) -----

/// The largest `--prices FILE` read, in bytes. LiteLLM's whole
/// `model_prices_and_context_window.json` is about 1.5 MiB in late 2026; a file past this is
/// refused at startup rather than read into memory (SPEC §5.1).
pub const PRICES_FILE_BYTES: u64 = 32 * 1024 * 1024;

// ----- The model loop (SPEC §3.1, §6) -----

/// Model requests a run may make when the definition does not say (SPEC §3.1, §12).
pub const DEFAULT_MAX_TURNS: u32 = 32;
/// The range `max_turns` must fall in (SPEC §3.1, §12).
pub const MAX_TURNS_RANGE: RangeInclusive<u32> = 1..=1000;
/// The range a run budget (`max_tool_calls`, `max_run_tokens`, `max_run_seconds`) must fall
/// in: a positive whole number (SPEC §3.1, §6 step 5).
pub const RUN_BUDGET_RANGE: RangeInclusive<u32> = 1..=u32::MAX;
/// Extra turns an answer that fails its `output_schema` gets, with the validation errors,
/// before the run fails with `invalid_output` (SPEC §6 step 4).
pub const OUTPUT_REPAIR_TURNS: u32 = 1;
/// The assistant text a failed record keeps as `partial_result`, in bytes (SPEC §4.3, §12).
pub const PARTIAL_RESULT_BYTES: usize = 64 * 1024;

// ----- Providers (SPEC §6, §6.1) -----

/// Connecting to a provider (SPEC §6, §12).
pub const PROVIDER_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The request timeout: the wait for a streamed reply to begin (response headers and first
/// bytes), and every silence between two of its events (SPEC §6.1 "What the 120 s request
/// timeout bounds", §12).
pub const PROVIDER_REQUEST_TIMEOUT: Duration = Duration::from_secs(120);
/// The longest one request may take, however steadily its reply keeps arriving
/// (SPEC §6.1, §12).
pub const PROVIDER_REQUEST_CEILING: Duration = Duration::from_secs(15 * 60);
/// Retries of a request whose reply stalled or broke off after it began: the provider bills
/// a generation whether or not it was received (SPEC §6.1).
pub const PROVIDER_STALL_RETRIES: u32 = 1;
/// `max_output_tokens` for a model the table below does not know (SPEC §6.1 "Output
/// length").
pub const DEFAULT_MAX_OUTPUT_TOKENS: u32 = 32_000;
/// The range a definition's `max_output_tokens` must fall in (SPEC §3.1). Responses refuses
/// less than 16; no model's documented maximum comes near the top, and a value above a
/// model's own maximum is retried with the maximum the provider names (SPEC §6.1).
pub const MAX_OUTPUT_TOKENS_RANGE: RangeInclusive<u32> = 16..=1_000_000;
/// The documented longest reply of the current Claude and GPT families, by model id prefix,
/// the first matching prefix wins (SPEC §6.1 "Output length"; sources in docs/agents.md).
/// A model none of them matches gets [`DEFAULT_MAX_OUTPUT_TOKENS`].
pub const MODEL_MAX_OUTPUT_TOKENS: &[(&str, u32)] = &[
    // The Claude 5 family: every model page says "Max output: 128K tokens" (Opus, Sonnet
    // and Haiku 5 and 5.5, Fable and Mythos 5 and later).
    ("claude-opus-5", 128_000),
    ("claude-sonnet-5", 128_000),
    ("claude-haiku-5", 128_000),
    ("claude-fable-5", 128_000),
    ("claude-mythos-5", 128_000),
    ("claude-opus-4-6", 128_000),
    ("claude-opus-4-7", 128_000),
    ("claude-opus-4-8", 128_000),
    ("claude-sonnet-4-6", 128_000),
    ("claude-opus-4-5", 64_000),
    ("claude-sonnet-4-5", 64_000),
    ("claude-haiku-4-5", 64_000),
    ("claude-opus-4-1", 32_000),
    ("claude-opus-4", 32_000),
    ("claude-sonnet-4", 64_000),
    ("claude-3-7-sonnet", 64_000),
    ("claude-3-5-haiku", 8_192),
    ("claude-3-haiku", 4_096),
    ("gpt-5-chat", 16_384),
    ("gpt-5", 128_000),
    ("gpt-4.1", 32_768),
    ("gpt-4o", 16_384),
    ("o3", 100_000),
    ("o4-mini", 100_000),
];

/// The least `budget_tokens` a Messages request with `thinking: {type: "enabled"}` may ask
/// for: the API refuses less ("Input should be greater than or equal to 1024"; SPEC §6.1).
pub const THINKING_BUDGET_MIN: u32 = 1024;
/// The most `budget_tokens` an effort is turned into: Anthropic's extended-thinking guide
/// sends budgets above 32k to batch processing (SPEC §6.1).
pub const THINKING_BUDGET_MAX: u32 = 32_000;
/// The output limit a reply cut off before it wrote anything (its reasoning took the whole
/// limit) is asked for again with, at least: what OpenAI's reasoning guide says to reserve
/// for reasoning and output (SPEC §6.1 "Output length"). The request is sent again once,
/// with twice the limit or this, whichever is more, within the model's maximum.
pub const REASONING_ROOM_TOKENS: u32 = 25_000;
/// The least room a context window must leave for a reply once the input is in: a server
/// that refuses the output limit because input and limit together overflow its window
/// (vLLM, TGI) gets the request again with the room it names as the limit, unless that room
/// is smaller than this, when the conversation no longer fits (`context_limit`): a reply of
/// fewer tokens would be cut off before it said anything useful.
pub const MIN_REPLY_ROOM_TOKENS: u32 = 1_024;

// ----- Activity (SPEC §7) -----

/// Activity transitions a session remembers, so that a waiter that wakes after several quick
/// ones reports each (SPEC §4.3 progress, §7).
pub const ACTIVITY_HISTORY: usize = 16;
/// Files a session record lists in `files_changed` (SPEC §4.3, §8.6); changes to further
/// files are counted in `unlisted_changes`.
pub const RECORD_FILES_CHANGED: usize = 1000;

// ----- Watching from outside (SPEC §7.1) -----

/// Child tool calls a session remembers with their durations, for the watch's detail (SPEC
/// §7.1); older ones are dropped first.
pub const TOOL_CALL_HISTORY: usize = 64;
/// Connections the status socket serves at once; a watcher beyond them waits in the backlog
/// (SPEC §7.1; one person's terminals, not a crowd).
pub const STATUS_CONNECTIONS: usize = 16;
/// The longest request line a status-socket client may send (`{"stop": "<agent_id>"}` is
/// about 50 bytes); a longer one closes the connection (SPEC §7.1).
pub const STATUS_REQUEST_BYTES: usize = 4096;
/// How long the status socket waits for a watcher to take a line before it closes the
/// connection: a watcher that stops reading holds nothing (SPEC §7.1).
pub const STATUS_WRITE_TIMEOUT: Duration = Duration::from_secs(10);
/// The first line of a result or an error the status endpoint shows, in characters (SPEC
/// §7.1: never more of a result than its first line).
pub const STATUS_LINE_CHARS: usize = 200;
/// How long `status` and `watch` wait for a server's socket to answer before taking it for
/// stale (SPEC §7.1).
pub const STATUS_CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// The longest line `status` and `watch` read from a server: a snapshot of every retained
/// agent (SPEC §5: at most 72) with its tool calls fits many times over (SPEC §7.1).
pub const STATUS_LINE_BYTES: usize = 16 * 1024 * 1024;
/// How often `watch` redraws its clocks, and looks for servers that started since (SPEC
/// §7.1).
pub const WATCH_TICK: Duration = Duration::from_secs(1);
// ----- Questions to the parent (SPEC §4.5) -----

/// How long a question waits for the parent's answer when the definition does not say
/// (`ask_timeout_s`; SPEC §4.5, §12).
pub const ASK_TIMEOUT_DEFAULT: Duration = Duration::from_secs(600);
/// The range `ask_timeout_s` must fall in, in seconds (SPEC §4.5, §12).
pub const ASK_TIMEOUT_RANGE: RangeInclusive<u32> = 1..=3600;
/// The longest question `ask_parent` takes, in characters: a question is read by a person or
/// a parent model on one screen (SPEC §4.5).
pub const ASK_QUESTION_CHARS: usize = 2000;
/// The most `options` one question may offer (SPEC §4.5 "a list of short strings"): as many
/// as a person reads at a glance (Claude Code's own question tool offers 2 to 4).
pub const ASK_OPTIONS: usize = 8;
/// The longest option, in characters: a short answer, not a paragraph (SPEC §4.5).
pub const ASK_OPTION_CHARS: usize = 200;

// ----- Child MCP servers (SPEC §8) -----

/// Connecting to a child, discovering 2026-07-28 and listing its tools (SPEC §8.2, §12).
pub const CHILD_STARTUP_TIMEOUT: Duration = Duration::from_secs(15);
/// One child tool call (SPEC §8.3, §12).
pub const CHILD_CALL_TIMEOUT: Duration = Duration::from_secs(60);
/// Closing a child connection before its process group is killed (SPEC §8.2, §12).
pub const CHILD_SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(5);
/// How long stopping every run may take at server shutdown: the children's shutdown bound
/// and a second for the runs to notice (SPEC §8.2).
pub const SERVER_SHUTDOWN_BOUND: Duration =
    Duration::from_secs(CHILD_SHUTDOWN_TIMEOUT.as_secs() + 1);
/// Closing a child that failed during startup or was started only to ask its version: it
/// did no work, so it gets less time than a run's shutdown (SPEC §8.2).
pub const CHILD_ABANDON_TIMEOUT: Duration = Duration::from_secs(1);
/// Closing a run's children once `max_run_seconds` has passed: the run fails within a
/// second of its limit (SPEC §6 step 5), so a child slow to exit is killed after this.
pub const DEADLINE_SHUTDOWN_GRACE: Duration = Duration::from_millis(500);
/// Closing a run's children after the parent stopped it (SPEC §4.2 `stop`): the session is
/// already terminal; a child slow to exit is killed after this, so its process group is
/// gone well within the second the stop may take.
pub const STOP_SHUTDOWN_GRACE: Duration = Duration::from_millis(250);
/// Connecting to an HTTP child (SPEC §8.1; the providers' connect bound).
pub const CHILD_HTTP_CONNECT_TIMEOUT: Duration = PROVIDER_CONNECT_TIMEOUT;
/// A child tool's description given to the model, in bytes (SPEC §8.3, §12).
pub const TOOL_DESCRIPTION_BYTES: usize = 4 * 1024;
/// Rendered tool output given to the model, in bytes (SPEC §8.3, §12).
pub const TOOL_OUTPUT_BYTES: usize = 1024 * 1024;
/// A tool name the providers accept, in characters (SPEC §8.4).
pub const TOOL_NAME_CHARS: usize = 64;
/// A child tool's name as activity shows it, in characters (SPEC §7).
pub const ACTIVITY_TOOL_NAME_CHARS: usize = 128;
/// The longest line (one message) read from a stdio child, in bytes; a longer answer is read
/// through, and becomes a cut result (SPEC §8.3).
pub const CHILD_MESSAGE_BYTES: usize = 16 * 1024 * 1024;
/// The longest piece of a child's stderr line forwarded at once, in bytes (SPEC §8.3).
pub const CHILD_STDERR_LINE_BYTES: usize = 8 * 1024;
/// Lines waiting for stderr before more are dropped and counted (SPEC §8.3: forwarding never
/// blocks). With child lines cut at [`CHILD_STDERR_LINE_BYTES`], the queue holds at most
/// 8 MiB of them.
pub const STDERR_QUEUE_LINES: usize = 1024;
/// How long the server waits at exit for queued stderr lines to be written (SPEC §8.3): the
/// last lines show when stderr is read, and the process still exits when it is not.
pub const STDERR_FLUSH_BOUND: Duration = Duration::from_secs(1);
/// What a stdio child's shim is told (its command, arguments and environment), in bytes;
/// more than the 2 MiB Linux lets an `exec` carry (SPEC §8.3).
pub const SHIM_SPEC_BYTES: usize = 4 * 1024 * 1024;
/// The shim's answer ("started", or why not), in bytes (SPEC §8.3).
pub const SHIM_STATUS_BYTES: usize = 4096;
/// How long a shim, or the server, keeps killing what a child left before giving up on a
/// process that keeps forking (SPEC §8.3: children never outlive the server).
pub const CHILD_TREE_KILL_BOUND: Duration = Duration::from_secs(2);
/// The highest descriptor number marked close-on-exec, one at a time, in a child about to
/// start where Linux 5.11's `close_range` is missing (SPEC §8.3: a child holds nothing of
/// the server's but its own standard streams). The process's own limit on descriptors
/// bounds it first; this keeps a huge limit from costing seconds per child.
pub const CHILD_DESCRIPTOR_SWEEP: i32 = 1 << 20;
/// How often a shim looks for its server's death where pidfds (Linux 5.3) are missing
/// (SPEC §8.3).
pub const SHIM_PARENT_POLL: Duration = Duration::from_millis(250);

// ----- The built-in workspace server (SPEC §8.6) -----

/// Lines `read` shows when the call does not say how many (SPEC §8.6; Claude Code's Read
/// shows as many).
pub const WORKSPACE_READ_LINES: u64 = 2000;
/// The longest line `read` and `grep` show, in characters; a longer one is cut with a
/// marker (SPEC §8.6).
pub const WORKSPACE_LINE_CHARS: usize = 2000;
/// How much of a file's start is checked for a NUL byte before `read` calls it binary
/// (SPEC §8.6; the same test git and grep make).
pub const WORKSPACE_BINARY_SNIFF_BYTES: u64 = 8 * 1024;
/// Paths one `glob` answer lists, newest first (SPEC §8.6).
pub const WORKSPACE_GLOB_RESULTS: usize = 500;
/// Entries one `list` answer shows (SPEC §8.6).
pub const WORKSPACE_LIST_ENTRIES: usize = 1000;
/// Results (lines, files or counts) one `grep` answer shows when the call does not say
/// (SPEC §8.6).
pub const WORKSPACE_GREP_RESULTS: u64 = 200;
/// The most results one `grep` call may ask for (SPEC §8.6).
pub const WORKSPACE_GREP_RESULTS_MAX: u64 = 2000;
/// The most context lines `grep` shows before and after a match (SPEC §8.6).
pub const WORKSPACE_GREP_CONTEXT_MAX: u64 = 20;
/// The most memory `grep` gives one line of a file; a file with a longer line is skipped
/// and counted (SPEC §8.6).
pub const WORKSPACE_GREP_LINE_BYTES: usize = 64 * 1024 * 1024;
/// Room kept below the output cap ([`TOOL_OUTPUT_BYTES`]) for the notes that end a
/// workspace tool's answer, so that the child layer's own cap never cuts them (SPEC §8.3).
pub const WORKSPACE_NOTES_BYTES: usize = 4 * 1024;
/// Room kept below the output cap for what wraps a workspace tool's answer on the wire: the
/// JSON-RPC envelope, the content block, the structured content's field names and numbers.
/// A whole answer, text and structured content as the JSON sent, stays within
/// [`TOOL_OUTPUT_BYTES`] (SPEC §8.3, §8.6).
pub const WORKSPACE_ENVELOPE_BYTES: usize = 1024;
/// The longest `path` argument of a workspace tool, in bytes: Linux's `PATH_MAX` (SPEC §8.6).
pub const WORKSPACE_PATH_BYTES: usize = 4096;
/// The longest `grep` pattern, in bytes, as a regular expression or as literal text
/// (SPEC §8.6). Real searches are a few dozen bytes; the engine's error for a bad pattern
/// quotes all of it, and its compile time grows with it.
pub const WORKSPACE_PATTERN_BYTES: usize = 4 * 1024;
/// The longest glob, in bytes: a `glob` pattern, `grep`'s `glob` filter, and each line of an
/// ignore file (SPEC §8.6). 1,000 `*` compile in about 2 ms; globset has no size limit of
/// its own, and 100,000 of them took 93 MiB before it failed.
pub const WORKSPACE_GLOB_BYTES: usize = 1024;
/// The compiled form of a `grep` regular expression (its NFA), in bytes: the `regex` crate's
/// own default; `grep-regex` allows 100 MiB (SPEC §8.6).
pub const WORKSPACE_REGEX_BYTES: usize = 10 * 1024 * 1024;
/// The lazy DFA's cache of one `grep` regular expression, in bytes: the `regex` crate's
/// default; `grep-regex` allows 1,000 MiB (SPEC §8.6).
pub const WORKSPACE_REGEX_DFA_BYTES: usize = 2 * 1024 * 1024;
/// How much of an argument (a pattern, a glob, a path) or of an engine's error an error
/// message or note quotes, in bytes; the rest is cut with "…" (SPEC §8.6).
pub const WORKSPACE_QUOTE_BYTES: usize = 300;
/// The largest ignore file (`.gitignore`, `.ignore`, `.git/info/exclude`) whose rules are
/// applied, in bytes (SPEC §8.6). Real ones are a few KiB (GitHub's largest templates about
/// 7 KiB); building the rules of 64 KiB of globs takes up to a second and 66 MiB.
pub const WORKSPACE_IGNORE_FILE_BYTES: u64 = 64 * 1024;
/// The ignore files one walk reads in all, in bytes; past it, further ones are not applied,
/// with a note (SPEC §8.6).
pub const WORKSPACE_IGNORE_WALK_BYTES: u64 = 1024 * 1024;
/// Ignore files that were not applied, named one by one in an answer's notes; the rest are
/// counted (SPEC §8.6).
pub const WORKSPACE_IGNORE_NOTES: usize = 3;
/// Symbolic links followed while resolving one path inside the workspace before it is
/// called a loop: Linux's own bound (SPEC §8.6).
pub const WORKSPACE_LINK_HOPS: usize = 40;
/// The largest file `edit` and `write` change, before and after the change, in bytes
/// (SPEC §8.6): the largest message to a child server ([`CHILD_MESSAGE_BYTES`]), so a file
/// that can be read for an edit is never larger than what one call can carry.
pub const WORKSPACE_CHANGE_BYTES: u64 = 16 * 1024 * 1024;
/// Files whose content one run's workspace server remembers as read (a hash each, for the
/// read-before-edit rule, SPEC §8.6); past it the oldest is forgotten, and editing it asks
/// for a fresh read.
pub const WORKSPACE_READ_MEMORY_FILES: usize = 4096;
/// Lines of context `edit` shows before and after the lines it changed (SPEC §8.6).
pub const WORKSPACE_EDIT_CONTEXT_LINES: usize = 3;
/// The most lines one `edit` answer shows of what it changed; a `replace_all` over many
/// places shows the first ones and counts the rest (SPEC §8.6).
pub const WORKSPACE_EDIT_SHOWN_LINES: usize = 200;
/// How long `edit` or `write` waits for another workspace server (another agent) that is
/// changing a file in the same directory, before it answers "try again" (SPEC §8.6). A
/// change holds the directory for the time of one write of at most 16 MiB.
pub const WORKSPACE_CHANGE_LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(5);
/// The most one `read` scans of a file, in bytes, wherever its lines end (SPEC §8.6; issue
/// 34): a read stops here and says where, so a line of a tebibyte (a sparse file) costs a
/// bounded time. Lines past it are not shown; `grep` searches a file whole.
pub const WORKSPACE_READ_SCAN_BYTES: u64 = 256 * 1024 * 1024;
/// The longest request the workspace server reads, in bytes (SPEC §8.6, §12's stdio line for
/// the built-in server): twice the largest file a change writes ([`WORKSPACE_CHANGE_BYTES`]),
/// so any text of that size whose quotes, backslashes and line breaks double it as JSON
/// still arrives. A longer request is read through without being kept and answered at
/// once with why.
pub const WORKSPACE_REQUEST_BYTES: usize = 2 * WORKSPACE_CHANGE_BYTES as usize;
/// How much of the start of an oversized request is kept, to find its `id` (SPEC §8.6).
pub const WORKSPACE_REQUEST_HEAD_BYTES: usize = 64 * 1024;
/// The bytes one run writes with `edit` and `write` in all, each change counted whole
/// (SPEC §8.6, §12; issue 34): sixteen files of the largest size, or thousands of source
/// files. A run that writes more is refused further changes, with why.
pub const WORKSPACE_RUN_WRITTEN_BYTES: u64 = 256 * 1024 * 1024;
/// The files one run creates with `write` (SPEC §8.6, §12; issue 34); replacing a file it
/// made is not a new one.
pub const WORKSPACE_RUN_CREATED_FILES: u64 = 1000;
/// Names tried for the server user's private directory (`mcp-agents-<uid>`, then `-1`, …)
/// when another user took one first (SPEC §8.6).
pub const WORKSPACE_PRIVATE_DIR_TRIES: usize = 16;
/// The largest journal of a workspace server read when its temporary files are cleaned up,
/// in bytes: one line per directory it wrote in (SPEC §8.6).
pub const WORKSPACE_JOURNAL_BYTES: u64 = 1024 * 1024;
/// The largest `.git` file whose `gitdir:` line is read, in bytes (SPEC §8.6); git writes
/// one short line.
pub const WORKSPACE_GITDIR_FILE_BYTES: u64 = 4096;

// ----- The MCP surface (SPEC §4, §10) -----

/// Held ids an `unknown_agent` failure for an id lists, most recent first (SPEC §4.3).
pub const UNKNOWN_AGENT_IDS_LISTED: usize = 16;
/// `wait_agent`'s default `timeout_ms` (SPEC §4.3, §12).
pub const DEFAULT_WAIT: Duration = Duration::from_millis(30_000);
/// `wait_agent`'s largest `timeout_ms` (SPEC §4.3, §12).
pub const MAX_WAIT_MS: u64 = 300_000;
/// The longest a `stop` waits for its run to hand back its conversation and become
/// terminal (SPEC §4.2: the whole stop takes under 1 s). The run answers its cancellation at
/// once; the bound only keeps a stop from waiting forever on a bug. A `send_input` that
/// arrives while a stop is under way waits as long.
pub const STOP_HANDOFF_BOUND: Duration = Duration::from_secs(1);
/// The `timeout_ms` `wait_agent`'s description advises a client the table of known clients
/// (`clients.rs`) does not list (SPEC §4.3): most clients are built on the TypeScript SDK,
/// whose requests time out after 60 s, progress or not.
pub const UNKNOWN_CLIENT_WAIT_MS: u64 = 55_000;
/// A stop's reason (`send_input` with `stop`: its `message`) as the record keeps it, in
/// bytes; a longer one is cut with "…" (SPEC §4.2, §12). It is the one text of the parent's
/// that a record shows again, in `error.message` of every later answer about the agent;
/// the task and the messages are the conversation's, never echoed.
pub const STOP_REASON_BYTES: usize = 1024;
/// How much of a result or error message the human line that opens a `wait_agent` answer
/// quotes, in characters (SPEC §4.3).
pub const WAIT_LINE_QUOTE_CHARS: usize = 100;
/// Files the human line of a record names (`changed 4 files: a.py, b.py, c.py and 1 more`);
/// the rest are counted, and `files_changed` lists them all (SPEC §4.3).
pub const WAIT_LINE_FILES_NAMED: usize = 3;
/// How often a client that runs `spawn_agent` as an MCP task is asked to poll `tasks/get`
/// (`pollIntervalMs`, SPEC §4.4). A poll reads one session under its lock; a second is the
/// most a person waits for a finished agent's result to reach the parent.
pub const TASK_POLL_INTERVAL: Duration = Duration::from_secs(1);
/// A task `mcp-agents run NAME -` reads from standard input, in bytes (SPEC §2): as much as
/// an HTTP client could send in one request.
pub const TERMINAL_TASK_BYTES: usize = HTTP_REQUEST_BODY_BYTES;
/// Files `mcp-agents run` names one by one after its summary; the rest are counted (`--json`
/// lists them all) (SPEC §2, §4.3 `files_changed`).
pub const TERMINAL_FILES_SHOWN: usize = 20;
/// The longest wait `mcp-agents run` makes at once before waiting again (SPEC §2).
pub const TERMINAL_WAIT: Duration = Duration::from_millis(MAX_WAIT_MS);
/// Child servers `mcp-agents check --servers` starts at once (SPEC §2, §8.2), each under its
/// own startup bound: a workspace of many agents neither waits for them one by one nor
/// starts them all together.
pub const CHECK_SERVER_STARTS: usize = 4;
/// An agent's description shown whole in `spawn_agent`'s description, in characters
/// (SPEC §4.1). Real descriptions are mostly under 300 characters; the few longer ones carry
/// worked examples, and every one of them is sent to the parent model with each request.
pub const AGENT_DESCRIPTION_CHARS: usize = 1024;
/// The longest line (one JSON-RPC message) read from stdin, in bytes; a longer one is
/// answered with an error and skipped, never held (SPEC §10, §12).
pub const STDIO_LINE_BYTES: usize = 16 * 1024 * 1024;
/// After stdin ends, how long requests already read may take to be answered before the
/// server stops (SPEC §10; a long `wait_agent` is cut short by the shutdown instead).
pub const STDIO_EOF_ANSWER_GRACE: Duration = Duration::from_secs(1);
/// A stdin line buffer larger than this is given back after its line, not kept for the next
/// (SPEC §10).
pub const STDIO_LINE_KEPT_BYTES: usize = 1024 * 1024;
/// How long an HTTP client has to send a request's headers, counted from the connection's
/// start or the end of its previous answer (SPEC §10, §12).
pub const HTTP_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// How long an HTTP client has to send a request's whole body (SPEC §10, §12).
pub const HTTP_BODY_TIMEOUT: Duration = Duration::from_secs(30);
/// HTTP connections served at once; when all are taken, one is closed for each new one
/// (an idle one first), which waits meanwhile (SPEC §10, §12).
pub const HTTP_CONNECTIONS: usize = 256;
/// Legacy (`initialize`) HTTP sessions kept; the least recently used is closed for a new
/// one (SPEC §10, §12).
pub const HTTP_LEGACY_SESSIONS: usize = 64;
/// The largest HTTP request body read (SPEC §10).
pub const HTTP_REQUEST_BODY_BYTES: usize = 4 * 1024 * 1024;
/// How long, and how much of, the rest of a refused HTTP request body is read and thrown
/// away before the connection closes, so that a client still sending it reads the 413
/// instead of a reset connection (SPEC §10; nginx's lingering close).
pub const HTTP_LINGER: Duration = Duration::from_secs(5);
pub const HTTP_LINGER_BYTES: usize = 2 * HTTP_REQUEST_BODY_BYTES;
/// How long an HTTP answer may wait on a client that takes none of it (less than
/// [`HTTP_WRITE_PROGRESS_BYTES`] in this time) before the connection is closed (SPEC §10;
/// issue 23): the body's bound, for the other direction.
pub const HTTP_WRITE_STALL: Duration = HTTP_BODY_TIMEOUT;
/// What a client must take of an answer within [`HTTP_WRITE_STALL`] to count as reading
/// it: a minimum rate of about 2 KiB/s (SPEC §10).
pub const HTTP_WRITE_PROGRESS_BYTES: usize = 64 * 1024;
/// The answers waiting on HTTP clients that do not read them, all connections together,
/// in bytes: past it, the answers whose clients have taken none of them for
/// [`HTTP_PRESSED_WRITE_STALL`] are given up, the longest waiting first, until the rest fits
/// (SPEC §10, §12; issue 34). 256 clients each holding an unread 4 MB answer held 2.2 GB.
pub const HTTP_UNREAD_ANSWERS_BYTES: usize = 64 * 1024 * 1024;
/// How long an answer may wait on a client that takes less than
/// [`HTTP_WRITE_PROGRESS_BYTES`] of it once the unread answers together pass
/// [`HTTP_UNREAD_ANSWERS_BYTES`] (SPEC §10): [`HTTP_WRITE_STALL`] shortened under pressure.
pub const HTTP_PRESSED_WRITE_STALL: Duration = Duration::from_secs(1);
/// How often the unread answers are checked against their bound, and how long a fresh
/// client's slot is waited for before one more connection is chosen to close for it
/// (SPEC §10: a fresh client is served whatever the other connections do).
pub const HTTP_CROWD_CHECK: Duration = Duration::from_millis(250);
/// `wait_agent` calls over HTTP that may wait longer than [`HTTP_SHORT_WAIT`] at once: half
/// the connections, so that waits cannot hold every slot and lock other clients out
/// (SPEC §4.3, §10; issue 23).
pub const HTTP_LONG_WAITS: usize = HTTP_CONNECTIONS / 2;
/// The longest `wait_agent` over HTTP that needs no long-wait slot; a longer one that finds
/// every slot taken is shortened to this, and its answer says so (SPEC §4.3, §10).
pub const HTTP_SHORT_WAIT: Duration = Duration::from_secs(1);

// ----- Secrets (SPEC §10) -----

/// The shortest secret value hidden, and the shortest run of a secret's first or last
/// characters hidden where a text was cut, in characters (SPEC §10 "No secret is ever
/// logged"; issue 23). No provider issues a key this short; a shorter value is a
/// placeholder (Ollama's `ollama`), and hiding it would garble ordinary words.
pub const SECRET_MIN_CHARS: usize = 8;
/// Distinct secret values kept out of stderr, every run's; the newest are kept (SPEC §10).
/// A process holds one key per provider and a few child credentials: this is room for
/// every key rotated during a long life.
pub const STDERR_SECRETS: usize = 256;

// ----- Discovery (SPEC §3) -----

/// A definition or skill file, in bytes (SPEC §3, §12).
pub const DEFINITION_FILE_BYTES: u64 = 1024 * 1024;
/// The deepest level searched below a root; a file directly in a root is at depth 1
/// (SPEC §3, §12).
pub const DISCOVERY_DEPTH: usize = 8;
/// An agent or skill name, in characters (SPEC §3.1, §12).
pub const NAME_CHARS: usize = 64;
/// Brackets nested in a definition's YAML or TOML before it is refused: the parsers
/// recurse, and no real definition comes near this (SPEC §3).
pub const DEFINITION_NESTING: usize = 256;

// ----- Beyond SPEC §12 -----

/// Retries of a provider request after the first attempt (SPEC §6 "a bounded number").
pub const PROVIDER_RETRIES: u32 = 4;
/// The first retry's backoff; doubled per retry (SPEC §6).
pub const PROVIDER_RETRY_BASE_DELAY: Duration = Duration::from_millis(500);
/// The longest backoff between two attempts (SPEC §6).
pub const PROVIDER_RETRY_MAX_DELAY: Duration = Duration::from_secs(8);
/// The longest delay a provider may ask for (`retry-after`, `retry-after-ms`, "try again
/// in") and have it honoured: as long as one request may take ([`PROVIDER_REQUEST_CEILING`]),
/// and never past the run's own deadline; a longer one ends the retries at once (SPEC §6).
/// The official SDKs wait 120 s (`openai`) or any delay (`anthropic`).
pub const PROVIDER_MAX_REQUESTED_DELAY: Duration = PROVIDER_REQUEST_CEILING;
/// The largest reply body read. A model's reply, reasoning included, is a few MiB at most;
/// anything larger is not a reply this loop could keep in its history anyway (SPEC §6).
pub const PROVIDER_REPLY_BYTES: usize = 32 * 1024 * 1024;
/// How much of a provider's error message is quoted, in characters (SPEC §6.1 "Errors").
pub const PROVIDER_MESSAGE_CHARS: usize = 1000;
/// The longest error `type`, `code` or `param` a provider's error is quoted with: real ones
/// are identifiers (`context_length_exceeded`); the rest of a longer one is cut with "…",
/// so the whole error stays within SPEC §6.1's 1,000-character cap.
pub const PROVIDER_ERROR_LABEL_CHARS: usize = 100;
/// How much of an error body that carries no message is quoted, in characters (SPEC §6.1).
pub const PROVIDER_BODY_CHARS: usize = 300;
/// JSON Schema violations listed in one message to the model (an argument check, an answer
/// that fails its `output_schema`); the rest are counted (SPEC §6 steps 3–4).
pub const SCHEMA_VIOLATIONS_SHOWN: usize = 10;
/// The Responses API's strict structured outputs: the deepest nesting of objects, the most
/// properties in all, and the most `enum` values in all, that a schema sent as `text.format`
/// may have; a larger schema is given to the model in the instructions only (SPEC §6 step 4;
/// OpenAI's structured outputs guide).
pub const STRICT_SCHEMA_DEPTH: usize = 10;
pub const STRICT_SCHEMA_PROPERTIES: usize = 5000;
pub const STRICT_SCHEMA_ENUM_VALUES: usize = 1000;
/// The longest provider request id quoted in an error (SPEC §6.1 "Errors"); real ones are
/// about 30 characters (`req_011CVQe1dLrGNMJyE1ghG1av`).
pub const PROVIDER_REQUEST_ID_CHARS: usize = 128;
