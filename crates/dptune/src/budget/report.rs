//! The reports of `dptune budget ...`: one serialisable type per subcommand, which the CLI
//! renders (text or `--json`).
//!
//! A budget store holds only what callers charged: allowances declared by the analyst and the
//! costs of commands, each computed from public inputs before anything ran (the module doc of
//! `budget`). So every field below is a **public input** (a name, an allowance, a label, a
//! charged guarantee, echoed) or **public, computed** from those (DESIGN.md, `Report`), with
//! one exception: the time of each charge. A charge is committed as its command starts, so the
//! gap between two charges bounds the run time of the first command, and a run time can reveal
//! what the guarantee hides (the number of candidate runs of a tuning, the size of the data).
//! The times are a **curator-side record**: `budget history` shows them only when asked
//! (`--times`), inside an object labelled `"not_private": true` ([`CuratorRecord`]).

use std::path::Path;

use serde::Serialize;

use super::{ChargeRecord, Spent, Status};
use crate::privacy::{Guarantee, Neighbours};

/// `dptune budget create` and `show`: a budget and what it has spent.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BudgetReport {
    /// Public input: the budget's name.
    pub name: String,
    /// Public input: ε of the allowance.
    pub epsilon: f64,
    /// Public input: δ of the allowance.
    pub delta: f64,
    /// Public input: the relation every charge is stated under.
    pub neighbours: Neighbours,
    /// Public input: when the budget was created (ISO 8601, UTC).
    pub created: String,
    /// Public input: the store file.
    pub store: String,
    /// Public, computed: the composition of the charges at the budget's δ.
    pub spent: Spent,
}

impl BudgetReport {
    /// The report of `status`, read from the store at `store`.
    pub fn new(status: &Status, store: &Path) -> Self {
        let b = &status.budget;
        Self {
            name: b.name.clone(),
            epsilon: b.epsilon,
            delta: b.delta,
            neighbours: b.neighbours,
            created: utc(b.created),
            store: store.display().to_string(),
            spent: status.spent.clone(),
        }
    }
}

/// `dptune budget list`: every budget of a store.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BudgetList {
    /// Public input: the store file.
    pub store: String,
    /// Public, computed: each budget, in the store's order of names.
    pub budgets: Vec<BudgetReport>,
}

impl BudgetList {
    /// The report of the budgets `all` of the store at `store`.
    pub fn new(all: &[Status], store: &Path) -> Self {
        Self {
            store: store.display().to_string(),
            budgets: all.iter().map(|st| BudgetReport::new(st, store)).collect(),
        }
    }
}

/// `dptune budget history`: a budget and every charge made to it, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BudgetHistory {
    /// The budget, as `show` reports it.
    #[serde(flatten)]
    pub budget: BudgetReport,
    /// Public input: the charges, oldest first.
    pub charges: Vec<ChargeReport>,
}

impl BudgetHistory {
    /// The report of `status` and its `charges`, read from the store at `store`; with `times`,
    /// each charge's [`CuratorRecord`] (when it was committed).
    pub fn new(status: &Status, charges: &[ChargeRecord], store: &Path, times: bool) -> Self {
        let delta = status.budget.delta;
        Self {
            budget: BudgetReport::new(status, store),
            charges: charges
                .iter()
                .map(|c| ChargeReport::new(c, delta, times))
                .collect(),
        }
    }
}

/// What [`CuratorRecord`] says it is.
pub const CURATOR_ONLY: &str = "NOT PRIVATE: curator-side record, not for release (a charge is \
     committed as its command starts, so the gaps between charges reveal run times)";

/// One committed charge.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChargeReport {
    /// Public input: its position in the budget's history, from 1.
    pub seq: u64,
    /// Curator-side record, only when asked for (`--times`): when it was committed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub curator: Option<CuratorRecord>,
    /// Public input: the command that charged it.
    pub command: String,
    /// Public input: the caller's label (the CLI's command line).
    pub label: String,
    /// Public input: what was charged.
    pub guarantee: Guarantee,
    /// Public, computed: `guarantee` for people.
    pub description: String,
    /// Public, computed: ε of this charge alone at the budget's δ (null where it has none
    /// there, e.g. an (ε, δ) charge with a larger δ).
    pub epsilon: Option<f64>,
}

/// When a charge was committed: for the curator who runs the commands, NOT PRIVATE for anyone
/// else. The gaps between successive charges bound the commands' run times, which are not
/// covered by any guarantee (a tuning's run time grows with its secret number of runs).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CuratorRecord {
    /// Always true: this object is not covered by any guarantee.
    pub not_private: bool,
    /// [`CURATOR_ONLY`].
    pub label: &'static str,
    /// When the charge was committed (ISO 8601, UTC).
    pub time: String,
}

impl ChargeReport {
    /// The report of `c`, a charge to a budget of δ = `delta`, with its [`CuratorRecord`] if
    /// `time`.
    pub fn new(c: &ChargeRecord, delta: f64, time: bool) -> Self {
        Self {
            seq: c.seq,
            curator: time.then(|| CuratorRecord {
                not_private: true,
                label: CURATOR_ONLY,
                time: utc(c.time),
            }),
            command: c.command.clone(),
            label: c.label.clone(),
            guarantee: c.guarantee.clone(),
            description: c.guarantee.to_string(),
            epsilon: c.guarantee.epsilon(delta).ok(),
        }
    }
}

/// Seconds since the Unix epoch as an ISO 8601 UTC time (proleptic Gregorian calendar).
pub fn utc(secs: i64) -> String {
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Days since 1970-01-01 to a civil date, counting in 400-year eras from 0000-03-01.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::Store;

    #[test]
    fn utc_dates() {
        assert_eq!(utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(utc(1_796_053_774), "2026-11-30T15:49:34Z");
        assert_eq!(utc(-1), "1969-12-31T23:59:59Z");
    }

    #[test]
    fn a_history_is_the_budget_with_its_charges_beside_it() {
        let dir = std::env::temp_dir().join(format!("dptune-report-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("budget.sqlite");
        let _ = std::fs::remove_file(&path);
        let mut store = Store::open_or_create(&path).unwrap();
        store.create("b", 1.0, 1e-6, Neighbours::Replace).unwrap();
        let cost = Guarantee::pure(0.25, Neighbours::Replace).unwrap();
        let st = store.charge("b", &cost, "label", "select").unwrap();
        let (_, charges) = store.history("b").unwrap();
        let h = BudgetHistory::new(&st, &charges, &path, false);
        let v = serde_json::to_value(&h).unwrap();
        assert_eq!(v["name"], "b");
        assert_eq!(v["neighbours"], "replace_one");
        assert_eq!(v["spent"]["charges"], 1);
        assert_eq!(v["charges"][0]["epsilon"], 0.25);
        assert_eq!(v["charges"][0]["command"], "select");
        assert!(
            v.get("budget").is_none(),
            "the budget's fields are at the top level"
        );
        // Review item: the time of each charge was released as a public input, but the gaps
        // between charges reveal run times. It is a labelled curator-side record, on request.
        assert!(v["charges"][0].get("time").is_none(), "{v}");
        assert!(v["charges"][0].get("curator").is_none(), "{v}");
        let timed = serde_json::to_value(BudgetHistory::new(&st, &charges, &path, true)).unwrap();
        let record = &timed["charges"][0]["curator"];
        assert_eq!(record["not_private"], true, "{timed}");
        assert!(record["label"].as_str().unwrap().contains("curator-side"));
        assert_eq!(record["time"].as_str().unwrap().len(), 20, "{timed}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
