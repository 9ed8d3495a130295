//! Drawing `mcp-agents watch` with `ratatui` (SPEC §7.1): the list (a line per server with
//! its totals, a row per agent under it), an agent's detail, and the footer with the keys
//! or the stop to confirm. The row's columns are taken from the left while they fit, so 80
//! columns drop the rightmost ones and a wide screen shows them all, the flexible ones
//! (what the agent does, the question) taking the room left.

use std::time::{Duration, Instant};

use ratatui::Frame;
use ratatui::style::{Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

use super::status::{server_line, short_count};
use super::watch_model::{AgentView, Mode, Watch};

/// A column of the list, left to right in the order they are dropped from the right.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Column {
    Name,
    Id,
    Status,
    Now,
    Elapsed,
    Turns,
    Tokens,
    Cost,
    Files,
    Question,
}

impl Column {
    const ALL: [Column; 10] = [
        Column::Name,
        Column::Id,
        Column::Status,
        Column::Now,
        Column::Elapsed,
        Column::Turns,
        Column::Tokens,
        Column::Cost,
        Column::Files,
        Column::Question,
    ];

    /// Its heading and its width (the least, for a flexible one).
    fn spec(self) -> (&'static str, usize) {
        match self {
            Column::Name => ("NAME", 14),
            Column::Id => ("ID", 8),
            Column::Status => ("STATUS", 9),
            Column::Now => ("NOW", 20),
            Column::Elapsed => ("ELAPSED", 8),
            Column::Turns => ("TURNS", 5),
            Column::Tokens => ("TOKENS", 7),
            Column::Cost => ("COST", 8),
            Column::Files => ("FILES", 5),
            Column::Question => ("QUESTION", 24),
        }
    }

    fn is_flexible(self) -> bool {
        matches!(self, Column::Now | Column::Question)
    }

    fn is_number(self) -> bool {
        matches!(
            self,
            Column::Elapsed | Column::Turns | Column::Tokens | Column::Cost | Column::Files
        )
    }
}

/// The columns that fit in `width`, each with its width: taken from the left while they
/// fit, the room left shared by the flexible ones.
fn columns(width: usize) -> Vec<(Column, usize)> {
    let mut chosen: Vec<(Column, usize)> = Vec::new();
    let mut used = 0;
    for column in Column::ALL {
        let (_, least) = column.spec();
        let gap = usize::from(!chosen.is_empty());
        if used + gap + least > width {
            break;
        }
        used += gap + least;
        chosen.push((column, least));
    }
    let flexible = chosen.iter().filter(|(c, _)| c.is_flexible()).count();
    let room = width.saturating_sub(used);
    if let Some(share) = room.checked_div(flexible) {
        let mut shares = vec![share; flexible];
        shares[0] += room % flexible;
        let mut shares = shares.into_iter();
        for (column, w) in &mut chosen {
            if column.is_flexible() {
                *w += shares.next().unwrap_or(0);
            }
        }
    }
    chosen
}

/// `text` in exactly `width` characters: cut with "…", padded on the right (or on the left
/// for a number).
fn fit(text: &str, width: usize, right: bool) -> String {
    let text: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let count = text.chars().count();
    let shown = if count > width {
        let mut cut: String = text.chars().take(width.saturating_sub(1)).collect();
        cut.push('…');
        cut
    } else {
        text
    };
    if right {
        format!("{shown:>width$}")
    } else {
        format!("{shown:<width$}")
    }
}

/// `20 s`, `4 m 05 s`, `1 h 02 m`.
fn clock(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} m {:02} s", s / 60, s % 60),
        _ => format!("{} h {:02} m", s / 3600, s % 3600 / 60),
    }
}

fn cell(agent: &AgentView, column: Column, now: Instant, live: bool) -> String {
    match column {
        Column::Name => agent.name().to_owned(),
        Column::Id => agent.short_id().to_owned(),
        Column::Status => agent.status().to_owned(),
        Column::Now => agent.now(),
        Column::Elapsed => clock(agent.elapsed(now, live)),
        Column::Turns => agent.record["turns"].as_u64().unwrap_or(0).to_string(),
        Column::Tokens => short_count(agent.tokens()),
        Column::Cost => agent.cost().map_or("–".to_owned(), |c| format!("${c:.3}")),
        Column::Files => agent.files_changed().to_string(),
        Column::Question => agent.question().unwrap_or_default().to_owned(),
    }
}

fn row(cells: impl Iterator<Item = (String, Column, usize)>) -> String {
    let parts: Vec<String> = cells
        .map(|(text, column, width)| fit(&text, width, column.is_number()))
        .collect();
    parts.join(" ")
}

/// Draws the whole screen.
pub(super) fn draw(frame: &mut Frame<'_>, watch: &Watch, now: Instant) {
    let area = frame.area();
    let width = usize::from(area.width);
    let height = usize::from(area.height);
    let mut lines: Vec<Line<'static>> = vec![Line::styled(
        fit(
            &format!("mcp-agents watch · {}", watch.workspace),
            width,
            false,
        ),
        Style::default().add_modifier(Modifier::BOLD),
    )];
    let body = height.saturating_sub(2);
    match watch.mode {
        Mode::Detail => lines.extend(detail(watch, now, width).into_iter().take(body)),
        _ => lines.extend(list(watch, now, width, body)),
    }
    while lines.len() + 1 < height {
        lines.push(Line::raw(""));
    }
    lines.push(footer(watch, width));
    frame.render_widget(Paragraph::new(lines), area);
}

/// A line per server, a heading, and a row per agent, scrolled to keep the selected one in
/// the `rows` there are.
fn list(watch: &Watch, now: Instant, width: usize, rows: usize) -> Vec<Line<'static>> {
    if watch.servers.is_empty() {
        return vec![Line::raw(fit(
            &format!(
                "no mcp-agents server is running for {}; waiting for one",
                watch.workspace
            ),
            width,
            false,
        ))];
    }
    let columns = columns(width);
    let heading = row(columns.iter().map(|&(c, w)| (c.spec().0.to_owned(), c, w)));
    let dim = Style::default().add_modifier(Modifier::DIM);
    let mut all: Vec<(Line<'static>, bool)> = Vec::new();
    for server in &watch.servers {
        let text = if server.gone {
            format!(
                "mcp-agents server {} has gone away; this is its last picture",
                server.pid
            )
        } else {
            server_line(&server.server)
        };
        all.push((Line::styled(fit(&text, width, false), dim), false));
        for (i, agent) in watch.agents.iter().enumerate() {
            if agent.pid != server.pid {
                continue;
            }
            let text = row(columns
                .iter()
                .map(|&(c, w)| (cell(agent, c, now, !server.gone), c, w)));
            let selected = i == watch.selected;
            let style = if selected {
                Style::default().add_modifier(Modifier::REVERSED)
            } else {
                Style::default()
            };
            all.push((Line::styled(text, style), selected));
        }
    }
    // The first server's line, then the heading, stay; the rest scrolls.
    let mut rest = all.into_iter();
    let mut lines: Vec<Line<'static>> = rest.next().map(|(l, _)| l).into_iter().collect();
    lines.push(Line::styled(
        heading,
        Style::default().add_modifier(Modifier::BOLD),
    ));
    let rest: Vec<(Line<'static>, bool)> = rest.collect();
    let room = rows.saturating_sub(lines.len());
    let at = rest.iter().position(|(_, s)| *s).unwrap_or(0);
    let skip = (at + 1).saturating_sub(room);
    lines.extend(rest.into_iter().skip(skip).take(room).map(|(l, _)| l));
    lines
}

/// The selected agent: who, how it stands, its tool calls with their durations, its tools
/// and files.
fn detail(watch: &Watch, now: Instant, width: usize) -> Vec<Line<'static>> {
    let Some(agent) = watch.selected_agent() else {
        return Vec::new();
    };
    let live = watch.is_live(agent.pid);
    let r = &agent.record;
    let usage = &r["usage"];
    let mut text = vec![
        format!(
            "{} {} · {} · {} ({}) · server {}",
            agent.name(),
            agent.short_id(),
            agent.status(),
            r["model"].as_str().unwrap_or("?"),
            r["provider"].as_str().unwrap_or("?"),
            agent.pid
        ),
        r["line"].as_str().unwrap_or_default().to_owned(),
        format!(
            "{} · {} turns · {} in / {} out tokens ({} cache read){}",
            clock(agent.elapsed(now, live)),
            r["turns"].as_u64().unwrap_or(0),
            short_count(usage["input_tokens"].as_u64().unwrap_or(0)),
            short_count(usage["output_tokens"].as_u64().unwrap_or(0)),
            short_count(usage["cache_read_tokens"].as_u64().unwrap_or(0)),
            agent
                .cost()
                .map_or(String::new(), |c| format!(" · ${c:.4}")),
        ),
        format!(
            "{}: {}",
            if agent.is_running() { "now" } else { "ended" },
            agent.now()
        ),
        String::new(),
        "tool calls:".to_owned(),
    ];
    text.extend(calls(agent));
    text.extend(tools_and_files(agent));
    text.into_iter()
        .map(|t| Line::raw(fit(&t, width, false)))
        .collect()
}

/// A line per tool call, newest first: how long it took (or that it runs), its name, and
/// how many ran with it.
fn calls(agent: &AgentView) -> Vec<String> {
    let calls = agent.record["calls"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    if calls.is_empty() {
        return vec!["  none yet".to_owned()];
    }
    calls
        .iter()
        .rev()
        .map(|call| {
            let took = match call["took_ms"].as_u64() {
                #[expect(clippy::cast_precision_loss, reason = "milliseconds shown as seconds")]
                Some(ms) => format!("{:>7.1} s", ms as f64 / 1000.0),
                None => "running".to_owned(),
            };
            let together = match call["at_once"].as_u64() {
                Some(n) if n > 1 => format!("  ({n} at once)"),
                _ => String::new(),
            };
            format!(
                "  {took:>9}  {}{together}",
                call["call"].as_str().unwrap_or("?")
            )
        })
        .collect()
}

/// `tools used:` with calls and errors, and `files changed:`.
fn tools_and_files(agent: &AgentView) -> Vec<String> {
    let r = &agent.record;
    let mut text = Vec::new();
    let used: Vec<String> = r["tools_used"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| {
            format!(
                "{} ×{}{}",
                t["tool"].as_str().unwrap_or("?"),
                t["calls"],
                match t["errors"].as_u64() {
                    Some(0) | None => String::new(),
                    Some(n) => format!(" ({n} failed)"),
                }
            )
        })
        .collect();
    if !used.is_empty() {
        text.push(format!("tools used: {}", used.join(", ")));
    }
    let files: Vec<&str> = r["files_changed"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f["path"].as_str())
        .collect();
    if !files.is_empty() {
        text.push(format!("files changed: {}", files.join(", ")));
    }
    text
}

fn footer(watch: &Watch, width: usize) -> Line<'static> {
    let bold = Style::default().add_modifier(Modifier::BOLD);
    if let Mode::ConfirmStop { agent_id, .. } = &watch.mode {
        let name = watch
            .agents
            .iter()
            .find(|a| a.id() == agent_id)
            .map_or("the agent", AgentView::name);
        let short = agent_id.get(..8).unwrap_or(agent_id);
        return Line::styled(
            fit(&format!("stop {name} {short}? y/n"), width, false),
            bold,
        );
    }
    let keys = match watch.mode {
        Mode::Detail => "Esc back · s stop · q quit",
        _ => "↑↓ select · Enter detail · s stop · q quit",
    };
    let text = match &watch.note {
        Some(note) => format!("{note} · {keys}"),
        None => keys.to_owned(),
    };
    Line::styled(
        fit(&text, width, false),
        Style::default().add_modifier(Modifier::DIM),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_drop_from_the_right_and_fill_the_width() {
        let narrow: Vec<Column> = columns(80).into_iter().map(|(c, _)| c).collect();
        assert_eq!(narrow.last(), Some(&Column::Tokens));
        let used: usize = columns(80).iter().map(|(_, w)| w + 1).sum::<usize>() - 1;
        assert_eq!(used, 80);
        let wide = columns(160);
        assert_eq!(wide.len(), Column::ALL.len());
        assert_eq!(wide.iter().map(|(_, w)| w + 1).sum::<usize>() - 1, 160);
        assert_eq!(fit("abcdef", 4, false), "abc…");
        assert_eq!(fit("7", 3, true), "  7");
        assert_eq!(clock(Duration::from_secs(245)), "4 m 05 s");
    }
}
