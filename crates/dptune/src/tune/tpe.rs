//! **Non-private** TPE (tree-structured Parzen estimator) tuning: the Optuna-style baseline.
//!
//! It tunes an objective over several datasets ("instances") with repeated runs per instance,
//! aggregates per instance and across instances, minimises or maximises, reports progress
//! after each trial and enforces a per-trial time limit. Every result is wrapped in
//! [`NonPrivate`]: TPE looks at exact scores and adapts to them, so it has no guarantee at all
//! (DESIGN.md rule 6).
//!
//! The sampler is the `tpe` crate (0.3.1, by the author of kurobako/optuna-rs): univariate TPE
//! per hyperparameter (Bergstra et al. 2011), Parzen estimators for ranges and histograms for
//! categorical values, on the rand 0.10 stack this workspace already uses and with no other
//! dependencies. That is Optuna's default (independent) TPE sampler, which is what the baseline
//! needs; a hand-written sampler would add code without adding anything to compare against.
//! Domains map as: `Choice` → categorical index; `Uniform` → range; `LogUniform` → range of
//! ln(x); `Int` → range [low, high + 1) floored.

use std::time::{Duration, Instant};

use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

use crate::error::{Error, Result};
use crate::noise::SecureRng;

use super::baseline::NonPrivate;
use super::space::{Config, Domain, SearchSpace, Value};

/// Whether smaller or larger objective values are better.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Smaller is better (e.g. error, loss).
    Minimize,
    /// Larger is better (e.g. accuracy).
    Maximize,
}

/// How several values are combined into one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Aggregate {
    /// Arithmetic mean.
    Mean,
    /// Median (mean of the middle two for an even count).
    Median,
    /// Smallest value.
    Min,
    /// Largest value.
    Max,
}

impl Aggregate {
    /// Combines `v` (non-empty).
    pub fn apply(&self, v: &[f64]) -> f64 {
        match self {
            Aggregate::Mean => v.iter().sum::<f64>() / v.len() as f64,
            Aggregate::Median => {
                let mut s = v.to_vec();
                s.sort_by(f64::total_cmp);
                let m = s.len() / 2;
                if s.len() % 2 == 1 {
                    s[m]
                } else {
                    (s[m - 1] + s[m]) / 2.0
                }
            }
            Aggregate::Min => v.iter().cloned().fold(f64::INFINITY, f64::min),
            Aggregate::Max => v.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
        }
    }
}

/// Options of a TPE search.
#[derive(Debug, Clone)]
pub struct TpeOptions {
    /// Number of trials (configurations evaluated).
    pub trials: usize,
    /// Random trials before TPE starts modelling (Optuna's `n_startup_trials`, default 10).
    pub startup: usize,
    /// Runs per instance for each trial.
    pub repeats: usize,
    /// Minimise or maximise the aggregated value.
    pub direction: Direction,
    /// Combines a trial's repeated runs on one instance.
    pub per_instance: Aggregate,
    /// Combines the per-instance values into the trial's value.
    pub across_instances: Aggregate,
    /// A trial whose runs take longer than this is stopped after the current run and gets the
    /// worst value (checked between runs: a running evaluation is not interrupted).
    pub trial_time_limit: Option<Duration>,
}

impl Default for TpeOptions {
    fn default() -> Self {
        Self {
            trials: 50,
            startup: 10,
            repeats: 1,
            direction: Direction::Maximize,
            per_instance: Aggregate::Mean,
            across_instances: Aggregate::Mean,
            trial_time_limit: None,
        }
    }
}

/// One evaluated configuration.
#[derive(Debug, Clone)]
pub struct TpeTrial {
    /// The configuration.
    pub config: Config,
    /// Its aggregated value (the worst possible value if it failed or timed out).
    pub value: f64,
    /// The per-instance aggregates (empty if the trial was stopped).
    pub per_instance: Vec<f64>,
    /// True when the trial hit the time limit or the objective refused the configuration.
    pub failed: bool,
}

/// What the progress callback learns after each trial (this baseline is not private, so the
/// trial count is fine to show).
#[derive(Debug, Clone, Copy)]
pub struct TpeProgress {
    /// Trials finished.
    pub done: usize,
    /// Trials in total.
    pub total: usize,
    /// Best value so far.
    pub best: f64,
}

/// The result of a TPE search.
#[derive(Debug, Clone)]
pub struct TpeResult {
    /// The best configuration found.
    pub best: Config,
    /// Its aggregated value.
    pub best_value: f64,
    /// Every trial, in order.
    pub trials: Vec<TpeTrial>,
}

enum Param {
    Choice(Vec<Value>),
    Uniform,
    Log,
    Int(i64, i64),
}

/// The objective: `(config, instance, repeat, rng)` → value. An `Error::InvalidParameter`
/// marks the configuration as failed (worst value); any other error aborts the search.
pub type Objective<'a> = &'a (dyn Fn(&Config, usize, usize, &mut SecureRng) -> Result<f64> + Sync);

/// TPE over `space` for `objective` on `instances` instances. **Not private.**
pub fn tpe_search(
    space: &SearchSpace,
    objective: Objective<'_>,
    instances: usize,
    options: &TpeOptions,
    progress: Option<&dyn Fn(TpeProgress)>,
    rng: &mut SecureRng,
) -> Result<NonPrivate<TpeResult>> {
    if instances == 0 || options.trials == 0 || options.repeats == 0 {
        return Err(Error::invalid(
            "tpe",
            format!(
                "{instances} instances, {} trials, {} repeats",
                options.trials, options.repeats
            ),
            "need at least one of each",
        ));
    }
    let tpe_err = |e: &dyn std::fmt::Display| Error::Numerical {
        what: "tpe",
        reason: e.to_string(),
    };
    let mut optimisers = Vec::new();
    for (name, d) in space.params() {
        let (range, param, categorical) = match d {
            Domain::Choice { values } => (
                tpe::categorical_range(values.len()),
                Param::Choice(values.clone()),
                true,
            ),
            Domain::Uniform { low, high } => (
                tpe::range(*low, high.max(low.next_up())),
                Param::Uniform,
                false,
            ),
            Domain::LogUniform { low, high } => (
                tpe::range(low.ln(), high.ln().max(low.ln().next_up())),
                Param::Log,
                false,
            ),
            Domain::Int { low, high } => (
                tpe::range(*low as f64, *high as f64 + 1.0),
                Param::Int(*low, *high),
                false,
            ),
        };
        let range = range.map_err(|e| tpe_err(&e))?;
        let est = if categorical {
            tpe::histogram_estimator()
        } else {
            tpe::parzen_estimator()
        };
        optimisers.push((name.to_string(), param, tpe::TpeOptimizer::new(est, range)));
    }
    let mut sampler = ChaCha20Rng::seed_from_u64(rng.next_u64());
    let worst = match options.direction {
        Direction::Minimize => f64::INFINITY,
        Direction::Maximize => f64::NEG_INFINITY,
    };
    let sign = match options.direction {
        Direction::Minimize => 1.0,
        Direction::Maximize => -1.0,
    };
    let streams = rng.streams();
    let mut trials: Vec<TpeTrial> = Vec::with_capacity(options.trials);
    let mut best: Option<usize> = None;
    for t in 0..options.trials {
        let mut raw = Vec::with_capacity(optimisers.len());
        let mut config = Config::new();
        for (name, param, opt) in optimisers.iter_mut() {
            let x = if t < options.startup {
                // Random start: uniform over the tpe range (sampled like an empty model).
                let r = opt_range(param, space, name);
                r.0 + (r.1 - r.0) * rng.unit_f64()
            } else {
                opt.ask(&mut sampler).map_err(|e| tpe_err(&e))?
            };
            let value = match param {
                Param::Choice(v) => v[(x as usize).min(v.len() - 1)].clone(),
                Param::Uniform => Value::Float(x),
                Param::Log => Value::Float(x.exp()),
                Param::Int(lo, hi) => Value::Int((x.floor() as i64).clamp(*lo, *hi)),
            };
            raw.push(x);
            config.insert(name.clone(), value);
        }
        let start = Instant::now();
        let mut per_instance = Vec::with_capacity(instances);
        let mut failed = false;
        'outer: for i in 0..instances {
            let mut runs = Vec::with_capacity(options.repeats);
            for r in 0..options.repeats {
                let mut stream =
                    streams.get((t * instances * options.repeats + i * options.repeats + r) as u64);
                match objective(&config, i, r, &mut stream) {
                    Ok(v) if !v.is_nan() => runs.push(v),
                    Ok(_) | Err(Error::InvalidParameter { .. }) => {
                        failed = true;
                        break 'outer;
                    }
                    Err(e) => return Err(e),
                }
                if options
                    .trial_time_limit
                    .is_some_and(|limit| start.elapsed() > limit)
                {
                    failed = true;
                    break 'outer;
                }
            }
            per_instance.push(options.per_instance.apply(&runs));
        }
        let value = if failed {
            per_instance.clear();
            worst
        } else {
            options.across_instances.apply(&per_instance)
        };
        // TPE minimises: tell the signed value (a large finite number for failures).
        let told = if value.is_finite() {
            sign * value
        } else {
            f64::MAX
        };
        for ((_, _, opt), x) in optimisers.iter_mut().zip(&raw) {
            opt.tell(*x, told).map_err(|e| tpe_err(&e))?;
        }
        trials.push(TpeTrial {
            config,
            value,
            per_instance,
            failed,
        });
        if !failed && best.is_none_or(|b| sign * value < sign * trials[b].value) {
            best = Some(t);
        }
        if let Some(p) = progress {
            p(TpeProgress {
                done: t + 1,
                total: options.trials,
                best: best.map_or(worst, |b| trials[b].value),
            });
        }
    }
    let b = best.ok_or_else(|| Error::NoRelease {
        reason: "every TPE trial failed or timed out".into(),
    })?;
    Ok(NonPrivate {
        value: TpeResult {
            best: trials[b].config.clone(),
            best_value: trials[b].value,
            trials,
        },
    })
}

/// The tpe-space range of a parameter, for the random start-up trials.
fn opt_range(param: &Param, space: &SearchSpace, name: &str) -> (f64, f64) {
    let d = space
        .params()
        .find(|(n, _)| *n == name)
        .map(|(_, d)| d.clone());
    match (param, d) {
        (Param::Choice(v), _) => (0.0, v.len() as f64),
        (Param::Uniform, Some(Domain::Uniform { low, high })) => (low, high),
        (Param::Log, Some(Domain::LogUniform { low, high })) => (low.ln(), high.ln()),
        (Param::Int(lo, hi), _) => (*lo as f64, *hi as f64 + 1.0),
        _ => (0.0, 1.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_optimum_of_a_smooth_objective_over_instances() {
        let space = SearchSpace::new(vec![
            (
                "x".into(),
                Domain::Uniform {
                    low: -5.0,
                    high: 5.0,
                },
            ),
            (
                "k".into(),
                Domain::Choice {
                    values: vec![Value::Int(1), Value::Int(10), Value::Int(100)],
                },
            ),
        ])
        .unwrap();
        // Instance i shifts the optimum by i/10; repeats add tiny deterministic jitter.
        let obj = |c: &Config, i: usize, r: usize, _: &mut SecureRng| -> Result<f64> {
            let x = c["x"].as_f64("x")?;
            let k = c["k"].as_i64("k")? as f64;
            Ok((x - i as f64 / 10.0).powi(2) + k + r as f64 * 1e-3)
        };
        let opts = TpeOptions {
            trials: 80,
            repeats: 2,
            direction: Direction::Minimize,
            ..Default::default()
        };
        let seen = std::cell::Cell::new(0);
        let r = tpe_search(
            &space,
            &obj,
            3,
            &opts,
            Some(&|p: TpeProgress| seen.set(p.done)),
            &mut SecureRng::seeded(1),
        )
        .unwrap()
        .value;
        assert_eq!(seen.get(), 80);
        assert_eq!(r.trials.len(), 80);
        assert_eq!(r.best["k"], Value::Int(1));
        assert!(r.best_value < 1.2, "{}", r.best_value);
        // A time limit of zero fails every trial: nothing to release.
        let limited = TpeOptions {
            trials: 3,
            trial_time_limit: Some(Duration::ZERO),
            ..opts
        };
        assert!(matches!(
            tpe_search(&space, &obj, 1, &limited, None, &mut SecureRng::seeded(2)),
            Err(Error::NoRelease { .. })
        ));
        assert_eq!(Aggregate::Median.apply(&[3.0, 1.0, 2.0, 10.0]), 2.5);
    }
}
