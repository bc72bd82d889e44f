//! ln(A_α − 1) at integer orders by the exact binomial sum, in log space with its float error
//! bounded (module doc of [`super`]).

use std::sync::OnceLock;

use super::{ln_expm1, MAX_BINOMIAL_ORDER};

/// ln k for k = 0..=[`MAX_BINOMIAL_ORDER`] (entry 0 unused), computed once: the binomial sums
/// build ln C(n,k) from these by additions instead of a logarithm per term.
pub(super) fn ln_integers() -> &'static [f64] {
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
pub(super) const SUM_WINDOW: f64 = 50.0;

/// ln(A_α − 1) at integer α = n ≥ 2 by the binomial sum (every term ≥ 0), rounded up.
///
/// ln term_k = ln C(n,k) + (n−k)·ln(1−q) + k·ln q + ln(e^{c_k} − 1), c_k = (k² − k)/(2z²), with
/// ln C(n,k) built by the recurrence ln C(n,k−1) + ln(n−k+1) − ln k from a table of logarithms
/// ([`ln_integers`]), and ln(e^c − 1) replaced by its upper bound c where c > 40 (the two differ
/// by less than e^{−40}). Only terms within [`SUM_WINDOW`] of the largest are exponentiated.
/// The float error of each log-term is bounded as it is computed (a few units of ε_mach times
/// the magnitudes added, accumulated along the recurrence), and the largest such bound is added
/// to the result, so the value returned is not below the exact ln(A_α − 1).
pub(super) fn log_a_minus_1_integer(q: f64, z: f64, n: u64) -> f64 {
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
