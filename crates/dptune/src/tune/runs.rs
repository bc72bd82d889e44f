//! The number of runs K: drawing it exactly, and bounding its tail for capped tunings.

use statrs::function::gamma::ln_gamma;

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

/// An upper bound on P[K > cap], for the truncation lemma.
///
/// Both distributions have pmf ratios p(k+1)/p(k) that are eventually below some r < 1:
/// D_{η,γ}: (1−γ)(k+η)/(k+1) (η > 0) or (1−γ)k/(k+1) (η = 0); Poisson(μ): μ/(k+1). Then
/// P[K > T] ≤ p(T+1)/(1 − r) with r the ratio bound at k = T+1. Where no such r < 1 exists at
/// this cap, the bound is 1.
pub fn tail_probability(repeats: &Repeats, cap: u64) -> Result<f64> {
    let k = cap as f64 + 1.0;
    let (log_p, ratio) = match *repeats {
        Repeats::TruncatedNegativeBinomial { eta, gamma } => {
            let log_q = (-gamma).ln_1p();
            let log_p = if eta == 0.0 {
                k * log_q - k.ln() - (-gamma.ln()).ln()
            } else {
                // (1−γ)^k/(γ^{−η} − 1) · Γ(k+η)/(Γ(η)·Γ(k+1))
                k * log_q - (-eta * gamma.ln()).exp_m1().ln() + ln_gamma(k + eta)
                    - ln_gamma(eta)
                    - ln_gamma(k + 1.0)
            };
            let ratio = (1.0 - gamma) * ((k + eta.max(0.0)) / (k + 1.0)).max(k / (k + 1.0));
            (log_p, ratio)
        }
        Repeats::Poisson { mean } => {
            let log_p = -mean + k * mean.ln() - ln_gamma(k + 1.0);
            (log_p, mean / (k + 1.0))
        }
    };
    if ratio.is_nan() || ratio >= 1.0 || !log_p.is_finite() {
        return Ok(1.0);
    }
    // A relative margin of 1e-9 covers the float error of ln_gamma and exp.
    Ok((log_p.exp() / (1.0 - ratio) * (1.0 + 1e-9)).min(1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geometric_tail_is_bounded_by_the_closed_form() {
        // Geometric γ: P[K > T] = (1−γ)^T exactly; the bound must be ≥ it and close.
        let g = Repeats::geometric(0.1).unwrap();
        for t in [1u64, 10, 100] {
            let exact = 0.9f64.powi(t as i32);
            let b = tail_probability(&g, t).unwrap();
            assert!(
                b >= exact && b <= exact * 1.000_001 + 1e-300,
                "T={t}: {b} vs {exact}"
            );
        }
        let p = Repeats::poisson(10.0).unwrap();
        assert_eq!(tail_probability(&p, 5).unwrap(), 1.0);
        assert!(tail_probability(&p, 60).unwrap() < 1e-20);
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
