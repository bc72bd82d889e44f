//! `dptune federated simulate` end to end: the real binary, its JSON and its exit codes.
//!
//! The runs are small (MNIST-5k or Adult cut to a few hundred rows, a handful of clients, one
//! local epoch, one FedAvg round) so that each takes well under a second in a release build.

use std::process::Output;

#[path = "support/cli.rs"]
mod cli;

use cli::{dptune as run, small_simulation};
use serde_json::Value;

/// The seed of the small simulations.
const SEED: [&str; 2] = ["--seed", "3"];

/// A small, fast simulation plus `extra` arguments, with `--json`.
fn simulate(extra: &[&str]) -> Output {
    run(&[&["--json"][..], &small_simulation("600"), &SEED, extra].concat())
}

/// A small, fast simulation plus `extra` arguments, with its text output.
fn simulate_text(extra: &[&str]) -> Output {
    run(&[&small_simulation("600")[..], &SEED, extra].concat())
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("exited normally")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Every top-level field of a run's default JSON, by class (issue 13, release audit): public
/// inputs and functions of them, and the charged release. Anything else must not appear.
const PUBLIC: [&str; 15] = [
    "dataset",
    "clients",
    "partition",
    "k",
    "min_survivors",
    "colluders",
    "dropout_rate",
    "data_seed",
    "seed",
    "seeded",
    "research",
    "local_epochs",
    "fedavg_rounds",
    "survivors",
    "privacy",
];
/// The release: the selected index (and its public grid entry) and the noisy vote sum.
const RELEASE: [&str; 3] = ["selected", "selected_hyperparameters", "noisy_counts"];

fn keys(v: &Value) -> Vec<String> {
    let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
    k.sort();
    k
}

fn declared() -> Vec<String> {
    let mut k: Vec<String> = PUBLIC
        .iter()
        .chain(&RELEASE)
        .map(|s| s.to_string())
        .collect();
    k.sort();
    k
}

#[test]
fn default_output_holds_only_public_inputs_and_the_release() {
    // e99dd64 printed the non-private reference accuracies and timings by default.
    let o = simulate(&["--dirichlet", "0.5", "--k", "3", "--epsilon", "2"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(keys(&v), declared(), "{v}");
    assert!(v["selected"].as_u64().unwrap() < 100);
    let eps = v["privacy"]["epsilon"].as_f64().unwrap();
    assert!(eps > 0.0 && eps <= 2.0, "{eps}");
    assert_eq!(v["privacy"]["delta"].as_f64(), Some(1e-5));
    assert_eq!(v["privacy"]["neighbours"], "replace_one");
    assert_eq!(v["privacy"]["colluders"].as_u64(), Some(0));
    assert!(v["privacy"]["assumption"]
        .as_str()
        .unwrap()
        .contains("at most 0 colluding survivors"));
    assert_eq!(v["survivors"].as_u64(), Some(8));
    assert_eq!(v["noisy_counts"].as_array().unwrap().len(), 100);
    // The text: the assumption is stated, no accuracy and no timing.
    let text = simulate_text(&[]);
    assert_eq!(code(&text), 0, "{}", stderr(&text));
    let out = String::from_utf8_lossy(&text.stdout).to_lowercase();
    assert!(
        out.contains("assuming at most 0 colluding survivors"),
        "{out}"
    );
    for leak in ["accuracy", "opt", "randguess", "second"] {
        assert!(!out.contains(leak), "{leak}: {out}");
    }
    // Stderr (not a terminal here) holds the plain progress lines and nothing else.
    let err = stderr(&text);
    assert!(is_public_progress(&err), "{err}");
}

/// The progress lines every simulation shows on a non-terminal stderr: its public stages, in
/// order, with no number (no count of clients, survivors or repetitions, no time).
const STAGES: [&str; 3] = [
    "dptune federated simulate: reading data",
    "dptune federated simulate: reference accuracies (non-private)",
    "dptune federated simulate: local evaluation",
];

/// Review item: the JSON released `seed`, the key of the Skellam noise, beside `noisy_counts`
/// labelled a plain charged release. The simulation always keys its noise with the run seed,
/// so every run says it is a seeded research run, in the JSON and in the text.
#[test]
fn every_run_says_it_is_a_seeded_research_run() {
    let o = simulate(&["--k", "3"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["seeded"], true, "{v}");
    let research = v["research"].as_str().unwrap();
    for needle in [
        "research mode",
        "predict the noise",
        "NOT PRIVATE",
        "operating system",
    ] {
        assert!(research.contains(needle), "{needle}: {research}");
    }
    let text = simulate_text(&[]);
    assert_eq!(code(&text), 0, "{}", stderr(&text));
    let out = String::from_utf8_lossy(&text.stdout);
    assert!(
        out.lines()
            .any(|l| l.starts_with("seed 3: seeded simulation (research mode)")),
        "{out}"
    );
}

/// Whether `stderr` is exactly [`STAGES`], give or take the fixed-text heartbeat (a run longer
/// than a minute on a loaded machine).
fn is_public_progress(stderr: &str) -> bool {
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| *l != "dptune federated simulate: still running")
        .collect();
    lines == STAGES
}

#[test]
fn progress_shows_the_stages_and_no_number() {
    // With dropouts and repetitions, the numbers progress must not show vary.
    let o = simulate(&[
        "--dropout-rate",
        "0.3",
        "--min-survivors",
        "3",
        "--repetitions",
        "2",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(is_public_progress(&stderr(&o)), "{}", stderr(&o));
    // The check has teeth: progress that counted clients or survivors (what the former
    // indicatif bar's {pos}/{len} would have printed to a log), or named a stage per
    // repetition, is rejected.
    let lines = STAGES.join("\n");
    for leaky in [
        lines.replace("local evaluation", "local evaluation 5/16"),
        format!("{lines}\ndptune federated simulate: 6 survivors"),
        format!("{lines}\n{}", STAGES[2]),
    ] {
        assert!(!is_public_progress(&leaky), "{leaky}");
    }
    assert!(is_public_progress(&format!(
        "{lines}\ndptune federated simulate: still running\n"
    )));
}

#[test]
fn diagnostics_are_behind_the_flag_and_labelled() {
    let o = simulate(&[
        "--dirichlet",
        "0.5",
        "--k",
        "3",
        "--epsilon",
        "2",
        "--diagnostics",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut want = declared();
    want.push("diagnostics".into());
    want.sort();
    assert_eq!(keys(&v), want);
    let d = &v["diagnostics"];
    assert_eq!(d["not_private"], true);
    assert!(d["label"].as_str().unwrap().starts_with("NOT PRIVATE"));
    let selected = v["selected"].as_u64().unwrap() as usize;
    let acc = d["selected_accuracy"].as_f64().unwrap();
    let opt = d["opt_accuracy"].as_f64().unwrap();
    let rand = d["randguess_accuracy"].as_f64().unwrap();
    assert!(
        (0.0..=1.0).contains(&acc) && acc <= opt && rand <= opt,
        "{v}"
    );
    // The selected candidate's accuracy is its entry in the reference table.
    assert_eq!(d["reference_accuracies"][selected].as_f64(), Some(acc));
}

#[test]
fn public_fields_do_not_depend_on_the_data() {
    // Neighbour differencing: D (600 rows) and D minus its last record (599 rows), same seeds.
    // Every field that is not the charged release must be identical. The NOT PRIVATE
    // diagnostics, a deliberately leaky output, differ: the check can fail.
    let extra = [
        "--iid",
        "--dropout-rate",
        "0.5",
        "--min-survivors",
        "4",
        "--diagnostics",
    ];
    let a = simulate(&extra);
    let b = run(&[&["--json"][..], &small_simulation("599"), &SEED, &extra].concat());
    assert_eq!(code(&a), 0, "{}", stderr(&a));
    assert_eq!(code(&b), 0, "{}", stderr(&b));
    let va: Value = serde_json::from_slice(&a.stdout).unwrap();
    let vb: Value = serde_json::from_slice(&b.stdout).unwrap();
    for key in PUBLIC {
        assert_eq!(va[key], vb[key], "{key}");
    }
    assert!(
        va["survivors"].as_u64().unwrap() < 8,
        "the dropouts are exercised"
    );
    assert_ne!(
        va["diagnostics"]["reference_accuracies"],
        vb["diagnostics"]["reference_accuracies"]
    );
}

#[test]
fn colluders_size_the_noise_for_the_honest_clients() {
    // Issue 13, finding 8: 100 clients, t = 80, no dropouts. With the default c = 0 the run
    // reports ε = 0.885 (100 shares of μ/80); that holds only if nobody colludes, and the output
    // says so. With --colluders 40 each share is μ/40: 60 honest shares give 1.5 μ (not 1.25 μ),
    // and ε is reported against the 40 colluders.
    let base = [
        "--json",
        "federated",
        "simulate",
        "--dataset",
        "adult",
        "--rows",
        "1000",
        "--clients",
        "100",
        "--iid",
        "--k",
        "5",
        "--epsilon",
        "1",
        "--min-survivors",
        "80",
        "--local-epochs",
        "1",
        "--fedavg-rounds",
        "1",
        "--seed",
        "1",
    ];
    let honest = run(&base);
    let mut args = base.to_vec();
    args.extend_from_slice(&["--colluders", "40"]);
    let coll = run(&args);
    assert_eq!(code(&honest), 0, "{}", stderr(&honest));
    assert_eq!(code(&coll), 0, "{}", stderr(&coll));
    let h: Value = serde_json::from_slice(&honest.stdout).unwrap();
    let c: Value = serde_json::from_slice(&coll.stdout).unwrap();
    let (eh, ec) = (
        h["privacy"]["epsilon"].as_f64().unwrap(),
        c["privacy"]["epsilon"].as_f64().unwrap(),
    );
    assert!((eh - 0.885).abs() < 5e-4, "{eh}");
    assert!(ec < 1.0, "{ec}");
    assert_eq!(h["privacy"]["colluders"].as_u64(), Some(0));
    assert_eq!(c["privacy"]["colluders"].as_u64(), Some(40));
    assert!(c["privacy"]["assumption"]
        .as_str()
        .unwrap()
        .contains("at most 40 colluding survivors (noise sized for t - c = 40 honest"));
    let ratio = c["privacy"]["noise_variance"].as_f64().unwrap()
        / h["privacy"]["noise_variance"].as_f64().unwrap();
    assert!((ratio - 1.2).abs() < 1e-3, "{ratio}");
}

#[test]
fn repetitions_share_the_partition_and_summarise() {
    let o = simulate(&["--iid", "--repetitions", "2", "--diagnostics"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["seed"].as_u64(), Some(3));
    assert_eq!(runs[1]["seed"].as_u64(), Some(4));
    // One partition, one reference table: the baselines agree across repetitions.
    let (d0, d1) = (&runs[0]["diagnostics"], &runs[1]["diagnostics"]);
    assert_eq!(d0["opt_accuracy"], d1["opt_accuracy"]);
    assert_eq!(d0["reference_accuracies"], d1["reference_accuracies"]);
    assert_eq!(v["summary"]["runs"].as_u64(), Some(2));
    let mean = (d0["selected_accuracy"].as_f64().unwrap()
        + d1["selected_accuracy"].as_f64().unwrap())
        / 2.0;
    let s = &v["summary"]["diagnostics"];
    assert_eq!(s["not_private"], true);
    let got = s["selected_accuracy_mean"].as_f64().unwrap();
    assert!((got - mean).abs() < 1e-12);
    // Without the flag the summary is the run count only.
    let o = simulate(&["--iid", "--repetitions", "2"]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["summary"], serde_json::json!({ "runs": 2 }));
}

#[test]
fn bad_input_exits_2_naming_the_parameter() {
    for (extra, name) in [
        (&["--k", "101"][..], "k"),
        (&["--k", "0"][..], "k"),
        (&["--min-survivors", "9"][..], "`--min-survivors`"),
        (&["--min-survivors", "1"][..], "`--min-survivors`"),
        (&["--epsilon", "0"][..], "epsilon"),
        (&["--epsilon=-1"][..], "epsilon"),
        (&["--epsilon", "NaN"][..], "epsilon"),
        (&["--delta", "1.5"][..], "delta"),
        (&["--dropout-rate", "1"][..], "`--dropout-rate`"),
        (&["--repetitions", "0"][..], "repetitions"),
        // t defaults to 7 of 8 clients: c must leave an honest survivor.
        (&["--colluders", "7"][..], "colluders"),
        (
            &["--min-survivors", "4", "--colluders", "5"][..],
            "colluders",
        ),
        // t = 5 of 8: threshold 5 resists a server colluding with c clients only if
        // 2·5 > 8 + c, so c = 3 is refused although c < t.
        (
            &["--min-survivors", "5", "--colluders", "3"][..],
            "colluders",
        ),
    ] {
        let o = simulate(extra);
        assert_eq!(code(&o), 2, "{extra:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(name), "{extra:?}: {}", stderr(&o));
        assert!(o.stdout.is_empty(), "{extra:?}");
    }
    // Unparseable values are rejected by the argument parser, also with exit 2.
    let o = simulate(&["--epsilon", "one"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
}

#[test]
fn too_few_survivors_is_a_refusal_exit_3() {
    // t = n = 8 and every client drops with probability 0.9: with this seed some client drops
    // (the chance that none of 8 drops is 1e-8), so nothing may be released.
    let o = simulate(&["--min-survivors", "8", "--dropout-rate", "0.9"]);
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    assert!(o.stdout.is_empty());
    assert!(
        stderr(&o).to_lowercase().contains("survivor"),
        "{}",
        stderr(&o)
    );
}
