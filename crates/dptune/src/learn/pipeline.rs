//! The whole job: plan the record count (public, or a charged noisy count), calibrate the
//! per-run budget, tune privately on one part of the data, fit the chosen configuration on the
//! other, and account for all of it (split–tune–final, THEORY.md §10). Used by `dptune tune`.
//!
//! No schedule, budget, refusal or reported ε depends on the exact number of private records:
//! they are functions of the plan and the charged noisy count (or the declared public size).
//! The records are touched only by mechanisms (the count, the candidates, the final fit) and by
//! the coin splits (one independent coin per record). The NOT PRIVATE baselines at the end are
//! exempt and say so.

use serde::Serialize;

use crate::data::{Dataset, Records, Task};
use crate::error::{Error, Result};
use crate::noise::{DiscreteLaplace, SecureRng};
use crate::privacy::dpsgd::dpsgd_guarantee;
use crate::privacy::repeat::Repeats;
use crate::privacy::{Guarantee, Ledger, Neighbours, Release, Route};
use crate::tune::baseline::{oracle_best, NonPrivate, Scored};
use crate::tune::cost::calibrate;
use crate::tune::tuner::capped_delta;
use crate::tune::{
    split_by_coin, Config, Domain, Fractions, Learner, Method, Progress, Scorer, SearchSpace,
    TuneOptions, Tuner, Value,
};

use super::{
    DpSgd, ExactAccuracy, ExactNegRmse, Model, NoisyAccuracy, NoisyClippedLoss,
    ObjectivePerturbation, RidgeSsp, DPSGD_RULES, OBJPERT_RULES, RIDGE_RULES,
};
use crate::tune::space::Rule;

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
    /// The hyperparameters it reads and the values each accepts (checked against a search
    /// space by [`SearchSpace::check`] before any data is read).
    pub fn rules(&self) -> &'static [Rule] {
        match self {
            LearnerKind::DpSgdLogistic | LearnerKind::DpSgdMlp { .. } => &DPSGD_RULES,
            LearnerKind::ObjectivePerturbation => &OBJPERT_RULES,
            LearnerKind::Ridge => &RIDGE_RULES,
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

/// Where the number of records that DP-SGD's schedule is planned for comes from (objective
/// perturbation and ridge need none, and then nothing is spent or released for it).
///
/// Under add/remove-one neighbours the number of private records is itself private, so it is
/// never read off the data: either the user declares it public, or a noisy count is released
/// first and charged. DP-SGD's guarantee holds whatever the planned size (see
/// [`DpSgd`]): a size far from the truth only costs accuracy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Size {
    /// Declared public by the user (`--public-size`): nothing is spent on it.
    Public(u64),
    /// Released first as a noisy count spending `share` ∈ (0, 1) of the total ε
    /// ([`noisy_count`]); the rest goes to tuning and final fit.
    NoisyCount {
        /// The share of the total ε spent on the count.
        share: f64,
    },
}

/// The default share of the total ε spent on the noisy record count (2 %: at ε = 1 the count's
/// noise has scale 50 records).
pub const COUNT_SHARE: f64 = 0.02;

/// The record count a finished tuning planned with.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "source")]
pub enum SizeUsed {
    /// The learner needs no size: nothing was spent or released for it.
    NotNeeded,
    /// Declared public by the user.
    Public {
        /// The declared number of records.
        records: u64,
    },
    /// A charged release: the noisy count and what it spent.
    NoisyCount {
        /// The released noisy count (may be below 1; the schedule then plans for 1 record).
        value: i64,
        /// Its cost (pure ε, add/remove-one).
        spent: Guarantee,
    },
}

impl SizeUsed {
    /// The number of records the schedules are planned for, when there is one: the declared
    /// size, or the noisy count raised to at least 1 (post-processing).
    pub fn records(&self) -> Option<f64> {
        match self {
            SizeUsed::NotNeeded => None,
            SizeUsed::Public { records } => Some((*records).max(1) as f64),
            SizeUsed::NoisyCount { value, .. } => Some((*value).max(1) as f64),
        }
    }
}

/// Denominator of the noisy count's rational ε (2^32).
const COUNT_DEN: u64 = 1 << 32;

/// The number of records `n` plus exact discrete Laplace noise P[y] ∝ exp(−|y|·s/2^32) with
/// s = ⌊ε·2^32⌋ (the geometric mechanism, Ghosh, Roughgarden & Sundararajan, STOC 2009;
/// sampled exactly by Canonne, Kamath & Steinke, arXiv 2004.00010, Algorithm 2). A count has
/// sensitivity 1 under add/remove-one, so the release is (s/2^32)-DP, and that (≤ ε) is what it
/// is charged (Dwork & Roth 2014, Thm 3.6, with the discrete Laplace in place of the Laplace).
/// Refused before sampling when ε < 2^-32 or the scale exceeds 2^48.
pub fn noisy_count(n: usize, eps: f64, rng: &mut SecureRng) -> Result<Release<i64>> {
    let (lap, spent) = count_mechanism(eps)?;
    Ok(Release {
        value: (n as i64).saturating_add(lap.sample(rng)),
        spent,
    })
}

/// The noisy count's sampler and exact charge at allowance `eps` (no data involved).
fn count_mechanism(eps: f64) -> Result<(DiscreteLaplace, Guarantee)> {
    crate::error::check_positive("epsilon", eps)?;
    let s = (eps * COUNT_DEN as f64).floor();
    if !(1.0..=u64::MAX as f64 / 2.0).contains(&s) {
        return Err(Error::invalid(
            "epsilon",
            eps,
            "the noisy count needs 2^-32 <= epsilon <= 2^31",
        ));
    }
    let s = s as u64;
    // s / 2^32 is exact in f64 (s < 2^63 and a power-of-two denominator).
    let spent = Guarantee::pure(s as f64 / COUNT_DEN as f64, Neighbours::AddRemove)?;
    Ok((DiscreteLaplace::new(s, COUNT_DEN)?, spent))
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
    /// Total ε (record count, tuning and final fit together).
    pub epsilon: f64,
    /// Total δ.
    pub delta: f64,
    /// The coin-split fractions (tuning vs final; train vs score within tuning).
    pub fractions: Fractions,
    /// Where DP-SGD's planned number of records comes from.
    pub size: Size,
    /// Capped mode ([`TuneOptions::cap`]): always run exactly this many candidate slots, so
    /// that the run time does not depend on the secret number of runs K. Half of δ then covers
    /// the truncation term (checked before any data is touched) and the tuning is calibrated
    /// at δ/2.
    pub cap: Option<u64>,
}

/// A finished private tuning.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    /// The chosen configuration.
    pub config: Config,
    /// The final model.
    pub model: Model,
    /// The record count the schedules were planned with (a charged release when noisy).
    pub size: SizeUsed,
    /// The per-run allowance the tuner was calibrated to.
    pub per_run: Guarantee,
    /// What the tuning spent (all runs and the selection).
    pub tuning: Guarantee,
    /// What the final fit spent.
    pub final_fit: Guarantee,
    /// Everything together: the noisy count (if any) composed with the parallel composition of
    /// tuning and final fit (disjoint parts).
    pub total: Guarantee,
    /// What a report may state: every guarantee in it a function of public inputs only.
    pub reported: Reported,
}

/// The guarantees a report states, each a function of public inputs only (rule 4 of DESIGN.md:
/// no ε computed from the private count). The exact spend of the tuning and of the final fit
/// can depend on more than public inputs: on the noisy count (a DP-SGD configuration's noise is
/// calibrated to its planned size) or on the sizes of the coin-split parts (output
/// perturbation's sensitivity under replace-one). So the report states the allowance both parts
/// were held to (`Ledger`-checked before anything is released, so it bounds them); the exact
/// spend stays in [`Outcome`] for library callers. The routes and the final fit's noise
/// multiplier are functions of released values: each part's spend has one bound per route, and
/// which route is tightest depends only on the learner, the method, the released configuration
/// and the planned size (public or the charged count); the DP-SGD schedule likewise.
#[derive(Debug, Clone, Serialize)]
pub struct Reported {
    /// The tuning's cost: at most the parts' allowance.
    pub tuning: Guarantee,
    /// The final fit's cost: at most the parts' allowance.
    pub final_fit: Guarantee,
    /// The whole cost: the count's allowance (if any) composed with the parallel parts.
    pub total: Guarantee,
    /// The route that bounds the tuning's spend at the plan's δ (RDP for the repeat and
    /// threshold theorems, which are stated in RDP; pure when a pure bound is tighter).
    pub tuning_route: Route,
    /// The route that bounds the final fit's spend at the plan's δ (for DP-SGD under an (ε, δ)
    /// allowance the tighter of the lattice RDP curve and the lattice PLD: the noise was
    /// calibrated to it).
    pub final_fit_route: Route,
    /// The final DP-SGD fit's noise multiplier (σ = z·C per coordinate), when the learner is
    /// DP-SGD: its schedule is a function of the released configuration, the planned size and
    /// the allowance.
    pub final_noise_multiplier: Option<f64>,
}

/// Progress callbacks: clock ticks during tuning and the final fit's epochs.
#[derive(Default)]
pub struct Events<'a> {
    /// Called about every 200 ms during tuning (the elapsed time it carries reveals the number
    /// of runs unless the plan is capped: a front end should not show it).
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

/// How a plan's budget is divided, fixed before any data is touched.
struct Budget {
    /// The noisy count's allowance (ε of its own), when one is released.
    count: Option<f64>,
    /// What tuning and final fit may each spend (they are parallel parts): (ε − count, δ).
    parts: Guarantee,
    /// What the uncapped tuning cost is calibrated to: `parts`, or its ε at δ/2 when capped.
    tuning: Guarantee,
    /// The δ of `tuning` (δ, or δ/2 when capped).
    tuning_delta: f64,
}

impl Plan {
    /// The outer allowance (ε, δ) under the learner's neighbour relation: the whole cost.
    pub fn outer(&self) -> Result<Guarantee> {
        Guarantee::approx(self.epsilon, self.delta, self.learner.neighbours())
    }

    /// True for the learners whose schedule needs a number of records (DP-SGD).
    pub fn needs_size(&self) -> bool {
        matches!(
            self.learner,
            LearnerKind::DpSgdLogistic | LearnerKind::DpSgdMlp { .. }
        )
    }

    /// The expected sizes of the candidates' training side and of the final part when the
    /// private data has `records` records (the coin splits' means; public given `records`).
    pub fn expected_parts(&self, records: f64) -> (f64, f64) {
        let f = self.fractions;
        (records * f.tune * f.train, records * (1.0 - f.tune))
    }

    /// The budget split, checked: the count's share, the parts' allowance, and with a cap that
    /// the truncation term fits in δ/2 (else an error naming `cap` and the smallest cap that
    /// fits).
    fn budget(&self) -> Result<Budget> {
        self.outer()?;
        let count = match (self.needs_size(), self.size) {
            (true, Size::NoisyCount { share }) => {
                if !(share > 0.0 && share < 1.0) {
                    return Err(Error::invalid("count_share", share, "must lie in (0, 1)"));
                }
                let (_, spent) = count_mechanism(share * self.epsilon)?;
                spent.pure_eps()
            }
            (_, Size::Public(0)) => {
                return Err(Error::invalid("public_size", 0, "must be >= 1"));
            }
            _ => None,
        };
        let eps = match count {
            Some(c) => {
                let rest = self.epsilon - c;
                if crate::numeric::add_up(c, rest) > self.epsilon {
                    rest.next_down()
                } else {
                    rest
                }
            }
            None => self.epsilon,
        };
        let nb = self.learner.neighbours();
        let parts = Guarantee::approx(eps, self.delta, nb)?;
        let Some(cap) = self.cap else {
            return Ok(Budget {
                count,
                tuning: parts.clone(),
                tuning_delta: self.delta,
                parts,
            });
        };
        if matches!(self.method, Method::Exhaustive { .. }) {
            return Err(Error::invalid(
                "cap",
                cap,
                "an exhaustive search runs every grid point (its number of runs is public): \
                 there is nothing to cap",
            ));
        }
        if self.delta == 0.0 {
            return Err(Error::invalid(
                "cap",
                cap,
                "a capped tuning is charged in (eps, delta): give delta > 0",
            ));
        }
        let half = self.delta / 2.0;
        let fits = |t: u64| -> Result<bool> {
            Ok(capped_delta(&self.method, t, eps, half)? <= self.delta)
        };
        if !fits(cap)? {
            let mut hi = cap.max(1);
            while !fits(hi)? {
                if hi > u64::MAX / 4 {
                    return Err(Error::invalid(
                        "cap",
                        cap,
                        format!("no cap fits delta = {}", self.delta),
                    ));
                }
                hi *= 2;
            }
            let mut lo = cap;
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2;
                if fits(mid)? {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            return Err(Error::invalid(
                "cap",
                cap,
                format!(
                    "too small for delta = {}: the truncation term (1 + e^eps)·P[K > cap] must \
                     fit in delta/2; the smallest cap that fits is {hi}",
                    self.delta
                ),
            ));
        }
        Ok(Budget {
            count,
            tuning: Guarantee::approx(eps, half, nb)?,
            tuning_delta: half,
            parts,
        })
    }

    /// The per-run allowance: calibrated so that the whole (uncapped) tuning fits `target`
    /// (for exhaustive search the runs compose in the learner's own currency, which is tighter
    /// than splitting (ε, δ) evenly). For DP-SGD the currency is the RDP curve of a reference
    /// schedule (the search space's median batch size and epochs on `train_records`, the
    /// expected size of a candidate's training side, from the public or noisy count) at the
    /// largest multiplier 1/z that fits; each configuration then calibrates its own z to fit
    /// under that curve at every default order. A function of public inputs (and the charged
    /// count) only.
    fn per_run(&self, target: &Guarantee, train_records: Option<f64>) -> Result<Guarantee> {
        let (_, g) = match self.learner {
            LearnerKind::DpSgdLogistic | LearnerKind::DpSgdMlp { .. } => {
                let records = planned(train_records)?;
                let batch = middle(&self.space, "batch_size", 256.0);
                let epochs = middle(&self.space, "epochs", 3.0);
                let q = (batch / records.max(1.0)).min(1.0);
                let steps = (epochs / q).ceil() as u64;
                calibrate(
                    target,
                    &self.method,
                    |t| dpsgd_guarantee(q, 1.0 / t, steps),
                    1e-3,
                    10.0,
                )?
            }
            LearnerKind::ObjectivePerturbation => calibrate(
                target,
                &self.method,
                |e| Guarantee::pure(e, Neighbours::Replace),
                1e-6,
                10.0,
            )?,
            LearnerKind::Ridge => calibrate(
                target,
                &self.method,
                |r| Guarantee::zcdp(r, Neighbours::AddRemove),
                1e-9,
                100.0,
            )?,
        };
        Ok(g)
    }

    /// The default plan: DP-SGD logistic regression, Papernot–Steinke with logarithmic
    /// repeats of mean 10 (truncated negative binomial η = 0), total (ε = 1, δ = 1e-5) of which
    /// [`COUNT_SHARE`] goes to a noisy record count, half the data for tuning (80 % of it to
    /// train, 20 % to score), half for the final fit, no cap.
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
            size: Size::NoisyCount { share: COUNT_SHARE },
            cap: None,
        })
    }

    /// Checks everything that can be checked without data: the allowance, the count's share,
    /// the cap, the method (a finite threshold), and every value the search space can produce
    /// against the learner's rules. A plan that passes is refused later only for reasons that
    /// depend on public inputs and the charged count.
    pub fn check(&self) -> Result<()> {
        self.budget()?;
        self.method.check()?;
        self.space.check(self.learner.rules())
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

/// A final fit's release and, for DP-SGD, the noise multiplier it ran with.
type Fitted = (Release<Model>, Option<f64>);

type FinalFit<'a, L> =
    &'a dyn Fn(&L, &Config, &Dataset, &Guarantee, &mut SecureRng) -> Result<Fitted>;

/// The learner for a planned number of records (`None` for learners that need none).
type MakeLearner<'a, L> = &'a dyn Fn(Option<f64>) -> Result<L>;

/// The record count the schedules plan with: none for learners that need none, the declared
/// public size, or the noisy count (the first release, charged to `budget.count`).
fn release_size(
    plan: &Plan,
    budget: &Budget,
    data: &Dataset,
    rng: &mut SecureRng,
) -> Result<SizeUsed> {
    Ok(match (plan.needs_size(), plan.size, budget.count) {
        (false, _, _) => SizeUsed::NotNeeded,
        (true, Size::Public(records), _) => SizeUsed::Public { records },
        (true, Size::NoisyCount { .. }, Some(eps)) => {
            let c = noisy_count(data.len(), eps, rng)?;
            SizeUsed::NoisyCount {
                value: c.value,
                spent: c.spent,
            }
        }
        (true, Size::NoisyCount { share }, None) => {
            return Err(Error::invalid(
                "count_share",
                share,
                "the plan has no allowance for the noisy count",
            ))
        }
    })
}

#[allow(clippy::too_many_arguments)]
fn tune_with<L: Learner<Data = Dataset, Model = Model>>(
    plan: &Plan,
    budget: &Budget,
    size: SizeUsed,
    make: MakeLearner<'_, L>,
    final_fit: FinalFit<'_, L>,
    data: &Dataset,
    events: &Events<'_>,
    rng: &mut SecureRng,
) -> Result<Option<Outcome>> {
    let outer = plan.outer()?;
    let options = TuneOptions {
        cap: plan.cap,
        cap_delta: budget.tuning_delta,
        progress: events.tuning,
        ..Default::default()
    };
    let expected = size.records().map(|r| plan.expected_parts(r));
    let per_run = plan.per_run(&budget.tuning, expected.map(|e| e.0))?;
    let tuner = Tuner::new(plan.method, &plan.space, per_run.clone())?;
    // The whole tuning is checked against its allowance before any candidate runs.
    let tuning = tuner.cost(&options)?;
    Ledger::new(budget.parts.clone())?.charge(&tuning)?;
    let outer_split = split_by_coin(data.len(), plan.fractions.tune, rng)?;
    let tuning_data = data.select(&outer_split.first);
    let inner = split_by_coin(tuning_data.len(), plan.fractions.train, rng)?;
    let scorer = AutoScorer {
        cap: loss_cap(data.task()),
    };
    let learner = make(expected.map(|e| e.0))?;
    let selected = tuner.run(&learner, &scorer, &tuning_data, &inner, &options, rng)?;
    let Some(best) = selected.value else {
        return Ok(None);
    };
    let final_data = data.select(&outer_split.second);
    let final_learner = make(expected.map(|e| e.1))?;
    let (fitted, final_noise_multiplier) = final_fit(
        &final_learner,
        &best.config,
        &final_data,
        &budget.parts,
        rng,
    )
    .map_err(|e| match e {
        Error::InvalidParameter { .. } => Error::NoRelease {
            reason: format!("the chosen configuration could not be fitted: {e}"),
        },
        other => other,
    })?;
    Ledger::new(budget.parts.clone())?.charge(&fitted.spent)?;
    // Parallel composition: each record is in one part only. Stated also in (ε, δ) at the
    // plan's δ (the maximum of the parts' ε), which can be much tighter than converting the
    // pointwise maximum of the two RDP curves when their best orders differ.
    let with_approx = |g: &Guarantee| -> Result<Guarantee> {
        let eps = g.epsilon(plan.delta)?;
        g.clone()
            .and(Guarantee::approx(eps, plan.delta, g.neighbours())?)
    };
    let parts = Guarantee::parallel(&[with_approx(&selected.spent)?, with_approx(&fitted.spent)?])?;
    // The count saw every record: it composes sequentially with the parts.
    let total = match &size {
        SizeUsed::NoisyCount { spent, .. } => spent.compose(&parts)?,
        _ => parts,
    };
    Ledger::new(outer)?.charge(&total)?;
    let reported = Reported {
        tuning: budget.parts.clone(),
        final_fit: budget.parts.clone(),
        total: match &size {
            SizeUsed::NoisyCount { spent, .. } => spent.compose(&budget.parts)?,
            _ => budget.parts.clone(),
        },
        tuning_route: selected.spent.epsilon_route(plan.delta)?.1,
        final_fit_route: fitted.spent.epsilon_route(plan.delta)?.1,
        final_noise_multiplier,
    };
    Ok(Some(Outcome {
        config: best.config,
        model: fitted.value,
        size,
        per_run,
        tuning: selected.spent,
        final_fit: fitted.spent,
        total,
        reported,
    }))
}

/// The planned number of records DP-SGD needs (the pipeline always has one for it).
fn planned(records: Option<f64>) -> Result<f64> {
    records
        .ok_or_else(|| Error::invalid("size", "none", "DP-SGD needs a planned number of records"))
}

fn dpsgd(kind: LearnerKind, records: Option<f64>) -> Result<DpSgd> {
    let records = planned(records)?;
    Ok(match kind {
        LearnerKind::DpSgdMlp { hidden } => DpSgd::mlp(hidden, records),
        _ => DpSgd::linear(records),
    })
}

/// Runs `plan` on `data` (the private records; never the public test split). Everything that
/// does not need data is checked first ([`Plan::check`], the label against the learner); then,
/// for DP-SGD without a public size, a noisy record count is released (charged); the per-run
/// budget is calibrated and the whole cost checked against (ε, δ) before any candidate runs.
/// Nothing released or decided depends on the exact number of records. Returns `None` when the
/// tuning released ⊥ (nothing else is released then).
pub fn tune(
    plan: &Plan,
    data: &Dataset,
    events: &Events<'_>,
    rng: &mut SecureRng,
) -> Result<Option<Outcome>> {
    plan.check()?;
    check_task(plan.learner, data.task())?;
    let budget = plan.budget()?;
    let size = release_size(plan, &budget, data, rng)?;
    run_planned(plan, &budget, size, data, events, rng)
}

/// Everything after the record count: dispatch on the learner.
fn run_planned(
    plan: &Plan,
    budget: &Budget,
    size: SizeUsed,
    data: &Dataset,
    events: &Events<'_>,
    rng: &mut SecureRng,
) -> Result<Option<Outcome>> {
    match plan.learner {
        kind @ (LearnerKind::DpSgdLogistic | LearnerKind::DpSgdMlp { .. }) => {
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
                let (release, schedule) = l.fit_scheduled(c, d, a, r, &|e| on_epoch(e, total))?;
                Ok((release, Some(schedule.z_request)))
            };
            let make = |r| dpsgd(kind, r);
            tune_with(plan, budget, size, &make, fit, data, events, rng)
        }
        LearnerKind::ObjectivePerturbation => tune_with(
            plan,
            budget,
            size,
            &|_| Ok(ObjectivePerturbation),
            &plain_fit,
            data,
            events,
            rng,
        ),
        LearnerKind::Ridge => tune_with(
            plan,
            budget,
            size,
            &|_| Ok(RidgeSsp),
            &plain_fit,
            data,
            events,
            rng,
        ),
    }
}

fn plain_fit<L: Learner<Data = Dataset, Model = Model>>(
    l: &L,
    c: &Config,
    d: &Dataset,
    a: &Guarantee,
    r: &mut SecureRng,
) -> Result<Fitted> {
    Ok((l.fit(c, d, a, r)?, None))
}

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
        Ok(match learner {
            kind @ (LearnerKind::DpSgdLogistic | LearnerKind::DpSgdMlp { .. }) => {
                dpsgd(kind, Some(d.len() as f64))?
                    .fit(c, d, per_run, r)?
                    .value
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Public synthetic data: label 1 when x0 > x1.
    fn toy(n: usize) -> Dataset {
        let mut rng = SecureRng::seeded(1);
        let mut x = Vec::new();
        let mut y = Vec::new();
        for _ in 0..n {
            let (a, b) = (rng.unit_f64(), rng.unit_f64());
            x.extend([a, b]);
            y.push(if a > b { 1.0 } else { 0.0 });
        }
        let task = Task::Classification {
            classes: vec!["no".into(), "yes".into()],
        };
        Dataset::new(
            x,
            y,
            2,
            2f64.sqrt().next_up(),
            task,
            vec!["a".into(), "b".into()],
        )
        .unwrap()
    }

    /// The sample variance of `draws` noisy counts of 0 at ε.
    fn count_noise_variance(eps: f64, draws: usize, seed: u64) -> f64 {
        let mut rng = SecureRng::seeded(seed);
        let v: Vec<f64> = (0..draws)
            .map(|_| noisy_count(0, eps, &mut rng).unwrap().value as f64)
            .collect();
        let mean = v.iter().sum::<f64>() / draws as f64;
        v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (draws - 1) as f64
    }

    #[test]
    fn noisy_count_is_a_charged_discrete_laplace() {
        // Worked number: ε = 0.5 gives s = 2^31, charged exactly 0.5; the discrete Laplace with
        // P ∝ e^{-|y|/2} has variance 2e^{-1/2}/(1 - e^{-1/2})^2 = 7.8742.
        let r = noisy_count(10, 0.5, &mut SecureRng::seeded(1)).unwrap();
        assert_eq!(r.spent.pure_eps(), Some(0.5));
        assert_eq!(r.spent.neighbours(), Neighbours::AddRemove);
        let var = count_noise_variance(0.5, 20_000, 2);
        // The sample variance of 20 000 draws has sd ≈ 7.87·sqrt((kurtosis - 1)/20 000) < 0.2
        // (excess kurtosis of this law ≈ 6); 6 sd = 1.2 gives a false failure below 1e-8.
        assert!((var - 7.8742).abs() < 1.2, "{var}");
        // A deliberately wrong variant (half the noise scale, ε = 1: variance 1.8410) is
        // rejected by the same check.
        let wrong = count_noise_variance(1.0, 20_000, 3);
        assert!((wrong - 7.8742).abs() >= 1.2, "{wrong}");
        // Allowances that the exact sampler cannot express are refused before any data.
        assert!(noisy_count(10, 1e-12, &mut SecureRng::seeded(1)).is_err());
        assert!(noisy_count(10, f64::NAN, &mut SecureRng::seeded(1)).is_err());
    }

    #[test]
    fn the_budget_is_split_and_checked_before_data() {
        let mut plan = Plan::default_for(LearnerKind::DpSgdLogistic).unwrap();
        let b = plan.budget().unwrap();
        let c = b.count.unwrap();
        assert_eq!(c, 85_899_345.0 / 4_294_967_296.0);
        let rest = b.parts.epsilon(1e-5).unwrap();
        assert!(crate::numeric::add_up(c, rest) <= 1.0);
        // A public size spends nothing on a count; so do learners that need no size.
        plan.size = Size::Public(100);
        assert_eq!(plan.budget().unwrap().count, None);
        plan.size = Size::Public(0);
        assert!(plan.check().is_err());
        plan.size = Size::NoisyCount { share: 1.0 };
        assert!(plan.check().is_err());
        let mut ridge = Plan::default_for(LearnerKind::Ridge).unwrap();
        assert_eq!(ridge.budget().unwrap().count, None);
        // Capped: half of δ for the truncation term. Geometric γ = 1/3 at ε ≈ 1, δ = 1e-5 needs
        // (1 + e^ε)·(2/3)^T ≤ 5e-6, i.e. T ≥ 34 (with the tail bound of `tail_probability`).
        ridge.method = Method::RepeatAndSelect(Repeats::geometric(1.0 / 3.0).unwrap());
        ridge.cap = Some(20);
        let e = ridge.check().unwrap_err().to_string();
        assert!(
            e.contains("cap") && e.contains("smallest cap that fits is"),
            "{e}"
        );
        let smallest: u64 = e.rsplit(' ').next().unwrap().parse().unwrap();
        assert!((30..=40).contains(&smallest), "{smallest}");
        ridge.cap = Some(smallest);
        let b = ridge.budget().unwrap();
        assert_eq!(b.tuning_delta, 5e-6);
        ridge.cap = Some(smallest - 1);
        assert!(ridge.check().is_err());
        ridge.method = Method::Exhaustive { runs: 7 };
        ridge.cap = Some(100);
        assert!(ridge
            .check()
            .unwrap_err()
            .to_string()
            .contains("exhaustive"));
    }

    #[test]
    fn given_the_same_noisy_count_neighbours_get_the_same_guarantees() {
        // Everything after the count reads the data only through mechanisms: with the same
        // released count, D and D minus one record state identical guarantees. The check
        // rejects the old behaviour (a count read off the data): 1500 vs 1499 differ.
        let d = toy(1500);
        let d1 = d.select(&(0..1499).collect::<Vec<_>>());
        let plan = Plan::default_for(LearnerKind::DpSgdLogistic).unwrap();
        let budget = plan.budget().unwrap();
        let run = |data: &Dataset, value: i64| {
            let spent = Guarantee::pure(budget.count.unwrap(), Neighbours::AddRemove).unwrap();
            let size = SizeUsed::NoisyCount { value, spent };
            let o = run_planned(
                &plan,
                &budget,
                size,
                data,
                &Events::default(),
                &mut SecureRng::seeded(4),
            )
            .unwrap()
            .unwrap();
            (o.per_run, o.tuning, o.total.epsilon(1e-5).unwrap())
        };
        let a = run(&d, 1512);
        assert_eq!(a, run(&d1, 1512));
        assert_ne!(run(&d, 1500), run(&d1, 1499));
    }
}
