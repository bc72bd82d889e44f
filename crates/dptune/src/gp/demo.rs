//! The bundled demo: scikit-learn's diabetes data (BSD-3; provenance in
//! `crates/dptune/data/PROVENANCE.md`), BMI → disease progression, with every constant public
//! and stated, plus the **non-private** evaluation helpers used by the docs and tests.

use nalgebra::DMatrix;

use super::cloaking::{CloakingCovariance, MveeConfig};
use super::data::read_gp_data;
use super::regression::{GpRegression, Kernel, OutputRange};
use super::scaling::ColumnMap;
use super::select::{SelectionConfig, Utility};
use crate::data::CsvReader;
use crate::error::{Error, Result};
use crate::noise::SecureRng;
use crate::privacy::gaussian::gaussian_sigma;

const DIABETES_CSV: &str = include_str!("../../data/diabetes.csv");
const DIABETES_SOURCE: &str = "bundled diabetes.csv";

/// Public BMI centre (WHO obesity threshold, kg/m²).
pub const BMI_CENTRE: f64 = 30.0;
/// Public BMI scale (width of one WHO BMI class, kg/m²).
pub const BMI_SCALE: f64 = 5.0;
/// The public map of BMI to the demo's input units: x = (BMI − 30)/5.
pub const BMI_MAP: ColumnMap = ColumnMap {
    shift: BMI_CENTRE,
    scale: BMI_SCALE,
};
/// Where the demo data come from, as the output states it.
pub const SOURCE: &str = "bundled diabetes (scikit-learn 1.5.2, BSD-3): BMI -> disease progression";
/// The demo's input and output names (plot axes).
pub const LABELS: (&str, &str) = ("BMI (kg/m²)", "disease progression");

/// How the demo's input is scaled, as the output states it.
pub fn scaling_note() -> String {
    format!("x = (BMI - {BMI_CENTRE})/{BMI_SCALE} (public constants)")
}

/// Declared public output range for disease progression (DPGP.md §11.2).
pub const Y_RANGE: (f64, f64) = (20.0, 350.0);
/// σ_f² = 80².
pub const SIGNAL_VAR: f64 = 6400.0;
/// σ_n² = 0.5·σ_f².
pub const NOISE_VAR: f64 = 3200.0;

/// The demo's default lengthscale grid in scaled-BMI units: 2⁻³ … 2⁵.
pub fn default_grid() -> Vec<f64> {
    (-3..=5).map(|k| 2f64.powi(k)).collect()
}

/// The full diabetes table: column names and rows (442 × 11, last column `y`).
pub fn diabetes_table() -> Result<(Vec<String>, Vec<Vec<f64>>)> {
    let mut rd = CsvReader::new(DIABETES_CSV.as_bytes(), DIABETES_SOURCE, true)?;
    let header = rd.header().to_vec();
    let mut rows = Vec::new();
    while let Some(row) = rd.next_row()? {
        rows.push(
            (0..header.len())
                .map(|c| row.number(c))
                .collect::<Result<_>>()?,
        );
    }
    Ok((header, rows))
}

/// The demo data: scaled BMI (n × 1, x = (BMI − 30)/5) and the raw outputs.
pub fn diabetes_bmi() -> Result<(DMatrix<f64>, Vec<f64>)> {
    let d = read_gp_data(
        DIABETES_CSV.as_bytes(),
        DIABETES_SOURCE,
        &["bmi".to_owned()],
        "y",
    )?;
    Ok((d.x.map(|b| (b - BMI_MAP.shift) / BMI_MAP.scale), d.y))
}

/// A random split of `n` indices into (train, test) with `test_frac` of them held out.
pub fn holdout_split(
    n: usize,
    test_frac: f64,
    rng: &mut SecureRng,
) -> Result<(Vec<usize>, Vec<usize>)> {
    if !(test_frac > 0.0 && test_frac < 1.0) {
        return Err(Error::invalid("test_frac", test_frac, "must lie in (0, 1)"));
    }
    let mut perm: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        let j = rng.below_u64(i as u64 + 1) as usize;
        perm.swap(i, j);
    }
    let n_test = ((n as f64) * test_frac).round() as usize;
    if n_test == 0 || n_test >= n {
        return Err(Error::invalid(
            "test_frac",
            test_frac,
            format!("leaves an empty part of {n} points"),
        ));
    }
    let test = perm[..n_test].to_vec();
    let train = perm[n_test..].to_vec();
    Ok((train, test))
}

/// **Non-private evaluation** (reads held-out outputs; no guarantee): the expected RMSE of cloaked
/// predictions at `x_te`, √(MSE of the mean predictions + s²·tr M / n*) (DPGP.md §11.2), and the
/// RMSE of the non-private posterior mean.
#[allow(clippy::too_many_arguments)]
pub fn expected_dp_rmse(
    x_tr: &DMatrix<f64>,
    y_tr: &[f64],
    x_te: &DMatrix<f64>,
    y_te: &[f64],
    range: OutputRange,
    kernel: Kernel,
    eps: f64,
    delta: f64,
    mvee: &MveeConfig,
) -> Result<(f64, f64)> {
    let c = range.clip(y_tr)?;
    let gp = GpRegression::fit(x_tr, &c.centred, kernel)?;
    let mean = gp.predict(x_te)?;
    let mse = mean
        .iter()
        .zip(y_te)
        .map(|(m, y)| (m + range.centre() - y).powi(2))
        .sum::<f64>()
        / y_te.len() as f64;
    let cm = gp.prediction_matrix(x_te)?;
    let cov = CloakingCovariance::optimise(&cm, mvee)?;
    let s = gaussian_sigma(eps, delta, range.width() * cov.delta())?;
    let noise = s * s * cov.matrix().trace() / y_te.len() as f64;
    Ok(((mse + noise).sqrt(), mse.sqrt()))
}

/// The synthetic timing problem of `benches/gp.rs`, `examples/gp_select_timing.rs` and
/// `bench/gp/`: n points on the demo's scale, x ~ U[−2.5, 2.5], y = 150 + 60 sin(x) + U(−25, 25)
/// (seeded by n), with the output range [`Y_RANGE`].
pub fn timing_data(n: usize) -> Result<(DMatrix<f64>, Vec<f64>, OutputRange)> {
    let mut rng = SecureRng::seeded(n as u64);
    let x = DMatrix::from_fn(n, 1, |_, _| rng.unit_f64() * 5.0 - 2.5);
    let y = (0..n)
        .map(|i| 150.0 + 60.0 * x[(i, 0)].sin() + 50.0 * (rng.unit_f64() - 0.5))
        .collect();
    Ok((x, y, OutputRange::new(Y_RANGE.0, Y_RANGE.1)?))
}

/// The timing problem's selection settings: 20 lengthscales log-spaced over 2⁻³ … 2⁵, 5-fold
/// noise-aware CV, ε_select = ε_predict = 1, δ = 1e-5, default MVEE settings.
pub fn timing_config() -> SelectionConfig {
    SelectionConfig {
        grid: (0..20)
            .map(|k| 2f64.powf(-3.0 + 8.0 * k as f64 / 19.0))
            .collect(),
        signal_var: SIGNAL_VAR,
        noise_var: NOISE_VAR,
        folds: 5,
        eps_select: 1.0,
        eps_predict: 1.0,
        delta: 1e-5,
        utility: Utility::CrossValidation,
        mvee: MveeConfig::default(),
    }
}

/// Rows `idx` of `x`.
pub fn rows(x: &DMatrix<f64>, idx: &[usize]) -> DMatrix<f64> {
    x.select_rows(idx)
}

/// Entries `idx` of `y`.
pub fn pick(y: &[f64], idx: &[usize]) -> Vec<f64> {
    idx.iter().map(|&i| y[i]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundled_data_loads() {
        let (h, rows) = diabetes_table().unwrap();
        assert_eq!(h.len(), 11);
        assert_eq!(rows.len(), 442);
        let (x, y) = diabetes_bmi().unwrap();
        assert_eq!(x.nrows(), 442);
        assert_eq!(y[0], 151.0);
        assert!((x[(0, 0)] - (32.1 - 30.0) / 5.0).abs() < 1e-12);
        let mean: f64 = y.iter().sum::<f64>() / 442.0;
        assert!((mean - 152.13).abs() < 0.01);
        let mut rng = SecureRng::seeded(1);
        let (tr, te) = holdout_split(442, 0.2, &mut rng).unwrap();
        assert_eq!(te.len(), 88);
        assert_eq!(tr.len() + te.len(), 442);
        assert!(holdout_split(442, 1.0, &mut rng).is_err());
    }
}
