//! Noisy summary statistics of objective values over a public range: count, clipped mean and
//! quantiles. Each reports its noise scale and its cost.

use super::exact::{EmSampler, Grid, Rate};
use super::{Snapped, GRID_BITS};
use crate::error::{check_positive, Error, Result};
use crate::noise::SecureRng;
use crate::numeric::add_up;
use crate::privacy::{Guarantee, Neighbours};

/// A noisy statistic with its noise scale and cost.
#[derive(Debug, Clone, PartialEq)]
pub struct NoisyStatistic {
    /// The released value.
    pub value: f64,
    /// The Laplace scale of the noise (or, for quantiles, the EM range sensitivity / ε).
    pub noise_scale: f64,
    /// What it cost.
    pub spent: Guarantee,
}

fn check_values(values: &[f64]) -> Result<()> {
    match values.iter().find(|v| !v.is_finite()) {
        Some(v) => Err(Error::invalid("values", v, "must be finite")),
        None => Ok(()),
    }
}

/// A public range [lower, upper] for objective values (never computed from the private data).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PublicRange {
    lower: f64,
    upper: f64,
}

impl PublicRange {
    /// Needs finite bounds with lower < upper (error names `range`).
    pub fn new(lower: f64, upper: f64) -> Result<Self> {
        if lower.is_finite() && upper.is_finite() && lower < upper {
            Ok(Self { lower, upper })
        } else {
            Err(Error::invalid(
                "range",
                format!("[{lower}, {upper}]"),
                "need finite public bounds lower < upper",
            ))
        }
    }
}

/// Noisy count |values| + discrete Laplace(1/ε), exact (CKS20 Alg. 2). Sensitivity 1 under
/// add/remove-one (Dwork–Roth 2014, Thm 3.6); under replace-one the count is public and exact,
/// so that relation is refused. Charged: ε pure.
pub fn noisy_count(
    rng: &mut SecureRng,
    values: &[f64],
    epsilon: f64,
    neighbours: Neighbours,
) -> Result<NoisyStatistic> {
    check_positive("epsilon", epsilon)?;
    if neighbours == Neighbours::Replace {
        return Err(Error::invalid(
            "neighbours",
            neighbours,
            "under replace-one the count is public; release it exactly",
        ));
    }
    let rate = Rate::new(epsilon, 1);
    let n = values.len() as i128 + rate.discrete_laplace(rng);
    Ok(NoisyStatistic {
        value: n as f64,
        noise_scale: 1.0 / epsilon,
        spent: Guarantee::pure(epsilon, neighbours)?,
    })
}

/// Clipped mean over the public range [lower, upper]: values are clipped, the clipped sum gets
/// discrete Laplace noise on the grid 2^(⌊log2 B⌋−40) with B = max(|lower|, |upper|) (the sum's
/// add/remove sensitivity, rounding charged: ⌈B/2^k⌉ + 1 steps), and the count gets discrete
/// Laplace(1/ε_count); the mean is their ratio (post-processing), clamped to the range.
/// Charged: ε_sum + ε_count pure (add/remove-one; refused under replace-one, whose count is
/// public; use a known n there).
pub fn clipped_mean(
    rng: &mut SecureRng,
    values: &[f64],
    range: PublicRange,
    epsilon_sum: f64,
    epsilon_count: f64,
    neighbours: Neighbours,
) -> Result<NoisyStatistic> {
    check_values(values)?;
    check_positive("epsilon_sum", epsilon_sum)?;
    let PublicRange { lower, upper } = range;
    let count = noisy_count(rng, values, epsilon_count, neighbours)?;
    let bound = lower.abs().max(upper.abs());
    let grid = Grid::for_delta(bound, GRID_BITS);
    let sum: i128 = values
        .iter()
        .map(|v| grid.snap(v.clamp(lower, upper)))
        .fold(0i128, |a, b| a.saturating_add(b));
    let noisy = sum.saturating_add(Rate::new(epsilon_sum, grid.delta_steps).discrete_laplace(rng));
    let noisy_sum = noisy as f64 * grid.step();
    let mean = (noisy_sum / count.value.max(1.0)).clamp(lower, upper);
    Ok(NoisyStatistic {
        value: mean,
        noise_scale: grid.delta_steps as f64 * grid.step() / epsilon_sum,
        spent: Guarantee::pure(add_up(epsilon_sum, epsilon_count), neighbours)?,
    })
}

/// The q-quantile by the exponential mechanism over a public grid of `points` equally spaced
/// candidates in [lower, upper]; utility −|#{x < c} − q·n| has sensitivity 1 (add/remove:
/// the rank moves by ≤ 1 and q·n by q ≤ 1; replace: the rank moves by ≤ 1), non-monotone, so
/// R = 2 (Smith 2011-style; THEORY.md §15). The released value is a **grid point**, never a
/// data value. Charged: ε pure (and ε²/8 zCDP).
pub fn quantile(
    rng: &mut SecureRng,
    values: &[f64],
    q: f64,
    range: PublicRange,
    points: usize,
    epsilon: f64,
    neighbours: Neighbours,
) -> Result<NoisyStatistic> {
    check_values(values)?;
    let PublicRange { lower, upper } = range;
    if !(0.0..=1.0).contains(&q) {
        return Err(Error::invalid("q", q, "must lie in [0, 1]"));
    }
    if !(2..=1_000_000).contains(&points) {
        return Err(Error::invalid("points", points, "must lie in 2..=1000000"));
    }
    check_positive("epsilon", epsilon)?;
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let target = q * values.len() as f64;
    let grid_points: Vec<f64> = (0..points)
        .map(|i| lower + (upper - lower) * i as f64 / (points - 1) as f64)
        .collect();
    let utility: Vec<f64> = grid_points
        .iter()
        .map(|&c| -((sorted.partition_point(|&x| x < c) as f64) - target).abs())
        .collect();
    let snapped = Snapped::new(utility.into_iter(), 1.0);
    let rate = Rate::new(epsilon, snapped.range_steps(false));
    let i = EmSampler::new(&snapped.vals, snapped.max, &rate).draw(rng, &snapped.vals);
    Ok(NoisyStatistic {
        value: grid_points[i],
        noise_scale: 2.0 / epsilon,
        spent: super::exponential::em_guarantee(epsilon, neighbours)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statistics_are_sane() {
        let mut rng = SecureRng::seeded(11);
        let unit = PublicRange::new(0.0, 1.0).unwrap();
        assert!(PublicRange::new(1.0, 1.0).is_err());
        let v: Vec<f64> = (0..1000).map(|i| i as f64 / 1000.0).collect();
        let n = noisy_count(&mut rng, &v, 1.0, Neighbours::AddRemove).unwrap();
        assert!((n.value - 1000.0).abs() < 30.0);
        let m = clipped_mean(&mut rng, &v, unit, 1.0, 1.0, Neighbours::AddRemove).unwrap();
        assert!((m.value - 0.5).abs() < 0.05, "{}", m.value);
        assert_eq!(m.spent.pure_eps(), Some(2.0));
        let q = quantile(&mut rng, &v, 0.5, unit, 101, 1.0, Neighbours::AddRemove).unwrap();
        assert!((q.value - 0.5).abs() < 0.05, "{}", q.value);
        // A released quantile is a grid point.
        assert!(((q.value * 100.0).round() - q.value * 100.0).abs() < 1e-9);
        assert!(noisy_count(&mut rng, &v, 1.0, Neighbours::Replace).is_err());
        assert!(quantile(
            &mut rng,
            &[f64::NAN],
            0.5,
            unit,
            11,
            1.0,
            Neighbours::AddRemove
        )
        .is_err());
    }
}
