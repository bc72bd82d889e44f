//! Privacy-loss checks: on neighbouring score vectors the exact (closed-form or quadrature)
//! output distributions of every mechanism have max |log P/P′| ≤ the charged ε (or, for the
//! Gaussian, hockey-stick divergence ≤ δ); deliberately wrong calibrations are caught.

use dptune::noise::SecureRng;
use dptune::privacy::{Guarantee, Neighbours};
use dptune::select::gaussian::gaussian_rnm_probabilities;
use dptune::select::laplace::laplace_rnm_probabilities;
use dptune::select::{
    ExponentialMechanism, GeneralizedExponential, Goal, NoisyTopK, PermuteAndFlip, Scores,
    Sensitivity, TopKMethod,
};
use serde_json::Value;

const GOLDEN: &str = include_str!("data/selection.json");
const AR: Neighbours = Neighbours::AddRemove;

/// The pure ε allowance under add/remove-one.
fn pure(eps: f64) -> Guarantee {
    Guarantee::pure(eps, AR).unwrap()
}

fn fs(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

/// max_o |ln P\[o\]/P′\[o\]| over outcomes with positive probability (∞ if supports differ).
fn max_log_ratio(p: &[f64], q: &[f64]) -> f64 {
    p.iter()
        .zip(q)
        .map(|(&a, &b)| match (a > 0.0, b > 0.0) {
            (true, true) => (a.ln() - b.ln()).abs(),
            (false, false) => 0.0,
            _ => f64::INFINITY,
        })
        .fold(0.0, f64::max)
}

fn hockey_stick(p: &[f64], q: &[f64], eps: f64) -> f64 {
    let one = |p: &[f64], q: &[f64]| -> f64 {
        p.iter()
            .zip(q)
            .map(|(a, b)| (a - eps.exp() * b).max(0.0))
            .sum()
    };
    one(p, q).max(one(q, p))
}

/// The output distribution of a golden privacy-loss case's mechanism on `scores`.
fn distribution(c: &Value, scores: &[f64]) -> Vec<f64> {
    let i = &c["inputs"];
    let eps = i["eps"].as_f64().unwrap();
    let mono = i["monotone"] == true;
    let d = i["delta_sensitivity"].as_f64().unwrap_or(1.0);
    let s = Sensitivity::new(d, mono).unwrap();
    let wrong = Sensitivity::monotonic(d).unwrap(); // R = Δ on non-monotone scores
    match i["mechanism"].as_str().unwrap() {
        "em" => {
            ExponentialMechanism::new(&Scores::new(scores, Goal::Maximize, s).unwrap(), &pure(eps))
                .unwrap()
                .probabilities()
        }
        "em_wrong_R" => ExponentialMechanism::new(
            &Scores::new(scores, Goal::Maximize, wrong).unwrap(),
            &pure(eps),
        )
        .unwrap()
        .probabilities(),
        "pf" => PermuteAndFlip::new(&Scores::new(scores, Goal::Maximize, s).unwrap(), &pure(eps))
            .unwrap()
            .probabilities(),
        "pf_wrong_R" => PermuteAndFlip::new(
            &Scores::new(scores, Goal::Maximize, wrong).unwrap(),
            &pure(eps),
        )
        .unwrap()
        .probabilities(),
        "rnm_laplace" => laplace_rnm_probabilities(scores, s.range() / eps).unwrap(),
        "rnm_laplace_wrong_scale" => laplace_rnm_probabilities(scores, d / eps).unwrap(),
        "gem" => GeneralizedExponential::new(
            scores,
            Goal::Maximize,
            &fs(&i["sensitivities"]),
            &pure(eps),
            i["beta"].as_f64().unwrap(),
        )
        .unwrap()
        .probabilities(),
        "topk" => {
            // The allowance is the k rounds' total: ε per round.
            let k = i["k"].as_u64().unwrap() as usize;
            let t = NoisyTopK::new(
                &Scores::new(scores, Goal::Maximize, s).unwrap(),
                &pure(k as f64 * eps),
                k,
                TopKMethod::Gumbel,
            )
            .unwrap();
            c["expected"]["ordered_tuples"]
                .as_array()
                .unwrap()
                .iter()
                .map(|tu| {
                    let v: Vec<usize> = tu
                        .as_str()
                        .unwrap()
                        .split(',')
                        .map(|x| x.parse().unwrap())
                        .collect();
                    t.tuple_probability(&v)
                })
                .collect()
        }
        "rnm_gaussian" => gaussian_rnm_probabilities(scores, i["sigma"].as_f64().unwrap()).unwrap(),
        other => panic!("unknown mechanism {other}"),
    }
}

#[test]
fn golden_privacy_loss_cases() {
    let v: Value = serde_json::from_str(GOLDEN).unwrap();
    let cases: Vec<&Value> = v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["section"] == "privacy_loss" && c["holdout"] != true)
        .collect();
    assert_eq!(cases.len(), 13);
    assert_eq!(v["sections"]["privacy_loss"]["cases"], 13);
    let mut caught = 0;
    for c in cases {
        let id = c["id"].as_str().unwrap();
        let p = distribution(c, &fs(&c["inputs"]["scores"]));
        let q = distribution(c, &fs(&c["inputs"]["scores_prime"]));
        let e = &c["expected"];
        for (got, want) in p
            .iter()
            .zip(fs(&e["probabilities"]))
            .chain(q.iter().zip(fs(&e["probabilities_prime"])))
        {
            let d = (got - want).abs();
            assert!(d <= 1e-9 * want || d <= 1e-13, "{id}: {got:e} vs {want:e}");
        }
        let loss = max_log_ratio(&p, &q);
        assert!(
            (loss - e["max_abs_log_ratio"].as_f64().unwrap()).abs() < 1e-8,
            "{id}: {loss}"
        );
        if let Some(claim) = e["claimed"].as_object() {
            let (eps, delta) = (
                claim["eps"].as_f64().unwrap(),
                claim["delta"].as_f64().unwrap(),
            );
            assert!(hockey_stick(&p, &q, eps) <= delta, "{id}");
            continue;
        }
        let claimed = e["claimed_eps"].as_f64().unwrap();
        if e["must_exceed"] == true {
            assert!(
                loss > claimed + 1e-3,
                "{id}: a wrong calibration was not caught"
            );
            caught += 1;
        } else {
            assert!(loss <= claimed + 1e-12, "{id}: loss {loss} > {claimed}");
        }
    }
    assert_eq!(caught, 3);
}

#[test]
fn laplace_wrong_scale_is_caught() {
    // THEORY.md §2.1: u = (0, 0), u′ = (Δ, −Δ), Lap(Δ/ε): loss 2ε − ln(1 + ε) = 1.3069 at ε = 1.
    let (u, v) = ([0.0, 0.0], [1.0, -1.0]);
    let check = |scale: f64| {
        max_log_ratio(
            &laplace_rnm_probabilities(&u, scale).unwrap(),
            &laplace_rnm_probabilities(&v, scale).unwrap(),
        )
    };
    let wrong = check(1.0);
    assert!((wrong - (2.0 - 2f64.ln())).abs() < 1e-9, "{wrong}");
    assert!(wrong > 1.0, "the wrong variant must fail the check");
    let right = check(2.0);
    assert!((right - (1.0 - 1.5f64.ln())).abs() < 1e-9 && right <= 1.0);
}

/// Random and extreme neighbour pairs: u′ = u + d with d ∈ [−Δ, Δ]^m (or [0, Δ]^m monotone),
/// including vertices and the families u = 0 vs Δe₁ and (Δ, −Δ).
fn neighbour_pairs(
    rng: &mut SecureRng,
    m: usize,
    delta: f64,
    mono: bool,
) -> Vec<(Vec<f64>, Vec<f64>)> {
    let mut pairs = Vec::new();
    let zero = vec![0.0; m];
    let mut e1 = zero.clone();
    e1[0] = delta;
    pairs.push((zero.clone(), e1));
    if !mono {
        let mut pm = vec![-delta; m];
        pm[0] = delta;
        pairs.push((zero.clone(), pm));
    }
    for _ in 0..40 {
        let u: Vec<f64> = (0..m)
            .map(|_| (rng.below_u64(2001) as f64 - 1000.0) / 200.0)
            .collect();
        let d: Vec<f64> = (0..m)
            .map(|_| {
                let r = rng.below_u64(5);
                match r {
                    0 => delta,
                    1 => {
                        if mono {
                            0.0
                        } else {
                            -delta
                        }
                    }
                    _ => delta * rng.unit_f64() * if mono || rng.coin() { 1.0 } else { -1.0 },
                }
            })
            .collect();
        let v: Vec<f64> = u.iter().zip(&d).map(|(a, b)| a + b).collect();
        pairs.push((u, v));
    }
    pairs
}

#[test]
fn every_mechanism_respects_its_epsilon_on_neighbours() {
    let mut rng = SecureRng::seeded(99);
    for &mono in &[false, true] {
        for &(m, eps, delta) in &[(2usize, 1.0, 1.0), (4, 0.5, 2.0), (6, 2.0, 0.5)] {
            let s = Sensitivity::new(delta, mono).unwrap();
            for (u, v) in neighbour_pairs(&mut rng, m, delta, mono) {
                let em = |x: &[f64]| {
                    ExponentialMechanism::new(
                        &Scores::new(x, Goal::Maximize, s).unwrap(),
                        &pure(eps),
                    )
                    .unwrap()
                    .probabilities()
                };
                let pf = |x: &[f64]| {
                    PermuteAndFlip::new(&Scores::new(x, Goal::Maximize, s).unwrap(), &pure(eps))
                        .unwrap()
                        .probabilities()
                };
                let lap = |x: &[f64]| laplace_rnm_probabilities(x, s.range() / eps).unwrap();
                let tol = eps * (1.0 + 1e-9) + 1e-12;
                assert!(max_log_ratio(&em(&u), &em(&v)) <= tol, "EM {u:?} {v:?}");
                assert!(max_log_ratio(&pf(&u), &pf(&v)) <= tol, "PF {u:?} {v:?}");
                assert!(
                    max_log_ratio(&lap(&u), &lap(&v)) <= tol,
                    "Laplace {u:?} {v:?}"
                );
                // Minimising is the same mechanism on negated scores.
                let emn = |x: &[f64]| {
                    ExponentialMechanism::new(
                        &Scores::new(x, Goal::Minimize, s).unwrap(),
                        &pure(eps),
                    )
                    .unwrap()
                    .probabilities()
                };
                assert!(max_log_ratio(&emn(&u), &emn(&v)) <= tol);
                if m >= 3 {
                    let topk = |x: &[f64]| {
                        // Two rounds at ε each: the allowance is their total.
                        let t = NoisyTopK::new(
                            &Scores::new(x, Goal::Maximize, s).unwrap(),
                            &pure(2.0 * eps),
                            2,
                            TopKMethod::PermuteAndFlip,
                        )
                        .unwrap();
                        let mut out = Vec::new();
                        for a in 0..m {
                            for b in 0..m {
                                if a != b {
                                    out.push(t.tuple_probability(&[a, b]));
                                }
                            }
                        }
                        out
                    };
                    assert!(max_log_ratio(&topk(&u), &topk(&v)) <= 2.0 * tol, "top-k");
                }
            }
        }
    }
}

#[test]
fn gem_respects_epsilon_with_heterogeneous_sensitivities() {
    let mut rng = SecureRng::seeded(5);
    let sens = [1.0, 2.0, 5.0, 20.0];
    for _ in 0..200 {
        let q: Vec<f64> = (0..4).map(|_| 800.0 + rng.below_u64(150) as f64).collect();
        let q2: Vec<f64> = q
            .iter()
            .zip(&sens)
            .map(|(x, d)| x + d * (2.0 * rng.unit_f64() - 1.0))
            .collect();
        let p = |x: &[f64]| {
            GeneralizedExponential::new(x, Goal::Maximize, &sens, &pure(1.0), 0.1)
                .unwrap()
                .probabilities()
        };
        assert!(max_log_ratio(&p(&q), &p(&q2)) <= 1.0 + 1e-9);
    }
}

#[test]
fn gaussian_l2_calibration_covers_the_worst_pair() {
    // σ from Δ₂ = Δ√m: the all-coordinates shift (Δ, −Δ, …) has hockey-stick ≤ δ.
    let m = 4;
    let sigma = dptune::privacy::gaussian::gaussian_sigma(1.0, 1e-5, 2.0).unwrap();
    let u = vec![0.0; m];
    let v = vec![1.0, -1.0, -1.0, -1.0];
    let p = gaussian_rnm_probabilities(&u, sigma).unwrap();
    let q = gaussian_rnm_probabilities(&v, sigma).unwrap();
    assert!(hockey_stick(&p, &q, 1.0) <= 1e-5);
}
