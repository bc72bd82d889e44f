//! `dptune account` run as a real binary: JSON values against golden numbers
//! (golden/accounting.json), exit code 2 and the parameter's name for bad input.

#[path = "support/cli.rs"]
mod cli;

use cli::{dptune, run_json};
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
    let eps = f(&v, "epsilon");
    assert!(eps <= grid && eps > 2.09, "{eps}");
    assert!(f(&v, "order") > 1.0);
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
        "noise_multiplier",
    );
    refused(
        &["gaussian", "--noise-multiplier", "NaN", "--delta", "1e-5"],
        "noise_multiplier",
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
        "sampling_rate",
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
