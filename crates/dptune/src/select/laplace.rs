//! Report-noisy-max with Laplace noise, on a power-of-two grid with exact discrete noise.

use super::lazy_max::LazyLaplaceMax;
use super::Selector;
use super::{Calibrated, Scores, Snapped};
use crate::error::{check_positive, Error, Result};
use crate::noise::SecureRng;
use crate::numeric::quadrature::{gauss_legendre_unit, integrate};
use crate::privacy::Guarantee;

/// argmax_i (u_i + Lap(R/ε)), R = Δ (monotone) or 2Δ.
///
/// * **Theorem.** Dwork & Roth 2014, Claim 3.9 (counting queries; the general case reduces to
///   the monotone one by shifting u(D′) by −Δ·1): ε-DP. THEORY.md §2.1. The scale **must** be
///   R/ε: Lap(Δ/ε) on non-monotone scores loses 2ε − ln(1 + ε) (regression-tested).
/// * **Preconditions.** Per-candidate sensitivity Δ under the allowance's neighbour relation
///   (same sign if `monotonic`).
/// * **Charged.** ε pure.
/// * **Sampling.** Scores are snapped to the grid 2^k, k = ⌊log2 Δ⌋ − 40, so the snapped
///   scores have integer per-candidate sensitivity D = ⌈Δ/2^k⌉ + 1 (the rounding is charged
///   here); each gets exact discrete Laplace noise P(y) ∝ exp(−|y|·ε/R_D) with R_D = D or 2D
///   (the difference of two exact CKS20 geometrics). Claim 3.9's proof goes through verbatim
///   for integer noise whose pmf ratio under an integer shift s is at most exp(ε s / R_D), with
///   ties broken by the lowest index (a fixed rule). The effective scale is
///   R_D·2^k/ε ≤ (R/ε)(1 + 2^−39).
/// * **Speed.** The argmax is exact but lazy (`lazy_max`): every candidate draws its noise
///   only to the block of width ≈ R_D/ε that holds it (about two random words), and only the
///   candidates whose block can still reach the maximum draw the rest. The output distribution
///   is exactly that of drawing every noise in full.
#[derive(Debug, Clone)]
pub struct LaplaceNoisyMax {
    snapped: Snapped,
    oriented: Vec<f64>,
    sampler: LazyLaplaceMax,
    scale: f64,
    guarantee: Guarantee,
}

impl LaplaceNoisyMax {
    /// Prepares the mechanism on validated `scores` for the ε of `allowance`, which must be one
    /// pure-ε bound (it is what a selection spends; else an error naming `allowance`); its
    /// neighbour relation is the one the scores' sensitivity refers to.
    pub fn new(scores: &Scores<'_>, allowance: &Guarantee) -> Result<Self> {
        let cal = Calibrated::new(scores, allowance, "report-noisy-max with Laplace noise")?;
        let sampler = LazyLaplaceMax::new(&cal.rate);
        let scale = cal.steps as f64 * cal.snapped.grid.step() / cal.epsilon;
        Ok(Self {
            snapped: cal.snapped,
            oriented: scores.oriented(),
            sampler,
            scale,
            guarantee: allowance.clone(),
        })
    }

    /// The effective Laplace scale R_D·2^k/ε (slightly above R/ε, see the type's docs).
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// Selection probabilities of argmax(u + Lap(b)) with continuous noise at the effective
    /// scale, by quadrature (accurate to about 1e-12; the implemented grid mechanism differs
    /// from it only through the 2^−40-relative grid). Cost O(m²·pieces); meant for small m.
    pub fn probabilities(&self) -> Result<Vec<f64>> {
        laplace_rnm_probabilities(&self.oriented, self.scale)
    }
}

impl Selector for LaplaceNoisyMax {
    type Output = usize;

    /// ε pure.
    fn guarantee(&self) -> &Guarantee {
        &self.guarantee
    }

    fn draw(&self, rng: &mut SecureRng) -> usize {
        self.sampler.argmax(&self.snapped.vals, rng)
    }
}

/// P[argmax_i (u_i + Lap(scale)) = i] for continuous Laplace noise, by exact Gauss–Legendre on
/// the tails (polynomials after t = e^{∓x/b}) and composite Gauss–Legendre between the scores.
/// −∞ scores get probability 0. Any `scale` > 0 is accepted (tests use it to evaluate *wrong*
/// calibrations). Requires at most 10 000 candidates.
pub fn laplace_rnm_probabilities(scores: &[f64], scale: f64) -> Result<Vec<f64>> {
    check_positive("scale", scale)?;
    if scores.len() > 10_000 || scores.iter().any(|s| s.is_nan() || *s == f64::INFINITY) {
        return Err(Error::invalid(
            "scores",
            scores.len(),
            "quadrature needs at most 10000 scores, none NaN or +inf",
        ));
    }
    let b = scale;
    let live: Vec<usize> = (0..scores.len())
        .filter(|&i| scores[i].is_finite())
        .collect();
    let u: Vec<f64> = live.iter().map(|&i| scores[i]).collect();
    let m = u.len();
    let hi = u.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let lo = u.iter().copied().fold(f64::INFINITY, f64::min);
    let cdf = |z: f64| {
        if z < 0.0 {
            0.5 * (z / b).exp()
        } else {
            1.0 - 0.5 * (-z / b).exp()
        }
    };
    let pdf = |z: f64| (-(z.abs()) / b).exp() / (2.0 * b);
    let mut probs = vec![0.0; m];
    // Right tail x ≥ hi, t = exp(−(x − hi)/b): ½ a_i ∏_{j≠i}(1 − ½ a_j t), a = e^{−(hi−u)/b}.
    let a: Vec<f64> = u.iter().map(|&x| (-(hi - x) / b).exp()).collect();
    for &(t, w) in &gauss_legendre_unit(m / 2 + 2) {
        for i in 0..m {
            let prod: f64 = (0..m)
                .filter(|&j| j != i)
                .map(|j| 1.0 - 0.5 * a[j] * t)
                .product();
            probs[i] += w * 0.5 * a[i] * prod;
        }
    }
    // Left tail x ≤ lo, t = exp((x − lo)/b): ½ c_i ∏_{j≠i}(½ c_j t) integrates to
    // ∏_j(½ c_j)/m for every i, c = e^{(lo−u)/b}.
    let logc: Vec<f64> = u.iter().map(|&x| (lo - x) / b).collect();
    let sum_log: f64 = logc.iter().map(|l| l + 0.5f64.ln()).sum();
    let left = sum_log.exp() / m as f64;
    for p in probs.iter_mut() {
        *p += left;
    }
    // Middle: between consecutive distinct scores.
    let mut cuts = u.clone();
    cuts.sort_by(f64::total_cmp);
    cuts.dedup();
    for w in cuts.windows(2) {
        let pieces = (((w[1] - w[0]) / (b / 4.0)).ceil() as usize).clamp(1, 4000);
        for i in 0..m {
            probs[i] += integrate(
                |x| {
                    pdf(x - u[i])
                        * (0..m)
                            .filter(|&j| j != i)
                            .map(|j| cdf(x - u[j]))
                            .product::<f64>()
                },
                w[0],
                w[1],
                pieces,
            );
        }
    }
    let mut out = vec![0.0; scores.len()];
    for (k, &i) in live.iter().enumerate() {
        out[i] = probs[k];
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_candidate_closed_form() {
        // P[second wins] = e^{−t/b}(2 + t/b)/4.
        let p = laplace_rnm_probabilities(&[1.0, 0.0], 0.5).unwrap();
        let want = (-2.0f64).exp() * 4.0 / 4.0;
        assert!((p[1] - want).abs() < 1e-13, "{} {want}", p[1]);
        assert!((p[0] + p[1] - 1.0).abs() < 1e-13);
    }
}
