//! The whole cost of a DP-HYPE simulation, known from public settings before any data is read
//! (so that a persistent budget can be charged first).

use super::sim::SimConfig;
use super::sim_data::SimDataset;
use crate::error::{Error, Result};
use crate::numeric::mul_up;
use crate::privacy::{Guarantee, Neighbours};
use crate::resources::Estimate;

/// Secure aggregation keeps keys, shares and masks for every (client, neighbour) pair: about
/// 1.3 kB each (peak memory measured at 250, 500 and 2000 clients), plus about 1 kB of lists
/// and scores per client.
const PAIR_BYTES: f64 = 1200.0;
const CLIENT_BYTES: f64 = 1000.0;

/// Core-seconds per (client, neighbour) pair and repetition of secure aggregation (key
/// agreement and share encryption): 1.0–1.2e-4 measured, rounded down (optimistic).
const PAIR_SECONDS: f64 = 8e-5;

/// The bundled table's rows and the core-seconds per row of one local epoch of all 100
/// candidates (measured: Adult 2.3e-5, MNIST-5k 4.8e-4; rounded down).
fn table(dataset: SimDataset) -> (f64, f64) {
    match dataset {
        SimDataset::Adult => (48_842.0, 2e-5),
        SimDataset::Mnist5k => (5_000.0, 4e-4),
    }
}

impl SimConfig {
    /// What [`SimConfig::run_many`] with `repetitions` run seeds spends on the clients' data.
    /// Each repetition is one DP-HYPE release on the same clients, (ε, δ)-DP for replace-one
    /// clients whenever at least t clients survive (the noise is calibrated for exactly t,
    /// more survivors add noise; fewer release nothing); `repetitions` of them compose to
    /// (rε, rδ) by basic composition (THEORY.md §9), rounded up. The settings are checked
    /// first (as `run_many` checks them), so bad input is refused before anything is charged;
    /// the cost itself depends on no data.
    pub fn cost(&self, repetitions: u64) -> Result<Guarantee> {
        self.check()?;
        if repetitions == 0 {
            return Err(Error::invalid("repetitions", 0, "must be at least 1"));
        }
        let r = repetitions as f64;
        let delta = mul_up(self.delta, r);
        if delta >= 1.0 {
            return Err(Error::invalid(
                "repetitions",
                repetitions,
                format!("together they would spend delta = {delta} >= 1"),
            ));
        }
        Guarantee::approx(mul_up(self.epsilon, r), delta, Neighbours::Replace)
    }

    /// Peak memory (driven by `clients`: secure aggregation holds state per pair of
    /// neighbours) and CPU time of [`SimConfig::run_many`] with `repetitions` run seeds: secure
    /// aggregation per repetition, and the local epochs of every candidate (FedAvg rounds for
    /// the reference accuracies, and one evaluation per repetition). Public settings only.
    pub fn resources(&self, repetitions: u64) -> Estimate {
        let n = self.clients as f64;
        let neighbours = match self.sparse {
            Some((degree, _)) => degree.min(self.clients.saturating_sub(1)),
            None => self.clients.saturating_sub(1),
        } as f64;
        let pairs = n * (neighbours + 1.0);
        let (rows, per_row) = table(self.dataset);
        let rows = self.rows_limit.map_or(rows, |r| rows.min(r as f64));
        let passes = self.local_epochs as f64 * (self.fedavg_rounds as f64 + repetitions as f64);
        let secagg = PAIR_SECONDS * pairs * repetitions as f64;
        let training = per_row * rows * passes;
        let estimate = Estimate::new().memory(
            "clients",
            self.clients,
            PAIR_BYTES * pairs + CLIENT_BYTES * n,
        );
        if secagg >= training {
            estimate.time("clients", self.clients, secagg + training)
        } else {
            estimate.time("local_epochs", self.local_epochs, secagg + training)
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::federated::sim::{Partition, SimConfig};
    use crate::federated::sim_data::SimDataset;
    use crate::resources::Limits;

    fn config(clients: usize) -> SimConfig {
        SimConfig {
            dataset: SimDataset::Adult,
            clients,
            partition: Partition::Iid,
            k: 5,
            epsilon: 1.0,
            delta: 1e-5,
            min_survivors: clients * 4 / 5,
            colluders: 0,
            dropout_rate: 0.0,
            local_epochs: 5,
            fedavg_rounds: 5,
            sparse: None,
            rows_limit: None,
            data_seed: 1001,
            seed: 0,
        }
    }

    const MACHINE: Limits = Limits {
        memory: 22e9,
        threads: 2,
        seconds: 3600.0,
    };

    #[test]
    fn clients_drive_memory_and_time_of_secure_aggregation() {
        // The paper's setting passes.
        assert!(MACHINE
            .check(
                &config(100).resources(1),
                false,
                "use --force to try anyway"
            )
            .is_ok());
        // 10⁹ clients on a complete graph: 1.2e21 bytes, past any address space.
        let msg = MACHINE
            .check(
                &config(1_000_000_000).resources(1),
                true,
                "use --force to try anyway",
            )
            .unwrap_err()
            .to_string();
        assert!(
            msg.starts_with("invalid parameter `clients` = 1000000000: needs about"),
            "{msg}"
        );
        // 10 000 clients: 120 GB on the complete graph; a sparse graph of degree 20 fits.
        let mut c = config(10_000);
        assert!(MACHINE
            .check(&c.resources(1), false, "use --force to try anyway")
            .is_err());
        c.sparse = Some((20, 11));
        assert!(MACHINE
            .check(&c.resources(1), false, "use --force to try anyway")
            .is_ok());
        // Endless local training is named by its parameter.
        let mut c = config(100);
        c.local_epochs = 1_000_000;
        let msg = MACHINE
            .check(&c.resources(1), false, "use --force to try anyway")
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("`local_epochs` = 1000000: would take about"),
            "{msg}"
        );
    }
}
