//! The exact best-of-K oracle against the golden `best_of_k_oracle` cases: exact output
//! distributions, the Papernot–Steinke / Liu–Talwar bounds they confirm, and a fixed K that
//! visibly breaks the random-K bounds (why K must stay secret and random).

use dptune::privacy::repeat::{best_of_k_pmf, Repeats};
use serde_json::Value;

fn cases() -> Vec<Value> {
    let all: Value = serde_json::from_str(include_str!("data/selection.json")).unwrap();
    all["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["section"] == "best_of_k_oracle")
        .cloned()
        .collect()
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

fn pgf_of(case: &Value) -> Box<dyn Fn(f64) -> f64> {
    let i = &case["inputs"];
    let par = &i["k_parameters"];
    let f = |k: &str| par[k].as_f64().unwrap();
    match i["k_distribution"].as_str().unwrap() {
        "geometric" => {
            let r = Repeats::geometric(f("gamma")).unwrap();
            Box::new(move |x| r.pgf(x))
        }
        "logarithmic" => {
            let r = Repeats::tnb(0.0, f("gamma")).unwrap();
            Box::new(move |x| r.pgf(x))
        }
        "tnb" => {
            let r = Repeats::tnb(f("eta"), f("gamma")).unwrap();
            Box::new(move |x| r.pgf(x))
        }
        "poisson" => {
            let r = Repeats::poisson(f("mu")).unwrap();
            Box::new(move |x| r.pgf(x))
        }
        "fixed" => {
            let k = par["K"].as_u64().unwrap() as i32;
            Box::new(move |x: f64| x.powi(k))
        }
        other => panic!("unknown distribution {other}"),
    }
}

fn close(got: f64, want: f64, tol: &Value) -> bool {
    let (rel, abs) = (tol["rel"].as_f64().unwrap(), tol["abs"].as_f64().unwrap());
    (got - want).abs() <= abs || (got - want).abs() <= rel * want.abs()
}

fn max_log_ratio(p: &[f64], q: &[f64]) -> f64 {
    p.iter()
        .zip(q)
        .filter(|(a, b)| **a > 0.0 || **b > 0.0)
        .map(|(a, b)| (a.ln() - b.ln()).abs())
        .fold(0.0, f64::max)
}

#[test]
fn oracle_matches_golden_and_confirms_the_bounds() {
    let mut n = 0;
    for c in cases() {
        let id = c["id"].as_str().unwrap();
        let pgf = pgf_of(&c);
        let (p, bottom) = best_of_k_pmf(&floats(&c["inputs"]["base_p"]), &pgf).unwrap();
        let (q, _) = best_of_k_pmf(&floats(&c["inputs"]["base_p_prime"]), &pgf).unwrap();
        let exp = &c["expected"];
        let tol = &c["tolerance"];
        for (g, w) in p.iter().zip(floats(&exp["output_probabilities"])) {
            assert!(close(*g, w, tol), "{id}: {g} vs {w}");
        }
        for (g, w) in q.iter().zip(floats(&exp["output_probabilities_prime"])) {
            assert!(close(*g, w, tol), "{id} (prime): {g} vs {w}");
        }
        assert!(
            close(bottom, exp["bottom_probability"].as_f64().unwrap(), tol),
            "{id}"
        );
        let loss = max_log_ratio(&p, &q);
        assert!(
            close(loss, exp["max_abs_log_ratio"].as_f64().unwrap(), tol),
            "{id}: {loss}"
        );
        if let Some(bound) = exp["theorem_bound"].as_f64() {
            assert!(
                loss <= bound + 1e-12,
                "{id}: loss {loss} exceeds the bound {bound}"
            );
        }
        n += 1;
    }
    assert_eq!(n, 17);
}

#[test]
fn a_fixed_number_of_runs_breaks_the_random_k_bounds() {
    // On the near-worst 3-outcome pair, releasing the best of exactly 10 runs loses far more
    // than Liu–Talwar's 3·ε₀ that geometric K (mean 100!) guarantees: K must be random and secret.
    let c = cases()
        .into_iter()
        .find(|c| c["id"] == "bok_n3_nearworst_fixed_K10")
        .unwrap();
    let p = floats(&c["inputs"]["base_p"]);
    let q = floats(&c["inputs"]["base_p_prime"]);
    let eps0 = max_log_ratio(&p, &q);
    let fixed = |x: f64| x.powi(10);
    let loss_fixed = max_log_ratio(
        &best_of_k_pmf(&p, fixed).unwrap().0,
        &best_of_k_pmf(&q, fixed).unwrap().0,
    );
    let geo = Repeats::geometric(0.01).unwrap();
    let loss_geo = max_log_ratio(
        &best_of_k_pmf(&p, |x| geo.pgf(x)).unwrap().0,
        &best_of_k_pmf(&q, |x| geo.pgf(x)).unwrap().0,
    );
    assert!(loss_geo <= 3.0 * eps0);
    assert!(
        loss_fixed > 3.0 * 3.0 * eps0,
        "fixed K: {loss_fixed}, 3 eps0 = {}",
        3.0 * eps0
    );
}

/// P[best = o] for each outcome o (listed low to high) when the best of N runs is released and
/// N has pmf `n_pmf` on 1, 2, …: P\[o\]·Σₙ P\[N = n\]·Σ_{k<n} xᵏ y^{n−1−k}, with x = F(o) and
/// y = F(o) − P\[o\] the cumulative masses. Every term is non-negative, so masses of order δ₁
/// survive next to masses of order 1 (the difference G(x) − G(y) would lose them).
fn stable_best_of_n(pmf: &[f64], n_pmf: &[f64]) -> Vec<f64> {
    let mut below = 0.0;
    pmf.iter()
        .map(|&p| {
            let (x, y) = (below + p, below);
            below += p;
            let (mut s, mut y_pow, mut total) = (0.0, 1.0, 0.0);
            for &pn in n_pmf {
                s = x * s + y_pow; // S_n = x·S_{n−1} + y^{n−1}
                y_pow *= y;
                total += pn * s;
            }
            p * total
        })
        .collect()
}

/// δ(ε) of the pair of output distributions: the larger hockey-stick divergence.
fn hockey_stick(a: &[f64], b: &[f64], eps: f64) -> f64 {
    let one_way = |a: &[f64], b: &[f64]| {
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - eps.exp() * y).max(0.0))
            .sum::<f64>()
    };
    one_way(a, b).max(one_way(b, a))
}

fn permutations(items: Vec<usize>) -> Vec<Vec<usize>> {
    if items.len() <= 1 {
        return vec![items];
    }
    let mut out = Vec::new();
    for i in 0..items.len() {
        let mut rest = items.clone();
        let first = rest.remove(i);
        for mut p in permutations(rest) {
            p.insert(0, first);
            out.push(p);
        }
    }
    out
}

/// The golden `liu_talwar_approx_check` cases: the exact privacy profile of Liu–Talwar
/// Algorithm 2 (geometric stopping γ, cap T, best run released) on the canonical (ε₁, δ₁)
/// dominating pair, worst case over all 24 score orderings. This is an exact computation, not
/// the unverified Theorem 3.4 (which dptune does not implement): it shows that the δ of
/// repeat-and-select grows with the mean number of runs (≈ δ₁/γ), so the "3·e^ε₁·δ₁" form seen
/// in a third-party implementation is false.
#[test]
fn liu_talwar_algorithm_2_exact_profile_matches_golden() {
    let all: Value = serde_json::from_str(include_str!("data/accounting.json")).unwrap();
    let mut n = 0;
    for c in all["cases"].as_array().unwrap() {
        if c["section"] != "liu_talwar_approx_check" {
            continue;
        }
        let (id, i, e) = (c["id"].as_str().unwrap(), &c["inputs"], &c["expected"]);
        let f = |k: &str| i[k].as_f64().unwrap();
        let (eps1, delta1, gamma, delta2) = (f("eps1"), f("delta1"), f("gamma"), f("delta2"));
        let rel = c["tolerance"]["rel"].as_f64().unwrap();
        let near = |got: f64, key: &str| {
            let want = e[key].as_f64().unwrap();
            assert!(
                (got - want).abs() <= rel * want.abs(),
                "{id} {key}: {got} vs {want}"
            );
        };
        // The cap: T = ⌈max{(1/γ)·ln(1/δ₂), 1 + 1/(eγ)}⌉.
        let t_real = ((1.0 / delta2).ln() / gamma).max(1.0 + 1.0 / (std::f64::consts::E * gamma));
        let t = t_real.ceil() as usize;
        assert_eq!(t as u64, e["T"].as_u64().unwrap(), "{id}");
        // N = min(K, T): γ(1−γ)^{n−1} below T, the rest of the mass at T.
        let mut truncated: Vec<f64> = (1..t)
            .map(|n| gamma * (1.0 - gamma).powi(n as i32 - 1))
            .collect();
        truncated.push((1.0 - gamma).powi(t as i32 - 1));
        // Untruncated: the geometric pmf until its tail is below 1e-30 of the answer's scale.
        let untruncated: Vec<f64> = (1..)
            .map(|n| gamma * (1.0 - gamma).powi(n - 1))
            .take_while(|&p| p > 1e-60)
            .collect();
        let w = eps1.exp() / (1.0 + eps1.exp());
        let p = [delta1, (1.0 - delta1) * w, (1.0 - delta1) * (1.0 - w), 0.0];
        let q = [0.0, (1.0 - delta1) * (1.0 - w), (1.0 - delta1) * w, delta1];
        let worst = |n_pmf: &[f64], eps: f64| {
            permutations(vec![0, 1, 2, 3])
                .into_iter()
                .map(|order| {
                    let pick = |m: &[f64; 4]| order.iter().map(|&o| m[o]).collect::<Vec<_>>();
                    let a = stable_best_of_n(&pick(&p), n_pmf);
                    let b = stable_best_of_n(&pick(&q), n_pmf);
                    (hockey_stick(&a, &b, eps), order)
                })
                .fold((0.0, vec![]), |best, x| if x.0 > best.0 { x } else { best })
        };
        let claimed_eps = e["claimed_eps"].as_f64().unwrap();
        let (d, order) = worst(&truncated, claimed_eps);
        near(d, "exact_delta_at_claimed_eps");
        let want_order: Vec<usize> = e["worst_ordering_low_to_high"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap() as usize)
            .collect();
        assert_eq!(order, want_order, "{id}");
        near(worst(&truncated, 3.0 * eps1).0, "exact_delta_at_3eps1");
        let untrunc = worst(&untruncated, 3.0 * eps1).0;
        near(untrunc, "exact_delta_untruncated_at_3eps1");
        let naive = 3.0 * eps1.exp() * delta1;
        near(naive, "naive_claim_3_exp_eps1_delta1");
        assert_eq!(
            untrunc > naive,
            e["naive_claim_refuted"].as_bool().unwrap(),
            "{id}"
        );
        n += 1;
    }
    assert_eq!(n, 5);
}
