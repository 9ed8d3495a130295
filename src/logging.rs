//! Logging to stderr (stdout belongs to the MCP stdio transport). Lines read
//! `warning: <file>: <reason>`, without timestamps or targets, so warnings look the same
//! from the server and from `check`. `RUST_LOG` sets the levels (default: `warn`, and nothing
//! from `rmcp`); URLs in the libraries' lines are shown as `scheme://host[:port]` only.
//! Lines are queued for stderr ([`crate::console`]), so logging never blocks.

use std::fmt;

use tracing::{Event, Level, Subscriber};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::FmtContext;
use tracing_subscriber::fmt::format::{FormatEvent, FormatFields, Writer};
use tracing_subscriber::registry::LookupSpan;

use crate::redact::redact_urls;

/// The target of a rejected definition's line, which starts with `rejected:` instead of the
/// level's word (`tracing::warn!(target: REJECTED, …)`): a file that is not used should not
/// read like any other warning.
pub const REJECTED: &str = "mcp_agents::rejected";

/// Installs the stderr logger once; later calls do nothing.
pub fn init() {
    // rmcp logs its own view of failures this server already reports with a code; set
    // RUST_LOG (for example `warn,rmcp=debug`) to see them.
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("warn,rmcp=off"));
    let _ = tracing_subscriber::fmt()
        .with_writer(crate::console::QueuedStderr)
        .with_env_filter(filter)
        .event_format(PlainFormat)
        .try_init();
}

/// The word a line starts with for each level.
pub fn level_word(level: Level) -> &'static str {
    match level {
        Level::ERROR => "error",
        Level::WARN => "warning",
        Level::INFO => "info",
        Level::DEBUG => "debug",
        Level::TRACE => "trace",
    }
}

struct PlainFormat;

impl<S, N> FormatEvent<S, N> for PlainFormat
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let word = match event.metadata().target() {
            REJECTED => "rejected",
            _ => level_word(*event.metadata().level()),
        };
        write!(writer, "{word}: ")?;
        if !event
            .metadata()
            .target()
            .starts_with(env!("CARGO_CRATE_NAME"))
        {
            // The libraries' lines (rmcp's only when RUST_LOG asks for them) quote transport
            // errors, whose URLs can carry a credential in their path or query; ours never
            // do.
            let mut text = String::new();
            ctx.field_format()
                .format_fields(Writer::new(&mut text), event)?;
            write!(writer, "{}", redact_urls(&text))?;
        } else {
            ctx.field_format().format_fields(writer.by_ref(), event)?;
        }
        writeln!(writer)
    }
}
