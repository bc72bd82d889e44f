//! The generalized exponential mechanism for heterogeneous sensitivities.

use super::Selector;
use num_rational::BigRational;

use super::exact::{EmSampler, Grid, Rate};
use super::{normalise_log_weights, oriented_scores, pure_allowance, Goal, Snapped, GRID_BITS};
use crate::error::{check_open_unit, check_positive, Error, Result};
use crate::noise::{exact_rational, SecureRng};
use crate::privacy::Guarantee;

/// Generalized exponential mechanism (maximisation form, THEORY.md §4):
/// t = 2 ln(m/β)/ε, r_i = q_i − tΔ_i, s_i = min_j (r_i − r_j)/(Δ_i + Δ_j), P\[i\] ∝ exp(ε s_i/2).
///
/// * **Theorem.** Raskhodnikova & Smith, FOCS 2016, arXiv 1504.07912 (the generalized
///   exponential mechanism; theorem number unconfirmed, see THEORY.md §4): ε-DP, because every
///   s_i is 1-Lipschitz and EM with range 2 is applied to s.
/// * **Preconditions.** Public per-candidate sensitivities Δ_i > 0 (finite) under the
///   allowance's neighbour relation; finite scores; β ∈ (0, 1).
/// * **Charged.** ε pure.
/// * **Exactness.** t is rounded to an f64 (a public constant, so any value is private); r and
///   s are then computed in exact rational arithmetic, so each s_i is exactly 1-Lipschitz, and
///   s is snapped to the 2^−40 grid with the rounding charged (as in
///   [`super::ExponentialMechanism`]). Cost O(m²) exact operations: meant for tens to
///   hundreds of candidates.
/// * **Caveat.** GEM can lose to plain EM with Δ = max Δ_i (Antonova et al., arXiv 2501.05309).
#[derive(Debug, Clone)]
pub struct GeneralizedExponential {
    t: f64,
    s: Vec<f64>,
    snapped: Snapped,
    rate: Rate,
    sampler: EmSampler,
    guarantee: Guarantee,
}

impl GeneralizedExponential {
    /// Validates the inputs: errors name `scores`, `sensitivities` (wrong length, non-positive
    /// or non-finite), `allowance` or `beta`. `allowance` must be one pure-ε bound (it is what
    /// a selection spends); its neighbour relation is the one `sensitivities` refer to.
    pub fn new(
        scores: &[f64],
        goal: Goal,
        sensitivities: &[f64],
        allowance: &Guarantee,
        beta: f64,
    ) -> Result<Self> {
        let q = oriented_scores(scores, goal)?;
        if let Some(i) = q.iter().position(|x| !x.is_finite()) {
            return Err(Error::invalid(
                "scores",
                scores[i],
                "GEM needs finite scores (no excluded candidates)",
            ));
        }
        if sensitivities.len() != q.len() {
            return Err(Error::invalid(
                "sensitivities",
                sensitivities.len(),
                format!("need one sensitivity per score ({} scores)", q.len()),
            ));
        }
        for &d in sensitivities {
            check_positive("sensitivities", d)?;
        }
        let epsilon = pure_allowance(allowance, "the generalized exponential mechanism")?;
        check_open_unit("beta", beta)?;
        let m = q.len() as f64;
        let t = 2.0 * (m / beta).ln() / epsilon;
        let tr = exact_rational("t", t)?;
        let dr: Vec<BigRational> = sensitivities
            .iter()
            .map(|&d| exact_rational("sensitivities", d))
            .collect::<Result<_>>()?;
        let r: Vec<BigRational> = q
            .iter()
            .zip(&dr)
            .map(|(&x, d)| Ok(exact_rational("scores", x)? - &tr * d))
            .collect::<Result<_>>()?;
        let s_exact: Vec<BigRational> = (0..r.len())
            .map(|i| {
                (0..r.len())
                    .map(|j| (&r[i] - &r[j]) / (&dr[i] + &dr[j]))
                    .min()
                    .unwrap_or_default()
            })
            .collect();
        let grid = Grid::for_delta(1.0, GRID_BITS);
        let vals = s_exact.iter().map(|x| grid.snap_rational(x)).collect();
        let snapped = Snapped::from_vals(vals, grid);
        let rate = Rate::new(epsilon, snapped.range_steps(false));
        let s = s_exact
            .iter()
            .map(|x| num_traits::ToPrimitive::to_f64(x).unwrap_or(f64::NEG_INFINITY))
            .collect();
        let sampler = EmSampler::new(&snapped.vals, snapped.max, &rate);
        Ok(Self {
            t,
            s,
            snapped,
            rate,
            sampler,
            guarantee: allowance.clone(),
        })
    }

    /// t = 2 ln(m/β)/ε as used.
    pub fn t(&self) -> f64 {
        self.t
    }

    /// The normalised scores s_i (≤ 0), rounded to f64 for display.
    pub fn normalised_scores(&self) -> &[f64] {
        &self.s
    }

    /// Exact selection probabilities of the implemented mechanism.
    pub fn probabilities(&self) -> Vec<f64> {
        let logw: Vec<f64> = (0..self.s.len())
            .map(|i| -(self.snapped.gap(i).unwrap_or(0) as f64) * self.rate.approx)
            .collect();
        normalise_log_weights(&logw)
    }
}

impl Selector for GeneralizedExponential {
    type Output = usize;

    /// ε pure.
    fn guarantee(&self) -> &Guarantee {
        &self.guarantee
    }

    fn draw(&self, rng: &mut SecureRng) -> usize {
        self.sampler.draw(rng, &self.snapped.vals)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn theory_worked_example() {
        let g = GeneralizedExponential::new(
            &[800.0, 860.0, 900.0, 910.0],
            Goal::Maximize,
            &[1.0, 2.0, 5.0, 20.0],
            &Guarantee::pure(1.0, crate::privacy::Neighbours::AddRemove).unwrap(),
            0.1,
        )
        .unwrap();
        assert!((g.t() - 7.378).abs() < 1e-3);
        let want = [1.10e-4, 0.1975, 0.7078, 0.0945];
        for (p, w) in g.probabilities().iter().zip(want) {
            assert!((p - w).abs() < 1e-4, "{p} {w}");
        }
    }
}
