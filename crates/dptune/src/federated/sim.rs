//! In-process DP-HYPE simulation over real data (DPHYPE.md §6), through the real protocol
//! messages, following the authors' protocol (artifact `dphype_topk`):
//!
//! 1. The rows are partitioned across n clients (iid or Dirichlet(α) over labels) and each
//!    client's rows are split 80/20 into a local training and a local validation split. Both
//!    depend only on the **data seed** (the artifact fixes `data_seed = 1001`), so repetitions
//!    with different run seeds share one partition, as in the paper.
//! 2. **Vote** (per repetition, run seed): each client trains every candidate of the paper's grid
//!    (learning rate × decay × momentum, p = 100) from scratch for `local_epochs` epochs on its
//!    local training split and scores it by accuracy on its local validation split; it votes for
//!    its top k; the vote round runs with Skellam noise and secure aggregation.
//! 3. **Reference accuracy** of every candidate (once per partition): FedAvg over all clients for
//!    `fedavg_rounds` rounds; in each round every client starts from the global model and trains
//!    `local_epochs` epochs with a fresh optimiser (learning rate restarted, decayed per epoch,
//!    momentum buffer reset), and the server averages weighted by training-split size. The
//!    accuracy is that of the final global model on the union of the clients' local validation
//!    splits (example-weighted federated evaluation). This is the artifact's `global_eval`.
//!    OPT = the best reference accuracy, RANDGUESS = the mean; the selected candidate is scored
//!    by its reference accuracy. **OPT and RANDGUESS are non-private oracles** and carry no
//!    guarantee.
//!
//! Deviations from the artifact: softmax regression instead of the 64-64 MLP, full UCI Adult
//! (48 842 rows) instead of the 32 561-row Kaggle file, the reference table computed once per
//! partition (the artifact precomputes OPT once and re-trains only the selected candidate), and
//! the final model evaluated after the last aggregation (the artifact reports the accuracy the
//! clients measure on the model they receive in the last round, i.e. after one aggregation
//! fewer).
//!
//! Shuffles, partitions and dropouts use [`SecureRng`] for convenience only: they are part of
//! the experiment, not of the mechanism.

use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;
use serde::Serialize;

use super::accounting::{NoisePlan, Survivors};
use super::secagg::local::{DropAt, Timing};
use super::secagg::SecAggParams;
use super::sim_data::{load, SimDataset, Table};
use super::vote::VoteRound;
use crate::error::{check_delta, check_positive, Error, Result};
use crate::noise::{SecureRng, Streams};
use crate::privacy::{Guarantee, Neighbours};

/// The paper's learning rates.
pub const LEARNING_RATES: [f64; 10] =
    [0.5, 0.1, 0.05, 0.0005, 0.0001, 1e-6, 5e-7, 1e-7, 5e-8, 1e-8];
/// The paper's per-epoch learning-rate decay factors (StepLR gamma).
pub const DECAYS: [f64; 5] = [0.0, 0.1, 0.25, 0.99, 1.0];
/// The paper's momenta.
pub const MOMENTA: [f64; 2] = [0.0, 0.9];

/// One candidate of the grid.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Hyper {
    /// Learning rate.
    pub lr: f64,
    /// Per-epoch decay factor.
    pub decay: f64,
    /// Momentum.
    pub momentum: f64,
}

/// The p = 100 grid in the paper's order (index = 10·i_lr + 2·i_decay + i_momentum).
pub fn paper_grid() -> Vec<Hyper> {
    let mut v = Vec::with_capacity(100);
    for &lr in &LEARNING_RATES {
        for &decay in &DECAYS {
            for &momentum in &MOMENTA {
                v.push(Hyper {
                    lr,
                    decay,
                    momentum,
                });
            }
        }
    }
    v
}

/// How rows are spread over clients.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Partition {
    /// Uniformly at random, equal sizes.
    Iid,
    /// Per label, proportions over clients drawn from Dirichlet(α) (min 10 rows per client).
    Dirichlet(f64),
}

/// Settings of one simulation run.
#[derive(Debug, Clone)]
pub struct SimConfig {
    /// Dataset.
    pub dataset: SimDataset,
    /// Number of clients n.
    pub clients: usize,
    /// Partition.
    pub partition: Partition,
    /// Votes per client.
    pub k: usize,
    /// Target ε (reached with exactly `min_survivors` survivors).
    pub epsilon: f64,
    /// δ.
    pub delta: f64,
    /// Minimum number of survivors t.
    pub min_survivors: usize,
    /// Colluding survivors c the guarantee must hold against (an assumption; 0: all honest).
    /// Each noise share is sized for t − c honest clients.
    pub colluders: usize,
    /// Probability that a client drops out (at a uniformly chosen protocol stage).
    pub dropout_rate: f64,
    /// Local epochs per candidate (paper: 5).
    pub local_epochs: usize,
    /// FedAvg rounds for the reference accuracy of each candidate (paper: 5); each round trains
    /// `local_epochs` epochs on every client.
    pub fedavg_rounds: usize,
    /// SecAgg+ degree and threshold (`None`: complete graph).
    pub sparse: Option<(usize, usize)>,
    /// Use only this many rows of the dataset (after shuffling); `None`: all (fast tests).
    pub rows_limit: Option<usize>,
    /// Seed of the partition, the local 80/20 splits and the reference accuracies (the artifact
    /// uses 1001 for every repetition).
    pub data_seed: u64,
    /// Seed of one repetition: local training order, dropouts and the noise (research mode:
    /// the noise is predictable from it).
    pub seed: u64,
}

/// Result of one run: the release (the selected candidate and the noisy counts, charged),
/// public quantities, and [`SimDiagnostics`], which are NOT PRIVATE.
#[derive(Debug, Clone, Serialize)]
pub struct SimReport {
    /// Selected candidate index (release).
    pub selected: usize,
    /// Its hyperparameters (public grid entry of the released index).
    pub selected_hyperparameters: Hyper,
    /// Clients whose vote is in the sum (depends only on the scripted dropouts: public).
    pub survivors: usize,
    /// Released ε for the actual survivors, against at most `colluders` colluders.
    pub epsilon: f64,
    /// δ.
    pub delta: f64,
    /// The assumed maximum number of colluding survivors.
    pub colluders: usize,
    /// Neighbour relation.
    pub neighbours: Neighbours,
    /// Skellam variance protecting an honest client, (survivors − c)·μ/(t − c).
    pub noise_variance: f64,
    /// Noisy vote counts (release: the same noisy sum as the selection).
    pub noisy_counts: Vec<i64>,
    /// Non-private evaluation of the run.
    pub diagnostics: SimDiagnostics,
}

/// NOT PRIVATE: the experiment's evaluation, computed from every client's raw data (and timing),
/// with no guarantee. For research reports only; never part of the release.
#[derive(Debug, Clone, Serialize)]
pub struct SimDiagnostics {
    /// Reference accuracy of the selected candidate.
    pub selected_accuracy: f64,
    /// OPT: best reference accuracy (non-private oracle).
    pub opt_accuracy: f64,
    /// RANDGUESS: mean reference accuracy (non-private baseline).
    pub randguess_accuracy: f64,
    /// Reference accuracy of every candidate (non-private oracle).
    pub reference_accuracies: Vec<f64>,
    /// Secure-aggregation compute: all clients, seconds.
    pub secagg_client_seconds: f64,
    /// Secure-aggregation compute: server, seconds.
    pub secagg_server_seconds: f64,
}

/// Softmax regression weights: classes × (dim + 1), bias last.
struct Model {
    w: Vec<f32>,
    classes: usize,
    dim: usize,
}

impl Model {
    fn zeros(classes: usize, dim: usize) -> Self {
        Model {
            w: vec![0.0; classes * (dim + 1)],
            classes,
            dim,
        }
    }

    fn logits(&self, x: &[f32], out: &mut [f32]) {
        for (c, o) in out.iter_mut().enumerate() {
            let wc = &self.w[c * (self.dim + 1)..(c + 1) * (self.dim + 1)];
            *o = wc[self.dim]
                + wc[..self.dim]
                    .iter()
                    .zip(x)
                    .map(|(a, b)| a * b)
                    .sum::<f32>();
        }
    }

    fn predict(&self, x: &[f32], buf: &mut [f32]) -> usize {
        self.logits(x, buf);
        let mut best = 0;
        for c in 1..self.classes {
            // NaN never wins, so a diverged model predicts class 0.
            if buf[c] > buf[best] {
                best = c;
            }
        }
        best
    }

    fn accuracy(&self, t: &Table, rows: &[usize]) -> f64 {
        if rows.is_empty() {
            return 0.0;
        }
        let mut buf = vec![0f32; self.classes];
        let hits = rows
            .iter()
            .filter(|&&i| self.predict(t.row(i), &mut buf) == t.y[i] as usize)
            .count();
        hits as f64 / rows.len() as f64
    }

    /// Minibatch SGD (batch 64) with PyTorch-style momentum, lr·decay^epoch per epoch, from a
    /// fresh optimiser (zero momentum buffer; PyTorch SGD + StepLR(step_size=1, gamma=decay)).
    fn train(&mut self, t: &Table, rows: &[usize], h: Hyper, epochs: usize, rng: &mut SecureRng) {
        let stride = self.dim + 1;
        let mut vel = vec![0f32; self.w.len()];
        let mut grad = vec![0f32; self.w.len()];
        let mut order = rows.to_vec();
        let mut p = vec![0f32; self.classes];
        let mut lr = h.lr;
        for _ in 0..epochs {
            for i in (1..order.len()).rev() {
                order.swap(i, rng.below_u64(i as u64 + 1) as usize);
            }
            for batch in order.chunks(64) {
                grad.iter_mut().for_each(|g| *g = 0.0);
                for &i in batch {
                    let x = t.row(i);
                    self.logits(x, &mut p);
                    let m = p.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
                    let z: f32 = p
                        .iter_mut()
                        .map(|v| {
                            *v = (*v - m).exp();
                            *v
                        })
                        .sum();
                    for (c, pc) in p.iter().enumerate() {
                        let e = pc / z - if c == t.y[i] as usize { 1.0 } else { 0.0 };
                        let g = &mut grad[c * stride..(c + 1) * stride];
                        for (gj, xj) in g[..self.dim].iter_mut().zip(x) {
                            *gj += e * xj;
                        }
                        g[self.dim] += e;
                    }
                }
                let scale = 1.0 / batch.len() as f32;
                let (lr32, mom) = (lr as f32, h.momentum as f32);
                for ((w, v), g) in self.w.iter_mut().zip(vel.iter_mut()).zip(&grad) {
                    *v = mom * *v + g * scale;
                    *w -= lr32 * *v;
                }
            }
            lr *= h.decay;
        }
    }
}

fn shuffle(v: &mut [usize], rng: &mut SecureRng) {
    for i in (1..v.len()).rev() {
        v.swap(i, rng.below_u64(i as u64 + 1) as usize);
    }
}

/// Standard normal by Box–Muller (simulation only, never noise).
fn normal(rng: &mut SecureRng) -> f64 {
    let u = 1.0 - rng.unit_f64();
    let v = rng.unit_f64();
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// Gamma(a, 1) by Marsaglia & Tsang (2000), with the a < 1 boost (simulation only).
fn gamma(a: f64, rng: &mut SecureRng) -> f64 {
    if a < 1.0 {
        let u = 1.0 - rng.unit_f64();
        return gamma(a + 1.0, rng) * u.powf(1.0 / a);
    }
    let d = a - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = normal(rng);
        let v = (1.0 + c * x).powi(3);
        if v <= 0.0 {
            continue;
        }
        let u = 1.0 - rng.unit_f64();
        if u.ln() < 0.5 * x * x + d - d * v + d * v.ln() {
            return d * v;
        }
    }
}

/// Splits `rows` over `n` clients.
fn partition(
    t: &Table,
    rows: &[usize],
    n: usize,
    how: Partition,
    rng: &mut SecureRng,
) -> Result<Vec<Vec<usize>>> {
    let mut rows = rows.to_vec();
    shuffle(&mut rows, rng);
    match how {
        Partition::Iid => Ok((0..n)
            .map(|c| rows.iter().skip(c).step_by(n).copied().collect())
            .collect()),
        Partition::Dirichlet(alpha) => {
            for _ in 0..1000 {
                let mut parts = vec![Vec::new(); n];
                for class in 0..t.classes {
                    let members: Vec<usize> = rows
                        .iter()
                        .copied()
                        .filter(|&i| t.y[i] as usize == class)
                        .collect();
                    let g: Vec<f64> = (0..n).map(|_| gamma(alpha, rng)).collect();
                    let total: f64 = g.iter().sum();
                    let mut start = 0usize;
                    let mut acc = 0.0;
                    for (c, gc) in g.iter().enumerate() {
                        acc += gc / total;
                        let end = if c + 1 == n {
                            members.len()
                        } else {
                            ((acc * members.len() as f64).round() as usize).min(members.len())
                        };
                        parts[c].extend_from_slice(&members[start..end.max(start)]);
                        start = end.max(start);
                    }
                }
                if parts.iter().all(|p| p.len() >= 10) {
                    return Ok(parts);
                }
            }
            Err(Error::invalid(
                "dirichlet",
                alpha,
                "could not give every client 10 rows in 1000 tries",
            ))
        }
    }
}

/// Progress callback: (stage, done, total).
pub type Progress<'a> = &'a (dyn Fn(&str, usize, usize) + Sync);

impl SimConfig {
    pub(super) fn check(&self) -> Result<()> {
        check_positive("epsilon", self.epsilon)?;
        check_positive("delta", self.delta)?;
        check_delta("delta", self.delta)?;
        if self.clients < 2 {
            return Err(Error::invalid(
                "clients",
                self.clients,
                "need at least 2 clients",
            ));
        }
        if !(0.0..1.0).contains(&self.dropout_rate) {
            return Err(Error::invalid(
                "dropout_rate",
                self.dropout_rate,
                "must lie in [0, 1)",
            ));
        }
        if let Partition::Dirichlet(a) = self.partition {
            check_positive("dirichlet", a)?;
        }
        if self.k == 0 || self.k > 100 {
            return Err(Error::invalid(
                "k",
                self.k,
                "must lie in 1..=100 (the number of candidates)",
            ));
        }
        if self.min_survivors < 2 || self.min_survivors > self.clients {
            return Err(Error::invalid(
                "min_survivors",
                self.min_survivors,
                format!("must lie in 2..={} (the number of clients)", self.clients),
            ));
        }
        // Every client needs 2 rows (public: the bundled table's size and the row limit);
        // checked before the partition allocates a list per client and before the
        // secure-aggregation graph, whose construction is linear in the number of clients.
        let rows = load(self.dataset)?
            .rows()
            .min(self.rows_limit.unwrap_or(usize::MAX));
        if rows < self.clients.saturating_mul(2) {
            return Err(Error::invalid(
                "clients",
                self.clients,
                format!("every client needs 2 rows; there are only {rows} rows"),
            ));
        }
        // The secure-aggregation parameters (graph, threshold, colluders) up front, before any
        // data is read; the vote round builds the same ones again.
        let params = match self.sparse {
            None => SecAggParams::complete(0, self.clients, 1, self.min_survivors)?,
            Some((degree, threshold)) => {
                SecAggParams::sparse(0, self.clients, 1, self.min_survivors, degree, threshold, 0)?
            }
        };
        params.check_colluders(self.colluders)
    }

    /// Runs one repetition with run seed `self.seed`. `progress` is called from worker threads.
    pub fn run(&self, progress: Progress<'_>) -> Result<SimReport> {
        let mut reports = self.run_many(&[self.seed], progress)?;
        Ok(reports.remove(0))
    }

    /// Runs one repetition per run seed on one partition (fixed by `data_seed`): the partition
    /// and the reference accuracies are computed once, the local evaluation, the dropouts and
    /// the noise anew for every seed. `progress` is called from worker threads.
    pub fn run_many(&self, seeds: &[u64], progress: Progress<'_>) -> Result<Vec<SimReport>> {
        self.check()?;
        let plan = NoisePlan::calibrate(
            self.k,
            Survivors::new(self.min_survivors, self.colluders)?,
            &Guarantee::approx(self.epsilon, self.delta, Neighbours::Replace)?,
        )?;
        let table = load(self.dataset)?;
        let grid = paper_grid();
        let mut rng = SecureRng::seeded(self.data_seed);
        let mut all: Vec<usize> = (0..table.rows()).collect();
        shuffle(&mut all, &mut rng);
        all.truncate(self.rows_limit.unwrap_or(usize::MAX));
        let parts = partition(&table, &all, self.clients, self.partition, &mut rng)?;
        // Local 80/20 split of every client (the artifact's train_test_split(test_size=0.2)).
        let splits: Vec<(Vec<usize>, Vec<usize>)> = parts
            .into_iter()
            .map(|mut rows| {
                shuffle(&mut rows, &mut rng);
                let val = rows.len().div_ceil(5).clamp(1, rows.len() - 1);
                let train = rows.split_off(val);
                (train, rows)
            })
            .collect();
        let total = grid.len() + seeds.len() * self.clients;
        let done = AtomicUsize::new(0);
        let tick = |stage: &str| progress(stage, done.fetch_add(1, Ordering::Relaxed) + 1, total);
        let reference = self.reference_accuracies(&table, &grid, &splits, rng.streams(), &|| {
            tick("reference accuracies (non-private)")
        });
        let opt = reference.iter().cloned().fold(0.0, f64::max);
        let mean = reference.iter().sum::<f64>() / reference.len() as f64;
        let mut reports = Vec::with_capacity(seeds.len());
        for &seed in seeds {
            let mut rng = SecureRng::seeded(seed);
            let streams = rng.streams();
            // Local evaluation: each client scores every candidate on its validation split.
            let scores: Vec<Vec<f64>> = splits
                .par_iter()
                .enumerate()
                .map(|(c, (train, val))| {
                    let mut r = streams.get(c as u64);
                    let s = grid
                        .iter()
                        .map(|&h| {
                            let mut m = Model::zeros(table.classes, table.dim);
                            m.train(&table, train, h, self.local_epochs, &mut r);
                            m.accuracy(&table, val)
                        })
                        .collect();
                    tick("local evaluation");
                    s
                })
                .collect();
            // Dropouts at a uniformly chosen stage.
            let drops: Vec<Option<DropAt>> = (0..self.clients)
                .map(|_| {
                    (rng.unit_f64() < self.dropout_rate).then(|| {
                        DropAt::STAGES[rng.below_u64(DropAt::STAGES.len() as u64) as usize]
                    })
                })
                .collect();
            let round = VoteRound {
                candidates: grid.len(),
                k: self.k,
                plan: plan.clone(),
                delta: self.delta,
                release_counts: true,
                sparse: self.sparse,
            };
            let (release, timing): (_, Timing) = round.run(seed, &scores, &drops, &mut rng)?;
            let v = release.value;
            reports.push(SimReport {
                selected: v.selected,
                selected_hyperparameters: grid[v.selected],
                survivors: v.survivors,
                epsilon: v.epsilon,
                delta: v.delta,
                colluders: v.colluders,
                neighbours: release.spent.neighbours(),
                noise_variance: v.noise_variance,
                noisy_counts: v.noisy_counts.unwrap_or_default(),
                diagnostics: SimDiagnostics {
                    selected_accuracy: reference[v.selected],
                    opt_accuracy: opt,
                    randguess_accuracy: mean,
                    reference_accuracies: reference.clone(),
                    secagg_client_seconds: timing.clients.as_secs_f64(),
                    secagg_server_seconds: timing.server.as_secs_f64(),
                },
            });
        }
        Ok(reports)
    }

    /// FedAvg reference accuracy of every candidate (the artifact's `global_eval`): every round,
    /// each client trains `local_epochs` epochs from the global model with a fresh optimiser;
    /// the average is weighted by training-split size; the final model is scored on the union of
    /// the validation splits.
    fn reference_accuracies(
        &self,
        table: &Table,
        grid: &[Hyper],
        splits: &[(Vec<usize>, Vec<usize>)],
        streams: Streams,
        tick: &(dyn Fn() + Sync),
    ) -> Vec<f64> {
        let sizes: f64 = splits.iter().map(|(t, _)| t.len() as f64).sum();
        let val: Vec<usize> = splits.iter().flat_map(|(_, v)| v.iter().copied()).collect();
        grid.par_iter()
            .enumerate()
            .map(|(j, &h)| {
                let mut r = streams.get(j as u64);
                let mut global = Model::zeros(table.classes, table.dim);
                for _ in 0..self.fedavg_rounds {
                    let mut avg = vec![0f32; global.w.len()];
                    for (train, _) in splits {
                        let mut m = Model {
                            w: global.w.clone(),
                            classes: table.classes,
                            dim: table.dim,
                        };
                        m.train(table, train, h, self.local_epochs, &mut r);
                        let wgt = (train.len() as f64 / sizes) as f32;
                        for (a, w) in avg.iter_mut().zip(&m.w) {
                            *a += wgt * w;
                        }
                    }
                    global.w = avg;
                }
                tick();
                global.accuracy(table, &val)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(dataset: SimDataset, clients: usize, partition: Partition, seed: u64) -> SimConfig {
        SimConfig {
            dataset,
            clients,
            partition,
            k: 5,
            epsilon: 1.0,
            delta: 1e-5,
            min_survivors: clients * 4 / 5,
            colluders: 0,
            dropout_rate: 0.05,
            local_epochs: 1,
            fedavg_rounds: 1,
            sparse: None,
            rows_limit: Some(800),
            data_seed: 1001,
            seed,
        }
    }

    #[test]
    fn grid_and_data() {
        let g = paper_grid();
        assert_eq!(g.len(), 100);
        assert_eq!(
            g[10 + 2 * 3 + 1],
            Hyper {
                lr: 0.1,
                decay: 0.99,
                momentum: 0.9
            }
        );
        let a = load(SimDataset::Adult).unwrap();
        assert_eq!(a.rows(), 48_842);
        assert_eq!(a.y.iter().filter(|&&y| y == 1).count(), 11_687);
        assert!(a.x.iter().all(|v| (0.0..=1.0).contains(v)));
    }

    #[test]
    fn small_fast_simulation_runs_end_to_end() {
        // MNIST-5k, 10 clients, Dirichlet(0.5): a smoke test with 1 local epoch.
        let r = config(SimDataset::Mnist5k, 10, Partition::Dirichlet(0.5), 1)
            .run(&|_, _, _| {})
            .unwrap();
        let d = &r.diagnostics;
        assert!(d.opt_accuracy >= d.selected_accuracy && d.opt_accuracy > 0.5);
        assert!(r.survivors >= 8 && r.epsilon <= 1.0);
        assert_eq!(r.noisy_counts.len(), 100);
        let mut bad = config(SimDataset::Adult, 10, Partition::Iid, 1);
        bad.min_survivors = 11;
        assert!(matches!(
            bad.run(&|_, _, _| {}),
            Err(Error::InvalidParameter {
                name: "min_survivors",
                ..
            })
        ));
        bad.min_survivors = 1;
        assert!(bad.run(&|_, _, _| {}).is_err());
    }
}
