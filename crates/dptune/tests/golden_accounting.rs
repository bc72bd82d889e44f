//! Golden accounting vectors (`tests/data/accounting.json`, a byte-identical copy of
//! `golden/accounting.json`): every case of the sections gaussian_rdp_curve, gaussian_eps,
//! zcdp_to_dp, rdp_to_dp, analytic_gaussian_sigma, composition and dpsgd_rdp.
//!
//! Grid results are compared with the grid (dp_accounting) fields at the case's tolerance;
//! continuous-order results must lie in [continuous reference − 1e-9, grid result + 1e-9].

use dptune::privacy::convert::{
    rdp_delta, rdp_delta_on, rdp_epsilon, rdp_epsilon_on, zcdp_delta, zcdp_epsilon,
};
use dptune::privacy::dpsgd::{dpsgd_curve, dpsgd_epsilon_grid};
use dptune::privacy::gaussian::{
    classic_gaussian_sigma, gaussian_curve, gaussian_epsilon, gaussian_sigma,
};
use dptune::privacy::{default_orders, Guarantee, Neighbours, RdpCurve};
use serde_json::Value;

const SLACK: f64 = 1e-9;

fn golden() -> Value {
    let text = include_str!("data/accounting.json");
    serde_json::from_str(text).expect("golden file parses")
}

fn num(v: &Value) -> f64 {
    match v {
        Value::String(s) if s == "inf" => f64::INFINITY,
        other => other
            .as_f64()
            .unwrap_or_else(|| panic!("not a number: {other}")),
    }
}

fn nums(v: &Value) -> Vec<f64> {
    v.as_array().expect("array").iter().map(num).collect()
}

fn cases(g: &Value, section: &str) -> Vec<Value> {
    g["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["section"] == section)
        .cloned()
        .collect()
}

fn tol(c: &Value) -> f64 {
    num(&c["tolerance"]["rel"])
}

fn close(id: &str, what: &str, got: f64, want: f64, rel: f64) {
    let ok = if want.is_infinite() {
        got == want
    } else {
        (got - want).abs() <= rel * want.abs()
    };
    assert!(ok, "{id} {what}: got {got:e}, want {want:e} (rel {rel:e})");
}

fn between(id: &str, what: &str, got: f64, lo: f64, hi: f64) {
    assert!(
        lo <= got && got <= hi,
        "{id} {what}: {got:e} not in [{lo:e}, {hi:e}]"
    );
}

fn orders_input(v: &Value) -> Vec<f64> {
    match v {
        Value::String(s) if s == "DEFAULT_RDP_ORDERS" => default_orders(),
        other => nums(other),
    }
}

fn gaussian_rdp_curve(g: &Value) -> usize {
    let cs = cases(g, "gaussian_rdp_curve");
    for c in &cs {
        let id = c["id"].as_str().unwrap();
        let z = num(&c["inputs"]["noise_multiplier"]);
        let curve = gaussian_curve(z, 1.0).unwrap();
        let want = nums(&c["expected"]["rdp"]);
        for (a, w) in nums(&c["inputs"]["alphas"]).into_iter().zip(want) {
            close(id, &format!("rdp({a})"), curve.eval(a), w, tol(c));
        }
    }
    cs.len()
}

fn gaussian_eps(g: &Value) -> usize {
    let cs = cases(g, "gaussian_eps");
    for c in &cs {
        let id = c["id"].as_str().unwrap();
        let (z, delta) = (
            num(&c["inputs"]["noise_multiplier"]),
            num(&c["inputs"]["delta"]),
        );
        let e = &c["expected"];
        let curve = gaussian_curve(z, 1.0).unwrap();
        let grid = rdp_epsilon_on(&curve, delta, &default_orders()).unwrap();
        close(id, "eps_rdp", grid.eps, num(&e["eps_rdp"]), tol(c));
        assert_eq!(grid.order, num(&e["eps_rdp_optimal_order"]), "{id}");
        let cont = num(&e["eps_rdp_continuous_alpha"]);
        let hi = num(&e["eps_rdp"]) + SLACK;
        between(
            id,
            "rdp_epsilon",
            rdp_epsilon(&curve, delta).unwrap().eps,
            cont - SLACK,
            hi,
        );
        let rho = 1.0 / (2.0 * z * z);
        between(
            id,
            "zcdp_epsilon",
            zcdp_epsilon(rho, delta).unwrap(),
            cont - SLACK,
            hi,
        );
        let exact = gaussian_epsilon(z, 1.0, delta).unwrap();
        close(id, "eps_exact", exact, num(&e["eps_exact"]), tol(c));
    }
    cs.len()
}

fn zcdp_to_dp(g: &Value) -> usize {
    let cs = cases(g, "zcdp_to_dp");
    for c in &cs {
        let id = c["id"].as_str().unwrap();
        let rho = num(&c["inputs"]["rho"]);
        let e = &c["expected"];
        let curve = RdpCurve::linear(rho).unwrap();
        if let Some(delta) = c["inputs"].get("delta") {
            let delta = num(delta);
            let grid = rdp_epsilon_on(&curve, delta, &default_orders()).unwrap();
            let want_grid = num(&e["eps_dp_accounting_grid"]);
            close(id, "grid eps", grid.eps, want_grid, tol(c));
            assert_eq!(grid.order, num(&e["grid_optimal_order"]), "{id}");
            let cont = num(&e["eps_cks_continuous"]);
            let got = zcdp_epsilon(rho, delta).unwrap();
            between(id, "zcdp_epsilon", got, cont - SLACK, want_grid + SLACK);
            close(id, "zcdp_epsilon vs continuous", got, cont, tol(c));
            let got = rdp_epsilon(&curve, delta).unwrap().eps;
            between(id, "rdp_epsilon", got, cont - SLACK, want_grid + SLACK);
        } else {
            let eps = num(&c["inputs"]["eps"]);
            let grid = rdp_delta_on(&curve, eps, &default_orders()).unwrap();
            let want_grid = num(&e["delta_dp_accounting_grid"]);
            close(id, "grid delta", grid, want_grid, tol(c));
            let cont = num(&e["delta_cks_continuous"]);
            let (lo, hi) = (cont * (1.0 - SLACK), want_grid * (1.0 + SLACK));
            let got = zcdp_delta(rho, eps).unwrap();
            between(id, "zcdp_delta", got, lo, hi);
            close(id, "zcdp_delta vs continuous", got, cont, tol(c));
            between(id, "rdp_delta", rdp_delta(&curve, eps).unwrap(), lo, hi);
        }
    }
    cs.len()
}

fn rdp_to_dp(g: &Value) -> usize {
    let cs = cases(g, "rdp_to_dp");
    for c in &cs {
        let id = c["id"].as_str().unwrap();
        let orders = nums(&c["inputs"]["orders"]);
        let values = nums(&c["inputs"]["rdp"]);
        let e = &c["expected"];
        if id.contains("pure_dp_eps1_tight") {
            let pure = RdpCurve::pure_dp(1.0).unwrap();
            for (&a, &v) in orders.iter().zip(&values) {
                close(id, &format!("pure curve({a})"), pure.eval(a), v, 1e-12);
            }
        }
        let table = RdpCurve::table(orders.clone(), values).unwrap();
        if let Some(delta) = c["inputs"].get("delta") {
            let delta = num(delta);
            let got = rdp_epsilon_on(&table, delta, &orders).unwrap();
            close(id, "eps_improved", got.eps, num(&e["eps_improved"]), tol(c));
            assert_eq!(got.order, num(&e["optimal_order"]), "{id}");
            let wider = rdp_epsilon(&table, delta).unwrap().eps;
            assert!(wider <= got.eps, "{id}: {wider} > {}", got.eps);
            if id.contains("pure_dp_eps1_tight") {
                let cont = rdp_epsilon(&RdpCurve::pure_dp(1.0).unwrap(), delta)
                    .unwrap()
                    .eps;
                assert!(cont <= got.eps + SLACK, "{id}: {cont}");
            }
        } else {
            let eps = num(&c["inputs"]["eps"]);
            let got = rdp_delta_on(&table, eps, &orders).unwrap();
            close(id, "delta_improved", got, num(&e["delta_improved"]), tol(c));
        }
    }
    cs.len()
}

fn analytic_gaussian_sigma(g: &Value) -> usize {
    let cs = cases(g, "analytic_gaussian_sigma");
    for c in &cs {
        let id = c["id"].as_str().unwrap();
        let (eps, delta, sens) = (
            num(&c["inputs"]["eps"]),
            num(&c["inputs"]["delta"]),
            num(&c["inputs"]["l2_sensitivity"]),
        );
        let e = &c["expected"];
        let s = gaussian_sigma(eps, delta, sens).unwrap();
        close(id, "sigma_analytic", s, num(&e["sigma_analytic"]), tol(c));
        let classic = classic_gaussian_sigma(eps, delta, sens).unwrap();
        close(
            id,
            "sigma_classic",
            classic,
            num(&e["sigma_classic"]),
            1e-12,
        );
        assert_eq!(
            e["classic_formula_valid"].as_bool().unwrap(),
            eps < 1.0,
            "{id}"
        );
    }
    cs.len()
}

fn composition(g: &Value) -> usize {
    use Neighbours::AddRemove;
    let cs = cases(g, "composition");
    for c in &cs {
        let id = c["id"].as_str().unwrap();
        let i = &c["inputs"];
        let e = &c["expected"];
        let compose = |gs: Vec<Guarantee>| {
            gs.iter()
                .skip(1)
                .fold(gs[0].clone(), |acc, g| acc.compose(g).unwrap())
        };
        match i["kind"].as_str().unwrap() {
            "pure" => {
                let total = compose(
                    nums(&i["eps_list"])
                        .into_iter()
                        .map(|x| Guarantee::pure(x, AddRemove).unwrap())
                        .collect(),
                );
                close(id, "eps", total.pure_eps().unwrap(), num(&e["eps"]), tol(c));
            }
            "approx" => {
                let total = compose(
                    i["eps_delta_list"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|p| {
                            let p = nums(p);
                            Guarantee::approx(p[0], p[1], AddRemove).unwrap()
                        })
                        .collect(),
                );
                let d = num(&e["delta"]);
                // The summed δ is rounded up; the ε is found at that δ.
                let delta = total.delta(num(&e["eps"]) * (1.0 + tol(c))).unwrap();
                close(id, "delta", delta, d, tol(c));
                close(
                    id,
                    "eps",
                    total.epsilon(delta).unwrap(),
                    num(&e["eps"]),
                    tol(c),
                );
            }
            "zcdp" => {
                let total = compose(
                    nums(&i["rho_list"])
                        .into_iter()
                        .map(|r| Guarantee::zcdp(r, AddRemove).unwrap())
                        .collect(),
                );
                let rho = total.zcdp_rho().unwrap();
                close(id, "rho", rho, num(&e["rho"]), tol(c));
                let cont = num(&e["eps_cks_continuous"]);
                let got = total.epsilon(num(&i["delta"])).unwrap();
                close(id, "eps_cks_continuous", got, cont, tol(c));
                assert!(got >= cont - SLACK, "{id}");
            }
            "rdp_gaussian" => {
                let z = num(&i["noise_multiplier"]);
                let rounds = num(&i["rounds"]);
                let delta = num(&i["delta"]);
                let curve = gaussian_curve(z, 1.0).unwrap().times(rounds).unwrap();
                let grid = rdp_epsilon_on(&curve, delta, &default_orders()).unwrap();
                close(id, "eps", grid.eps, num(&e["eps"]), tol(c));
                assert_eq!(grid.order, num(&e["optimal_order"]), "{id}");
                let cont = rdp_epsilon(&curve, delta).unwrap().eps;
                let lo = num(&e["eps_continuous_alpha"]) - SLACK;
                between(id, "continuous", cont, lo, num(&e["eps"]) + SLACK);
            }
            other => panic!("{id}: unknown kind {other}"),
        }
    }
    cs.len()
}

fn dpsgd_rdp(g: &Value) -> usize {
    let cs = cases(g, "dpsgd_rdp");
    let orders = default_orders();
    for c in &cs {
        let id = c["id"].as_str().unwrap();
        let i = &c["inputs"];
        let (q, z, steps, delta) = (
            num(&i["sampling_rate"]),
            num(&i["noise_multiplier"]),
            i["steps"].as_u64().unwrap(),
            num(&i["delta"]),
        );
        assert_eq!(i["neighboring"], "add_remove", "{id}");
        assert_eq!(orders_input(&i["rdp_orders"]), orders, "{id}");
        let e = &c["expected"];
        let curve = dpsgd_curve(q, z, steps).unwrap();
        let dp_acc = nums(&e["rdp"]);
        let exact = nums(&e["rdp_exact"]);
        for (k, &a) in orders.iter().enumerate() {
            let got = curve.eval(a);
            let what = format!("rdp({a})");
            if a.fract() == 0.0 {
                close(id, &what, got, dp_acc[k], tol(c));
            } else {
                assert!(got.is_finite(), "{id} {what}");
                between(
                    id,
                    &what,
                    got,
                    exact[k] * (1.0 - tol(c)),
                    dp_acc[k] * (1.0 + tol(c)),
                );
            }
        }
        let eps = dpsgd_epsilon_grid(q, z, steps, delta).unwrap().eps;
        let (lo, hi) = (num(&e["eps_exact_rdp"]), num(&e["eps"]));
        between(id, "eps", eps, lo * (1.0 - tol(c)), hi * (1.0 + tol(c)));
        let cont = rdp_epsilon(&curve, delta).unwrap().eps;
        assert!(cont <= eps, "{id}: continuous {cont} > grid {eps}");
    }
    cs.len()
}

#[test]
fn golden_gaussian_rdp_curve() {
    gaussian_rdp_curve(&golden());
}

#[test]
fn golden_gaussian_eps() {
    gaussian_eps(&golden());
}

#[test]
fn golden_zcdp_to_dp() {
    zcdp_to_dp(&golden());
}

#[test]
fn golden_rdp_to_dp() {
    rdp_to_dp(&golden());
}

#[test]
fn golden_analytic_gaussian_sigma() {
    analytic_gaussian_sigma(&golden());
}

#[test]
fn golden_composition() {
    composition(&golden());
}

#[test]
fn golden_dpsgd_rdp() {
    dpsgd_rdp(&golden());
}

#[test]
fn golden_cases_checked_per_section() {
    let g = golden();
    type Section = (&'static str, fn(&Value) -> usize, usize);
    let runs: [Section; 7] = [
        ("gaussian_rdp_curve", gaussian_rdp_curve, 3),
        ("gaussian_eps", gaussian_eps, 7),
        ("zcdp_to_dp", zcdp_to_dp, 11),
        ("rdp_to_dp", rdp_to_dp, 11),
        ("analytic_gaussian_sigma", analytic_gaussian_sigma, 8),
        ("composition", composition, 7),
        ("dpsgd_rdp", dpsgd_rdp, 18),
    ];
    for (section, run, expected) in runs {
        let declared = g["sections"][section]["cases"].as_u64().unwrap() as usize;
        assert_eq!(
            declared, expected,
            "{section}: golden file declares {declared}"
        );
        assert_eq!(run(&g), expected, "{section}: cases checked");
    }
}
