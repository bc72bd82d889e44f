//! Permute-and-flip (= report-noisy-max with exponential noise), sampled exactly.

use super::exact::Rate;
use super::quadrature::gauss_legendre_unit;
use super::{check_epsilon, gap, oriented_scores, Goal, Sensitivity, Snapped};
use crate::error::Result;
use crate::noise::SecureRng;
use crate::privacy::{Guarantee, Ledger, Neighbours, Release};

/// Permute-and-flip: visit the candidates in a uniformly random order and return r with
/// probability exp(ε(u_r − u*)/R), u* = max u.
///
/// * **Theorem.** McKenna & Sheldon, NeurIPS 2020, arXiv 2010.12603, Thm 1 (ε-DP; Remark 1 for
///   monotone scores with R = Δ). Equal in distribution to report-noisy-max with i.i.d.
///   Exponential(R/ε) noise (Ding et al., arXiv 2105.07260). THEORY.md §2.2.
/// * **Preconditions.** As the exponential mechanism: per-candidate sensitivity Δ (same sign
///   if `monotonic`), public exclusions.
/// * **Charged.** ε pure **only**: PF is not ε-bounded-range, so EM's ε²/8-zCDP bound does not
///   apply (THEORY.md §1.2). Under zCDP composition use [`super::ExponentialMechanism`].
/// * **Sampling.** Online Fisher–Yates; each visited candidate is accepted with an exact
///   Bernoulli(exp(−(u* − u_r)ε/R)) on the snapped scores (R inflated by the grid rounding,
///   see [`super::ExponentialMechanism`]). The maximiser is accepted with probability 1, so at
///   most m proposals are made.
#[derive(Debug, Clone)]
pub struct PermuteAndFlip {
    snapped: Snapped,
    rate: Rate,
    guarantee: Guarantee,
}

impl PermuteAndFlip {
    /// Validates the inputs (errors name `scores` or `epsilon`).
    pub fn new(
        scores: &[f64],
        goal: Goal,
        sensitivity: Sensitivity,
        epsilon: f64,
        neighbours: Neighbours,
    ) -> Result<Self> {
        let oriented = oriented_scores(scores, goal)?;
        check_epsilon(epsilon)?;
        let snapped = Snapped::new(&oriented, sensitivity.delta());
        let rate = Rate::new(epsilon, snapped.range_steps(sensitivity.is_monotonic()));
        Ok(Self {
            snapped,
            rate,
            guarantee: Guarantee::pure(epsilon, neighbours)?,
        })
    }

    /// ε pure.
    pub fn guarantee(&self) -> &Guarantee {
        &self.guarantee
    }

    /// Exact selection probabilities P[i] = p_i ∫₀¹ ∏_{j≠i}(1 − p_j t) dt (a polynomial
    /// integrated exactly by ⌈m/2⌉ + 1 Gauss–Legendre nodes). Cost O(m²).
    pub fn probabilities(&self) -> Vec<f64> {
        let c = self.rate.approx;
        let p: Vec<f64> = (0..self.snapped.vals.len())
            .map(|i| self.snapped.gap(i).map_or(0.0, |g| (-(g as f64) * c).exp()))
            .collect();
        pf_probabilities(&p)
    }

    /// Draws one index (no accounting; see [`PermuteAndFlip::select_charged`]).
    pub fn select(&self, rng: &mut SecureRng) -> Release<usize> {
        let mut order: Vec<usize> = (0..self.snapped.vals.len()).collect();
        Release {
            value: pf_draw(
                rng,
                &self.snapped.vals,
                &mut order,
                self.snapped.max,
                &self.rate,
            ),
            spent: self.guarantee.clone(),
        }
    }

    /// Charges the ledger, then selects.
    pub fn select_charged(
        &self,
        ledger: &mut Ledger,
        rng: &mut SecureRng,
    ) -> Result<Release<usize>> {
        ledger.charge(&self.guarantee)?;
        Ok(self.select(rng))
    }
}

/// PF probabilities from acceptance probabilities p (max p = 1).
pub(crate) fn pf_probabilities(p: &[f64]) -> Vec<f64> {
    let nodes = gauss_legendre_unit(p.len() / 2 + 2);
    let mut out = vec![0.0; p.len()];
    for &(t, w) in &nodes {
        let total: f64 = p.iter().map(|&pj| (-pj * t).ln_1p()).sum();
        for (o, &pi) in out.iter_mut().zip(p) {
            if pi > 0.0 {
                *o += w * pi * (total - (-pi * t).ln_1p()).exp();
            }
        }
    }
    out
}

/// One PF draw over the candidates in `order` (shuffled in place); returns the candidate.
pub(crate) fn pf_draw(
    rng: &mut SecureRng,
    vals: &[i128],
    order: &mut [usize],
    top: i128,
    rate: &Rate,
) -> usize {
    let n = order.len();
    for s in 0..n {
        let j = s + rng.below_u64((n - s) as u64) as usize;
        order.swap(s, j);
        let r = order[s];
        if let Some(g) = gap(top, vals[r]) {
            if rate.bernoulli_exp(rng, g) {
                return r;
            }
        }
    }
    // Unreachable: the maximiser (gap 0) is always accepted. Return it to stay total.
    vals.iter().position(|&v| v == top).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn theory_worked_numbers() {
        let pf = PermuteAndFlip::new(
            &[800.0, 820.0, 850.0, 790.0],
            Goal::Maximize,
            Sensitivity::general(1.0).unwrap(),
            0.1,
            Neighbours::Replace,
        )
        .unwrap();
        let want = [0.037385, 0.106737, 0.833441, 0.022437];
        for (p, w) in pf.probabilities().iter().zip(want) {
            assert!((p - w).abs() < 1e-6, "{p} {w}");
        }
        // Pure only: no ε²/8 zCDP claim (THEORY.md §1.2).
        assert!(!pf
            .guarantee()
            .bounds()
            .iter()
            .any(|b| matches!(b, crate::privacy::Bound::Zcdp { .. })));
    }
}
