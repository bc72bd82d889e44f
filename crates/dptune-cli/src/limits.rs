//! `--force`, and the resource check each heavy command makes before it charges a budget or
//! runs a mechanism (library: `dptune::resources`).

use clap::Args;

use dptune::resources::{Estimate, Limits};

use crate::report::Failure;

/// `--force` of a command whose memory or time is estimated before it runs.
#[derive(Args)]
pub struct Force {
    /// Run even if the estimated memory or time exceeds what this machine has (never past what
    /// a 64-bit process can address).
    #[arg(long)]
    force: bool,
}

impl Force {
    /// Refuses (exit 2) a job whose `estimate` exceeds this machine, naming the parameter and
    /// the estimate, unless `--force` is given.
    pub fn check(&self, estimate: &Estimate) -> Result<(), Failure> {
        check(estimate, self.force)
    }
}

/// [`Force::check`] for a command whose `--force` only applies to one mode (and is declared
/// with its own `requires`).
pub fn check(estimate: &Estimate, force: bool) -> Result<(), Failure> {
    Ok(Limits::this_machine().check(estimate, force, "use --force to try anyway")?)
}
