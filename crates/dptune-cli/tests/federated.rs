//! `dptune federated simulate` end to end: the real binary, its JSON and its exit codes.
//!
//! The runs are small (MNIST-5k or Adult cut to a few hundred rows, a handful of clients, one
//! local epoch, one FedAvg round) so that each takes well under a second in a release build.

use std::process::Output;

#[path = "support/cli.rs"]
mod cli;

use cli::dptune as run;
use serde_json::Value;

/// A small, fast simulation plus `extra` arguments.
fn simulate(extra: &[&str]) -> Output {
    let mut args = vec![
        "--json",
        "federated",
        "simulate",
        "--dataset",
        "mnist5k",
        "--rows",
        "600",
        "--clients",
        "8",
        "--local-epochs",
        "1",
        "--fedavg-rounds",
        "1",
        "--seed",
        "3",
    ];
    args.extend_from_slice(extra);
    run(&args)
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("exited normally")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn small_simulation_reports_the_selection_baselines_and_guarantee() {
    let o = simulate(&["--dirichlet", "0.5", "--k", "3", "--epsilon", "2"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let selected = v["selected"].as_u64().unwrap();
    assert!(selected < 100);
    let acc = v["selected_accuracy"].as_f64().unwrap();
    let opt = v["opt_accuracy"].as_f64().unwrap();
    let rand = v["randguess_accuracy"].as_f64().unwrap();
    assert!(
        (0.0..=1.0).contains(&acc) && acc <= opt && rand <= opt,
        "{v}"
    );
    // The selected candidate's accuracy is its entry in the reference table.
    assert_eq!(
        v["reference_accuracies"][selected as usize].as_f64(),
        Some(acc)
    );
    let eps = v["privacy"]["epsilon"].as_f64().unwrap();
    assert!(eps > 0.0 && eps <= 2.0, "{eps}");
    assert_eq!(v["privacy"]["delta"].as_f64(), Some(1e-5));
    assert_eq!(v["privacy"]["neighbours"], "replace");
    assert_eq!(v["survivors"].as_u64(), Some(8));
    assert_eq!(v["noisy_counts"].as_array().unwrap().len(), 100);
}

#[test]
fn repetitions_share_the_partition_and_summarise() {
    let o = simulate(&["--iid", "--repetitions", "2"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["seed"].as_u64(), Some(3));
    assert_eq!(runs[1]["seed"].as_u64(), Some(4));
    // One partition, one reference table: the baselines agree across repetitions.
    assert_eq!(runs[0]["opt_accuracy"], runs[1]["opt_accuracy"]);
    assert_eq!(
        runs[0]["reference_accuracies"],
        runs[1]["reference_accuracies"]
    );
    assert_eq!(v["summary"]["runs"].as_u64(), Some(2));
    let mean = (runs[0]["selected_accuracy"].as_f64().unwrap()
        + runs[1]["selected_accuracy"].as_f64().unwrap())
        / 2.0;
    let got = v["summary"]["selected_accuracy_mean"].as_f64().unwrap();
    assert!((got - mean).abs() < 1e-12);
}

#[test]
fn bad_input_exits_2_naming_the_parameter() {
    for (extra, name) in [
        (&["--k", "101"][..], "k"),
        (&["--k", "0"][..], "k"),
        (&["--min-survivors", "9"][..], "min_survivors"),
        (&["--min-survivors", "1"][..], "min_survivors"),
        (&["--epsilon", "0"][..], "epsilon"),
        (&["--epsilon=-1"][..], "epsilon"),
        (&["--epsilon", "NaN"][..], "epsilon"),
        (&["--delta", "1.5"][..], "delta"),
        (&["--dropout-rate", "1"][..], "dropout_rate"),
        (&["--repetitions", "0"][..], "repetitions"),
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
