//! Statistical helpers for the sampler tests (compiled only under `cfg(test)`).

use std::collections::HashMap;

use statrs::distribution::{ChiSquared, ContinuousCDF};

/// The property tests' settings: 64 cases, and no failure files written into the source tree
/// (a failing case is printed instead).
pub fn proptest_config() -> proptest::prelude::ProptestConfig {
    proptest::prelude::ProptestConfig {
        cases: 64,
        failure_persistence: None,
        ..proptest::prelude::ProptestConfig::default()
    }
}

/// Probability with which a goodness-of-fit check rejects a correct sampler.
pub const FALSE_FAILURE: f64 = 1e-6;

/// Pearson chi-square statistic of integer `samples` against `pmf`, with its degrees of freedom.
///
/// Cells: every integer in the contiguous window around `center` whose expected count is >= 5,
/// plus one pooled cell for everything outside the window (both tails); the pooled cell is
/// merged into the last window cell when its expected count is below 5.
pub fn chi_square(samples: &[i64], pmf: impl Fn(i64) -> f64, center: i64) -> (f64, usize) {
    let n = samples.len() as f64;
    let mut counts: HashMap<i64, f64> = HashMap::new();
    for &s in samples {
        *counts.entry(s).or_insert(0.0) += 1.0;
    }
    let big = |k: i64| n * pmf(k) >= 5.0;
    assert!(big(center), "center cell too small");
    let (mut lo, mut hi) = (center, center);
    while big(lo - 1) {
        lo -= 1;
    }
    while big(hi + 1) {
        hi += 1;
    }
    let mut cells: Vec<(f64, f64)> = (lo..=hi)
        .map(|k| (counts.get(&k).copied().unwrap_or(0.0), n * pmf(k)))
        .collect();
    let inside_expected: f64 = cells.iter().map(|c| c.1).sum();
    let inside_observed: f64 = cells.iter().map(|c| c.0).sum();
    let outside = (n - inside_observed, (n - inside_expected).max(0.0));
    if outside.1 >= 5.0 {
        cells.push(outside);
    } else if let Some(last) = cells.last_mut() {
        last.0 += outside.0;
        last.1 += outside.1;
    }
    let stat = cells.iter().map(|(o, e)| (o - e).powi(2) / e).sum();
    (stat, cells.len() - 1)
}

/// The chi-square critical value at false-failure probability [`FALSE_FAILURE`].
pub fn critical(dof: usize) -> f64 {
    let chi = ChiSquared::new(dof as f64).expect("dof > 0");
    chi.inverse_cdf(1.0 - FALSE_FAILURE)
}

/// True when the samples pass the chi-square test against `pmf` at [`FALSE_FAILURE`].
pub fn fits(samples: &[i64], pmf: impl Fn(i64) -> f64, center: i64) -> bool {
    let (stat, dof) = chi_square(samples, pmf, center);
    stat < critical(dof)
}

/// Asserts a chi-square fit (false failure probability [`FALSE_FAILURE`] per call).
pub fn assert_fits(samples: &[i64], pmf: impl Fn(i64) -> f64, center: i64) {
    let (stat, dof) = chi_square(samples, pmf, center);
    let crit = critical(dof);
    assert!(stat < crit, "chi2 = {stat} >= {crit} with {dof} dof");
}

/// Asserts that the sample mean is within five standard errors of `mean` (false failure
/// < 6e-7 by the normal approximation).
pub fn assert_mean(samples: &[i64], mean: f64, sd: f64) {
    let n = samples.len() as f64;
    let avg = samples.iter().map(|&s| s as f64).sum::<f64>() / n;
    assert!(
        (avg - mean).abs() < 5.0 * sd / n.sqrt(),
        "mean {avg} vs {mean}"
    );
}

#[test]
fn critical_value_is_the_published_quantile() {
    // Chi-square with 5 dof: the 1 - 1e-6 quantile is 35.89 (also used in rng.rs).
    assert!((critical(5) - 35.888).abs() < 0.01, "{}", critical(5));
}
