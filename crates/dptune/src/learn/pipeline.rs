//! The whole job: calibrate the per-run budget, tune privately on one part of the data, fit
//! the chosen configuration on the other, and account for both (split–tune–final, THEORY.md
//! §10). Used by `dptune tune`.

use serde::Serialize;

use crate::data::{Dataset, Records, Task};
use crate::error::{Error, Result};
use crate::noise::SecureRng;
use crate::privacy::repeat::Repeats;
use crate::privacy::subsampled::dpsgd_guarantee;
use crate::privacy::{Guarantee, Ledger, Neighbours, Release};
use crate::tune::baseline::{oracle_best, NonPrivate, Scored};
use crate::tune::cost::calibrate;
use crate::tune::{
    split_by_coin, Config, Domain, Fractions, Learner, Method, Progress, Scorer, SearchSpace,
    TuneOptions, Tuner, Value,
};

use super::{
    check_space, DpSgd, ExactAccuracy, ExactNegRmse, Model, NoisyAccuracy, NoisyClippedLoss,
    ObjectivePerturbation, RidgeSsp, DPSGD_KEYS, OBJPERT_KEYS, RIDGE_KEYS,
};

/// Which learner to tune.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LearnerKind {
    /// DP-SGD logistic (softmax) regression.
    DpSgdLogistic,
    /// DP-SGD one-hidden-layer MLP.
    DpSgdMlp {
        /// Hidden units.
        hidden: usize,
    },
    /// Objective perturbation logistic regression (replace-one neighbours).
    ObjectivePerturbation,
    /// Ridge regression by sufficient-statistics perturbation.
    Ridge,
}

impl LearnerKind {
    /// The hyperparameters it reads, and those it requires.
    pub fn keys(&self) -> (&'static [&'static str], &'static [&'static str]) {
        match self {
            LearnerKind::DpSgdLogistic | LearnerKind::DpSgdMlp { .. } => {
                (&DPSGD_KEYS, &DPSGD_KEYS[..4])
            }
            LearnerKind::ObjectivePerturbation => (&OBJPERT_KEYS, &OBJPERT_KEYS),
            LearnerKind::Ridge => (&RIDGE_KEYS, &RIDGE_KEYS),
        }
    }

    /// The neighbour relation its guarantee is stated in.
    pub fn neighbours(&self) -> Neighbours {
        match self {
            LearnerKind::ObjectivePerturbation => Neighbours::Replace,
            _ => Neighbours::AddRemove,
        }
    }

    /// A sensible default search space.
    pub fn default_space(&self) -> SearchSpace {
        let floats = |v: &[f64]| Domain::Choice {
            values: v.iter().map(|&x| Value::Float(x)).collect(),
        };
        let ints = |v: &[i64]| Domain::Choice {
            values: v.iter().map(|&x| Value::Int(x)).collect(),
        };
        let params = match self {
            LearnerKind::DpSgdLogistic | LearnerKind::DpSgdMlp { .. } => vec![
                ("learning_rate".to_string(), floats(&[0.5, 2.0, 8.0, 16.0])),
                ("clip_norm".to_string(), floats(&[0.5, 1.0])),
                ("epochs".to_string(), ints(&[3, 6])),
                ("batch_size".to_string(), ints(&[256, 512])),
            ],
            LearnerKind::ObjectivePerturbation | LearnerKind::Ridge => vec![(
                "regularization".to_string(),
                floats(&[1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1]),
            )],
        };
        SearchSpace::new(params).expect("the default spaces are valid")
    }
}

/// Everything `dptune tune` decides before touching data.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The learner.
    pub learner: LearnerKind,
    /// How candidates are chosen.
    pub method: Method,
    /// The search space.
    pub space: SearchSpace,
    /// Total ε (tuning and final fit together).
    pub epsilon: f64,
    /// Total δ.
    pub delta: f64,
    /// The coin-split fractions (tuning vs final; train vs score within tuning).
    pub fractions: Fractions,
}

/// A finished private tuning.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    /// The chosen configuration.
    pub config: Config,
    /// The final model.
    pub model: Model,
    /// The per-run allowance the tuner was calibrated to.
    pub per_run: Guarantee,
    /// What the tuning spent (all runs and the selection).
    pub tuning: Guarantee,
    /// What the final fit spent.
    pub final_fit: Guarantee,
    /// Tuning and final fit together (parallel composition over disjoint parts).
    pub total: Guarantee,
}

/// Progress callbacks: clock ticks during tuning (elapsed time only) and the final fit's epochs.
#[derive(Default)]
pub struct Events<'a> {
    /// Called about every 200 ms during tuning with the elapsed time.
    pub tuning: Option<&'a (dyn Fn(Progress) + Sync)>,
    /// Called after each epoch of the final DP-SGD fit with (epoch, epochs).
    pub final_epoch: Option<&'a dyn Fn(u64, u64)>,
}

/// The median value of `name` over the grid of `space` (for the reference schedule), or
/// `default` when the space is not a grid.
fn middle(space: &SearchSpace, name: &str, default: f64) -> f64 {
    grid_values(space, name).unwrap_or(default)
}

fn grid_values(space: &SearchSpace, name: &str) -> Option<f64> {
    let mut v: Vec<f64> = space
        .grid()
        .ok()?
        .iter()
        .filter_map(|c| c.get(name).and_then(|x| x.as_f64("x").ok()))
        .collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(v[v.len() / 2])
}

impl Plan {
    /// The outer allowance (ε, δ) under the learner's neighbour relation.
    pub fn outer(&self) -> Result<Guarantee> {
        Guarantee::approx(self.epsilon, self.delta, self.learner.neighbours())
    }

    /// The per-run allowance: calibrated so that the whole tuning fits the outer allowance
    /// (for exhaustive search the runs compose in the learner's own currency, which is tighter
    /// than splitting (ε, δ) evenly). For DP-SGD the currency is the RDP curve of a reference
    /// schedule (the search space's median batch size and epochs on `n_train` records) at the
    /// largest multiplier 1/z that fits; each configuration then calibrates its own z to fit
    /// under that curve at every default order.
    pub fn per_run(&self, n_train: usize) -> Result<Guarantee> {
        let outer = self.outer()?;
        let (_, g) = match self.learner {
            LearnerKind::DpSgdLogistic | LearnerKind::DpSgdMlp { .. } => {
                let batch = middle(&self.space, "batch_size", 256.0);
                let epochs = middle(&self.space, "epochs", 3.0);
                let q = (batch / n_train.max(1) as f64).min(1.0);
                let steps = (epochs / q).ceil() as u64;
                calibrate(
                    &outer,
                    &self.method,
                    |t| dpsgd_guarantee(q, 1.0 / t, steps),
                    1e-3,
                    10.0,
                )?
            }
            LearnerKind::ObjectivePerturbation => calibrate(
                &outer,
                &self.method,
                |e| Guarantee::pure(e, Neighbours::Replace),
                1e-6,
                10.0,
            )?,
            LearnerKind::Ridge => calibrate(
                &outer,
                &self.method,
                |r| Guarantee::zcdp(r, Neighbours::AddRemove),
                1e-9,
                100.0,
            )?,
        };
        Ok(g)
    }

    /// The default plan: DP-SGD logistic regression, Papernot–Steinke with logarithmic
    /// repeats of mean 10 (truncated negative binomial η = 0), total (ε = 1, δ = 1e-5),
    /// half the data for tuning (80 % of it to train, 20 % to score), half for the final fit.
    pub fn default_for(learner: LearnerKind) -> Result<Self> {
        Ok(Self {
            learner,
            method: Method::RepeatAndSelect(Repeats::tnb_with_mean(0.0, 10.0)?),
            space: learner.default_space(),
            epsilon: 1.0,
            delta: 1e-5,
            fractions: Fractions {
                tune: 0.5,
                train: 0.8,
            },
        })
    }
}

fn check_task(learner: LearnerKind, task: &Task) -> Result<()> {
    let ok = match learner {
        LearnerKind::Ridge => matches!(task, Task::Regression { .. }),
        LearnerKind::ObjectivePerturbation => task.classes() == 2,
        _ => true,
    };
    if ok {
        Ok(())
    } else {
        Err(Error::invalid(
            "learner",
            format!("{learner:?}"),
            "does not fit the data's label (ridge needs a numeric label; objective \
             perturbation a binary one)",
        ))
    }
}

/// The tuner's scorer: noisy correct count for classifiers, noisy clipped squared error (cap
/// (high − low)²/4) for regression.
struct AutoScorer {
    cap: f64,
}

impl<L: Learner<Data = Dataset, Model = Model>> Scorer<L> for AutoScorer {
    fn score(
        &self,
        model: &Model,
        data: &Dataset,
        allowance: &Guarantee,
        rng: &mut SecureRng,
    ) -> Result<crate::privacy::Release<f64>> {
        if model.target.is_some() {
            <NoisyClippedLoss as Scorer<L>>::score(
                &NoisyClippedLoss { cap: self.cap },
                model,
                data,
                allowance,
                rng,
            )
        } else {
            <NoisyAccuracy as Scorer<L>>::score(&NoisyAccuracy, model, data, allowance, rng)
        }
    }
}

fn loss_cap(task: &Task) -> f64 {
    match task {
        Task::Regression { low, high } => (high - low).powi(2) / 4.0,
        Task::Classification { .. } => 10.0,
    }
}

type FinalFit<'a, L> =
    &'a dyn Fn(&L, &Config, &Dataset, &Guarantee, &mut SecureRng) -> Result<Release<Model>>;

#[allow(clippy::too_many_arguments)]
fn tune_with<L: Learner<Data = Dataset, Model = Model>>(
    plan: &Plan,
    learner: &L,
    final_fit: FinalFit<'_, L>,
    data: &Dataset,
    events: &Events<'_>,
    rng: &mut SecureRng,
) -> Result<Option<Outcome>> {
    let outer_alw = plan.outer()?;
    let expected_train = (data.len() as f64 * plan.fractions.tune * plan.fractions.train) as usize;
    let per_run = plan.per_run(expected_train)?;
    let tuner = Tuner::new(plan.method, &plan.space, per_run.clone())?;
    let options = TuneOptions {
        progress: events.tuning,
        ..Default::default()
    };
    // Everything below is refused before any data is touched if it does not fit.
    let tuning = tuner.cost(&options)?;
    Ledger::new(outer_alw.clone())?.charge(&tuning)?;
    let outer = split_by_coin(data.len(), plan.fractions.tune, rng)?;
    let tuning_data = data.select(&outer.first);
    let inner = split_by_coin(tuning_data.len(), plan.fractions.train, rng)?;
    let scorer = AutoScorer {
        cap: loss_cap(data.task()),
    };
    let selected = tuner.run(learner, &scorer, &tuning_data, &inner, &options, rng)?;
    let Some(best) = selected.value else {
        return Ok(None);
    };
    let final_data = data.select(&outer.second);
    let fitted =
        final_fit(learner, &best.config, &final_data, &outer_alw, rng).map_err(|e| match e {
            Error::InvalidParameter { .. } => Error::NoRelease {
                reason: format!("the chosen configuration could not be fitted: {e}"),
            },
            other => other,
        })?;
    Ledger::new(outer_alw.clone())?.charge(&fitted.spent)?;
    // Parallel composition: each record is in one part only. Stated also in (ε, δ) at the
    // plan's δ (the maximum of the parts' ε), which can be much tighter than converting the
    // pointwise maximum of the two RDP curves when their best orders differ.
    let with_approx = |g: &Guarantee| -> Result<Guarantee> {
        let eps = g.epsilon(plan.delta)?;
        g.clone()
            .and(Guarantee::approx(eps, plan.delta, g.neighbours())?)
    };
    let total = Guarantee::parallel(&[with_approx(&selected.spent)?, with_approx(&fitted.spent)?])?;
    Ok(Some(Outcome {
        config: best.config,
        model: fitted.value,
        per_run,
        tuning: selected.spent,
        final_fit: fitted.spent,
        total,
    }))
}

/// Runs `plan` on `data` (the private records; never the public test split): the search space
/// and the label are checked first, the per-run budget is calibrated and the whole cost is
/// checked against (ε, δ) before any data is touched. Returns `None` when the tuning released
/// ⊥ (nothing else is released then).
pub fn tune(
    plan: &Plan,
    data: &Dataset,
    events: &Events<'_>,
    rng: &mut SecureRng,
) -> Result<Option<Outcome>> {
    let (known, required) = plan.learner.keys();
    check_space(&plan.space, known, required)?;
    check_task(plan.learner, data.task())?;
    match plan.learner {
        LearnerKind::DpSgdLogistic | LearnerKind::DpSgdMlp { .. } => {
            let learner = match plan.learner {
                LearnerKind::DpSgdMlp { hidden } => DpSgd::mlp(hidden),
                _ => DpSgd::linear(),
            };
            let on_epoch = |e: u64, total: u64| {
                if let Some(f) = events.final_epoch {
                    f(e, total)
                }
            };
            let fit: FinalFit<'_, DpSgd> = &|l, c, d, a, r| {
                let total = c
                    .get("epochs")
                    .and_then(|v| v.as_i64("epochs").ok())
                    .unwrap_or(0) as u64;
                l.fit_with_progress(c, d, a, r, &|e| on_epoch(e, total))
            };
            tune_with(plan, &learner, fit, data, events, rng)
        }
        LearnerKind::ObjectivePerturbation => {
            tune_with(plan, &ObjectivePerturbation, &plain_fit, data, events, rng)
        }
        LearnerKind::Ridge => tune_with(plan, &RidgeSsp, &plain_fit, data, events, rng),
    }
}

fn plain_fit<L: Learner<Data = Dataset, Model = Model>>(
    l: &L,
    c: &Config,
    d: &Dataset,
    a: &Guarantee,
    r: &mut SecureRng,
) -> Result<Release<Model>> {
    l.fit(c, d, a, r)
}

/// **Not private.** The exact-best configuration among `configs`, each trained with the plan's
/// per-run allowance on the same kind of training part the tuner uses (a coin split of `data`
/// with the plan's fractions) and scored **exactly on the public test split** `test`: the best
/// test score any candidate configuration reaches at the same per-run budget. For comparison
/// only; labelled [`NonPrivate`].
pub fn oracle_on_test(
    plan: &Plan,
    configs: &[Config],
    data: &Dataset,
    test: &Dataset,
    rng: &mut SecureRng,
) -> Result<NonPrivate<Scored>> {
    check_task(plan.learner, data.task())?;
    let train_fraction = plan.fractions.tune * plan.fractions.train;
    let split = split_by_coin(data.len(), train_fraction, rng)?;
    let train = data.select(&split.first);
    let per_run = plan.per_run(train.len())?;
    let regression = matches!(data.task(), Task::Regression { .. });
    macro_rules! oracle {
        ($l:expr) => {
            if regression {
                oracle_best(&$l, &ExactNegRmse, configs, &train, test, &per_run, rng)
            } else {
                oracle_best(&$l, &ExactAccuracy, configs, &train, test, &per_run, rng)
            }
        };
    }
    match plan.learner {
        LearnerKind::DpSgdLogistic => oracle!(DpSgd::linear()),
        LearnerKind::DpSgdMlp { hidden } => oracle!(DpSgd::mlp(hidden)),
        LearnerKind::ObjectivePerturbation => oracle!(ObjectivePerturbation),
        LearnerKind::Ridge => oracle!(RidgeSsp),
    }
}

/// **Not private.** The Optuna-style TPE baseline ([`crate::tune::tpe::tpe_search`]) for a DP
/// learner: each instance is a (train, eval) pair; a trial trains the configuration with
/// `per_run` on each instance's train part (`options.repeats` times, with independent noise) and
/// scores it exactly on the eval part (accuracy, or RMSE for regression: set
/// `options.direction` accordingly). Labelled [`NonPrivate`].
pub fn tpe_baseline(
    learner: LearnerKind,
    space: &SearchSpace,
    instances: &[(Dataset, Dataset)],
    per_run: &Guarantee,
    options: &crate::tune::tpe::TpeOptions,
    progress: Option<&dyn Fn(crate::tune::tpe::TpeProgress)>,
    rng: &mut SecureRng,
) -> Result<NonPrivate<crate::tune::tpe::TpeResult>> {
    let (known, required) = learner.keys();
    check_space(space, known, required)?;
    let fit = |c: &Config, d: &Dataset, r: &mut SecureRng| -> Result<Model> {
        Ok(match learner {
            LearnerKind::DpSgdLogistic => DpSgd::linear().fit(c, d, per_run, r)?.value,
            LearnerKind::DpSgdMlp { hidden } => DpSgd::mlp(hidden).fit(c, d, per_run, r)?.value,
            LearnerKind::ObjectivePerturbation => {
                ObjectivePerturbation.fit(c, d, per_run, r)?.value
            }
            LearnerKind::Ridge => RidgeSsp.fit(c, d, per_run, r)?.value,
        })
    };
    let objective = |c: &Config, i: usize, _rep: usize, r: &mut SecureRng| -> Result<f64> {
        let (train, eval) = &instances[i];
        let m = fit(c, train, r)?;
        Ok(match eval.task() {
            Task::Regression { .. } => m.rmse(eval),
            Task::Classification { .. } => m.accuracy(eval),
        })
    };
    crate::tune::tpe::tpe_search(space, &objective, instances.len(), options, progress, rng)
}
