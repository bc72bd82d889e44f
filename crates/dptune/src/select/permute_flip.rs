//! Permute-and-flip (= report-noisy-max with exponential noise), sampled exactly.

use super::exact::Levels;
use super::Selector;
use super::{gap, Calibrated, Scores};
use crate::error::Result;
use crate::noise::SecureRng;
use crate::numeric::quadrature::gauss_legendre_unit;
use crate::privacy::Guarantee;

/// Permute-and-flip: visit the candidates in a uniformly random order and return r with
/// probability exp(ε(u_r − u*)/R), u* = max u.
///
/// * **Theorem.** McKenna & Sheldon, NeurIPS 2020, arXiv 2010.12603, Thm 1 (ε-DP; Remark 1 for
///   monotone scores with R = Δ). Equal in distribution to report-noisy-max with i.i.d.
///   Exponential(R/ε) noise (Ding et al., arXiv 2105.07260). THEORY.md §2.2.
/// * **Preconditions.** As the exponential mechanism: per-candidate sensitivity Δ under the
///   allowance's neighbour relation (same sign if `monotonic`), public exclusions.
/// * **Charged.** ε pure **only**: PF is not ε-bounded-range, so EM's ε²/8-zCDP bound does not
///   apply (THEORY.md §1.2). Under zCDP composition use [`super::ExponentialMechanism`].
/// * **Sampling.** PF returns the first candidate, in a uniformly random order, whose own
///   independent coin C_r ~ Bernoulli(p_r), p_r = exp(−(u* − u_r)ε/R), comes up heads. The
///   coins do not depend on the order, so they may all be flipped first; given the coins, the
///   first head in a uniform order is a uniform element of the set of heads (never empty: the
///   maximiser has p = 1). The sampler therefore flips every coin exactly (snapped scores, R
///   inflated by the grid rounding, see [`super::ExponentialMechanism`]; the integer part of
///   each exponent is drawn first, so a far candidate costs about one random word and no
///   arithmetic) and returns a uniform head: the same distribution as the sequential loop,
///   with m coins whatever the scores (no shuffle, no data-dependent number of proposals).
#[derive(Debug, Clone)]
pub struct PermuteAndFlip {
    cal: Calibrated,
    levels: Levels,
    guarantee: Guarantee,
}

impl PermuteAndFlip {
    /// Prepares the mechanism on validated `scores` for the ε of `allowance`, which must be one
    /// pure-ε bound (it is what a selection spends; else an error naming `allowance`); its
    /// neighbour relation is the one the scores' sensitivity refers to.
    pub fn new(scores: &Scores<'_>, allowance: &Guarantee) -> Result<Self> {
        let cal = Calibrated::new(scores, allowance, "permute-and-flip")?;
        Ok(Self {
            levels: cal.rate.levels(),
            cal,
            guarantee: allowance.clone(),
        })
    }

    /// The number of candidates.
    pub fn candidates(&self) -> usize {
        self.cal.snapped.vals.len()
    }

    /// Exact selection probabilities P\[i\] = p_i ∫₀¹ ∏_{j≠i}(1 − p_j t) dt (a polynomial
    /// integrated exactly by ⌈m/2⌉ + 1 Gauss–Legendre nodes). Cost O(m²).
    pub fn probabilities(&self) -> Vec<f64> {
        let p: Vec<f64> = self.cal.log_weights().iter().map(|l| l.exp()).collect();
        pf_probabilities(&p)
    }
}

impl Selector for PermuteAndFlip {
    type Output = usize;

    /// ε pure.
    fn guarantee(&self) -> &Guarantee {
        &self.guarantee
    }

    fn draw(&self, rng: &mut SecureRng) -> usize {
        let vals = &self.cal.snapped.vals;
        pf_draw(rng, vals, 0..vals.len(), self.cal.snapped.max, &self.levels)
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

/// One PF draw over `candidates` (top = their maximum): every coin is flipped, and a uniform
/// head is returned (see [`PermuteAndFlip`]).
pub(crate) fn pf_draw(
    rng: &mut SecureRng,
    vals: &[i128],
    candidates: impl IntoIterator<Item = usize>,
    top: i128,
    levels: &Levels,
) -> usize {
    let mut heads = Vec::new();
    for r in candidates {
        if let Some(g) = gap(top, vals[r]) {
            if levels.coin(rng, g) {
                heads.push(r);
            }
        }
    }
    // Never empty: the maximiser (gap 0) always comes up heads.
    let pick = rng.below_u64(heads.len().max(1) as u64) as usize;
    heads.get(pick).copied().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::select::{Goal, Sensitivity};

    #[test]
    fn theory_worked_numbers() {
        let raw = [800.0, 820.0, 850.0, 790.0];
        let scores = Scores::new(&raw, Goal::Maximize, Sensitivity::general(1.0).unwrap()).unwrap();
        let replace = crate::privacy::Neighbours::Replace;
        let pf = PermuteAndFlip::new(&scores, &Guarantee::pure(0.1, replace).unwrap()).unwrap();
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
