//! `dptune`: differentially private hyperparameter tuning from the command line.
//!
//! A thin layer over the `dptune` library (DESIGN.md, "Interfaces"): human output by default,
//! `--json` for one machine-readable object, exit code 0 ok, 2 bad input, 3 refused.

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

mod account;
mod budget;
mod federated;
mod flags;
mod gp;
mod plot_file;
mod profile_plot;
mod report;
mod select;
mod study;
mod tune;

use report::{Failure, Report};

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

fn run(command: Command, json: bool) -> Result<Report, Failure> {
    match command {
        Command::Account(args) => account::run(args),
        Command::Budget(args) => budget::run(args),
        Command::Select(args) => select::run(args),
        Command::Federated(args) => federated::run(args, json),
        Command::Gp(args) => gp::run(args),
        Command::Tune(args) => tune::run(args, json),
        Command::Study(args) => study::run(args, json),
    }
}

fn main() -> ExitCode {
    let matches = flags::command(Cli::command()).get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    flags::set_path(&matches);
    match run(cli.command, cli.json) {
        Ok(report) => {
            if cli.json {
                println!("{}", report.json);
            } else {
                println!("{}", report.human);
            }
            ExitCode::SUCCESS
        }
        Err(f) => {
            eprintln!("error: {}", f.message);
            ExitCode::from(f.code as u8)
        }
    }
}
