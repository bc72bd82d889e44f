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
