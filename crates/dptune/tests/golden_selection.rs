//! Golden selection vectors (`tests/data/selection.json`, a byte-identical copy of
//! `golden/selection.json`): exact probabilities to 1e-9 and sampler frequencies by a
//! chi-square test at fixed seeds.
//!
//! Chi-square tests: N draws, categories with expected count < 5 are pooled, and the statistic
//! is compared with the Wilson–Hilferty approximation of the 1 − 10⁻⁶ quantile of χ²(df), so each
//! test has a false-failure probability of about 10⁻⁶ (deterministic at the fixed seed).

use dptune::noise::SecureRng;
use dptune::privacy::gaussian::gaussian_sigma;
use dptune::privacy::{Bound, Guarantee, Neighbours};
use dptune::select::gaussian::gaussian_rnm_probabilities;
use dptune::select::laplace::laplace_rnm_probabilities;
use dptune::select::{
    ExponentialMechanism, GeneralizedExponential, Goal, GumbelMax, LaplaceNoisyMax, NoisyTopK,
    PermuteAndFlip, Scores, Selector, Sensitivity, TopKMethod,
};
use serde_json::Value;

const GOLDEN: &str = include_str!("data/selection.json");

fn cases(section: &str) -> Vec<Value> {
    let v: Value = serde_json::from_str(GOLDEN).unwrap();
    let all: Vec<Value> = v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["section"] == section && c["holdout"] != true)
        .cloned()
        .collect();
    let declared = v["sections"][section]["cases"].as_u64().unwrap() as usize;
    assert_eq!(all.len(), declared, "section {section}: case count");
    all
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap()
}

fn fs(v: &Value) -> Vec<f64> {
    v.as_array().unwrap().iter().map(f).collect()
}

fn close(got: f64, want: f64) -> bool {
    let d = (got - want).abs();
    d <= 1e-9 * want.abs() || d <= 1e-12
}

fn assert_all_close(id: &str, got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{id}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(close(*g, *w), "{id}[{i}]: got {g:e}, want {w:e}");
    }
}

/// The pure ε allowance under add/remove-one.
fn pure(eps: f64) -> Guarantee {
    Guarantee::pure(eps, Neighbours::AddRemove).unwrap()
}

fn sensitivity(c: &Value) -> Sensitivity {
    Sensitivity::new(
        f(&c["inputs"]["delta_sensitivity"]),
        c["inputs"]["monotone"] == true,
    )
    .unwrap()
}

/// The 1 − 10⁻⁶ quantile of χ²(df), Wilson–Hilferty.
fn chi2_crit(df: usize) -> f64 {
    let k = df as f64;
    let z = 4.753_424_3; // standard normal 1 − 10⁻⁶ quantile
    k * (1.0 - 2.0 / (9.0 * k) + z * (2.0 / (9.0 * k)).sqrt()).powi(3)
}

/// Chi-square goodness of fit of `counts` against `probs`; panics when rejected at 10⁻⁶.
pub fn chi_square(id: &str, counts: &[u64], probs: &[f64]) {
    let n: u64 = counts.iter().sum();
    let (mut stat, mut df) = (0.0, 0usize);
    let (mut pool_o, mut pool_e) = (0.0, 0.0);
    for (&o, &p) in counts.iter().zip(probs) {
        let e = p * n as f64;
        if e < 5.0 {
            pool_o += o as f64;
            pool_e += e;
        } else {
            stat += (o as f64 - e).powi(2) / e;
            df += 1;
        }
    }
    if pool_e > 0.0 {
        if pool_e >= 5.0 {
            stat += (pool_o - pool_e).powi(2) / pool_e;
            df += 1;
        } else {
            assert!(
                pool_o <= 5.0 * pool_e.max(1.0) + 10.0,
                "{id}: rare outcomes too frequent"
            );
        }
    }
    let df = df.saturating_sub(1).max(1);
    assert!(
        stat < chi2_crit(df),
        "{id}: chi2 = {stat:.2} on {df} df, counts {counts:?}, probs {probs:?}"
    );
}

fn counts_of(m: usize, n: usize, mut draw: impl FnMut() -> usize) -> Vec<u64> {
    let mut c = vec![0u64; m];
    for _ in 0..n {
        c[draw()] += 1;
    }
    c
}

#[test]
fn em_probabilities_and_samplers() {
    for (k, c) in cases("em_probabilities").iter().enumerate() {
        let id = c["id"].as_str().unwrap();
        let scores = fs(&c["inputs"]["scores"]);
        let eps = f(&c["inputs"]["eps"]);
        let s = sensitivity(c);
        assert_eq!(s.range(), f(&c["expected"]["range_sensitivity"]), "{id}");
        let em = ExponentialMechanism::new(
            &Scores::new(&scores, Goal::Maximize, s).unwrap(),
            &pure(eps),
        )
        .unwrap();
        let want = fs(&c["expected"]["probabilities"]);
        assert_all_close(id, &em.probabilities(), &want);
        assert_eq!(
            em.guarantee().pure_eps(),
            Some(f(&c["expected"]["pure_dp_eps"]))
        );
        let rho = em.guarantee().bounds().iter().find_map(|b| match b {
            Bound::Zcdp { rho } => Some(*rho),
            _ => None,
        });
        assert!(close(rho.unwrap(), f(&c["expected"]["zcdp_rho"])), "{id}");
        // Exact sampler, and the Gumbel mechanism (= EM) with a different seed.
        let mut rng = SecureRng::seeded(1000 + k as u64);
        let counts = counts_of(scores.len(), 20_000, || em.select(&mut rng).value);
        chi_square(id, &counts, &want);
        let g = GumbelMax::new(
            &Scores::new(&scores, Goal::Maximize, s).unwrap(),
            &pure(eps),
        )
        .unwrap();
        assert_eq!(g.probabilities(), em.probabilities());
        let mut rng = SecureRng::seeded(2000 + k as u64);
        let counts = counts_of(scores.len(), 20_000, || g.select(&mut rng).value);
        chi_square(id, &counts, &want);
    }
}

#[test]
fn pf_probabilities_and_sampler() {
    for (k, c) in cases("pf_probabilities").iter().enumerate() {
        let id = c["id"].as_str().unwrap();
        let scores = fs(&c["inputs"]["scores"]);
        let pf = PermuteAndFlip::new(
            &Scores::new(&scores, Goal::Maximize, sensitivity(c)).unwrap(),
            &pure(f(&c["inputs"]["eps"])),
        )
        .unwrap();
        let want = fs(&c["expected"]["probabilities"]);
        assert_all_close(id, &pf.probabilities(), &want);
        assert_eq!(
            pf.guarantee().pure_eps(),
            Some(f(&c["expected"]["pure_dp_eps"]))
        );
        let mut rng = SecureRng::seeded(3000 + k as u64);
        let counts = counts_of(scores.len(), 20_000, || pf.select(&mut rng).value);
        chi_square(id, &counts, &want);
    }
}

#[test]
fn laplace_probabilities_and_sampler() {
    for (k, c) in cases("rnm_laplace_probabilities").iter().enumerate() {
        let id = c["id"].as_str().unwrap();
        let scores = fs(&c["inputs"]["scores"]);
        let eps = f(&c["inputs"]["eps"]);
        let s = sensitivity(c);
        let scale = f(&c["expected"]["laplace_scale"]);
        assert_eq!(s.range() / eps, scale, "{id}");
        let want = fs(&c["expected"]["probabilities"]);
        assert_all_close(
            id,
            &laplace_rnm_probabilities(&scores, scale).unwrap(),
            &want,
        );
        let lap = LaplaceNoisyMax::new(
            &Scores::new(&scores, Goal::Maximize, s).unwrap(),
            &pure(eps),
        )
        .unwrap();
        assert!((lap.scale() / scale - 1.0).abs() < 2e-12, "{id}");
        let mut rng = SecureRng::seeded(4000 + k as u64);
        let counts = counts_of(scores.len(), 20_000, || lap.select(&mut rng).value);
        chi_square(id, &counts, &want);
    }
}

#[test]
fn gaussian_sigma_and_probabilities() {
    for c in cases("rnm_gaussian_sigma") {
        let id = c["id"].as_str().unwrap();
        let i = &c["inputs"];
        let m = f(&i["m"]);
        let d = f(&i["delta_sensitivity"]);
        let l2 = if i["monotone_centred"] == true {
            d / 2.0 * m.sqrt()
        } else {
            d * m.sqrt()
        };
        assert!(close(l2, f(&c["expected"]["l2_sensitivity"])), "{id}");
        let sigma = gaussian_sigma(f(&i["eps"]), f(&i["delta"]), l2).unwrap();
        let want = f(&c["expected"]["sigma_analytic"]);
        assert!((sigma / want - 1.0).abs() < 1e-9, "{id}: {sigma} vs {want}");
        let rho = l2 * l2 / (2.0 * sigma * sigma);
        assert!(
            (rho / f(&c["expected"]["rho_zcdp"]) - 1.0).abs() < 1e-8,
            "{id}"
        );
    }
    for c in cases("rnm_gaussian_probabilities") {
        let id = c["id"].as_str().unwrap();
        let got = gaussian_rnm_probabilities(&fs(&c["inputs"]["scores"]), f(&c["inputs"]["sigma"]))
            .unwrap();
        let want = fs(&c["expected"]["probabilities"]);
        for (g, w) in got.iter().zip(&want) {
            let d = (g - w).abs();
            assert!(d <= 1e-9 * w.abs() || d <= 1e-13, "{id}: {g:e} vs {w:e}");
        }
    }
}

#[test]
fn gem_probabilities_and_sampler() {
    for (k, c) in cases("gem_probabilities").iter().enumerate() {
        let id = c["id"].as_str().unwrap();
        let i = &c["inputs"];
        let scores = fs(&i["scores"]);
        let g = GeneralizedExponential::new(
            &scores,
            Goal::Maximize,
            &fs(&i["sensitivities"]),
            &pure(f(&i["eps"])),
            f(&i["beta"]),
        )
        .unwrap();
        assert!(close(g.t(), f(&c["expected"]["t"])), "{id}");
        assert_all_close(id, g.normalised_scores(), &fs(&c["expected"]["s"]));
        let want = fs(&c["expected"]["probabilities"]);
        assert_all_close(id, &g.probabilities(), &want);
        assert_eq!(
            g.guarantee().pure_eps(),
            Some(f(&c["expected"]["pure_dp_eps"]))
        );
        let mut rng = SecureRng::seeded(5000 + k as u64);
        let counts = counts_of(scores.len(), 20_000, || g.select(&mut rng).value);
        chi_square(id, &counts, &want);
    }
}

#[test]
fn topk_gumbel_tuples_and_sampler() {
    for (k, c) in cases("topk_gumbel").iter().enumerate() {
        let id = c["id"].as_str().unwrap();
        let i = &c["inputs"];
        let scores = fs(&i["scores"]);
        let kk = i["k"].as_u64().unwrap() as usize;
        // The allowance is the k rounds' total (k·ε is exact for these cases, so each round
        // runs at exactly the golden ε).
        let total = pure(kk as f64 * f(&i["eps_per_round"]));
        let t = NoisyTopK::new(
            &Scores::new(&scores, Goal::Maximize, sensitivity(c)).unwrap(),
            &total,
            kk,
            TopKMethod::Gumbel,
        )
        .unwrap();
        let tuples: Vec<Vec<usize>> = c["expected"]["ordered_tuples"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                s.as_str()
                    .unwrap()
                    .split(',')
                    .map(|x| x.parse().unwrap())
                    .collect()
            })
            .collect();
        let want = fs(&c["expected"]["probabilities"]);
        let got: Vec<f64> = tuples.iter().map(|tu| t.tuple_probability(tu)).collect();
        assert_all_close(id, &got, &want);
        assert_eq!(
            t.guarantee().pure_eps(),
            Some(f(&c["expected"]["pure_dp_eps_total"]))
        );
        assert!(close(
            t.guarantee().zcdp_rho().unwrap(),
            f(&c["expected"]["zcdp_rho_total"])
        ));
        let mut rng = SecureRng::seeded(6000 + k as u64);
        let counts = counts_of(tuples.len(), 20_000, || {
            let v = t.select(&mut rng).value;
            tuples.iter().position(|tu| *tu == v).unwrap()
        });
        chi_square(id, &counts, &want);
    }
}

#[test]
fn pf_and_em_are_distinguishable() {
    // PEERS.md §2.1 item 4: the pure-DP path is PF, the zCDP path is EM; at 40 000 draws the
    // chi-square test tells them apart on scores [0, 1] at scale 1 (ε = 1, R = 1).
    let s = Sensitivity::monotonic(1.0).unwrap();
    let em = ExponentialMechanism::new(
        &Scores::new(&[0.0, 1.0], Goal::Maximize, s).unwrap(),
        &pure(1.0),
    )
    .unwrap();
    let pf = PermuteAndFlip::new(
        &Scores::new(&[0.0, 1.0], Goal::Maximize, s).unwrap(),
        &pure(1.0),
    )
    .unwrap();
    assert!((em.probabilities()[1] - 0.7311).abs() < 1e-4);
    assert!((pf.probabilities()[1] - 0.8161).abs() < 1e-4);
    let mut rng = SecureRng::seeded(77);
    let pf_counts = counts_of(2, 40_000, || pf.select(&mut rng).value);
    chi_square("pf vs pf", &pf_counts, &pf.probabilities());
    let rejected = std::panic::catch_unwind(|| {
        chi_square("pf vs em", &pf_counts, &em.probabilities());
    });
    assert!(rejected.is_err(), "PF samples must not pass as EM");
    let em_counts = counts_of(2, 40_000, || em.select(&mut rng).value);
    chi_square("em vs em", &em_counts, &em.probabilities());
    assert!(
        std::panic::catch_unwind(|| chi_square("em vs pf", &em_counts, &pf.probabilities()))
            .is_err()
    );
}

#[test]
fn minimize_selects_the_smallest() {
    // PEERS.md §2.1 item 3 (OpenDP ≤ 0.15.1 returned the argmin for "max").
    let s = Sensitivity::general(1.0).unwrap();
    let losses = [5.0, 0.0, 9.0];
    let mut rng = SecureRng::seeded(8);
    let em = ExponentialMechanism::new(
        &Scores::new(&losses, Goal::Minimize, s).unwrap(),
        &pure(50.0),
    )
    .unwrap();
    assert!(em.probabilities()[1] > 0.999);
    let pf = PermuteAndFlip::new(
        &Scores::new(&losses, Goal::Minimize, s).unwrap(),
        &pure(50.0),
    )
    .unwrap();
    let lap = LaplaceNoisyMax::new(
        &Scores::new(&losses, Goal::Minimize, s).unwrap(),
        &pure(50.0),
    )
    .unwrap();
    for _ in 0..200 {
        assert_eq!(em.select(&mut rng).value, 1);
        assert_eq!(pf.select(&mut rng).value, 1);
        assert_eq!(lap.select(&mut rng).value, 1);
    }
    let em = ExponentialMechanism::new(
        &Scores::new(&losses, Goal::Maximize, s).unwrap(),
        &pure(50.0),
    )
    .unwrap();
    assert_eq!(em.select(&mut rng).value, 2);
}

#[test]
fn bad_inputs_are_typed_errors() {
    use dptune::select::{GaussianArgmax, L2Sensitivity, Mechanism, Spec};
    use dptune::Error;
    let s = Sensitivity::general(1.0).unwrap();
    let named = |e: Error, name: &str| match e {
        Error::InvalidParameter { name: n, .. } => assert_eq!(n, name),
        other => panic!("expected InvalidParameter({name}), got {other}"),
    };
    for bad in [
        vec![],
        vec![1.0],
        vec![0.0, f64::NAN],
        vec![0.0, f64::INFINITY],
    ] {
        // Every mechanism is built on validated `Scores`; the front ends' path from raw scores.
        let spec = Spec::new(pure(1.0), 1.0);
        named(
            Mechanism::Exponential.build(&bad, &spec).unwrap_err(),
            "scores",
        );
        named(
            Mechanism::PermuteAndFlip.build(&bad, &spec).unwrap_err(),
            "scores",
        );
    }
    named(Sensitivity::general(0.0).unwrap_err(), "sensitivity");
    named(Sensitivity::general(-1.0).unwrap_err(), "sensitivity");
    named(
        Guarantee::pure(0.0, Neighbours::AddRemove)
            .and_then(|a| {
                ExponentialMechanism::new(&Scores::new(&[1.0, 2.0], Goal::Maximize, s).unwrap(), &a)
            })
            .unwrap_err(),
        "epsilon",
    );
    named(
        NoisyTopK::new(
            &Scores::new(&[1.0, 2.0], Goal::Maximize, s).unwrap(),
            &pure(1.0),
            3,
            TopKMethod::Gumbel,
        )
        .unwrap_err(),
        "k",
    );
    named(
        Mechanism::Gaussian
            .allowance(1.0, None, Neighbours::AddRemove)
            .and_then(|a| {
                GaussianArgmax::new(
                    &Scores::new(&[1.0, 2.0], Goal::Maximize, s).unwrap(),
                    L2Sensitivity::General,
                    &a,
                )
            })
            .unwrap_err(),
        "delta",
    );
    named(
        GeneralizedExponential::new(&[1.0, 2.0], Goal::Maximize, &[1.0], &pure(1.0), 0.1)
            .unwrap_err(),
        "sensitivities",
    );
    named(
        Mechanism::SparseVector.as_selection().unwrap_err(),
        "mechanism",
    );
    // −∞ marks a candidate that can never win; +∞ when minimising.
    let em = ExponentialMechanism::new(
        &Scores::new(&[1.0, f64::INFINITY, 0.0], Goal::Minimize, s).unwrap(),
        &pure(1.0),
    )
    .unwrap();
    assert_eq!(em.probabilities()[1], 0.0);
}
