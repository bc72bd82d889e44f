//! Black-box epsilon audits of the selection mechanisms (`tests/support/audit.rs`): each is run
//! from samples on a worst-case neighbouring pair of score vectors, fixed in advance from its
//! theory, and the Clopper–Pearson lower bound on ε must not exceed the claimed ε. A variant
//! with too little noise (twice the ε behind the same claim) must fail the same audit.
//!
//! False failure: at most 1e-6 over all audits (`support::audit::FALSE_FAILURE`, Bonferroni).
//! Fixed seeds make each run reproducible. The tightness table in docs/PRIVACY.md comes from
//! `cargo test --release -p dptune --test audit_selection -- --nocapture --test-threads 1`.

#[path = "support/audit.rs"]
mod audit;

use audit::{audit, Audit, Claim, Event, Pair};
use dptune::noise::SecureRng;
use dptune::privacy::{Guarantee, Neighbours};
use dptune::select::{
    ExponentialMechanism, GaussianArgmax, GeneralizedExponential, Goal, GumbelMax, L2Sensitivity,
    LaplaceNoisyMax, NoisyTopK, PermuteAndFlip, Scores, Selector, Sensitivity, SparseVector,
    TopKMethod,
};

const AR: Neighbours = Neighbours::AddRemove;
const MAX: Goal = Goal::Maximize;
/// Runs per side of each pair.
const TRIALS: u64 = 2_000_000;

/// The pure ε allowance under add/remove-one.
fn pure(eps: f64) -> Guarantee {
    Guarantee::pure(eps, AR).unwrap()
}

/// The (ε, δ) allowance under add/remove-one.
fn approx(eps: f64, delta: f64) -> Guarantee {
    Guarantee::approx(eps, delta, AR).unwrap()
}

fn general() -> Sensitivity {
    Sensitivity::general(1.0).unwrap()
}

fn output_is(j: usize) -> Event<usize> {
    Event::new(format!("output = {j}"), move |&o| o == j)
}

/// m scores at 0 (D) and the neighbour moving candidate 0 down and every other candidate up
/// by Δ = 1 (D′): candidate 0 loses the most probability it can.
fn down_up(m: usize) -> (Vec<f64>, Vec<f64>) {
    let d = vec![0.0; m];
    let mut dp = vec![1.0; m];
    dp[0] = -1.0;
    (d, dp)
}

/// Audits a one-index selector built by `make(scores)`, claiming pure `claimed`.
fn audit_argmax<M>(
    name: &str,
    claimed: f64,
    m: usize,
    seed: u64,
    make: impl Fn(&[f64]) -> M,
    draw: impl Fn(&M, &mut SecureRng) -> usize,
) -> Audit {
    let (d, dp) = down_up(m);
    let (a, b) = (make(&d), make(&dp));
    let pair = Pair::new(
        format!("m = {m}, 0 vs (-1, +1, ...)"),
        |r: &mut SecureRng| draw(&a, r),
        |r: &mut SecureRng| draw(&b, r),
    );
    audit(
        name,
        Claim::pure(claimed),
        vec![pair],
        &[output_is(0)],
        TRIALS,
        seed,
    )
}

fn em(eps: f64, m: usize, seed: u64) -> Audit {
    audit_argmax(
        "exponential mechanism",
        1.0,
        m,
        seed,
        |s| {
            ExponentialMechanism::new(&Scores::new(s, MAX, general()).unwrap(), &pure(eps)).unwrap()
        },
        |e, r| e.select(r).value,
    )
}

#[test]
fn exponential_mechanism() {
    let m = ExponentialMechanism::new(
        &Scores::new(&[0.0; 10], MAX, general()).unwrap(),
        &pure(1.0),
    )
    .unwrap();
    assert_eq!(m.guarantee().pure_eps(), Some(1.0));
    em(1.0, 10, 101).assert_passes();
}

#[test]
fn exponential_mechanism_with_half_the_noise_is_caught() {
    em(2.0, 10, 102).assert_caught();
}

#[test]
fn gumbel_noisy_max() {
    audit_argmax(
        "report-noisy-max, Gumbel",
        1.0,
        10,
        103,
        |s| GumbelMax::new(&Scores::new(s, MAX, general()).unwrap(), &pure(1.0)).unwrap(),
        |e, r| e.select(r).value,
    )
    .assert_passes();
}

fn pf(eps: f64, seed: u64) -> Audit {
    audit_argmax(
        "permute-and-flip",
        1.0,
        2,
        seed,
        |s| PermuteAndFlip::new(&Scores::new(s, MAX, general()).unwrap(), &pure(eps)).unwrap(),
        |e, r| e.select(r).value,
    )
}

#[test]
fn permute_and_flip() {
    pf(1.0, 104).assert_passes();
}

#[test]
fn permute_and_flip_with_half_the_noise_is_caught() {
    pf(2.0, 105).assert_caught();
}

fn laplace(eps: f64, seed: u64) -> Audit {
    audit_argmax(
        "report-noisy-max, Laplace",
        1.0,
        10,
        seed,
        |s| LaplaceNoisyMax::new(&Scores::new(s, MAX, general()).unwrap(), &pure(eps)).unwrap(),
        |e, r| e.select(r).value,
    )
}

#[test]
fn laplace_noisy_max() {
    laplace(1.0, 106).assert_passes();
}

#[test]
fn laplace_noisy_max_with_half_the_noise_is_caught() {
    laplace(2.0, 107).assert_caught();
}

/// Two candidates whose gap sits `c` noise standard deviations (of the difference) below
/// zero on D, for c in `offsets`; D′ moves them by (−1, +1), the whole L2 sensitivity √2.
/// The pairs are placed by the honest mechanism's σ, whatever the audited variant uses.
fn gaussian(build_eps: f64, seed: u64) -> Audit {
    let (eps, delta) = (1.0, 1e-5);
    let make = |s: &[f64], e: f64| {
        GaussianArgmax::new(
            &Scores::new(s, MAX, general()).unwrap(),
            L2Sensitivity::General,
            &approx(e, delta),
        )
        .unwrap()
    };
    let honest = make(&[0.0, 0.0], eps);
    let claimed = honest.guarantee().epsilon(delta).unwrap();
    assert!(claimed <= eps);
    let sd = honest.sigma() * 2f64.sqrt();
    let pairs = [1.0, 1.5, 2.0]
        .into_iter()
        .map(|c| {
            let a = make(&[-c * sd, 0.0], build_eps);
            let b = make(&[-c * sd - 1.0, 1.0], build_eps);
            Pair::new(
                format!("gap -{c} sd"),
                move |r: &mut SecureRng| a.draw(r),
                move |r: &mut SecureRng| b.draw(r),
            )
        })
        .collect();
    audit(
        "Gaussian argmax (L2 calibration)",
        Claim {
            epsilon: claimed,
            delta,
        },
        pairs,
        &[output_is(0)],
        TRIALS,
        seed,
    )
}

#[test]
fn gaussian_argmax() {
    gaussian(1.0, 108).assert_passes();
}

#[test]
fn gaussian_argmax_with_half_the_noise_is_caught() {
    // The ε (same δ) at which the calibration gives half the honest σ.
    let sigma = |e: f64| {
        GaussianArgmax::new(
            &Scores::new(&[0.0, 0.0], MAX, general()).unwrap(),
            L2Sensitivity::General,
            &approx(e, 1e-5),
        )
        .unwrap()
        .sigma()
    };
    let honest = sigma(1.0);
    let e = (100..1000)
        .map(|i| f64::from(i) / 100.0)
        .find(|&e| sigma(e) <= honest / 2.0)
        .unwrap();
    assert!(sigma(e) > 0.48 * honest, "{e}");
    gaussian(e, 109).assert_caught();
}

/// GEM with unit sensitivities: D′ = 0 (every normalised score 0), D = (+1, −1, ...)
/// (candidate 0 alone at 0, the rest at −1). GEM charges range 2 for normalised scores that
/// move by 1, so on this family the bound is about ε/2: a doubled ε is *not* exposed, and the
/// wrong variant uses three times the ε.
fn gem(eps: f64, seed: u64) -> Audit {
    let m = 10;
    let mut d = vec![-1.0; m];
    d[0] = 1.0;
    let make =
        |s: &[f64]| GeneralizedExponential::new(s, MAX, &vec![1.0; m], &pure(eps), 0.1).unwrap();
    let (a, b) = (make(&d), make(&vec![0.0; m]));
    let pair = Pair::new(
        "m = 10, (+1, -1, ...) vs 0",
        move |r: &mut SecureRng| a.select(r).value,
        move |r: &mut SecureRng| b.select(r).value,
    );
    audit(
        "generalized exponential mechanism",
        Claim::pure(1.0),
        vec![pair],
        &[output_is(0)],
        TRIALS,
        seed,
    )
}

#[test]
fn generalized_exponential_mechanism() {
    gem(1.0, 110).assert_passes();
}

#[test]
fn generalized_exponential_mechanism_with_three_times_epsilon_is_caught() {
    gem(3.0, 111).assert_caught();
}

/// Top-2 of 10: D = 0, D′ moves candidates 0 and 1 down and the rest up; the event is that
/// the released pair is {0, 1} (in either order). Claimed: 2ε (k rounds of ε).
fn top_k(method: TopKMethod, eps: f64, seed: u64) -> Audit {
    let m = 10;
    let d = vec![0.0; m];
    let mut dp = vec![1.0; m];
    dp[0] = -1.0;
    dp[1] = -1.0;
    // Two rounds at `eps` each: the allowance is their total.
    let make = |s: &[f64]| {
        let scores = Scores::new(s, MAX, general()).unwrap();
        NoisyTopK::new(&scores, &pure(2.0 * eps), 2, method).unwrap()
    };
    let (a, b) = (make(&d), make(&dp));
    let pair = Pair::new(
        "m = 10, 0 vs (-1, -1, +1, ...)",
        move |r: &mut SecureRng| a.select(r).value,
        move |r: &mut SecureRng| b.select(r).value,
    );
    let event = Event::new("released {0, 1}", |o: &Vec<usize>| {
        let mut v = o.clone();
        v.sort_unstable();
        v == [0, 1]
    });
    let name = match method {
        TopKMethod::Gumbel => "noisy top-2, Gumbel (peeling EM)",
        TopKMethod::PermuteAndFlip => "noisy top-2, peeling permute-and-flip",
    };
    audit(name, Claim::pure(2.0), vec![pair], &[event], TRIALS, seed)
}

#[test]
fn top_k_gumbel() {
    top_k(TopKMethod::Gumbel, 1.0, 112).assert_passes();
}

#[test]
fn top_k_permute_and_flip() {
    top_k(TopKMethod::PermuteAndFlip, 1.0, 113).assert_passes();
}

#[test]
fn top_k_with_half_the_noise_is_caught() {
    top_k(TopKMethod::Gumbel, 2.0, 114).assert_caught();
}

/// AboveThreshold (c = 1, ε₁ = ε₂ = ε/2, Δ = 1, threshold 0) on 8 queries: D answers 0
/// everywhere; D′ raises the first 7 by 1 and lowers the last by 1. The event is "the first
/// (and only) ⊤ is the last query": the raised answers make ⊥ harder (the threshold's
/// share), the lowered one makes ⊤ harder (the queries' share).
fn svt(eps: f64, seed: u64) -> Audit {
    let l = 8;
    let s = SparseVector::above_threshold(0.0, general(), &pure(eps)).unwrap();
    let d = vec![0.0; l];
    let mut dp = vec![1.0; l];
    dp[l - 1] = -1.0;
    let s2 = s.clone();
    let pair = Pair::new(
        "8 queries, 0 vs (+1 x 7, -1)",
        move |r: &mut SecureRng| s.run(r, &d).unwrap().value,
        move |r: &mut SecureRng| s2.run(r, &dp).unwrap().value,
    );
    let event = Event::new("first T at query 8", move |o: &Vec<usize>| o == &[l - 1]);
    audit(
        "sparse vector (AboveThreshold)",
        Claim::pure(1.0),
        vec![pair],
        &[event],
        TRIALS,
        seed,
    )
}

#[test]
fn sparse_vector() {
    svt(1.0, 115).assert_passes();
}

#[test]
fn sparse_vector_with_half_the_noise_is_caught() {
    svt(2.0, 116).assert_caught();
}
