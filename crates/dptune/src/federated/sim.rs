//! In-process DP-HYPE simulation over real data (DPHYPE.md §6), through the real protocol
//! messages: the data are partitioned across n clients (iid or Dirichlet(α) over labels), each
//! client trains the paper's 100 candidates (learning rate × decay × momentum) locally with a
//! softmax-regression learner and votes for its top k on a local validation split, the vote round
//! runs with Skellam noise and secure aggregation, and the selected candidate is compared with
//! the non-private baselines OPT (best candidate) and RANDGUESS (mean over candidates). Every
//! candidate's reference accuracy is that of a model trained by FedAvg over all clients and
//! evaluated on a global held-out test set. **OPT and RANDGUESS are non-private oracles** and
//! carry no guarantee.
//!
//! Shuffles, partitions and dropouts use [`SecureRng`] for convenience only: they are part of
//! the experiment, not of the mechanism.

use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;
use serde::Serialize;

use super::accounting::NoisePlan;
use super::secagg::local::{DropAt, Timing};
use super::sim_data::{load, SimDataset, Table};
use super::vote::VoteRound;
use crate::error::{check_delta, check_positive, Error, Result};
use crate::noise::SecureRng;
use crate::privacy::Neighbours;

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
    /// Probability that a client drops out (at a uniformly chosen protocol stage).
    pub dropout_rate: f64,
    /// Local epochs per candidate (paper: 5).
    pub local_epochs: usize,
    /// FedAvg rounds for the reference accuracy of each candidate (paper: 5).
    pub fedavg_rounds: usize,
    /// SecAgg+ degree and threshold (`None`: complete graph).
    pub sparse: Option<(usize, usize)>,
    /// Use only this many rows of the dataset (after shuffling); `None`: all (fast tests).
    pub rows_limit: Option<usize>,
    /// Seed of the whole run (research mode: the noise is predictable from it).
    pub seed: u64,
}

/// Result of one run.
#[derive(Debug, Clone, Serialize)]
pub struct SimReport {
    /// Selected candidate index.
    pub selected: usize,
    /// Its hyperparameters.
    pub selected_hyperparameters: Hyper,
    /// Its reference accuracy.
    pub selected_accuracy: f64,
    /// OPT: best reference accuracy (non-private oracle).
    pub opt_accuracy: f64,
    /// RANDGUESS: mean reference accuracy (non-private baseline).
    pub randguess_accuracy: f64,
    /// Clients whose vote is in the sum.
    pub survivors: usize,
    /// Released ε for the actual survivors.
    pub epsilon: f64,
    /// δ.
    pub delta: f64,
    /// Neighbour relation.
    pub neighbours: Neighbours,
    /// Total Skellam variance of the sum.
    pub noise_variance: f64,
    /// Noisy vote counts.
    pub noisy_counts: Vec<i64>,
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

    /// Minibatch SGD (batch 64) with PyTorch-style momentum, lr·decay^epoch per epoch.
    fn train(
        &mut self,
        t: &Table,
        rows: &[usize],
        h: Hyper,
        epochs: usize,
        lr0: f64,
        rng: &mut SecureRng,
    ) {
        let stride = self.dim + 1;
        let mut vel = vec![0f32; self.w.len()];
        let mut grad = vec![0f32; self.w.len()];
        let mut order = rows.to_vec();
        let mut p = vec![0f32; self.classes];
        let mut lr = lr0;
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
    fn check(&self) -> Result<()> {
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
        Ok(())
    }

    /// Runs the simulation. `progress` is called from worker threads.
    pub fn run(&self, progress: Progress<'_>) -> Result<SimReport> {
        self.check()?;
        let plan = NoisePlan::calibrate(
            self.k,
            Neighbours::Replace,
            self.min_survivors,
            self.epsilon,
            self.delta,
        )?;
        let table = load(self.dataset)?;
        let grid = paper_grid();
        let mut rng = SecureRng::seeded(self.seed);
        // 20 % global test set, the rest spread over clients.
        let mut all: Vec<usize> = (0..table.rows()).collect();
        shuffle(&mut all, &mut rng);
        all.truncate(self.rows_limit.unwrap_or(usize::MAX));
        let n_test = all.len() / 5;
        let test = all[..n_test].to_vec();
        let parts = partition(
            &table,
            &all[n_test..],
            self.clients,
            self.partition,
            &mut rng,
        )?;
        let streams = rng.streams();
        let total = self.clients + grid.len();
        let done = AtomicUsize::new(0);
        // Local evaluation: each client scores every candidate on an 80/20 local split.
        let scores: Vec<Vec<f64>> = parts
            .par_iter()
            .enumerate()
            .map(|(c, rows)| {
                let mut r = streams.get(c as u64);
                let mut rows = rows.clone();
                shuffle(&mut rows, &mut r);
                let cut = (rows.len() * 4)
                    .div_ceil(5)
                    .min(rows.len().saturating_sub(1))
                    .max(1);
                let (train, val) = rows.split_at(cut);
                let s = grid
                    .iter()
                    .map(|&h| {
                        let mut m = Model::zeros(table.classes, table.dim);
                        m.train(&table, train, h, self.local_epochs, h.lr, &mut r);
                        m.accuracy(&table, val)
                    })
                    .collect();
                progress(
                    "local evaluation",
                    done.fetch_add(1, Ordering::Relaxed) + 1,
                    total,
                );
                s
            })
            .collect();
        // Reference accuracy of every candidate: FedAvg over all clients, global test set.
        let reference: Vec<f64> = grid
            .par_iter()
            .enumerate()
            .map(|(j, &h)| {
                let mut r = streams.get((self.clients + j) as u64);
                let mut global = Model::zeros(table.classes, table.dim);
                let sizes: f64 = parts.iter().map(|p| p.len() as f64).sum();
                for round in 0..self.fedavg_rounds {
                    let lr = h.lr * h.decay.powi(round as i32);
                    let mut avg = vec![0f32; global.w.len()];
                    for p in &parts {
                        let mut m = Model {
                            w: global.w.clone(),
                            classes: table.classes,
                            dim: table.dim,
                        };
                        m.train(&table, p, h, 1, lr, &mut r);
                        let wgt = (p.len() as f64 / sizes) as f32;
                        for (a, w) in avg.iter_mut().zip(&m.w) {
                            *a += wgt * w;
                        }
                    }
                    global.w = avg;
                }
                progress(
                    "reference accuracies (non-private)",
                    done.fetch_add(1, Ordering::Relaxed) + 1,
                    total,
                );
                global.accuracy(&table, &test)
            })
            .collect();
        // Dropouts at a uniformly chosen stage.
        let stages = [DropAt::Keys, DropAt::Shares, DropAt::Masked, DropAt::Unmask];
        let drops: Vec<Option<DropAt>> = (0..self.clients)
            .map(|_| {
                (rng.unit_f64() < self.dropout_rate).then(|| stages[rng.below_u64(4) as usize])
            })
            .collect();
        let round = VoteRound {
            candidates: grid.len(),
            k: self.k,
            plan,
            delta: self.delta,
            release_counts: true,
            sparse: self.sparse,
        };
        progress("secure aggregation", total, total);
        let (release, timing): (_, Timing) = round.run(self.seed, &scores, &drops, &mut rng)?;
        let v = release.value;
        let opt = reference.iter().cloned().fold(0.0, f64::max);
        let mean = reference.iter().sum::<f64>() / reference.len() as f64;
        Ok(SimReport {
            selected: v.selected,
            selected_hyperparameters: grid[v.selected],
            selected_accuracy: reference[v.selected],
            opt_accuracy: opt,
            randguess_accuracy: mean,
            survivors: v.survivors,
            epsilon: v.epsilon,
            delta: v.delta,
            neighbours: release.spent.neighbours(),
            noise_variance: v.noise_variance,
            noisy_counts: v.noisy_counts.unwrap_or_default(),
            secagg_client_seconds: timing.clients.as_secs_f64(),
            secagg_server_seconds: timing.server.as_secs_f64(),
        })
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
            dropout_rate: 0.05,
            local_epochs: 1,
            fedavg_rounds: 1,
            sparse: None,
            rows_limit: Some(800),
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
        assert!(r.opt_accuracy >= r.selected_accuracy && r.opt_accuracy > 0.5);
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
