//! Noisy top-k: peeling permute-and-flip or one-shot Gumbel (= peeling EM), ordered output.

use std::num::NonZeroUsize;

use super::exact::Levels;
use super::exponential::em_draw_among;
use super::permute_flip::{pf_draw, pf_probabilities};
use super::Selector;
use super::{pure_allowance, Calibrated, Scores};
use crate::error::{Error, Result};
use crate::noise::SecureRng;
use crate::numeric::mul_up;
use crate::privacy::Guarantee;

/// Which top-k mechanism.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TopKMethod {
    /// k rounds of permute-and-flip without replacement, at ε/k each: ε pure.
    PermuteAndFlip,
    /// One-shot Gumbel top-k, sampled as k rounds of exact EM at ε/k without replacement (the
    /// same distribution): ε pure and k·(ε/k)²/8 = ε²/(8k) zCDP.
    Gumbel,
}

/// The k best candidates, in order, privately.
///
/// * **Theorem.** One-shot Gumbel top-k equals peeling EM in distribution (Durfee & Rogers,
///   NeurIPS 2019, arXiv 1905.04273); privacy by k-fold adaptive composition of EM (ε pure,
///   ε²/8 zCDP per round; THEORY.md §3) or of PF (McKenna–Sheldon arXiv 2010.12603 Thm 1, pure
///   only).
/// * **Preconditions.** As EM/PF (per-candidate sensitivity Δ under the allowance's neighbour
///   relation); 1 ≤ k ≤ number of non-excluded candidates.
/// * **Charged.** The allowance is what the whole release may spend, ε pure. Each round runs
///   at ε_r = ε/k rounded down ([`Guarantee::share`]), and the release is charged k·ε_r pure
///   (rounded up, never above ε) for both methods and k·ε_r²/8 zCDP for Gumbel. ε_r is the
///   largest float with k·ε_r ≤ ε exactly, so the charge is at most ε (and equal to it when
///   ε/k is a float). The noisy values are not released.
#[derive(Debug, Clone)]
pub struct NoisyTopK {
    cal: Calibrated,
    levels: Levels,
    k: usize,
    method: TopKMethod,
    guarantee: Guarantee,
}

impl NoisyTopK {
    /// Prepares the k rounds on validated `scores` within `allowance`, which is what the whole
    /// release may spend (not one round's): one pure-ε bound whose neighbour relation is the one
    /// the scores' sensitivity refers to. Errors name `allowance`, then `k` (1 ≤ k ≤ the
    /// selectable candidates). [`Selector::guarantee`] is the charge, at most the allowance.
    pub fn new(
        scores: &Scores<'_>,
        allowance: &Guarantee,
        k: usize,
        method: TopKMethod,
    ) -> Result<Self> {
        pure_allowance(allowance, "noisy top-k")?;
        let finite = scores.selectable();
        let rounds = NonZeroUsize::new(k)
            .filter(|k| k.get() <= finite)
            .ok_or_else(|| {
                Error::invalid(
                    "k",
                    k,
                    format!("must lie in 1..={finite} (the number of non-excluded candidates)"),
                )
            })?;
        let cal = Calibrated::new(scores, &allowance.share(rounds)?, "noisy top-k")?;
        let (kf, epsilon, neighbours) = (k as f64, cal.epsilon, allowance.neighbours());
        let pure = Guarantee::pure(mul_up(kf, epsilon), neighbours)?;
        let guarantee = match method {
            TopKMethod::PermuteAndFlip => pure,
            TopKMethod::Gumbel => pure.and(Guarantee::zcdp(
                mul_up(kf, mul_up(mul_up(epsilon, epsilon), 0.125)),
                neighbours,
            )?)?,
        };
        Ok(Self {
            levels: cal.rate.levels(),
            cal,
            k,
            method,
            guarantee,
        })
    }

    /// The exact probability of releasing the ordered tuple `indices` (0 if it is not k
    /// distinct candidates).
    pub fn tuple_probability(&self, indices: &[usize]) -> f64 {
        let m = self.cal.snapped.vals.len();
        let mut seen = vec![false; m];
        if indices.len() != self.k || indices.iter().any(|&i| i >= m) {
            return 0.0;
        }
        let mut p = 1.0;
        for &i in indices {
            if seen[i] {
                return 0.0;
            }
            let live: Vec<usize> = (0..m).filter(|&j| !seen[j]).collect();
            let top = live
                .iter()
                .map(|&j| self.cal.snapped.vals[j])
                .max()
                .unwrap_or(0);
            let weights: Vec<f64> = live
                .iter()
                .map(|&j| self.cal.log_weight(top, self.cal.snapped.vals[j]).exp())
                .collect();
            let pos = live.iter().position(|&j| j == i).unwrap_or(0);
            p *= match self.method {
                TopKMethod::Gumbel => weights[pos] / weights.iter().sum::<f64>(),
                TopKMethod::PermuteAndFlip => pf_probabilities(&weights)[pos],
            };
            seen[i] = true;
        }
        p
    }
}

impl Selector for NoisyTopK {
    type Output = Vec<usize>;

    /// The total charge.
    fn guarantee(&self) -> &Guarantee {
        &self.guarantee
    }

    fn draw(&self, rng: &mut SecureRng) -> Vec<usize> {
        let vals = &self.cal.snapped.vals;
        let mut live: Vec<usize> = (0..vals.len()).collect();
        let mut out = Vec::with_capacity(self.k);
        for _ in 0..self.k {
            let top = live.iter().map(|&j| vals[j]).max().unwrap_or(0);
            let pick = match self.method {
                TopKMethod::Gumbel => {
                    let pos = em_draw_among(rng, vals, &live, top, &self.levels);
                    live.swap_remove(pos)
                }
                TopKMethod::PermuteAndFlip => {
                    let r = pf_draw(rng, vals, live.iter().copied(), top, &self.levels);
                    live.retain(|&j| j != r);
                    r
                }
            };
            out.push(pick);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::privacy::Neighbours::AddRemove;
    use crate::select::{Goal, Sensitivity};

    #[test]
    fn theory_example() {
        let raw = [3.0, 2.0, 1.0, 0.0];
        let scores = Scores::new(&raw, Goal::Maximize, Sensitivity::monotonic(1.0).unwrap());
        // Two rounds at ε = 1 each: the allowance is the total, 2.
        let total = Guarantee::pure(2.0, AddRemove).unwrap();
        let t = NoisyTopK::new(&scores.unwrap(), &total, 2, TopKMethod::Gumbel).unwrap();
        assert!((t.tuple_probability(&[0, 1]) - 0.4284).abs() < 1e-4);
        assert_eq!(t.guarantee().pure_eps(), Some(2.0));
    }

    /// The allowance is the total: k rounds never spend more than it, and exactly it when
    /// ε/k is a float.
    #[test]
    fn the_k_rounds_fit_the_allowance() {
        let raw: Vec<f64> = (0..10).map(f64::from).collect();
        let scores = Scores::new(&raw, Goal::Maximize, Sensitivity::general(1.0).unwrap()).unwrap();
        for (eps, k) in [(1.0, 3), (0.1, 7), (0.3, 9), (1.0, 2), (1.5, 3), (0.7, 1)] {
            let total = Guarantee::pure(eps, AddRemove).unwrap();
            for method in [TopKMethod::PermuteAndFlip, TopKMethod::Gumbel] {
                let t = NoisyTopK::new(&scores, &total, k, method).unwrap();
                let spent = t.guarantee().pure_eps().unwrap();
                assert!(spent <= eps, "{eps} / {k}: {spent}");
                assert!(spent >= eps * (1.0 - 1e-15), "{eps} / {k}: {spent}");
                // ε/k is a float exactly when k·fl(ε/k) − ε is 0 in exact arithmetic.
                if (eps / k as f64).mul_add(k as f64, -eps) == 0.0 {
                    assert_eq!(spent, eps, "{eps} / {k}");
                }
                crate::privacy::Ledger::new(total.clone())
                    .unwrap()
                    .charge(t.guarantee())
                    .unwrap();
            }
        }
        let e = NoisyTopK::new(
            &scores,
            &Guarantee::zcdp(0.5, AddRemove).unwrap(),
            2,
            TopKMethod::Gumbel,
        )
        .unwrap_err();
        assert!(e.to_string().contains("`allowance`"), "{e}");
    }
}
