//! The GP inputs' scaling: raw inputs mapped to the units the lengthscales are stated in.
//!
//! The rule is DESIGN rule 6 (preprocessing uses public bounds): each column is mapped by the
//! public affine map x' = (x − mid)/(width/4) of its declared range, so the declared range
//! becomes [−2, 2], and an input outside its declared range is refused (the bounds are then not
//! bounds). Standardising each column by its own mean and s.d. is offered only because the
//! inputs are public in the cloaking threat model (DPGP.md §2: only the outputs are
//! protected); the note says so.

use nalgebra::DMatrix;

use crate::error::{Error, Result};
use crate::privacy::fmt_number;

/// How the inputs are scaled.
#[derive(Debug, Clone, PartialEq)]
pub enum InputScaling {
    /// Declared public bounds (low, high), one pair per input column.
    Declared(Vec<(f64, f64)>),
    /// Each column by its own mean and s.d. (sound only because the inputs are public).
    Standardise,
}

/// The public affine map of one input column: scaled = (raw − shift) / scale.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ColumnMap {
    /// Subtracted first.
    pub shift: f64,
    /// Then divided by (positive).
    pub scale: f64,
}

impl ColumnMap {
    /// The raw value of a scaled one (for plotting in the data's units).
    pub fn raw(&self, scaled: f64) -> f64 {
        scaled * self.scale + self.shift
    }
}

/// Scaled inputs, the map of each column, and a sentence saying how they were scaled.
#[derive(Debug, Clone, PartialEq)]
pub struct ScaledInputs {
    /// The inputs in lengthscale units.
    pub x: DMatrix<f64>,
    /// One map per column.
    pub maps: Vec<ColumnMap>,
    /// How the inputs were scaled, for the output (public: the rule and the declared bounds).
    pub note: String,
}

impl InputScaling {
    /// Scales `x` (columns named by `names`, used in errors and the note). Refused, naming
    /// `x_range`: a number of bounds other than one pair per column, bounds that are not
    /// finite with low < high, and an input outside its declared bounds.
    pub fn apply(&self, mut x: DMatrix<f64>, names: &[&str]) -> Result<ScaledInputs> {
        let (n, p) = x.shape();
        let (maps, note) = match self {
            InputScaling::Declared(pairs) => {
                if pairs.len() != p || names.len() != p {
                    return Err(Error::invalid(
                        "x_range",
                        format!("{} pairs", pairs.len()),
                        format!("needs one (low, high) pair per input column ({p} columns)"),
                    ));
                }
                let mut maps = Vec::with_capacity(p);
                for (j, &(lo, hi)) in pairs.iter().enumerate() {
                    let shown = format!("[{}, {}]", fmt_number(lo), fmt_number(hi));
                    if !(lo.is_finite() && hi.is_finite() && lo < hi) {
                        return Err(Error::invalid(
                            "x_range",
                            format!("{},{}", fmt_number(lo), fmt_number(hi)),
                            format!("for column {}: needs finite LO < HI", names[j]),
                        ));
                    }
                    if let Some(i) = (0..n).find(|&i| !(lo..=hi).contains(&x[(i, j)])) {
                        return Err(Error::invalid(
                            "x_range",
                            &shown,
                            format!(
                                "column {} has {} (data row {}) outside the declared public \
                                 range {shown}; declare bounds that hold for every input",
                                names[j],
                                fmt_number(x[(i, j)]),
                                i + 1,
                            ),
                        ));
                    }
                    maps.push(ColumnMap {
                        shift: 0.5 * (lo + hi),
                        scale: 0.25 * (hi - lo),
                    });
                }
                let ranges: Vec<String> = names
                    .iter()
                    .zip(pairs)
                    .map(|(c, (lo, hi))| {
                        format!("{c} in [{}, {}]", fmt_number(*lo), fmt_number(*hi))
                    })
                    .collect();
                let note = format!(
                    "inputs scaled by the declared public ranges ({}) to [-2, 2]",
                    ranges.join(", ")
                );
                (maps, note)
            }
            InputScaling::Standardise => {
                let maps = (0..p)
                    .map(|j| {
                        let col = x.column(j);
                        let mean = col.mean();
                        let sd =
                            (col.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n as f64).sqrt();
                        ColumnMap {
                            shift: mean,
                            scale: if sd > 0.0 { sd } else { 1.0 },
                        }
                    })
                    .collect();
                let note = "inputs standardised by their own mean and s.d. (--x-standardise): the \
                            inputs are treated as PUBLIC, as in the cloaking threat model; only \
                            the outputs are protected"
                    .to_string();
                (maps, note)
            }
        };
        for (j, m) in maps.iter().enumerate() {
            x.column_mut(j).apply(|v| *v = (*v - m.shift) / m.scale);
        }
        Ok(ScaledInputs { x, maps, note })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn x() -> DMatrix<f64> {
        DMatrix::from_row_slice(3, 2, &[0.0, 10.0, 3.0, 20.0, 6.0, 30.0])
    }

    #[test]
    fn declared_ranges_map_to_minus_two_two() {
        let s = InputScaling::Declared(vec![(0.0, 6.0), (10.0, 30.0)])
            .apply(x(), &["a", "b"])
            .unwrap();
        assert_eq!(s.x.column(0).as_slice(), [-2.0, 0.0, 2.0]);
        assert_eq!(s.x.column(1).as_slice(), [-2.0, 0.0, 2.0]);
        assert_eq!(
            s.maps[0],
            ColumnMap {
                shift: 3.0,
                scale: 1.5
            }
        );
        assert_eq!(s.maps[1].raw(2.0), 30.0);
        assert!(
            s.note.contains("(a in [0, 6], b in [10, 30]) to [-2, 2]"),
            "{}",
            s.note
        );
    }

    #[test]
    fn standardising_uses_the_columns_own_mean_and_sd() {
        let s = InputScaling::Standardise.apply(x(), &["a", "b"]).unwrap();
        let sd = 6f64.sqrt(); // population s.d. of 0, 3, 6
        assert_eq!(
            s.maps[0],
            ColumnMap {
                shift: 3.0,
                scale: sd
            }
        );
        assert!((s.x[(2, 0)] - 3.0 / sd).abs() < 1e-15);
        assert!(s.note.contains("PUBLIC"));
        let constant = DMatrix::from_element(2, 1, 4.0);
        let s = InputScaling::Standardise.apply(constant, &["c"]).unwrap();
        assert_eq!(s.maps[0].scale, 1.0);
    }

    #[test]
    fn bad_bounds_are_refused_naming_x_range() {
        let refused = |pairs: Vec<(f64, f64)>, needle: &str| {
            let e = InputScaling::Declared(pairs)
                .apply(x(), &["a", "b"])
                .unwrap_err();
            assert!(
                matches!(&e, Error::InvalidParameter { name: "x_range", reason, .. } if reason.contains(needle)),
                "{e}"
            );
        };
        refused(vec![(0.0, 6.0)], "one (low, high) pair per input column");
        refused(vec![(5.0, 1.0), (10.0, 30.0)], "LO < HI");
        refused(vec![(0.0, f64::INFINITY), (10.0, 30.0)], "LO < HI");
        refused(
            vec![(0.0, 6.0), (10.0, 25.0)],
            "b has 30 (data row 3) outside",
        );
    }
}
