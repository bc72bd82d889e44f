//! The exponential mechanism, sampled exactly by rejection.

use super::exact::{EmSampler, Levels};
use super::Selector;
use super::{gap, normalise_log_weights, Calibrated, Scores};
use crate::error::Result;
use crate::noise::SecureRng;
use crate::numeric::mul_up;
use crate::privacy::{Guarantee, Neighbours};

/// The exponential mechanism: P(i) ∝ exp(ε·u_i / R), R = Δ (monotone) or 2Δ.
///
/// * **Theorem.** McSherry & Talwar, FOCS 2007 (Thm 6, with ε′ = ε/(2Δ)); the range form R
///   is Rogers & Steinke, DifferentialPrivacy.org 2021-07-12 (footnote 3, credited to J. Dong):
///   ε-DP. EM is ε-bounded-range (Dong–Durfee–Rogers, arXiv 1909.13830, Prop. 2), hence
///   ε²/8-zCDP (Cesar & Rogers, arXiv 2004.07223, Lemma 3.2). THEORY.md §1.
/// * **Preconditions.** Every neighbouring pair (under the allowance's neighbour relation)
///   moves each score by at most Δ (all in the same direction if `monotonic`); the scores
///   themselves are computed on the private data with no other release; exclusions (−∞) are
///   public.
/// * **Charged.** ε (pure) and ε²/8 (zCDP), both stated in the returned guarantee.
/// * **Sampling.** Exact rejection (THEORY.md §1.3, as OpenDP's zCDP noisy-max): pick i
///   uniformly with replacement, accept with an exact Bernoulli(exp(−(u_max − u_i)·ε/R)) on
///   128-bit rationals (bignum fallback), its integer part drawn first so that most rejected
///   proposals cost two random words and no arithmetic (`exact::EmSampler`). Scores are first snapped to the grid 2^(⌊log2 Δ⌋−40)
///   and R is inflated by the rounding (one grid step per unit of Δ in R), which keeps the
///   rationals small; ε is unchanged. Expected proposals: m / Σ_i exp(−(u_max − u_i)ε/R) ≤ m.
///   The running time depends on the scores (THEORY.md §15).
#[derive(Debug, Clone)]
pub struct ExponentialMechanism {
    cal: Calibrated,
    sampler: EmSampler,
    guarantee: Guarantee,
}

impl ExponentialMechanism {
    /// Prepares the mechanism on validated `scores` for the ε of `allowance`, which must be one
    /// pure-ε bound (else an error naming `allowance`); its neighbour relation is the one the
    /// scores' sensitivity refers to.
    pub fn new(scores: &Scores<'_>, allowance: &Guarantee) -> Result<Self> {
        let cal = Calibrated::new(scores, allowance, "the exponential mechanism")?;
        let guarantee = em_guarantee(cal.epsilon, allowance.neighbours())?;
        let sampler = EmSampler::new(&cal.snapped.vals, cal.snapped.max, &cal.rate);
        Ok(Self {
            cal,
            sampler,
            guarantee,
        })
    }

    /// ε.
    pub fn epsilon(&self) -> f64 {
        self.cal.epsilon
    }

    /// The exact selection probabilities of the implemented mechanism, computed in log space.
    pub fn probabilities(&self) -> Vec<f64> {
        normalise_log_weights(&self.cal.log_weights())
    }
}

impl Selector for ExponentialMechanism {
    type Output = usize;

    /// What one selection spends: ε pure and ε²/8 zCDP.
    fn guarantee(&self) -> &Guarantee {
        &self.guarantee
    }

    fn draw(&self, rng: &mut SecureRng) -> usize {
        self.sampler.draw(rng, &self.cal.snapped.vals)
    }
}

/// ε pure and ε²/8 zCDP (rounded up).
pub(crate) fn em_guarantee(epsilon: f64, neighbours: Neighbours) -> Result<Guarantee> {
    Guarantee::pure(epsilon, neighbours)?.and(Guarantee::zcdp(
        mul_up(mul_up(epsilon, epsilon), 0.125),
        neighbours,
    )?)
}

/// Exact EM by rejection over the candidates listed in `live` (top = their maximum): j
/// uniform in `live`, accepted with an exact Bernoulli(exp(−gap·c)).
pub(crate) fn em_draw_among(
    rng: &mut SecureRng,
    vals: &[i128],
    live: &[usize],
    top: i128,
    levels: &Levels,
) -> usize {
    let m = live.len() as u64;
    loop {
        let j = rng.below_u64(m) as usize;
        if let Some(g) = gap(top, vals[live[j]]) {
            if levels.coin(rng, g) {
                return j;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::select::{Goal, Sensitivity};
    use Neighbours::AddRemove;

    #[test]
    fn theory_worked_numbers() {
        // THEORY.md §1.4.
        let c = [800.0, 820.0, 850.0, 790.0];
        let scores = Scores::new(&c, Goal::Maximize, Sensitivity::general(1.0).unwrap()).unwrap();
        let em =
            ExponentialMechanism::new(&scores, &Guarantee::pure(0.1, AddRemove).unwrap()).unwrap();
        let want = [0.060579, 0.164671, 0.738006, 0.036743];
        for (p, w) in em.probabilities().iter().zip(want) {
            assert!((p - w).abs() < 1e-6, "{p} {w}");
        }
        assert_eq!(em.guarantee().pure_eps(), Some(0.1));
        assert!((em.guarantee().zcdp_rho().unwrap() - 0.00125).abs() < 1e-15);
    }

    #[test]
    fn excluded_candidates_never_win() {
        let raw = [0.0, f64::NEG_INFINITY, 0.0];
        let scores = Scores::new(&raw, Goal::Maximize, Sensitivity::general(1.0).unwrap()).unwrap();
        let em =
            ExponentialMechanism::new(&scores, &Guarantee::pure(1.0, AddRemove).unwrap()).unwrap();
        assert_eq!(em.probabilities()[1], 0.0);
        let mut rng = SecureRng::seeded(1);
        for _ in 0..1000 {
            assert_ne!(em.select(&mut rng).value, 1);
        }
    }
}
