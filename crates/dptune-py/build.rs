//! Builds the `dptune` command-line tool (crates/dptune-cli) for the Python wheel, so that
//! `pip install dptune-….whl` gives the same `dptune` command as `cargo build --release`,
//! on a machine without Rust.
//!
//! Why a build script: maturin packs one Rust artifact per wheel (the extension module), and a
//! Python entry point that runs the CLI inside the interpreter would change its signal handling
//! (Ctrl-C, SIGPIPE) and pull the CLI's dependencies into the extension. maturin does copy any
//! file under the wheel data directory (`wheel-data/scripts/` here, see pyproject.toml) into the
//! environment's `bin/`: `wheel-data/scripts/dptune` is a link (in git) to `cli-bin/dptune`, which
//! this script fills before maturin writes the wheel.
//!
//! It runs only with the `cli` feature, which pyproject.toml turns on for every maturin build
//! (`maturin build`, `pip install ./crates/dptune-py`, `maturin develop`); `cargo build`, `test`
//! and `clippy --workspace` leave it off.
//! The nested cargo uses its own target directory under OUT_DIR: the outer cargo holds the lock
//! on its own, so sharing it would deadlock. The CLI is built in release mode without debug info
//! and stripped, like the extension.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn main() {
    if env::var_os("CARGO_FEATURE_CLI").is_none() {
        return;
    }
    let manifest_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let workspace = manifest_dir.join("../..");
    for input in [
        "crates/dptune-cli",
        "crates/dptune",
        "Cargo.toml",
        "Cargo.lock",
    ] {
        println!("cargo:rerun-if-changed={}", workspace.join(input).display());
    }
    println!("cargo:rerun-if-env-changed=RUSTFLAGS");

    let target_dir = PathBuf::from(env::var_os("OUT_DIR").expect("set by cargo")).join("cli");
    let target = env::var("TARGET").expect("set by cargo");
    let cross = env::var("HOST").expect("set by cargo") != target;
    let mut cargo = Command::new(env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cargo
        .arg("build")
        .arg("--release")
        .args(["-p", "dptune-cli", "--bin", "dptune"])
        .arg("--manifest-path")
        .arg(workspace.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target_dir)
        .env("CARGO_PROFILE_RELEASE_DEBUG", "0")
        .env("CARGO_PROFILE_RELEASE_STRIP", "true")
        // Set by the outer cargo for this script's own crate; the CLI gets the user's RUSTFLAGS.
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        // Cargo reads this script's standard output for directives: the log goes to stderr.
        .stdout(Stdio::from(std::io::stderr()));
    if cross {
        cargo.args(["--target", &target]);
    }
    let status = cargo
        .status()
        .expect("build.rs: could not run cargo to build the dptune command-line tool");
    assert!(
        status.success(),
        "build.rs: building the dptune command-line tool (crates/dptune-cli) failed: {status}"
    );

    let mut built = target_dir;
    if cross {
        built.push(&target);
    }
    install(
        &built.join("release/dptune"),
        &manifest_dir.join("cli-bin/dptune"),
    );
}

/// Copies the binary where the committed link `wheel-data/scripts/dptune` points, replacing the
/// file at once (a rename), so that an interrupted build never leaves half a binary to pack.
fn install(built: &Path, dest: &Path) {
    let dir = dest.parent().expect("a file path");
    fs::create_dir_all(dir).expect("build.rs: cannot create cli-bin/");
    let partial = dir.join(".dptune.partial");
    fs::copy(built, &partial)
        .unwrap_or_else(|e| panic!("build.rs: cannot copy {}: {e}", built.display()));
    fs::rename(&partial, dest).expect("build.rs: cannot move the CLI into cli-bin/");
}
