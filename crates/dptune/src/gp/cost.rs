//! The whole cost of [`private_gp`](super::private_gp), known from public settings before any
//! data is read (so that a persistent budget can be charged first).

use super::SelectionConfig;
use crate::error::Result;
use crate::privacy::{Guarantee, Neighbours};
use crate::resources::Estimate;
use crate::select::exponential::em_guarantee;

/// n × n matrices alive at once: the shared squared distances and the final release's
/// matrices, plus those of each lengthscale evaluated in parallel (kernel, Cholesky factor and
/// inverse); measured peak 9–11 × 8n² bytes at n = 800 and 1600 on two threads.
const SHARED_MATRICES: f64 = 4.0;
const MATRICES_PER_WORKER: f64 = 3.0;

/// Core-seconds per n³ and per lengthscale (plus one for the final release): the factorisations
/// and inverses; 6.5e-11 measured at n = 1600 with 5 folds, rounded down (optimistic).
const CUBIC_SECONDS: f64 = 4e-11;

impl SelectionConfig {
    /// What [`private_gp`](super::private_gp) spends under these settings on `n` training
    /// rows: ε_select for the exponential mechanism (pure, and ε²/8-zCDP; THEORY.md §1.2),
    /// then (ε_predict, δ) for the cloaked predictions, composed sequentially (THEORY.md §9),
    /// replace-one neighbours (DPGP.md §6.4). The settings are checked first (as
    /// `private_gp` checks them), so bad input is refused before anything is charged; the cost
    /// itself depends on no data.
    pub fn cost(&self, n: usize) -> Result<Guarantee> {
        self.check(n)?;
        em_guarantee(self.eps_select, Neighbours::Replace)?.compose(&Guarantee::approx(
            self.eps_predict,
            self.delta,
            Neighbours::Replace,
        )?)
    }
}

impl SelectionConfig {
    /// Peak memory and CPU time of [`private_gp`](super::private_gp) on `n` training rows and
    /// `predictions` prediction points, both driven by `n` (named `data`): its kernel matrices
    /// are n × n and their factorisations take O(n³) per lengthscale.
    ///
    /// `n` is the size of the private training set: refusing on it is a data-validation step
    /// taken before any mechanism runs and before any budget is charged, like refusing a NaN
    /// (module [`crate::resources`], docs/PRIVACY.md "Resource limits").
    pub fn resources(&self, n: usize, predictions: usize) -> Estimate {
        let (n_f, p) = (n as f64, predictions as f64);
        let workers = self.grid.len().clamp(1, rayon::current_num_threads()) as f64;
        let square = 8.0 * n_f * n_f;
        let bytes = square * (SHARED_MATRICES + MATRICES_PER_WORKER * workers)
            + 8.0 * (2.0 * n_f * p + 2.0 * p * p);
        let seconds = CUBIC_SECONDS * n_f.powi(3) * (self.grid.len() as f64 + 1.0);
        let shown = format!("{n} training rows");
        Estimate::new()
            .memory("data", &shown, bytes)
            .time("data", shown, seconds)
    }
}

#[cfg(test)]
mod tests {
    use nalgebra::DMatrix;

    use crate::gp::{private_gp, MveeConfig, OutputRange, SelectionConfig, Utility};
    use crate::noise::SecureRng;

    #[test]
    fn cost_is_what_private_gp_spends() {
        let x = DMatrix::from_fn(24, 1, |i, _| i as f64 / 8.0 - 1.5);
        let y: Vec<f64> = (0..24).map(|i| (i as f64 / 4.0).sin()).collect();
        let xs = DMatrix::from_fn(3, 1, |i, _| i as f64 - 1.0);
        let range = OutputRange::new(-2.0, 2.0).unwrap();
        let mut cfg = SelectionConfig {
            grid: vec![0.2, 0.8],
            signal_var: 1.0,
            noise_var: 0.25,
            folds: 3,
            eps_select: 0.5,
            eps_predict: 0.75,
            delta: 1e-5,
            utility: Utility::CrossValidation,
            mvee: MveeConfig::default(),
        };
        let mut rng = SecureRng::seeded(3);
        for grid in [vec![0.2, 0.8], vec![0.5]] {
            // Two candidates (the mechanism runs) and one (ε_select is charged all the same).
            cfg.grid = grid;
            let r = private_gp(&x, &y, range, &xs, &cfg, &mut rng).unwrap();
            assert_eq!(cfg.cost(24).unwrap(), r.spent);
        }
        assert_eq!(cfg.cost(24).unwrap().epsilon(1e-5).unwrap(), 1.25);
        // Bad settings are refused by name, as private_gp would refuse them.
        cfg.eps_select = -1.0;
        assert!(cfg
            .cost(24)
            .unwrap_err()
            .to_string()
            .contains("`eps_select`"));
        cfg.eps_select = 0.5;
        assert!(cfg.cost(2).unwrap_err().to_string().contains("`folds`"));
    }

    #[test]
    fn a_large_training_set_is_refused_by_its_size() {
        use crate::resources::{Limits, Resource};
        let cfg = SelectionConfig {
            grid: crate::gp::demo::default_grid(),
            signal_var: 1.0,
            noise_var: 0.25,
            ..crate::gp::demo::timing_config()
        };
        // 80 000 training rows: one 8n² matrix alone is 51 GB.
        let e = cfg.resources(80_000, 20_000);
        assert_eq!(e.needs()[0].resource, Resource::Memory);
        assert!(
            e.needs()[0].amount > 4.0 * 51.2e9,
            "{}",
            e.needs()[0].amount
        );
        let limits = Limits::test_machine();
        let msg = limits.refusal(&e);
        assert!(msg.starts_with("invalid parameter `data` = 80000 training rows: needs about"));
        // The bundled demo's size (about 350 training rows) passes.
        assert!(limits
            .check(&cfg.resources(354, 88), false, "use --force to try anyway")
            .is_ok());
    }
}
