//! Issue 13, findings 2, 5 and 13 at the library level: DP-SGD's schedule and spend do not
//! depend on the number of records it is given (a dataset D, D minus one record, no record at
//! all); `learn::pipeline::tune` states the same guarantees on D and D minus one record when the
//! size is public; empty split sides are trained on, not refused.

use dptune::data::Records;
use dptune::data::{Dataset, Task};
use dptune::learn::pipeline::{tune, Events, LearnerKind, Plan, Size, SizeUsed};
use dptune::learn::DpSgd;
use dptune::noise::SecureRng;
use dptune::privacy::{Guarantee, Neighbours};
use dptune::tune::{Config, Domain, Learner, PrivateStep, SearchSpace, Value};

#[path = "support/learn_data.rs"]
mod learn_data;
use learn_data::{cfg, toy};

fn first(d: &Dataset, n: usize) -> Dataset {
    d.select(&(0..n).collect::<Vec<_>>())
}

fn sgd_config() -> Config {
    cfg(&[
        ("learning_rate", Value::Float(2.0)),
        ("clip_norm", Value::Float(1.0)),
        ("epochs", Value::Int(3)),
        ("batch_size", Value::Int(250)),
    ])
}

#[test]
fn dpsgd_spends_the_same_on_neighbours_and_on_no_data() {
    let d = toy(1500);
    let (d1, empty) = (first(&d, 1499), first(&d, 0));
    let alw = Guarantee::approx(1.0, 1e-5, Neighbours::AddRemove).unwrap();
    let c = sgd_config();
    let spent = |l: DpSgd, data: &Dataset| {
        l.fit(&c, PrivateStep::new(data, &alw, &mut SecureRng::seeded(2)))
            .unwrap()
            .spent
    };
    // Planned for a public 1500 records: the same mechanism whatever is passed.
    let l = DpSgd::linear(1500.0);
    let on_d = spent(l, &d);
    assert_eq!(on_d, spent(l, &d1));
    assert_eq!(on_d, spent(l, &empty));
    assert!(on_d.epsilon(1e-5).unwrap() <= 1.0);
    // The same check rejects the old behaviour (the schedule planned from the count of the data
    // passed in: q = B/n): the spends on neighbours differ.
    let leaky = |data: &Dataset| spent(DpSgd::linear(data.len() as f64), data);
    assert_ne!(leaky(&d), leaky(&d1));
    // No data: every step releases noise only; the model is finite and moved off zero.
    let m = l
        .fit(
            &c,
            PrivateStep::new(&empty, &alw, &mut SecureRng::seeded(3)),
        )
        .unwrap()
        .value;
    assert!(m.params.iter().all(|w| w.is_finite()));
    assert!(m.params.iter().any(|&w| w != 0.0));
    // A schedule is refused for its public size only, never for the data.
    assert!(DpSgd::linear(0.0)
        .fit(&c, PrivateStep::new(&d, &alw, &mut SecureRng::seeded(4)))
        .is_err());
    assert!(DpSgd::linear(0.4)
        .fit(
            &c,
            PrivateStep::new(&empty, &alw, &mut SecureRng::seeded(4))
        )
        .is_ok());
}

#[test]
fn dpsgd_learns_on_its_planned_size_and_spends_the_same_on_fewer_records() {
    // Planned for 1500 records, trained on 1500: learns. Planned for 1500, given 150 (a tenth
    // of the records are present): the steps are ten times smaller on average, but the run is
    // the same mechanism and still spends the same.
    let d = toy(1500);
    let alw = Guarantee::approx(4.0, 1e-5, Neighbours::AddRemove).unwrap();
    let c = sgd_config();
    let l = DpSgd::linear(1500.0);
    let full = l
        .fit(&c, PrivateStep::new(&d, &alw, &mut SecureRng::seeded(5)))
        .unwrap();
    let acc = full.value.accuracy(&d);
    assert!(acc > 0.85, "{acc}");
    let tenth = l
        .fit(
            &c,
            PrivateStep::new(&first(&d, 150), &alw, &mut SecureRng::seeded(5)),
        )
        .unwrap();
    assert_eq!(full.spent, tenth.spent);
}

fn one_config_space() -> SearchSpace {
    let one = |v: Value| Domain::Choice { values: vec![v] };
    SearchSpace::new(vec![
        ("learning_rate".into(), one(Value::Float(2.0))),
        ("clip_norm".into(), one(Value::Float(1.0))),
        ("epochs".into(), one(Value::Int(2))),
        ("batch_size".into(), one(Value::Int(256))),
    ])
    .unwrap()
}

#[test]
fn the_pipeline_states_the_same_guarantees_on_neighbours_given_a_public_size() {
    let d = toy(1500);
    let d1 = first(&d, 1499);
    let mut plan = Plan::default_for(LearnerKind::DpSgdLogistic).unwrap();
    plan.space = one_config_space();
    plan.size = Size::Public(1500);
    let run = |data: &Dataset| {
        tune(&plan, data, &Events::default(), &mut SecureRng::seeded(6))
            .unwrap()
            .expect("logarithmic repeats run at least once")
    };
    let (a, b) = (run(&d), run(&d1));
    assert_eq!(a.size, SizeUsed::Public { records: 1500 });
    assert_eq!(a.size, b.size);
    assert_eq!(a.per_run, b.per_run);
    assert_eq!(a.tuning, b.tuning);
    assert_eq!(a.final_fit, b.final_fit);
    assert_eq!(a.total, b.total);
    assert!(a.total.epsilon(1e-5).unwrap() <= 1.0);
}

#[test]
fn the_default_pipeline_spends_a_noisy_count_inside_the_total() {
    let d = toy(1500);
    let mut plan = Plan::default_for(LearnerKind::DpSgdLogistic).unwrap();
    plan.space = one_config_space();
    let o = tune(&plan, &d, &Events::default(), &mut SecureRng::seeded(7))
        .unwrap()
        .unwrap();
    let SizeUsed::NoisyCount { value, spent } = &o.size else {
        panic!("the default plan releases a noisy count: {:?}", o.size)
    };
    // ε = 0.02: ⌊0.02·2^32⌋/2^32 = 85899345/4294967296.
    assert_eq!(spent.pure_eps(), Some(85_899_345.0 / 4_294_967_296.0));
    // Discrete Laplace of scale 50: |noise| < 1000 fails with probability e^-20.
    assert!((value - 1500).abs() < 1000, "{value}");
    let total = o.total.epsilon(1e-5).unwrap();
    assert!(total <= 1.0 && total > 0.99, "{total}");
    let parts = o.tuning.epsilon(1e-5).unwrap();
    assert!(parts <= 1.0 - 0.0199, "{parts}");
}

#[test]
fn empty_split_sides_are_trained_not_refused() {
    // One record: one side of the tuning/final split is always empty, and so is one side of
    // the train/score split. Each seed must still release (finding 13).
    let d = toy(1);
    for learner in [
        LearnerKind::DpSgdLogistic,
        LearnerKind::DpSgdMlp { hidden: 4 },
    ] {
        let mut plan = Plan::default_for(learner).unwrap();
        plan.space = one_config_space();
        plan.size = Size::Public(1);
        for seed in 0..6 {
            let o = tune(&plan, &d, &Events::default(), &mut SecureRng::seeded(seed))
                .unwrap()
                .expect("logarithmic repeats run at least once");
            assert!(o.total.epsilon(1e-5).unwrap() <= 1.0);
        }
    }
    let reg = Dataset::new(
        vec![0.5],
        vec![0.25],
        1.0,
        Task::Regression {
            low: 0.0,
            high: 1.0,
        },
        vec!["a".into()],
    )
    .unwrap();
    let plan = Plan::default_for(LearnerKind::Ridge).unwrap();
    for seed in 0..6 {
        let o = tune(
            &plan,
            &reg,
            &Events::default(),
            &mut SecureRng::seeded(seed),
        )
        .unwrap()
        .unwrap();
        assert_eq!(o.size, SizeUsed::NotNeeded);
        assert!(o.model.params.iter().all(|w| w.is_finite()));
    }
}

#[test]
fn a_cap_does_not_truncate_or_overrun_an_exhaustive_search() {
    // Exhaustive search has a public number of runs: a cap larger than the grid used to index
    // past it (a panic), a smaller one silently dropped grid points.
    use dptune::learn::NoisyAccuracy;
    use dptune::tune::{split_by_coin, Method, TuneOptions, Tuner};
    let d = toy(300);
    let space = one_config_space();
    let per_run = Guarantee::approx(1.0, 1e-5, Neighbours::AddRemove).unwrap();
    let t = Tuner::new(Method::Exhaustive { runs: 1 }, &space, per_run).unwrap();
    let mut rng = SecureRng::seeded(8);
    let split = split_by_coin(d.len(), 0.8, &mut rng).unwrap();
    let learner = DpSgd::linear(240.0);
    let uncapped = t.cost(&TuneOptions::default()).unwrap();
    for cap in [5, 1] {
        let options = TuneOptions {
            cap: Some(cap),
            cap_delta: 1e-6,
            ..Default::default()
        };
        let r = t
            .run(&learner, &NoisyAccuracy, &d, &split, &options, &mut rng)
            .unwrap();
        assert!(r.value.is_some());
        assert_eq!(r.spent, uncapped);
    }
}
