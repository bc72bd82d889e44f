//! Golden PLD cases (`tests/data/pld.json`, a byte-identical copy of `golden/pld.json`,
//! dp_accounting 0.6.0 and prv_accountant 0.2.0): every composition's ε must lie at or above the
//! optimistic lower bounds (anything below is invalid) and at most 1e-3 above dp_accounting's
//! pessimistic PLD on its default grid; Gaussian compositions within 1e-3 of the exact ε and
//! never below it. Deliberately wrong constructions are rejected in the unit tests of
//! `privacy::pld` (they need the library's internals).

use dptune::privacy::pld::{ComposeSpec, PldConfig};
use serde_json::Value;

const GOLDEN: &str = include_str!("data/pld.json");

fn cases() -> Vec<Value> {
    let v: Value = serde_json::from_str(GOLDEN).unwrap();
    v["cases"].as_array().unwrap().clone()
}

#[test]
fn every_golden_case_is_valid_and_tight() {
    let all = cases();
    assert_eq!(all.len(), 7);
    for c in &all {
        let id = c["id"].as_str().unwrap();
        let spec: ComposeSpec = serde_json::from_value(c["inputs"].clone()).unwrap();
        let x = &c["expected"];
        let start = std::time::Instant::now();
        let eps = spec
            .pld(PldConfig::default())
            .unwrap()
            .epsilon(spec.delta)
            .unwrap();
        let took = start.elapsed();
        let lower = x["eps_lower_bound"].as_f64().unwrap();
        let lower_prv = x["eps_lower_bound_prv"].as_f64().unwrap_or(0.0);
        let upper = x["eps_dp_accounting_pld"].as_f64().unwrap();
        eprintln!("{id}: {eps:.9} in [{lower:.9}, {upper:.9}] ({took:?})");
        assert!(
            eps >= lower.max(lower_prv),
            "{id}: {eps} below the lower bound"
        );
        assert!(
            eps <= upper * (1.0 + 1e-3),
            "{id}: {eps} above dp_accounting"
        );
        if let Some(exact) = x["eps_exact"].as_f64() {
            assert!(
                eps >= exact && eps <= exact * (1.0 + 1e-3),
                "{id}: {eps} vs {exact}"
            );
        }
    }
}

#[test]
fn the_guarantee_of_a_case_takes_the_best_route() {
    for c in &cases() {
        let spec: ComposeSpec = serde_json::from_value(c["inputs"].clone()).unwrap();
        let g = spec.guarantee(PldConfig::default()).unwrap();
        let (eps, route) = g.epsilon_route(spec.delta).unwrap();
        let pld = g.pld().unwrap().epsilon(spec.delta).unwrap();
        assert!(eps <= pld, "{}", c["id"]);
        // On every golden case the PLD is the tightest route (Laplace: 19.106 < 20 pure).
        assert_eq!(route, dptune::privacy::Route::Pld, "{}", c["id"]);
        if let Some(rdp) = c["expected"]["eps_rdp_dp_accounting"].as_f64() {
            assert!(eps < rdp, "{}: {eps} vs RDP {rdp}", c["id"]);
        }
    }
}
