//! The plot of a GP release (`dptune gp --plot`): the private predictions with ±2 noise s.d.
//! (the release; the axes come from the public inputs and the declared output range) and, only
//! when the caller asks for NOT PRIVATE diagnostics, the training and test points and the
//! non-private mean under a NOT PRIVATE title. Drawn with the library's one SVG writer.

use nalgebra::DMatrix;

use super::cloaking::DpPredictions;
use super::regression::OutputRange;
use super::scaling::ColumnMap;
use crate::svg::{Anchor, Svg};

/// What a GP plot shows by default: public inputs, the declared range and the release.
#[derive(Debug, Clone, Copy)]
pub struct GpPlot<'a> {
    /// The first input column's name (x axis).
    pub x_label: &'a str,
    /// The output's name (y axis).
    pub y_label: &'a str,
    /// The first input column's map from raw to scaled units (the axis shows raw units).
    pub map: ColumnMap,
    /// The declared public output range (the y axis).
    pub range: OutputRange,
    /// The (public) training inputs, scaled.
    pub x_train: &'a DMatrix<f64>,
    /// The (public) held-out inputs, scaled.
    pub x_test: &'a DMatrix<f64>,
    /// The prediction points: the held-out inputs, then (1-D inputs) a grid to draw the curve.
    pub x_star: &'a DMatrix<f64>,
    /// The release at `x_star`.
    pub predictions: &'a DpPredictions,
}

/// What the plot adds on request, all NOT PRIVATE: the private outputs and the non-private
/// posterior mean at the prediction points (empty to leave it out).
#[derive(Debug, Clone, Copy)]
pub struct NotPrivate<'a> {
    /// The title saying so.
    pub title: &'a str,
    /// The training outputs.
    pub y_train: &'a [f64],
    /// The held-out outputs.
    pub y_test: &'a [f64],
    /// The non-private mean at the prediction points.
    pub mean: &'a [f64],
}

const PREDICTED: &str = "#d95f02";
const NON_PRIVATE_MEAN: &str = "#7570b3";

impl GpPlot<'_> {
    /// The SVG document; `diagnostics` adds the NOT PRIVATE layer.
    pub fn svg(&self, diagnostics: Option<NotPrivate<'_>>) -> String {
        let (w, h, m) = (760.0, 480.0, 60.0);
        let raw = |v: f64| self.map.raw(v);
        let (x0, x1) = [self.x_train, self.x_test]
            .iter()
            .flat_map(|x| x.column(0).iter().map(|v| raw(*v)).collect::<Vec<_>>())
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                (a.min(v), b.max(v))
            });
        let (y0, y1) = (self.range.lo(), self.range.hi());
        let px = |x: f64| m + (x - x0) / (x1 - x0).max(1e-12) * (w - 2.0 * m);
        let py = |y: f64| h - m - (y.clamp(y0, y1) - y0) / (y1 - y0) * (h - 2.0 * m);
        let mut s = Svg::new(w, h, "sans-serif", 12.0);
        let (bottom, right) = (h - m, w - m);
        s.line((m, bottom), (right, bottom), "black", "");
        s.line((m, m), (m, bottom), "black", "");
        s.text((w / 2.0, bottom + 30.0), Anchor::Middle, self.x_label, "");
        s.vertical_text((15.0, h / 2.0), self.y_label);
        s.text((m, bottom + 30.0), Anchor::Start, &format!("{x0:.1}"), "");
        s.text((right, bottom + 30.0), Anchor::End, &format!("{x1:.1}"), "");
        s.text((m - 5.0, bottom), Anchor::End, &y0.to_string(), "");
        s.text((m - 5.0, m + 4.0), Anchor::End, &y1.to_string(), "");
        let none = NotPrivate {
            title: "",
            y_train: &[],
            y_test: &[],
            mean: &[],
        };
        let shown = diagnostics.unwrap_or(none);
        if let Some(d) = &diagnostics {
            s.text((w / 2.0, 20.0), Anchor::Middle, d.title, r##"fill="#b00""##);
        }
        for (x, y) in self.x_train.column(0).iter().zip(shown.y_train) {
            s.circle((px(raw(*x)), py(*y)), 2.0, r##"fill="#999""##);
        }
        for (x, y) in self.x_test.column(0).iter().zip(shown.y_test) {
            s.circle(
                (px(raw(*x)), py(*y)),
                2.5,
                r##"fill="none" stroke="#1b9e77""##,
            );
        }
        let pred = self.predictions;
        let nt = self.x_test.nrows();
        let grid: Vec<usize> = (nt..self.x_star.nrows()).collect();
        let at = |i: usize| px(raw(self.x_star[(i, 0)]));
        if grid.is_empty() {
            // Multi-dimensional inputs: private and non-private predictions at the test points.
            for i in 0..nt {
                let fill = |c: &str| format!(r#"fill="{c}""#);
                s.circle((at(i), py(pred.values[i])), 3.0, &fill(PREDICTED));
                if let Some(v) = shown.mean.get(i) {
                    s.circle((at(i), py(*v)), 3.0, &fill(NON_PRIVATE_MEAN));
                }
            }
        } else {
            let curve = |f: &dyn Fn(usize) -> f64| -> Vec<(f64, f64)> {
                grid.iter().map(|&i| (at(i), py(f(i)))).collect()
            };
            let band = r#"stroke-dasharray="4 3" stroke-width="1""#;
            let upper = curve(&|i| pred.values[i] + 2.0 * pred.noise_sd[i]);
            let lower = curve(&|i| pred.values[i] - 2.0 * pred.noise_sd[i]);
            s.polyline(&upper, PREDICTED, band);
            s.polyline(&lower, PREDICTED, band);
            let solid = r#"stroke-width="2""#;
            s.polyline(&curve(&|i| pred.values[i]), PREDICTED, solid);
            if !shown.mean.is_empty() {
                s.polyline(&curve(&|i| shown.mean[i]), NON_PRIVATE_MEAN, solid);
            }
        }
        let mut legend = vec![(PREDICTED, "private cloaked predictions (± 2 noise s.d.)")];
        if diagnostics.is_some() {
            legend.extend([
                ("#999", "training data (NOT PRIVATE)"),
                ("#1b9e77", "held-out test data (NOT PRIVATE)"),
                (NON_PRIVATE_MEAN, "non-private GP mean (NOT PRIVATE)"),
            ]);
        }
        for (k, (c, t)) in legend.iter().enumerate() {
            let y = m + 14.0 * k as f64;
            s.rect(
                (right - 260.0, y - 9.0),
                (10.0, 10.0),
                &format!(r#"fill="{c}""#),
            );
            s.text((right - 245.0, y), Anchor::Start, t, "");
        }
        s.finish()
    }
}
