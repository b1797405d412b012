//! What a run found: one row per scenario and device, printed as a table and
//! written as JSON.

use crate::measure::Stats;
use serde::{Serialize, Serializer};
use std::fmt::Write as _;
use ur_conformance::names::result_name;
use ur_conformance::ur::CallError;
use ur_core::abi::UR_RESULT_ERROR_UNSUPPORTED_FEATURE;

/// What a figure counts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Unit {
    /// Nanoseconds per operation, named (`pair`, `iteration`, `chain`, ...).
    NanosPer(&'static str),
    Bytes,
    Percent,
    /// Operations per second, named.
    PerSecond(&'static str),
}

impl Unit {
    pub fn name(&self) -> String {
        match self {
            Unit::NanosPer(op) => format!("ns/{op}"),
            Unit::Bytes => "bytes".into(),
            Unit::Percent => "%".into(),
            Unit::PerSecond(op) => format!("{op}/s"),
        }
    }

    pub fn format(&self, value: f64) -> String {
        match self {
            Unit::NanosPer(_) => format_nanos(value),
            Unit::Bytes => format_bytes(value),
            Unit::Percent => format!("{value:.1} %"),
            Unit::PerSecond(op) => {
                if value >= 1e6 {
                    format!("{:.2} M {op}/s", value / 1e6)
                } else if value >= 1e3 {
                    format!("{:.1} k {op}/s", value / 1e3)
                } else {
                    format!("{value:.0} {op}/s")
                }
            }
        }
    }
}

pub fn format_nanos(ns: f64) -> String {
    if ns < 1e3 {
        format!("{ns:.0} ns")
    } else if ns < 1e6 {
        format!("{:.2} µs", ns / 1e3)
    } else {
        format!("{:.2} ms", ns / 1e6)
    }
}

pub fn format_bytes(bytes: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{value:.0} B")
    } else {
        format!("{value:.2} {}", UNITS[unit])
    }
}

/// A speed-up (baseline time over ours) in words: `r` times faster when `r`
/// is at least 1, else `1/r` times slower.
pub fn speed_text(r: f64) -> String {
    if r >= 1.0 {
        format!("{r:.2}x faster")
    } else {
        format!("{:.2}x slower", 1.0 / r)
    }
}

/// A size as a short label: 64 B, 4 KiB, 1 MiB.
pub fn size_label(bytes: usize) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} B"),
    }
}

/// A measured figure, or why there is none.
#[derive(Clone, Debug)]
pub enum Outcome {
    Measured {
        value: f64,
        stats: Option<Stats>,
    },
    /// The device or adapter answered that it does not do this (the UR error
    /// or the client's message is in the reason).
    Unsupported(String),
    /// What the scenario needs is not on this machine (libsycl, a runtime).
    Unavailable(String),
    Failed(String),
}

impl Outcome {
    pub fn value(&self) -> Option<f64> {
        match self {
            Outcome::Measured { value, .. } => Some(*value),
            _ => None,
        }
    }

    /// The outcome of a failed call: "unsupported" when the answer was
    /// `UR_RESULT_ERROR_UNSUPPORTED_FEATURE`, a failure otherwise.
    pub fn from_error(e: &CallError) -> Outcome {
        if e.code == Some(UR_RESULT_ERROR_UNSUPPORTED_FEATURE) {
            Outcome::Unsupported(format!("unsupported on this device: {e}"))
        } else {
            Outcome::Failed(e.to_string())
        }
    }

    /// Cost per operation from timing statistics (the median).
    pub fn cost(result: &Result<Stats, CallError>) -> Outcome {
        match result {
            Ok(stats) => Outcome::Measured { value: stats.median_ns, stats: Some(stats.clone()) },
            Err(e) => Outcome::from_error(e),
        }
    }

    /// Operations per second from timing statistics (the median cost).
    pub fn rate(result: &Result<Stats, CallError>) -> Outcome {
        match result {
            Ok(stats) => Outcome::Measured { value: 1e9 / stats.median_ns, stats: Some(stats.clone()) },
            Err(e) => Outcome::from_error(e),
        }
    }

    pub fn plain(value: f64) -> Outcome {
        Outcome::Measured { value, stats: None }
    }

    /// The reason a figure is missing, with its kind ("unsupported: ...").
    pub fn describe(&self) -> String {
        match self {
            Outcome::Measured { value, .. } => format!("measured {value}"),
            Outcome::Unsupported(r) => r.clone(),
            other => format!("{}: {}", other.status(), other.reason().unwrap_or_default()),
        }
    }

    fn status(&self) -> &'static str {
        match self {
            Outcome::Measured { .. } => "ok",
            Outcome::Unsupported(_) => "unsupported",
            Outcome::Unavailable(_) => "unavailable",
            Outcome::Failed(_) => "error",
        }
    }

    fn reason(&self) -> Option<&str> {
        match self {
            Outcome::Measured { .. } => None,
            Outcome::Unsupported(r) | Outcome::Unavailable(r) | Outcome::Failed(r) => Some(r),
        }
    }

    fn cell(&self, unit: Unit) -> String {
        match self {
            Outcome::Measured { value, .. } => unit.format(*value),
            other => other.status().to_string(),
        }
    }
}

/// How ours and the baseline compare.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RatioKind {
    /// Baseline cost over ours: how many times faster ours is.
    Speedup,
    /// Ours over the baseline (rates, bytes).
    Quotient,
    /// No baseline is meaningful (a reuse rate).
    None,
}

/// The target a row is judged by.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Goal {
    OursAtMost(f64),
    OursAtLeast(f64),
    RatioAtLeast(f64),
    RatioAtMost(f64),
    /// Ours takes at most this many times the baseline's time; the text
    /// names whose time it is ("<= 1.0x Intel's time").
    TimeAtMost(f64, &'static str),
}

#[derive(Clone, Debug)]
pub struct Row {
    pub device: String,
    pub scenario: u32,
    pub name: String,
    pub unit: Unit,
    pub ours: Outcome,
    pub baseline: Outcome,
    pub ratio_kind: RatioKind,
    pub goal: Option<Goal>,
    /// Context a reader needs: reuse counts, pool high-water marks, sizes.
    pub notes: Vec<String>,
}

impl Row {
    pub fn new(device: &str, scenario: u32, name: impl Into<String>, unit: Unit) -> Row {
        Row {
            device: device.to_string(),
            scenario,
            name: name.into(),
            unit,
            ours: Outcome::Unavailable("not measured".into()),
            baseline: Outcome::Unavailable("not measured".into()),
            ratio_kind: RatioKind::Speedup,
            goal: None,
            notes: Vec::new(),
        }
    }

    pub fn ratio(&self) -> Option<f64> {
        let (ours, baseline) = (self.ours.value()?, self.baseline.value()?);
        let ratio = match self.ratio_kind {
            RatioKind::Speedup => baseline / ours,
            RatioKind::Quotient => ours / baseline,
            RatioKind::None => return None,
        };
        ratio.is_finite().then_some(ratio)
    }

    /// Whether the goal is met; `None` without a goal or a figure to judge.
    pub fn met(&self) -> Option<bool> {
        Some(match self.goal? {
            Goal::OursAtMost(limit) => self.ours.value()? <= limit,
            Goal::OursAtLeast(limit) => self.ours.value()? >= limit,
            Goal::RatioAtLeast(limit) => self.ratio()? >= limit,
            Goal::RatioAtMost(limit) => self.ratio()? <= limit,
            Goal::TimeAtMost(times, _) => self.ours.value()? <= times * self.baseline.value()?,
        })
    }

    fn goal_text(&self) -> String {
        let speedup = matches!(self.ratio_kind, RatioKind::Speedup);
        match self.goal {
            None => "-".into(),
            Some(Goal::OursAtMost(v)) => format!("<= {}", self.unit.format(v)),
            Some(Goal::OursAtLeast(v)) => format!(">= {}", self.unit.format(v)),
            Some(Goal::RatioAtLeast(v)) if speedup => format!(">= {v}x faster"),
            Some(Goal::RatioAtMost(v)) if speedup => format!("<= {v}x faster"),
            Some(Goal::RatioAtLeast(v)) => format!("ratio >= {v}"),
            Some(Goal::RatioAtMost(v)) => format!("ratio <= {v}"),
            Some(Goal::TimeAtMost(v, whose)) => format!("<= {v:.1}x {whose} time"),
        }
    }

    /// The ratio as a reader says it: for costs, "3.17x faster", or, when
    /// ours takes longer, "1.45x slower" (the inverse, never "0.69x
    /// faster"); for other figures the plain quotient.
    pub fn ratio_text(&self) -> String {
        match (self.ratio(), self.ratio_kind) {
            (Some(r), RatioKind::Speedup) => speed_text(r),
            (Some(r), _) => format!("{r:.2}"),
            (None, _) => "-".into(),
        }
    }

    /// Notes plus the reasons of missing figures, for the last column.
    fn all_notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        if let Some(reason) = self.ours.reason() {
            notes.push(format!("ours: {reason}"));
        }
        if let Some(reason) = self.baseline.reason() {
            if !matches!(self.ratio_kind, RatioKind::None) {
                notes.push(format!("baseline: {reason}"));
            }
        }
        notes.extend(self.notes.iter().cloned());
        notes
    }

    /// The row as `--json` writes it.
    fn to_json(&self) -> RowJson<'_> {
        RowJson {
            device: &self.device,
            scenario: self.scenario,
            name: &self.name,
            unit: self.unit.name(),
            ours: OutcomeJson::of(&self.ours),
            baseline: OutcomeJson::of(&self.baseline),
            ratio_kind: match self.ratio_kind {
                RatioKind::Speedup => "baseline/ours",
                RatioKind::Quotient => "ours/baseline",
                RatioKind::None => "none",
            },
            ratio: self.ratio(),
            goal: self.goal.is_some().then(|| self.goal_text()),
            met: self.met(),
            notes: self.all_notes(),
        }
    }
}

/// One side of a row in `--json`: the figure, its status, why it is missing,
/// and for timed figures the statistics.
#[derive(Serialize)]
struct OutcomeJson<'a> {
    value: Option<f64>,
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'a str>,
    #[serde(flatten)]
    stats: Option<&'a Stats>,
}

impl<'a> OutcomeJson<'a> {
    fn of(outcome: &'a Outcome) -> Self {
        let stats = match outcome {
            Outcome::Measured { stats, .. } => stats.as_ref(),
            _ => None,
        };
        OutcomeJson { value: outcome.value(), status: outcome.status(), reason: outcome.reason(), stats }
    }
}

/// A row in `--json`.
#[derive(Serialize)]
struct RowJson<'a> {
    device: &'a str,
    scenario: u32,
    name: &'a str,
    unit: String,
    ours: OutcomeJson<'a>,
    baseline: OutcomeJson<'a>,
    ratio_kind: &'static str,
    ratio: Option<f64>,
    goal: Option<String>,
    met: Option<bool>,
    notes: Vec<String>,
}

/// The table, as text: one line per row, then its notes indented below.
pub fn table(rows: &[Row]) -> String {
    let header = ["device", "#", "scenario", "ours", "baseline", "ratio", "goal", "met?"];
    let cells: Vec<[String; 8]> = rows
        .iter()
        .map(|r| {
            [
                r.device.clone(),
                r.scenario.to_string(),
                r.name.clone(),
                r.ours.cell(r.unit),
                if matches!(r.ratio_kind, RatioKind::None) { "-".into() } else { r.baseline.cell(r.unit) },
                r.ratio_text(),
                r.goal_text(),
                match r.met() {
                    Some(true) => "yes".into(),
                    Some(false) => "NO".into(),
                    None => "-".into(),
                },
            ]
        })
        .collect();
    let mut widths = header.map(|h| h.chars().count());
    for row in &cells {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &[String]| {
        let mut out = String::new();
        for (i, (cell, width)) in cells.iter().zip(widths).enumerate() {
            let pad = width - cell.chars().count();
            // Figures right-aligned, words left-aligned.
            if (3..=5).contains(&i) {
                let _ = write!(out, "{}{cell}  ", " ".repeat(pad));
            } else {
                let _ = write!(out, "{cell}{}  ", " ".repeat(pad));
            }
        }
        out.trim_end().to_string() + "\n"
    };
    let mut out = line(&header.map(String::from));
    out += &line(&widths.map(|w| "-".repeat(w)));
    for (row, cells) in rows.iter().zip(&cells) {
        out += &line(cells);
        for note in row.all_notes() {
            let _ = writeln!(out, "      {note}");
        }
    }
    out
}

/// Cost per operation at one allocation size, for the chart.
#[derive(Clone, Debug, Serialize)]
pub struct Point {
    pub size: usize,
    #[serde(rename = "ns_per_op")]
    pub ns: Option<f64>,
}

/// One line of the chart.
#[derive(Clone, Debug, Serialize)]
pub struct Series {
    /// The panel it is drawn in (a device, or the SYCL client).
    pub panel: String,
    pub name: String,
    /// Ours (solid) or a baseline (dashed).
    pub ours: bool,
    pub points: Vec<Point>,
    /// Why points are missing, if they are.
    pub note: Option<String>,
}

/// A device the run looked at.
#[derive(Clone, Debug, Serialize)]
pub struct DeviceInfo {
    pub label: String,
    pub name: String,
    /// `UR_DEVICE_INFO_ASYNC_USM_ALLOCATIONS_SUPPORT_EXP`, or why unknown
    /// (`null` in `--json`).
    #[serde(rename = "async_usm_allocations_support", serialize_with = "ok_or_null")]
    pub async_claimed: Result<bool, String>,
}

fn ok_or_null<S: Serializer>(claim: &Result<bool, String>, serializer: S) -> Result<S::Ok, S::Error> {
    claim.as_ref().ok().serialize(serializer)
}

/// The run's settings, first in `--json`.
#[derive(Serialize)]
pub struct Settings {
    pub tool: &'static str,
    pub loader: String,
    pub quick: bool,
    pub repetitions: usize,
    pub max_iterations: usize,
    /// The allocation size of the fixed-size scenarios, in bytes.
    pub size: usize,
    pub cpus: usize,
}

/// Everything `--json` writes, in this order.
#[derive(Serialize)]
struct Report<'a> {
    #[serde(flatten)]
    settings: &'a Settings,
    devices: &'a [DeviceInfo],
    rows: Vec<RowJson<'a>>,
    sweeps: &'a [Series],
}

/// The text of `--json`: settings, devices, rows, sweeps, indented.
pub fn to_json(settings: &Settings, devices: &[DeviceInfo], rows: &[Row], series: &[Series]) -> serde_json::Result<String> {
    let report = Report { settings, devices, rows: rows.iter().map(Row::to_json).collect(), sweeps: series };
    let mut text = serde_json::to_string_pretty(&report)?;
    text.push('\n');
    Ok(text)
}

/// A UR result code by name, for notes.
pub fn code_name(code: ur_core::abi::ur_result_t) -> String {
    result_name(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratio_and_goal_follow_the_row_kind() {
        let mut row = Row::new("dev", 1, "pair", Unit::NanosPer("pair"));
        row.ours = Outcome::plain(100.0);
        row.baseline = Outcome::plain(1000.0);
        row.goal = Some(Goal::RatioAtLeast(10.0));
        assert_eq!(row.ratio(), Some(10.0));
        assert_eq!(row.met(), Some(true));
        row.goal = Some(Goal::OursAtMost(99.0));
        assert_eq!(row.met(), Some(false));
        row.ratio_kind = RatioKind::Quotient;
        assert_eq!(row.ratio(), Some(0.1));
        row.ours = Outcome::Unsupported("unsupported on this device: x".into());
        assert_eq!(row.ratio(), None);
        assert_eq!(row.met(), None, "no figure, no verdict");
        let text = table(&[row]);
        assert!(text.contains("unsupported") && text.contains("ours: unsupported on this device: x"), "{text}");
    }

    #[test]
    fn a_slowdown_reads_as_slower() {
        assert_eq!(speed_text(3.17), "3.17x faster");
        assert_eq!(speed_text(1.0), "1.00x faster");
        assert_eq!(speed_text(1.0 / 1.45), "1.45x slower");
        assert_eq!(speed_text(0.25), "4.00x slower");
        let mut row = Row::new("dev", 4, "handover", Unit::NanosPer("handover"));
        row.ours = Outcome::plain(85.92);
        row.baseline = Outcome::plain(21.80);
        row.goal = Some(Goal::RatioAtLeast(3.0));
        assert_eq!(row.ratio_text(), "3.94x slower");
        assert_eq!(row.met(), Some(false));
        let text = table(&[row]);
        assert!(text.contains("3.94x slower") && text.contains(">= 3x faster"), "{text}");
        assert!(!text.contains("0.25x"), "{text}");
    }

    #[test]
    fn a_time_goal_compares_ours_with_the_baseline_time() {
        let mut row = Row::new("dev", 9, "buffer", Unit::NanosPer("iteration"));
        row.goal = Some(Goal::TimeAtMost(1.0, "Intel's"));
        row.ours = Outcome::plain(10.0);
        row.baseline = Outcome::plain(10.0);
        assert_eq!(row.met(), Some(true), "as fast meets <= 1.0x");
        row.ours = Outcome::plain(12.0);
        assert_eq!(row.met(), Some(false));
        let text = table(&[row]);
        assert!(text.contains("<= 1.0x Intel's time") && text.contains("1.20x slower"), "{text}");
    }

    #[test]
    fn json_has_the_fields_readers_use() {
        let settings = Settings {
            tool: "ur_bench",
            loader: "/x/libur_loader.so.0".into(),
            quick: true,
            repetitions: 3,
            max_iterations: 10,
            size: 1024,
            cpus: 2,
        };
        let devices = [
            DeviceInfo { label: "a:0".into(), name: "A \"quoted\"\n".into(), async_claimed: Ok(true) },
            DeviceInfo { label: "b:0".into(), name: "B".into(), async_claimed: Err("no answer".into()) },
        ];
        let mut row = Row::new("a:0", 2, "pair", Unit::NanosPer("pair"));
        row.ours = Outcome::cost(&Ok(Stats::from_samples(vec![3.0, 1.0, f64::NAN], 7)));
        row.baseline = Outcome::Unsupported("unsupported on this device: x".into());
        row.goal = Some(Goal::RatioAtLeast(2.0));
        let series = [Series {
            panel: "a:0".into(),
            name: "s".into(),
            ours: true,
            points: vec![Point { size: 64, ns: Some(1.5) }, Point { size: 128, ns: None }],
            note: None,
        }];
        let text = to_json(&settings, &devices, &[row], &series).unwrap();
        // Settings first, then devices, rows and sweeps, as readers see them.
        let at = |key: &str| text.find(&format!("\"{key}\"")).unwrap_or_else(|| panic!("no {key} in {text}"));
        assert!(at("tool") < at("cpus") && at("cpus") < at("devices") && at("devices") < at("rows"));
        assert!(at("rows") < at("sweeps"));
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["scenario"], serde_json::Value::Null, "settings hold no row fields");
        assert_eq!(v["size"], 1024);
        assert_eq!(v["devices"][0]["name"], "A \"quoted\"\n");
        assert_eq!(v["devices"][0]["async_usm_allocations_support"], true);
        assert!(v["devices"][1]["async_usm_allocations_support"].is_null());
        let r = &v["rows"][0];
        assert_eq!(r["scenario"], 2);
        assert_eq!(r["unit"], "ns/pair");
        assert_eq!(r["ours"]["status"], "ok");
        assert_eq!(r["ours"]["iterations_per_batch"], 7);
        assert!(r["ours"].get("reason").is_none(), "a measured figure has no reason");
        // NaN sorts last: the median of (1, 3, NaN) is 3, the maximum NaN.
        assert_eq!(r["ours"]["value"], 3.0);
        assert!(r["ours"]["max_ns"].is_null(), "a non-finite figure is null");
        assert_eq!(r["ours"]["samples_ns"].as_array().map(Vec::len), Some(3));
        assert!(r["baseline"]["value"].is_null());
        assert_eq!(r["baseline"]["status"], "unsupported");
        assert_eq!(r["baseline"]["reason"], "unsupported on this device: x");
        assert!(r["baseline"].get("median_ns").is_none(), "no statistics without a figure");
        assert_eq!(r["ratio_kind"], "baseline/ours");
        assert!(r["ratio"].is_null() && r["met"].is_null());
        assert_eq!(r["goal"], ">= 2x faster");
        assert_eq!(r["notes"][0], "baseline: unsupported on this device: x");
        let s = &v["sweeps"][0];
        assert_eq!(s["points"][0]["ns_per_op"], 1.5);
        assert!(s["points"][1]["ns_per_op"].is_null());
        assert!(s["note"].is_null());
    }

    #[test]
    fn units_read_well() {
        assert_eq!(format_nanos(123.4), "123 ns");
        assert_eq!(format_nanos(33_000.0), "33.00 µs");
        assert_eq!(format_bytes(4.0 * 1024.0 * 1024.0), "4.00 MiB");
        assert_eq!(size_label(4096), "4 KiB");
        assert_eq!(size_label(100), "100 B");
        assert_eq!(Unit::PerSecond("pair").format(6.5e6), "6.50 M pair/s");
    }
}
