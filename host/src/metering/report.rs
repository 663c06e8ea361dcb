//! The savings report: per tool and per session, fed automatically by the pipeline.
//!
//! Tokens are counted with a real tokenizer (named in the report; other models' tokenizers
//! differ), savings are signed (a call that grew counts as negative), and every saving sits next
//! to the milliseconds it cost. Memory is fixed per tool: counters, and a histogram of the
//! durations (percentiles within 1%), not a list of calls.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;

use serde_json::{Value, json};

use crate::metering::histogram::Histogram;
use crate::metering::observe::{CallEvent, Observer, TokenEvent};

#[derive(Debug, Default, Clone)]
struct Stats {
    calls: u64,
    compressed: u64,
    bytes_before: u64,
    bytes_after: u64,
    tokens_before: u64,
    tokens_after: u64,
    tokens_counted: u64,
    /// Milliseconds per call: a fixed histogram, not every duration.
    durations_ms: Histogram,
    skips: BTreeMap<String, u64>,
}

impl Stats {
    fn add_call(&mut self, event: &CallEvent) {
        let meta = &event.meta;
        self.calls += 1;
        self.compressed += u64::from(meta.compressed);
        self.bytes_before += meta.size_before as u64;
        self.bytes_after += meta.size_after as u64;
        self.durations_ms.record(meta.duration_ms);
        if let Some(skip) = meta.skipped {
            *self.skips.entry(skip.as_str().to_owned()).or_default() += 1;
        }
    }

    fn add_tokens(&mut self, event: &TokenEvent) {
        self.tokens_before += event.tokens_before as u64;
        self.tokens_after += event.tokens_after as u64;
        self.tokens_counted += 1;
    }

    fn row(&self, tool: &str) -> Row {
        Row {
            tool: tool.to_owned(),
            calls: self.calls,
            compressed: self.compressed,
            bytes_before: self.bytes_before,
            bytes_after: self.bytes_after,
            bytes_saved_pct: saved_pct(self.bytes_before, self.bytes_after),
            tokens_before: self.tokens_before,
            tokens_after: self.tokens_after,
            tokens_saved_pct: saved_pct(self.tokens_before, self.tokens_after),
            tokens_pending: self.calls.saturating_sub(self.tokens_counted),
            ms_total: self.durations_ms.sum(),
            ms_p50: self.durations_ms.percentile(50.0),
            ms_p99: self.durations_ms.percentile(99.0),
            skips: self.skips.clone(),
        }
    }

    fn merge(&mut self, other: &Stats) {
        self.calls += other.calls;
        self.compressed += other.compressed;
        self.bytes_before += other.bytes_before;
        self.bytes_after += other.bytes_after;
        self.tokens_before += other.tokens_before;
        self.tokens_after += other.tokens_after;
        self.tokens_counted += other.tokens_counted;
        self.durations_ms.merge(&other.durations_ms);
        for (reason, count) in &other.skips {
            *self.skips.entry(reason.clone()).or_default() += count;
        }
    }
}

/// Signed percent saved: positive when the payload shrank, negative when it grew.
fn saved_pct(before: u64, after: u64) -> f64 {
    if before == 0 {
        return 0.0;
    }
    (before as f64 - after as f64) / before as f64 * 100.0
}

/// One line of the report: a tool, or the session total.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The tool (`TOTAL` for the session).
    pub tool: String,
    /// Calls processed.
    pub calls: u64,
    /// Calls whose output is a compressed payload.
    pub compressed: u64,
    /// Bytes of the inputs as given.
    pub bytes_before: u64,
    /// Bytes of the payloads the model saw.
    pub bytes_after: u64,
    /// Signed percent of bytes saved.
    pub bytes_saved_pct: f64,
    /// Tokens of the inputs.
    pub tokens_before: u64,
    /// Tokens of the payloads the model saw.
    pub tokens_after: u64,
    /// Signed percent of tokens saved.
    pub tokens_saved_pct: f64,
    /// Calls whose tokens are not counted yet.
    pub tokens_pending: u64,
    /// Milliseconds spent in the pipeline, in all.
    pub ms_total: f64,
    /// Median milliseconds per call (nearest rank), within 1% of the exact value: durations
    /// are kept in a fixed histogram, so a long-running host's report does not grow.
    pub ms_p50: f64,
    /// 99th-percentile milliseconds per call (nearest rank), within 1% like
    /// [`Row::ms_p50`].
    pub ms_p99: f64,
    /// Skipped calls by reason.
    pub skips: BTreeMap<String, u64>,
}

impl Row {
    fn to_json(&self) -> Value {
        json!({
            "tool": self.tool,
            "calls": self.calls,
            "compressed": self.compressed,
            "bytes_before": self.bytes_before,
            "bytes_after": self.bytes_after,
            "bytes_saved_pct": round2(self.bytes_saved_pct),
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "tokens_saved_pct": round2(self.tokens_saved_pct),
            "tokens_pending": self.tokens_pending,
            "ms_total": round3(self.ms_total),
            "ms_p50": round3(self.ms_p50),
            "ms_p99": round3(self.ms_p99),
            "skips": self.skips,
        })
    }
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// A snapshot of the report: one row per tool (by name) and the session total.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportSnapshot {
    /// The tokenizer the token figures come from.
    pub tokenizer: String,
    /// One row per tool, sorted by tool name.
    pub tools: Vec<Row>,
    /// The session total.
    pub total: Row,
}

const NOTE: &str = "token counts are exact for this tokenizer; other models' tokenizers differ";

impl ReportSnapshot {
    /// The report as JSON.
    pub fn to_json(&self) -> Value {
        json!({
            "tokenizer": self.tokenizer,
            "note": NOTE,
            "tools": self.tools.iter().map(Row::to_json).collect::<Vec<_>>(),
            "total": self.total.to_json(),
        })
    }

    /// The report as an aligned table with a total row.
    pub fn render_table(&self) -> String {
        let lines: Vec<[String; COLUMNS]> = self
            .tools
            .iter()
            .chain(std::iter::once(&self.total))
            .map(Row::cells)
            .collect();
        let mut widths = HEADER.map(str::len);
        for line in &lines {
            for (w, cell) in widths.iter_mut().zip(line) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let mut out = String::new();
        push_aligned(&mut out, &HEADER.map(str::to_owned), widths);
        let total_at = lines.len() - 1;
        for (i, line) in lines.iter().enumerate() {
            if i == total_at {
                push_aligned(&mut out, &widths.map(|w| "-".repeat(w)), widths);
            }
            push_aligned(&mut out, line, widths);
        }
        let _ = writeln!(out, "tokens: {} ({NOTE})", self.tokenizer);
        if self.total.tokens_pending > 0 {
            let _ = writeln!(
                out,
                "tokens of {} calls not counted yet",
                self.total.tokens_pending
            );
        }
        out
    }
}

/// The columns of [`ReportSnapshot::render_table`].
const COLUMNS: usize = 13;

const HEADER: [&str; COLUMNS] = [
    "tool",
    "calls",
    "compr",
    "bytes in",
    "bytes out",
    "saved",
    "tokens in",
    "tokens out",
    "saved",
    "ms total",
    "ms p50",
    "ms p99",
    "skips",
];

impl Row {
    /// The row's cells in the table, under [`HEADER`].
    fn cells(&self) -> [String; COLUMNS] {
        let skips = if self.skips.is_empty() {
            "-".to_owned()
        } else {
            self.skips
                .iter()
                .map(|(reason, n)| format!("{reason}:{n}"))
                .collect::<Vec<_>>()
                .join(" ")
        };
        [
            self.tool.clone(),
            self.calls.to_string(),
            self.compressed.to_string(),
            grouped(self.bytes_before),
            grouped(self.bytes_after),
            format!("{:.1}%", self.bytes_saved_pct),
            grouped(self.tokens_before),
            grouped(self.tokens_after),
            format!("{:.1}%", self.tokens_saved_pct),
            format!("{:.2}", self.ms_total),
            format!("{:.3}", self.ms_p50),
            format!("{:.3}", self.ms_p99),
            skips,
        ]
    }
}

/// Appends one line of the table to `out`: the tool and the skips to the left, the figures to
/// the right, each cell `widths` wide.
fn push_aligned(out: &mut String, cells: &[String], widths: [usize; COLUMNS]) {
    let mut line = String::new();
    for (i, (cell, w)) in cells.iter().zip(widths).enumerate() {
        if i == 0 || i == cells.len() - 1 {
            let _ = write!(line, "{cell:<w$}");
        } else {
            let _ = write!(line, "{cell:>w$}");
        }
        if i + 1 < cells.len() {
            line.push_str("  ");
        }
    }
    out.push_str(line.trim_end());
    out.push('\n');
}

fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The live savings report of a host.
#[derive(Debug)]
pub struct Report {
    tokenizer: String,
    tools: Mutex<BTreeMap<String, Stats>>,
}

impl Report {
    /// An empty report whose token figures come from `tokenizer`.
    pub fn new(tokenizer: impl Into<String>) -> Report {
        Report {
            tokenizer: tokenizer.into(),
            tools: Mutex::default(),
        }
    }

    /// The report as it stands. Token figures of calls still being counted are missing (see
    /// [`Row::tokens_pending`]); call [`crate::Host::flush`] first for final figures.
    pub fn snapshot(&self) -> ReportSnapshot {
        let tools = self.tools.lock().unwrap_or_else(|p| p.into_inner());
        let mut total = Stats::default();
        let rows = tools
            .iter()
            .map(|(tool, stats)| {
                total.merge(stats);
                stats.row(tool)
            })
            .collect();
        ReportSnapshot {
            tokenizer: self.tokenizer.clone(),
            tools: rows,
            total: total.row("TOTAL"),
        }
    }
}

impl Observer for Report {
    fn on_processed(&self, event: &CallEvent) {
        let mut tools = self.tools.lock().unwrap_or_else(|p| p.into_inner());
        tools.entry(event.tool.clone()).or_default().add_call(event);
    }

    fn on_tokens(&self, event: &TokenEvent) {
        let mut tools = self.tools.lock().unwrap_or_else(|p| p.into_inner());
        tools
            .entry(event.tool.clone())
            .or_default()
            .add_tokens(event);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn savings_are_signed() {
        assert_eq!(saved_pct(100, 25), 75.0);
        assert_eq!(saved_pct(100, 150), -50.0);
        assert_eq!(saved_pct(0, 10), 0.0);
    }

    #[test]
    fn big_numbers_are_grouped_by_thousands() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1_000), "1,000");
        assert_eq!(grouped(1_234_567), "1,234,567");
    }
}
