//! Golden cases for repeat-and-select accounting (Papernot–Steinke, Liu–Talwar), read from a
//! byte-identical copy of the shared `golden/accounting.json`.

use dptune::privacy::convert::rdp_epsilon;
use dptune::privacy::repeat::{repeat_pure, repeat_rdp_default, Repeats};
use dptune::privacy::RdpCurve;
use serde_json::Value;

fn cases(section: &str) -> Vec<Value> {
    let text = include_str!("data/accounting.json");
    let all: Value = serde_json::from_str(text).expect("golden file parses");
    all["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .filter(|c| c["section"] == section)
        .cloned()
        .collect()
}

fn num(v: &Value) -> f64 {
    match v {
        Value::String(s) if s == "inf" => f64::INFINITY,
        _ => v.as_f64().expect("a number"),
    }
}

fn assert_rel(got: f64, want: f64, rel: f64, what: &str) {
    let ok = if want.is_infinite() {
        got == want
    } else {
        (got - want).abs() <= rel * want.abs().max(1e-300)
    };
    assert!(ok, "{what}: got {got}, want {want} (rel tol {rel})");
}

fn repeats_of(inputs: &Value) -> Repeats {
    let mean = num(&inputs["mean"]);
    match inputs["distribution"].as_str().unwrap() {
        "poisson" => Repeats::poisson(mean).unwrap(),
        _ => Repeats::tnb_with_mean(num(&inputs["eta"]), mean).unwrap(),
    }
}

/// Checks ε, the optimal order and the output curve at the echoed orders; returns 1 per case.
fn check_gaussian_base(case: &Value) -> usize {
    let id = case["id"].as_str().unwrap();
    let inputs = &case["inputs"];
    let rel = num(&case["tolerance"]["rel"]);
    let base = RdpCurve::linear(num(&inputs["base"]["rho"])).unwrap();
    let out = repeat_rdp_default(&base, &repeats_of(inputs)).unwrap();
    let e = rdp_epsilon(&out, num(&inputs["delta"])).unwrap();
    assert_rel(e.eps, num(&case["expected"]["eps"]), rel, id);
    assert_eq!(
        e.order,
        num(&case["expected"]["optimal_order"]),
        "{id} order"
    );
    for (order, want) in case["expected"]["rdp_out_at_orders"].as_object().unwrap() {
        let a: f64 = order.parse().unwrap();
        assert_rel(out.eval(a), num(want), rel, &format!("{id} at order {a}"));
    }
    1
}

#[test]
fn papernot_steinke_tnb_gaussian_base() {
    let n: usize = cases("ps_tnb_gaussian")
        .iter()
        .map(check_gaussian_base)
        .sum();
    assert_eq!(n, 64);
}

#[test]
fn papernot_steinke_poisson_gaussian_base() {
    let n: usize = cases("ps_poisson_gaussian")
        .iter()
        .map(check_gaussian_base)
        .sum();
    assert_eq!(n, 20);
}

#[test]
fn tnb_gamma_from_mean_matches_dp_accounting() {
    let mut n = 0;
    for case in cases("ps_tnb_gaussian") {
        let r = repeats_of(&case["inputs"]);
        let Repeats::TruncatedNegativeBinomial { gamma, .. } = r else {
            panic!("tnb expected")
        };
        assert_rel(
            gamma,
            num(&case["expected"]["gamma_dp_accounting"]),
            1e-12,
            "gamma",
        );
        assert_rel(r.mean(), num(&case["inputs"]["mean"]), 1e-8, "mean");
        n += 1;
    }
    assert_eq!(n, 64);
}

#[test]
fn liu_talwar_and_corollary_three_pure() {
    let mut n = 0;
    for case in cases("liu_talwar_pure") {
        let eps0 = num(&case["inputs"]["eps0"]);
        let exp = &case["expected"];
        let rel = num(&case["tolerance"]["rel"]);
        let geo = Repeats::geometric(0.1).unwrap();
        assert_rel(
            repeat_pure(eps0, &geo).unwrap(),
            num(&exp["random_stopping_geometric"]),
            rel,
            "LT",
        );
        for (eta, key) in [
            (0.0, "ps_corollary3_logarithmic_eta0"),
            (0.5, "ps_corollary3_eta0.5"),
            (2.0, "ps_corollary3_eta2"),
        ] {
            let r = Repeats::tnb(eta, 0.1).unwrap();
            assert_rel(repeat_pure(eps0, &r).unwrap(), num(&exp[key]), rel, key);
        }
        let lt = dptune::privacy::repeat::liu_talwar_threshold_pure(eps0, 0.1, None).unwrap();
        assert_rel(lt, num(&exp["known_threshold"]), rel, "threshold");
        n += 1;
    }
    assert_eq!(n, 3);
}

/// ε of the whole tuning through the same path the tuners and the CLI use.
fn tuned_epsilon(per_run: &dptune::privacy::Guarantee, inputs: &Value) -> f64 {
    use dptune::tune::{tuning_cost, Method};
    tuning_cost(&Method::RepeatAndSelect(repeats_of(inputs)), per_run)
        .unwrap()
        .epsilon(num(&inputs["delta"]))
        .unwrap()
}

#[test]
fn papernot_steinke_pure_base() {
    use dptune::privacy::{Guarantee, Neighbours};
    let mut n = 0;
    for case in cases("ps_pure_base") {
        let id = case["id"].as_str().unwrap();
        let inputs = &case["inputs"];
        let exp = &case["expected"];
        let rel = num(&case["tolerance"]["rel"]);
        let eps0 = num(&inputs["base"]["eps0"]);
        // The tight RDP curve of ε₀-DP through Theorem 2/6 on the default grid.
        let curve = RdpCurve::pure_dp(eps0).unwrap();
        let out = repeat_rdp_default(&curve, &repeats_of(inputs)).unwrap();
        let e = rdp_epsilon(&out, num(&inputs["delta"])).unwrap().eps;
        assert_rel(e, num(&exp["eps_rdp_tight_base"]), rel, id);
        // The tuner's cost keeps the best valid bound (Corollary 3 where it applies).
        let g = Guarantee::pure(eps0, Neighbours::AddRemove).unwrap();
        assert_rel(
            tuned_epsilon(&g, inputs),
            num(&exp["eps_best_valid"]),
            rel,
            id,
        );
        n += 1;
    }
    assert_eq!(n, 20);
}

#[test]
fn papernot_steinke_dpsgd_base() {
    use dptune::privacy::dpsgd::dpsgd_guarantee;
    let mut n = 0;
    for case in cases("ps_dpsgd") {
        let id = case["id"].as_str().unwrap();
        let inputs = &case["inputs"];
        let b = &inputs["base"];
        let steps = b["steps"].as_u64().unwrap();
        let g =
            dpsgd_guarantee(num(&b["sampling_rate"]), num(&b["noise_multiplier"]), steps).unwrap();
        let e = tuned_epsilon(&g, inputs);
        // dptune's base curve is exact at fractional orders (dp_accounting's is an upper
        // bound), so ε lies between the exact-base value and dp_accounting's.
        let hi = num(&case["expected"]["eps"]);
        let lo = num(&case["expected"]["eps_with_exact_base_rdp"]);
        assert!(e <= hi * (1.0 + 1e-7), "{id}: {e} > dp_accounting {hi}");
        assert!(e >= lo * (1.0 - 1e-7), "{id}: {e} < exact-base {lo}");
        n += 1;
    }
    assert_eq!(n, 4);
}
