//! A persistent privacy budget: named allowances and every charge made against them, kept in
//! a SQLite file that many processes share.
//!
//! A budget is an (ε, δ) allowance (pure ε when δ = 0) under one neighbour relation. A
//! command charges its whole cost, known from public inputs, with [`Store::charge`] *before* it
//! releases anything: the charge is checked against the composition of all earlier charges and
//! written in one `BEGIN IMMEDIATE` transaction, so
//!
//! * a process killed at any point has either committed its charge or released nothing (it
//!   releases only after the commit returns, and a commit is durable: WAL with
//!   `synchronous = FULL`);
//! * processes charging one budget at once are serialised by SQLite's write lock: each check
//!   sees every charge committed before it, so together they never overspend;
//! * a charge under another neighbour relation, or one that does not fit, is refused
//!   ([`Error::NeighboursMismatch`], [`Error::BudgetExceeded`]) and nothing is written.
//!
//! What has been spent is the composition of the charges through the library's [`Ledger`]
//! (zCDP, RDP and pure bounds composed and converted once at the budget's δ), never a plain
//! sum of epsilons; [`Spent`] names the route. A store that is missing, empty, not dptune's,
//! truncated or corrupted is an [`Error::Store`], never silently replaced (`schema`, `seal`).
//!
//! Layering: this module uses [`crate::privacy`] and [`crate::error`] only; the command-line
//! tool (and any front end) calls it with each command's cost.
//!
//! [`Ledger`]: crate::privacy::Ledger

mod account;
mod codec;
pub mod report;
mod schema;
mod seal;
mod store;

use std::path::{Path, PathBuf};

pub use account::Spent;
pub use store::{Budget, ChargeRecord, Status, Store};

use crate::error::{Error, Result};
use crate::privacy::Neighbours;

/// The environment variable that names the store when no path is given.
pub const STORE_ENV: &str = "DPTUNE_STORE";

/// The store to use: `explicit` if given, else `$DPTUNE_STORE` if set and non-empty, else
/// `budget.sqlite` in dptune's folder of the user's data directory (`$XDG_DATA_HOME/dptune`
/// or `~/.local/share/dptune` on Linux, the platform's equivalent elsewhere).
pub fn store_path(explicit: Option<&Path>) -> Result<PathBuf> {
    if let Some(p) = explicit {
        return Ok(p.to_path_buf());
    }
    if let Some(p) = std::env::var_os(STORE_ENV).filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(p));
    }
    dirs::data_dir()
        .map(|d| d.join("dptune").join("budget.sqlite"))
        .ok_or_else(|| Error::Store {
            path: "(default)".into(),
            reason: format!(
                "no user data directory is known here; pass --store or set {STORE_ENV}"
            ),
        })
}

/// The one spelling of a neighbour relation in the store and in reports.
pub fn neighbours_name(n: Neighbours) -> &'static str {
    match n {
        Neighbours::AddRemove => "add_remove",
        Neighbours::Replace => "replace_one",
    }
}

fn parse_neighbours(s: &str) -> Option<Neighbours> {
    [Neighbours::AddRemove, Neighbours::Replace]
        .into_iter()
        .find(|&n| neighbours_name(n) == s)
}
