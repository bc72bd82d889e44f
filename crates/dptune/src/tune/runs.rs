//! The number of runs K: drawing it exactly, and bounding its tail for capped tunings.

use crate::error::Result;
use crate::noise::{Poisson, SecureRng, TruncatedNegativeBinomial};
use crate::privacy::repeat::Repeats;

/// Draws K from `repeats` with the exact samplers of [`crate::noise`].
pub fn draw_runs(repeats: &Repeats, rng: &mut SecureRng) -> Result<u64> {
    match *repeats {
        Repeats::TruncatedNegativeBinomial { eta, gamma } => {
            Ok(TruncatedNegativeBinomial::new(eta, gamma)?.sample(rng))
        }
        Repeats::Poisson { mean } => Ok(Poisson::from_mean(mean)?.sample(rng)),
    }
}

/// Unit roundoff of `f64`.
const U: f64 = f64::EPSILON / 2.0;

/// Most terms the forward sum of [`tail_probability`] adds before the remainder bound takes over.
const MAX_TERMS: u64 = 1 << 24;

/// An upper bound on P\[K > cap\], for the truncation lemma (rounded up; 1 where no bound < 1 is
/// found).
///
/// P\[K > T\] = p(T+1)·Σ_{j≥0} Π_{i<j} r(T+1+i) with r(k) = p(k+1)/p(k) the pmf ratio:
/// D_{η,γ}: r(k) = (1−γ)(k+η)/(k+1) (η = 0 included); Poisson(μ): r(k) = μ/(k+1). The sum is
/// added term by term until the rest is below 1e-17 of it (or `MAX_TERMS` terms), and the
/// rest after the last term t_j is bounded by t_j/(1 − r̄) with r̄ = sup_{k ≥ current k} r(k):
///
/// * η ≤ 1: r(k) = (1−γ)(1 − (1−η)/(k+1)) *increases* to 1−γ, so r̄ = 1−γ. (The ratio at T+1
///   is not a bound on later ratios: using it, as this function once did, understated the tail
///   of the default logarithmic K by up to 34 % at cap 10.)
/// * η > 1 and Poisson: r(k) decreases, so r̄ = r(current k), usable once it is below 1.
///
/// p(T+1) comes from p(1) (p(0) = e^{−μ} for Poisson) by adding ln r(k) for k below T+1 in log
/// space (O(cap) work, no log-gamma whose accuracy is not bounded), with a running bound on the
/// float error of every logarithm (libm's ln, ln_1p, exp_m1 taken as accurate to 2 ulps) and
/// sum; that bound is added to ln p(T+1). The forward sum's own error (each term a product of
/// j ratios, each off by at most 5 units of roundoff, plus the additions) is below 7·N·U
/// relative for N terms and is charged as a factor 1 + 8(N+2)U. The result is rounded up.
pub fn tail_probability(repeats: &Repeats, cap: u64) -> Result<f64> {
    let ratio = |k: f64| match *repeats {
        Repeats::TruncatedNegativeBinomial { eta, gamma } => (1.0 - gamma) * (k + eta) / (k + 1.0),
        Repeats::Poisson { mean } => mean / (k + 1.0),
    };
    // sup_{k' ≥ k} r(k'), rounded up.
    let ratio_sup = |k: f64| match *repeats {
        Repeats::TruncatedNegativeBinomial { eta, gamma } if eta <= 1.0 => (1.0 - gamma).next_up(),
        _ => ratio(k).next_up().next_up(),
    };
    let (log_p, log_err) = log_pmf_upper(repeats, cap);
    let (mut sum, mut term, mut k) = (0.0f64, 1.0f64, cap as f64 + 1.0);
    let mut n = 0u64;
    let rest = loop {
        sum += term;
        term *= ratio(k);
        k += 1.0;
        n += 1;
        let sup = ratio_sup(k);
        if sup < 1.0 {
            let rest = term / (1.0 - sup).next_down();
            if rest <= 1e-17 * sum || n >= MAX_TERMS {
                break rest;
            }
        } else if n >= MAX_TERMS || !term.is_finite() {
            return Ok(1.0);
        }
    };
    let factor = 1.0 + 8.0 * (n as f64 + 2.0) * U;
    let log_tail = log_p + log_err + ((sum + rest) * factor).ln();
    let tail = log_tail.exp().next_up().next_up().next_up();
    Ok(if tail.is_nan() { 1.0 } else { tail.min(1.0) })
}

/// ln p(cap + 1) and a bound on its float error (see [`tail_probability`]).
fn log_pmf_upper(repeats: &Repeats, cap: u64) -> (f64, f64) {
    // Each term of a running bound is 8U times the magnitudes a step combines: at most two
    // libm calls (2 ulps = 4U each) and the roundings of its few operations.
    let e = |parts: &[f64]| 8.0 * U * parts.iter().map(|x| x.abs()).sum::<f64>();
    match *repeats {
        Repeats::TruncatedNegativeBinomial { eta, gamma } => {
            let a = (-gamma).ln_1p();
            let (mut acc, mut err) = if eta == 0.0 {
                // p(1) = (1−γ)/ln(1/γ)
                let ll = (-gamma.ln()).ln();
                (a - ll, e(&[a, 1.0, ll, a - ll]))
            } else {
                // p(1) = (1−γ)η/(γ^{−η} − 1); exp_m1(x) is off by 3U·|x|/(1 − e^{−x}) ≤ 3U(x + 1)
                // relative to the error of x = −η ln γ.
                let x = -eta * gamma.ln();
                let (le, lm) = (eta.ln(), x.exp_m1().ln());
                let v = a + le - lm;
                (v, e(&[a, le, x, 1.0, lm, v]))
            };
            for k in 1..=cap {
                let d = (eta - 1.0) / (k as f64 + 1.0);
                let b = d.ln_1p();
                acc += a + b;
                err += e(&[a, d, b, acc]);
            }
            (acc, err)
        }
        Repeats::Poisson { mean } => {
            let lm = mean.ln();
            let (mut acc, mut err) = (-mean, 0.0);
            for k in 0..=cap {
                let b = (k as f64 + 1.0).ln();
                acc += lm - b;
                err += e(&[lm, b, acc]);
            }
            (acc, err)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// P\[K > T\] from 1 − Σ_{k ≤ T} p(k) in 60-digit decimal arithmetic (Python `decimal`) for
    /// D_{η,γ} with γ = the float [`Repeats::tnb_with_mean`] returns for mean 10, and Poisson.
    const EXACT: [(f64, f64, u64, f64); 12] = [
        (0.0, 0.026_918_259_589_001_53, 10, 0.259924659651706),
        (0.0, 0.026_918_259_589_001_53, 50, 0.03323923839918533),
        (0.0, 0.026_918_259_589_001_53, 100, 0.005022589111696031),
        (0.5, 0.062_499_999_976_716_92, 10, 0.31829569799673463),
        (0.5, 0.062_499_999_976_716_92, 50, 0.013977381162152525),
        (0.5, 0.062_499_999_976_716_92, 100, 0.00041427449762347195),
        (1.0, 0.1, 10, 3.486_784_401e-1),
        (1.0, 0.1, 50, 0.005153775207320112),
        (1.0, 0.1, 100, 2.656139888758746e-05),
        (2.0, 0.170_820_393_227_040_82, 10, 0.37778192840860475),
        (2.0, 0.170_820_393_227_040_82, 50, 0.0007099730420506883),
        (2.0, 0.170_820_393_227_040_82, 100, 1.1420940501591926e-07),
    ];

    /// The bound this module used before: p(T+1)/(1 − r(T+1)) with the ratio at T+1 taken as a
    /// bound on every later ratio. Deliberately wrong for η < 1 (kept so the test shows teeth).
    fn wrong_tail(eta: f64, gamma: f64, cap: u64) -> f64 {
        use statrs::function::gamma::ln_gamma;
        let k = cap as f64 + 1.0;
        let log_q = (-gamma).ln_1p();
        let log_p = if eta == 0.0 {
            k * log_q - k.ln() - (-gamma.ln()).ln()
        } else {
            k * log_q - (-eta * gamma.ln()).exp_m1().ln() + ln_gamma(k + eta)
                - ln_gamma(eta)
                - ln_gamma(k + 1.0)
        };
        let ratio = (1.0 - gamma) * ((k + eta) / (k + 1.0)).max(k / (k + 1.0));
        log_p.exp() / (1.0 - ratio) * (1.0 + 1e-9)
    }

    #[test]
    fn tail_bound_is_at_least_the_exact_tail_and_close() {
        let mut rejected = 0;
        for (eta, gamma, cap, exact) in EXACT {
            let r = Repeats::tnb(eta, gamma).unwrap();
            let b = tail_probability(&r, cap).unwrap();
            assert!(
                b >= exact && b <= exact * (1.0 + 1e-9),
                "eta={eta} T={cap}: {b} vs {exact}"
            );
            // The same check rejects the old bound wherever η < 1.
            let w = wrong_tail(eta, gamma, cap);
            if w < exact {
                rejected += 1;
                assert!(eta < 1.0, "eta={eta} T={cap}");
            }
        }
        assert_eq!(rejected, 6, "the old bound fails at every eta < 1 case");
        // Geometric: P[K > T] = (1−γ)^T in closed form.
        let g = Repeats::geometric(0.1).unwrap();
        for t in [0u64, 1, 10, 100, 1000] {
            let exact = 0.9f64.powi(t as i32);
            let b = tail_probability(&g, t).unwrap();
            assert!(
                b >= exact && b <= exact * (1.0 + 1e-9),
                "T={t}: {b} vs {exact}"
            );
        }
        // Poisson(10): P[K > 5] = 0.932914037120968 and P[K > 30] = 7.98379465991118e-8
        // (50-digit decimal sums); the ratio 10/(k+1) exceeds 1 until k = 9, so the bound must
        // sum past it.
        let p = Repeats::poisson(10.0).unwrap();
        for (t, exact) in [(5, 0.932_914_037_120_968_2), (30, 7.983_794_659_911_185e-8)] {
            let b = tail_probability(&p, t).unwrap();
            assert!(
                b >= exact && b <= exact * (1.0 + 1e-9),
                "T={t}: {b} vs {exact}"
            );
        }
        assert!(tail_probability(&p, 80).unwrap() < 1e-30);
    }

    #[test]
    fn issue_numbers_for_the_default_logarithmic_repeats() {
        // Issue 13, finding 4: capped logarithmic mean-10 repeats. The truncation lemma charges
        // δ + (1 + e^ε)·P[K > T] ([`crate::tune::Tuner::cost`]); the issue's numbers are that
        // term for a tuning with ε = 1.0605 (all six agree with it): the old bound gave 0.670 /
        // 0.1149 / 0.01856 at caps 10 / 50 / 100 where the truth is 1.01 / 0.1292 / 0.01952.
        let r = Repeats::tnb_with_mean(0.0, 10.0).unwrap();
        let Repeats::TruncatedNegativeBinomial { gamma, .. } = r else {
            unreachable!()
        };
        assert!((gamma - EXACT[0].1).abs() < 1e-15, "{gamma}");
        let eps = 1.0605;
        let delta =
            |tail: f64| crate::privacy::repeat::truncation_delta(eps, 0.0, tail.min(1.0)).unwrap();
        for ((cap, old, truth), exact) in [
            (10, 0.670, 1.01),
            (50, 0.1149, 0.1292),
            (100, 0.01856, 0.01952),
        ]
        .into_iter()
        .zip([EXACT[0].3, EXACT[1].3, EXACT[2].3])
        {
            let wrong = delta(wrong_tail(0.0, gamma, cap));
            assert!((wrong - old).abs() < 1e-3 * old, "cap {cap}: {wrong}");
            assert!(wrong < truth, "cap {cap}");
            let now = delta(tail_probability(&r, cap).unwrap());
            assert!(now >= truth && now >= delta(exact), "cap {cap}: {now}");
        }
    }

    #[test]
    fn drawn_mean_matches_distribution_mean() {
        // Regression for the OpenDP rate/scale bug (PEERS.md §2.1): stop probability 0.01 must
        // average about 100 runs, not 1. 2000 draws: sd of the mean = sqrt(9900/2000) = 2.22;
        // 5 sd (false failure < 6e-7) around 100.
        let mut rng = SecureRng::seeded(9);
        let g = Repeats::geometric(0.01).unwrap();
        let mean = (0..2000)
            .map(|_| draw_runs(&g, &mut rng).unwrap() as f64)
            .sum::<f64>()
            / 2000.0;
        assert!((mean - 100.0).abs() < 5.0 * 2.23, "{mean}");
        // Logarithmic with mean 10 (γ = 0.0269) has sd ≈ 16.5: the mean of 4000 draws has sd
        // 0.26, so 1.5 is more than 5 sd.
        let l = Repeats::tnb_with_mean(0.0, 10.0).unwrap();
        let mean = (0..4000)
            .map(|_| draw_runs(&l, &mut rng).unwrap() as f64)
            .sum::<f64>()
            / 4000.0;
        assert!((mean - 10.0).abs() < 1.5, "{mean}");
        let p = Repeats::poisson(3.5).unwrap();
        let mean = (0..4000)
            .map(|_| draw_runs(&p, &mut rng).unwrap() as f64)
            .sum::<f64>()
            / 4000.0;
        // Poisson(3.5): sd of the mean = sqrt(3.5/4000) = 0.0296; 5 sd.
        assert!((mean - 3.5).abs() < 0.15, "{mean}");
    }
}
