//! Black-box epsilon audit of a tuner (`tests/support/audit.rs`): Papernot–Steinke
//! repeat-and-select (logarithmic number of runs, η = 0) over the exact toy candidate of
//! `tests/support/toy.rs` (noisy counts, discrete Laplace, pure ε₀ per run). The claimed ε is
//! the tuner's own cost, 2ε₀ (Papernot & Steinke, arXiv 2110.03620, Thm 2 with η = 0).
//!
//! The pair: the record that differs sits on the evaluation side of a fixed split (one
//! "true" record on D, absent on D′, which for counts is the same as removing it), so every
//! run's released score moves by one. The events are upper tails of the released best score.
//! A tuner whose runs use twice their per-run ε behind the same claim must fail.
//!
//! False failure: at most 1e-6 over all audits (Bonferroni, `support::audit`). Run with
//! `cargo test --release -p dptune --test audit_tuner -- --nocapture`.

#[path = "support/audit.rs"]
mod audit;
#[path = "support/toy.rs"]
mod toy;

use audit::{audit, Audit, Claim, Event, Pair};
use dptune::noise::SecureRng;
use dptune::privacy::repeat::Repeats;
use dptune::privacy::Guarantee;
use dptune::tune::{Domain, Method, SearchSpace, Selected, Split, TuneOptions, Tuner, Value};
use toy::{Bits, CountLearner, CountScorer, AR};

/// Runs per side: each tuning is a few candidate runs plus the tuner's bookkeeping.
const TRIALS: u64 = 400_000;
/// Evaluation records (all "true" on D).
const EVAL: usize = 10;

fn best_score(s: Selected<(i64, f64)>) -> f64 {
    s.value.map_or(f64::NEG_INFINITY, |c| c.score)
}

/// Audits the tuner whose runs each spend `per_run`, against the claim of a per-run ε of 0.5.
fn papernot_steinke(per_run: f64, seed: u64) -> Audit {
    let method = Method::RepeatAndSelect(Repeats::tnb_with_mean(0.0, 3.0).unwrap());
    // One configuration (bias 7, utility 0): the released score is the best noisy count.
    let space = SearchSpace::new(vec![(
        "bias".into(),
        Domain::Choice {
            values: vec![Value::Int(7)],
        },
    )])
    .unwrap();
    let claimed = Tuner::new(method, &space, Guarantee::pure(0.5, AR).unwrap())
        .unwrap()
        .cost(&TuneOptions::default())
        .unwrap()
        .pure_eps()
        .unwrap();
    let tuner = Tuner::new(method, &space, Guarantee::pure(per_run, AR).unwrap()).unwrap();
    let split = Split {
        first: (EVAL..2 * EVAL).collect(),
        second: (0..EVAL).collect(),
    };
    let d = Bits(vec![true; 2 * EVAL]);
    let mut without = d.0.clone();
    without[0] = false;
    let d_prime = Bits(without);
    let learner = CountLearner::default();
    let run = |data: &Bits, r: &mut SecureRng| {
        best_score(
            tuner
                .run(
                    &learner,
                    &CountScorer,
                    data,
                    &split,
                    &TuneOptions::default(),
                    r,
                )
                .unwrap(),
        )
    };
    let pair = Pair::new(
        "record 0 (evaluation side) present vs absent",
        |r: &mut SecureRng| run(&d, r),
        |r: &mut SecureRng| run(&d_prime, r),
    );
    let events: Vec<Event<f64>> = [8.0, 10.0, 12.0, 14.0, 16.0]
        .into_iter()
        .map(|t| Event::new(format!("best score >= {t}"), move |&o: &f64| o >= t))
        .collect();
    audit(
        "Papernot-Steinke, logarithmic K (mean 3), pure runs",
        Claim::pure(claimed),
        vec![pair],
        &events,
        TRIALS,
        seed,
    )
}

#[test]
fn papernot_steinke_repeat_and_select() {
    papernot_steinke(0.5, 301).assert_passes();
}

#[test]
fn papernot_steinke_with_runs_spending_double_is_caught() {
    papernot_steinke(1.0, 302).assert_caught();
}
