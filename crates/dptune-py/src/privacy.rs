//! Privacy calculators (Gaussian, zCDP, DP-SGD) and the simple charged releases.

use std::path::PathBuf;

use numpy::PyArray1;
use pyo3::prelude::*;

use dptune::privacy::{convert, dpsgd, gaussian as pgauss, Guarantee};
use dptune::tune::{self};

use crate::budget;
use crate::errors::{invalid, DataError, IntoPy, R};
use crate::guarantee::{g, PyGuarantee};
use crate::input::{neighbours, rng_from, vec_f64, Seed};
use crate::limits;

/// ε of the Gaussian mechanism (exact Balle–Wang) for one release.
#[pyfunction]
#[pyo3(signature = (sigma, delta, sensitivity=1.0))]
pub(crate) fn gaussian_epsilon(sigma: f64, delta: f64, sensitivity: f64) -> R<f64> {
    pgauss::gaussian_epsilon(sigma, sensitivity, delta).py()
}

/// The smallest σ with (ε, δ) for the Gaussian mechanism (exact calibration).
#[pyfunction]
#[pyo3(signature = (epsilon, delta, sensitivity=1.0))]
pub(crate) fn gaussian_sigma(epsilon: f64, delta: f64, sensitivity: f64) -> R<f64> {
    pgauss::gaussian_sigma(epsilon, delta, sensitivity).py()
}

/// ρ = Δ²/(2σ²) of the Gaussian mechanism.
#[pyfunction]
#[pyo3(signature = (sigma, sensitivity=1.0))]
pub(crate) fn gaussian_rho(sigma: f64, sensitivity: f64) -> R<f64> {
    pgauss::gaussian_rho(sigma, sensitivity).py()
}

/// DP-SGD (Poisson-subsampled Gaussian, `steps` steps): the RDP guarantee.
#[pyfunction]
#[pyo3(signature = (sampling_rate, noise_multiplier, steps))]
pub(crate) fn dpsgd_guarantee(
    sampling_rate: f64,
    noise_multiplier: f64,
    steps: u64,
) -> R<PyGuarantee> {
    Ok(g(dpsgd::dpsgd_guarantee(
        sampling_rate,
        noise_multiplier,
        steps,
    )
    .py()?))
}

/// The smallest noise multiplier (relative 1e-3, rounded up) for which `steps` steps of DP-SGD
/// with continuous Gaussian noise at the public Poisson rate `sampling_rate` fit `allowance`.
#[pyfunction]
#[pyo3(signature = (allowance, sampling_rate, steps))]
pub(crate) fn dpsgd_noise_multiplier(
    allowance: &PyGuarantee,
    sampling_rate: f64,
    steps: u64,
) -> R<f64> {
    tune::cost::dpsgd_noise_multiplier(&allowance.inner, sampling_rate, steps).py()
}

/// The largest ε whose ε-DP release fits `allowance` (rounded down).
#[pyfunction]
pub(crate) fn largest_pure_within(allowance: &PyGuarantee) -> R<f64> {
    tune::cost::largest_pure_within(&allowance.inner).py()
}

/// DP-SGD ε at δ: `dpsgd_guarantee(...).epsilon(delta)`, the one conversion of the RDP curve
/// (optimised over continuous orders; dp_accounting's fixed grid gives a slightly larger ε).
#[pyfunction]
#[pyo3(signature = (sampling_rate, noise_multiplier, steps, delta))]
pub(crate) fn dpsgd_epsilon(
    sampling_rate: f64,
    noise_multiplier: f64,
    steps: u64,
    delta: f64,
) -> R<f64> {
    dpsgd::dpsgd_guarantee(sampling_rate, noise_multiplier, steps)
        .py()?
        .epsilon(delta)
        .py()
}

/// An exact noisy count: `count` + discrete Laplace noise of scale 1/ε rounded up (Canonne,
/// Kamath & Steinke, arXiv 2004.00010, Alg. 2). A count changes by at most 1 when one record is
/// added or removed, and by at most 1 when one is replaced, so this is ε-DP under either
/// relation (Dwork–Roth Thm 3.6); the guarantee carries the `neighbours` the caller names.
/// Returns (noisy count, guarantee).
#[pyfunction]
#[pyo3(signature = (count, epsilon, *, neighbours="add_remove", seed=None, budget=None,
    store=None))]
pub(crate) fn noisy_count(
    count: i64,
    epsilon: f64,
    neighbours: &str,
    seed: Option<Seed<'_>>,
    budget: Option<&str>,
    store: Option<PathBuf>,
) -> R<(i64, PyGuarantee)> {
    dptune::error::check_positive("epsilon", epsilon).py()?;
    let spent = Guarantee::pure(epsilon, self::neighbours(neighbours)?).py()?;
    let noise = dptune::noise::DiscreteLaplace::from_scale_f64((1.0 / epsilon).next_up()).py()?;
    let mut rng = rng_from(seed)?;
    budget::charge(budget, store.as_deref(), &spent, "noisy_count")?;
    Ok((count.saturating_add(noise.sample(&mut rng)), g(spent)))
}

/// A numpy array of record indices.
pub(crate) type Indices<'py> = Bound<'py, PyArray1<i64>>;

/// Splits records `0..n` by one exact Bernoulli(`fraction`) coin per record (`tune::split_by_coin`):
/// the sides are disjoint functions of the records, so mechanisms on them compose in parallel
/// under add/remove neighbours, which a fixed-size cut does not. Returns (first, second) index
/// arrays; either side may be empty. A size whose index arrays (about 24 bytes per record at
/// the peak: two growing vectors, then the arrays) cannot fit in memory is refused up front.
#[pyfunction]
#[pyo3(signature = (n, fraction, *, seed=None))]
pub(crate) fn split_by_coin<'py>(
    py: Python<'py>,
    n: &Bound<'py, PyAny>,
    fraction: f64,
    seed: Option<Seed<'_>>,
) -> R<(Indices<'py>, Indices<'py>)> {
    let n = limits::size_arg("n", n)?;
    limits::check_size("n", n, 24)?;
    let n = usize::try_from(n).map_err(|_| invalid("n", n, "too large for this platform"))?;
    let mut rng = rng_from(seed)?;
    let s = tune::split_by_coin(n, fraction, &mut rng).py()?;
    let idx = |v: Vec<usize>| PyArray1::from_iter(py, v.into_iter().map(|i| i as i64));
    Ok((idx(s.first), idx(s.second)))
}

/// Gaussian noise on a vector of L2 sensitivity `sensitivity` (under the caller's
/// `neighbours` relation, which the guarantee carries), calibrated to a ρ-zCDP allowance: exact
/// discrete Gaussian noise on a power-of-two grid with the rounding charged
/// (`noise::GridGaussian::within_rho`); returns (noisy values, guarantee with ρ' ≤ ρ). The
/// values are the private data: a non-finite one is a `DataError`, checked before any noise is
/// drawn.
#[pyfunction]
#[pyo3(signature = (values, sensitivity, rho, *, neighbours="add_remove", seed=None, budget=None,
    store=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn gaussian_release<'py>(
    py: Python<'py>,
    values: &Bound<'py, PyAny>,
    sensitivity: f64,
    rho: f64,
    neighbours: &str,
    seed: Option<Seed<'_>>,
    budget: Option<&str>,
    store: Option<PathBuf>,
) -> R<(Bound<'py, PyArray1<f64>>, PyGuarantee)> {
    let v = vec_f64("values", values)?;
    let nb = self::neighbours(neighbours)?;
    let mech = dptune::noise::GridGaussian::within_rho(sensitivity, rho, v.len().max(1)).py()?;
    if let Some(i) = v.iter().position(|x| !x.is_finite()) {
        return Err(DataError::new_err(format!(
            "data error in `values`: element {i} is {}; the released values must be finite",
            v[i]
        )));
    }
    let mut rng = rng_from(seed)?;
    let spent = Guarantee::zcdp(mech.rho(), nb).py()?;
    budget::charge(budget, store.as_deref(), &spent, "gaussian_release")?;
    let out = mech.release_vec(&mut rng, &v).py()?;
    Ok((PyArray1::from_vec(py, out), g(spent)))
}

/// ε of ρ-zCDP at δ.
#[pyfunction]
pub(crate) fn zcdp_epsilon(rho: f64, delta: f64) -> R<f64> {
    convert::zcdp_epsilon(rho, delta).py()
}

/// δ of ρ-zCDP at ε.
#[pyfunction]
pub(crate) fn zcdp_delta(rho: f64, epsilon: f64) -> R<f64> {
    convert::zcdp_delta(rho, epsilon).py()
}

/// The largest ρ whose zCDP implies (ε, δ).
#[pyfunction]
pub(crate) fn zcdp_rho_for(epsilon: f64, delta: f64) -> R<f64> {
    convert::zcdp_rho_for(epsilon, delta).py()
}

/// ε-DP ⇒ ε²/2-zCDP.
#[pyfunction]
pub(crate) fn pure_to_zcdp(epsilon: f64) -> R<f64> {
    convert::pure_to_zcdp(epsilon).py()
}

/// Adds this file's classes and functions to the module `dptune._core`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(gaussian_epsilon, m)?)?;
    m.add_function(wrap_pyfunction!(gaussian_sigma, m)?)?;
    m.add_function(wrap_pyfunction!(gaussian_rho, m)?)?;
    m.add_function(wrap_pyfunction!(dpsgd_guarantee, m)?)?;
    m.add_function(wrap_pyfunction!(dpsgd_noise_multiplier, m)?)?;
    m.add_function(wrap_pyfunction!(largest_pure_within, m)?)?;
    m.add_function(wrap_pyfunction!(dpsgd_epsilon, m)?)?;
    m.add_function(wrap_pyfunction!(zcdp_epsilon, m)?)?;
    m.add_function(wrap_pyfunction!(noisy_count, m)?)?;
    m.add_function(wrap_pyfunction!(gaussian_release, m)?)?;
    m.add_function(wrap_pyfunction!(split_by_coin, m)?)?;
    m.add_function(wrap_pyfunction!(zcdp_delta, m)?)?;
    m.add_function(wrap_pyfunction!(zcdp_rho_for, m)?)?;
    m.add_function(wrap_pyfunction!(pure_to_zcdp, m)?)?;
    Ok(())
}
