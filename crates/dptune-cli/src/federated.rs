//! `dptune federated simulate`: the DP-HYPE simulation (library: `dptune::federated::sim`).

use clap::{Args, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;

use dptune::federated::sim::{Partition, SimConfig};
use dptune::federated::sim_data::SimDataset;

use crate::report::{fmt_param, Failure, Report};

/// Federated private hyperparameter voting (DP-HYPE).
#[derive(Args)]
pub struct FederatedArgs {
    #[command(subcommand)]
    command: FederatedCommand,
}

#[derive(Subcommand)]
enum FederatedCommand {
    /// Simulate DP-HYPE in-process over real data, through the real protocol messages.
    Simulate(SimulateArgs),
}

#[derive(Clone, Copy, ValueEnum)]
enum Dataset {
    Adult,
    Mnist5k,
}

#[derive(Args)]
struct SimulateArgs {
    /// Dataset.
    #[arg(long, value_enum, default_value = "adult")]
    dataset: Dataset,
    /// Number of clients n.
    #[arg(long, default_value_t = 100)]
    clients: usize,
    /// Dirichlet(ALPHA) partition over labels (non-iid).
    #[arg(long, value_name = "ALPHA", conflicts_with = "iid")]
    dirichlet: Option<f64>,
    /// Iid partition (the default).
    #[arg(long)]
    iid: bool,
    /// Votes per client.
    #[arg(long, default_value_t = 5)]
    k: usize,
    /// Target epsilon (reached with exactly --min-survivors survivors).
    #[arg(long, default_value_t = 1.0)]
    epsilon: f64,
    /// Delta.
    #[arg(long, default_value_t = 1e-5)]
    delta: f64,
    /// Minimum number of survivors t (default: 80 % of the clients).
    #[arg(long)]
    min_survivors: Option<usize>,
    /// Probability that a client drops out of the protocol.
    #[arg(long, default_value_t = 0.0)]
    dropout_rate: f64,
    /// Local epochs per candidate.
    #[arg(long, default_value_t = 5)]
    local_epochs: usize,
    /// FedAvg rounds for each candidate's reference accuracy.
    #[arg(long, default_value_t = 5)]
    fedavg_rounds: usize,
    /// SecAgg+ neighbour degree (even); default: the complete graph.
    #[arg(long)]
    degree: Option<usize>,
    /// Seed (research mode: the noise is predictable from it).
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

pub fn run(args: FederatedArgs, json: bool) -> Result<Report, Failure> {
    match args.command {
        FederatedCommand::Simulate(a) => simulate(a, json),
    }
}

fn simulate(a: SimulateArgs, json: bool) -> Result<Report, Failure> {
    let t = a.min_survivors.unwrap_or((a.clients * 4).div_ceil(5));
    // SecAgg+: the smallest strict majority of each neighbourhood (degree + 1 members).
    let sparse = a.degree.map(|d| {
        let group = d.min(a.clients.saturating_sub(1)) + 1;
        (d, group / 2 + 1)
    });
    let cfg = SimConfig {
        dataset: match a.dataset {
            Dataset::Adult => SimDataset::Adult,
            Dataset::Mnist5k => SimDataset::Mnist5k,
        },
        clients: a.clients,
        partition: match a.dirichlet {
            Some(alpha) => Partition::Dirichlet(alpha),
            None => Partition::Iid,
        },
        k: a.k,
        epsilon: a.epsilon,
        delta: a.delta,
        min_survivors: t,
        dropout_rate: a.dropout_rate,
        local_epochs: a.local_epochs,
        fedavg_rounds: a.fedavg_rounds,
        sparse,
        rows_limit: None,
        seed: a.seed,
    };
    let bar = if json {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(0)
    };
    bar.set_style(
        ProgressStyle::with_template("{msg:40} [{bar:30}] {pos}/{len} {elapsed}")
            .map_err(|e| Failure::input(e.to_string()))?,
    );
    let r = cfg.run(&|stage, done, total| {
        bar.set_length(total as u64);
        bar.set_message(stage.to_string());
        bar.set_position(done as u64);
    });
    bar.finish_and_clear();
    let r = r?;
    let value = json!({
        "dataset": cfg.dataset,
        "clients": cfg.clients,
        "partition": cfg.partition,
        "k": cfg.k,
        "min_survivors": t,
        "dropout_rate": cfg.dropout_rate,
        "seed": cfg.seed,
        "selected": r.selected,
        "selected_hyperparameters": r.selected_hyperparameters,
        "selected_accuracy": r.selected_accuracy,
        "opt_accuracy": r.opt_accuracy,
        "randguess_accuracy": r.randguess_accuracy,
        "baselines_note": "opt and randguess are non-private oracles and carry no guarantee",
        "survivors": r.survivors,
        "privacy": {
            "epsilon": r.epsilon,
            "delta": r.delta,
            "neighbours": r.neighbours,
            "level": "client",
            "noise": "distributed Skellam",
            "noise_variance": r.noise_variance,
        },
        "noisy_counts": r.noisy_counts,
        "secagg_seconds": { "clients": r.secagg_client_seconds, "server": r.secagg_server_seconds },
    });
    let h = r.selected_hyperparameters;
    let human = format!(
        "DP-HYPE simulation: {} clients, {} survivors\n\
         selected candidate {} (lr {}, decay {}, momentum {}): accuracy {:.4}\n\
         OPT {:.4}, RANDGUESS {:.4} (non-private baselines)\n\
         privacy: client-level ({}) epsilon {} at delta {}",
        cfg.clients,
        r.survivors,
        r.selected,
        h.lr,
        h.decay,
        h.momentum,
        r.selected_accuracy,
        r.opt_accuracy,
        r.randguess_accuracy,
        r.neighbours,
        fmt_param(r.epsilon),
        r.delta,
    );
    Ok(Report { json: value, human })
}
