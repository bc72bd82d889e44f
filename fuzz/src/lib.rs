//! Fuzz harness of dptune (see `docs/FUZZING.md`): the entry points shared by the libFuzzer
//! targets and the stable replay tests.

pub mod cli;
pub mod library;
