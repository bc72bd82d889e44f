//! Replays every checked-in fuzz input of the CLI targets (the seed corpus under
//! `fuzz/seeds/<target>/` and the minimised crash inputs under `tests/data/fuzz/<target>/`)
//! through the same command lines the fuzzers use: `dptune` must never exit 101 (panic) or
//! die by a signal (134, abort).

use std::path::{Path, PathBuf};

#[path = "../../../fuzz/src/cli.rs"]
mod cli;

#[test]
fn cli_inputs_exit_in_order() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bin = Path::new(env!("CARGO_BIN_EXE_dptune"));
    for (target, name) in cli::Target::ALL {
        let mut files: Vec<PathBuf> = Vec::new();
        for dir in [
            root.join("../../fuzz/seeds").join(name),
            root.join("tests/data/fuzz").join(name),
        ] {
            if let Ok(entries) = std::fs::read_dir(&dir) {
                files.extend(entries.map(|e| e.expect("readable folder").path()));
            }
        }
        files.sort();
        assert!(!files.is_empty(), "no inputs for {name}");
        for f in files {
            let data = std::fs::read(&f).expect("readable input");
            let status = cli::run(bin, target, &data);
            assert!(
                cli::orderly(status),
                "{name}: {} exits {status}",
                f.display()
            );
        }
    }
}

/// Found while checking the reach of the CLI targets: `--candidates 10^12` made
/// `study --recommend` abort (exit 134) allocating its model table; now exit 2. (Without a
/// table: a table beside `--candidates` is refused as unused.)
#[test]
fn study_recommend_with_too_many_candidates_is_refused() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_dptune"))
        .arg("study")
        .args([
            "--n",
            "100",
            "--recommend",
            "--epsilon",
            "1",
            "--candidates",
            "1000000000000",
        ])
        .output()
        .expect("dptune runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("candidates"), "{stderr}");
}
