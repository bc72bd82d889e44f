//! `dptune`: differentially private hyperparameter tuning from the command line.
//!
//! A thin layer over the `dptune` library (DESIGN.md, "Interfaces"): human output by default,
//! `--json` for one machine-readable object, exit code 0 ok, 2 bad input (or output that could
//! not be written), 3 refused, 141 when the reader closed standard output early (`output`).

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

mod account;
mod budget;
mod federated;
mod flags;
mod gp;
mod limits;
mod output;
mod plot_file;
mod profile_plot;
mod progress;
mod report;
mod select;
mod study;
mod tune;

use plot_file::Delivery;
use report::Failure;

/// Differentially private hyperparameter tuning with exact accounting.
#[derive(Parser)]
#[command(name = "dptune", version, about)]
struct Cli {
    /// Print one JSON object instead of the human-readable report.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Privacy accounting: Gaussian, DP-SGD, zCDP.
    Account(account::AccountArgs),
    /// Persistent privacy budgets: create, show, list, history (charged with --budget).
    Budget(budget::BudgetArgs),
    /// Choose among scored candidates privately.
    Select(select::SelectArgs),
    /// Federated private hyperparameter voting (DP-HYPE).
    Federated(federated::FederatedArgs),
    /// DP Gaussian-process regression: private lengthscale selection and cloaked predictions.
    Gp(gp::GpArgs),
    /// Privately tune a DP learner on a dataset and fit the chosen configuration.
    Tune(tune::TuneArgs),
    /// Utility study: regret of each private tuner against the best, per budget.
    Study(study::StudyArgs),
}

fn run(command: Command) -> Result<Delivery, Failure> {
    match command {
        Command::Account(args) => account::run(args),
        Command::Budget(args) => budget::run(args).map(Delivery::from),
        Command::Select(args) => select::run(args).map(Delivery::from),
        Command::Federated(args) => federated::run(args).map(Delivery::from),
        Command::Gp(args) => gp::run(args),
        Command::Tune(args) => tune::run(args).map(Delivery::from),
        Command::Study(args) => study::run(args),
    }
}

/// Prints the report, then writes the plot (if any): the report first, because it is what a
/// `--budget` charge paid for and must not be lost to a plot that cannot be written. The plot
/// is written even when the report could not be (it is the rest of the release). The status:
/// the report's failure (141 or 2) if any, else the plot's (2), else 0.
fn deliver(done: Delivery, json: bool) -> ExitCode {
    let Delivery { report, plot } = done;
    let text = if json {
        report.json.to_string()
    } else {
        report.human
    };
    let printed = output::report(&text);
    let plotted = plot.map_or(Ok(()), |p| p.write());
    if let Err(f) = &plotted {
        let after = match printed {
            Ok(()) => " (the report was printed in full; only the plot is missing)",
            Err(_) => "",
        };
        output::note(&format!("error: {}{after}", f.message));
    }
    match (printed, plotted) {
        (Err(e), _) => output::failed(&e),
        (Ok(()), Err(f)) => ExitCode::from(f.code as u8),
        (Ok(()), Ok(())) => ExitCode::SUCCESS,
    }
}

fn main() -> ExitCode {
    let matches = match flags::command(Cli::command()).try_get_matches() {
        Ok(m) => m,
        Err(e) => return output::clap(&e),
    };
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => return output::clap(&e),
    };
    flags::set_path(&matches);
    match run(cli.command) {
        Ok(done) => deliver(done, cli.json),
        Err(f) => {
            output::note(&format!("error: {}", f.message));
            ExitCode::from(f.code as u8)
        }
    }
}
