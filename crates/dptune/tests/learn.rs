//! The learners' privacy claims (worked numbers from THEORY.md §8 and §13), refusals, and an
//! end-to-end private tuning on Adult.

use dptune::data::Records;
use dptune::data::{bundled, Dataset, Task};
use dptune::learn::pipeline::{oracle_on_test, tune, Events, LearnerKind, Plan};
use dptune::learn::{DpSgd, NoisyAccuracy, ObjectivePerturbation, OutputPerturbation, RidgeSsp};
use dptune::noise::GridGaussian;
use dptune::noise::SecureRng;
use dptune::privacy::convert::rdp_epsilon;
use dptune::privacy::dpsgd::dpsgd_epsilon_grid;
use dptune::privacy::{Guarantee, Neighbours, Route};
use dptune::tune::{Learner, PrivateStep, Scorer, Value};
use dptune::Error;

#[path = "support/learn_data.rs"]
mod learn_data;
use learn_data::{cfg, toy};

#[test]
fn output_perturbation_spends_its_allowance_and_learns() {
    let data = toy(4000);
    let c = cfg(&[("regularization", Value::Float(1e-2))]);
    // Replace-one with the record count as n (what `--learner objpert` runs): pure ε (vector
    // Laplace) and zCDP (Gaussian) allowances are both spent within.
    let pure = Guarantee::pure(1.0, Neighbours::Replace).unwrap();
    let m = ObjectivePerturbation
        .fit(
            &c,
            PrivateStep::new(&data, &pure, &mut SecureRng::seeded(2)),
        )
        .unwrap();
    assert_eq!(m.spent.pure_eps(), Some(1.0));
    assert!(m.value.accuracy(&data) > 0.9, "{}", m.value.accuracy(&data));
    let zcdp = Guarantee::zcdp(0.1, Neighbours::Replace).unwrap();
    let m = ObjectivePerturbation
        .fit(
            &c,
            PrivateStep::new(&data, &zcdp, &mut SecureRng::seeded(2)),
        )
        .unwrap();
    assert!(m.spent.zcdp_rho().unwrap() <= 0.1);
    assert!(m.value.accuracy(&data) > 0.9, "{}", m.value.accuracy(&data));
    // Add/remove needs a public size: refused with the record count, fine with n declared
    // (here a size that differs from the record count, as a noisy count would).
    let ar = Guarantee::approx(1.0, 1e-6, Neighbours::AddRemove).unwrap();
    let e = ObjectivePerturbation
        .fit(&c, PrivateStep::new(&data, &ar, &mut SecureRng::seeded(2)))
        .unwrap_err();
    assert!(e.to_string().contains("`allowance`"), "{e}");
    let m = OutputPerturbation::with_public_size(3900)
        .unwrap()
        .fit(&c, PrivateStep::new(&data, &ar, &mut SecureRng::seeded(2)))
        .unwrap();
    assert!(m.spent.epsilon(1e-6).unwrap() <= 1.0);
    assert!(m.value.accuracy(&data) > 0.9, "{}", m.value.accuracy(&data));
    // Bad configurations are refused by name before any data are touched.
    let tiny = cfg(&[("regularization", Value::Float(1e-14))]);
    let e = ObjectivePerturbation
        .fit(
            &tiny,
            PrivateStep::new(&data, &zcdp, &mut SecureRng::seeded(2)),
        )
        .unwrap_err();
    assert!(e.to_string().contains("`regularization`"), "{e}");
}

#[test]
fn output_perturbation_never_fails_on_data() {
    // Empty data, one class only, a public size far from the record count, and tiny Λ with
    // separable data: each releases a finite model.
    let c = cfg(&[("regularization", Value::Float(1e-4))]);
    let alw = Guarantee::zcdp(0.5, Neighbours::Replace).unwrap();
    let data = toy(2000);
    let ones: Vec<usize> = (0..data.len()).filter(|&i| data.class(i) == 1).collect();
    for d in [toy(0), data.select(&ones), toy(3)] {
        for learner in [
            ObjectivePerturbation,
            OutputPerturbation::with_public_size(10).unwrap(),
            OutputPerturbation::with_public_size(100_000).unwrap(),
        ] {
            let m = learner
                .fit(&c, PrivateStep::new(&d, &alw, &mut SecureRng::seeded(4)))
                .unwrap();
            assert!(m.value.params.iter().all(|p| p.is_finite()));
        }
    }
}

/// The sample variance of `draws` is within five standard errors (√(2/N)·σ²) of `sigma2`:
/// for Gaussian draws the false-failure probability is below 6e-7.
fn variance_matches(draws: &[f64], sigma2: f64) -> bool {
    let n = draws.len() as f64;
    let var = draws.iter().map(|x| x * x).sum::<f64>() / n;
    (var - sigma2).abs() < 5.0 * sigma2 * (2.0 / n).sqrt()
}

#[test]
fn output_perturbation_noise_has_the_claimed_scale() {
    // Empty data: θ* = 0, so the released coefficients are the noise. n = 1000, Λ = 0.01:
    // S = 2/(nΛ) + 2τ/Λ = 0.2 + 2·(2⁻¹⁰/1000)/0.01 = 0.2001953125; at ρ = 0.5, σ = S.
    let sigma = 0.200_195_312_5f64;
    let c = cfg(&[("regularization", Value::Float(0.01))]);
    let alw = Guarantee::zcdp(0.5, Neighbours::AddRemove).unwrap();
    let learner = OutputPerturbation::with_public_size(1000).unwrap();
    let empty = toy(0);
    let mut rng = SecureRng::seeded(5);
    let draws: Vec<f64> = (0..4000)
        .flat_map(|_| {
            let m = learner
                .fit(&c, PrivateStep::new(&empty, &alw, &mut rng))
                .unwrap();
            m.value.params[..2].to_vec()
        })
        .collect();
    assert!(draws.len() == 8000 && variance_matches(&draws, sigma * sigma));
    // A deliberately wrong variant (half the noise: σ/2 at the same sensitivity) fails.
    let half = GridGaussian::new(sigma, sigma / 2.0, 1).unwrap();
    let wrong: Vec<f64> = (0..8000)
        .map(|_| half.release(&mut rng, 0.0).unwrap())
        .collect();
    assert!(!variance_matches(&wrong, sigma * sigma));
    // Pure ε = 1: each coordinate is Laplace with scale b ≈ √3·S (L1 sensitivity, d = 3);
    // E|X| = b and sd|X| = b, so five standard errors (false failure < 6e-7) bound the mean.
    let pure = Guarantee::pure(1.0, Neighbours::AddRemove).unwrap();
    let abs: Vec<f64> = (0..4000)
        .flat_map(|_| {
            let m = learner
                .fit(&c, PrivateStep::new(&empty, &pure, &mut rng))
                .unwrap();
            m.value.params[..2]
                .iter()
                .map(|p| p.abs())
                .collect::<Vec<_>>()
        })
        .collect();
    let b = 3f64.sqrt() * sigma;
    let mean = abs.iter().sum::<f64>() / abs.len() as f64;
    assert!(
        (mean - b).abs() < 5.0 * b / (abs.len() as f64).sqrt(),
        "{mean} vs {b}"
    );
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
    // The run states the lattice curve (grid noise: exact at integer orders, chords in
    // between), which here is best at order 8: ε = 2.1078, 0.3 % above the continuous curve;
    // and, for this (ε, δ) allowance, the lattice PLD (privacy::pld::lattice): ε = 1.828, as
    // dp_accounting's PLD (1.8282) for the continuous mechanism. The tighter one counts.
    let lattice = rdp_epsilon(&spent.rdp_curve().unwrap(), 1e-5).unwrap().eps;
    assert!(
        lattice >= eps && (lattice - 2.1078).abs() < 1e-3,
        "{lattice}"
    );
    let (pld, route) = spent.epsilon_route(1e-5).unwrap();
    assert!(
        route == Route::Pld && (pld - 1.8282).abs() < 2e-3,
        "{pld} {route}"
    );
    // Calibrated at ε = 2.1014 (rounded up in the last digit): by the RDP curve alone z would
    // come out at about 1 (main at cf07e50 asserted |z − 1| < 3e-3 here); by the tightest
    // route (the PLD) it is smaller.
    let tight = Guarantee::approx(2.1015, 1e-5, Neighbours::AddRemove).unwrap();
    let (s, spent) = DpSgd::linear(10_000.0).plan(&base, 3, &tight).unwrap();
    assert!(s.z < 0.95, "{}", s.z);
    assert!(spent.epsilon(1e-5).unwrap() <= 2.1015);
    // Asked to spend more than its allowance: refused before touching data.
    let small = Guarantee::approx(1.0, 1e-5, Neighbours::AddRemove).unwrap();
    assert!(matches!(
        DpSgd::linear(10_000.0).plan(&fixed, 3, &small),
        Err(Error::BudgetExceeded { .. })
    ));
    let data = toy(10_000);
    assert!(matches!(
        DpSgd::linear(10_000.0).fit(
            &fixed,
            PrivateStep::new(&data, &small, &mut SecureRng::seeded(3))
        ),
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
        .fit(&c, PrivateStep::new(&data, &alw, &mut SecureRng::seeded(4)))
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
        PrivateStep::new(&data, &alw, &mut SecureRng::seeded(5)),
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
    let m = RidgeSsp
        .fit(&c, PrivateStep::new(&data, &alw, &mut rng))
        .unwrap();
    assert!(m.spent.zcdp_rho().unwrap() <= 0.5);
    assert!(m.value.rmse(&data) < 0.05, "{}", m.value.rmse(&data));
    let pure = Guarantee::pure(1.0, Neighbours::AddRemove).unwrap();
    assert!(RidgeSsp
        .fit(&c, PrivateStep::new(&data, &pure, &mut rng))
        .is_err());
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
                    .fit(&c, PrivateStep::new(&part, &alw, &mut SecureRng::seeded(4)))
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
