//! The SVG of `dptune account profile --plot`: δ(ε) on a log scale, by privacy loss
//! distribution (solid) and by the closed-form route, RDP/zCDP/pure (dashed).

use std::fmt::Write;

const W: f64 = 640.0;
const H: f64 = 400.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 30.0;
const BOTTOM: f64 = 50.0;

/// `rows` are (ε, δ by PLD, δ by the closed-form route if any), ε increasing.
pub fn svg(rows: &[(f64, f64, Option<f64>)]) -> String {
    let positive = rows
        .iter()
        .flat_map(|r| [Some(r.1), r.2])
        .flatten()
        .filter(|d| *d > 0.0);
    let lo_d = positive.clone().fold(1.0f64, f64::min).max(1e-300);
    let y_lo = lo_d.log10().floor().min(-1.0);
    let (x_lo, x_hi) = (rows[0].0, rows[rows.len() - 1].0);
    let x = |e: f64| LEFT + (e - x_lo) / (x_hi - x_lo) * (W - LEFT - RIGHT);
    let y = |d: f64| {
        let l = d.max(10f64.powf(y_lo)).log10();
        TOP + (0.0 - l) / (0.0 - y_lo) * (H - TOP - BOTTOM)
    };
    let mut s = String::new();
    let _ = writeln!(
        s,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">
<rect width="100%" height="100%" fill="white"/>
<text x="{}" y="18" text-anchor="middle">Privacy profile: delta(epsilon)</text>"##,
        W / 2.0
    );
    // Axes, decades on y, five ticks on x.
    let _ = writeln!(
        s,
        r##"<path d="M{LEFT},{TOP} V{} H{}" stroke="black" fill="none"/>"##,
        H - BOTTOM,
        W - RIGHT
    );
    let step = ((-y_lo) / 8.0).ceil().max(1.0) as i64;
    let mut k = 0i64;
    while (k as f64) >= y_lo {
        let yy = y(10f64.powi(k as i32));
        let _ = writeln!(
            s,
            r##"<line x1="{}" x2="{LEFT}" y1="{yy}" y2="{yy}" stroke="black"/><text x="{}" y="{}" text-anchor="end">1e{k}</text>"##,
            LEFT - 5.0,
            LEFT - 8.0,
            yy + 4.0
        );
        k -= step;
    }
    for i in 0..=4 {
        let e = x_lo + (x_hi - x_lo) * i as f64 / 4.0;
        let xx = x(e);
        let _ = writeln!(
            s,
            r##"<line x1="{xx}" x2="{xx}" y1="{}" y2="{}" stroke="black"/><text x="{xx}" y="{}" text-anchor="middle">{e:.3}</text>"##,
            H - BOTTOM,
            H - BOTTOM + 5.0,
            H - BOTTOM + 20.0
        );
    }
    let _ = writeln!(
        s,
        r##"<text x="{}" y="{}" text-anchor="middle">epsilon</text><text x="16" y="{}" transform="rotate(-90 16 {})" text-anchor="middle">delta (log scale)</text>"##,
        (LEFT + W - RIGHT) / 2.0,
        H - 10.0,
        H / 2.0,
        H / 2.0
    );
    let line = |points: Vec<(f64, f64)>, style: &str| -> String {
        let d: Vec<String> = points
            .iter()
            .map(|(e, d)| format!("{:.2},{:.2}", x(*e), y(*d)))
            .collect();
        format!(
            r##"<polyline points="{}" fill="none" {style}/>"##,
            d.join(" ")
        )
    };
    let _ = writeln!(
        s,
        "{}",
        line(
            rows.iter().map(|r| (r.0, r.1)).collect(),
            r##"stroke="#1f77b4" stroke-width="2""##
        )
    );
    let closed: Vec<(f64, f64)> = rows.iter().filter_map(|r| r.2.map(|c| (r.0, c))).collect();
    if !closed.is_empty() {
        let _ = writeln!(
            s,
            "{}",
            line(
                closed,
                r##"stroke="#d62728" stroke-width="2" stroke-dasharray="6 4""##
            )
        );
    }
    let lx = W - RIGHT - 190.0;
    let _ = writeln!(
        s,
        r##"<line x1="{lx}" x2="{}" y1="{}" y2="{}" stroke="#1f77b4" stroke-width="2"/><text x="{}" y="{}">privacy loss distribution</text>
<line x1="{lx}" x2="{}" y1="{}" y2="{}" stroke="#d62728" stroke-width="2" stroke-dasharray="6 4"/><text x="{}" y="{}">RDP / zCDP / pure</text>"##,
        lx + 25.0,
        TOP + 10.0,
        TOP + 10.0,
        lx + 30.0,
        TOP + 14.0,
        lx + 25.0,
        TOP + 28.0,
        TOP + 28.0,
        lx + 30.0,
        TOP + 32.0
    );
    s.push_str("</svg>\n");
    s
}
