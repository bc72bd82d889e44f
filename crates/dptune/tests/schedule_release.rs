//! `Tuner::run` is its schedule and its release rule with a parallel loop between them: a caller
//! that executes the scheduled tasks itself, one after the other, and hands the scores to the
//! release rule (as the Python tuner does with its callables) releases the same candidate with
//! the same guarantee, seed by seed, for every method, with and without a cap.

use dptune::data::Records;
use dptune::noise::SecureRng;
use dptune::privacy::repeat::Repeats;
use dptune::privacy::Guarantee;
use dptune::tune::candidate::{PrivateCandidate, RunResult};
use dptune::tune::{split_by_coin, Domain, Method, SearchSpace, TuneOptions, Tuner, Value};

#[path = "support/toy.rs"]
mod toy;

use toy::{Bits, CountLearner, CountScorer, AR};

fn space() -> SearchSpace {
    SearchSpace::new(vec![(
        "bias".into(),
        Domain::Choice {
            values: (0..10).map(Value::Int).collect(),
        },
    )])
    .unwrap()
}

/// (released bias or None, spent) from `Tuner::run`, and from the schedule executed
/// sequentially with the release rule picking the winner.
fn both(method: Method, cap: Option<u64>, seed: u64) -> [(Option<i64>, Guarantee); 2] {
    let d = Bits((0..200).map(|i| i % 3 == 0).collect());
    let s = space();
    let tuner = Tuner::new(method, &s, Guarantee::pure(0.3, AR).unwrap()).unwrap();
    let options = TuneOptions {
        cap,
        cap_delta: 1e-6,
        ..Default::default()
    };
    let learner = CountLearner::default();
    // The same generator twice: the split, then the tuning.
    let mut rng = SecureRng::seeded(seed);
    let split = split_by_coin(d.len(), 0.5, &mut rng).unwrap();
    let mut fork = SecureRng::seeded(seed);
    assert_eq!(split_by_coin(d.len(), 0.5, &mut fork).unwrap(), split);
    let run = tuner
        .run(&learner, &CountScorer, &d, &split, &options, &mut rng)
        .unwrap();
    let (schedule, rule) = tuner.schedule(&options, &mut fork).unwrap();
    let candidate = PrivateCandidate::new(&learner, &CountScorer);
    let mut configs = Vec::new();
    let scores: Vec<Option<f64>> = (0..schedule.tasks())
        .map(|i| {
            let (config, mut r) = schedule.task(i).unwrap();
            configs.push(config["bias"].as_i64("bias").unwrap());
            match candidate
                .run(config, &d, &split, tuner.per_run(), &mut r)
                .unwrap()
            {
                RunResult::Scored(c) => Some(c.score),
                RunResult::Unusable => None,
            }
        })
        .collect();
    let winner = rule.winner(&scores).unwrap();
    [
        (
            run.value.map(|c| c.config["bias"].as_i64("bias").unwrap()),
            run.spent,
        ),
        (winner.map(|i| configs[i as usize]), rule.spent().clone()),
    ]
}

#[test]
fn run_equals_its_schedule_executed_by_the_caller() {
    let methods = [
        (
            Method::RepeatAndSelect(Repeats::geometric(0.1).unwrap()),
            None,
        ),
        (
            Method::RepeatAndSelect(Repeats::poisson(3.0).unwrap()),
            None,
        ),
        (
            Method::RepeatAndSelect(Repeats::geometric(0.2).unwrap()),
            Some(12),
        ),
        (
            Method::Threshold {
                threshold: 40.0,
                gamma: 0.1,
            },
            None,
        ),
        (Method::Exhaustive { runs: 10 }, None),
    ];
    let mut released = 0;
    let mut bottom = 0;
    for (method, cap) in methods {
        for seed in 0..6 {
            let [a, b] = both(method, cap, seed);
            assert_eq!(a, b, "{method:?} cap {cap:?} seed {seed}");
            if a.0.is_some() {
                released += 1;
            } else {
                bottom += 1;
            }
        }
    }
    // Both outcomes occur, so the comparison covers ⊥ (Poisson K = 0, threshold not reached).
    assert!(released > 0 && bottom > 0, "{released} {bottom}");
}

#[test]
fn the_release_rule_refuses_a_wrong_number_of_scores() {
    let s = space();
    let tuner = Tuner::new(
        Method::Exhaustive { runs: 10 },
        &s,
        Guarantee::pure(0.3, AR).unwrap(),
    )
    .unwrap();
    let (schedule, rule) = tuner
        .schedule(&TuneOptions::default(), &mut SecureRng::seeded(1))
        .unwrap();
    assert_eq!(schedule.tasks(), 10);
    assert!(schedule.task(10).is_err());
    assert!(rule.winner(&[Some(1.0); 9]).is_err());
    // Ties go to the lower index; an unusable run (None) never wins.
    let mut scores = vec![Some(0.0); 10];
    scores[2] = Some(5.0);
    scores[7] = Some(5.0);
    scores[4] = None;
    assert_eq!(rule.winner(&scores).unwrap(), Some(2));
    assert_eq!(rule.winner(&[None; 10]).unwrap(), None);
}
