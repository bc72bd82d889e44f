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

use dptune::budget::report::{BudgetHistory, BudgetList, BudgetReport};
use dptune::budget::{store_path, Store};
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
        /// Also show when each charge was committed: a NOT PRIVATE curator-side record (a
        /// charge is committed as its command starts, so the gaps reveal run times).
        #[arg(long)]
        times: bool,
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
            let r = BudgetReport::new(&st, &path);
            Report::of(&r, format!("created {}", status(&r)))
        }
        BudgetCommand::Show { name, store } => {
            let path = store.path()?;
            let st = Store::open(&path)?.status(&name)?;
            let r = BudgetReport::new(&st, &path);
            Report::of(&r, status(&r))
        }
        BudgetCommand::List { store } => {
            let path = store.path()?;
            let s = Store::open(&path)?;
            let all = s
                .names()?
                .iter()
                .map(|n| s.status(n))
                .collect::<dptune::Result<Vec<_>>>()?;
            let r = BudgetList::new(&all, &path);
            let mut human = format!("budgets in {}:", r.store);
            if r.budgets.is_empty() {
                human.push_str(" none");
            }
            for b in &r.budgets {
                let sp = &b.spent;
                human.push_str(&format!(
                    "\n  {}: spent eps = {} of {} at delta = {} ({} charges, {})",
                    b.name,
                    fmt_param(sp.epsilon),
                    fmt_param(b.epsilon),
                    fmt_param(b.delta),
                    sp.charges,
                    b.neighbours
                ));
            }
            Report::of(&r, human)
        }
        BudgetCommand::History { name, store, times } => {
            let path = store.path()?;
            let s = Store::open(&path)?;
            let st = s.status(&name)?;
            let (_, charges) = s.history(&name)?;
            let r = BudgetHistory::new(&st, &charges, &path, times);
            let mut human = status(&r.budget);
            human.push_str("\ncharges (eps each at the budget's delta, alone):");
            if r.charges.is_empty() {
                human.push_str(" none");
            }
            for c in &r.charges {
                let time = c.curator.as_ref().map_or(String::new(), |t| {
                    format!(" [NOT PRIVATE, curator only: {}]", t.time)
                });
                human.push_str(&format!(
                    "\n  #{}{time} {}: eps = {}; {}\n      {}",
                    c.seq,
                    c.command,
                    c.epsilon.map_or("-".to_string(), fmt_param),
                    c.description,
                    c.label
                ));
            }
            Report::of(&r, human)
        }
    }
}

/// A budget's human rendering.
fn status(r: &BudgetReport) -> String {
    let s = &r.spent;
    format!(
        "budget `{}` ({})\n  allowance: eps = {}, delta = {}\n  spent:     eps = {} at delta \
         = {}, {} charges\n  route:     {}: {}\n  created:   {}\n  store:     {}",
        r.name,
        r.neighbours,
        fmt_param(r.epsilon),
        fmt_param(r.delta),
        fmt_param(s.epsilon),
        fmt_param(s.delta),
        s.charges,
        s.route,
        s.method,
        r.created,
        r.store
    )
}
