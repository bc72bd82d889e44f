//! RDP of the Poisson-subsampled Gaussian mechanism (one DP-SGD step) under add/remove-one.
//!
//! Mironov, Talwar & Zhang 2019, "Rényi Differential Privacy of the Sampled Gaussian Mechanism",
//! arXiv 1908.10530 (THEORY.md §13): with μ₀ = N(0, z²) and μ = (1−q)·N(0, z²) + q·N(1, z²),
//! the RDP at order α is D_α(μ ‖ μ₀) = ln(A_α)/(α−1) with
//!
//! A_α = E_{x~μ₀}[((1−q) + q·exp((2x−1)/(2z²)))^α].
//!
//! Since E_{μ₀}[exp((2x−1)/(2z²))] = 1, A_α − 1 = E_{μ₀}[(1+t)^α − 1 − αt] with
//! t = q·(exp((2x−1)/(2z²)) − 1); the integrand is ≥ 0 (convexity), so A_α − 1 is computed
//! without cancellation even when it is tiny (small q, large z).
//!
//! * Integer α (≤ [`MAX_BINOMIAL_ORDER`]): exact binomial sum
//!   A_α − 1 = Σ_{k≥2} C(α,k)(1−q)^{α−k} q^k (exp((k²−k)/(2z²)) − 1), all terms ≥ 0, in log
//!   space.
//! * Fractional α: **exact value** by numerical quadrature of the integral above (composite
//!   12-point Gauss–Legendre over [−9z, α + 9z] on panels of width 3z·min(1, z)), then A_α − 1
//!   is inflated by the relative margin [`QUADRATURE_MARGIN`], meant to exceed the quadrature
//!   error. The panel width shrinks like z² for z < 1 because the integrand, as a function of
//!   x, has complex singularities (where 1 + t = 0) at distance πz² from the real axis, and
//!   Gauss–Legendre converges at a rate set by that distance relative to the panel half-width.
//!   No rigorous error bound: tested against a 20-point rule on panels of width z·min(1, z)
//!   over [−11z, α + 11z] for q ∈ [1e-5, 0.99], z ∈ [0.3, 50], every fractional default order
//!   (largest relative difference of A_α − 1: 1.3e-13, a thousandth of the margin), and
//!   against the golden `rdp_exact` values. The sum is taken in linear space, scaled by
//!   e^{−S} with S = α ln 2 + max(0, α ln q + α(α−1)/(2z²)), which bounds the log of every
//!   integrand value (so nothing overflows); when the scaled sum would leave the normal range
//!   the slower log-space summation on the same nodes is used instead. This
//!   is not dp_accounting's |C(α,i)| series, which is an upper bound up to 57 % above the exact
//!   value and diverges at some orders; ours is never larger than it (golden `dpsgd_rdp`).
//!   Where the quadrature would need too many panels (α/z large) the value at ⌈α⌉ is used,
//!   which is a valid upper bound because Rényi divergence is non-decreasing in the order.
//! * α > [`MAX_BINOMIAL_ORDER`]: the unsubsampled Gaussian bound α/(2z²) (subsampling never
//!   increases RDP: joint convexity of exp((α−1)D_α)).
//!
//! Edge cases: q = 1 is the plain Gaussian, α/(2z²). q = 0, q > 1, z ≤ 0 and non-finite
//! inputs are errors (a mechanism that never samples needs no accounting, and 0 is more likely a
//! mistake than a choice).

use std::sync::OnceLock;

use super::convert::{round_up, EpsAtOrder};
use super::guarantee::{Guarantee, Neighbours};
use super::rdp::{default_orders, RdpCurve};
use crate::error::{check_delta, check_positive, Error, Result};

/// Largest integer order evaluated by the exact binomial sum.
pub const MAX_BINOMIAL_ORDER: f64 = 4096.0;

/// Relative margin added to the quadrature value of A_α − 1 at fractional orders.
pub const QUADRATURE_MARGIN: f64 = 1e-10;

/// Largest number of quadrature panels before falling back to the next integer order.
const MAX_PANELS: f64 = 4000.0;

/// Gauss–Legendre points per quadrature panel.
const NODES: usize = 12;

/// The integration range is [−TAIL·z, α + TAIL·z]: beyond it the Gaussian factor of both bumps
/// of the integrand (around x ≈ 0 and x ≈ α) is below e^{−TAIL²/2}.
const TAIL: f64 = 9.0;

/// Panel width in units of z·min(1, z) (see the module doc).
const PANEL: f64 = 3.0;

/// The composite quadrature grid for (z, α): first panel's left end, panel width, panel count.
fn panels(z: f64, alpha: f64) -> (f64, f64, f64) {
    let lo = -TAIL * z;
    let width = PANEL * z * z.min(1.0);
    (lo, width, ((alpha + TAIL * z - lo) / width).ceil())
}

/// Validates a sampling rate q ∈ (0, 1] and a noise multiplier z > 0 (both finite).
pub(crate) fn check_q_z(q: f64, z: f64) -> Result<()> {
    if !(q.is_finite() && q > 0.0 && q <= 1.0) {
        return Err(Error::invalid(
            "sampling_rate",
            q,
            "must lie in (0, 1] (q = 0 releases nothing and needs no accounting)",
        ));
    }
    check_positive("noise_multiplier", z)?;
    Ok(())
}

/// RDP ε(α) of one step of the Poisson-subsampled Gaussian mechanism with sampling rate `q` and
/// noise multiplier `z` under add/remove-one neighbours (MTZ19, arXiv 1908.10530, §3; see the
/// module doc for the method and its exactness). Preconditions: q ∈ (0, 1], z finite > 0,
/// α finite > 1; otherwise [`Error::InvalidParameter`]. The result is rounded up.
pub fn subsampled_gaussian_rdp(q: f64, z: f64, alpha: f64) -> Result<f64> {
    check_q_z(q, z)?;
    if !(alpha.is_finite() && alpha > 1.0) {
        return Err(Error::invalid(
            "order",
            alpha,
            "Rényi orders must be finite and > 1",
        ));
    }
    Ok(rdp_unchecked(q, z, alpha))
}

/// [`subsampled_gaussian_rdp`] without validation (for validated [`RdpCurve`] parts).
pub(crate) fn rdp_unchecked(q: f64, z: f64, alpha: f64) -> f64 {
    let gaussian = round_up(alpha / (2.0 * z * z));
    if q >= 1.0 || alpha > MAX_BINOMIAL_ORDER {
        return gaussian;
    }
    let log_a_minus_1 = if alpha.fract() == 0.0 {
        log_a_minus_1_integer(q, z, alpha as u64)
    } else if panels(z, alpha).2 > MAX_PANELS {
        return rdp_unchecked(q, z, alpha.ceil()).min(gaussian);
    } else {
        let log = log_a_minus_1_linear(q, z, alpha)
            .unwrap_or_else(|| log_a_minus_1_quadrature(q, z, alpha));
        log + QUADRATURE_MARGIN.ln_1p()
    };
    let eps = round_up(log1p_exp(log_a_minus_1) / (alpha - 1.0));
    if eps.is_nan() {
        gaussian
    } else {
        eps.min(gaussian)
    }
}

/// Cheap lower bounds on [`rdp_unchecked`] at fractional orders, from exact integer orders only
/// (binomial sums, far cheaper than the quadrature), each integer order computed once and kept.
/// Two facts: Rényi divergence is non-decreasing in the order, so ε(α) ≥ ε(⌊α⌋); and
/// g(α) = (α−1)·ε(α) = ln A_α is convex in α (A_α is a moment E[Λ^α], and log-moments are
/// convex by Hölder) with g(1) = 0, so g(α) lies above the extensions of the chords through
/// (m−1, m) and through (m+1, m+2), m = ⌊α⌋. Used only to skip orders that cannot win a
/// minimisation: the integer values carry an upward margin of a few ulps, so the bound may
/// exceed the exact value by as much (1e-12 relative is taken off), which at worst skips an
/// order within that distance of the best; it never makes a result invalid.
pub(crate) struct FractionalLowerBound {
    q: f64,
    z: f64,
    /// g(k) = (k−1)·ε(k) for k = 1, 2, … as far as needed.
    g: Vec<f64>,
}

impl FractionalLowerBound {
    pub(crate) fn new(q: f64, z: f64) -> Self {
        Self { q, z, g: vec![0.0] }
    }

    fn g(&mut self, k: f64) -> f64 {
        while (self.g.len() as f64) < k {
            let n = self.g.len() as f64 + 1.0;
            self.g.push((n - 1.0) * rdp_unchecked(self.q, self.z, n));
        }
        self.g[k as usize - 1]
    }

    /// A lower bound on ε(α) for fractional α > 1.
    pub(crate) fn at(&mut self, alpha: f64) -> f64 {
        let m = alpha.floor();
        if self.q >= 1.0 || m + 2.0 > MAX_BINOMIAL_ORDER {
            return if m >= 2.0 {
                rdp_unchecked(self.q, self.z, m)
            } else {
                0.0
            };
        }
        let (g1, g2, g3) = (self.g(m), self.g(m + 1.0), self.g(m + 2.0));
        let g0 = if m >= 2.0 { self.g(m - 1.0) } else { 0.0 };
        let left = if m >= 2.0 {
            g1 + (g1 - g0) * (alpha - m)
        } else {
            0.0
        };
        let right = g2 - (g3 - g2) * (m + 1.0 - alpha);
        let monotone = if m >= 2.0 { g1 / (m - 1.0) } else { 0.0 };
        (left.max(right) / (alpha - 1.0)).max(monotone) * (1.0 - 1e-12)
    }
}

/// ln(1 + e^x) without overflow.
fn log1p_exp(x: f64) -> f64 {
    if x > 0.0 {
        x + (-x).exp().ln_1p()
    } else {
        x.exp().ln_1p()
    }
}

/// ln(e^c − 1) for c > 0.
fn ln_expm1(c: f64) -> f64 {
    if c > 30.0 {
        c + (-(-c).exp()).ln_1p()
    } else {
        c.exp_m1().ln()
    }
}

/// Running log-sum-exp.
#[derive(Clone, Copy)]
struct LogSum {
    max: f64,
    sum: f64,
}

impl LogSum {
    fn new() -> Self {
        Self {
            max: f64::NEG_INFINITY,
            sum: 0.0,
        }
    }

    fn add(&mut self, x: f64) {
        if x == f64::NEG_INFINITY || x.is_nan() {
            return;
        }
        if x > self.max {
            self.sum = self.sum * (self.max - x).exp() + 1.0;
            self.max = x;
        } else {
            self.sum += (x - self.max).exp();
        }
    }

    fn value(&self) -> f64 {
        if self.max == f64::NEG_INFINITY {
            f64::NEG_INFINITY
        } else {
            self.max + self.sum.ln()
        }
    }
}

/// ln k for k = 0..=[`MAX_BINOMIAL_ORDER`] (entry 0 unused), computed once: the binomial sums
/// build ln C(n,k) from these by additions instead of a logarithm per term.
fn ln_integers() -> &'static [f64] {
    static TABLE: OnceLock<Vec<f64>> = OnceLock::new();
    TABLE.get_or_init(|| {
        (0..=MAX_BINOMIAL_ORDER as usize)
            .map(|k| (k as f64).ln())
            .collect()
    })
}

/// Terms below e^{−SUM_WINDOW} times the largest one are not exponentiated: each is bounded by
/// e^{1 − SUM_WINDOW} times the largest, and that bound is added instead (at most
/// 4096·e^{−49} ≈ 2e-18 relative, far below rounding, yet never below the exact sum).
const SUM_WINDOW: f64 = 50.0;

/// ln(A_α − 1) at integer α = n ≥ 2 by the binomial sum (every term ≥ 0), rounded up.
///
/// ln term_k = ln C(n,k) + (n−k)·ln(1−q) + k·ln q + ln(e^{c_k} − 1), c_k = (k² − k)/(2z²), with
/// ln C(n,k) built by the recurrence ln C(n,k−1) + ln(n−k+1) − ln k from a table of logarithms
/// ([`ln_integers`]), and ln(e^c − 1) replaced by its upper bound c where c > 40 (the two differ
/// by less than e^{−40}). Only terms within [`SUM_WINDOW`] of the largest are exponentiated.
/// The float error of each log-term is bounded as it is computed (a few units of ε_mach times
/// the magnitudes added, accumulated along the recurrence), and the largest such bound is added
/// to the result, so the value returned is not below the exact ln(A_α − 1).
fn log_a_minus_1_integer(q: f64, z: f64, n: u64) -> f64 {
    // Unit roundoff: a correctly rounded operation is off by at most U times its result; libm's
    // ln, ln_1p and exp_m1 by at most 2U.
    const U: f64 = f64::EPSILON / 2.0;
    let ln_int = ln_integers();
    let (lq, l1q) = (q.ln(), (-q).ln_1p());
    let two_z2 = 2.0 * z * z;
    let nf = n as f64;
    let n = n as usize;
    let mut log_binom = ln_int[n]; // ln C(n, 1)
    let mut binom_err = 2.0 * U * log_binom;
    let mut logs = Vec::with_capacity(n - 1);
    let mut max = f64::NEG_INFINITY;
    let mut err_bound = 0.0f64;
    for k in 2..=n {
        let kf = k as f64;
        let (up, down) = (ln_int[n - k + 1], ln_int[k]);
        let step = up - down;
        log_binom += step;
        binom_err += U * (2.0 * (up + down) + step.abs() + log_binom.abs());
        // c carries the roundings of 2z² and the division (3U relative); ln(e^c − 1) changes by
        // dc/(1 − e^{−c}) ≤ (1.6c + 2)·3U, plus 2U·|ln(e^c − 1)| and 2U from its libm calls.
        let c = (kf * kf - kf) / two_z2;
        let lem = if c > 40.0 { c } else { ln_expm1(c) };
        let lem_err = U * (5.0 * c + 8.0 + 2.0 * lem.abs());
        let (a, b) = ((nf - kf) * l1q, kf * lq);
        let (s1, s2) = (log_binom + a, log_binom + a + b);
        let l = s2 + lem;
        // ln q and ln(1−q) (2U each) times k (U), and the three sums (U of each partial sum).
        let err =
            binom_err + lem_err + U * (3.0 * (a.abs() + b.abs()) + s1.abs() + s2.abs() + l.abs());
        err_bound = err_bound.max(err);
        max = max.max(l);
        logs.push(l);
    }
    let (mut sum, mut summed, mut skipped) = (0.0, 0.0, 0.0);
    for &l in &logs {
        if l >= max - SUM_WINDOW {
            sum += (l - max).exp();
            summed += 1.0;
        } else {
            skipped += 1.0;
        }
    }
    if skipped > 0.0 {
        // A skipped term is below e^{1 − SUM_WINDOW} of the exact largest (the computed logs
        // are off by far less than 1).
        sum += skipped * (1.0 - SUM_WINDOW).exp();
    }
    let log_sum = sum.ln();
    let value = max + log_sum;
    // A lone term is summed exactly (e^0 = 1, ln 1 = 0). Otherwise each exp and addition adds at
    // most 3U relative to the sum (and ln(1 + x) ≤ x), the ln 2U and the last addition U of
    // their results.
    let sum_err = if summed + skipped == 1.0 {
        0.0
    } else {
        3.0 * U * (summed + skipped + 1.0) + U * (2.0 * log_sum.abs() + value.abs())
    };
    value + (sum_err + err_bound)
}

/// [`NODES`]-point Gauss–Legendre nodes and weights on [−1, 1] (Newton's method on the Legendre
/// polynomial), with the weights' logarithms: (node, weight, ln weight).
fn gauss_legendre() -> &'static [(f64, f64, f64)] {
    static TABLE: OnceLock<Vec<(f64, f64, f64)>> = OnceLock::new();
    TABLE.get_or_init(|| {
        const N: usize = NODES;
        let mut out = Vec::with_capacity(N);
        for i in 0..N {
            let mut x = (std::f64::consts::PI * (i as f64 + 0.75) / (N as f64 + 0.5)).cos();
            let mut dp = 1.0;
            for _ in 0..100 {
                let (mut p0, mut p1) = (1.0, x);
                for k in 2..=N {
                    let kf = k as f64;
                    let p2 = ((2.0 * kf - 1.0) * x * p1 - (kf - 1.0) * p0) / kf;
                    p0 = p1;
                    p1 = p2;
                }
                dp = N as f64 * (x * p1 - p0) / (x * x - 1.0);
                let dx = p1 / dp;
                x -= dx;
                if dx.abs() < 1e-16 {
                    break;
                }
            }
            let w = 2.0 / ((1.0 - x * x) * dp * dp);
            out.push((x, w, w.ln()));
        }
        out
    })
}

/// ln of the integrand (1+t)^α − 1 − αt, t = q(e^L − 1), L = (2x−1)/(2z²).
fn log_excess(q: f64, lq: f64, alpha: f64, l: f64) -> f64 {
    let (t, log_t) = if l > 0.0 {
        let lt = lq + ln_expm1(l);
        (lt.exp(), lt)
    } else {
        let t = q * l.exp_m1();
        (t, f64::NAN)
    };
    if t.abs() < 0.25 {
        return excess_series(alpha, t).ln();
    }
    let p = if t.is_finite() {
        alpha * t.ln_1p()
    } else {
        alpha * (lq + l + ((1.0 - q) / q * (-l).exp()).ln_1p())
    };
    if p > 1.0 {
        // t > 0 here; ln g = p + ln(1 − (1 + αt)e^{−p}).
        let log_1_alpha_t = log1p_exp(alpha.ln() + log_t);
        p + (-(log_1_alpha_t - p).exp()).ln_1p()
    } else {
        (p.exp_m1() - alpha * t).ln()
    }
}

/// Σ_{k≥2} C(α,k) t^k = (1+t)^α − 1 − αt for |t| < 1, summed until the terms are negligible
/// (for the small |t| where it is used, the leading term C(α,2)t² > 0 dominates).
fn excess_series(alpha: f64, t: f64) -> f64 {
    let mut c = alpha * (alpha - 1.0) / 2.0;
    let mut tk = t * t;
    let mut sum = c * tk;
    for k in 2..60 {
        let kf = k as f64;
        c *= (alpha - kf) / (kf + 1.0);
        tk *= t;
        let term = c * tk;
        sum += term;
        if term.abs() <= 1e-17 * sum.abs() {
            break;
        }
    }
    sum
}

/// ln(A_α − 1) at fractional α by composite Gauss–Legendre quadrature on the grid of
/// [`panels`], summed in linear space with the scale e^{−S} of the module doc. `None` when the
/// scaled sum is not a normal positive float (then use [`log_a_minus_1_quadrature`]).
///
/// Per node: t = q·expm1(L); the integrand (1+t)^α − 1 − αt is the series for |t| < 0.1 (no
/// cancellation), else exp(α·ln(1+t)) − (1 + αt), where the cancellation costs at most a few
/// units in 1e-13 relative (the integrand is then ≥ C(α,2)·0.01·min(1, (1+t)^{α−2})).
fn log_a_minus_1_linear(q: f64, z: f64, alpha: f64) -> Option<f64> {
    let two_z2 = 2.0 * z * z;
    let (lo, width, count) = panels(z, alpha);
    if (2.0 * (lo + count * width) - 1.0) / two_z2 > 700.0 {
        return None; // e^L would overflow at the right end
    }
    let scale =
        alpha * std::f64::consts::LN_2 + (alpha * q.ln() + alpha * (alpha - 1.0) / two_z2).max(0.0);
    let half = width / 2.0;
    let log_norm = (half / (z * (2.0 * std::f64::consts::PI).sqrt())).ln() - scale;
    let nodes = gauss_legendre();
    let mut sum = 0.0;
    for p in 0..count as usize {
        let mid = lo + (p as f64 + 0.5) * width;
        for &(u, w, _) in nodes {
            let x = mid + half * u;
            let t = q * ((2.0 * x - 1.0) / two_z2).exp_m1();
            let log_weight = log_norm - x * x / two_z2;
            let value = if t.abs() < 0.1 {
                excess_series(alpha, t) * log_weight.exp()
            } else {
                (alpha * t.ln_1p() + log_weight).exp() - (1.0 + alpha * t) * log_weight.exp()
            };
            sum += w * value;
        }
    }
    (sum.is_normal() && sum > 0.0).then(|| sum.ln() + scale)
}

/// ln(A_α − 1) at fractional α by the same quadrature as [`log_a_minus_1_linear`], summed in
/// log space (slower; for parameters whose scaled linear sum would overflow or underflow).
fn log_a_minus_1_quadrature(q: f64, z: f64, alpha: f64) -> f64 {
    let lq = q.ln();
    let two_z2 = 2.0 * z * z;
    let (lo, width, count) = panels(z, alpha);
    let log_norm = -(z * (2.0 * std::f64::consts::PI).sqrt()).ln();
    let nodes = gauss_legendre();
    let mut acc = LogSum::new();
    let half = width / 2.0;
    let log_half = half.ln();
    for p in 0..count as usize {
        let mid = lo + (p as f64 + 0.5) * width;
        for &(u, _, log_w) in nodes {
            let x = mid + half * u;
            let l = (2.0 * x - 1.0) / two_z2;
            let lg = log_excess(q, lq, alpha, l);
            acc.add(lg - x * x / two_z2 + log_norm + log_w + log_half);
        }
    }
    acc.value()
}

/// The RDP curve of `steps` DP-SGD steps: `steps` × one Poisson-subsampled Gaussian step
/// (MTZ19, arXiv 1908.10530; composition, THEORY.md §9). Preconditions as in
/// [`subsampled_gaussian_rdp`]; `steps` ≥ 1.
pub fn dpsgd_curve(q: f64, z: f64, steps: u64) -> Result<RdpCurve> {
    if steps == 0 {
        return Err(Error::invalid("steps", steps, "must be >= 1"));
    }
    RdpCurve::subsampled_gaussian(q, z)?.times(steps as f64)
}

/// The guarantee of `steps` DP-SGD steps with Poisson sampling rate `q` and noise multiplier `z`
/// (add/remove-one; MTZ19 arXiv 1908.10530 with Abadi et al. 2016 arXiv 1607.00133).
pub fn dpsgd_guarantee(q: f64, z: f64, steps: u64) -> Result<Guarantee> {
    Ok(Guarantee::rdp(
        dpsgd_curve(q, z, steps)?,
        Neighbours::AddRemove,
    ))
}

/// ε(δ) of `steps` DP-SGD steps by CKS20 Prop. 12 on dp_accounting's default order grid (the
/// number comparable with dp_accounting). For the continuous-order optimum use
/// [`super::convert::rdp_epsilon`] on [`dpsgd_curve`].
pub fn dpsgd_epsilon_grid(q: f64, z: f64, steps: u64, delta: f64) -> Result<EpsAtOrder> {
    check_delta("delta", delta)?;
    super::convert::rdp_epsilon_on(&dpsgd_curve(q, z, steps)?, delta, &default_orders())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worked_numbers_from_theory() {
        // THEORY.md §13 table: single step.
        let cases = [
            (0.02, 1.5, 1.5, 1.66804e-4),
            (0.02, 1.5, 2.0, 2.23824e-4),
            (0.02, 1.5, 2.5, 2.81588e-4),
            (0.02, 1.5, 8.0, 9.73474e-4),
            (0.05, 0.9, 1.5, 4.22874e-3),
            (0.05, 0.9, 2.5, 8.28057e-3),
            (0.05, 0.9, 8.0, 1.51853),
            (0.05, 0.9, 32.0, 16.6607),
        ];
        for (q, z, a, v) in cases {
            let e = subsampled_gaussian_rdp(q, z, a).unwrap();
            assert!((e - v).abs() <= 1e-5 * v, "q={q} z={z} a={a}: {e} vs {v}");
        }
        // Closed form at α = 2: ln(1 + q²(e^{1/z²} − 1)).
        let (q, z) = (0.01f64, 1.3f64);
        let exact = (q * q * (1.0 / (z * z)).exp_m1()).ln_1p();
        let e = subsampled_gaussian_rdp(q, z, 2.0).unwrap();
        assert!((e - exact).abs() <= 1e-14 * exact);
        // Fractional orders sit between their integer neighbours.
        let e25 = subsampled_gaussian_rdp(q, z, 2.5).unwrap();
        assert!(e < e25 && e25 < subsampled_gaussian_rdp(q, z, 3.0).unwrap());
        let g = subsampled_gaussian_rdp(1.0, 2.0, 3.0).unwrap();
        assert!(g >= 3.0 / 8.0 && g <= (3.0f64 / 8.0).next_up());
    }

    #[test]
    fn fractional_lower_bound_is_below_the_quadrature() {
        for (q, z) in [
            (0.01, 1.0),
            (0.1, 0.8),
            (1e-4, 3.0),
            (0.5, 0.5),
            (0.02, 10.0),
        ] {
            let mut bound = FractionalLowerBound::new(q, z);
            let mut tight = 0;
            for a in default_orders().into_iter().filter(|a| a.fract() != 0.0) {
                let (lb, e) = (bound.at(a), rdp_unchecked(q, z, a));
                assert!(lb <= e, "q={q} z={z} a={a}: {lb} > {e}");
                // Tighter than the value at the order below wherever convexity adds something.
                tight += usize::from(a >= 2.0 && lb > rdp_unchecked(q, z, a.floor()));
            }
            assert!(tight > 0, "q={q} z={z}");
        }
    }

    #[test]
    fn bad_input_names_the_parameter() {
        let name = |r: Result<f64>| match r {
            Err(Error::InvalidParameter { name, .. }) => name,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            name(subsampled_gaussian_rdp(0.0, 1.0, 2.0)),
            "sampling_rate"
        );
        assert_eq!(
            name(subsampled_gaussian_rdp(1.5, 1.0, 2.0)),
            "sampling_rate"
        );
        assert_eq!(
            name(subsampled_gaussian_rdp(0.1, 0.0, 2.0)),
            "noise_multiplier"
        );
        assert_eq!(name(subsampled_gaussian_rdp(0.1, 1.0, 1.0)), "order");
        assert!(dpsgd_curve(0.1, 1.0, 0).is_err());
    }
}
