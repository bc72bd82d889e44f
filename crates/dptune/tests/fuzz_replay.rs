//! Replays every checked-in fuzz input of the library targets (the seeds under
//! `fuzz/seeds/<target>/`, the campaign's minimised corpus under `fuzz/minimized/<target>/` and the
//! minimised crash inputs under `tests/data/fuzz/<target>/`) through the same entry points the
//! fuzzers use, on the stable toolchain: none may panic.

use std::path::{Path, PathBuf};

#[path = "../../../fuzz/src/library.rs"]
mod library;

/// Every file of `<target>` in the seeds, the corpus and the crash folder, sorted.
fn inputs(target: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in [
        root.join("../../fuzz/seeds").join(target),
        root.join("../../fuzz/minimized").join(target),
        root.join("tests/data/fuzz").join(target),
    ] {
        if let Ok(entries) = std::fs::read_dir(&dir) {
            files.extend(entries.map(|e| e.expect("readable folder").path()));
        }
    }
    files.sort();
    files
}

fn replay(target: &str, entry: fn(&[u8])) {
    let files = inputs(target);
    assert!(!files.is_empty(), "no inputs for {target}");
    for f in files {
        let data = std::fs::read(&f).expect("readable input");
        if std::panic::catch_unwind(|| entry(&data)).is_err() {
            panic!("{target}: {} panics", f.display());
        }
    }
}

#[test]
fn csv_schema_inputs_do_not_panic() {
    replay("csv_schema", library::csv_schema);
}

#[test]
fn select_inputs_do_not_panic() {
    replay("select", library::select);
}

#[test]
fn gp_inputs_do_not_panic() {
    replay("gp", library::gp);
}

#[test]
fn study_inputs_do_not_panic() {
    replay("study", library::study);
}

#[test]
fn secagg_client_inputs_do_not_panic() {
    replay("secagg_client", library::secagg_client);
}

#[test]
fn secagg_server_inputs_do_not_panic() {
    replay("secagg_server", library::secagg_server);
}
