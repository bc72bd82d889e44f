//! Private tuning end to end with a small exact candidate: a "learner" that releases a noisy
//! count of its training records and a scorer that releases a noisy count of the evaluation
//! records, shifted by a public, configuration-dependent utility. Both use the exact discrete
//! Laplace sampler with scale ≥ 1/ε (sensitivity 1 under add/remove), so every guarantee is
//! exactly the per-run allowance and the tuners' costs can be checked against the theorems.

use std::sync::atomic::Ordering;

use dptune::data::Records;
use dptune::noise::SecureRng;
use dptune::privacy::repeat::Repeats;
use dptune::privacy::Guarantee;
use dptune::tune::baseline::{oracle_best, NonPrivate};
use dptune::tune::{
    calibrate, split_by_coin, split_tune_final, Domain, Fractions, Learner, Method, PrivateStep,
    SearchSpace, Selected, TuneOptions, Tuner, Value,
};
use dptune::Error;

#[path = "support/toy.rs"]
mod toy;

use toy::{Bits, CountLearner, CountScorer, AR};

fn data(n: usize) -> Bits {
    Bits((0..n).map(|i| i % 3 == 0).collect())
}

fn space() -> SearchSpace {
    SearchSpace::new(vec![(
        "bias".into(),
        Domain::Choice {
            values: (0..10).map(Value::Int).collect(),
        },
    )])
    .unwrap()
}

fn tune_once(
    method: Method,
    per_run: f64,
    seed: u64,
    options: &TuneOptions<'_>,
) -> (Selected<(i64, f64)>, usize) {
    let learner = CountLearner::default();
    let d = data(300);
    let mut rng = SecureRng::seeded(seed);
    let split = split_by_coin(d.len(), 0.5, &mut rng).unwrap();
    let s = space();
    let tuner = Tuner::new(method, &s, Guarantee::pure(per_run, AR).unwrap()).unwrap();
    let out = tuner
        .run(&learner, &CountScorer, &d, &split, options, &mut rng)
        .unwrap();
    (out, learner.fits.load(Ordering::Relaxed))
}

#[test]
fn seeded_tuning_is_identical_on_one_and_four_threads() {
    let m = Method::RepeatAndSelect(Repeats::tnb_with_mean(0.0, 20.0).unwrap());
    let run = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| {
                let (r, _) = tune_once(m, 0.5, 42, &TuneOptions::default());
                let c = r.value.unwrap();
                (c.config, c.score)
            })
    };
    assert_eq!(run(1), run(4));
}

#[test]
fn stop_probability_one_percent_runs_about_one_hundred_times() {
    // PEERS.md §2.1: OpenDP once ran such a tuner about once. Over 100 tunings the mean number
    // of runs has sd sqrt(9900/100) ≈ 10; [50, 150] is 5 sd (false failure < 6e-7).
    let m = Method::RepeatAndSelect(Repeats::geometric(0.01).unwrap());
    let total: usize = (0..100)
        .map(|s| tune_once(m, 0.5, 1000 + s, &TuneOptions::default()).1)
        .sum();
    let mean = total as f64 / 100.0;
    assert!((50.0..150.0).contains(&mean), "mean runs {mean}");
}

#[test]
fn spent_is_the_theorem_cost_and_large_budgets_find_the_best() {
    let m = Method::RepeatAndSelect(Repeats::geometric(0.02).unwrap());
    let (r, _) = tune_once(m, 0.1, 7, &TuneOptions::default());
    assert_eq!(r.spent.pure_eps(), Some(0.30000000000000004)); // 3 × 0.1, rounded up
                                                               // With ε = 5 per run and about 50 runs over 10 configurations, bias 7 wins (its score is
                                                               // ahead by 10 counts; noise scale 0.2).
    let (r, _) = tune_once(m, 5.0, 8, &TuneOptions::default());
    assert_eq!(r.value.unwrap().config["bias"], Value::Int(7));
}

#[test]
fn exhaustive_runs_every_grid_point_once() {
    let (r, fits) = tune_once(
        Method::Exhaustive { runs: 10 },
        0.1,
        9,
        &TuneOptions::default(),
    );
    assert_eq!(fits, 10);
    assert!((r.spent.pure_eps().unwrap() - 1.0).abs() < 1e-12);
    assert_eq!(r.value.unwrap().config["bias"], Value::Int(7));
    let s = space();
    assert!(Tuner::new(
        Method::Exhaustive { runs: 5 },
        &s,
        Guarantee::pure(0.1, AR).unwrap()
    )
    .is_err());
}

#[test]
fn threshold_releases_nothing_when_no_score_reaches_it() {
    let m = Method::Threshold {
        threshold: 1e9,
        gamma: 0.2,
    };
    let (r, _) = tune_once(m, 0.5, 10, &TuneOptions::default());
    assert!(r.value.is_none());
    assert_eq!(r.spent.pure_eps(), Some(1.0));
    let m = Method::Threshold {
        threshold: 30.0,
        gamma: 0.05,
    };
    // Evaluation counts are about 50; biases 5–9 score about 30–50 and reach the threshold.
    let (r, _) = tune_once(m, 2.0, 11, &TuneOptions::default());
    assert!(r.value.unwrap().score >= 30.0);
}

#[test]
fn capped_tuning_always_runs_the_cap_and_charges_the_truncation() {
    let m = Method::RepeatAndSelect(Repeats::geometric(0.1).unwrap());
    let options = TuneOptions {
        cap: Some(60),
        cap_delta: 1e-6,
        ..Default::default()
    };
    for seed in 0..5 {
        let (r, fits) = tune_once(m, 0.1, 20 + seed, &options);
        assert_eq!(fits, 60, "the wall time must not depend on K");
        // δ = 1e-6 + (1 + e^{0.3})·P[K > 60], P[K > 60] = 0.9^60 for geometric γ = 0.1.
        let delta = 1e-6 + (1.0 + 0.3f64.exp()) * 0.9f64.powi(60);
        let eps = r.spent.epsilon(delta * (1.0 + 1e-6)).unwrap();
        assert!((eps - 0.3).abs() < 1e-9, "{eps}");
        assert!(
            r.spent.epsilon(1e-6).is_err(),
            "the truncation adds to delta"
        );
    }
    // A cap so small that the truncation term reaches 1 is refused.
    let tiny = TuneOptions {
        cap: Some(1),
        cap_delta: 1e-6,
        ..Default::default()
    };
    let s = space();
    let t = Tuner::new(m, &s, Guarantee::pure(3.0, AR).unwrap()).unwrap();
    assert!(t.cost(&tiny).is_err());
}

#[test]
fn calibration_refuses_before_anything_runs() {
    let learner = CountLearner::default();
    let outer = Guarantee::pure(0.3, AR).unwrap();
    let m = Method::RepeatAndSelect(Repeats::geometric(0.05).unwrap());
    let (eps, per_run) = calibrate(&outer, &m, |e| Guarantee::pure(e, AR), 1e-9, 10.0).unwrap();
    assert!((eps - 0.1).abs() < 1e-8);
    let s = space();
    let t = Tuner::new(m, &s, per_run).unwrap();
    assert!(t.cost(&TuneOptions::default()).unwrap().pure_eps().unwrap() <= 0.3);
    let poisson = Method::RepeatAndSelect(Repeats::poisson(10.0).unwrap());
    let r = calibrate(&outer, &poisson, |e| Guarantee::pure(e, AR), 1e-9, 10.0);
    assert!(r.is_err(), "Poisson repetition has no pure-DP bound");
    assert_eq!(learner.fits.load(Ordering::Relaxed), 0);
}

#[test]
fn split_tune_final_is_parallel() {
    let learner = CountLearner::default();
    let d = data(400);
    let s = space();
    let m = Method::RepeatAndSelect(Repeats::geometric(0.1).unwrap());
    let outer = Guarantee::pure(1.5, AR).unwrap();
    let (_, per_run) = calibrate(&outer, &m, |e| Guarantee::pure(e, AR), 1e-9, 10.0).unwrap();
    let tuner = Tuner::new(m, &s, per_run).unwrap();
    let fr = Fractions {
        tune: 0.5,
        train: 0.5,
    };
    let mut rng = SecureRng::seeded(31);
    let out = split_tune_final(
        &tuner,
        &learner,
        &CountScorer,
        |c, step| learner.fit(c, step),
        &d,
        &outer,
        fr,
        1e-5,
        &TuneOptions::default(),
        &mut rng,
    )
    .unwrap()
    .unwrap();
    // Both parts spend up to the whole allowance; together they still fit it (parallel), where
    // the sequential composition (the wrong rule for disjoint parts) would not.
    assert!(out.parts.pure_eps().unwrap() <= 1.5, "{}", out.parts);
    // The final fit gets the whole allowance (the toy's exact sampler rounds it down a little).
    assert!(out.fitted.spent.pure_eps().unwrap() > 1.49);
    let sequential = out.tuning.compose(&out.fitted.spent).unwrap();
    assert!(sequential.pure_eps().unwrap() > 1.5, "{sequential}");
    // A final fit that would overspend is refused before its model is returned.
    let mut rng = SecureRng::seeded(31);
    let greedy = split_tune_final(
        &tuner,
        &learner,
        &CountScorer,
        |c, step: PrivateStep<'_, Bits>| {
            let greedy = Guarantee::pure(2.0, AR).unwrap();
            learner.fit(c, PrivateStep::new(step.data, &greedy, step.rng))
        },
        &d,
        &outer,
        fr,
        1e-5,
        &TuneOptions::default(),
        &mut rng,
    );
    assert!(
        matches!(greedy, Err(Error::BudgetExceeded { .. })),
        "{greedy:?}"
    );
}

#[test]
fn failures_count_as_worst_only_when_data_independent() {
    // Bias 3 is refused as invalid (data-independent): the tuning goes on without it.
    let s = SearchSpace::new(vec![(
        "bias".into(),
        Domain::Choice {
            values: vec![Value::Int(3), Value::Int(4)],
        },
    )])
    .unwrap();
    let learner = CountLearner::default();
    let d = data(100);
    let mut rng = SecureRng::seeded(5);
    let split = split_by_coin(d.len(), 0.5, &mut rng).unwrap();
    let t = Tuner::new(
        Method::Exhaustive { runs: 2 },
        &s,
        Guarantee::pure(1.0, AR).unwrap(),
    )
    .unwrap();
    let r = t
        .run(
            &learner,
            &CountScorer,
            &d,
            &split,
            &TuneOptions::default(),
            &mut rng,
        )
        .unwrap();
    assert_eq!(r.value.unwrap().config["bias"], Value::Int(4));
    // A learner that over-spends its allowance is an error, not a silent acceptance.
    let greedy = CountLearner {
        overspend: true,
        ..Default::default()
    };
    let r = t.run(
        &greedy,
        &CountScorer,
        &d,
        &split,
        &TuneOptions::default(),
        &mut rng,
    );
    assert!(matches!(r, Err(Error::BudgetExceeded { .. })), "{r:?}");
}

#[test]
fn oracle_is_labelled_not_private() {
    let learner = CountLearner::default();
    let d = data(100);
    let configs = space().grid().unwrap();
    let mut rng = SecureRng::seeded(2);
    let best: NonPrivate<_> = oracle_best(
        &learner,
        &CountScorer,
        &configs,
        &d,
        &d,
        &Guarantee::pure(1.0, AR).unwrap(),
        &mut rng,
    )
    .unwrap();
    assert_eq!(best.value.config["bias"], Value::Int(7));
    assert!(best.to_string().contains("NOT PRIVATE"));
}
