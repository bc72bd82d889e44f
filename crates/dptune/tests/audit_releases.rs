//! Black-box epsilon audits of the noisy releases (`tests/support/audit.rs`): the tuners'
//! noisy scorers (`learn::metrics`), the grid Gaussian, and the noisy count, each run through
//! its public API on a worst-case pair (one record that moves the released sum by the full
//! sensitivity). A variant with half the noise behind the same claim must fail.
//!
//! False failure: at most 1e-6 over all audits (Bonferroni, `support::audit`). The tightness
//! table in docs/PRIVACY.md comes from
//! `cargo test --release -p dptune --test audit_releases -- --nocapture --test-threads 1`.

#[path = "support/audit.rs"]
mod audit;

use audit::{audit, Audit, Claim, Event, Pair};
use dptune::data::{Dataset, Records, Task};
use dptune::learn::{DpSgd, Model, NoisyAccuracy, NoisyClippedLoss};
use dptune::noise::{GridGaussian, SecureRng};
use dptune::privacy::{Guarantee, Neighbours};
use dptune::select::summary::noisy_count;
use dptune::tune::{PrivateStep, Scorer};

const AR: Neighbours = Neighbours::AddRemove;
const TRIALS: u64 = 2_000_000;
const DELTA: f64 = 1e-5;
/// ρ whose CKS20 conversion is about ε = 1 at δ = 1e-5.
const RHO: f64 = 0.0218;

/// `n` one-feature records, all labelled `label`.
fn records(n: usize, label: f64) -> Dataset {
    Dataset::new(
        vec![0.0; n],
        vec![label; n],
        1.0,
        Task::Classification {
            classes: vec!["no".into(), "yes".into()],
        },
        vec!["x".into()],
    )
    .unwrap()
}

/// A fixed model that predicts "yes" with probability sigmoid(10): right on every "yes"
/// record, and a log-loss of about 10 (above any cap used here) on every "no" record.
fn model() -> Model {
    let task = Task::Classification {
        classes: vec!["no".into(), "yes".into()],
    };
    let mut m = Model::linear(1, &task, 1.0);
    m.params = vec![0.0, 10.0];
    m
}

fn at_least(t: f64) -> Event<f64> {
    Event::new(format!("output >= {t:.2}"), move |&o| o >= t)
}

/// Audits the scorer `S` on D (`big`) vs D′ (`big` minus one record) with `allowance`,
/// `trials` runs per side.
#[allow(clippy::too_many_arguments)]
fn audit_scorer<S: Scorer<DpSgd>>(
    name: &str,
    scorer: S,
    claim: Claim,
    allowance: Guarantee,
    (big, small): (Dataset, Dataset),
    events: &[Event<f64>],
    trials: u64,
    seed: u64,
) -> Audit {
    let m = model();
    let run = |data: &Dataset, r: &mut SecureRng| {
        scorer
            .score(&m, PrivateStep::new(data, &allowance, r))
            .expect("the allowance fits")
            .value
    };
    let pair = Pair::new(
        format!("{} vs {} records", big.len(), small.len()),
        |r: &mut SecureRng| run(&big, r),
        |r: &mut SecureRng| run(&small, r),
    );
    audit(name, claim, vec![pair], events, trials, seed)
}

/// Noisy accuracy under a pure allowance of `spend` (claiming ε = 1): 3 correct records vs
/// 2; the event "score ≥ 3" has probabilities 1/(1 + e^−ε) and e^−ε/(1 + e^−ε), ratio e^ε.
///
/// The allowance is one ulp above the ε: at exactly ε = 1 the scorer refuses, because it
/// charges (⌊ε·2^32⌋/2^32).next_up(), one ulp above an allowance that is a multiple of 2^−32
/// (a refusal that depends only on public ε, but one that makes round budgets unusable).
fn accuracy_pure(spend: f64, seed: u64) -> Audit {
    let allowance = Guarantee::pure(spend.next_up(), AR).unwrap();
    audit_scorer(
        "noisy accuracy (discrete Laplace)",
        NoisyAccuracy,
        Claim::pure(1f64.next_up()),
        allowance,
        (records(3, 1.0), records(2, 1.0)),
        &[at_least(3.0)],
        TRIALS,
        seed,
    )
}

#[test]
fn noisy_accuracy_pure() {
    let score = |eps: f64| {
        let (data, allowance) = (records(3, 1.0), Guarantee::pure(eps, AR).unwrap());
        let mut rng = SecureRng::seeded(1);
        let step = PrivateStep::new(&data, &allowance, &mut rng);
        <NoisyAccuracy as Scorer<DpSgd>>::score(&NoisyAccuracy, &model(), step)
    };
    assert!(
        score(1.0).is_err(),
        "the round-budget refusal is fixed: drop the next_up"
    );
    let spent = score(1f64.next_up()).unwrap().spent;
    assert!(spent.pure_eps().unwrap() <= 1f64.next_up());
    accuracy_pure(1.0, 201).assert_passes();
}

#[test]
fn noisy_accuracy_with_half_the_noise_is_caught() {
    accuracy_pure(2.0, 202).assert_caught();
}

/// Noisy accuracy under a ρ-zCDP allowance (discrete Gaussian, σ ≈ 4.8): the events are
/// upper tails at 0 to 12 above the larger count. A quarter of the runs: every call
/// calibrates its noise level afresh, about 15 µs.
#[test]
fn noisy_accuracy_zcdp() {
    let allowance = Guarantee::zcdp(RHO, AR).unwrap();
    let claim = Claim {
        epsilon: allowance.epsilon(DELTA).unwrap(),
        delta: DELTA,
    };
    let events: Vec<_> = [3.0, 6.0, 9.0, 12.0, 15.0]
        .into_iter()
        .map(at_least)
        .collect();
    audit_scorer(
        "noisy accuracy (discrete Gaussian)",
        NoisyAccuracy,
        claim,
        allowance,
        (records(3, 1.0), records(2, 1.0)),
        &events,
        TRIALS / 4,
        203,
    )
    .assert_passes();
}

/// Noisy clipped loss (grid Laplace, cap 1): two "no" records (each at the cap) vs one; the
/// score is −(loss + noise), and "score ≤ −2" has probabilities about 1/2 and e^−ε/2.
#[test]
fn noisy_clipped_loss() {
    let below = Event::new("output <= -2", |&o: &f64| o <= -2.0);
    audit_scorer(
        "noisy clipped loss (grid Laplace)",
        NoisyClippedLoss { cap: 1.0 },
        Claim::pure(1.0),
        Guarantee::pure(1.0, AR).unwrap(),
        (records(2, 0.0), records(1, 0.0)),
        &[below],
        TRIALS,
        204,
    )
    .assert_passes();
}

/// The grid Gaussian release of a sensitivity-1 value (1 on D, 0 on D′), claiming the CKS20
/// (ε, δ) of the honest ρ; the events are upper tails at 1 to 3 honest σ. `sigma_factor`
/// scales the noise actually used.
fn grid_gaussian(sigma_factor: f64, seed: u64) -> Audit {
    let honest = GridGaussian::within_rho(1.0, RHO, 1).unwrap();
    let claim = Claim {
        epsilon: Guarantee::zcdp(honest.rho(), AR)
            .unwrap()
            .epsilon(DELTA)
            .unwrap(),
        delta: DELTA,
    };
    let sigma = honest.sigma();
    let used = GridGaussian::new(1.0, sigma * sigma_factor, 1).unwrap();
    let u2 = used.clone();
    let pair = Pair::new(
        "1 vs 0",
        move |r: &mut SecureRng| used.release(r, 1.0).unwrap(),
        move |r: &mut SecureRng| u2.release(r, 0.0).unwrap(),
    );
    let events: Vec<_> = [1.0, 1.5, 2.0, 2.5, 3.0]
        .into_iter()
        .map(|k| at_least(k * sigma))
        .collect();
    audit(
        "grid Gaussian release",
        claim,
        vec![pair],
        &events,
        TRIALS,
        seed,
    )
}

#[test]
fn grid_gaussian_release() {
    grid_gaussian(1.0, 205).assert_passes();
}

#[test]
fn grid_gaussian_with_half_the_noise_is_caught() {
    grid_gaussian(0.5, 206).assert_caught();
}

/// The noisy count of 100 values vs 99 (add/remove), claiming ε = 1.
fn count(eps: f64, seed: u64) -> Audit {
    let (big, small) = (vec![0.0; 100], vec![0.0; 99]);
    let pair = Pair::new(
        "100 vs 99 values",
        move |r: &mut SecureRng| noisy_count(r, &big, eps, AR).unwrap().value,
        move |r: &mut SecureRng| noisy_count(r, &small, eps, AR).unwrap().value,
    );
    audit(
        "noisy count (discrete Laplace)",
        Claim::pure(1.0),
        vec![pair],
        &[at_least(100.0)],
        TRIALS,
        seed,
    )
}

#[test]
fn noisy_count_release() {
    count(1.0, 207).assert_passes();
}

#[test]
fn noisy_count_with_half_the_noise_is_caught() {
    count(2.0, 208).assert_caught();
}
