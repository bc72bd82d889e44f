//! The real `dptune` binary as the CLI tests run it: its output, its one JSON object, and
//! scratch files for its inputs.

#![allow(dead_code)] // each including test uses a different subset

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

/// Runs `dptune` with `args`.
pub fn dptune(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dptune"))
        .args(args)
        .output()
        .expect("dptune runs")
}

/// `federated simulate` on the first `rows` rows of MNIST-5k, 8 clients, one local epoch and
/// one FedAvg round (text output; add `--json` before it): well under a second in a release
/// build.
pub fn small_simulation(rows: &str) -> [&str; 12] {
    [
        "federated",
        "simulate",
        "--dataset",
        "mnist5k",
        "--rows",
        rows,
        "--clients",
        "8",
        "--local-epochs",
        "1",
        "--fedavg-rounds",
        "1",
    ]
}

/// Runs `dptune --json <args>`, asserts success and a single line on stdout (one JSON object),
/// and parses it.
pub fn run_json(args: &[&str]) -> Value {
    let all = [&["--json"], args].concat();
    let out = dptune(&all);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).expect("UTF-8 output");
    assert_eq!(text.trim().lines().count(), 1, "one JSON object: {text}");
    serde_json::from_str(&text).expect("JSON output")
}

/// A file holding `text` in the temp directory, named for this process, `tag` and `name` (the
/// same name gives the same path: some tests compare outputs that show it). Written under a
/// name of its own and renamed into place, so a test of the same binary (they run in parallel
/// threads of one process) that writes the same file never reads it half-written; two tests
/// must not give one name different texts.
pub fn temp_file(tag: &str, name: &str, text: &str) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let p = std::env::temp_dir().join(format!("dptune-{tag}-{}-{name}", std::process::id()));
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let part = p.with_file_name(format!(".dptune-{}-{n}.part", std::process::id()));
    std::fs::write(&part, text).expect("temp file written");
    std::fs::rename(&part, &p).expect("temp file renamed into place");
    p
}
