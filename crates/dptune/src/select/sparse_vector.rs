//! The sparse vector technique: which answers exceed a threshold (its own mechanism, not a
//! selection mechanism).

use super::exact::{Grid, Rate};
use super::{pure_allowance, Sensitivity, GRID_BITS};
use crate::error::{Error, Result};
use crate::noise::SecureRng;
use crate::numeric::add_up;
use crate::privacy::{Guarantee, Ledger, Release};

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
/// * **Preconditions.** Each query answer moves by at most Δ between neighbours under the
///   allowance's neighbour relation (same sign for all queries if monotone); the threshold T
///   is public; the noisy values are **not** released.
/// * **Charged.** The allowance: ε pure with ε₁ + ε₂ ≤ ε, whatever the number of queries.
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
    /// The c-positives form for the ε of `allowance` (one pure-ε bound; its neighbour relation
    /// is the one `sensitivity` refers to), split into ε₁ = `epsilon1` for the threshold and
    /// ε₂ = ε − ε₁, rounded down so that ε₁ + ε₂ ≤ ε, for the queries. Errors name
    /// `threshold`, `allowance`, `epsilon1` (outside (0, ε)) or `c`.
    pub fn new(
        threshold: f64,
        sensitivity: Sensitivity,
        allowance: &Guarantee,
        epsilon1: f64,
        c: usize,
    ) -> Result<Self> {
        if !threshold.is_finite() {
            return Err(Error::invalid("threshold", threshold, "must be finite"));
        }
        let epsilon = pure_allowance(allowance, "the sparse vector technique")?;
        if !(epsilon1 > 0.0 && epsilon1 < epsilon) {
            return Err(Error::invalid(
                "epsilon1",
                epsilon1,
                format!(
                    "must lie in (0, {epsilon}): the allowance's epsilon, whose rest goes to \
                     the queries"
                ),
            ));
        }
        // ε − ε₁ rounded down: the negation of (−ε) + ε₁ rounded up. Positive, as ε₁ < ε.
        let epsilon2 = -add_up(-epsilon, epsilon1);
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
            guarantee: allowance.clone(),
        })
    }

    /// AboveThreshold (c = 1) with the allowance's ε split evenly.
    pub fn above_threshold(
        threshold: f64,
        sensitivity: Sensitivity,
        allowance: &Guarantee,
    ) -> Result<Self> {
        let epsilon = pure_allowance(allowance, "the sparse vector technique")?;
        Self::new(threshold, sensitivity, allowance, epsilon / 2.0, 1)
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
            &Guarantee::pure(2.0, crate::privacy::Neighbours::AddRemove).unwrap(),
            1.0,
            2,
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

    /// The split must leave the queries a positive share, and the allowance must be pure; the
    /// charge is the allowance itself (ε₁ + ε₂ ≤ ε by the rounding down of ε₂).
    #[test]
    fn the_split_and_the_allowance_are_checked() {
        let s = Sensitivity::general(1.0).unwrap();
        let nb = crate::privacy::Neighbours::Replace;
        let pure = Guarantee::pure(0.3, nb).unwrap();
        for bad in [0.0, 0.3, 0.5, f64::NAN] {
            let e = SparseVector::new(0.0, s, &pure, bad, 1).unwrap_err();
            assert!(e.to_string().contains("`epsilon1`"), "{e}");
        }
        let approx = Guarantee::approx(0.3, 1e-6, nb).unwrap();
        let e = SparseVector::above_threshold(0.0, s, &approx).unwrap_err();
        assert!(e.to_string().contains("`allowance`"), "{e}");
        let svt = SparseVector::new(0.0, s, &pure, 0.1, 1).unwrap();
        assert_eq!(svt.guarantee(), &pure);
    }
}
