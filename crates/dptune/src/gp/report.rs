//! The report of `dptune gp`: one serialisable type, built from the private release and the
//! public facts of the run, which the CLI renders (text or `--json`).
//!
//! Threat model (DPGP.md §2): inputs public, outputs private, replace-one neighbours, so the
//! number of rows and everything computed from the inputs alone are public. Each field is
//! labelled in its doc comment (DESIGN.md, `Report`): **public input** (a flag, the inputs, the
//! declared range, the data-independent split and folds, or computed from those), **charged
//! release** (the selected ℓ under ε_select, the cloaked predictions under (ε_predict, δ), and
//! functions of them and public inputs), or **NOT PRIVATE diagnostic** (computed from the
//! private outputs and not charged; only on request, inside an object labelled
//! `"not_private": true`). Nothing is timed.

use serde::Serialize;

use super::regression::OutputRange;
use super::select::{PrivateGp, SelectionConfig, Utility};
use crate::error::Result;
use crate::privacy::{Guarantee, Neighbours, Release};

/// The label every diagnostic carries, in text and JSON.
pub const NOT_PRIVATE: &str =
    "NOT PRIVATE: computed from the private outputs and not covered by the guarantee";

/// What `dptune gp` prints.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GpReport {
    /// Charged release (`privacy.eps_select`): the lengthscale the exponential mechanism chose.
    pub lengthscale: f64,
    /// Public, computed: the guarantee (from the flags only).
    pub privacy: GpPrivacy,
    /// The selection.
    pub selection: GpSelection,
    /// The cloaked predictions at the held-out inputs.
    pub predictions: GpPredictions,
    /// Public input: where the data came from.
    pub data: GpDataReport,
    /// Public input: whether the run was seeded (reproducible, NOT private against anyone who
    /// knows the seed).
    pub seeded: bool,
    /// Public input: the file the release is drawn to (`--plot`), null without one.
    pub plot: Option<String>,
    /// NOT PRIVATE diagnostic (`--diagnostics` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diagnostics: Option<GpDiagnostics>,
}

/// The guarantee of `dptune gp`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GpPrivacy {
    /// Public, computed: ε of the whole release at `delta`.
    pub epsilon: f64,
    /// Public input: δ of the predictions.
    pub delta: f64,
    /// Public input: ε of the selection.
    pub eps_select: f64,
    /// Public input: ε of the predictions.
    pub eps_predict: f64,
    /// Public input: the relation (replace-one: one output changed).
    pub neighbours: Neighbours,
    /// Public, computed: what the release spent.
    pub guarantee: Guarantee,
}

/// The lengthscale selection.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GpSelection {
    /// Charged release (`privacy.eps_select`): the index of `lengthscale` in `grid`.
    pub index: usize,
    /// Public input: the lengthscale grid.
    pub grid: Vec<f64>,
    /// Public input: the selection score.
    pub utility: Utility,
    /// Public, computed: Δu, from the inputs and the folds.
    pub sensitivity: f64,
    /// Public input: the number of folds.
    pub folds: usize,
}

/// The cloaked predictions at the held-out inputs (the plotting grid's are drawn, not listed).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GpPredictions {
    /// Charged release (`privacy.eps_predict`): the cloaked predictions.
    pub values: Vec<f64>,
    /// Charged release (post-processing of the selected ℓ with the public inputs): the noise
    /// s.d. at each test input.
    pub noise_sd: Vec<f64>,
    /// Public input: the held-out rows (the data-independent random split).
    pub test_rows: Vec<usize>,
    /// Public input: the number of test rows (N is public under replace-one).
    pub n_test: usize,
    /// Public input: the number of plotting-grid points released beside them.
    pub n_plot_grid: usize,
    /// Charged release (post-processing of ℓ with the inputs, ε and δ): the Gaussian multiplier.
    pub sigma: f64,
    /// Charged release (idem): the paper's c(δ) multiplier, for comparison (null for ε > 1).
    pub classic_sigma_c_delta: Option<f64>,
    /// Charged release (idem): the L2 sensitivity of the whitened predictions.
    pub sensitivity: f64,
    /// Charged release (idem): the sensitivity the noise was calibrated for (rounding charged).
    pub charged_sensitivity: f64,
    /// Charged release (idem): the spacing of the noise grid.
    pub granularity: f64,
    /// Charged release (idem): the mean of `noise_sd`.
    pub mean_noise_sd_at_test: f64,
}

/// Where the data came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GpDataReport {
    /// Public input: the file (or the bundled demo).
    pub source: String,
    /// Public input: the number of training rows.
    pub n_train: usize,
    /// Public input: the number of test rows.
    pub n_test: usize,
    /// Public input: the declared output range [lo, hi].
    pub y_range: [f64; 2],
    /// Public input: how the inputs were scaled (from the inputs only).
    pub input_scaling: String,
}

impl GpDataReport {
    /// The data report: `source`, the sizes of the split, the declared `range` and the note
    /// on input scaling.
    pub fn new(
        source: &str,
        n_train: usize,
        n_test: usize,
        range: OutputRange,
        input_scaling: &str,
    ) -> Self {
        Self {
            source: source.to_string(),
            n_train,
            n_test,
            y_range: [range.lo(), range.hi()],
            input_scaling: input_scaling.to_string(),
        }
    }
}

/// NOT PRIVATE diagnostics of `dptune gp`: computed from the private outputs, no guarantee.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GpDiagnostics {
    /// Public: always true, the label of this object.
    pub not_private: bool,
    /// Public: [`NOT_PRIVATE`].
    pub label: &'static str,
    /// NOT PRIVATE diagnostic: the RMSE of the predictions on the held-out outputs.
    pub test_rmse: f64,
    /// NOT PRIVATE diagnostic: how many training outputs lay outside the declared range.
    pub clipped_training_outputs: usize,
}

impl GpDiagnostics {
    /// The diagnostics of the predictions `predicted` against the held-out outputs `y_test`
    /// (one each, at least one), with `clipped` training outputs clipped.
    pub fn new(predicted: &[f64], y_test: &[f64], clipped: usize) -> Self {
        let n = y_test.len() as f64;
        let test_rmse = (predicted
            .iter()
            .zip(y_test)
            .map(|(p, y)| (p - y).powi(2))
            .sum::<f64>()
            / n)
            .sqrt();
        Self {
            not_private: true,
            label: NOT_PRIVATE,
            test_rmse,
            clipped_training_outputs: clipped,
        }
    }
}

impl GpReport {
    /// The report of `release` (selection under `cfg`, then predictions at the `test_rows`
    /// followed by the plotting grid's points), with the public `data`, whether the run was
    /// `seeded`, the `plot` file, and the NOT PRIVATE `diagnostics` if asked for.
    pub fn new(
        release: &Release<PrivateGp>,
        cfg: &SelectionConfig,
        test_rows: Vec<usize>,
        data: GpDataReport,
        seeded: bool,
        plot: Option<String>,
        diagnostics: Option<GpDiagnostics>,
    ) -> Result<Self> {
        let sel = &release.value.selection;
        let pred = &release.value.predictions;
        let nt = test_rows.len();
        let noise_sd = pred.noise_sd[..nt].to_vec();
        Ok(Self {
            lengthscale: sel.lengthscale,
            privacy: GpPrivacy {
                epsilon: release.spent.epsilon(cfg.delta)?,
                delta: cfg.delta,
                eps_select: cfg.eps_select,
                eps_predict: cfg.eps_predict,
                neighbours: release.spent.neighbours(),
                guarantee: release.spent.clone(),
            },
            selection: GpSelection {
                index: sel.index,
                grid: cfg.grid.clone(),
                utility: sel.utility,
                sensitivity: sel.sensitivity,
                folds: cfg.folds,
            },
            predictions: GpPredictions {
                values: pred.values[..nt].to_vec(),
                mean_noise_sd_at_test: noise_sd.iter().sum::<f64>() / nt as f64,
                noise_sd,
                test_rows,
                n_test: nt,
                n_plot_grid: pred.values.len() - nt,
                sigma: pred.sigma,
                classic_sigma_c_delta: pred.classic_sigma,
                sensitivity: pred.sensitivity,
                charged_sensitivity: pred.charged_sensitivity,
                granularity: pred.granularity,
            },
            data,
            seeded,
            plot,
            diagnostics,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diagnostics_are_labelled_and_their_rmse_is_the_root_mean_square() {
        let d = GpDiagnostics::new(&[1.0, 2.0], &[4.0, -2.0], 3);
        assert_eq!(d.test_rmse, (12.5f64).sqrt());
        let v = serde_json::to_value(&d).unwrap();
        assert_eq!(v["not_private"], true);
        assert_eq!(v["label"], NOT_PRIVATE);
        assert_eq!(v["clipped_training_outputs"], 3);
    }
}
