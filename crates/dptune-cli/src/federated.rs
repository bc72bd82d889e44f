//! `dptune federated simulate`: the DP-HYPE simulation (library: `dptune::federated::sim`).
//!
//! What it prints (text and `--json`), field by field:
//!
//! * **public inputs**: the settings (dataset, clients, partition, k, t, c, dropout rate, seeds,
//!   epochs, rounds); `survivors`, which depends only on the scripted dropouts (run seed and
//!   dropout rate, never the data); the guarantee (ε for the actual survivors and c, δ, relation)
//!   and the noise variance, functions of those.
//! * **the release** (charged, ε above): `selected`, its grid entry, `noisy_counts` (the one
//!   noisy vote sum), in research mode: the noise is keyed by the released run seed, which
//!   `seeded` and `research` (and a line of the text) say.
//! * **NOT PRIVATE diagnostics**, only with `--diagnostics` and labelled: the reference
//!   accuracies (selected, OPT, RANDGUESS, the whole table), the summary over repetitions, the
//!   secure-aggregation timings and, on a terminal, the count of finished work units beside the
//!   stage. They are computed from the clients' raw data (or their timing) and carry no
//!   guarantee.
//!
//! Progress on standard error (`crate::progress`), by default: the public stages (`reading
//! data`, then the library's `reference accuracies (non-private)` and `local evaluation`, the
//! same for every run with the same flags) and a fixed-text heartbeat; no number, so no count
//! of clients, survivors or repetitions.

use clap::{Args, Subcommand, ValueEnum};

use dptune::federated::report::{FederatedReport, FederatedRun};
use dptune::federated::sim::{Partition, SimConfig};
use dptune::federated::sim_data::SimDataset;
use dptune::Error;

use crate::progress::Progress;
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
    /// Minimum number of survivors t (default: 80 % of the clients). The noise is sized for t;
    /// without --degree a round needs max(t, clients/2 + 1) clients at every stage (the Shamir
    /// threshold of secure aggregation).
    #[arg(long)]
    min_survivors: Option<usize>,
    /// Colluding survivors c the guarantee must hold against (they know their own noise, so
    /// only t − c shares protect): each share is sized for t − c honest clients. The default 0
    /// assumes that no client colludes with the server or another client.
    #[arg(long, default_value_t = 0)]
    colluders: usize,
    /// Probability that a client drops out of the protocol.
    #[arg(long, default_value_t = 0.0)]
    dropout_rate: f64,
    /// Local epochs per candidate.
    #[arg(long, default_value_t = 5)]
    local_epochs: usize,
    /// FedAvg rounds for each candidate's reference accuracy.
    #[arg(long, default_value_t = 5)]
    fedavg_rounds: usize,
    /// SecAgg+ neighbour degree (even, at least 2, below --clients); default: the complete graph.
    #[arg(long)]
    degree: Option<usize>,
    /// Use only this many rows of the dataset (after shuffling), for quick runs.
    #[arg(long)]
    rows: Option<usize>,
    /// Seed of the partition, the local 80/20 splits and the reference accuracies (the
    /// authors' artifact uses 1001 for every repetition).
    #[arg(long, default_value_t = 1001)]
    data_seed: u64,
    /// Seed of the (first) repetition: local training, dropouts, noise. The simulation always
    /// keys its noise with it (never the operating system): a research run, NOT PRIVATE against
    /// anyone who knows the seed, and the output says so.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    #[command(flatten)]
    budget: crate::budget::BudgetCharge,
    #[command(flatten)]
    force: crate::limits::Force,
    /// Repetitions on the same partition with seeds SEED, SEED+1, ...; the JSON then holds
    /// `runs` and a `summary`.
    #[arg(long, default_value_t = 1)]
    repetitions: u64,
    /// Also print NOT PRIVATE diagnostics: reference accuracies (selected, OPT, RANDGUESS, the
    /// table), secure-aggregation timings and a live count of finished work units on a
    /// terminal. They are computed from the clients' raw data and carry no guarantee.
    #[arg(long)]
    diagnostics: bool,
}

pub fn run(args: FederatedArgs) -> Result<Report, Failure> {
    match args.command {
        FederatedCommand::Simulate(a) => simulate(a),
    }
}

/// Refuses, before anything is read, the counts the library takes as given: zero epochs, rounds,
/// rows or repetitions, and a neighbour degree that the clients cannot have (it was silently
/// cut to the number of clients).
fn validate(a: &SimulateArgs) -> Result<(), Failure> {
    let at_least_one: [(&'static str, Option<usize>); 3] = [
        ("local_epochs", Some(a.local_epochs)),
        ("fedavg_rounds", Some(a.fedavg_rounds)),
        ("rows", a.rows),
    ];
    for (name, value) in at_least_one {
        if value == Some(0) {
            return Err(Error::invalid(name, 0, "must be at least 1").into());
        }
    }
    if a.repetitions == 0 {
        return Err(Error::invalid("repetitions", 0, "must be at least 1").into());
    }
    if let Some(d) = a.degree {
        if d < 2 || d % 2 == 1 || d >= a.clients {
            return Err(Error::invalid(
                "degree",
                d,
                format!(
                    "must be even, at least 2 and below --clients ({}); without --degree every \
                     client neighbours all the others",
                    a.clients
                ),
            )
            .into());
        }
    }
    Ok(())
}

fn simulate(a: SimulateArgs) -> Result<Report, Failure> {
    validate(&a)?;
    let t = a.min_survivors.unwrap_or((a.clients * 4).div_ceil(5));
    // SecAgg+: the smallest threshold above half of each neighbourhood (degree + 1 members)
    // plus the colluders, as secure aggregation against a lying server needs (larger
    // colluder counts are refused, naming --colluders).
    let sparse = a.degree.map(|d| {
        let group = d.min(a.clients.saturating_sub(1)) + 1;
        (d, ((group + a.colluders) / 2 + 1).min(group))
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
        colluders: a.colluders,
        dropout_rate: a.dropout_rate,
        local_epochs: a.local_epochs,
        fedavg_rounds: a.fedavg_rounds,
        sparse,
        rows_limit: a.rows,
        data_seed: a.data_seed,
        seed: a.seed,
    };
    a.force.check(&cfg.resources(a.repetitions))?;
    a.budget
        .charge("federated simulate", &cfg.cost(a.repetitions)?)?;
    let seeds: Vec<u64> = (0..a.repetitions).map(|i| a.seed.wrapping_add(i)).collect();
    let progress = Progress::new("dptune federated simulate");
    progress.stage("reading data");
    let runs = cfg.run_many(&seeds, &|stage, done, total| {
        // The library names its stage at every unit of work; a line shows each stage once.
        progress.stage(stage);
        // The count's pace is a timing channel on the data: a diagnostic, on a terminal only.
        if a.diagnostics {
            progress.detail(&format!("{done}/{total} (NOT PRIVATE)"));
        }
    });
    drop(progress);
    let runs = runs?;
    let r = FederatedReport::new(&cfg, &seeds, &runs, a.diagnostics);
    let mut text = r
        .runs()
        .iter()
        .map(run_human)
        .collect::<Vec<_>>()
        .join("\n");
    if let FederatedReport::Many { runs, summary } = &r {
        if let Some(d) = &summary.diagnostics {
            text.push_str(&format!(
                "\n[NOT PRIVATE] {} repetitions: selected accuracy {:.4} on average, OPT {:.4}, \
                 RANDGUESS {:.4}: {:.3} of the way from RANDGUESS to OPT",
                runs.len(),
                d.selected_accuracy_mean,
                d.opt_accuracy,
                d.randguess_accuracy,
                d.fraction_of_the_way,
            ));
        }
    }
    Report::of(&r, text)
}

fn run_human(r: &FederatedRun) -> String {
    let h = r.selected_hyperparameters;
    let p = &r.privacy;
    let mut s = format!(
        "DP-HYPE simulation: {} clients, {} survivors\n\
         selected candidate {} (lr {}, decay {}, momentum {})\n\
         privacy: client-level ({}) epsilon {} at delta {}\n\
         assuming {}",
        r.clients,
        r.survivors,
        r.selected,
        h.lr,
        h.decay,
        h.momentum,
        p.neighbours,
        fmt_param(p.epsilon),
        fmt_param(p.delta),
        p.assumption,
    );
    if r.seeded {
        s.push_str(&format!("\nseed {}: {}", r.seed, r.research));
    }
    if let Some(d) = &r.diagnostics {
        s.push_str(&format!(
            "\n[NOT PRIVATE] reference accuracy of the selection {:.4}, OPT {:.4}, RANDGUESS {:.4}",
            d.selected_accuracy, d.opt_accuracy, d.randguess_accuracy,
        ));
    }
    s
}
