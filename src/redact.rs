//! Secret hiding, for every place text leaves the process: log lines, error messages,
//! activity, results, `Debug` output. URLs are shown as their origin only
//! (`scheme://host[:port]`), since a URL's user info, path or query can carry a credential;
//! child configurations show names, never values.
//!
//! The values themselves are hidden by [`Secrets`]: a run's provider key and the values its
//! child servers take from the environment, replaced wherever they appear in a text the run
//! emits, and before any cut, so that no cut can leave part of one; where a text is cut, a
//! run of a secret's first (or last) characters the cut left at its end (or start) is
//! hidden too. Every secret a run used is also hidden from every line the process writes to
//! stderr ([`hide_on_stderr`], applied by the console), which belongs to no one run.

use std::borrow::Cow;
use std::fmt;
use std::sync::{Arc, RwLock};

use serde_json::Value;
use url::Url;

use crate::limits::{SECRET_MIN_CHARS, STDERR_SECRETS};

/// What a hidden secret reads as.
pub const REDACTED: &str = "[redacted]";

/// The secret values one run must never show. Cheap to clone.
#[derive(Clone, Default)]
pub struct Secrets {
    /// Longest first, so a secret that holds another is hidden whole.
    values: Arc<[Box<str>]>,
}

impl fmt::Debug for Secrets {
    /// How many, never what.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Secrets(<{} values>)", self.values.len())
    }
}

impl Secrets {
    /// These values, each trimmed. One shorter than [`SECRET_MIN_CHARS`] characters is no
    /// credential a provider issues (a placeholder such as Ollama's `ollama`), and hiding it
    /// would garble ordinary words: it is left out.
    pub fn new<S: AsRef<str>>(values: impl IntoIterator<Item = S>) -> Secrets {
        let mut values: Vec<Box<str>> = values
            .into_iter()
            .map(|v| v.as_ref().trim().to_owned())
            .filter(|v| v.chars().count() >= SECRET_MIN_CHARS)
            .map(String::into_boxed_str)
            .collect();
        values.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        values.dedup();
        Secrets {
            values: values.into(),
        }
    }

    /// These secrets and `more`.
    pub fn with<S: AsRef<str>>(&self, more: impl IntoIterator<Item = S>) -> Secrets {
        let mine = self.values.iter().map(|v| v.to_string());
        Secrets::new(mine.chain(more.into_iter().map(|v| v.as_ref().to_owned())))
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// `text` with every occurrence of every secret replaced by [`REDACTED`].
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(text);
        for secret in self.values.iter() {
            if out.contains(&**secret) {
                out = Cow::Owned(out.replace(&**secret, REDACTED));
            }
        }
        out
    }

    /// Every string in `value`, keys included, redacted.
    pub fn redact_json(&self, value: &mut Value) {
        if self.is_empty() {
            return;
        }
        match value {
            Value::String(text) => {
                if let Cow::Owned(hidden) = self.redact(text) {
                    *text = hidden;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.redact_json(v)),
            Value::Object(map) => {
                if map.keys().any(|k| matches!(self.redact(k), Cow::Owned(_))) {
                    let old = std::mem::take(map);
                    for (key, item) in old {
                        map.insert(self.redact(&key).into_owned(), item);
                    }
                }
                map.values_mut().for_each(|v| self.redact_json(v));
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }

    /// `text`, the beginning of a longer text that was cut after it (and already redacted
    /// whole): a run of at least [`SECRET_MIN_CHARS`] characters at its end that begins a
    /// secret, whose rest fell past the cut, is hidden too.
    pub fn redact_cut_end<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let run = self
            .values
            .iter()
            .filter_map(|secret| {
                // Prefixes of the secret, longest first: SECRET_MIN_CHARS characters or
                // more, and not all of it.
                let chars = secret.chars().count();
                secret
                    .char_indices()
                    .rev()
                    .take(chars.saturating_sub(SECRET_MIN_CHARS))
                    .map(|(end, _)| &secret[..end])
                    .find(|prefix| text.ends_with(prefix))
                    .map(str::len)
            })
            .max();
        match run {
            Some(run) => Cow::Owned(format!("{}{REDACTED}", &text[..text.len() - run])),
            None => Cow::Borrowed(text),
        }
    }

    /// `text`, the end of a longer text whose start was cut off (and already redacted
    /// whole): a run of at least [`SECRET_MIN_CHARS`] characters at its start that ends a
    /// secret is hidden too.
    pub fn redact_cut_start<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let run = self
            .values
            .iter()
            .filter_map(|secret| {
                let chars = secret.chars().count();
                // Suffixes of the secret, longest first: not all of it, and at least
                // SECRET_MIN_CHARS characters.
                secret
                    .char_indices()
                    .skip(1)
                    .take(chars.saturating_sub(SECRET_MIN_CHARS))
                    .map(|(start, _)| &secret[start..])
                    .find(|suffix| text.starts_with(suffix))
                    .map(str::len)
            })
            .max();
        match run {
            Some(run) => Cow::Owned(format!("{REDACTED}{}", &text[run..])),
            None => Cow::Borrowed(text),
        }
    }

    /// How a text from outside (a provider's message) is quoted: trimmed, every secret
    /// hidden, then cut to `max_chars` characters with "…", hiding what the cut left of a
    /// secret at the end. `None` when it holds nothing but whitespace.
    pub fn quote(&self, text: &str, max_chars: usize) -> Option<String> {
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return None;
        }
        let redacted = self.redact(trimmed);
        Some(match redacted.char_indices().nth(max_chars) {
            None => redacted.into_owned(),
            Some((end, _)) => format!("{}…", self.redact_cut_end(&redacted[..end])),
        })
    }

    /// `text` redacted, then cut to at most `max_bytes` on a character boundary, hiding
    /// what the cut left of a secret at the end.
    pub fn cut(&self, text: &str, max_bytes: usize) -> String {
        let redacted = self.redact(text);
        let cut = crate::text::cut_utf8(&redacted, max_bytes);
        if cut.len() == redacted.len() {
            return redacted.into_owned();
        }
        let hidden = self.redact_cut_end(cut);
        // The marker may be longer than the run it hides: the cap still holds.
        if hidden.len() > max_bytes {
            return crate::text::cut_utf8(&hidden, max_bytes).to_owned();
        }
        hidden.into_owned()
    }
}

/// Every secret any run of this process used, newest last: what no line on stderr may show.
static ON_STDERR: RwLock<Vec<Box<str>>> = RwLock::new(Vec::new());

/// From now on, no line the process writes to stderr shows any of `secrets` (log lines of
/// any level, from this crate or a library, and child servers' forwarded stderr). The
/// newest [`STDERR_SECRETS`] distinct values are kept.
pub fn hide_on_stderr(secrets: &Secrets) {
    if secrets.is_empty() {
        return;
    }
    let mut known = ON_STDERR.write().unwrap_or_else(|p| p.into_inner());
    for secret in secrets.values.iter() {
        if let Some(at) = known.iter().position(|k| k == secret) {
            known.remove(at);
        }
        known.push(secret.clone());
    }
    let excess = known.len().saturating_sub(STDERR_SECRETS);
    known.drain(..excess);
}

/// `piece`, one part of a line for stderr that was cut into pieces (a child's line longer
/// than the forwarding bound): a run at a cut edge that begins or ends a secret any run
/// used is hidden, as [`Secrets::redact_cut_end`] and [`Secrets::redact_cut_start`] do.
/// Whole secrets are hidden later, by the console ([`redact_stderr`]).
pub fn redact_stderr_piece(piece: &str, cut_before: bool, cut_after: bool) -> String {
    if !cut_before && !cut_after {
        return piece.to_owned();
    }
    let known = {
        let known = ON_STDERR.read().unwrap_or_else(|p| p.into_inner());
        Secrets::new(known.iter())
    };
    let mut piece = Cow::Borrowed(piece);
    if cut_before && let Cow::Owned(hidden) = known.redact_cut_start(&piece) {
        piece = Cow::Owned(hidden);
    }
    if cut_after && let Cow::Owned(hidden) = known.redact_cut_end(&piece) {
        piece = Cow::Owned(hidden);
    }
    piece.into_owned()
}

/// `line` (bytes for stderr, not necessarily UTF-8) with every secret [`hide_on_stderr`]
/// was given replaced by [`REDACTED`].
pub fn redact_stderr(line: Vec<u8>) -> Vec<u8> {
    let known = ON_STDERR.read().unwrap_or_else(|p| p.into_inner());
    let mut line = line;
    // Longest first, as in `Secrets`.
    let mut order: Vec<&str> = known.iter().map(|s| &**s).collect();
    order.sort_by_key(|s| std::cmp::Reverse(s.len()));
    for secret in order {
        let finder = memchr::memmem::Finder::new(secret.as_bytes());
        if finder.find(&line).is_none() {
            continue;
        }
        let mut out = Vec::with_capacity(line.len());
        let mut rest = &line[..];
        while let Some(at) = finder.find(rest) {
            out.extend_from_slice(&rest[..at]);
            out.extend_from_slice(REDACTED.as_bytes());
            rest = &rest[at + secret.len()..];
        }
        out.extend_from_slice(rest);
        line = out;
    }
    line
}

/// `scheme://host[:port]` of `url`: what messages and `Debug` output may show of a URL,
/// whose user info, path or query can carry a secret.
pub fn origin(url: &Url) -> String {
    let host = url.host_str().unwrap_or("");
    match url.port() {
        Some(port) => format!("{}://{host}:{port}", url.scheme()),
        None => format!("{}://{host}", url.scheme()),
    }
}

/// `Debug` of a stdio child (a definition's and a resolved launch's): the command, how
/// many arguments, the names of its variables and its directory; never a value.
pub fn debug_stdio<'a>(
    f: &mut fmt::Formatter<'_>,
    command: &str,
    args: usize,
    env: impl Iterator<Item = &'a String>,
    cwd: &dyn fmt::Debug,
) -> fmt::Result {
    f.debug_struct("Stdio")
        .field("command", &command)
        .field("args", &format_args!("<{args} args>"))
        .field("env", &env.collect::<Vec<_>>())
        .field("cwd", cwd)
        .finish()
}

/// `Debug` of an HTTP child: the URL's origin and the names of its headers; never a value.
pub fn debug_http<'a>(
    f: &mut fmt::Formatter<'_>,
    url: &Url,
    headers: impl Iterator<Item = &'a String>,
) -> fmt::Result {
    f.debug_struct("Http")
        .field("url", &origin(url))
        .field("headers", &headers.collect::<Vec<_>>())
        .finish()
}

/// Takes a configured URL (an HTTP child's) out of error texts: messages never echo a URL,
/// whose path, query or user info may carry a secret. The configured URL, and any other URL
/// in the text (as in reqwest's `for url (…)`), become `scheme://host[:port]`. A redactor
/// without a URL (a stdio child's) leaves texts as they are.
#[derive(Clone, Default)]
pub struct Redactor {
    url: Option<Url>,
}

impl std::fmt::Debug for Redactor {
    /// The origin only: the URL's path, query or user info may carry a secret.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redactor")
            .field("origin", &self.url.as_ref().map(origin))
            .finish()
    }
}

impl Redactor {
    /// A redactor that also knows `url` (an HTTP child's), or only the general rule.
    pub fn for_url(url: Option<&Url>) -> Self {
        Redactor { url: url.cloned() }
    }

    pub fn apply(&self, message: &str) -> String {
        let Some(url) = &self.url else {
            return message.to_owned();
        };
        let message = message.replace(url.as_str(), &origin(url));
        redact_urls(&message)
    }
}

/// Every `scheme://…` in `text` reduced to its origin. A URL runs to the next whitespace (a
/// quote or parenthesis can be part of a path) less any trailing sentence punctuation, and a
/// closing `)`, quote or `>` that matches the character just before the URL is kept out of
/// it. Text that does not parse as a URL with a
/// host is replaced whole.
pub fn redact_urls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let before = &rest[..at];
        let scheme_len = before
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
            .count();
        // ASCII only, so the count is in bytes. A scheme starts with a letter: characters
        // before it that may only follow one (".http://…") belong to the text.
        let run = &rest[at - scheme_len..at];
        let start = at
            - run
                .trim_start_matches(|c: char| !c.is_ascii_alphabetic())
                .len();
        let scheme = &rest[start..at];
        if !scheme.starts_with(|c: char| c.is_ascii_alphabetic()) {
            out.push_str(&rest[..at + 3]);
            rest = &rest[at + 3..];
            continue;
        }
        let after = &rest[at + 3..];
        let mut len = after.find(char::is_whitespace).unwrap_or(after.len());
        // Sentence punctuation after the URL stays in the text.
        len = after[..len]
            .trim_end_matches(['.', ',', ';', ':', '!', '?'])
            .len();
        let closer = match rest[..start].chars().next_back() {
            Some('(') => Some(')'),
            Some('<') => Some('>'),
            Some(q @ ('"' | '\'' | '`')) => Some(q),
            _ => None,
        };
        if let Some(closer) = closer
            && after[..len].ends_with(closer)
        {
            len -= 1;
        }
        let candidate = &rest[start..at + 3 + len];
        out.push_str(&rest[..start]);
        match Url::parse(candidate) {
            Ok(url) if url.host_str().is_some() => out.push_str(&origin(&url)),
            _ => {
                out.push_str(scheme);
                out.push_str("://(not shown)");
            }
        }
        rest = &after[len..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn any_text_is_redacted_without_panicking(text in "\\PC{0,200}") {
            let _ = redact_urls(&text);
        }

        #[test]
        fn a_url_path_never_survives(
            before in "[a-z (<\"'.,]{0,20}",
            scheme in "(http|https|ws)",
            secret in "[A-Z]{8}",
            after in "[a-z )>\"'.,]{0,20}",
        ) {
            let text = format!("{before}{scheme}://host.example:8443/p/{secret}?k={secret}{after}");
            let redacted = redact_urls(&text);
            prop_assert!(!redacted.contains(&secret), "{}", redacted);
            prop_assert!(redacted.contains("host.example:8443"), "{}", redacted);
        }
    }

    const KEY: &str = "sk-test-SECRET-0123456789";

    #[test]
    fn secrets_are_hidden_whole_and_short_values_are_not_secrets() {
        let secrets = Secrets::new([KEY, "ollama", " gh-token-abcdefgh \n"]);
        assert_eq!(format!("{secrets:?}"), "Secrets(<2 values>)");
        assert_eq!(
            secrets.redact(&format!(
                "key={KEY}; again {KEY}; gh-token-abcdefgh; ollama"
            )),
            "key=[redacted]; again [redacted]; [redacted]; ollama"
        );
        assert!(matches!(secrets.redact("nothing here"), Cow::Borrowed(_)));
        // One secret inside another is hidden as the longer one.
        let nested = Secrets::new(["abcdefgh", "xx-abcdefgh-yy"]);
        assert_eq!(nested.redact("a xx-abcdefgh-yy b"), "a [redacted] b");
    }

    #[test]
    fn a_cut_never_leaves_a_long_piece_of_a_secret() {
        let secrets = Secrets::new([KEY]);
        // Redacted before the cut: the key is gone whole, wherever the cut falls.
        let text = format!("Incorrect API key provided: {KEY}. You can find your key");
        for max in 1..text.chars().count() {
            let quoted = secrets.quote(&text, max).unwrap();
            assert!(!quoted.contains("sk-test-SECR"), "{max}: {quoted}");
        }
        // A text that already held only the key's start (a gateway's own cut), cut there.
        assert_eq!(
            secrets.redact_cut_end("auth: sk-test-SECRE"),
            "auth: [redacted]"
        );
        assert_eq!(
            secrets.redact_cut_end("auth: sk-test"),
            "auth: sk-test",
            "7 characters"
        );
        assert_eq!(
            secrets.redact_cut_start("CRET-0123456789 and more"),
            "[redacted] and more"
        );
        assert_eq!(secrets.redact_cut_start("56789 and more"), "56789 and more");
        let cut = secrets.cut(&format!("{}sk-test-SECRET-01", "x".repeat(10)), 26);
        assert_eq!(cut, format!("{}[redacted]", "x".repeat(10)));
    }

    #[test]
    fn json_strings_and_keys_are_redacted() {
        let secrets = Secrets::new([KEY]);
        let mut value = serde_json::json!({
            "answer": format!("the key is {KEY}"),
            KEY: [1, KEY, {"deep": KEY}],
            "n": 3
        });
        secrets.redact_json(&mut value);
        assert_eq!(
            value,
            serde_json::json!({
                "answer": "the key is [redacted]",
                "[redacted]": [1, "[redacted]", {"deep": "[redacted]"}],
                "n": 3
            })
        );
    }

    #[test]
    fn stderr_lines_hide_every_secret_a_run_used() {
        hide_on_stderr(&Secrets::new(["stderr-secret-value-1"]));
        // A line forwarded in pieces, cut inside the secret.
        assert_eq!(
            redact_stderr_piece("first piece stderr-secret", false, true),
            "first piece [redacted]"
        );
        assert_eq!(
            redact_stderr_piece("ret-value-1 second piece", true, false),
            "[redacted] second piece"
        );
        assert_eq!(
            redact_stderr_piece("stderr-secret but whole", false, false),
            "stderr-secret but whole",
            "not cut: only whole secrets, later"
        );
        let line = b"warning: child said stderr-secret-value-1 \xff twice stderr-secret-value-1\n";
        assert_eq!(
            redact_stderr(line.to_vec()),
            b"warning: child said [redacted] \xff twice [redacted]\n".to_vec()
        );
    }

    fn http(url: &str) -> Redactor {
        Redactor::for_url(Some(&Url::parse(url).unwrap()))
    }

    #[test]
    fn urls_lose_everything_after_the_port() {
        let r = http("http://127.0.0.1:8123/mcp/s3cr3t-path?token=s3cr3t-query#s3cr3t-frag");
        // What rmcp and reqwest really say when nothing listens at the port.
        let message = "failed during server/discover: Send message error Transport [rmcp::\
                       transport::worker::WorkerTransport<…>] error: Client error: error sending \
                       request for url (http://127.0.0.1:8123/mcp/s3cr3t-path?token=s3cr3t-query\
                       #s3cr3t-frag), when send discover request";
        assert_eq!(
            r.apply(message),
            "failed during server/discover: Send message error Transport [rmcp::transport::\
             worker::WorkerTransport<…>] error: Client error: error sending request for url \
             (http://127.0.0.1:8123), when send discover request"
        );
        // Another URL, or the same without its fragment, goes the same way.
        assert_eq!(
            r.apply("for url (http://127.0.0.1:8123/mcp/s3cr3t-path?token=s3cr3t-query), when"),
            "for url (http://127.0.0.1:8123), when"
        );
        assert_eq!(
            r.apply("see http://other.example/s3cr3t. Then https://x.example/s3cr3t;"),
            "see http://other.example. Then https://x.example;"
        );
        assert_eq!(
            r.apply("see https://user:pw@example.com/a/b?c=d#e and http://[::1]:9/x)"),
            "see https://example.com and http://[::1]:9"
        );
        let with_paren = http("https://example.com/a)b?k=secret");
        assert_eq!(
            with_paren.apply("for url (https://example.com/a)b?k=secret)"),
            "for url (https://example.com)"
        );
        assert_eq!(
            r.apply("::// 1://x ://"),
            "::// 1://x ://",
            "no scheme, nothing to redact"
        );
        assert_eq!(r.apply("bad http://"), "bad http://(not shown)");
        assert_eq!(
            r.apply("ünïcode before https://h.example/sécret"),
            "ünïcode before https://h.example"
        );
        assert_eq!(
            r.apply("moved to \"https://other.example/p'q?k=v\" and <http://localhost:1/a>"),
            "moved to \"https://other.example\" and <http://localhost:1>"
        );
    }

    #[test]
    fn stdio_errors_are_left_alone() {
        let r = Redactor::default();
        assert_eq!(r.apply("see http://x.example/y"), "see http://x.example/y");
    }
}
