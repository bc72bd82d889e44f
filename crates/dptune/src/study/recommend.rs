//! Which tuner to use for m candidates, a total budget ε and a score sensitivity, under the
//! study's model.
//!
//! **The model.** m candidate scores spread evenly over the public range `[0, bound]` (the
//! validation score is also the test score), per-candidate sensitivity Δ = bound/n as in
//! [`ScoreModel`]. Every pure-ε method of the study is run on that table ([`run_study`]: exact
//! for EM and PF, sampled for the others) and the one with the lowest mean regret is named.
//! Gaussian report-noisy-max is left out: it spends (ε, δ), a weaker guarantee than the others.
//! Laplace report-noisy-max and exhaustive composition are sampled only when m × repetitions
//! ≤ 10⁷ (otherwise they are left out and the reason says so).
//!
//! The answer depends on the model: a real table has many near-ties at the top, which helps the
//! one-shot methods less than evenly spread scores suggest. `dptune study` on the user's own
//! table is the better evidence when one is available.

use serde::Serialize;

use super::{run_study, ScoreModel, ScoreTable, StudyMethod, StudyOptions};
use crate::error::{check_positive, Error, Result};
use crate::resources::Estimate;
use crate::select::Goal;

/// One method's expected regret under the model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ranked {
    /// The method.
    pub method: StudyMethod,
    /// Mean regret, in score units (a fraction of `bound` × bound).
    pub expected_regret: f64,
    /// Its standard error (0 when exact).
    pub se: f64,
    /// How many candidate trainings it needs (m, or E\[K\]).
    pub runs_needed: f64,
}

/// The recommendation and the evidence behind it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Recommendation {
    /// The method with the lowest expected regret (among statistically tied methods, the first
    /// of permute-and-flip, exponential, Laplace, Liu–Talwar, Papernot–Steinke, exhaustive).
    pub method: StudyMethod,
    /// All compared methods, the recommended one first, then by expected regret.
    pub ranking: Vec<Ranked>,
    /// Why, in one paragraph for people.
    pub reason: String,
}

/// The most candidates [`recommend`] models: its model table holds one score per candidate, and
/// 10^7 candidates already take minutes and a gigabyte; far more failed to allocate (abort).
pub const MAX_CANDIDATES: usize = 1_000_000;

/// Bytes per modelled candidate (the table's scores, the exact methods' probabilities and
/// sorted copies): 125–150 measured at 10⁵ and 10⁶ candidates.
const CANDIDATE_BYTES: f64 = 120.0;

/// Core-seconds per candidate of the exact methods (5.5e-6 measured at 10⁶), and per sampled
/// run of the random-search tuners; optimistic.
const CANDIDATE_SECONDS: f64 = 4e-6;
const RUN_SECONDS: f64 = 2e-8;

/// Peak memory (driven by `candidates`) and CPU time of [`recommend`] with these arguments
/// (driven by `candidates`, or by `repetitions` × `mean_runs` sampled runs, whichever is
/// larger). Public settings only. A count past [`MAX_CANDIDATES`] is refused by [`recommend`]
/// itself; this estimate states what it would have needed.
pub fn resources(candidates: usize, repetitions: usize, mean_runs: f64) -> Estimate {
    let m = candidates as f64;
    let exact = CANDIDATE_SECONDS * m;
    let sampled = RUN_SECONDS * repetitions as f64 * mean_runs;
    let estimate = Estimate::new().memory("candidates", candidates, CANDIDATE_BYTES * m);
    if exact >= sampled {
        estimate.time("candidates", candidates, exact + sampled)
    } else {
        estimate.time("repetitions", repetitions, exact + sampled)
    }
}

/// Names the method with the lowest expected regret for `candidates` configurations at total
/// budget `epsilon` (pure DP) under `model`, with E\[K\] = `mean_runs` for the random-search
/// tuners; `repetitions` draws per sampled method, generator seeded with `seed`.
pub fn recommend(
    candidates: usize,
    epsilon: f64,
    model: &ScoreModel,
    mean_runs: f64,
    repetitions: usize,
    seed: u64,
) -> Result<Recommendation> {
    if candidates < 2 {
        return Err(Error::invalid(
            "candidates",
            candidates,
            "need at least 2 candidates to choose from",
        ));
    }
    if candidates > MAX_CANDIDATES {
        return Err(Error::invalid(
            "candidates",
            candidates,
            format!("at most {MAX_CANDIDATES} candidates can be modelled"),
        ));
    }
    check_positive("epsilon", epsilon)?;
    let m = candidates;
    let scores: Vec<f64> = (0..m)
        .map(|i| model.bound * i as f64 / (m - 1) as f64)
        .collect();
    let table = ScoreTable::new(scores.clone(), scores, Goal::Maximize)?;
    let sampled_ok = (m as f64) * (repetitions as f64) <= 1e7;
    let mut methods = vec![StudyMethod::PermuteAndFlip, StudyMethod::Exponential];
    if sampled_ok {
        methods.push(StudyMethod::Laplace);
    }
    methods.extend([StudyMethod::LiuTalwar, StudyMethod::PapernotSteinke]);
    if sampled_ok {
        methods.push(StudyMethod::Exhaustive);
    }
    methods.push(StudyMethod::Uniform);
    let options = StudyOptions {
        epsilons: vec![epsilon],
        repetitions,
        seed,
        mean_runs,
        methods,
        ..StudyOptions::default()
    };
    let report = run_study(&table, model, &options, None)?;
    let mut ranking: Vec<Ranked> = report
        .cells
        .iter()
        .map(|c| Ranked {
            method: c.method,
            expected_regret: c.mean,
            se: c.se,
            runs_needed: c.method.runs_needed(m, mean_runs),
        })
        .collect();
    ranking.sort_by(|a, b| a.expected_regret.total_cmp(&b.expected_regret));
    // Methods statistically tied with the lowest mean (within 2 standard errors of the
    // difference) are ranked by preference: PF (never worse than EM in expectation, McKenna &
    // Sheldon Thm 2; exact probabilities), EM, Laplace, then the others in the order compared.
    let lowest = ranking[0].clone();
    let tied = |r: &Ranked| {
        r.expected_regret
            <= lowest.expected_regret + 2.0 * (lowest.se.powi(2) + r.se.powi(2)).sqrt() + 1e-12
    };
    let preference = |m: StudyMethod| options.methods.iter().position(|&x| x == m).unwrap_or(99);
    let best = ranking
        .iter()
        .filter(|r| tied(r))
        .min_by_key(|r| preference(r.method))
        .expect("the lowest is tied with itself")
        .clone();
    let ties: Vec<&str> = ranking
        .iter()
        .filter(|r| tied(r) && r.method != best.method)
        .map(|r| r.method.name())
        .collect();
    if let Some(i) = ranking.iter().position(|r| r.method == best.method) {
        let b = ranking.remove(i);
        ranking.insert(0, b);
    }
    let second = &ranking[1];
    let cheap = ranking
        .iter()
        .find(|r| {
            matches!(
                r.method,
                StudyMethod::LiuTalwar | StudyMethod::PapernotSteinke
            )
        })
        .expect("LT and PS are always compared");
    let uniform = ranking
        .iter()
        .find(|r| r.method == StudyMethod::Uniform)
        .expect("uniform is always compared");
    let range = model.bound;
    let pct = |x: f64| 100.0 * x / range;
    let mut reason = format!(
        "Under the study's model ({m} candidates spread evenly over [0, {range}], sensitivity \
         {:.3e} per candidate, total epsilon {epsilon}), {} has the lowest expected regret: \
         {:.2}% of the score range, against {:.2}% for {} and {:.2}% for a uniformly random \
         choice.",
        report.sensitivity,
        best.method,
        pct(best.expected_regret),
        pct(second.expected_regret),
        second.method,
        pct(uniform.expected_regret),
    );
    if !ties.is_empty() {
        reason.push_str(&format!(
            " Statistically tied with {} (within 2 standard errors); {} is preferred among them: \
             permute-and-flip is never worse than the exponential mechanism in expectation \
             (McKenna & Sheldon, Thm 2) and is sampled exactly in one pass.",
            ties.join(", "),
            best.method
        ));
    }
    if best.method.runs_needed(m, mean_runs) > mean_runs {
        reason.push_str(&format!(
            " It scores all {m} candidates on the validation data (m training runs). If a run \
             is expensive, {} trains only E[K] = {mean_runs} random candidates, at {:.2}% \
             expected regret.",
            cheap.method,
            pct(cheap.expected_regret)
        ));
    }
    if best.expected_regret >= uniform.expected_regret - 2.0 * uniform.se.max(1e-12) {
        reason.push_str(
            " At this budget no private method beats random choice by much: the noise swamps \
             the differences between candidates; raise the budget, enlarge the validation set \
             or shrink the candidate set.",
        );
    }
    if !sampled_ok {
        reason.push_str(
            " (Laplace report-noisy-max and exhaustive composition were not sampled at this m; \
             both are noisier than permute-and-flip at equal epsilon in the study's tables.)",
        );
    }
    Ok(Recommendation {
        method: best.method,
        ranking,
        reason,
    })
}
