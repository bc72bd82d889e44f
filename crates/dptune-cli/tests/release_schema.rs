//! Every command's `--json` output releases only fields declared in the library's release
//! schema (`dptune::release_schema`): public inputs, charged private releases, and NOT PRIVATE
//! diagnostics only under their flag and inside an object labelled `"not_private": true`.
//! Deliberately leaky objects (a timer, the exact private record count, an unlabelled
//! diagnostic) are rejected, so the check can fail.

#[path = "support/cli.rs"]
mod cli;
#[path = "support/release.rs"]
mod release;

use cli::{run_json, temp_file};
use dptune::release_schema::Violation;
use release::{assert_declared, leaves, public_values, violations};
use serde_json::{json, Value};

/// Runs `dptune --json <command words> <args>` and checks its object against the schema of
/// `command`, with `args` as the flags given.
fn check(command: &str, args: &[&str]) -> Value {
    let words: Vec<&str> = command.split(' ').collect();
    let v = run_json(&[&words[..], args].concat());
    assert_declared(command, &v, args);
    v
}

fn scores_file() -> String {
    temp_file("schema", "scores.txt", "1\n2\n3\n2.5\n")
        .display()
        .to_string()
}

// ---- the checker itself (deliberately leaky objects) ----

fn clean_tune() -> Value {
    json!({
        "dataset": "adult", "learner": "dp_sgd_logistic", "tuner": "Papernot-Steinke",
        "best": {"learning_rate": 16.0, "epochs": 3},
        "privacy": {"epsilon": 1.0, "delta": 1e-5, "neighbours": "add_remove",
                    "tuning": {"epsilon": 1.0, "delta": 1e-5},
                    "final_fit": {"epsilon": 0.99, "delta": 1e-5},
                    "per_run": "an RDP curve"},
        "public_test_records": 16281,
        "test_accuracy": 0.83
    })
}

#[test]
fn a_clean_object_passes_and_leaky_ones_are_rejected() {
    let clean = clean_tune();
    assert_declared("tune", &clean, &[]);

    let mut timed = clean.clone();
    timed["wall_time_s"] = json!(0.59);
    assert_eq!(
        violations("tune", &timed, &[]),
        vec![Violation::Undeclared {
            path: "wall_time_s".into()
        }]
    );

    let mut counted = clean.clone();
    counted["records"]["private"] = json!(32561);
    assert_eq!(
        violations("tune", &counted, &[]),
        vec![Violation::Undeclared {
            path: "records.private".into()
        }]
    );

    // A diagnostic needs its flag and its label.
    let mut compared = clean.clone();
    compared["compare"] =
        json!({"not_private": true, "label": "NOT PRIVATE", "test_accuracy": 0.9});
    assert_declared("tune", &compared, &["--compare"]);
    assert!(matches!(
        violations("tune", &compared, &[])[..],
        [Violation::DiagnosticWithoutFlag { .. }]
    ));
    let mut gp = json!({"lengthscale": 1.0, "test_rmse": 69.1});
    assert!(matches!(
        violations("gp", &gp, &["--diagnostics"])[..],
        [Violation::DiagnosticUnlabelled { .. }]
    ));
    gp["not_private"] = json!(true);
    assert_declared("gp", &gp, &["--diagnostics"]);
}

/// The piece neighbour-differencing tests use: public fields must not move between
/// neighbours, private releases may.
#[test]
fn public_values_ignore_releases_and_see_an_epsilon_that_moved() {
    let d = clean_tune();
    let mut released_differently = d.clone();
    released_differently["best"]["epochs"] = json!(4);
    released_differently["test_accuracy"] = json!(0.81);
    assert_eq!(
        public_values("tune", &d),
        public_values("tune", &released_differently)
    );
    // Finding 2 of issue 13: the final-fit epsilon was a function of the private size.
    let mut moved = d.clone();
    moved["privacy"]["final_fit"]["epsilon"] = json!(0.9989446);
    assert_ne!(public_values("tune", &d), public_values("tune", &moved));
    assert_eq!(
        public_values("tune", &d)["privacy.epsilon"],
        vec![json!(1.0)]
    );
}

#[test]
fn the_walk_sees_every_leaf_with_its_label() {
    let v = json!({"a": {"b": [1, {"c": null}], "e": []},
                   "d": {"not_private": true, "x": {"y": 1}}});
    let mut got = leaves(&v);
    got.sort();
    let want = [
        ("a.b[]", false),
        ("a.b[].c", false),
        ("a.e[]", false),
        ("d.not_private", true),
        ("d.x.y", true),
    ];
    assert_eq!(
        got,
        want.iter()
            .map(|(p, l)| (p.to_string(), *l))
            .collect::<Vec<_>>()
    );
}

#[test]
fn a_timer_added_to_a_real_select_release_is_caught() {
    let scores = scores_file();
    let args = [
        "--mechanism",
        "exponential",
        "--epsilon",
        "1",
        "--sensitivity",
        "1",
    ];
    let mut v = check("select", &[&args[..], &[scores.as_str()]].concat());
    v["wall_time_s"] = json!(0.001);
    assert_eq!(violations("select", &v, &args).len(), 1);
}

// ---- each command ----

#[test]
fn account_releases_only_public_inputs() {
    check(
        "account gaussian",
        &["--noise-multiplier", "1", "--delta", "1e-6"],
    );
    check(
        "account calibrate-gaussian",
        &["--epsilon", "1", "--delta", "1e-5"],
    );
    check(
        "account dpsgd",
        &[
            "--sampling-rate",
            "0.01",
            "--noise-multiplier",
            "1",
            "--steps",
            "100",
            "--delta",
            "1e-5",
        ],
    );
    check("account zcdp", &["--rho", "0.1", "--delta", "1e-5"]);
    check(
        "account calibrate-dpsgd",
        &[
            "--sampling-rate",
            "0.01",
            "--steps",
            "100",
            "--epsilon",
            "1",
            "--delta",
            "1e-5",
        ],
    );
    let parts = std::env::temp_dir().join(format!("dptune-schema-{}.json", std::process::id()));
    std::fs::write(
        &parts,
        r#"{"parts":[{"mechanism":"gaussian","sigma":2.0,"times":10}],"delta":1e-5,"neighbours":"add_remove"}"#,
    )
    .unwrap();
    let file = parts.to_str().unwrap();
    check("account compose", &[file]);
    check("account profile", &[file]);
    let _ = std::fs::remove_file(&parts);
    let bases: [&[&str]; 3] = [
        &["--base", "gaussian", "--noise-multiplier", "2"],
        &["--base", "pure", "--epsilon", "0.5"],
        &["--base", "zcdp", "--rho", "0.1"],
    ];
    let repeats: [&[&str]; 3] = [
        &["--repeats", "poisson", "--mean", "10"],
        &["--repeats", "tnb", "--eta", "0.5", "--mean", "10"],
        &["--repeats", "logarithmic", "--mean", "10"],
    ];
    for b in bases {
        for r in repeats {
            check("account repeat", &[b, r, &["--delta", "1e-5"]].concat());
        }
    }
}

#[test]
fn select_releases_the_choice_and_its_charge() {
    let scores = scores_file();
    let s = scores.as_str();
    let one = ["--epsilon", "1", "--sensitivity", "1", s];
    for m in ["exponential", "gumbel", "laplace", "permute-and-flip"] {
        check("select", &[&["--mechanism", m][..], &one].concat());
        check(
            "select",
            &[&["--mechanism", m, "--repeat", "3"][..], &one].concat(),
        );
    }
    check(
        "select",
        &[&["--mechanism", "gaussian", "--delta", "1e-5"][..], &one].concat(),
    );
    for method in ["permute-and-flip", "gumbel"] {
        let topk = ["--mechanism", "top-k", "--k", "2", "--top-k-method", method];
        check("select", &[&topk[..], &one].concat());
        check("select", &[&topk[..], &["--repeat", "3"], &one].concat());
    }
    let sens = temp_file("schema", "sens.txt", "1\n1\n2\n1\n");
    check(
        "select",
        &[
            "--mechanism",
            "gem",
            "--epsilon",
            "1",
            "--sensitivities",
            sens.to_str().unwrap(),
            s,
        ],
    );
}

#[test]
fn select_probabilities_are_a_labelled_diagnostic() {
    let scores = scores_file();
    check(
        "select",
        &[
            "--mechanism",
            "exponential",
            "--epsilon",
            "1",
            "--sensitivity",
            "1",
            "--probabilities",
            scores.as_str(),
        ],
    );
}

#[test]
fn study_releases_only_its_public_table_analysis() {
    let mut table = String::from("lr,acc_seed0,acc_seed1,acc_seed2\n");
    for i in 0..20 {
        let v = 0.5 + 0.4 * ((i * 7) % 20) as f64 / 19.0;
        table.push_str(&format!("{i},{v},{},{}\n", v - 0.01, v + 0.005));
    }
    let p = temp_file("schema", "study.csv", &table);
    let base = [
        p.to_str().unwrap(),
        "--score",
        "acc",
        "--n",
        "500",
        "--epsilons",
        "0.1,1",
        "--repetitions",
        "20",
    ];
    check("study", &base);
    // --recommend reads no --epsilons (refused with it).
    check(
        "study",
        &[&base[..5], &base[7..], &["--recommend", "--epsilon", "1"]].concat(),
    );
}

#[test]
fn tune_releases_the_configuration_its_score_and_public_epsilons() {
    check("tune", &["--seed", "3"]);
    check("tune", &["--seed", "3", "--compare"]);
}

#[test]
fn gp_releases_the_lengthscale_and_public_noise_scales() {
    check("gp", &["--seed", "3"]);
    check("gp", &["--seed", "3", "--diagnostics"]);
}

#[test]
fn federated_simulate_releases_the_vote_and_its_charge() {
    let small = [
        "--seed",
        "1",
        "--rows",
        "2000",
        "--clients",
        "10",
        "--local-epochs",
        "1",
        "--fedavg-rounds",
        "1",
        "--k",
        "2",
    ];
    check("federated simulate", &small);
    check(
        "federated simulate",
        &[&small[..], &["--repetitions", "2"]].concat(),
    );
    check(
        "federated simulate",
        &[&small[..], &["--diagnostics"]].concat(),
    );
}
