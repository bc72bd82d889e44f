//! Size parameters that used to abort (exit 134), panic (101), exhaust memory or run for days
//! (issue 17 §2): each is refused quickly with exit 2, naming the parameter and the estimate;
//! `--force` lifts the machine's limits but never lets through what no process can address.

use std::time::{Duration, Instant};

#[path = "support/cli.rs"]
mod cli;
use cli::{dptune, temp_file};

/// Runs `dptune args`, asserts exit 2 within `seconds` and that stderr names `parameter` (as
/// the flag the user typed, `--parameter`, where it is one); returns stderr.
fn refused(args: &[&str], parameter: &str, seconds: u64) -> String {
    let start = Instant::now();
    let out = dptune(args);
    let took = start.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(
        stderr.contains(&format!("`--{parameter}`")) || stderr.contains(&format!("`{parameter}`")),
        "{args:?}: {stderr}"
    );
    assert!(
        took < Duration::from_secs(seconds),
        "{args:?} took {took:?}"
    );
    stderr
}

const UNADDRESSABLE: &str = "more than a 64-bit process can address";

#[test]
fn study_recommend_refuses_absurd_candidate_counts() {
    let recommend = ["study", "--recommend", "--n", "100", "--epsilon", "1"];
    let with = |extra: &[&'static str]| [&recommend[..], extra].concat();
    let e = refused(
        &with(&["--candidates", "18446744073709551615"]),
        "candidates",
        10,
    );
    assert!(e.contains("needs about"), "{e}");
    refused(&with(&["--candidates", "1000000000"]), "candidates", 10);
    // Forced: still a typed refusal, never a capacity-overflow panic.
    let e = refused(
        &with(&["--candidates", "18446744073709551615", "--force"]),
        "candidates",
        10,
    );
    assert!(e.contains(UNADDRESSABLE), "{e}");
}

#[test]
fn federated_simulate_refuses_a_billion_clients() {
    let e = refused(
        &["federated", "simulate", "--clients", "1000000000"],
        "clients",
        30,
    );
    assert!(e.contains("needs about"), "{e}");
    assert!(
        e.contains("use --force to try anyway") || e.contains(UNADDRESSABLE),
        "{e}"
    );
    let e = refused(
        &[
            "federated",
            "simulate",
            "--clients",
            "1000000000",
            "--force",
        ],
        "clients",
        30,
    );
    assert!(e.contains(UNADDRESSABLE), "{e}");
    // A sparse graph fits the address space; forced, the table's rows refuse it before the
    // partition allocates anything per client.
    let e = refused(
        &[
            "federated",
            "simulate",
            "--clients",
            "1000000000",
            "--degree",
            "2",
            "--force",
        ],
        "clients",
        60,
    );
    assert!(e.contains("every client needs 2 rows"), "{e}");
}

#[test]
fn tune_refuses_a_hidden_layer_of_a_hundred_million() {
    let mlp = ["tune", "--learner", "dpsgd-mlp", "--seed", "1"];
    let with = |extra: &[&'static str]| [&mlp[..], extra].concat();
    let e = refused(&with(&["--hidden", "100000000"]), "hidden", 60);
    assert!(e.contains("needs about"), "{e}");
    for huge in ["1000000000000", "18446744073709551615"] {
        let e = refused(&with(&["--hidden", huge, "--force"]), "hidden", 60);
        assert!(e.contains(UNADDRESSABLE), "{e}");
    }
}

#[test]
fn tune_refuses_days_of_training() {
    let space = temp_file(
        "limits",
        "epochs.toml",
        "learning_rate = { values = [1.0] }\nclip_norm = { values = [1.0] }\n\
         epochs = { values = [10000] }\nbatch_size = { values = [1] }\n",
    );
    let e = refused(
        &[
            "tune",
            "--space",
            space.to_str().expect("UTF-8 path"),
            "--public-size",
            "1000000000",
        ],
        "epochs",
        60,
    );
    assert!(e.contains("would take about"), "{e}");
}

#[test]
fn gp_refuses_a_hundred_thousand_rows() {
    let mut csv = String::from("x,y\n");
    for i in 0..100_000 {
        let x = (i % 1000) as f64 / 500.0 - 1.0;
        csv.push_str(&format!("{x},{}\n", x * x));
    }
    let data = temp_file("limits", "gp100k.csv", &csv);
    let e = refused(
        &[
            "gp",
            "--data",
            data.to_str().expect("UTF-8 path"),
            "--x",
            "x",
            "--y",
            "y",
            "--y-range",
            "-1,2",
            "--x-range",
            "-1,1",
        ],
        "data",
        60,
    );
    assert!(e.contains("needs about"), "{e}");
    let _ = std::fs::remove_file(data);
}

#[test]
fn force_applies_to_study_only_with_recommend() {
    let out = dptune(&["study", "--force", "--n", "100"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--recommend"), "{stderr}");
}
