//! `dptune budget`: persistent privacy budgets (library: `dptune::budget`), and
//! [`BudgetCharge`], the `--budget NAME [--store PATH]` options of the commands that release
//! something (`tune`, `select`, `gp`, `federated simulate`).
//!
//! A command with `--budget` charges its whole cost, computed from public inputs, and the
//! charge is committed before the command runs any mechanism or prints anything; a cost that
//! does not fit exits 3 and nothing is released. The store is `--store`, else
//! `$DPTUNE_STORE`, else `budget.sqlite` in dptune's folder of the user's data directory.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use serde_json::{json, Value};

use dptune::budget::{neighbours_name, store_path, ChargeRecord, Status, Store};
use dptune::privacy::{Guarantee, Neighbours};

use crate::flags::NeighboursArg;
use crate::report::{fmt_param, Failure, Report};

/// The store option shared by every budget subcommand.
#[derive(Args)]
struct StoreArg {
    /// The budget store file (default: $DPTUNE_STORE, else budget.sqlite in dptune's folder of
    /// the user's data directory).
    #[arg(long, value_name = "PATH")]
    store: Option<PathBuf>,
}

impl StoreArg {
    fn path(&self) -> Result<PathBuf, Failure> {
        Ok(store_path(self.store.as_deref())?)
    }
}

/// `--budget NAME [--store PATH]` of a command that releases something.
#[derive(Args)]
pub struct BudgetCharge {
    /// Charge this command's whole privacy cost to the budget NAME (see `dptune budget`)
    /// before anything is released; a cost that does not fit exits 3 and releases nothing.
    #[arg(long, value_name = "NAME")]
    budget: Option<String>,
    /// The budget store file (default: $DPTUNE_STORE, else budget.sqlite in dptune's folder of
    /// the user's data directory).
    #[arg(long, value_name = "PATH", requires = "budget")]
    store: Option<PathBuf>,
}

impl BudgetCharge {
    /// Charges `cost` to the budget given with `--budget`, if any, and returns once the charge
    /// is committed. Call it before the first mechanism runs. The command line is the label.
    pub fn charge(&self, command: &str, cost: &Guarantee) -> Result<(), Failure> {
        let Some(name) = &self.budget else {
            return Ok(());
        };
        let path = store_path(self.store.as_deref())?;
        let label = std::iter::once("dptune".to_string())
            .chain(
                std::env::args_os()
                    .skip(1)
                    .map(|a| a.to_string_lossy().into_owned()),
            )
            .collect::<Vec<_>>()
            .join(" ");
        let st = Store::open(&path)?
            .charge(name, cost, &label, command)
            .map_err(|e| {
                let mut f = Failure::from(e);
                if f.code == 3 {
                    f.message.push_str("; nothing was released");
                }
                f
            })?;
        crate::output::note(&format!(
            "budget `{name}`: charged {cost}; spent eps = {} of {} at delta = {} over {} charges",
            fmt_param(st.spent.epsilon),
            fmt_param(st.budget.epsilon),
            fmt_param(st.budget.delta),
            st.spent.charges
        ));
        Ok(())
    }
}

/// Persistent privacy budgets shared by runs and processes.
#[derive(Args)]
pub struct BudgetArgs {
    #[command(subcommand)]
    command: BudgetCommand,
}

#[derive(Subcommand)]
enum BudgetCommand {
    /// Create a budget (and the store, if there is none).
    Create {
        /// The budget's name.
        name: String,
        /// Total epsilon of the allowance.
        #[arg(long)]
        epsilon: f64,
        /// Total delta of the allowance (0: pure epsilon-DP, which only pure charges fit).
        #[arg(long)]
        delta: f64,
        /// The neighbour relation every charge must be stated under.
        #[arg(long, value_enum)]
        neighbours: NeighboursArg,
        #[command(flatten)]
        store: StoreArg,
    },
    /// Show a budget: its allowance and what it has spent.
    Show {
        /// The budget's name.
        name: String,
        #[command(flatten)]
        store: StoreArg,
    },
    /// List every budget of the store.
    List {
        #[command(flatten)]
        store: StoreArg,
    },
    /// Every charge made to a budget, oldest first.
    History {
        /// The budget's name.
        name: String,
        #[command(flatten)]
        store: StoreArg,
    },
}

/// Runs `dptune budget`.
pub fn run(args: BudgetArgs) -> Result<Report, Failure> {
    match args.command {
        BudgetCommand::Create {
            name,
            epsilon,
            delta,
            neighbours,
            store,
        } => {
            let path = store.path()?;
            let n = Neighbours::from(neighbours);
            let st = Store::open_or_create(&path)?.create(&name, epsilon, delta, n)?;
            let (json, human) = status(&st, &path);
            Ok(Report {
                json,
                human: format!("created {human}"),
            })
        }
        BudgetCommand::Show { name, store } => {
            let path = store.path()?;
            let st = Store::open(&path)?.status(&name)?;
            let (json, human) = status(&st, &path);
            Ok(Report { json, human })
        }
        BudgetCommand::List { store } => {
            let path = store.path()?;
            let s = Store::open(&path)?;
            let all = s
                .names()?
                .iter()
                .map(|n| s.status(n))
                .collect::<dptune::Result<Vec<_>>>()?;
            let mut human = format!("budgets in {}:", path.display());
            if all.is_empty() {
                human.push_str(" none");
            }
            for st in &all {
                let (b, sp) = (&st.budget, &st.spent);
                human.push_str(&format!(
                    "\n  {}: spent eps = {} of {} at delta = {} ({} charges, {})",
                    b.name,
                    fmt_param(sp.epsilon),
                    fmt_param(b.epsilon),
                    fmt_param(b.delta),
                    sp.charges,
                    neighbours_name(b.neighbours)
                ));
            }
            Ok(Report {
                json: json!({
                    "store": path.display().to_string(),
                    "budgets": all.iter().map(|st| status(st, &path).0).collect::<Vec<_>>(),
                }),
                human,
            })
        }
        BudgetCommand::History { name, store } => {
            let path = store.path()?;
            let s = Store::open(&path)?;
            let st = s.status(&name)?;
            let (_, charges) = s.history(&name)?;
            let delta = st.budget.delta;
            let mut human = status(&st, &path).1;
            human.push_str("\ncharges (eps each at the budget's delta, alone):");
            if charges.is_empty() {
                human.push_str(" none");
            }
            for c in &charges {
                human.push_str(&format!(
                    "\n  #{} {} {}: eps = {}; {}\n      {}",
                    c.seq,
                    utc(c.time),
                    c.command,
                    c.guarantee
                        .epsilon(delta)
                        .map_or("-".to_string(), fmt_param),
                    c.guarantee,
                    c.label
                ));
            }
            let mut json = status(&st, &path).0;
            json["charges"] = charges.iter().map(|c| charge_json(c, delta)).collect();
            Ok(Report { json, human })
        }
    }
}

/// A budget's JSON object and human rendering.
fn status(st: &Status, path: &std::path::Path) -> (Value, String) {
    let (b, s) = (&st.budget, &st.spent);
    let json = json!({
        "name": b.name,
        "epsilon": b.epsilon,
        "delta": b.delta,
        "neighbours": neighbours_name(b.neighbours),
        "created": utc(b.created),
        "store": path.display().to_string(),
        "spent": s,
    });
    let human = format!(
        "budget `{}` ({})\n  allowance: eps = {}, delta = {}\n  spent:     eps = {} at delta \
         = {}, {} charges\n  route:     {}: {}\n  created:   {}\n  store:     {}",
        b.name,
        neighbours_name(b.neighbours),
        fmt_param(b.epsilon),
        fmt_param(b.delta),
        fmt_param(s.epsilon),
        fmt_param(s.delta),
        s.charges,
        s.route,
        s.method,
        utc(b.created),
        path.display()
    );
    (json, human)
}

fn charge_json(c: &ChargeRecord, delta: f64) -> Value {
    json!({
        "seq": c.seq,
        "time": utc(c.time),
        "command": c.command,
        "label": c.label,
        "guarantee": c.guarantee,
        "description": c.guarantee.to_string(),
        "epsilon": c.guarantee.epsilon(delta).ok(),
    })
}

/// Seconds since the Unix epoch as an ISO 8601 UTC time (proleptic Gregorian calendar).
fn utc(secs: i64) -> String {
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
    use super::utc;

    #[test]
    fn utc_dates() {
        assert_eq!(utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(utc(1_796_053_774), "2026-11-30T15:49:34Z");
        assert_eq!(utc(-1), "1969-12-31T23:59:59Z");
    }
}
