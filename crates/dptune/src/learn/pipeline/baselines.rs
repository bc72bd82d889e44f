//! **Not private** baselines beside `dptune tune`: the exact-best configuration on the public
//! test split, and the Optuna-style TPE search. Both are labelled [`NonPrivate`] in their types.

use crate::data::{Dataset, Records, Task};
use crate::error::Result;
use crate::learn::{ExactAccuracy, ExactNegRmse, Model, ObjectivePerturbation, RidgeSsp};
use crate::noise::SecureRng;
use crate::privacy::Guarantee;
use crate::tune::baseline::{oracle_best, NonPrivate, Scored};
use crate::tune::{split_by_coin, Config, Learner, Method, PrivateStep, SearchSpace};

use super::kind::{check_task, dpsgd};
use super::{LearnerKind, Outcome, Plan};

/// **Not private.** The exact-best configuration among `configs`, each trained with the
/// tuning's per-run allowance (`outcome.per_run`, on the schedule it planned) on the same kind
/// of training part the tuner uses (a coin split of `data` with the plan's fractions) and
/// scored **exactly on the public test split** `test`: the best test score any candidate
/// configuration reaches at the same per-run budget. For comparison only; labelled
/// [`NonPrivate`].
pub fn oracle_on_test(
    plan: &Plan,
    outcome: &Outcome,
    configs: &[Config],
    data: &Dataset,
    test: &Dataset,
    rng: &mut SecureRng,
) -> Result<NonPrivate<Scored>> {
    check_task(plan.learner, data.task())?;
    let train_fraction = plan.fractions.tune * plan.fractions.train;
    let split = split_by_coin(data.len(), train_fraction, rng)?;
    let train = data.select(&split.first);
    let per_run = &outcome.per_run;
    let records = outcome.size.records().map(|r| plan.expected_parts(r).0);
    let regression = matches!(data.task(), Task::Regression { .. });
    macro_rules! oracle {
        ($l:expr) => {
            if regression {
                oracle_best(&$l, &ExactNegRmse, configs, &train, test, per_run, rng)
            } else {
                oracle_best(&$l, &ExactAccuracy, configs, &train, test, per_run, rng)
            }
        };
    }
    match plan.learner {
        kind @ (LearnerKind::DpSgdLogistic | LearnerKind::DpSgdMlp { .. }) => {
            oracle!(dpsgd(kind, records)?)
        }
        LearnerKind::ObjectivePerturbation => oracle!(ObjectivePerturbation),
        LearnerKind::Ridge => oracle!(RidgeSsp),
    }
}

/// **Not private.** [`oracle_on_test`] over the configurations a comparison looks at: the
/// whole grid of the plan's space, or (for a space with continuous ranges) twice the method's
/// expected number of runs drawn from it.
pub fn compare_on_test(
    plan: &Plan,
    outcome: &Outcome,
    data: &Dataset,
    test: &Dataset,
    rng: &mut SecureRng,
) -> Result<NonPrivate<Scored>> {
    let configs = match plan.space.grid() {
        Ok(g) => g,
        Err(_) => {
            let mean = match plan.method {
                Method::RepeatAndSelect(r) => r.mean(),
                Method::Threshold { gamma, .. } => 1.0 / gamma,
                Method::Exhaustive { runs } => runs as f64,
            };
            let n = (2.0 * mean).ceil() as usize;
            (0..n).map(|_| plan.space.sample(rng)).collect()
        }
    };
    oracle_on_test(plan, outcome, &configs, data, test, rng)
}

/// **Not private.** The Optuna-style TPE baseline ([`crate::tune::tpe::tpe_search`]) for a DP
/// learner: each instance is a (train, eval) pair; a trial trains the configuration with
/// `per_run` on each instance's train part (DP-SGD planned for that part's exact size: this
/// baseline is not private anyway) (`options.repeats` times, with independent noise) and
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
    space.check(learner.rules())?;
    let fit = |c: &Config, d: &Dataset, r: &mut SecureRng| -> Result<Model> {
        let step = PrivateStep::new(d, per_run, r);
        Ok(match learner {
            kind @ (LearnerKind::DpSgdLogistic | LearnerKind::DpSgdMlp { .. }) => {
                dpsgd(kind, Some(d.len() as f64))?.fit(c, step)?.value
            }
            LearnerKind::ObjectivePerturbation => ObjectivePerturbation.fit(c, step)?.value,
            LearnerKind::Ridge => RidgeSsp.fit(c, step)?.value,
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
