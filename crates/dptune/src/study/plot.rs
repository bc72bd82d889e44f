//! A small self-contained SVG chart of a study: mean test regret against the total budget ε,
//! one line per method, log-scaled ε axis, legend and title.

use super::StudyReport;
use crate::svg::{nice_step, tick, Anchor, Frame, Svg};

const FRAME: Frame = Frame {
    width: 760.0,
    height: 460.0,
    left: 80.0,
    right: 210.0,
    top: 50.0,
    bottom: 60.0,
};
const COLORS: [&str; 9] = [
    "#000000", "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
    "#7f7f7f",
];

/// The SVG document for `report`, titled `title`. The y axis is the mean regret in table units
/// (dashed bands: ± 2 standard errors for sampled cells are drawn as vertical whiskers).
pub fn svg(report: &StudyReport, title: &str) -> String {
    let eps = &report.options.epsilons;
    let nb = eps.len();
    let (lx0, lx1) = {
        let lo = eps.iter().copied().fold(f64::INFINITY, f64::min).log10();
        let hi = eps
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max)
            .log10();
        if hi > lo {
            (lo, hi)
        } else {
            (lo - 0.5, hi + 0.5)
        }
    };
    let ymax_data = report
        .cells
        .iter()
        .map(|c| c.mean + 2.0 * c.se)
        .fold(0.0f64, f64::max);
    let ymin_data = report
        .cells
        .iter()
        .map(|c| c.mean - 2.0 * c.se)
        .fold(0.0f64, f64::min);
    let step = nice_step((ymax_data - ymin_data).max(1e-12), 8.0);
    let y0 = (ymin_data / step).floor() * step;
    let y1 = ((ymax_data / step).ceil() * step).max(y0 + step);
    let (w, h, left, top) = (FRAME.width, FRAME.height, FRAME.left, FRAME.top);
    let (pw, ph) = (FRAME.inner_width(), FRAME.inner_height());
    let px = |e: f64| left + (e.log10() - lx0) / (lx1 - lx0) * pw;
    let py = |v: f64| top + (y1 - v) / (y1 - y0) * ph;

    let mut s = Svg::new(w, h, "Helvetica, Arial, sans-serif", 13.0);
    s.text(
        (left + pw / 2.0, 28.0),
        Anchor::Middle,
        title,
        r#"font-size="16" font-weight="bold""#,
    );
    // Grid and y ticks.
    let mut v = y0;
    while v <= y1 + step * 1e-6 {
        let y = py(v);
        s.line((left, y), (left + pw, y), "#e0e0e0", "");
        s.text(
            (left - 8.0, y + 4.0),
            Anchor::End,
            &tick((v / step).round() * step),
            "",
        );
        v += step;
    }
    // x ticks: powers of ten (major) and every budget (labelled).
    let mut k = lx0.floor() as i32;
    while (k as f64) <= lx1.ceil() {
        let e = 10f64.powi(k);
        if e.log10() >= lx0 - 1e-9 && e.log10() <= lx1 + 1e-9 {
            s.line((px(e), top), (px(e), top + ph), "#e0e0e0", "");
        }
        k += 1;
    }
    for &e in eps {
        let x = px(e);
        s.line((x, top + ph), (x, top + ph + 5.0), "#000", "");
        s.text((x, top + ph + 20.0), Anchor::Middle, &tick(e), "");
    }
    s.rect((left, top), (pw, ph), r##"fill="none" stroke="#000""##);
    s.text(
        (left + pw / 2.0, h - 15.0),
        Anchor::Middle,
        "total privacy budget ε (log scale)",
        "",
    );
    s.vertical_text(
        (20.0, top + ph / 2.0),
        "mean test regret vs the non-private best",
    );
    // Lines, markers, whiskers, legend.
    for (j, method) in report.options.methods.iter().enumerate() {
        let color = COLORS[j % COLORS.len()];
        let cells = &report.cells[j * nb..(j + 1) * nb];
        let mut order: Vec<usize> = (0..nb).collect();
        order.sort_by(|&a, &b| eps[a].total_cmp(&eps[b]));
        let pts: Vec<(f64, f64)> = order
            .iter()
            .map(|&b| (px(eps[b]), py(cells[b].mean)))
            .collect();
        let style = if method.is_private() {
            r#"stroke-width="2""#
        } else {
            r#"stroke-width="2" stroke-dasharray="6,4""#
        };
        s.polyline(&pts, color, style);
        for c in cells {
            let (x, y) = (px(c.epsilon), py(c.mean));
            if c.se > 0.0 {
                let (top, bottom) = (py(c.mean + 2.0 * c.se), py(c.mean - 2.0 * c.se));
                s.line((x, top), (x, bottom), color, "");
            }
            s.circle((x, y), 3.0, &format!(r#"fill="{color}""#));
        }
        let ly = top + 10.0 + 20.0 * j as f64;
        let lx = left + pw + 15.0;
        s.line((lx, ly), (lx + 24.0, ly), color, style);
        s.text((lx + 30.0, ly + 4.0), Anchor::Start, method.name(), "");
    }
    let note_y = top + 20.0 + 20.0 * report.options.methods.len() as f64;
    for (k, line) in [
        format!("m = {}, n = {}", report.configurations, report.model.n),
        format!("{} reps per sampled point", report.options.repetitions),
        "whiskers: ±2 standard errors".to_string(),
        "dashed: not private".to_string(),
    ]
    .iter()
    .enumerate()
    {
        s.text(
            (left + pw + 15.0, note_y + 15.0 * k as f64),
            Anchor::Start,
            line,
            r##"font-size="11" fill="#555""##,
        );
    }
    s.finish()
}
