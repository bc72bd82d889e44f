//! Accounting for the Gaussian mechanism f(D) + N(0, σ²I) with L2 sensitivity Δ (THEORY.md §11).
//!
//! * zCDP / RDP: ρ = Δ²/(2σ²), ε(α) = ρα (Bun & Steinke 2016, arXiv 1605.02065, Prop. 1.6;
//!   Mironov 2017, arXiv 1702.07476, Table 2).
//! * Exact (ε, δ): the analytic Gaussian mechanism (Balle & Wang 2018, arXiv 1805.06530,
//!   Thm. 8), in both directions, evaluated in log space so that δ down to 1e-300 is handled.
//! * [`classic_gaussian_sigma`] (Dwork & Roth 2014, Thm. A.1) is a labelled comparison only.

use super::guarantee::{Guarantee, Neighbours};
pub use super::normal::log_ndtr;
use super::rdp::RdpCurve;
use crate::error::{check_positive, Error, Result};
use crate::numeric::bisect::{bisect, to_resolution, Split};
use crate::numeric::{mul_up, round_up};
use std::convert::Infallible;

/// ln δ(ε) of the Gaussian mechanism with noise multiplier s = σ/Δ (Balle & Wang 2018,
/// arXiv 1805.06530, Thm. 8): δ = Φ(1/(2s) − εs) − e^ε Φ(−1/(2s) − εs). −∞ when δ ≤ 0.
fn log_delta_analytic(s: f64, eps: f64) -> f64 {
    let a = 0.5 / s;
    let b = eps * s;
    let first = log_ndtr(a - b);
    let d = eps + log_ndtr(-a - b) - first;
    if d >= 0.0 {
        f64::NEG_INFINITY
    } else {
        first + (-d.exp_m1()).ln()
    }
}

fn check_delta_open(delta: f64) -> Result<f64> {
    if delta > 0.0 && delta < 1.0 {
        Ok(delta)
    } else {
        Err(Error::invalid(
            "delta",
            delta,
            "must lie in (0, 1) (the Gaussian mechanism is never (eps, 0)-DP)",
        ))
    }
}

/// σ/Δ rounded down (a smaller noise multiplier only makes ε and δ larger).
fn multiplier_down(sigma: f64, sensitivity: f64) -> f64 {
    let s = sigma / sensitivity;
    if sensitivity.mul_add(s, -sigma) > 0.0 {
        s.next_down()
    } else {
        s
    }
}

/// Bisects to float resolution; `ok(x)` is monotone false→true on [lo, hi] with ok(hi) true.
/// Returns the smallest float found with `ok` true.
fn bisect_up(ok: impl Fn(f64) -> bool, lo: f64, hi: f64) -> f64 {
    let Ok((_, hi)) = bisect::<Infallible>(lo, hi, Split::Arithmetic, to_resolution, |x| Ok(ok(x)));
    hi
}

/// ρ = Δ²/(2σ²): the Gaussian mechanism is ρ-zCDP (Bun & Steinke 2016, arXiv 1605.02065,
/// Prop. 1.6) and (α, ρα)-RDP (Mironov 2017, arXiv 1702.07476, Table 2). Preconditions: σ and
/// Δ finite > 0. Rounded up.
pub fn gaussian_rho(sigma: f64, sensitivity: f64) -> Result<f64> {
    check_positive("sensitivity", sensitivity)?;
    check_positive("sigma", sigma)?;
    let r = sensitivity / sigma;
    let r = if sigma.mul_add(r, -sensitivity) < 0.0 {
        r.next_up()
    } else {
        r
    };
    // mul_up never returns 0 for positive factors, so ρ > 0 even if r² underflows.
    Ok(mul_up(mul_up(r, r), 0.5))
}

/// The RDP curve ε(α) = α·Δ²/(2σ²) of the Gaussian mechanism (Mironov 2017, arXiv 1702.07476,
/// Table 2). Preconditions as in [`gaussian_rho`].
pub fn gaussian_curve(sigma: f64, sensitivity: f64) -> Result<RdpCurve> {
    RdpCurve::linear(gaussian_rho(sigma, sensitivity)?)
}

/// The exact ε(δ) of the Gaussian mechanism with standard deviation σ and L2 sensitivity Δ: the
/// smallest ε ≥ 0 with Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ) ≤ δ (Balle & Wang 2018,
/// arXiv 1805.06530, Thm. 8, an iff). Bisection in ε to float resolution on the log-space
/// condition; the upper end is returned (rounded up). Preconditions: σ, Δ finite > 0,
/// δ ∈ (0, 1).
pub fn gaussian_epsilon(sigma: f64, sensitivity: f64, delta: f64) -> Result<f64> {
    check_positive("sensitivity", sensitivity)?;
    check_positive("sigma", sigma)?;
    check_delta_open(delta)?;
    let s = multiplier_down(sigma, sensitivity);
    let target = delta.ln();
    let ok = |e: f64| log_delta_analytic(s, e) <= target;
    if ok(0.0) {
        return Ok(0.0);
    }
    let mut hi = 1.0;
    while !ok(hi) {
        hi *= 2.0;
        if hi > 1e300 {
            return Err(Error::Numerical {
                what: "gaussian_epsilon",
                reason: format!("no finite epsilon found for sigma/sensitivity = {s}"),
            });
        }
    }
    Ok(round_up(bisect_up(ok, 0.0, hi)))
}

/// The smallest σ for which the Gaussian mechanism with L2 sensitivity Δ is (ε, δ)-DP, by the
/// analytic calibration of Balle & Wang 2018 (arXiv 1805.06530, Thm. 8; THEORY.md §11.1), σ
/// rounded up. Preconditions: ε, Δ finite > 0, δ ∈ (0, 1).
///
/// The condition ln δ(s) ≤ ln δ is monotone in s = σ/Δ (δ(s) decreases). A bracket is found by
/// doubling/halving; secant steps on the smooth ln δ(s) − ln δ then converge in a handful of
/// evaluations, each narrowing the bracket; the root is pinned to a few ulps and the bracket
/// bisected to float resolution. The upper end of the bracket only ever moves to points where
/// the condition was checked to hold, so the returned σ satisfies it, and the float just below
/// fails it (like plain bisection, found with about a fifth of the evaluations; rounding noise
/// in ln δ(s) can make the crossing point differ from plain bisection's by a few ulps).
pub fn gaussian_sigma(eps: f64, delta: f64, sensitivity: f64) -> Result<f64> {
    check_positive("epsilon", eps)?;
    check_delta_open(delta)?;
    check_positive("sensitivity", sensitivity)?;
    let target = delta.ln();
    let gap = |s: f64| log_delta_analytic(s, eps) - target;
    let ok = |s: f64| log_delta_analytic(s, eps) <= target;
    let (mut lo, mut hi) = (0.5, 1.0);
    while !ok(hi) {
        (lo, hi) = (hi, hi * 2.0);
        if hi > 1e300 {
            return Err(Error::Numerical {
                what: "gaussian_sigma",
                reason: "no finite sigma found".into(),
            });
        }
    }
    while ok(lo) {
        (lo, hi) = (lo * 0.5, lo);
        if lo < 1e-300 {
            return Err(Error::Numerical {
                what: "gaussian_sigma",
                reason: "sigma underflows".into(),
            });
        }
    }
    // Secant iteration on the two latest points; every evaluation also narrows [lo, hi]
    // (gap ≤ 0 exactly when the condition holds).
    let (mut a, mut b) = (lo, hi);
    let (mut ga, mut gb) = (gap(a), gap(b));
    for _ in 0..50 {
        let x = b - gb * (b - a) / (gb - ga);
        if !(x.is_finite() && x > lo && x < hi) {
            break;
        }
        let gx = gap(x);
        if gx <= 0.0 {
            hi = x;
        } else {
            lo = x;
        }
        (a, ga, b, gb) = (b, gb, x, gx);
        if (b - a).abs() <= 4.0 * f64::EPSILON * b {
            break;
        }
    }
    // Pin the root between b ∓ a few ulps when the secant converged, so that the final
    // bisection to float resolution takes a few steps instead of ~50.
    let step = 4.0 * f64::EPSILON * b;
    if b - step > lo && !ok(b - step) {
        lo = b - step;
    }
    if b + step < hi && ok(b + step) {
        hi = b + step;
    }
    let s = bisect_up(ok, lo, hi);
    check_positive("sigma", mul_up(s, sensitivity))
}

/// **Comparison only, not a calibration dptune uses**: the classic σ = Δ·√(2 ln(1.25/δ))/ε of
/// Dwork & Roth 2014 (The Algorithmic Foundations of DP, Thm. A.1), proven only for ε ∈ (0, 1)
/// and looser than [`gaussian_sigma`]. Returned for any ε > 0 so that it can be printed next to
/// the analytic σ; check `eps < 1` before calling it a guarantee. Preconditions: ε, Δ finite > 0,
/// δ ∈ (0, 1).
pub fn classic_gaussian_sigma(eps: f64, delta: f64, sensitivity: f64) -> Result<f64> {
    check_positive("epsilon", eps)?;
    check_delta_open(delta)?;
    check_positive("sensitivity", sensitivity)?;
    Ok(round_up(
        sensitivity * (2.0 * (1.25 / delta).ln()).sqrt() / eps,
    ))
}

/// The guarantee of one Gaussian mechanism with standard deviation σ and L2 sensitivity Δ:
/// ρ-zCDP with ρ = Δ²/(2σ²) and, when `delta` is given, also the exact (ε(δ), δ)-DP bound of
/// Balle & Wang 2018 (arXiv 1805.06530, Thm. 8), both holding at once.
pub fn gaussian_guarantee(
    sigma: f64,
    sensitivity: f64,
    neighbours: Neighbours,
    delta: Option<f64>,
) -> Result<Guarantee> {
    let g = Guarantee::zcdp(gaussian_rho(sigma, sensitivity)?, neighbours)?;
    match delta {
        None => Ok(g),
        Some(d) => {
            let eps = gaussian_epsilon(sigma, sensitivity, d)?;
            if eps > 0.0 {
                g.and(Guarantee::approx(eps, d, neighbours)?)
            } else {
                Ok(g)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worked_numbers_from_theory() {
        // THEORY.md §11.1.
        for (eps, delta, sigma) in [
            (1.0, 1e-5, 3.7306),
            (0.5, 1e-6, 8.0576),
            (4.0, 1e-5, 1.0812),
        ] {
            let s = gaussian_sigma(eps, delta, 1.0).unwrap();
            assert!((s - sigma).abs() < 1e-4, "{s}");
            let e = gaussian_epsilon(s, 1.0, delta).unwrap();
            assert!((e - eps).abs() < 1e-9 * eps, "{e}");
        }
        let c = classic_gaussian_sigma(1.0, 1e-5, 1.0).unwrap();
        assert!((c - 4.844805262605389).abs() < 1e-14);
        assert_eq!(gaussian_rho(1.0, 1.0).unwrap(), 0.5);
        // Tiny δ does not underflow.
        let s = gaussian_sigma(1.0, 1e-300, 1.0).unwrap();
        assert!(s.is_finite() && s > 30.0, "{s}");
        let e = gaussian_epsilon(1.0, 1.0, 1e-300).unwrap();
        assert!(e.is_finite() && e > 30.0, "{e}");
    }

    #[test]
    fn bad_input_names_the_parameter() {
        let name = |r: Result<f64>| match r {
            Err(Error::InvalidParameter { name, .. }) => name,
            other => panic!("{other:?}"),
        };
        assert_eq!(name(gaussian_epsilon(-1.0, 1.0, 1e-5)), "sigma");
        assert_eq!(name(gaussian_epsilon(1.0, f64::NAN, 1e-5)), "sensitivity");
        assert_eq!(name(gaussian_epsilon(1.0, 1.0, 0.0)), "delta");
        assert_eq!(name(gaussian_epsilon(1.0, 1.0, 1.5)), "delta");
        assert_eq!(name(gaussian_sigma(0.0, 1e-5, 1.0)), "epsilon");
        assert_eq!(name(gaussian_sigma(f64::INFINITY, 1e-5, 1.0)), "epsilon");
        assert_eq!(name(gaussian_rho(0.0, 1.0)), "sigma");
    }
}
