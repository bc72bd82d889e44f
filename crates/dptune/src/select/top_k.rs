//! Noisy top-k: peeling permute-and-flip or one-shot Gumbel (= peeling EM), ordered output.

use super::exact::Levels;
use super::exponential::em_draw_among;
use super::permute_flip::{pf_draw, pf_probabilities};
use super::Selector;
use super::{oriented_scores, Calibrated, Goal, Sensitivity};
use crate::error::{Error, Result};
use crate::noise::SecureRng;
use crate::numeric::mul_up;
use crate::privacy::Guarantee;

/// Which top-k mechanism.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TopKMethod {
    /// k rounds of permute-and-flip without replacement: k·ε pure.
    PermuteAndFlip,
    /// One-shot Gumbel top-k, sampled as k rounds of exact EM without replacement (the same
    /// distribution): k·ε pure and k·ε²/8 zCDP.
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
/// * **Charged.** k·ε pure (both methods) and k·ε²/8 zCDP (Gumbel only), ε being the pure
///   allowance of one round. The noisy values are not released.
#[derive(Debug, Clone)]
pub struct NoisyTopK {
    cal: Calibrated,
    levels: Levels,
    k: usize,
    method: TopKMethod,
    guarantee: Guarantee,
}

impl NoisyTopK {
    /// Validates the inputs (errors name `scores`, `allowance` or `k`, in that order).
    /// `allowance` is one round's, one pure-ε bound whose neighbour relation is the one
    /// `sensitivity` refers to; the k rounds spend k times it.
    pub fn new(
        scores: &[f64],
        goal: Goal,
        sensitivity: Sensitivity,
        allowance: &Guarantee,
        k: usize,
        method: TopKMethod,
    ) -> Result<Self> {
        let oriented = oriented_scores(scores, goal)?;
        let cal = Calibrated::from_oriented(&oriented, sensitivity, allowance, "noisy top-k")?;
        let finite = oriented.iter().filter(|x| x.is_finite()).count();
        if k == 0 || k > finite {
            return Err(Error::invalid(
                "k",
                k,
                format!("must lie in 1..={finite} (the number of non-excluded candidates)"),
            ));
        }
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

    #[test]
    fn theory_example() {
        let t = NoisyTopK::new(
            &[3.0, 2.0, 1.0, 0.0],
            Goal::Maximize,
            Sensitivity::monotonic(1.0).unwrap(),
            &Guarantee::pure(1.0, crate::privacy::Neighbours::AddRemove).unwrap(),
            2,
            TopKMethod::Gumbel,
        )
        .unwrap();
        assert!((t.tuple_probability(&[0, 1]) - 0.4284).abs() < 1e-4);
        assert_eq!(t.guarantee().pure_eps(), Some(2.0));
    }
}
