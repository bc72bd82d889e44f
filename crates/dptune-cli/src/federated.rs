//! `dptune federated simulate`: the DP-HYPE simulation (library: `dptune::federated::sim`).

use clap::{Args, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;

use dptune::federated::sim::{Partition, SimConfig, SimReport};
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
    /// Use only this many rows of the dataset (after shuffling), for quick runs.
    #[arg(long)]
    rows: Option<usize>,
    /// Seed of the partition, the local 80/20 splits and the reference accuracies (the
    /// authors' artifact uses 1001 for every repetition).
    #[arg(long, default_value_t = 1001)]
    data_seed: u64,
    /// Seed of the (first) repetition: local training, dropouts, noise (research mode: the
    /// noise is predictable from it).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    #[command(flatten)]
    budget: crate::budget::BudgetCharge,
    /// Repetitions on the same partition with seeds SEED, SEED+1, ...; the JSON then holds
    /// `runs` and a `summary`.
    #[arg(long, default_value_t = 1)]
    repetitions: u64,
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
        rows_limit: a.rows,
        data_seed: a.data_seed,
        seed: a.seed,
    };
    if a.repetitions == 0 {
        return Err(Failure::input(
            "invalid value 0 for `repetitions`: must be at least 1",
        ));
    }
    a.budget
        .charge("federated simulate", &cfg.cost(a.repetitions)?)?;
    let seeds: Vec<u64> = (0..a.repetitions).map(|i| a.seed.wrapping_add(i)).collect();
    let bar = if json {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(0)
    };
    bar.set_style(
        ProgressStyle::with_template("{msg:40} [{bar:30}] {pos}/{len} {elapsed}")
            .map_err(|e| Failure::input(e.to_string()))?,
    );
    let runs = cfg.run_many(&seeds, &|stage, done, total| {
        bar.set_length(total as u64);
        bar.set_message(stage.to_string());
        bar.set_position(done as u64);
    });
    bar.finish_and_clear();
    let runs = runs?;
    let objects: Vec<_> = runs
        .iter()
        .zip(&seeds)
        .map(|(r, &seed)| run_json(&cfg, t, seed, r))
        .collect();
    let human: Vec<String> = runs.iter().map(|r| run_human(&cfg, r)).collect();
    if runs.len() == 1 {
        return Ok(Report {
            json: objects.into_iter().next().unwrap_or_default(),
            human: human.concat(),
        });
    }
    let m = runs.len() as f64;
    let sel = runs.iter().map(|r| r.selected_accuracy).sum::<f64>() / m;
    let (opt, rand) = (runs[0].opt_accuracy, runs[0].randguess_accuracy);
    let fraction = (sel - rand) / (opt - rand);
    let summary = json!({
        "runs": runs.len(),
        "selected_accuracy_mean": sel,
        "opt_accuracy": opt,
        "randguess_accuracy": rand,
        "fraction_of_the_way": fraction,
    });
    Ok(Report {
        json: json!({ "runs": objects, "summary": summary }),
        human: format!(
            "{}\n{} repetitions: selected accuracy {:.4} on average, OPT {:.4}, RANDGUESS {:.4}: \
             {:.3} of the way from RANDGUESS to OPT",
            human.join("\n"),
            runs.len(),
            sel,
            opt,
            rand,
            fraction
        ),
    })
}

fn run_json(cfg: &SimConfig, t: usize, seed: u64, r: &SimReport) -> serde_json::Value {
    json!({
        "dataset": cfg.dataset,
        "clients": cfg.clients,
        "partition": cfg.partition,
        "k": cfg.k,
        "min_survivors": t,
        "dropout_rate": cfg.dropout_rate,
        "data_seed": cfg.data_seed,
        "seed": seed,
        "local_epochs": cfg.local_epochs,
        "fedavg_rounds": cfg.fedavg_rounds,
        "selected": r.selected,
        "selected_hyperparameters": r.selected_hyperparameters,
        "selected_accuracy": r.selected_accuracy,
        "opt_accuracy": r.opt_accuracy,
        "randguess_accuracy": r.randguess_accuracy,
        "baselines_note": "opt, randguess and reference_accuracies are non-private oracles and carry no guarantee",
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
        "reference_accuracies": r.reference_accuracies,
        "secagg_seconds": { "clients": r.secagg_client_seconds, "server": r.secagg_server_seconds },
    })
}

fn run_human(cfg: &SimConfig, r: &SimReport) -> String {
    let h = r.selected_hyperparameters;
    format!(
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
    )
}
