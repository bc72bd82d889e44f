//! The whole job: plan the record count (public, or a charged noisy count), calibrate the
//! per-run budget, tune privately on one part of the data, fit the chosen configuration on the
//! other, and account for all of it (split–tune–final, THEORY.md §10). Used by `dptune tune`.
//!
//! No schedule, budget, refusal or reported ε depends on the exact number of private records:
//! they are functions of the plan and the charged noisy count (or the declared public size).
//! The records are touched only by mechanisms (the count, the candidates, the final fit) and by
//! the coin splits (one independent coin per record). The NOT PRIVATE baselines at the end are
//! exempt and say so.

mod baselines;
mod count;
mod kind;
mod report;

use serde::Serialize;

use crate::data::{Dataset, Records, Task};
use crate::error::{Error, Result};
use crate::noise::SecureRng;
use crate::privacy::dpsgd::dpsgd_guarantee;
use crate::privacy::repeat::Repeats;
use crate::privacy::{Guarantee, Ledger, Neighbours, Release, Route};
use crate::tune::cost::calibrate;
use crate::tune::tuner::capped_delta;
use crate::tune::{
    split_tune_final, Config, Fractions, Learner, Method, PrivateStep, Progress, Scorer,
    SearchSpace, TuneOptions, Tuner,
};

use super::{DpSgd, Model, NoisyAccuracy, NoisyClippedLoss, ObjectivePerturbation, RidgeSsp};
use count::count_mechanism;
use kind::{check_task, dpsgd, planned};

pub use baselines::{compare_on_test, oracle_on_test, tpe_baseline};
pub use count::{noisy_count, Size, SizeUsed, COUNT_SHARE};
pub use kind::LearnerKind;
pub use report::{
    describe_method, method_theorem, Comparison, CountCharge, FinalFitCharge, SizeReport,
    TunePrivacy, TuneReport, TuningCharge,
};

/// Everything `dptune tune` decides before touching data.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The learner.
    pub learner: LearnerKind,
    /// How candidates are chosen.
    pub method: Method,
    /// The search space.
    pub space: SearchSpace,
    /// The whole allowance (record count, tuning and final fit together): one (ε, δ) bound
    /// (pure when δ = 0) under the learner's neighbour relation ([`Plan::check`]).
    pub allowance: Guarantee,
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
    /// The (ε, δ) of the allowance, which must be one (ε, δ) bound under the learner's
    /// neighbour relation (else a [`Error::NeighboursMismatch`] or an invalid `allowance`).
    pub fn epsilon_delta(&self) -> Result<(f64, f64)> {
        let nb = self.learner.neighbours();
        if self.allowance.neighbours() != nb {
            return Err(Error::NeighboursMismatch {
                left: self.allowance.neighbours().to_string(),
                right: nb.to_string(),
            });
        }
        self.allowance.as_approx().ok_or_else(|| {
            Error::invalid(
                "allowance",
                &self.allowance,
                "a tuning plan is given one (epsilon, delta) allowance",
            )
        })
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
        let (epsilon, delta) = self.epsilon_delta()?;
        let count = match (self.needs_size(), self.size) {
            (true, Size::NoisyCount { share }) => {
                if !(share > 0.0 && share < 1.0) {
                    return Err(Error::invalid("count_share", share, "must lie in (0, 1)"));
                }
                let (_, spent) = count_mechanism(share * epsilon)?;
                spent.pure_eps()
            }
            (_, Size::Public(0)) => {
                return Err(Error::invalid("public_size", 0, "must be >= 1"));
            }
            _ => None,
        };
        let eps = match count {
            Some(c) => {
                let rest = epsilon - c;
                if crate::numeric::add_up(c, rest) > epsilon {
                    rest.next_down()
                } else {
                    rest
                }
            }
            None => epsilon,
        };
        let nb = self.learner.neighbours();
        let parts = Guarantee::approx(eps, delta, nb)?;
        let Some(cap) = self.cap else {
            return Ok(Budget {
                count,
                tuning: parts.clone(),
                tuning_delta: delta,
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
        if delta == 0.0 {
            return Err(Error::invalid(
                "cap",
                cap,
                "a capped tuning is charged in (eps, delta): give delta > 0",
            ));
        }
        let half = delta / 2.0;
        let fits =
            |t: u64| -> Result<bool> { Ok(capped_delta(&self.method, t, eps, half)? <= delta) };
        if !fits(cap)? {
            let mut hi = cap.max(1);
            while !fits(hi)? {
                if hi > u64::MAX / 4 {
                    return Err(Error::invalid(
                        "cap",
                        cap,
                        format!("no cap fits delta = {delta}"),
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
                    "too small for delta = {delta}: the truncation term (1 + e^eps)·P[K > cap] \
                     must fit in delta/2; the smallest cap that fits is {hi}"
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
            allowance: Guarantee::approx(1.0, 1e-5, learner.neighbours())?,
            fractions: Fractions {
                tune: 0.5,
                train: 0.8,
            },
            size: Size::NoisyCount { share: COUNT_SHARE },
            cap: None,
        })
    }

    /// Checks everything that can be checked without data: the split fractions, the allowance,
    /// the count's share, the cap, the method (a finite threshold), and every value the search
    /// space can produce against the learner's rules. A plan that passes is refused later only for reasons that
    /// depend on public inputs and the charged count.
    pub fn check(&self) -> Result<()> {
        self.fractions.check()?;
        let (_, delta) = self.epsilon_delta()?;
        if delta == 0.0 && self.learner != LearnerKind::ObjectivePerturbation {
            // Their per-run allowances are RDP curves or zCDP, which give no pure ε: the
            // calibration would refuse after the budget was charged.
            return Err(Error::invalid(
                "delta",
                delta,
                "DP-SGD and ridge are accounted in RDP or zCDP, which give no pure epsilon: \
                 give delta > 0",
            ));
        }
        if let Method::Exhaustive { runs } = self.method {
            let grid = self.space.grid()?.len();
            if runs != grid {
                return Err(Error::invalid(
                    "method",
                    format!("exhaustive over {runs} runs"),
                    format!("an exhaustive search runs every point of the space's grid ({grid})"),
                ));
            }
        }
        self.budget()?;
        self.method.check()?;
        self.space.check(self.learner.rules())
    }
}

/// A final fit's release and, for DP-SGD, the noise multiplier it ran with.
type Fitted = (Release<Model>, Option<f64>);

type FinalFit<'a, L> = &'a dyn Fn(&L, &Config, PrivateStep<'_, Dataset>) -> Result<Fitted>;

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
    let (_, delta) = plan.epsilon_delta()?;
    let options = TuneOptions {
        cap: plan.cap,
        cap_delta: budget.tuning_delta,
        progress: events.tuning,
        ..Default::default()
    };
    let expected = size.records().map(|r| plan.expected_parts(r));
    let per_run = plan.per_run(&budget.tuning, expected.map(|e| e.0))?;
    let tuner = Tuner::new(plan.method, &plan.space, per_run.clone())?;
    // The tuner's scorer, by the data's declared (public) task: the noisy correct count for
    // classifiers, the noisy clipped squared error (cap (high − low)²/4) for regression.
    let scorer: &dyn Scorer<L> = match *data.task() {
        Task::Regression { low, high } => &NoisyClippedLoss {
            cap: (high - low).powi(2) / 4.0,
        },
        Task::Classification { .. } => &NoisyAccuracy,
    };
    let learner = make(expected.map(|e| e.0))?;
    let mut final_noise_multiplier = None;
    let fit = |c: &Config, step: PrivateStep<'_, Dataset>| {
        let (fitted, z) = final_fit(&make(expected.map(|e| e.1))?, c, step)?;
        final_noise_multiplier = z;
        Ok(fitted)
    };
    let Some(tuned) = split_tune_final(
        &tuner,
        &learner,
        scorer,
        fit,
        data,
        &budget.parts,
        plan.fractions,
        delta,
        &options,
        rng,
    )?
    else {
        return Ok(None);
    };
    // The count saw every record: it composes sequentially with the parts.
    let total = match &size {
        SizeUsed::NoisyCount { spent, .. } => spent.compose(&tuned.parts)?,
        _ => tuned.parts,
    };
    Ledger::new(plan.allowance.clone())?.charge(&total)?;
    let reported = Reported {
        tuning: budget.parts.clone(),
        final_fit: budget.parts.clone(),
        total: match &size {
            SizeUsed::NoisyCount { spent, .. } => spent.compose(&budget.parts)?,
            _ => budget.parts.clone(),
        },
        tuning_route: tuned.tuning.epsilon_route(delta)?.1,
        final_fit_route: tuned.fitted.spent.epsilon_route(delta)?.1,
        final_noise_multiplier,
    };
    Ok(Some(Outcome {
        config: tuned.config,
        model: tuned.fitted.value,
        size,
        per_run,
        tuning: tuned.tuning,
        final_fit: tuned.fitted.spent,
        total,
        reported,
    }))
}

impl Plan {
    /// Checks the plan against the data's declared task (a public part of the schema): ridge
    /// needs a numeric label, objective perturbation a binary one. Front ends call it before
    /// they charge a budget; [`tune`] calls it again.
    pub fn check_data(&self, data: &Dataset) -> Result<()> {
        check_task(self.learner, data.task())
    }
}

/// Runs `plan` on `data` (the private records; never the public test split). Everything that
/// does not need data is checked first ([`Plan::check`], the label against the learner); then,
/// for DP-SGD without a public size, a noisy record count is released (charged); the per-run
/// budget is calibrated and the whole cost checked against (ε, δ) before any candidate runs.
/// Nothing released or decided depends on the exact number of records. Returns `None` when the
/// tuning released ⊥ (nothing else is released then; front ends report [`released_nothing`]).
pub fn tune(
    plan: &Plan,
    data: &Dataset,
    events: &Events<'_>,
    rng: &mut SecureRng,
) -> Result<Option<Outcome>> {
    plan.check()?;
    plan.check_data(data)?;
    let budget = plan.budget()?;
    let size = release_size(plan, &budget, data, rng)?;
    run_planned(plan, &budget, size, data, events, rng)
}

/// The refusal a front end reports when [`tune`] returned `None`: the tuning released ⊥, its
/// budget is spent and nothing else is released. One message for the CLI and Python.
pub fn released_nothing() -> Error {
    Error::NoRelease {
        reason: "the private tuning released nothing (⊥); the budget was spent, nothing else is \
                 released"
            .into(),
    }
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
            let fit: FinalFit<'_, DpSgd> = &|l, c, step| {
                let total = c
                    .get("epochs")
                    .and_then(|v| v.as_i64("epochs").ok())
                    .unwrap_or(0) as u64;
                let (release, schedule) = l.fit_scheduled(c, step, &|e| on_epoch(e, total))?;
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
    step: PrivateStep<'_, Dataset>,
) -> Result<Fitted> {
    Ok((l.fit(c, step)?, None))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learn::testdata::toy;

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
        let d = toy(1500, 0.0, 1);
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
