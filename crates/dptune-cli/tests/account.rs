//! `dptune account` run as a real binary: JSON values against golden numbers
//! (golden/accounting.json), exit code 2 and the parameter's name for bad input.

#[path = "support/cli.rs"]
mod cli;

use cli::{dptune, run_json, temp_file};
use serde_json::Value;

fn json(args: &[&str]) -> Value {
    run_json(&[&["account"], args].concat())
}

fn f(v: &Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} missing in {v}"))
}

fn rel_close(got: f64, want: f64, rel: f64) {
    assert!((got - want).abs() <= rel * want, "{got} vs {want}");
}

#[test]
fn gaussian_matches_golden() {
    // golden gauss_eps_z1_d1e-06.
    let v = json(&["gaussian", "--noise-multiplier", "1", "--delta", "1e-6"]);
    rel_close(f(&v, "epsilon"), 4.886554117462159, 1e-9);
    let rdp = f(&v, "epsilon_rdp");
    assert!((5.221534444530169 - 1e-9..=5.2215396311544175 + 1e-9).contains(&rdp));
    // Sensitivity scales sigma: z is relative to it, so epsilon is unchanged.
    let v = json(&[
        "gaussian",
        "--noise-multiplier",
        "1",
        "--sensitivity",
        "3",
        "--delta",
        "1e-6",
    ]);
    rel_close(f(&v, "epsilon"), 4.886554117462159, 1e-9);
}

#[test]
fn calibrate_gaussian_matches_golden() {
    // golden agm_sigma_e1_d1e-05.
    let v = json(&["calibrate-gaussian", "--epsilon", "1", "--delta", "1e-5"]);
    rel_close(f(&v, "sigma"), 3.7306316348159374, 1e-9);
    rel_close(f(&v, "sigma_classic"), 4.844805262605389, 1e-12);
    assert_eq!(v["sigma_classic_valid"], false);
}

#[test]
fn dpsgd_matches_golden() {
    // golden dpsgd_q0.01_z1_T1000: dp_accounting 2.101366525420273, exact curve 2.1013652716.
    let v = json(&[
        "dpsgd",
        "--sampling-rate",
        "0.01",
        "--noise-multiplier",
        "1",
        "--steps",
        "1000",
        "--delta",
        "1e-5",
    ]);
    let grid = f(&v, "epsilon_default_grid");
    assert!((2.1013652716483957 * (1.0 - 1e-9)..=2.101366525420273).contains(&grid));
    let rdp = f(&v, "epsilon_rdp");
    assert!(rdp <= grid && rdp > 2.09, "{rdp}");
    assert!(f(&v, "order") > 1.0);
    // The reported ε is the PLD's (golden pld_dpsgd_q0.01_z1_T1000: lower bounds 1.81824 and
    // 1.82624 (PRV), dp_accounting's PLD 1.828244).
    let eps = f(&v, "epsilon");
    assert_eq!(eps, f(&v, "epsilon_pld"));
    assert_eq!(v["route"], "pld");
    assert!(
        (1.826235444850516..=1.828243645591767 * 1.001).contains(&eps),
        "{eps}"
    );
}

#[test]
fn zcdp_matches_golden() {
    // golden zcdp_rho0.125_d1e-05.
    let v = json(&["zcdp", "--rho", "0.125", "--delta", "1e-5"]);
    rel_close(f(&v, "epsilon"), 2.165715545175485, 1e-9);
}

#[test]
fn human_output_is_a_short_block() {
    let out = dptune(&["account", "zcdp", "--rho", "0.5", "--delta", "1e-6"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("epsilon") && text.contains("5.2215"),
        "{text}"
    );
    assert!(text.lines().count() <= 6);
}

fn refused(args: &[&str], name: &str) {
    let mut all = vec!["account"];
    all.extend_from_slice(args);
    let out = dptune(&all);
    assert_eq!(out.status.code(), Some(2), "{args:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains(name), "{args:?}: {err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn bad_input_exits_2_naming_the_parameter() {
    refused(
        &["gaussian", "--noise-multiplier", "1", "--delta", "1.5"],
        "delta",
    );
    refused(
        &["gaussian", "--noise-multiplier", "-1", "--delta", "1e-5"],
        "`--noise-multiplier`",
    );
    refused(
        &["gaussian", "--noise-multiplier", "NaN", "--delta", "1e-5"],
        "`--noise-multiplier`",
    );
    refused(
        &[
            "gaussian",
            "--noise-multiplier",
            "1",
            "--sensitivity",
            "0",
            "--delta",
            "1e-5",
        ],
        "sensitivity",
    );
    refused(
        &[
            "dpsgd",
            "--sampling-rate",
            "0",
            "--noise-multiplier",
            "1",
            "--steps",
            "10",
            "--delta",
            "1e-5",
        ],
        "`--sampling-rate`",
    );
    refused(
        &[
            "dpsgd",
            "--sampling-rate",
            "0.1",
            "--noise-multiplier",
            "1",
            "--steps",
            "0",
            "--delta",
            "1e-5",
        ],
        "steps",
    );
    refused(&["zcdp", "--rho", "0", "--delta", "1e-5"], "rho");
    refused(&["zcdp", "--rho", "1", "--delta", "0"], "delta");
    refused(
        &["calibrate-gaussian", "--epsilon", "inf", "--delta", "1e-5"],
        "epsilon",
    );
}

#[test]
fn repeat_matches_papernot_steinke_tables() {
    // THEORY.md §7.8(a): DP-SGD q = 0.01, z = 1, 1000 steps; logarithmic mean 10 → 3.523 (the
    // golden ps_dpsgd value on dp_accounting's grid; dptune may only be tighter).
    let v = json(&[
        "repeat",
        "--base",
        "dpsgd",
        "--sampling-rate",
        "0.01",
        "--noise-multiplier",
        "1",
        "--steps",
        "1000",
        "--repeats",
        "logarithmic",
        "--mean",
        "10",
        "--delta",
        "1e-5",
    ]);
    let e = f(&v, "epsilon");
    assert!(e <= 3.523 + 5e-4 && e > 3.50, "{e}");
    // §7.8(b): Gaussian z = 3, geometric μ = 10 → 2.8773; Poisson μ = 10 → 3.1913.
    let v = json(&[
        "repeat",
        "--base",
        "gaussian",
        "--noise-multiplier",
        "3",
        "--repeats",
        "geometric",
        "--mean",
        "10",
        "--delta",
        "1e-5",
    ]);
    rel_close(f(&v, "epsilon"), 2.8773, 2e-5);
    let v = json(&[
        "repeat",
        "--base",
        "gaussian",
        "--noise-multiplier",
        "3",
        "--repeats",
        "poisson",
        "--mean",
        "10",
        "--delta",
        "1e-5",
    ]);
    rel_close(f(&v, "epsilon"), 3.1913, 2e-5);
    // Corollary 3: a pure base with η = 0.5 costs 2.5 ε.
    let v = json(&[
        "repeat",
        "--base",
        "pure",
        "--epsilon",
        "0.5",
        "--repeats",
        "tnb",
        "--eta",
        "0.5",
        "--mean",
        "10",
        "--delta",
        "1e-5",
    ]);
    assert_eq!(f(&v, "epsilon_pure"), 1.25);
}

#[test]
fn repeat_bad_input_exits_2() {
    refused(
        &[
            "repeat",
            "--base",
            "zcdp",
            "--rho",
            "0.1",
            "--repeats",
            "geometric",
            "--gamma",
            "1.5",
            "--delta",
            "1e-5",
        ],
        "gamma",
    );
    refused(
        &[
            "repeat",
            "--base",
            "pure",
            "--epsilon",
            "1",
            "--repeats",
            "tnb",
            "--eta",
            "0",
            "--mean",
            "1",
            "--delta",
            "1e-5",
        ],
        "mean",
    );
    refused(
        &[
            "repeat",
            "--base",
            "dpsgd",
            "--sampling-rate",
            "0.01",
            "--repeats",
            "poisson",
            "--mean",
            "3",
            "--delta",
            "1e-5",
        ],
        "noise-multiplier",
    );
    refused(
        &[
            "repeat",
            "--base",
            "gaussian",
            "--noise-multiplier",
            "2",
            "--repeats",
            "geometric",
            "--delta",
            "1e-5",
        ],
        "--mean",
    );
}

const PLD_GOLDEN: &str = include_str!("../../dptune/tests/data/pld.json");

#[test]
fn compose_runs_every_golden_pld_case_as_is() {
    let golden: Value = serde_json::from_str(PLD_GOLDEN).unwrap();
    for c in golden["cases"].as_array().unwrap() {
        let id = c["id"].as_str().unwrap();
        let file = temp_file("account-compose", id, &c["inputs"].to_string());
        let v = json(&["compose", file.to_str().unwrap()]);
        let x = &c["expected"];
        let eps = f(&v, "epsilon");
        let lower = f(x, "eps_lower_bound").max(x["eps_lower_bound_prv"].as_f64().unwrap_or(0.0));
        assert!(eps >= lower, "{id}: {eps} below {lower}");
        assert!(eps <= f(x, "eps_dp_accounting_pld") * 1.001, "{id}: {eps}");
        assert_eq!(v["route"], "pld", "{id}");
        std::fs::remove_file(file).unwrap();
    }
}

#[test]
fn compose_takes_the_tightest_route_and_refuses_bad_files() {
    // One ε = 0.5 selection at δ = 1e-5: pure ε = 0.5 and the PLD agree; pure wins ties.
    let file = temp_file(
        "account-compose",
        "pure.json",
        r#"{"parts": [{"mechanism": "pure", "eps": 0.5}], "delta": 1e-5, "neighbours": "add_remove"}"#,
    );
    let v = json(&["compose", file.to_str().unwrap()]);
    assert!(f(&v, "epsilon") <= 0.5, "{v}");
    let bad = [
        (
            r#"{"parts": [{"mechanism": "gauss", "sigma": 1}], "delta": 1e-5, "neighbours": "add_remove"}"#,
            "mechanism",
        ),
        (
            r#"{"parts": [{"mechanism": "gaussian"}], "delta": 1e-5, "neighbours": "add_remove"}"#,
            "sigma",
        ),
        (
            r#"{"parts": [{"mechanism": "gaussian", "sigma": 1, "b": 2}], "delta": 1e-5, "neighbours": "add_remove"}"#,
            "parts",
        ),
        (
            r#"{"parts": [{"mechanism": "gaussian", "sigma": 1, "q": 0.1}], "delta": 1e-5, "neighbours": "replace_one"}"#,
            "q",
        ),
        (
            r#"{"parts": [{"mechanism": "gaussian", "sigma": 1}], "delta": 1e-5, "neighbours": "both"}"#,
            "neighbours",
        ),
        (
            r#"{"parts": [{"mechanism": "laplace", "b": -1}], "delta": 1e-5, "neighbours": "add_remove"}"#,
            "b",
        ),
        (
            r#"{"parts": [], "delta": 1e-5, "neighbours": "add_remove"}"#,
            "parts",
        ),
        (r#"not json"#, "composition file"),
    ];
    for (i, (text, name)) in bad.iter().enumerate() {
        let file = temp_file("account-compose", &format!("bad{i}.json"), text);
        let out = dptune(&["account", "compose", file.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{text}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(name), "{text}: {err}");
        std::fs::remove_file(file).unwrap();
    }
    std::fs::remove_file(file).unwrap();
}

#[test]
fn profile_and_calibration_by_pld() {
    let file = temp_file(
        "account-profile",
        "gauss.json",
        r#"{"parts": [{"mechanism": "gaussian", "sigma": 2, "times": 10}], "delta": 1e-5, "neighbours": "add_remove"}"#,
    );
    let svg = std::env::temp_dir().join(format!("dptune-profile-{}.svg", std::process::id()));
    let v = json(&[
        "profile",
        file.to_str().unwrap(),
        "--from",
        "0",
        "--to",
        "8",
        "--points",
        "5",
        "--plot",
        svg.to_str().unwrap(),
    ]);
    let d = v["delta_pld"].as_array().unwrap();
    assert_eq!(d.len(), 5);
    // Decreasing in ε, and never above the closed-form (zCDP) route where it is tight.
    let d: Vec<f64> = d.iter().map(|x| x.as_f64().unwrap()).collect();
    assert!(d.windows(2).all(|w| w[1] <= w[0]), "{d:?}");
    let c = v["delta_closed_form"][2].as_f64().unwrap();
    assert!(d[2] < c, "{} vs {c}", d[2]);
    assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));
    std::fs::remove_file(svg).unwrap();
    let out = dptune(&[
        "account",
        "profile",
        file.to_str().unwrap(),
        "--plot",
        "x.gif",
    ]);
    assert_eq!(out.status.code(), Some(2));
    std::fs::remove_file(file).unwrap();

    let v = json(&[
        "calibrate-dpsgd",
        "--sampling-rate",
        "0.01",
        "--steps",
        "1000",
        "--epsilon",
        "2",
        "--delta",
        "1e-5",
    ]);
    let z = f(&v, "noise_multiplier");
    assert!(
        f(&v, "epsilon_pld") <= 2.0 && f(&v, "epsilon_rdp") > 2.0,
        "{v}"
    );
    // At z = 1 the PLD gives 1.8283 < 2, so the calibrated z is below 1.
    assert!(z < 1.0 && z > 0.8, "{z}");
    assert_eq!(f(&v, "interval"), 1e-4);
    assert_eq!(v["grid_limited"], false, "{v}");
}
