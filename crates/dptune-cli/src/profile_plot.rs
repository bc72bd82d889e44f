//! The SVG of `dptune account profile --plot`: δ(ε) on a log scale, by privacy loss
//! distribution (solid) and by the closed-form route, RDP/zCDP/pure (dashed). Drawn with the
//! library's one SVG writer (`dptune::svg`).

use dptune::svg::{Anchor, Frame, Svg};

const FRAME: Frame = Frame {
    width: 640.0,
    height: 400.0,
    left: 70.0,
    right: 20.0,
    top: 30.0,
    bottom: 50.0,
};

/// `rows` are (ε, δ by PLD, δ by the closed-form route if any), ε increasing.
pub fn svg(rows: &[(f64, f64, Option<f64>)]) -> String {
    let (w, h) = (FRAME.width, FRAME.height);
    let (left, top, right, bottom) = (FRAME.left, FRAME.top, w - FRAME.right, h - FRAME.bottom);
    let positive = rows
        .iter()
        .flat_map(|r| [Some(r.1), r.2])
        .flatten()
        .filter(|d| *d > 0.0);
    let lo_d = positive.clone().fold(1.0f64, f64::min).max(1e-300);
    let y_lo = lo_d.log10().floor().min(-1.0);
    let (x_lo, x_hi) = (rows[0].0, rows[rows.len() - 1].0);
    let x = |e: f64| left + (e - x_lo) / (x_hi - x_lo) * FRAME.inner_width();
    let y = |d: f64| {
        let l = d.max(10f64.powf(y_lo)).log10();
        top + (0.0 - l) / (0.0 - y_lo) * FRAME.inner_height()
    };
    let mut s = Svg::new(w, h, "sans-serif", 12.0);
    s.text(
        (w / 2.0, 18.0),
        Anchor::Middle,
        "Privacy profile: delta(epsilon)",
        "",
    );
    // Axes, decades on y, five ticks on x.
    s.polyline(&[(left, top), (left, bottom), (right, bottom)], "black", "");
    let step = ((-y_lo) / 8.0).ceil().max(1.0) as i64;
    let mut k = 0i64;
    while (k as f64) >= y_lo {
        let yy = y(10f64.powi(k as i32));
        s.line((left - 5.0, yy), (left, yy), "black", "");
        s.text((left - 8.0, yy + 4.0), Anchor::End, &format!("1e{k}"), "");
        k -= step;
    }
    for i in 0..=4 {
        let e = x_lo + (x_hi - x_lo) * i as f64 / 4.0;
        let xx = x(e);
        s.line((xx, bottom), (xx, bottom + 5.0), "black", "");
        s.text((xx, bottom + 20.0), Anchor::Middle, &format!("{e:.3}"), "");
    }
    s.text(
        ((left + right) / 2.0, h - 10.0),
        Anchor::Middle,
        "epsilon",
        "",
    );
    s.vertical_text((16.0, h / 2.0), "delta (log scale)");
    let (pld, closed) = ("#1f77b4", "#d62728");
    let dashed = r#"stroke-width="2" stroke-dasharray="6 4""#;
    let points = |d: Vec<(f64, Option<f64>)>| -> Vec<(f64, f64)> {
        d.into_iter()
            .filter_map(|(e, d)| d.map(|d| (x(e), y(d))))
            .collect()
    };
    let by_pld = points(rows.iter().map(|r| (r.0, Some(r.1))).collect());
    s.polyline(&by_pld, pld, r#"stroke-width="2""#);
    let closed_points = points(rows.iter().map(|r| (r.0, r.2)).collect());
    if !closed_points.is_empty() {
        s.polyline(&closed_points, closed, dashed);
    }
    let lx = right - 190.0;
    s.line(
        (lx, top + 10.0),
        (lx + 25.0, top + 10.0),
        pld,
        r#"stroke-width="2""#,
    );
    s.text(
        (lx + 30.0, top + 14.0),
        Anchor::Start,
        "privacy loss distribution",
        "",
    );
    s.line((lx, top + 28.0), (lx + 25.0, top + 28.0), closed, dashed);
    s.text(
        (lx + 30.0, top + 32.0),
        Anchor::Start,
        "RDP / zCDP / pure",
        "",
    );
    s.finish()
}
