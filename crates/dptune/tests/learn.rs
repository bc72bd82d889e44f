//! The learners' privacy claims (worked numbers from THEORY.md §8 and §13), refusals, and an
//! end-to-end private tuning on Adult.

use dptune::data::Records;
use dptune::data::{bundled, Dataset, Task};
use dptune::learn::pipeline::{oracle_on_test, tune, Events, LearnerKind, Plan};
use dptune::learn::{
    objective_perturbation_params, DpSgd, NoisyAccuracy, ObjectivePerturbation, RidgeSsp,
};
use dptune::noise::SecureRng;
use dptune::privacy::subsampled::dpsgd_epsilon_grid;
use dptune::privacy::{Guarantee, Neighbours};
use dptune::tune::{Config, Learner, Scorer, Value};
use dptune::Error;

fn cfg(pairs: &[(&str, Value)]) -> Config {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

#[test]
fn objective_perturbation_matches_theory_worked_numbers() {
    // THEORY.md §8: n = 1e4, Λ = 1e-3, c = 1/4, ε = 1: ε′ = 0.95061, Δ = 0.
    let (e, d) = objective_perturbation_params(1.0, 10_000, 1e-3, 0.25);
    assert!((e - 0.95061).abs() < 5e-6 && e <= 1.0 - 2.0 * (0.25f64 / 10.0).ln_1p());
    assert_eq!(d, 0.0);
    // ‖b‖ ~ Gamma(20, 2/ε′) = Gamma(20, 2.1039).
    assert!((2.0 / e - 2.1039).abs() < 5e-5);
    // n = 1000, Λ = 1e-5: ε′ ≤ 0, so Δ = 8.70e-4 and ε′ = 0.5.
    let (e, d) = objective_perturbation_params(1.0, 1000, 1e-5, 0.25);
    assert!((e - 0.5).abs() < 1e-12 && e <= 0.5);
    assert!((d - 8.70e-4).abs() < 5e-6, "{d}");
}

fn toy(n: usize) -> Dataset {
    // Two informative features, label = 1 when x0 > x1 (public synthetic data).
    let mut rng = SecureRng::seeded(1);
    let mut x = Vec::new();
    let mut y = Vec::new();
    for _ in 0..n {
        let a = rng.unit_f64();
        let b = rng.unit_f64();
        x.extend([a, b]);
        y.push(if a > b { 1.0 } else { 0.0 });
    }
    Dataset::new(
        x,
        y,
        2,
        2f64.sqrt().next_up(),
        Task::Classification {
            classes: vec!["no".into(), "yes".into()],
        },
        vec!["a".into(), "b".into()],
    )
    .unwrap()
}

#[test]
fn objective_perturbation_spends_its_pure_epsilon_and_learns() {
    let data = toy(4000);
    let alw = Guarantee::pure(1.0, Neighbours::Replace).unwrap();
    let c = cfg(&[("regularization", Value::Float(1e-3))]);
    let m = ObjectivePerturbation
        .fit(&c, &data, &alw, &mut SecureRng::seeded(2))
        .unwrap();
    assert_eq!(m.spent.pure_eps(), Some(1.0));
    assert!(m.value.accuracy(&data) > 0.9, "{}", m.value.accuracy(&data));
    // Add/remove allowances are refused (the theorem is for replace-one).
    let ar = Guarantee::pure(1.0, Neighbours::AddRemove).unwrap();
    assert!(ObjectivePerturbation
        .fit(&c, &data, &ar, &mut SecureRng::seeded(2))
        .is_err());
}

#[test]
fn dpsgd_epsilon_matches_dp_accounting() {
    // THEORY.md §13: q = 0.01, z = 1, T = 1000, δ = 1e-5: ε = 2.1014 (dp_accounting 0.6.0).
    // n = 10 000, batch 100 → q = 0.01; 10 epochs → T = 1000.
    let base = cfg(&[
        ("learning_rate", Value::Float(1.0)),
        ("clip_norm", Value::Float(1.0)),
        ("epochs", Value::Int(10)),
        ("batch_size", Value::Int(100)),
    ]);
    let mut fixed = base.clone();
    fixed.insert("noise_multiplier".into(), Value::Float(1.0));
    let roomy = Guarantee::approx(3.0, 1e-5, Neighbours::AddRemove).unwrap();
    let (s, spent) = DpSgd::linear(10_000.0).plan(&fixed, 3, &roomy).unwrap();
    assert_eq!((s.q, s.steps), (0.01, 1000));
    assert!(
        s.z <= 1.0 && s.z > 1.0 - 1e-6,
        "grid rounding charged: {}",
        s.z
    );
    let eps = dpsgd_epsilon_grid(s.q, s.z, s.steps, 1e-5).unwrap().eps;
    assert!((eps - 2.1014).abs() < 1e-3, "{eps}");
    assert!(spent.epsilon(1e-5).unwrap() <= eps + 1e-9);
    // Calibrated at ε = 2.1014 (rounded up in the last digit): z comes out at about 1.
    let tight = Guarantee::approx(2.1015, 1e-5, Neighbours::AddRemove).unwrap();
    let (s, spent) = DpSgd::linear(10_000.0).plan(&base, 3, &tight).unwrap();
    assert!((s.z - 1.0).abs() < 3e-3, "{}", s.z);
    assert!(spent.epsilon(1e-5).unwrap() <= 2.1015);
    // Asked to spend more than its allowance: refused before touching data.
    let small = Guarantee::approx(1.0, 1e-5, Neighbours::AddRemove).unwrap();
    assert!(matches!(
        DpSgd::linear(10_000.0).plan(&fixed, 3, &small),
        Err(Error::BudgetExceeded { .. })
    ));
    let data = toy(10_000);
    assert!(matches!(
        DpSgd::linear(10_000.0).fit(&fixed, &data, &small, &mut SecureRng::seeded(3)),
        Err(Error::BudgetExceeded { .. })
    ));
    // Pure allowances are refused (Gaussian noise); unknown hyperparameters too.
    let pure = Guarantee::pure(1.0, Neighbours::AddRemove).unwrap();
    assert!(DpSgd::linear(10_000.0).plan(&base, 3, &pure).is_err());
    let mut odd = base.clone();
    odd.insert("momentum".into(), Value::Float(0.9));
    assert!(matches!(
        DpSgd::linear(10_000.0).plan(&odd, 3, &roomy),
        Err(Error::InvalidParameter {
            name: "hyperparameter",
            ..
        })
    ));
}

#[test]
fn dpsgd_learns_and_scores_within_its_allowance() {
    let data = toy(5000);
    let alw = Guarantee::approx(1.0, 1e-5, Neighbours::AddRemove).unwrap();
    let c = cfg(&[
        ("learning_rate", Value::Float(2.0)),
        ("clip_norm", Value::Float(1.0)),
        ("epochs", Value::Int(3)),
        ("batch_size", Value::Int(250)),
    ]);
    let m = DpSgd::linear(5000.0)
        .fit(&c, &data, &alw, &mut SecureRng::seeded(4))
        .unwrap();
    assert!(m.spent.epsilon(1e-5).unwrap() <= 1.0);
    assert!(
        m.value.accuracy(&data) > 0.85,
        "{}",
        m.value.accuracy(&data)
    );
    let s = <NoisyAccuracy as Scorer<DpSgd>>::score(
        &NoisyAccuracy,
        &m.value,
        &data,
        &alw,
        &mut SecureRng::seeded(5),
    )
    .unwrap();
    assert!(s.spent.epsilon(1e-5).unwrap() <= 1.0);
    assert!((s.value - 5000.0 * m.value.accuracy(&data)).abs() < 100.0);
}

#[test]
fn ridge_ssp_fits_a_line_within_its_allowance() {
    let mut rng = SecureRng::seeded(6);
    let n = 20_000;
    let mut x = Vec::new();
    let mut y = Vec::new();
    for _ in 0..n {
        let a = rng.unit_f64();
        x.push(a);
        y.push(3.0 * a - 1.0);
    }
    let data = Dataset::new(
        x,
        y,
        1,
        1.0,
        Task::Regression {
            low: -1.0,
            high: 2.0,
        },
        vec!["a".into()],
    )
    .unwrap();
    let alw = Guarantee::zcdp(0.5, Neighbours::AddRemove).unwrap();
    let c = cfg(&[("regularization", Value::Float(1e-3))]);
    let m = RidgeSsp.fit(&c, &data, &alw, &mut rng).unwrap();
    assert!(m.spent.zcdp_rho().unwrap() <= 0.5);
    assert!(m.value.rmse(&data) < 0.05, "{}", m.value.rmse(&data));
    let pure = Guarantee::pure(1.0, Neighbours::AddRemove).unwrap();
    assert!(RidgeSsp.fit(&c, &data, &pure, &mut rng).is_err());
}

#[test]
fn default_tuning_on_adult_is_private_and_close_to_the_oracle() {
    let b = bundled("adult").unwrap();
    let (train, test) = (b.train(), b.test());
    let plan = Plan::default_for(LearnerKind::DpSgdLogistic).unwrap();
    let t = std::time::Instant::now();
    let out = tune(&plan, &train, &Events::default(), &mut SecureRng::seeded(7))
        .unwrap()
        .expect("logarithmic repeats always run at least once");
    let secs = t.elapsed().as_secs_f64();
    let acc = out.model.accuracy(&test);
    let total = out.total.epsilon(1e-5).unwrap();
    let configs = plan.space.grid().unwrap();
    let oracle = oracle_on_test(
        &plan,
        &out,
        &configs,
        &train,
        &test,
        &mut SecureRng::seeded(8),
    )
    .unwrap()
    .value;
    eprintln!(
        "adult default tuning: test accuracy {acc:.4}, oracle {:.4} ({:?}), eps {total:.4}, \
         {secs:.1} s, chosen {:?}",
        oracle.score, oracle.config, out.config
    );
    assert!(total <= 1.0, "{total}");
    assert!(acc > 0.80, "{acc}");
    assert!(oracle.score - acc < 0.03, "{acc} vs {}", oracle.score);
    assert!(test.len() == 16_281);
}

#[test]
#[ignore]
fn probe_dpsgd_on_adult() {
    let b = bundled("adult").unwrap();
    let (train, test) = (b.train(), b.test());
    let part = train.select(&(0..13_000).collect::<Vec<_>>());
    for eps in [0.5, 100.0] {
        let alw = Guarantee::approx(eps, 1e-5, Neighbours::AddRemove).unwrap();
        for lr in [0.5, 2.0, 8.0] {
            for (ep, bs) in [(3, 256), (6, 512), (10, 1024)] {
                let c = cfg(&[
                    ("learning_rate", Value::Float(lr)),
                    ("clip_norm", Value::Float(1.0)),
                    ("epochs", Value::Int(ep)),
                    ("batch_size", Value::Int(bs)),
                ]);
                let t = std::time::Instant::now();
                let m = DpSgd::linear(13_000.0)
                    .fit(&c, &part, &alw, &mut SecureRng::seeded(4))
                    .unwrap();
                let (s, _) = DpSgd::linear(13_000.0)
                    .plan(&c, m.value.params.len(), &alw)
                    .unwrap();
                eprintln!(
                    "eps {eps} lr {lr} ep {ep} bs {bs}: acc {:.4} z {:.3} steps {} {:.2}s",
                    m.value.accuracy(&test),
                    s.z,
                    s.steps,
                    t.elapsed().as_secs_f64()
                );
            }
        }
    }
}

#[test]
fn tpe_baseline_tunes_dpsgd_over_instances_and_is_labelled_not_private() {
    use dptune::learn::pipeline::tpe_baseline;
    use dptune::tune::split_by_coin;
    use dptune::tune::tpe::{Aggregate, TpeOptions};
    let b = bundled("adult").unwrap();
    let train = b.train();
    let mut rng = SecureRng::seeded(11);
    // Two instances: disjoint coin halves of Adult's training part, each split 80/20.
    let halves = split_by_coin(train.len(), 0.5, &mut rng).unwrap();
    let instances: Vec<(Dataset, Dataset)> = [halves.first, halves.second]
        .iter()
        .map(|idx| {
            let d = train.select(idx);
            let s = split_by_coin(d.len(), 0.8, &mut rng).unwrap();
            (d.select(&s.first), d.select(&s.second))
        })
        .collect();
    let per_run = Guarantee::approx(1.0, 1e-5, Neighbours::AddRemove).unwrap();
    let opts = TpeOptions {
        trials: 12,
        startup: 5,
        repeats: 2,
        per_instance: Aggregate::Mean,
        across_instances: Aggregate::Min,
        ..Default::default()
    };
    let space = LearnerKind::DpSgdLogistic.default_space();
    let r = tpe_baseline(
        LearnerKind::DpSgdLogistic,
        &space,
        &instances,
        &per_run,
        &opts,
        None,
        &mut rng,
    )
    .unwrap();
    assert!(r.to_string().contains("NOT PRIVATE"));
    assert_eq!(r.value.trials.len(), 12);
    assert!(r.value.best_value > 0.8, "{}", r.value.best_value);
}
