//! The report of `dptune tune` (and of Python's `dptune.tune` with a built-in learner): one
//! serialisable type, built here from a finished [`Outcome`], which the CLI renders as text or
//! JSON and Python returns as a dict (DESIGN.md, `Report`).
//!
//! Every field is declared in `crate::release_schema` (command `tune`) as a public input, a
//! charged private release or a NOT PRIVATE diagnostic, and each field's doc comment below says
//! which. Never released: the exact number of private records, the number of candidate runs,
//! any run time (the `timing` field is a fixed sentence that says who may see it).

use serde::Serialize;

use crate::data::{Dataset, Records, Task};
use crate::error::Result;
use crate::privacy::repeat::Repeats;
use crate::privacy::{fmt_number, Neighbours, Route};
use crate::tune::baseline::Scored;
use crate::tune::{Config, Method};

use super::{LearnerKind, Outcome, Plan, SizeUsed};

/// What `dptune tune` releases.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TuneReport {
    /// Public input: the dataset's name (a bundled name, or the CSV path given).
    pub dataset: String,
    /// Public input: the learner.
    pub learner: LearnerKind,
    /// Public input: the tuner, described ([`describe_method`]).
    pub tuner: String,
    /// Public input: the cap on candidate slots, if any.
    pub cap: Option<u64>,
    /// Public input: whether the noise came from a caller's seed (`--seed`, `seed=`) instead
    /// of the operating system. A seeded run is a reproducible research run and NOT PRIVATE:
    /// anyone who knows the seed can predict every noise draw, and the same seed on
    /// neighbouring datasets gives the same noise, so their outputs differ by the data alone.
    /// The guarantees below then describe the mechanism, not this run.
    pub seeded: bool,
    /// Private release, charged as `privacy.tuning`: the chosen configuration.
    pub best: Config,
    /// The guarantees (public inputs: each a function of the plan and released values).
    pub privacy: TunePrivacy,
    /// The record count the DP-SGD schedules were planned with.
    pub size: SizeReport,
    /// Public input: who may see the run time (a fixed sentence; never a time).
    pub timing: String,
    /// Public input: the number of records of the public test split, if one was given.
    pub public_test_records: Option<usize>,
    /// Private release, charged as `privacy.final_fit` (post-processing of the final model
    /// with public data): its accuracy on the public test split, `null` without one.
    /// Classification only (absent for regression).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub test_accuracy: Option<Option<f64>>,
    /// As `test_accuracy`, the root mean squared error, for regression only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub test_rmse: Option<Option<f64>>,
    /// NOT PRIVATE diagnostic, only when asked for (`--compare`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compare: Option<Comparison>,
}

/// The privacy part of a [`TuneReport`]: every ε at the plan's δ, each the allowance the part
/// was checked against before release (see [`super::Reported`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TunePrivacy {
    /// Public input: the whole job's ε (count, tuning and final fit).
    pub epsilon: f64,
    /// Public input: the plan's δ.
    pub delta: f64,
    /// Public input: the neighbour relation of every ε here.
    pub neighbours: Neighbours,
    /// Public input: the tuning's charge (a function of the learner, the method and δ).
    pub tuning: TuningCharge,
    /// The final fit's charge (its ε public; its route and noise multiplier post-processing of
    /// the released configuration and the planned size).
    pub final_fit: FinalFitCharge,
    /// Private release, post-processing of `privacy.record_count`: the per-run allowance the
    /// tuner was calibrated to (for DP-SGD, to the planned size; a public input with
    /// `--public-size` and for the other learners).
    pub per_run: String,
    /// Public input: the noisy record count's charge, when one was released.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub record_count: Option<CountCharge>,
}

/// The tuning's charge.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TuningCharge {
    /// ε at `delta`.
    pub epsilon: f64,
    /// The plan's δ.
    pub delta: f64,
    /// The accounting route that gave ε.
    pub route: Route,
    /// The theorem that bounds the tuning ([`method_theorem`]).
    pub theorem: &'static str,
}

/// The final fit's charge.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FinalFitCharge {
    /// Public input: ε at `delta` (the allowance the fit was held to).
    pub epsilon: f64,
    /// Public input: the plan's δ.
    pub delta: f64,
    /// Private release, post-processing of `best` and the planned size (`privacy.tuning`,
    /// `privacy.record_count`): the accounting route of the selected configuration's schedule.
    pub route: Route,
    /// Private release, post-processing as `route`: DP-SGD's noise multiplier, `null` for the
    /// other learners.
    pub noise_multiplier: Option<f64>,
}

/// The noisy record count's charge (pure ε).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CountCharge {
    /// Its pure ε.
    pub epsilon: f64,
    /// Always 0.
    pub delta: f64,
}

/// Where the planned record count came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "source")]
pub enum SizeReport {
    /// The learner needs none; nothing spent.
    NotNeeded,
    /// Public input: declared with `--public-size`.
    Public {
        /// The declared number of records.
        records: u64,
    },
    /// Private release, charged as `privacy.record_count`: the noisy count.
    NoisyCount {
        /// The released noisy count.
        value: i64,
        /// Its pure ε.
        epsilon: f64,
        /// What it is.
        label: &'static str,
    },
}

/// NOT PRIVATE: the exact-best configuration chosen on the public test split at the same
/// per-run budget (`--compare`; [`super::oracle_on_test`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// Always true: this object is not covered by any guarantee.
    pub not_private: bool,
    /// Says so in words.
    pub label: &'static str,
    /// The exact-best configuration.
    pub best: Config,
    /// Its test accuracy (classification).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub test_accuracy: Option<f64>,
    /// Its test RMSE (regression).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub test_rmse: Option<f64>,
}

/// A tuning method in words, with its parameters (the expected number of runs as `mean`).
pub fn describe_method(method: &Method) -> String {
    match *method {
        Method::RepeatAndSelect(r) => {
            let mean = fmt_number(r.mean());
            match r {
                Repeats::Poisson { .. } => {
                    format!("Papernot-Steinke (Poisson repeats, mean {mean})")
                }
                Repeats::TruncatedNegativeBinomial { eta: 0.0, .. } => {
                    format!("Papernot-Steinke (logarithmic repeats, mean {mean})")
                }
                Repeats::TruncatedNegativeBinomial { eta: 1.0, .. } => {
                    format!("Liu-Talwar (geometric repeats, mean {mean})")
                }
                Repeats::TruncatedNegativeBinomial { eta, .. } => format!(
                    "Papernot-Steinke (truncated negative binomial, eta {}, mean {mean})",
                    fmt_number(eta)
                ),
            }
        }
        Method::Threshold { gamma, .. } => format!(
            "Liu-Talwar threshold (stop probability 1/{})",
            fmt_number(1.0 / gamma)
        ),
        Method::Exhaustive { .. } => "exhaustive grid (composition)".into(),
    }
}

/// The theorem that bounds a method's cost.
pub fn method_theorem(method: &Method) -> &'static str {
    match method {
        Method::RepeatAndSelect(_) => "Papernot-Steinke, private selection from private candidates",
        Method::Threshold { .. } => "Liu-Talwar, threshold selection",
        Method::Exhaustive { .. } => "sequential composition",
    }
}

/// The `timing` sentence (the trust model of docs/PRIVACY.md, "Trust model and timing").
fn timing(cap: Option<u64>) -> String {
    match cap {
        None => "not part of this release; the run time reveals the number of candidate runs, so \
                 only the curator running this command may see it, and it must not be published \
                 (--cap T makes it independent of that number)"
            .into(),
        Some(t) => format!(
            "not part of this release; with --cap {t} every tuning executes {t} candidate slots, so \
             the run time does not depend on the number of runs (it still grows with the data \
             size: keep it with the curator)"
        ),
    }
}

/// (accuracy, rmse): `value` under the key of `task`'s score, the other absent.
fn by_task<T>(task: &Task, value: T) -> (Option<T>, Option<T>) {
    match task {
        Task::Regression { .. } => (None, Some(value)),
        Task::Classification { .. } => (Some(value), None),
    }
}

impl TuneReport {
    /// The report of `outcome`, a finished run of `plan` on `data` (named `dataset`), with the
    /// final model scored on the public `test` split if there is one, and the NOT PRIVATE
    /// `comparison` if it was asked for (its score in the scorer's orientation: higher is
    /// better, so minus the RMSE for regression); `seeded` when the run's generator came from a
    /// caller's seed rather than the operating system.
    pub fn new(
        plan: &Plan,
        dataset: &str,
        data: &Dataset,
        test: Option<&Dataset>,
        outcome: &Outcome,
        comparison: Option<Scored>,
        seeded: bool,
    ) -> Result<Self> {
        let (_, d) = plan.epsilon_delta()?;
        let r = &outcome.reported;
        let task = data.task();
        let score = test.map(|t| match task {
            Task::Regression { .. } => outcome.model.rmse(t),
            Task::Classification { .. } => outcome.model.accuracy(t),
        });
        let (test_accuracy, test_rmse) = by_task(task, score);
        let (size, record_count) = match &outcome.size {
            SizeUsed::NotNeeded => (SizeReport::NotNeeded, None),
            SizeUsed::Public { records } => (SizeReport::Public { records: *records }, None),
            SizeUsed::NoisyCount { value, spent } => {
                let epsilon = spent.epsilon(d)?;
                (
                    SizeReport::NoisyCount {
                        value: *value,
                        epsilon,
                        label: "charged release: noisy record count (discrete Laplace)",
                    },
                    Some(CountCharge {
                        epsilon,
                        delta: 0.0,
                    }),
                )
            }
        };
        let compare = comparison.map(|c| {
            let s = match task {
                Task::Regression { .. } => -c.score,
                Task::Classification { .. } => c.score,
            };
            let (test_accuracy, test_rmse) = by_task(task, s);
            Comparison {
                not_private: true,
                label: "NOT PRIVATE: exact-best configuration chosen on the test split",
                best: c.config,
                test_accuracy,
                test_rmse,
            }
        });
        Ok(Self {
            dataset: dataset.to_string(),
            learner: plan.learner,
            tuner: describe_method(&plan.method),
            cap: plan.cap,
            seeded,
            best: outcome.config.clone(),
            privacy: TunePrivacy {
                epsilon: r.total.epsilon(d)?,
                delta: d,
                neighbours: outcome.total.neighbours(),
                tuning: TuningCharge {
                    epsilon: r.tuning.epsilon(d)?,
                    delta: d,
                    route: r.tuning_route,
                    theorem: method_theorem(&plan.method),
                },
                final_fit: FinalFitCharge {
                    epsilon: r.final_fit.epsilon(d)?,
                    delta: d,
                    route: r.final_fit_route,
                    noise_multiplier: r.final_noise_multiplier,
                },
                per_run: outcome.per_run.to_string(),
                record_count,
            },
            size,
            timing: timing(plan.cap),
            public_test_records: test.map(Records::len),
            test_accuracy,
            test_rmse,
            compare,
        })
    }

    /// The final model's test score with its name (`test accuracy` or `test rmse`), when a
    /// public test split was given.
    pub fn test_score(&self) -> Option<(&'static str, f64)> {
        named(self.test_accuracy.flatten(), self.test_rmse.flatten())
    }
}

impl Comparison {
    /// The comparison's test score with its name (`test accuracy` or `test rmse`).
    pub fn test_score(&self) -> Option<(&'static str, f64)> {
        named(self.test_accuracy, self.test_rmse)
    }
}

/// The score that is present, with its name as people read it.
fn named(accuracy: Option<f64>, rmse: Option<f64>) -> Option<(&'static str, f64)> {
    match (accuracy, rmse) {
        (Some(a), _) => Some(("test accuracy", a)),
        (_, Some(r)) => Some(("test rmse", r)),
        _ => None,
    }
}
