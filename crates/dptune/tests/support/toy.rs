//! An exact toy candidate shared by the tuning tests and benchmarks: a "learner" that releases a
//! noisy count of its training records and a scorer that releases a noisy count of the
//! evaluation records shifted by a public, configuration-dependent utility (best at bias 7).
//! Both add exact discrete Laplace noise of scale ≥ 1/ε to a sensitivity-1 count (add/remove),
//! so each spends exactly its pure-DP allowance.

#![allow(dead_code)] // each including crate uses a different subset

use std::sync::atomic::{AtomicUsize, Ordering};

use dptune::data::Records;
use dptune::noise::{DiscreteLaplace, SecureRng};
use dptune::privacy::{Guarantee, Neighbours, Release};
use dptune::tune::baseline::ExactScorer;
use dptune::tune::{Config, Learner, PrivateStep, Scorer};
use dptune::{Error, Result};

pub const AR: Neighbours = Neighbours::AddRemove;

pub struct Bits(pub Vec<bool>);

impl Records for Bits {
    fn len(&self) -> usize {
        self.0.len()
    }
    fn select(&self, indices: &[usize]) -> Self {
        Bits(indices.iter().map(|&i| self.0[i]).collect())
    }
}

fn laplace_for(allowance: &Guarantee) -> Result<(DiscreteLaplace, Guarantee)> {
    let eps = allowance.pure_eps().ok_or_else(|| {
        Error::invalid("allowance", allowance, "this test learner spends pure DP")
    })?;
    // Scale 1/ε rounded up: never less noise than the guarantee needs.
    let scale = (1.0 / eps).next_up();
    Ok((
        DiscreteLaplace::from_scale_f64(scale)?,
        Guarantee::pure(1.0 / scale, AR)?.and(Guarantee::pure(eps, AR)?)?,
    ))
}

fn noisy_count(
    data: &Bits,
    allowance: &Guarantee,
    rng: &mut SecureRng,
) -> Result<(f64, Guarantee)> {
    let (lap, spent) = laplace_for(allowance)?;
    let count = data.0.iter().filter(|b| **b).count() as i64;
    Ok(((count + lap.sample(rng)) as f64, spent))
}

/// Model = (bias, noisy training count). Configurations with bias 3 are refused as invalid;
/// with `overspend` the learner spends twice its allowance (a bug the framework must catch).
#[derive(Default)]
pub struct CountLearner {
    pub fits: AtomicUsize,
    pub overspend: bool,
}

impl Learner for CountLearner {
    type Data = Bits;
    type Model = (i64, f64);
    fn fit(&self, config: &Config, step: PrivateStep<'_, Bits>) -> Result<Release<(i64, f64)>> {
        self.fits.fetch_add(1, Ordering::Relaxed);
        let bias = config["bias"].as_i64("bias")?;
        if bias == 3 {
            return Err(Error::invalid("bias", 3, "this configuration is unusable"));
        }
        let (count, spent) = noisy_count(step.data, step.allowance, step.rng)?;
        let spent = if self.overspend {
            spent.compose(&spent)?
        } else {
            spent
        };
        Ok(Release {
            value: (bias, count),
            spent,
        })
    }
}

/// Score = noisy evaluation count − 10·|bias − 7|: the best configuration is bias 7.
pub struct CountScorer;

impl Scorer<CountLearner> for CountScorer {
    fn score(&self, model: &(i64, f64), step: PrivateStep<'_, Bits>) -> Result<Release<f64>> {
        let (count, spent) = noisy_count(step.data, step.allowance, step.rng)?;
        Ok(Release {
            value: count - 10.0 * (model.0 - 7).abs() as f64,
            spent,
        })
    }
}

impl ExactScorer<CountLearner> for CountScorer {
    fn exact_score(&self, model: &(i64, f64), _data: &Bits) -> f64 {
        -10.0 * (model.0 - 7).abs() as f64
    }
}
