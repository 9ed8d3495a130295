//! The server-sent events parser a provider's reply goes through (`providers::SseParser`),
//! on the two shapes that matter (issue 23, item 8):
//!
//! - `sse_long_line/32MiB`: one `data:` line of 32 MiB, fed in 16 KiB chunks as a socket
//!   delivers it, then a small closing event. `eventsource-stream`, which the parser
//!   replaced, re-parsed its buffer per chunk and took 124 s on this input (docs/
//!   performance.md).
//! - `sse_many_events/32MiB`: 32 MiB of ordinary text deltas (about 150 bytes each, some
//!   220,000 events), the shape of a long streamed answer.
//!
//! Each iteration parses the whole input and takes every event out.
//!
//! Run: `cargo bench --bench sse_parse`. Results go to docs/performance.md.
// Tests and benchmarks may unwrap: a failure there is the report. They are binaries, with no
// face for `pub` to mark (Cargo.toml's lints).
#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use std::time::Duration;

use bytes::Bytes;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use mcp_agents::providers::SseParser;

const MIB: usize = 1024 * 1024;
const CHUNK: usize = 16 * 1024;

fn chunks(all: &[u8]) -> Vec<Bytes> {
    all.chunks(CHUNK).map(Bytes::copy_from_slice).collect()
}

fn long_line(size: usize) -> Vec<Bytes> {
    let mut all = Vec::with_capacity(size + 128);
    all.extend_from_slice(b": keep-alive\n\nevent: content_block_delta\ndata: ");
    all.resize(all.len() + size, b'x');
    all.extend_from_slice(b"\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
    chunks(&all)
}

fn many_events(size: usize) -> Vec<Bytes> {
    let event: &[u8] = b"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\
        \"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"some tokens of a long answer\"}}\n\n";
    let all: Vec<u8> = event.iter().copied().cycle().take(size).collect();
    chunks(&all)
}

/// Parses every chunk; returns the events and their data bytes.
fn parse(input: &[Bytes]) -> (usize, usize) {
    let mut parser = SseParser::new(64 * MIB);
    let (mut events, mut bytes) = (0, 0);
    for chunk in input {
        parser.feed(chunk).unwrap();
        while let Some(event) = parser.next_event() {
            events += 1;
            bytes += event.data.len();
        }
    }
    parser.finish();
    while let Some(event) = parser.next_event() {
        events += 1;
        bytes += event.data.len();
    }
    (events, bytes)
}

fn bench(c: &mut Criterion) {
    let line = long_line(32 * MIB);
    // The long line's data, then the closing event's `{"type":"message_stop"}`.
    assert_eq!(
        parse(&line),
        (2, 32 * MIB + r#"{"type":"message_stop"}"#.len())
    );
    let mut group = c.benchmark_group("sse_long_line");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));
    group.throughput(Throughput::Bytes((32 * MIB) as u64));
    group.bench_function("32MiB", |b| b.iter(|| parse(&line)));
    group.finish();

    let events = many_events(32 * MIB);
    let mut group = c.benchmark_group("sse_many_events");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));
    group.throughput(Throughput::Bytes((32 * MIB) as u64));
    group.bench_function("32MiB", |b| b.iter(|| parse(&events)));
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
