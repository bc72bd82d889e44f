//! Utility study: on a table of (configuration → validation score, test score), how far the
//! privately selected configuration falls from the non-private best, for every tuner and total
//! budget, at equal total privacy.
//!
//! **Model.** Scores are in table units, clipped to the public range `[0, bound]`. A validation
//! score is a mean over n validation records of a per-record quantity in `[0, bound]` (a correct
//! prediction: bound 1; a bounded loss), so under add/remove-one the *sum* moves by at most
//! `bound` in one direction: per-candidate sensitivity Δ = bound/n in table units, monotone
//! (THEORY.md §0.2; `monotonic = false` doubles the range). Every private method below spends
//! the same total ε (pure DP under add/remove), except Gaussian report-noisy-max, which spends
//! (ε, δ).
//!
//! **Regret** of a choice i: `reference − test[i]` (sign-flipped when minimising), where the
//! reference is the mean test score of the configurations a non-private tuner picks from (the
//! maximisers of the validation score, uniformly). The non-private best has mean regret zero by
//! construction (checked, not assumed); a private choice can have negative regret when it is
//! luckier on the test score.
//!
//! **Methods** ([`StudyMethod`]):
//! * one-shot selection over all m configurations: exponential mechanism and permute-and-flip
//!   (expected regret and quantiles computed *exactly* from their selection probabilities),
//!   Laplace and Gaussian report-noisy-max (sampled with the library's exact samplers);
//! * Liu–Talwar (geometric K) and Papernot–Steinke (logarithmic K), E\[K\] = `mean_runs`: each
//!   run draws a uniformly random configuration and releases its score plus exact discrete
//!   Laplace noise; the per-run ε is calibrated with [`crate::tune::calibrate`] so that the whole
//!   tuning costs the total ε (Corollary 3: 3ε₁ and 2ε₁);
//! * exhaustive composition: every configuration's score released with Laplace noise at ε/m
//!   ([`crate::tune::exhaustive_share`]); the argmax of those noisy scores has exactly the law of
//!   [`LaplaceNoisyMax`] with monotone sensitivity Δ at ε/m, which is how it is sampled;
//! * uniform random choice (sampled, so its agreement with the table's mean regret is a check)
//!   and the non-private best (labelled non-private; regret 0).
//!
//! **Reproducibility.** Repetition r of method j at budget b draws from stream
//! `(j·B + b)·R + r` of [`SecureRng::streams`] of `SecureRng::seeded(seed)`, so a seed gives the
//! same numbers on 1 or N threads.

pub mod plot;
pub mod recommend;
pub mod report;
pub mod table;

use std::fmt;
use std::str::FromStr;

use rayon::prelude::*;
use serde::Serialize;

use crate::error::{check_open_unit, check_positive, Error, Result};
use crate::noise::{DiscreteLaplace, SecureRng, Streams};
use crate::numeric::quadrature::gauss_legendre_unit;
use crate::privacy::repeat::Repeats;
use crate::privacy::{Guarantee, Neighbours};
use crate::select::{
    ExponentialMechanism, GaussianArgmax, Goal, L2Sensitivity, LaplaceNoisyMax, PermuteAndFlip,
    Scores, Selector, Sensitivity,
};
use crate::tune::runs::draw_runs;
use crate::tune::{calibrate, exhaustive_share, Method};

pub use recommend::{recommend, Ranked, Recommendation};
pub use table::{
    load_json_table, load_table, table_from_csv, table_from_json, table_from_values, Columns,
    ScoreTable,
};

/// A tuner compared by the study.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StudyMethod {
    /// **Non-private** argmax of the validation score (the reference; no guarantee).
    NonPrivateBest,
    /// Exponential mechanism over all configurations (exact).
    Exponential,
    /// Permute-and-flip over all configurations (exact).
    PermuteAndFlip,
    /// Laplace report-noisy-max over all configurations (sampled).
    Laplace,
    /// Gaussian report-noisy-max over all configurations, (ε, δ) (sampled).
    Gaussian,
    /// Liu–Talwar Algorithm 2: best of K ~ Geometric random configurations, noisy scores.
    LiuTalwar,
    /// Papernot–Steinke: best of K ~ Logarithmic random configurations, noisy scores.
    PapernotSteinke,
    /// Exhaustive composition: every configuration's noisy score at ε/m, then the best.
    Exhaustive,
    /// A uniformly random configuration (spends nothing).
    Uniform,
}

impl StudyMethod {
    /// Every method, in report order.
    pub const ALL: [StudyMethod; 9] = [
        StudyMethod::NonPrivateBest,
        StudyMethod::Exponential,
        StudyMethod::PermuteAndFlip,
        StudyMethod::Laplace,
        StudyMethod::Gaussian,
        StudyMethod::LiuTalwar,
        StudyMethod::PapernotSteinke,
        StudyMethod::Exhaustive,
        StudyMethod::Uniform,
    ];

    /// The name used on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            StudyMethod::NonPrivateBest => "non-private-best",
            StudyMethod::Exponential => "exponential",
            StudyMethod::PermuteAndFlip => "permute-and-flip",
            StudyMethod::Laplace => "laplace",
            StudyMethod::Gaussian => "gaussian",
            StudyMethod::LiuTalwar => "liu-talwar",
            StudyMethod::PapernotSteinke => "papernot-steinke",
            StudyMethod::Exhaustive => "exhaustive",
            StudyMethod::Uniform => "uniform",
        }
    }

    /// True for the methods that spend the budget (not the non-private best, not uniform).
    pub fn is_private(self) -> bool {
        !matches!(self, StudyMethod::NonPrivateBest | StudyMethod::Uniform)
    }

    /// How many candidate trainings the method needs on a table of m configurations (E\[K\] for
    /// the random-search tuners).
    pub fn runs_needed(self, m: usize, mean_runs: f64) -> f64 {
        match self {
            StudyMethod::LiuTalwar | StudyMethod::PapernotSteinke => mean_runs,
            StudyMethod::Uniform => 1.0,
            _ => m as f64,
        }
    }
}

impl fmt::Display for StudyMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for StudyMethod {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        StudyMethod::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = StudyMethod::ALL.iter().map(|m| m.name()).collect();
                Error::invalid("method", s, format!("expected one of {}", names.join(", ")))
            })
    }
}

/// How scores become a private utility (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ScoreModel {
    /// Validation-set size n (public).
    pub n: u64,
    /// Per-record scores lie in `[0, bound]`; table scores are clipped to that range.
    pub bound: f64,
    /// Scores move in one direction between neighbours (sums under add/remove): range R = Δ.
    pub monotonic: bool,
}

impl ScoreModel {
    /// Validates n ≥ 1 and a finite bound > 0.
    pub fn new(n: u64, bound: f64, monotonic: bool) -> Result<Self> {
        if n == 0 {
            return Err(Error::invalid(
                "n",
                0,
                "the validation set needs at least one record",
            ));
        }
        check_positive("bound", bound)?;
        Ok(Self {
            n,
            bound,
            monotonic,
        })
    }

    /// Per-candidate sensitivity Δ = bound/n in table units.
    pub fn sensitivity(&self) -> Result<Sensitivity> {
        Sensitivity::new(self.bound / self.n as f64, self.monotonic)
    }
}

/// What to run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StudyOptions {
    /// Total budgets ε (pure DP; Gaussian RNM adds `delta`).
    pub epsilons: Vec<f64>,
    /// Repetitions per sampled (method, budget).
    pub repetitions: usize,
    /// Seed of the study's generator (reproducible research run).
    pub seed: u64,
    /// E\[K\] for Liu–Talwar and Papernot–Steinke.
    pub mean_runs: f64,
    /// δ of Gaussian report-noisy-max.
    pub delta: f64,
    /// The methods to compare, in report order.
    pub methods: Vec<StudyMethod>,
}

impl Default for StudyOptions {
    fn default() -> Self {
        Self {
            epsilons: vec![0.01, 0.1, 0.3, 1.0, 3.0, 10.0],
            repetitions: 1000,
            seed: 0,
            mean_runs: 10.0,
            delta: 1e-6,
            methods: StudyMethod::ALL.to_vec(),
        }
    }
}

/// Summary of the regret of one method at one budget.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cell {
    /// The method.
    pub method: StudyMethod,
    /// The total budget ε (null for methods that spend nothing).
    pub epsilon: f64,
    /// Mean regret (exact for `exact` cells).
    pub mean: f64,
    /// Standard error of the mean (0 for exact cells).
    pub se: f64,
    /// 10th, 50th and 90th percentiles of the regret (nearest rank / exact quantile).
    pub p10: f64,
    /// Median regret.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// Whether the numbers come from the exact selection distribution (no sampling error).
    pub exact: bool,
    /// The ε each candidate run spends (LT/PS/exhaustive), when it applies.
    pub per_run_epsilon: Option<f64>,
    /// What the method spends in total, for people.
    pub guarantee: String,
}

/// A finished study.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StudyReport {
    /// Number of configurations m.
    pub configurations: usize,
    /// Where validation and test scores came from.
    pub validation_source: String,
    /// Test source.
    pub test_source: String,
    /// Larger or smaller is better.
    pub goal: Goal,
    /// The score model.
    pub model: ScoreModel,
    /// Δ in table units.
    pub sensitivity: f64,
    /// The options the study ran with.
    pub options: StudyOptions,
    /// Index of the (first) non-private best configuration.
    pub best_index: usize,
    /// How many configurations share the best validation score (the non-private tuner picks
    /// one of them uniformly; the reference test score is their mean).
    pub tied_best: usize,
    /// Its validation score (clipped).
    pub best_validation: f64,
    /// The reference test score: the mean over the tied validation maximisers (clipped).
    pub best_test: f64,
    /// Regret of the oracle that knows the test scores (≤ 0: the gap between validation and
    /// test choice), for scale.
    pub oracle_regret: f64,
    /// Mean regret over the table (= uniform choice's expectation), and its standard error
    /// for `repetitions` uniform draws.
    pub table_mean_regret: f64,
    /// Standard error of a mean of `repetitions` uniform draws.
    pub table_mean_regret_se: f64,
    /// One cell per (method, budget), methods outer, budgets inner.
    pub cells: Vec<Cell>,
}

impl StudyReport {
    /// The cell of `method` at the `b`-th budget.
    pub fn cell(&self, method: StudyMethod, b: usize) -> Option<&Cell> {
        let j = self.options.methods.iter().position(|&m| m == method)?;
        self.cells.get(j * self.options.epsilons.len() + b)
    }
}

/// Progress of a study: (finished cells, all cells). Called from the calling thread.
pub type ProgressFn<'a> = &'a (dyn Fn(usize, usize) + Sync);

fn check_options(options: &StudyOptions) -> Result<()> {
    if options.epsilons.is_empty() {
        return Err(Error::invalid("epsilons", "[]", "need at least one budget"));
    }
    for &e in &options.epsilons {
        check_positive("epsilon", e)?;
    }
    if options.repetitions < 2 {
        return Err(Error::invalid(
            "repetitions",
            options.repetitions,
            "need at least 2 repetitions (for a standard error)",
        ));
    }
    if !(options.mean_runs.is_finite() && options.mean_runs > 1.0) {
        return Err(Error::invalid(
            "mean_runs",
            options.mean_runs,
            "E[K] of the random-search tuners must be finite and > 1",
        ));
    }
    check_open_unit("delta", options.delta)?;
    if options.methods.is_empty() {
        return Err(Error::invalid("methods", "[]", "name at least one method"));
    }
    Ok(())
}

/// Either exact (mean, quantiles) or sampled (mean, se, quantiles).
type Stats = std::result::Result<(f64, [f64; 3]), (f64, f64, [f64; 3])>;

/// Summary statistics of an exact distribution over regrets.
fn exact_cell(regret: &[f64], probs: &[f64]) -> (f64, [f64; 3]) {
    let mean = regret.iter().zip(probs).map(|(r, p)| r * p).sum();
    let mut order: Vec<usize> = (0..regret.len()).collect();
    order.sort_by(|&a, &b| regret[a].total_cmp(&regret[b]));
    let total: f64 = probs.iter().sum();
    let mut q = [0.0; 3];
    let targets = [0.1, 0.5, 0.9];
    let mut acc = 0.0;
    let mut t = 0;
    for &i in &order {
        acc += probs[i] / total;
        while t < 3 && acc >= targets[t] - 1e-12 {
            q[t] = regret[i];
            t += 1;
        }
    }
    while t < 3 {
        q[t] = regret[*order.last().unwrap()];
        t += 1;
    }
    (mean, q)
}

/// Mean, standard error and quantiles (nearest rank) of samples.
fn sampled_cell(mut samples: Vec<f64>) -> (f64, f64, [f64; 3]) {
    let k = samples.len() as f64;
    let mean = samples.iter().sum::<f64>() / k;
    let var = samples.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (k - 1.0);
    samples.sort_by(f64::total_cmp);
    let q = |p: f64| samples[((p * k).ceil() as usize).clamp(1, samples.len()) - 1];
    (mean, (var / k).sqrt(), [q(0.1), q(0.5), q(0.9)])
}

/// The base run of the random-search tuners: a uniformly random configuration and its score
/// plus exact discrete Laplace noise, on the grid h = 2^(⌊log2 Δ⌋ − 20). The snapped score
/// moves by at most D = ⌈Δ/h⌉ + 1 steps between neighbours (the rounding is charged), and the
/// noise has scale D/ε₁ steps rounded up, so one run is ε₁-DP (Laplace mechanism).
struct NoisyRun {
    snapped: Vec<i64>,
    noise: DiscreteLaplace,
}

impl NoisyRun {
    fn new(oriented: &[f64], delta: f64, eps1: f64) -> Result<Self> {
        let exp = delta.log2().floor() as i32 - 20;
        let h = 2f64.powi(exp);
        let steps = (delta / h).ceil() + 1.0;
        let snapped = oriented.iter().map(|&u| (u / h).round() as i64).collect();
        let noise = DiscreteLaplace::from_scale_f64((steps / eps1).next_up())?;
        Ok(Self { snapped, noise })
    }

    /// Best of K runs (ties: the earlier run); returns the configuration.
    fn best_of(&self, k: u64, rng: &mut SecureRng) -> usize {
        let m = self.snapped.len() as u64;
        let mut best = (i64::MIN, 0usize);
        for _ in 0..k {
            let i = rng.below_u64(m) as usize;
            let v = self.snapped[i].saturating_add(self.noise.sample(rng));
            if v > best.0 {
                best = (v, i);
            }
        }
        best.1
    }
}

/// Runs the study on `table` (see the module docs). `progress` is told after each cell.
pub fn run_study(
    table: &ScoreTable,
    model: &ScoreModel,
    options: &StudyOptions,
    progress: Option<ProgressFn<'_>>,
) -> Result<StudyReport> {
    check_options(options)?;
    let table = table.clipped(0.0, model.bound)?;
    let m = table.len();
    let sens = model.sensitivity()?;
    let delta = sens.delta();
    let sign = match table.goal {
        Goal::Maximize => 1.0,
        Goal::Minimize => -1.0,
    };
    let val: Vec<f64> = table.validation.iter().map(|x| sign * x).collect();
    let test: Vec<f64> = table.test.iter().map(|x| sign * x).collect();
    let best = (0..m).fold(0, |b, i| if val[i] > val[b] { i } else { b });
    // The non-private tuner picks uniformly among the validation maximisers; the reference is
    // their mean test score, so that ties at the top do not favour any method.
    let tied: Vec<usize> = (0..m).filter(|&i| val[i] == val[best]).collect();
    let reference = tied.iter().map(|&i| test[i]).sum::<f64>() / tied.len() as f64;
    let regret: Vec<f64> = test.iter().map(|t| reference - t).collect();
    let np_probs: Vec<f64> = (0..m)
        .map(|i| {
            if val[i] == val[best] {
                1.0 / tied.len() as f64
            } else {
                0.0
            }
        })
        .collect();
    let oracle = regret.iter().copied().fold(f64::INFINITY, f64::min);
    let table_mean = regret.iter().sum::<f64>() / m as f64;
    let table_sd =
        (regret.iter().map(|r| (r - table_mean).powi(2)).sum::<f64>() / (m as f64 - 1.0)).sqrt();

    let nb = options.epsilons.len();
    let reps = options.repetitions;
    let streams: Streams = SecureRng::seeded(options.seed).streams();
    let total_cells = options.methods.len() * nb;
    let mut cells = Vec::with_capacity(total_cells);
    let nbrs = Neighbours::AddRemove;
    let scored = || Scores::new(&val, Goal::Maximize, sens);

    for (j, &method) in options.methods.iter().enumerate() {
        for (b, &eps) in options.epsilons.iter().enumerate() {
            let base = ((j * nb + b) * reps) as u64;
            let pure = Guarantee::pure(eps, nbrs)?;
            // Samples `reps` choices in parallel, repetition r from stream base + r.
            let sample =
                |draw: &(dyn Fn(&mut SecureRng) -> Result<usize> + Sync)| -> Result<Vec<f64>> {
                    (0..reps)
                        .into_par_iter()
                        .map(|r| {
                            let mut rng = streams.get(base + r as u64);
                            Ok(regret[draw(&mut rng)?])
                        })
                        .collect()
                };
            let mut per_run = None;
            let (guarantee, stats): (String, Stats) = match method {
                StudyMethod::NonPrivateBest => (
                    "none: NON-PRIVATE reference".into(),
                    Ok(exact_cell(&regret, &np_probs)),
                ),
                StudyMethod::Uniform => {
                    let s = sample(&|rng| Ok(rng.below_u64(m as u64) as usize))?;
                    ("0 (ignores the data)".into(), Err(sampled_cell(s)))
                }
                StudyMethod::Exponential => {
                    let em = ExponentialMechanism::new(&scored()?, &pure)?;
                    (
                        em.guarantee().to_string(),
                        Ok(exact_cell(&regret, &em.probabilities())),
                    )
                }
                StudyMethod::PermuteAndFlip => {
                    let scores = scored()?;
                    let pf = PermuteAndFlip::new(&scores, &pure)?;
                    // PF accepts candidate i with p_i = exp(−gap_i·ε/R) on the same grid
                    // and rate as EM, whose weights are p_i / Σ p: rescale them.
                    let w = ExponentialMechanism::new(&scores, &pure)?.probabilities();
                    let top = w.iter().copied().fold(0.0, f64::max);
                    let p: Vec<f64> = w.iter().map(|x| x / top).collect();
                    let probs = pf_probabilities_grouped(&p);
                    (pf.guarantee().to_string(), Ok(exact_cell(&regret, &probs)))
                }
                StudyMethod::Laplace => {
                    let lap = LaplaceNoisyMax::new(&scored()?, &pure)?;
                    let s = sample(&|rng| Ok(lap.draw(rng)))?;
                    (lap.guarantee().to_string(), Err(sampled_cell(s)))
                }
                StudyMethod::Gaussian => {
                    let l2 = if sens.is_monotonic() {
                        L2Sensitivity::MonotoneCentred
                    } else {
                        L2Sensitivity::General
                    };
                    let allowance = Guarantee::approx(eps, options.delta, nbrs)?;
                    let g = GaussianArgmax::new(&scored()?, l2, &allowance)?;
                    let s = sample(&|rng| Ok(g.draw(rng)))?;
                    (g.guarantee().to_string(), Err(sampled_cell(s)))
                }
                StudyMethod::Exhaustive => {
                    let share = exhaustive_share(&pure, m)?;
                    per_run = share.pure_eps();
                    let each = Scores::new(&val, Goal::Maximize, Sensitivity::monotonic(delta)?)?;
                    let lap = LaplaceNoisyMax::new(&each, &share)?;
                    let s = sample(&|rng| Ok(lap.draw(rng)))?;
                    (format!("{m} x {share}"), Err(sampled_cell(s)))
                }
                StudyMethod::LiuTalwar | StudyMethod::PapernotSteinke => {
                    let eta = if method == StudyMethod::LiuTalwar {
                        1.0
                    } else {
                        0.0
                    };
                    let repeats = Repeats::tnb_with_mean(eta, options.mean_runs)?;
                    let (e1, _) = calibrate(
                        &pure,
                        &Method::RepeatAndSelect(repeats),
                        |e| Guarantee::pure(e, nbrs),
                        eps * 1e-9,
                        eps,
                    )?;
                    per_run = Some(e1);
                    let run = NoisyRun::new(&val, delta, e1)?;
                    let s = sample(&|rng| {
                        let k = draw_runs(&repeats, rng)?;
                        Ok(run.best_of(k, rng))
                    })?;
                    (
                        format!("{pure} ({:.4} per run, E[K] = {})", e1, options.mean_runs),
                        Err(sampled_cell(s)),
                    )
                }
            };
            let cell = match stats {
                Ok((mean, q)) => Cell {
                    method,
                    epsilon: eps,
                    mean,
                    se: 0.0,
                    p10: q[0],
                    p50: q[1],
                    p90: q[2],
                    exact: true,
                    per_run_epsilon: per_run,
                    guarantee,
                },
                Err((mean, se, q)) => Cell {
                    method,
                    epsilon: eps,
                    mean,
                    se,
                    p10: q[0],
                    p50: q[1],
                    p90: q[2],
                    exact: false,
                    per_run_epsilon: per_run,
                    guarantee,
                },
            };
            cells.push(cell);
            if let Some(p) = progress {
                p(cells.len(), total_cells);
            }
        }
    }
    Ok(StudyReport {
        configurations: m,
        validation_source: table.validation_source.clone(),
        test_source: table.test_source.clone(),
        goal: table.goal,
        model: *model,
        sensitivity: delta,
        options: options.clone(),
        best_index: best,
        best_validation: table.validation[best],
        best_test: sign * reference,
        tied_best: tied.len(),
        oracle_regret: oracle,
        table_mean_regret: table_mean,
        table_mean_regret_se: table_sd / (reps as f64).sqrt(),
        cells,
    })
}

/// Exact permute-and-flip selection probabilities from the mechanism's own acceptance
/// probabilities p_i = exp(−gap_i·ε/R) (McKenna & Sheldon: P_i = p_i ∫₀¹ ∏_{j≠i}(1 − p_j t) dt),
/// grouping candidates with equal p and integrating by composite Gauss–Legendre on panels
/// adapted to the decay of the product (breakpoints 2^k/Λ, Λ = Σ p_j, and eighths of [0, 1]).
/// Same quantity as [`PermuteAndFlip::probabilities`] (cross-checked in the tests to 1e-10)
/// at O(groups · panels) instead of O(m²), which makes 30 000-candidate tables cheap.
fn pf_probabilities_grouped(p: &[f64]) -> Vec<f64> {
    let mut groups: Vec<(f64, f64)> = Vec::new(); // (p, count)
    let mut sorted: Vec<f64> = p.iter().copied().filter(|&x| x > 0.0).collect();
    sorted.sort_by(|a, b| b.total_cmp(a));
    for x in sorted {
        match groups.last_mut() {
            Some(g) if g.0 == x => g.1 += 1.0,
            _ => groups.push((x, 1.0)),
        }
    }
    let lambda: f64 = groups.iter().map(|g| g.0 * g.1).sum();
    let mut cuts = vec![0.0, 1.0];
    let mut b = 1.0 / lambda;
    while b < 1.0 {
        cuts.push(b);
        b *= 2.0;
    }
    cuts.extend((1..8).map(|j| j as f64 / 8.0));
    cuts.sort_by(f64::total_cmp);
    cuts.dedup();
    let gl = gauss_legendre_unit(24);
    let mut integral = vec![0.0; groups.len()];
    for w in cuts.windows(2) {
        let (a, len) = (w[0], w[1] - w[0]);
        for &(x, wt) in &gl {
            let t = a + len * x;
            let logs: Vec<f64> = groups.iter().map(|g| (-g.0 * t).ln_1p()).collect();
            let total: f64 = logs.iter().zip(&groups).map(|(l, g)| l * g.1).sum();
            for (k, g) in groups.iter().enumerate() {
                // ∏ over j ≠ i: the group's own factor appears count − 1 times.
                let others = total - logs[k] * g.1 + logs[k] * (g.1 - 1.0);
                integral[k] += len * wt * others.exp();
            }
        }
    }
    p.iter()
        .map(|&x| {
            if x > 0.0 {
                let k = groups
                    .binary_search_by(|g| x.total_cmp(&g.0))
                    .expect("grouped");
                x * integral[k]
            } else {
                0.0
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grouped_pf_matches_the_mechanism() {
        let mut rng = SecureRng::seeded(3);
        for (m, eps) in [(7usize, 0.5), (60, 2.0), (300, 20.0), (300, 0.01)] {
            // Scores with deliberate ties.
            let scores: Vec<f64> = (0..m).map(|_| (rng.below_u64(40) as f64) / 40.0).collect();
            let sens = Sensitivity::monotonic(0.01).unwrap();
            let allowance = Guarantee::pure(eps, Neighbours::AddRemove).unwrap();
            let scored = Scores::new(&scores, Goal::Maximize, sens).unwrap();
            let want = PermuteAndFlip::new(&scored, &allowance)
                .unwrap()
                .probabilities();
            let w = ExponentialMechanism::new(&scored, &allowance)
                .unwrap()
                .probabilities();
            let top = w.iter().copied().fold(0.0, f64::max);
            let p: Vec<f64> = w.iter().map(|x| x / top).collect();
            let got = pf_probabilities_grouped(&p);
            for (g, w) in got.iter().zip(&want) {
                assert!((g - w).abs() < 1e-10, "m {m} eps {eps}: {g} vs {w}");
            }
        }
    }

    #[test]
    fn exact_quantiles_and_sampled_summaries() {
        let (mean, q) = exact_cell(&[0.0, 1.0, 2.0], &[0.5, 0.3, 0.2]);
        assert!((mean - 0.7).abs() < 1e-12);
        assert_eq!(q, [0.0, 0.0, 2.0]);
        let (mean, se, q) = sampled_cell((1..=10).map(f64::from).collect());
        assert_eq!(mean, 5.5);
        assert!((se - (55.0f64 / 6.0 / 10.0).sqrt()).abs() < 1e-12);
        assert_eq!(q, [1.0, 5.0, 9.0]);
    }
}
