//! Running a tuning: private selection from private candidates.
//!
//! The number of runs K is part of the secret (THEORY.md §6.2, §15): releasing it, logging it,
//! or exposing it through progress reports breaks the theorems (best-of-fixed-K can lose ≈ Kε).
//! So the tuner returns only the best candidate and the guarantee, and progress callbacks are
//! driven by a clock, not by finished runs: they carry elapsed time only.
//!
//! Threat model: whoever can time the whole tuning learns roughly how many runs it made. For an
//! analyst who sees wall time, [`TuneOptions::cap`] always runs a data-independent number T of
//! runs and keeps the first min(K, T); the truncation is charged by the truncation lemma
//! (THEORY.md §6.2) at the cost of converting to (ε, δ).
//!
//! A tuning is two halves with the runs between them: the [`Schedule`] (what to run, drawn
//! before any data are touched) and the [`ReleaseRule`] (scores in, winner out). [`Tuner::run`]
//! executes the runs in parallel (rayon); the Python tuner dispatches them to callables and
//! hands the scores back. Run i draws its configuration and its noise from stream i of the
//! tuner's generator, so a seeded tuning gives the same result on 1 or N threads, and from
//! Python.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rayon::prelude::*;

use crate::error::{check_delta, Error, Result};
use crate::noise::SecureRng;
use crate::privacy::repeat::{truncation_delta, Repeats};
use crate::privacy::Guarantee;

use super::candidate::{Candidate, Learner, PrivateCandidate, RunResult, Scorer};
use super::cost::{tuning_cost, Method};
use super::release::{ReleaseRule, Selected};
use super::runs::tail_probability;
use super::schedule::Schedule;
use super::space::SearchSpace;
use super::split::Split;

/// What a progress callback learns: the time since the tuning started. Never the number of runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    /// Time elapsed since the tuning started.
    pub elapsed: Duration,
}

/// Options of a tuning run.
#[derive(Default)]
pub struct TuneOptions<'a> {
    /// Always run exactly this many candidates (data-independent wall time) and keep the first
    /// min(K, cap); the truncation is charged at `cap_delta` (see module doc).
    pub cap: Option<u64>,
    /// The δ at which a capped tuning is converted to (ε, δ) before the truncation term is added.
    pub cap_delta: f64,
    /// Called about every `tick` with the elapsed time.
    pub progress: Option<&'a (dyn Fn(Progress) + Sync)>,
    /// How often to call `progress` (default 200 ms).
    pub tick: Option<Duration>,
}

/// A private tuner: a method, a search space, and the per-run allowance.
pub struct Tuner<'a> {
    method: Method,
    space: &'a SearchSpace,
    per_run: Guarantee,
}

impl<'a> Tuner<'a> {
    /// A tuner for `method` over `space`, each run spending at most `per_run`. Exhaustive
    /// search enumerates the grid of `space` instead of sampling it.
    pub fn new(method: Method, space: &'a SearchSpace, per_run: Guarantee) -> Result<Self> {
        method.check()?;
        if let Method::Exhaustive { runs } = method {
            let grid = space.grid()?.len();
            if grid != runs {
                return Err(Error::invalid(
                    "runs",
                    runs,
                    format!("an exhaustive search runs every grid point ({grid})"),
                ));
            }
        }
        Ok(Self {
            method,
            space,
            per_run,
        })
    }

    /// What the whole tuning spends under `options` (public: computed before any run).
    pub fn cost(&self, options: &TuneOptions<'_>) -> Result<Guarantee> {
        let cost = tuning_cost(&self.method, &self.per_run)?;
        let Some(cap) = options.cap else {
            return Ok(cost);
        };
        if matches!(self.method, Method::Exhaustive { .. }) {
            return Ok(cost);
        }
        check_delta("cap_delta", options.cap_delta)?;
        if options.cap_delta == 0.0 && cost.pure_eps().is_none() {
            return Err(Error::invalid(
                "cap_delta",
                0.0,
                "a capped tuning is converted to (eps, delta): give delta > 0",
            ));
        }
        let eps = cost.epsilon(options.cap_delta)?;
        let delta = capped_delta(&self.method, cap, eps, options.cap_delta)?;
        if delta >= 1.0 {
            return Err(Error::invalid(
                "cap",
                cap,
                "too small: the truncation term reaches 1",
            ));
        }
        Guarantee::approx(eps, delta, self.per_run.neighbours())
    }

    /// Draws what the tuning runs and how it releases, before any data are touched: the
    /// [`Schedule`] (the tasks to execute) and the [`ReleaseRule`] (which scored run wins, and
    /// the whole cost). [`Tuner::run`] is these two with a parallel loop between them; a caller
    /// that executes the runs itself (the Python tuner dispatching callables) uses them
    /// directly and gets the same seeded result.
    pub fn schedule(
        &self,
        options: &TuneOptions<'_>,
        rng: &mut SecureRng,
    ) -> Result<(Schedule<'a>, ReleaseRule)> {
        let spent = self.cost(options)?;
        let drawn = Schedule::draw(&self.method, self.space, options.cap, rng)?;
        let threshold = match self.method {
            Method::Threshold { threshold, .. } => Some(threshold),
            _ => None,
        };
        let rule = ReleaseRule::new(drawn.runs, drawn.schedule.tasks(), threshold, spent);
        Ok((drawn.schedule, rule))
    }

    /// The per-run allowance each task spends at most.
    pub fn per_run(&self) -> &Guarantee {
        &self.per_run
    }

    /// Runs the tuning on `data` (trained on `split.first`, scored on `split.second`) and
    /// releases the best candidate, or `None` (⊥) where the method can end without one
    /// (Poisson K = 0; no score reached the threshold), together with the whole cost.
    pub fn run<L: Learner, S: Scorer<L> + ?Sized>(
        &self,
        learner: &L,
        scorer: &S,
        data: &L::Data,
        split: &Split,
        options: &TuneOptions<'_>,
        rng: &mut SecureRng,
    ) -> Result<Selected<L::Model>> {
        let (schedule, rule) = self.schedule(options, rng)?;
        let candidate = PrivateCandidate::new(learner, scorer);
        let job = |i: u64| -> Result<Option<(u64, Candidate<L::Model>)>> {
            let (config, mut r) = schedule.task(i)?;
            match candidate.run(config, data, split, &self.per_run, &mut r)? {
                RunResult::Scored(c) if rule.admits(i, c.score) => Ok(Some((i, c))),
                _ => Ok(None),
            }
        };
        let best = with_progress(options, || run_all(schedule.tasks(), &rule, &job))?;
        Ok(rule.release(best.map(|(_, c)| c)))
    }
}

/// The most candidate slots a capped tuning may execute (the number the Python tuner dispatches
/// at most): a larger cap could not run in any reasonable time, and its tail bound alone would
/// take work proportional to it.
pub const MAX_CAP: u64 = 10_000_000;

/// The δ of a tuning capped at `cap` executed runs whose uncapped cost is (`eps`, `cap_delta`)-DP:
/// `cap_delta` + (1 + e^eps)·P\[K > cap\], the truncation lemma (THEORY.md §6.2), with P\[K > cap\]
/// bounded by [`tail_probability`]. It grows with `eps` and depends on public inputs only, so a
/// caller can check a cap against its δ before any data is touched. Exhaustive search runs every
/// grid point (its K is public): capping it changes nothing, and `cap_delta` is returned.
/// Caps above [`MAX_CAP`] are refused naming `cap`.
pub fn capped_delta(method: &Method, cap: u64, eps: f64, cap_delta: f64) -> Result<f64> {
    if cap > MAX_CAP {
        return Err(Error::invalid(
            "cap",
            cap,
            format!("at most {MAX_CAP} candidate slots can be executed"),
        ));
    }
    let repeats = match *method {
        Method::RepeatAndSelect(r) => r,
        Method::Threshold { gamma, .. } => Repeats::geometric(gamma)?,
        Method::Exhaustive { .. } => return Ok(cap_delta),
    };
    truncation_delta(eps, cap_delta, tail_probability(&repeats, cap)?)
}

/// The smallest cap T ≤ [`MAX_CAP`] whose truncation term (1 + e^eps)·P\[K > T\] (the part of
/// [`capped_delta`] a cap adds) is at most `delta`, or `None` when no such cap exists. This is
/// how a caller picks a cap for a stated share of its δ (the Python tuner's `cap="auto"`). The
/// term decreases as T grows, so the search doubles T until it fits and then bisects (work
/// O(T log T)). Exhaustive search has no random K and is refused naming `method`.
pub fn smallest_cap(method: &Method, eps: f64, delta: f64) -> Result<Option<u64>> {
    if matches!(method, Method::Exhaustive { .. }) {
        return Err(Error::invalid(
            "method",
            "exhaustive",
            "an exhaustive search runs every grid point: there is no cap to choose",
        ));
    }
    check_delta("delta", delta)?;
    if delta == 0.0 {
        return Err(Error::invalid(
            "delta",
            0.0,
            "a cap always adds a positive δ: give a positive share",
        ));
    }
    let fits = |cap: u64| -> Result<bool> { Ok(capped_delta(method, cap, eps, 0.0)? <= delta) };
    let mut hi = 1;
    while !fits(hi)? {
        if hi == MAX_CAP {
            return Ok(None);
        }
        hi = (2 * hi).min(MAX_CAP);
    }
    // Invariant: `hi` fits and nothing below `lo` does.
    let mut lo = hi / 2 + 1;
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if fits(mid)? {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Ok(Some(hi))
}

/// Runs `job(0..n)` in parallel and keeps the admitted candidate `rule` prefers.
fn run_all<M: Send>(
    n: u64,
    rule: &ReleaseRule,
    job: &(dyn Fn(u64) -> Result<Option<(u64, Candidate<M>)>> + Sync),
) -> Result<Option<(u64, Candidate<M>)>> {
    (0..n).into_par_iter().map(job).try_reduce(
        || None,
        |a, b| {
            Ok(match (a, b) {
                (Some(a), Some(b)) if rule.prefers((a.0, a.1.score), (b.0, b.1.score)) => Some(a),
                (Some(_), Some(b)) => Some(b),
                (a, None) => a,
                (None, b) => b,
            })
        },
    )
}

/// Calls `options.progress` from a ticker thread while `work` runs.
fn with_progress<T: Send>(options: &TuneOptions<'_>, work: impl FnOnce() -> T + Send) -> T {
    let Some(progress) = options.progress else {
        return work();
    };
    let tick = options.tick.unwrap_or(Duration::from_millis(200));
    let done = AtomicBool::new(false);
    let start = Instant::now();
    std::thread::scope(|s| {
        s.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                std::thread::sleep(tick);
                progress(Progress {
                    elapsed: start.elapsed(),
                });
            }
        });
        let out = work();
        done.store(true, Ordering::Relaxed);
        out
    })
}
