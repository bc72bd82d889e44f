#![no_main]
//! Runs the binary named by `DPTUNE_BIN` (see `dptune_fuzz::cli`).

use dptune_fuzz::cli::{orderly, run, Target};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let bin = std::env::var_os("DPTUNE_BIN").expect("set DPTUNE_BIN to the dptune binary");
    let status = run(bin.as_ref(), Target::Select, data);
    assert!(orderly(status), "dptune exited {status}");
});
