//! The report of `dptune federated simulate`: one serialisable type, built from the
//! simulation's settings and results, which the CLI renders (text or `--json`).
//!
//! Each field is labelled in its doc comment (DESIGN.md, `Report`): **public input** (a
//! setting, or computed from settings and the scripted dropouts only), **charged release** (the
//! DP-HYPE vote, covered by `privacy`; in research mode, since the simulation keys its noise
//! with the released run seed: [`RESEARCH_MODE`]), or **NOT PRIVATE diagnostic** (computed from the
//! clients' raw data or timing, present only when asked for, inside an object labelled
//! `"not_private": true`).

use serde::Serialize;

use super::sim::{Hyper, Partition, SimConfig, SimReport};
use super::sim_data::SimDataset;
use crate::privacy::Neighbours;

/// The label every diagnostic object carries.
pub const NOT_PRIVATE: &str = "NOT PRIVATE: computed from every client's raw data (or timing), \
                               no guarantee; a research evaluation, not part of the release";

/// What a simulation's `research` field says. The simulation always keys its noise with the
/// run seed (`--seed`, default 0; never the operating system): it is a research tool, and the
/// deployment that draws its noise from the operating system is the Flower apps'.
pub const RESEARCH_MODE: &str = "seeded simulation (research mode): the run seed keys the \
     Skellam noise, so anyone who knows it can predict the noise and read the exact vote sum off \
     noisy_counts; the epsilon describes the mechanism, not this output, which is NOT PRIVATE \
     against anyone who knows the seed (the noise is never drawn from the operating system here)";

/// The trust assumption behind the released ε, for `min_survivors` = t and `colluders` = c.
pub fn assumption(t: usize, c: usize) -> String {
    format!(
        "at most {c} colluding survivors (noise sized for t - c = {} honest clients); \
         participation does not depend on the clients' data",
        t - c
    )
}

/// What `dptune federated simulate` prints: one run, or several with a summary.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum FederatedReport {
    /// A single repetition: its report itself (boxed: it is far larger than `Many`).
    One(Box<FederatedRun>),
    /// Several repetitions on one partition.
    Many {
        /// One report per repetition, in the order of their seeds.
        runs: Vec<FederatedRun>,
        /// Over all repetitions.
        summary: FederatedSummary,
    },
}

impl FederatedReport {
    /// The report of the repetitions `runs` of `cfg`, run with the seeds `seeds` (one each);
    /// the NOT PRIVATE diagnostics only if `diagnostics`.
    pub fn new(cfg: &SimConfig, seeds: &[u64], runs: &[SimReport], diagnostics: bool) -> Self {
        let mut objects: Vec<FederatedRun> = runs
            .iter()
            .zip(seeds)
            .map(|(r, &seed)| FederatedRun::new(cfg, seed, r, diagnostics))
            .collect();
        if objects.len() == 1 {
            if let Some(one) = objects.pop() {
                return FederatedReport::One(Box::new(one));
            }
        }
        FederatedReport::Many {
            runs: objects,
            summary: FederatedSummary::new(runs, diagnostics),
        }
    }

    /// The report of each repetition.
    pub fn runs(&self) -> &[FederatedRun] {
        match self {
            FederatedReport::One(r) => std::slice::from_ref(&**r),
            FederatedReport::Many { runs, .. } => runs,
        }
    }
}

/// One repetition of the simulation.
#[derive(Debug, Clone, Serialize)]
pub struct FederatedRun {
    /// Public input: the dataset.
    pub dataset: SimDataset,
    /// Public input: the number of clients n.
    pub clients: usize,
    /// Public input: how rows are spread over clients.
    pub partition: Partition,
    /// Public input: votes per client.
    pub k: usize,
    /// Public input: the minimum number of survivors t the noise is sized for.
    pub min_survivors: usize,
    /// Public input: the colluding survivors c the guarantee holds against.
    pub colluders: usize,
    /// Public input: the probability that a client drops out.
    pub dropout_rate: f64,
    /// Public input: the seed of the partition and local splits.
    pub data_seed: u64,
    /// Public input: the seed of this repetition, the key of its noise (research mode: the
    /// noise is predictable from it; see `seeded`).
    pub seed: u64,
    /// Public input: always true: the simulation keys its noise with `seed`, never with the
    /// operating system's entropy, so its release is NOT PRIVATE against anyone who knows the
    /// seed (a research run).
    pub seeded: bool,
    /// Public input: [`RESEARCH_MODE`], what `seeded` means for the release.
    pub research: &'static str,
    /// Public input: local epochs per candidate.
    pub local_epochs: usize,
    /// Public input: FedAvg rounds of the reference accuracies.
    pub fedavg_rounds: usize,
    /// Charged release (`privacy`, the client-level DP-HYPE vote), in research mode (its noise
    /// is keyed by `seed`): the selected candidate.
    pub selected: usize,
    /// Charged release (`privacy`), in research mode: the grid entry of `selected` (public
    /// grid, released index).
    pub selected_hyperparameters: Hyper,
    /// Public input: the clients whose vote is in the sum; it depends only on the scripted
    /// dropouts (run seed and dropout rate), never on the data.
    pub survivors: usize,
    /// Public, computed: the guarantee of the release.
    pub privacy: FederatedPrivacy,
    /// Charged release (`privacy`, distributed Skellam noise), in research mode: the one noisy
    /// vote sum. Its noise is keyed by `seed`, so whoever knows the seed can subtract it.
    pub noisy_counts: Vec<i64>,
    /// NOT PRIVATE diagnostic (`--diagnostics` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diagnostics: Option<RunDiagnostics>,
}

impl FederatedRun {
    /// The report of `r`, the repetition of `cfg` with seed `seed`.
    pub fn new(cfg: &SimConfig, seed: u64, r: &SimReport, diagnostics: bool) -> Self {
        let d = &r.diagnostics;
        Self {
            dataset: cfg.dataset,
            clients: cfg.clients,
            partition: cfg.partition,
            k: cfg.k,
            min_survivors: cfg.min_survivors,
            colluders: cfg.colluders,
            dropout_rate: cfg.dropout_rate,
            data_seed: cfg.data_seed,
            seed,
            seeded: true,
            research: RESEARCH_MODE,
            local_epochs: cfg.local_epochs,
            fedavg_rounds: cfg.fedavg_rounds,
            selected: r.selected,
            selected_hyperparameters: r.selected_hyperparameters,
            survivors: r.survivors,
            privacy: FederatedPrivacy {
                epsilon: r.epsilon,
                delta: r.delta,
                neighbours: r.neighbours,
                level: "client",
                noise: "distributed Skellam",
                noise_variance: r.noise_variance,
                colluders: r.colluders,
                assumption: assumption(cfg.min_survivors, r.colluders),
            },
            noisy_counts: r.noisy_counts.clone(),
            diagnostics: diagnostics.then(|| RunDiagnostics {
                not_private: true,
                label: NOT_PRIVATE,
                selected_accuracy: d.selected_accuracy,
                opt_accuracy: d.opt_accuracy,
                randguess_accuracy: d.randguess_accuracy,
                reference_accuracies: d.reference_accuracies.clone(),
                secagg_seconds: SecaggSeconds {
                    clients: d.secagg_client_seconds,
                    server: d.secagg_server_seconds,
                },
            }),
        }
    }
}

/// The guarantee of one repetition's release.
#[derive(Debug, Clone, Serialize)]
pub struct FederatedPrivacy {
    /// Public, computed: ε for the actual survivors and `colluders` (a function of the
    /// settings and the scripted dropouts).
    pub epsilon: f64,
    /// Public input: δ.
    pub delta: f64,
    /// Public input: the relation (one client's data).
    pub neighbours: Neighbours,
    /// Public input: always `client`.
    pub level: &'static str,
    /// Public input: always `distributed Skellam`.
    pub noise: &'static str,
    /// Public, computed: the Skellam variance protecting an honest client.
    pub noise_variance: f64,
    /// Public input: the colluding survivors c.
    pub colluders: usize,
    /// Public input: the trust assumption ([`assumption`]).
    pub assumption: String,
}

/// NOT PRIVATE diagnostics of one repetition: reference accuracies computed from every
/// client's raw data and the secure-aggregation timings, with no guarantee.
#[derive(Debug, Clone, Serialize)]
pub struct RunDiagnostics {
    /// Public: always true, the label of this object.
    pub not_private: bool,
    /// Public: [`NOT_PRIVATE`].
    pub label: &'static str,
    /// NOT PRIVATE diagnostic: the reference accuracy of the selection.
    pub selected_accuracy: f64,
    /// NOT PRIVATE diagnostic: OPT, the best reference accuracy.
    pub opt_accuracy: f64,
    /// NOT PRIVATE diagnostic: RANDGUESS, the mean reference accuracy.
    pub randguess_accuracy: f64,
    /// NOT PRIVATE diagnostic: the reference accuracy of every candidate.
    pub reference_accuracies: Vec<f64>,
    /// NOT PRIVATE diagnostic: the secure-aggregation compute times.
    pub secagg_seconds: SecaggSeconds,
}

/// NOT PRIVATE diagnostic: secure-aggregation compute, in seconds.
#[derive(Debug, Clone, Serialize)]
pub struct SecaggSeconds {
    /// All clients together.
    pub clients: f64,
    /// The server.
    pub server: f64,
}

/// Over all repetitions.
#[derive(Debug, Clone, Serialize)]
pub struct FederatedSummary {
    /// Public input: the number of repetitions.
    pub runs: usize,
    /// NOT PRIVATE diagnostic (`--diagnostics` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diagnostics: Option<SummaryDiagnostics>,
}

impl FederatedSummary {
    /// The summary of `runs` (at least one); the NOT PRIVATE part only if `diagnostics`.
    fn new(runs: &[SimReport], diagnostics: bool) -> Self {
        Self {
            runs: runs.len(),
            diagnostics: runs.first().filter(|_| diagnostics).map(|first| {
                let m = runs.len() as f64;
                let sel = runs
                    .iter()
                    .map(|r| r.diagnostics.selected_accuracy)
                    .sum::<f64>()
                    / m;
                let d = &first.diagnostics;
                let (opt, rand) = (d.opt_accuracy, d.randguess_accuracy);
                SummaryDiagnostics {
                    not_private: true,
                    label: NOT_PRIVATE,
                    selected_accuracy_mean: sel,
                    opt_accuracy: opt,
                    randguess_accuracy: rand,
                    fraction_of_the_way: (sel - rand) / (opt - rand),
                }
            }),
        }
    }
}

/// NOT PRIVATE diagnostics over all repetitions (one partition, so one reference table).
#[derive(Debug, Clone, Serialize)]
pub struct SummaryDiagnostics {
    /// Public: always true, the label of this object.
    pub not_private: bool,
    /// Public: [`NOT_PRIVATE`].
    pub label: &'static str,
    /// NOT PRIVATE diagnostic: the mean reference accuracy of the selections.
    pub selected_accuracy_mean: f64,
    /// NOT PRIVATE diagnostic: OPT.
    pub opt_accuracy: f64,
    /// NOT PRIVATE diagnostic: RANDGUESS.
    pub randguess_accuracy: f64,
    /// NOT PRIVATE diagnostic: (selected − RANDGUESS) / (OPT − RANDGUESS).
    pub fraction_of_the_way: f64,
}
