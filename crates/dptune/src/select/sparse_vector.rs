//! The sparse vector technique: which answers exceed a threshold (its own mechanism, not a
//! selection mechanism).

use super::exact::{Grid, Rate};
use super::{Sensitivity, GRID_BITS};
use crate::error::{check_positive, Error, Result};
use crate::noise::SecureRng;
use crate::numeric::add_up;
use crate::privacy::{Guarantee, Ledger, Neighbours, Release};

/// Lyu–Su–Li's corrected sparse vector technique with c positives (AboveThreshold for c = 1):
///
/// ```text
/// ρ = Lap(Δ/ε₁) once;  ν_i = Lap(2cΔ/ε₂) (Lap(cΔ/ε₂) if monotone)
/// q_i + ν_i ≥ T + ρ  ⇒ ⊤ (count it; halt after the c-th ⊤), else ⊥
/// ```
///
/// * **Theorem.** Lyu, Su & Li, PVLDB 2017, arXiv 1603.01699, Alg. 1 (numbering unconfirmed,
///   THEORY.md §5): (ε₁ + ε₂)-DP. With c = 1 and ε₁ = ε₂ = ε/2 this is Dwork–Roth's
///   AboveThreshold (Lap(2Δ/ε), Lap(4Δ/ε)).
/// * **Preconditions.** Each query answer moves by at most Δ between neighbours (same sign for
///   all queries if monotone); the threshold T is public; the noisy values are **not** released.
/// * **Charged.** ε₁ + ε₂ pure, whatever the number of queries.
/// * **Sampling.** Answers and threshold are snapped to the grid 2^(⌊log2 Δ⌋−40); Δ becomes
///   ⌈Δ/2^k⌉ + 1 steps; ρ and ν are exact discrete Laplace with those integer scales (the
///   density-shift proof holds for integer shifts).
#[derive(Debug, Clone)]
pub struct SparseVector {
    threshold: i128,
    grid: Grid,
    rho: Rate,
    nu: Rate,
    c: usize,
    guarantee: Guarantee,
}

impl SparseVector {
    /// The c-positives form with an explicit split ε₁ (threshold) / ε₂ (queries). Errors name
    /// `threshold`, `epsilon1`, `epsilon2` or `c`.
    pub fn new(
        threshold: f64,
        sensitivity: Sensitivity,
        epsilon1: f64,
        epsilon2: f64,
        c: usize,
        neighbours: Neighbours,
    ) -> Result<Self> {
        if !threshold.is_finite() {
            return Err(Error::invalid("threshold", threshold, "must be finite"));
        }
        check_positive("epsilon1", epsilon1)?;
        check_positive("epsilon2", epsilon2)?;
        if c == 0 {
            return Err(Error::invalid("c", c, "must be at least 1"));
        }
        let grid = Grid::for_delta(sensitivity.delta(), GRID_BITS);
        let d = grid.delta_steps;
        let cq = c as u128;
        let nu_steps = if sensitivity.is_monotonic() {
            cq * d
        } else {
            2 * cq * d
        };
        Ok(Self {
            threshold: grid.snap(threshold),
            grid,
            rho: Rate::new(epsilon1, d),
            nu: Rate::new(epsilon2, nu_steps),
            c,
            guarantee: Guarantee::pure(add_up(epsilon1, epsilon2), neighbours)?,
        })
    }

    /// AboveThreshold (c = 1) with ε split evenly.
    pub fn above_threshold(
        threshold: f64,
        sensitivity: Sensitivity,
        epsilon: f64,
        neighbours: Neighbours,
    ) -> Result<Self> {
        check_positive("epsilon", epsilon)?;
        Self::new(
            threshold,
            sensitivity,
            epsilon / 2.0,
            epsilon / 2.0,
            1,
            neighbours,
        )
    }

    /// ε₁ + ε₂.
    pub fn guarantee(&self) -> &Guarantee {
        &self.guarantee
    }

    /// Runs over the answers q_i(D) in order; releases the indices answered ⊤ (at most c).
    /// Answers must be finite (error names `answers`).
    pub fn run(&self, rng: &mut SecureRng, answers: &[f64]) -> Result<Release<Vec<usize>>> {
        if let Some(a) = answers.iter().find(|a| !a.is_finite()) {
            return Err(Error::invalid("answers", a, "must be finite"));
        }
        let noisy_threshold = self
            .threshold
            .saturating_add(self.rho.discrete_laplace(rng));
        let mut positives = Vec::new();
        for (i, &a) in answers.iter().enumerate() {
            let v = self
                .grid
                .snap(a)
                .saturating_add(self.nu.discrete_laplace(rng));
            if v >= noisy_threshold {
                positives.push(i);
                if positives.len() == self.c {
                    break;
                }
            }
        }
        Ok(Release {
            value: positives,
            spent: self.guarantee.clone(),
        })
    }

    /// Charges the ledger, then runs.
    pub fn run_charged(
        &self,
        ledger: &mut Ledger,
        rng: &mut SecureRng,
        answers: &[f64],
    ) -> Result<Release<Vec<usize>>> {
        if let Some(a) = answers.iter().find(|a| !a.is_finite()) {
            return Err(Error::invalid("answers", a, "must be finite"));
        }
        ledger.charge(&self.guarantee)?;
        self.run(rng, answers)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn far_above_and_below() {
        let svt = SparseVector::new(
            0.0,
            Sensitivity::general(1.0).unwrap(),
            1.0,
            1.0,
            2,
            Neighbours::AddRemove,
        )
        .unwrap();
        let mut rng = SecureRng::seeded(5);
        let r = svt
            .run(&mut rng, &[-1e3, -1e3, 1e3, -1e3, 1e3, 1e3])
            .unwrap();
        assert_eq!(r.value, vec![2, 4]);
        assert_eq!(r.spent.pure_eps(), Some(2.0));
        assert!(svt.run(&mut rng, &[f64::NAN]).is_err());
    }
}
