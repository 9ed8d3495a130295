//! The providers' prompt caching, emulated (on when a test asks for it), so that tests can
//! assert hits and measure what a loop is billed.
//!
//! Tokens are counted as one per 4 bytes of each piece of the prompt (a tool, the system
//! text, one item or content block), in the order the provider reads the prompt.
//!
//! - Messages (Anthropic's prompt caching docs): only what a request marks is cached. Each
//!   `cache_control` breakpoint (or a top-level one, on the last block) writes the prefix up
//!   to it, when that prefix is at least 1,024 tokens; a breakpoint reads the longest prefix
//!   already written that ends at it or at one of the 20 blocks before it. Usage says what
//!   was read (`cache_read_input_tokens`), written (`cache_creation_input_tokens`), and the
//!   rest (`input_tokens`).
//! - Responses and Chat Completions (OpenAI's): automatic. A prompt of at least 1,024 tokens
//!   reads the longest prefix seen before, for the same model and `prompt_cache_key`, in
//!   steps of 128 tokens past the first 1,024; usage reports all input tokens and, of them,
//!   the cached ones (`input_tokens_details.cached_tokens`,
//!   `prompt_tokens_details.cached_tokens`).
//!
//! Entries live 5 minutes from their last use.

use std::collections::HashMap;
use std::time::Duration;

use serde_json::Value;
use tokio::time::Instant;

/// The smallest prefix either provider caches, in tokens.
const MINIMUM_TOKENS: u64 = 1024;
/// OpenAI caches in steps of this many tokens past the minimum.
const RESPONSES_STEP: u64 = 128;
/// How far back from a breakpoint Anthropic looks for a prefix it wrote, in blocks.
const LOOKBACK_BLOCKS: usize = 20;
/// How long an unused entry lives.
const TTL: Duration = Duration::from_secs(5 * 60);

/// Input tokens of one request, as the provider reports them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct CachedUsage {
    /// Tokens neither read from nor written to the cache (Messages `input_tokens`); for
    /// Responses, every input token.
    pub(super) input: u64,
    pub(super) read: u64,
    pub(super) written: u64,
}

/// One piece of a prompt: its hash chained with every piece before it, and its tokens.
struct Piece {
    prefix: u64,
    tokens: u64,
    breakpoint: bool,
}

#[derive(Debug, Default)]
pub(super) struct PromptCache {
    /// When each cached prefix expires, by (scope, prefix hash); the tokens it holds.
    entries: HashMap<(String, u64), (u64, Instant)>,
}

fn tokens(bytes: usize) -> u64 {
    (bytes as u64).div_ceil(4)
}

/// FNV-1a over `bytes`, continuing from `hash`.
fn chain(hash: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(hash, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// `value` without its `cache_control` (a marker, not part of the prompt).
fn unmarked(value: &Value) -> String {
    match value {
        Value::Object(map) if map.contains_key("cache_control") => {
            let mut map = map.clone();
            map.remove("cache_control");
            Value::Object(map).to_string()
        }
        other => other.to_string(),
    }
}

fn pieces(parts: impl IntoIterator<Item = (String, bool)>) -> Vec<Piece> {
    let mut hash = 0xcbf2_9ce4_8422_2325;
    parts
        .into_iter()
        .map(|(text, breakpoint)| {
            hash = chain(hash, text.as_bytes());
            hash = chain(hash, b"\0");
            Piece {
                prefix: hash,
                tokens: tokens(text.len()),
                breakpoint,
            }
        })
        .collect()
}

impl PromptCache {
    fn live(&mut self, key: &(String, u64), now: Instant) -> Option<u64> {
        match self.entries.get_mut(key) {
            Some((tokens, expires)) if *expires > now => {
                *expires = now + TTL;
                Some(*tokens)
            }
            _ => None,
        }
    }

    /// A Messages request: tools, system blocks, then every message's blocks.
    pub(super) fn messages(&mut self, body: &Value) -> CachedUsage {
        let mut parts: Vec<(String, bool)> = Vec::new();
        let marked = |v: &Value| v.get("cache_control").is_some_and(|c| !c.is_null());
        for tool in body["tools"].as_array().into_iter().flatten() {
            parts.push((unmarked(tool), marked(tool)));
        }
        match &body["system"] {
            Value::String(text) => parts.push((text.clone(), false)),
            Value::Array(blocks) => {
                for block in blocks {
                    parts.push((unmarked(block), marked(block)));
                }
            }
            _ => {}
        }
        for message in body["messages"].as_array().into_iter().flatten() {
            let role = message["role"].as_str().unwrap_or("");
            match &message["content"] {
                Value::String(text) => parts.push((format!("{role}:{text}"), false)),
                Value::Array(blocks) => {
                    for block in blocks {
                        parts.push((format!("{role}:{}", unmarked(block)), marked(block)));
                    }
                }
                _ => {}
            }
        }
        if body.get("cache_control").is_some_and(|c| !c.is_null())
            && let Some(last) = parts.last_mut()
        {
            last.1 = true;
        }
        let scope = format!("messages {}", body["model"]);
        let pieces = pieces(parts);
        let total: u64 = pieces.iter().map(|p| p.tokens).sum();
        let cumulative: Vec<u64> = pieces
            .iter()
            .scan(0, |sum, p| {
                *sum += p.tokens;
                Some(*sum)
            })
            .collect();
        let now = Instant::now();
        let breakpoints: Vec<usize> = (0..pieces.len())
            .filter(|&i| pieces[i].breakpoint)
            .collect();
        let mut read = 0;
        for &b in &breakpoints {
            for j in (b.saturating_sub(LOOKBACK_BLOCKS - 1)..=b).rev() {
                if let Some(tokens) = self.live(&(scope.clone(), pieces[j].prefix), now) {
                    read = read.max(tokens);
                    break;
                }
            }
        }
        let mut written_to = read;
        for &b in &breakpoints {
            let key = (scope.clone(), pieces[b].prefix);
            if cumulative[b] >= MINIMUM_TOKENS && self.live(&key, now).is_none() {
                self.entries.insert(key, (cumulative[b], now + TTL));
                written_to = written_to.max(cumulative[b]);
            }
        }
        let written = written_to - read;
        CachedUsage {
            input: total - read - written,
            read,
            written,
        }
    }

    /// A Responses request: tools, instructions, then every input item.
    pub(super) fn responses(&mut self, body: &Value) -> CachedUsage {
        let mut parts: Vec<(String, bool)> = Vec::new();
        for tool in body["tools"].as_array().into_iter().flatten() {
            parts.push((tool.to_string(), false));
        }
        if let Some(instructions) = body["instructions"].as_str() {
            parts.push((instructions.to_owned(), false));
        }
        match &body["input"] {
            Value::String(text) => parts.push((text.clone(), false)),
            Value::Array(items) => parts.extend(items.iter().map(|i| (i.to_string(), false))),
            _ => {}
        }
        let scope = format!("responses {} {}", body["model"], body["prompt_cache_key"]);
        self.automatic(scope, parts)
    }

    /// A Chat Completions request: tools, then every message (the system text first).
    pub(super) fn chat(&mut self, body: &Value) -> CachedUsage {
        let mut parts: Vec<(String, bool)> = Vec::new();
        for tool in body["tools"].as_array().into_iter().flatten() {
            parts.push((tool.to_string(), false));
        }
        for message in body["messages"].as_array().into_iter().flatten() {
            parts.push((message.to_string(), false));
        }
        let scope = format!("chat {} {}", body["model"], body["prompt_cache_key"]);
        self.automatic(scope, parts)
    }

    /// OpenAI's automatic caching of `parts`, within `scope`.
    fn automatic(&mut self, scope: String, parts: Vec<(String, bool)>) -> CachedUsage {
        let pieces = pieces(parts);
        let total: u64 = pieces.iter().map(|p| p.tokens).sum();
        let now = Instant::now();
        let mut longest = 0;
        let mut sum = 0;
        for piece in &pieces {
            sum += piece.tokens;
            let key = (scope.clone(), piece.prefix);
            if let Some(tokens) = self.live(&key, now) {
                longest = longest.max(tokens);
            }
            self.entries.insert(key, (sum, now + TTL));
        }
        let cached = if total < MINIMUM_TOKENS || longest < MINIMUM_TOKENS {
            0
        } else {
            MINIMUM_TOKENS + (longest - MINIMUM_TOKENS) / RESPONSES_STEP * RESPONSES_STEP
        };
        CachedUsage {
            input: total,
            read: cached,
            written: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn block(text: &str) -> Value {
        json!({"type": "text", "text": text})
    }

    fn marked(text: &str) -> Value {
        json!({"type": "text", "text": text, "cache_control": {"type": "ephemeral"}})
    }

    #[tokio::test(start_paused = true)]
    async fn messages_reads_what_a_breakpoint_wrote_before() {
        let big = "x".repeat(8000);
        let mut cache = PromptCache::default();
        let first = json!({"model": "m", "system": [marked(&big)],
            "messages": [{"role": "user", "content": [marked("hello")]}]});
        let usage = cache.messages(&first);
        assert_eq!(usage.read, 0);
        assert_eq!(
            usage.input, 0,
            "everything up to the last breakpoint is written"
        );
        assert_eq!(
            usage.written,
            tokens(block(&big).to_string().len())
                + tokens("user:".len() + block("hello").to_string().len())
        );
        // The same prefix and one block more, the newest marked.
        let second = json!({"model": "m", "system": [marked(&big)],
            "messages": [{"role": "user", "content": [marked("hello"), marked("again")]}]});
        let usage = cache.messages(&second);
        assert_eq!(usage.read, first_total(&first));
        assert!(usage.written > 0 && usage.input == 0);
        // Unmarked: nothing is read or written.
        let plain = json!({"model": "m", "system": big, "messages": [{"role": "user", "content": "hello"}]});
        let usage = cache.messages(&plain);
        assert_eq!((usage.read, usage.written), (0, 0));
        // Entries expire.
        tokio::time::advance(TTL + Duration::from_secs(1)).await;
        assert_eq!(cache.messages(&second).read, 0);
    }

    fn first_total(body: &Value) -> u64 {
        PromptCache::default().messages(body).written
    }

    #[tokio::test(start_paused = true)]
    async fn responses_reads_the_longest_prefix_seen_in_steps() {
        let mut cache = PromptCache::default();
        let big = "y".repeat(6000);
        let first = json!({"model": "m", "prompt_cache_key": "k", "instructions": big,
            "input": [{"role": "user", "content": "hi"}]});
        assert_eq!(cache.responses(&first).read, 0);
        let second = json!({"model": "m", "prompt_cache_key": "k", "instructions": big,
            "input": [{"role": "user", "content": "hi"}, {"role": "user", "content": "more"}]});
        let usage = cache.responses(&second);
        assert_eq!(usage.read, 1024 + (cache_total(&first) - 1024) / 128 * 128);
        assert!(usage.input > usage.read);
        let other_key = json!({"model": "m", "prompt_cache_key": "other", "instructions": big,
            "input": [{"role": "user", "content": "hi"}]});
        assert_eq!(cache.responses(&other_key).read, 0);
    }

    fn cache_total(body: &Value) -> u64 {
        PromptCache::default().responses(body).input
    }
}
