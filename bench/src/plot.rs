//! The chart of `--plot`: cost per operation against allocation size, one
//! panel per device (and one for the SYCL client), log-log axes, ours solid
//! and baselines dashed in the same colour per operation.

use crate::report::{size_label, Series};
use std::fmt::Write as _;

const WIDTH: f64 = 980.0;
const PLOT_LEFT: f64 = 90.0;
const PLOT_RIGHT: f64 = 30.0;
const PLOT_HEIGHT: f64 = 300.0;
const PANEL_TOP: f64 = 50.0;
const AXIS_SPACE: f64 = 55.0;
const LEGEND_LINE: f64 = 20.0;
const PANEL_GAP: f64 = 30.0;
const TITLE_SPACE: f64 = 60.0;
/// The plot box of a panel with no figures, holding only the reason.
const EMPTY_PLOT_HEIGHT: f64 = 70.0;
/// Space under an empty panel's box, before its legend (no axis labels).
const EMPTY_AXIS_SPACE: f64 = 20.0;
/// A generous width of one character at the chart's font size (13 px,
/// DejaVu Sans), so that wrapped text stays inside the chart.
const CHAR_WIDTH: f64 = 7.6;
/// Legend text starts this far right of the plot's left edge.
const LEGEND_TEXT_OFFSET: f64 = 46.0;
const PALETTE: [&str; 6] = ["#1f5fbf", "#d9641e", "#2a9d4b", "#b8338f", "#7a5cc7", "#8c6d31"];

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// A decade of nanoseconds as a tick label: 10 ns, 1 µs, 100 ms.
fn nanos_tick(ns: f64) -> String {
    let (value, unit) = if ns < 1e3 {
        (ns, "ns")
    } else if ns < 1e6 {
        (ns / 1e3, "µs")
    } else if ns < 1e9 {
        (ns / 1e6, "ms")
    } else {
        (ns / 1e9, "s")
    };
    format!("{} {unit}", value.round() as u64)
}

/// Splits `text` into lines of at most `max_chars` characters, at spaces
/// where it can (a longer word is cut).
fn wrap(text: &str, max_chars: usize) -> Vec<String> {
    let max_chars = max_chars.max(1);
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let mut word: Vec<char> = word.chars().collect();
        let used = line.chars().count();
        if used > 0 && used + 1 + word.len() > max_chars {
            lines.push(std::mem::take(&mut line));
        }
        while word.len() > max_chars {
            lines.push(word.drain(..max_chars).collect());
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.extend(word);
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// How many characters fit in `width` pixels.
fn chars_in(width: f64) -> usize {
    (width / CHAR_WIDTH).floor() as usize
}

/// What one panel shows, and so how tall it is.
struct Panel<'a> {
    title: &'a str,
    list: Vec<&'a Series>,
    /// The reason shown in the box when no series has a figure.
    empty_reason: Option<String>,
    /// The legend: one entry per series, each wrapped into lines.
    legend: Vec<Vec<String>>,
}

impl<'a> Panel<'a> {
    fn new(title: &'a str, list: Vec<&'a Series>) -> Panel<'a> {
        let has_figures = list.iter().any(|s| s.points.iter().any(|p| p.ns.is_some_and(|v| v > 0.0)));
        let empty_reason = (!has_figures)
            .then(|| list.iter().find_map(|s| s.note.clone()).unwrap_or_else(|| "nothing measured".into()));
        let width = chars_in(WIDTH - PLOT_RIGHT - PLOT_LEFT - LEGEND_TEXT_OFFSET);
        let legend = list.iter().map(|s| wrap(&legend_label(s, empty_reason.as_deref()), width)).collect();
        Panel { title, list, empty_reason, legend }
    }

    fn plot_height(&self) -> f64 {
        if self.empty_reason.is_some() {
            EMPTY_PLOT_HEIGHT
        } else {
            PLOT_HEIGHT
        }
    }

    fn axis_space(&self) -> f64 {
        if self.empty_reason.is_some() {
            EMPTY_AXIS_SPACE
        } else {
            AXIS_SPACE
        }
    }

    fn height(&self) -> f64 {
        let legend_lines: usize = self.legend.iter().map(Vec::len).sum();
        PANEL_TOP + self.plot_height() + self.axis_space() + LEGEND_LINE * legend_lines as f64
    }
}

/// A series' legend text: its name, and why it has no figures when it has
/// none (only "see above" when the panel's box already says why).
fn legend_label(s: &Series, shown_reason: Option<&str>) -> String {
    let mut label = s.name.clone();
    if s.points.iter().all(|p| p.ns.is_none()) {
        match s.note.as_deref() {
            Some(note) if Some(note) == shown_reason => label += " [no figures: see above]",
            Some(note) => label += &format!(" [no figures: {}]", short_reason(note)),
            None => label += " [no figures]",
        }
    }
    label
}

/// Colour group of a series: what comes before ':' in its name (the
/// operation), so that ours and its baseline share a colour.
fn group_of(series: &Series) -> &str {
    series.name.split(':').next().unwrap_or(&series.name)
}

/// The whole chart as SVG text. `subtitle` says how it was measured.
pub fn svg(series: &[Series], subtitle: &str) -> String {
    let mut grouped: Vec<(&str, Vec<&Series>)> = Vec::new();
    for s in series {
        match grouped.iter_mut().find(|(name, _)| *name == s.panel) {
            Some((_, list)) => list.push(s),
            None => grouped.push((&s.panel, vec![s])),
        }
    }
    let panels: Vec<Panel> = grouped.into_iter().map(|(title, list)| Panel::new(title, list)).collect();
    let height = TITLE_SPACE + panels.iter().map(|p| p.height() + PANEL_GAP).sum::<f64>();
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="DejaVu Sans, Arial, sans-serif" font-size="13">"#
    );
    let _ = writeln!(out, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        out,
        r#"<text x="{}" y="26" font-size="18" font-weight="bold" text-anchor="middle">Cost per operation against allocation size (lower is better)</text>"#,
        WIDTH / 2.0
    );
    let _ = writeln!(
        out,
        r##"<text x="{}" y="46" fill="#555" text-anchor="middle">{}</text>"##,
        WIDTH / 2.0,
        escape(subtitle)
    );
    let mut top = TITLE_SPACE;
    for panel in &panels {
        draw_panel(&mut out, panel, top);
        top += panel.height() + PANEL_GAP;
    }
    out.push_str("</svg>\n");
    out
}

fn draw_panel(out: &mut String, panel: &Panel, top: f64) {
    let list = &panel.list[..];
    let left = PLOT_LEFT;
    let right = WIDTH - PLOT_RIGHT;
    let plot_top = top + PANEL_TOP;
    let plot_height = panel.plot_height();
    let plot_bottom = plot_top + plot_height;
    let legend_top = plot_bottom + panel.axis_space();
    let _ = writeln!(
        out,
        r#"<text x="{left}" y="{}" font-size="15" font-weight="bold">{}</text>"#,
        top + 30.0,
        escape(panel.title)
    );

    let sizes: Vec<usize> = {
        let mut s: Vec<usize> = list.iter().flat_map(|s| s.points.iter().map(|p| p.size)).collect();
        s.sort_unstable();
        s.dedup();
        s
    };
    let values: Vec<f64> =
        list.iter().flat_map(|s| s.points.iter().filter_map(|p| p.ns)).filter(|v| *v > 0.0).collect();
    let _ = writeln!(
        out,
        r##"<rect x="{left}" y="{plot_top}" width="{}" height="{plot_height}" fill="#fafafa" stroke="#888"/>"##,
        right - left
    );
    if let Some(reason) = &panel.empty_reason {
        // The reason, wrapped to the box and centred in it.
        let lines = wrap(&format!("no figures: {reason}"), chars_in(right - left - 20.0));
        let first = (plot_top + plot_bottom) / 2.0 + 4.5 - LEGEND_LINE * (lines.len() as f64 - 1.0) / 2.0;
        for (i, line) in lines.iter().enumerate() {
            let _ = writeln!(
                out,
                r##"<text x="{}" y="{:.1}" text-anchor="middle" fill="#a00">{}</text>"##,
                (left + right) / 2.0,
                first + LEGEND_LINE * i as f64,
                escape(line)
            );
        }
        draw_legend(out, panel, legend_top);
        return;
    }
    // Panel::new found a positive figure, so sizes and values are not empty.

    // x: log2 of the size, a little margin on both ends.
    let (x_min, x_max) = ((sizes[0] as f64).log2() - 0.3, (*sizes.last().unwrap() as f64).log2() + 0.3);
    let x_of = |size: usize| left + ((size as f64).log2() - x_min) / (x_max - x_min) * (right - left);
    // y: log10 of ns, whole decades.
    let low = values.iter().copied().fold(f64::INFINITY, f64::min).log10().floor();
    let mut high = values.iter().copied().fold(0.0, f64::max).log10().ceil();
    if high <= low {
        high = low + 1.0;
    }
    let y_of = |ns: f64| plot_bottom - (ns.log10() - low) / (high - low) * plot_height;

    // Grid and y labels: decades, with light lines at 2x and 5x.
    let mut decade = low;
    while decade <= high {
        let ns = 10f64.powf(decade);
        let y = y_of(ns);
        let _ = writeln!(out, r##"<line x1="{left}" y1="{y:.1}" x2="{right}" y2="{y:.1}" stroke="#ccc"/>"##);
        let _ =
            writeln!(out, r#"<text x="{}" y="{:.1}" text-anchor="end">{}</text>"#, left - 8.0, y + 4.0, nanos_tick(ns));
        if decade < high {
            for minor in [2.0, 5.0] {
                let y = y_of(ns * minor);
                let _ = writeln!(out, r##"<line x1="{left}" y1="{y:.1}" x2="{right}" y2="{y:.1}" stroke="#eee"/>"##);
            }
        }
        decade += 1.0;
    }
    for &size in &sizes {
        let x = x_of(size);
        let _ =
            writeln!(out, r##"<line x1="{x:.1}" y1="{plot_top}" x2="{x:.1}" y2="{plot_bottom}" stroke="#e4e4e4"/>"##);
        let _ = writeln!(
            out,
            r#"<text x="{x:.1}" y="{}" text-anchor="middle">{}</text>"#,
            plot_bottom + 18.0,
            size_label(size)
        );
    }
    let _ = writeln!(
        out,
        r#"<text x="{}" y="{}" text-anchor="middle">allocation size (log scale)</text>"#,
        (left + right) / 2.0,
        plot_bottom + 40.0
    );
    let _ = writeln!(
        out,
        r#"<text transform="translate({},{}) rotate(-90)" text-anchor="middle">time per operation (log scale)</text>"#,
        left - 68.0,
        (plot_top + plot_bottom) / 2.0
    );

    // The lines: a gap where a point is missing.
    for s in list {
        let (colour, dash, width) = style(list, s);
        let mut path = String::new();
        let mut pen_down = false;
        for p in &s.points {
            match p.ns {
                Some(ns) if ns > 0.0 => {
                    let _ = write!(path, "{}{:.1},{:.1} ", if pen_down { "L" } else { "M" }, x_of(p.size), y_of(ns));
                    pen_down = true;
                }
                _ => pen_down = false,
            }
        }
        if !path.is_empty() {
            let _ = writeln!(
                out,
                r#"<path d="{}" fill="none" stroke="{colour}" stroke-width="{width}" stroke-dasharray="{dash}"/>"#,
                path.trim_end()
            );
        }
        for p in &s.points {
            if let Some(ns) = p.ns.filter(|v| *v > 0.0) {
                let _ = writeln!(
                    out,
                    r#"<circle cx="{:.1}" cy="{:.1}" r="3.5" fill="{}" stroke="{colour}" stroke-width="1.5"/>"#,
                    x_of(p.size),
                    y_of(ns),
                    if s.ours { colour } else { "white" }
                );
            }
        }
    }
    draw_legend(out, panel, legend_top);
}

/// Colour by operation, solid for ours and dashed for baselines.
fn style(list: &[&Series], s: &Series) -> (&'static str, &'static str, f64) {
    let mut groups: Vec<&str> = Vec::new();
    for other in list {
        if !groups.contains(&group_of(other)) {
            groups.push(group_of(other));
        }
    }
    let index = groups.iter().position(|g| *g == group_of(s)).unwrap_or(0);
    let colour = PALETTE[index % PALETTE.len()];
    if s.ours {
        (colour, "none", 2.5)
    } else {
        (colour, "7 5", 2.0)
    }
}

/// A reason short enough for a legend line: the UR code when it names one.
fn short_reason(note: &str) -> String {
    if let Some(code) =
        note.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).find(|w| w.starts_with("UR_RESULT_"))
    {
        return code.to_string();
    }
    if note.chars().count() > 60 {
        note.chars().take(57).collect::<String>() + "..."
    } else {
        note.to_string()
    }
}

fn draw_legend(out: &mut String, panel: &Panel, top: f64) {
    let list = &panel.list[..];
    let mut line_index = 0;
    for (s, lines) in list.iter().zip(&panel.legend) {
        let y = top + LEGEND_LINE * line_index as f64 + 10.0;
        let (colour, dash, width) = style(list, s);
        let x = PLOT_LEFT;
        let _ = writeln!(
            out,
            r#"<line x1="{x}" y1="{y}" x2="{}" y2="{y}" stroke="{colour}" stroke-width="{width}" stroke-dasharray="{dash}"/>"#,
            x + 36.0
        );
        let _ = writeln!(
            out,
            r#"<circle cx="{}" cy="{y}" r="3.5" fill="{}" stroke="{colour}" stroke-width="1.5"/>"#,
            x + 18.0,
            if s.ours { colour } else { "white" }
        );
        for (i, line) in lines.iter().enumerate() {
            let _ = writeln!(
                out,
                r#"<text x="{}" y="{}">{}</text>"#,
                x + LEGEND_TEXT_OFFSET,
                y + 4.5 + LEGEND_LINE * i as f64,
                escape(line)
            );
        }
        line_index += lines.len();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Point;

    #[test]
    fn draws_every_series_and_stays_well_formed() {
        let series = vec![
            Series {
                panel: "native_cpu:0".into(),
                name: "alloc+free: async (ours)".into(),
                ours: true,
                points: vec![
                    Point { size: 64, ns: Some(90.0) },
                    Point { size: 4096, ns: None },
                    Point { size: 1 << 20, ns: Some(120.0) },
                ],
                note: None,
            },
            Series {
                panel: "native_cpu:0".into(),
                name: "alloc+free: blocking <baseline> & co".into(),
                ours: false,
                points: vec![Point { size: 64, ns: Some(40.0) }, Point { size: 1 << 20, ns: Some(9000.0) }],
                note: None,
            },
            Series {
                panel: "sycl".into(),
                name: "nothing".into(),
                ours: true,
                points: vec![Point { size: 64, ns: None }],
                note: Some("unsupported".into()),
            },
        ];
        let text = svg(&series, "test");
        assert!(text.starts_with("<svg") && text.trim_end().ends_with("</svg>"));
        assert_eq!(text.matches("<path").count(), 2, "one line per series with figures");
        assert!(text.contains("&lt;baseline&gt; &amp; co"), "text is escaped");
        assert!(text.contains("no figures: unsupported"));
        assert_eq!(
            short_reason("unsupported: urX returned UR_RESULT_ERROR_UNSUPPORTED_FEATURE"),
            "UR_RESULT_ERROR_UNSUPPORTED_FEATURE"
        );
        assert!(text.contains("10 ns") && text.contains("10 µs"), "decade labels span the values");
        // Balanced elements: every opened tag is self-closed or closed.
        assert_eq!(text.matches("<text").count(), text.matches("</text>").count());
    }

    /// The estimated extent of every text of the chart: (left, right) in pixels.
    fn text_extents(svg: &str) -> Vec<(f64, f64, String)> {
        let mut out = Vec::new();
        for piece in svg.split("<text ").skip(1) {
            let (attributes, rest) = piece.split_once('>').unwrap();
            let content = rest.split_once("</text>").unwrap().0;
            let content = content.replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"");
            if attributes.contains("rotate(") {
                continue;
            }
            let x: f64 = attributes.split("x=\"").nth(1).unwrap().split('"').next().unwrap().parse().unwrap();
            let size = if attributes.contains("font-size=\"18\"") {
                18.0
            } else if attributes.contains("font-size=\"15\"") {
                15.0
            } else {
                13.0
            };
            let width = content.chars().count() as f64 * CHAR_WIDTH * size / 13.0;
            let (left, right) = if attributes.contains("text-anchor=\"middle\"") {
                (x - width / 2.0, x + width / 2.0)
            } else if attributes.contains("text-anchor=\"end\"") {
                (x - width, x)
            } else {
                (x, x + width)
            };
            out.push((left, right, content));
        }
        out
    }

    #[test]
    fn a_panel_without_figures_keeps_its_text_inside_the_chart() {
        let reason = "unavailable: Intel's libsycl is not installed \
                      (/a/rather/long/path/to/the/checkout/.deps/sycl/lib/libsycl.so.9 missing; scripts/install_sycl.sh)";
        let panel = "SYCL client (Intel libsycl.so.9), one iteration: allocate + memset + free";
        let series: Vec<Series> = [
            ("malloc_device+memset+wait+free on Intel's OpenCL adapter (baseline)", false),
            ("async_malloc+memset+async_free on our native_cpu adapter (ours)", true),
            ("async_malloc+memset+async_free on our opencl adapter, Intel CPU OpenCL (ours)", true),
        ]
        .into_iter()
        .map(|(name, ours)| Series {
            panel: panel.into(),
            name: name.into(),
            ours,
            points: vec![Point { size: 64, ns: None }, Point { size: 1024, ns: None }],
            note: Some(reason.into()),
        })
        .collect();
        let text = svg(&series, "test");
        for (left, right, content) in text_extents(&text) {
            assert!(left >= 0.0 && right <= WIDTH, "text runs off the chart ({left:.0}..{right:.0}): {content}");
        }
        assert!(text.contains("libsycl.so.9 missing"), "the reason is shown in full: {text}");
        assert_eq!(text.matches("[no figures: see above]").count(), 3, "the legend does not repeat the reason");
        // The chart is as tall as what it holds: the last text is inside it.
        let height: f64 = text.split("height=\"").nth(1).unwrap().split('"').next().unwrap().parse().unwrap();
        let last_y: f64 =
            text.rsplit("<text x=\"").next().unwrap().split("y=\"").nth(1).unwrap().split('"').next().unwrap().parse().unwrap();
        assert!(last_y < height, "the last line ({last_y}) is inside the chart ({height})");
    }

    #[test]
    fn long_legend_entries_wrap() {
        let long = "a series name that goes on and on ".repeat(8);
        let series = vec![Series {
            panel: "p".into(),
            name: long.clone(),
            ours: true,
            points: vec![Point { size: 64, ns: Some(100.0) }, Point { size: 128, ns: None }],
            note: Some("a note".into()),
        }];
        let text = svg(&series, "test");
        for (left, right, content) in text_extents(&text) {
            assert!(left >= 0.0 && right <= WIDTH, "text runs off the chart ({left:.0}..{right:.0}): {content}");
        }
        assert_eq!(wrap("abc defg hi", 8), vec!["abc defg", "hi"]);
        assert_eq!(wrap("abcdefghij", 4), vec!["abcd", "efgh", "ij"]);
        assert_eq!(wrap("", 4), vec![""]);
    }
}
