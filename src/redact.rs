//! Secret hiding, for every place text leaves the process: log lines, error messages,
//! activity, `Debug` output. URLs are shown as their origin only (`scheme://host[:port]`),
//! since a URL's user info, path or query can carry a credential; child configurations show
//! names, never values. Provider keys have their own redaction (`providers::ApiKey`), which
//! knows the one value to hide.

use std::fmt;

use url::Url;

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
