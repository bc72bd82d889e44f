//! A small self-contained SVG chart of a study: mean test regret against the total budget ε,
//! one line per method, log-scaled ε axis, legend and title.

use std::fmt::Write;

use super::StudyReport;

const W: f64 = 760.0;
const H: f64 = 460.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 210.0;
const TOP: f64 = 50.0;
const BOTTOM: f64 = 60.0;
const COLORS: [&str; 9] = [
    "#000000", "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
    "#7f7f7f",
];

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A "nice" step (1, 2 or 5 × 10^k) giving about `n` ticks over `span`.
fn nice_step(span: f64, n: f64) -> f64 {
    let raw = (span / n).max(f64::MIN_POSITIVE);
    let p = 10f64.powf(raw.log10().floor());
    let f = raw / p;
    p * if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    }
}

fn fmt_num(x: f64) -> String {
    if x == 0.0 {
        "0".into()
    } else if (1e-3..1e4).contains(&x.abs()) {
        let s = format!("{x:.4}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        format!("{x:.0e}")
    }
}

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
    let pw = W - LEFT - RIGHT;
    let ph = H - TOP - BOTTOM;
    let px = |e: f64| LEFT + (e.log10() - lx0) / (lx1 - lx0) * pw;
    let py = |v: f64| TOP + (y1 - v) / (y1 - y0) * ph;

    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="Helvetica, Arial, sans-serif" font-size="13">"#
    );
    let _ = writeln!(s, r#"<rect width="{W}" height="{H}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="28" text-anchor="middle" font-size="16" font-weight="bold">{}</text>"#,
        LEFT + pw / 2.0,
        esc(title)
    );
    // Grid and y ticks.
    let mut v = y0;
    while v <= y1 + step * 1e-6 {
        let y = py(v);
        let _ = writeln!(
            s,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#e0e0e0"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
            LEFT + pw,
            LEFT - 8.0,
            y + 4.0,
            fmt_num((v / step).round() * step)
        );
        v += step;
    }
    // x ticks: powers of ten (major) and every budget (labelled).
    let mut k = lx0.floor() as i32;
    while (k as f64) <= lx1.ceil() {
        let e = 10f64.powi(k);
        if e.log10() >= lx0 - 1e-9 && e.log10() <= lx1 + 1e-9 {
            let x = px(e);
            let _ = writeln!(
                s,
                r##"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{:.1}" stroke="#e0e0e0"/>"##,
                TOP + ph
            );
        }
        k += 1;
    }
    for &e in eps {
        let x = px(e);
        let _ = writeln!(
            s,
            r##"<line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="#000"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
            TOP + ph,
            TOP + ph + 5.0,
            TOP + ph + 20.0,
            fmt_num(e)
        );
    }
    let _ = writeln!(
        s,
        r##"<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="none" stroke="#000"/>"##
    );
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">total privacy budget ε (log scale)</text>"#,
        LEFT + pw / 2.0,
        H - 15.0
    );
    let _ = writeln!(
        s,
        r#"<text transform="translate(20,{:.1}) rotate(-90)" text-anchor="middle">mean test regret vs the non-private best</text>"#,
        TOP + ph / 2.0
    );
    // Lines, markers, whiskers, legend.
    for (j, method) in report.options.methods.iter().enumerate() {
        let color = COLORS[j % COLORS.len()];
        let cells = &report.cells[j * nb..(j + 1) * nb];
        let mut order: Vec<usize> = (0..nb).collect();
        order.sort_by(|&a, &b| eps[a].total_cmp(&eps[b]));
        let pts: Vec<String> = order
            .iter()
            .map(|&b| format!("{:.1},{:.1}", px(eps[b]), py(cells[b].mean)))
            .collect();
        let dash = if method.is_private() {
            ""
        } else {
            r#" stroke-dasharray="6,4""#
        };
        let _ = writeln!(
            s,
            r#"<polyline fill="none" stroke="{color}" stroke-width="2"{dash} points="{}"/>"#,
            pts.join(" ")
        );
        for c in cells {
            let (x, y) = (px(c.epsilon), py(c.mean));
            if c.se > 0.0 {
                let _ = writeln!(
                    s,
                    r#"<line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="{color}"/>"#,
                    py(c.mean + 2.0 * c.se),
                    py(c.mean - 2.0 * c.se)
                );
            }
            let _ = writeln!(
                s,
                r#"<circle cx="{x:.1}" cy="{y:.1}" r="3" fill="{color}"/>"#
            );
        }
        let ly = TOP + 10.0 + 20.0 * j as f64;
        let lx = LEFT + pw + 15.0;
        let _ = writeln!(
            s,
            r#"<line x1="{lx:.1}" y1="{ly:.1}" x2="{:.1}" y2="{ly:.1}" stroke="{color}" stroke-width="2"{dash}/><text x="{:.1}" y="{:.1}">{}</text>"#,
            lx + 24.0,
            lx + 30.0,
            ly + 4.0,
            esc(method.name())
        );
    }
    let note_y = TOP + 20.0 + 20.0 * report.options.methods.len() as f64;
    for (k, line) in [
        format!("m = {}, n = {}", report.configurations, report.model.n),
        format!("{} reps per sampled point", report.options.repetitions),
        "whiskers: ±2 standard errors".to_string(),
        "dashed: not private".to_string(),
    ]
    .iter()
    .enumerate()
    {
        let _ = writeln!(
            s,
            r##"<text x="{:.1}" y="{:.1}" font-size="11" fill="#555">{}</text>"##,
            LEFT + pw + 15.0,
            note_y + 15.0 * k as f64,
            esc(line)
        );
    }
    s.push_str("</svg>\n");
    s
}
