//! The whole cost of [`private_gp`](super::private_gp), known from public settings before any
//! data is read (so that a persistent budget can be charged first).

use super::SelectionConfig;
use crate::error::Result;
use crate::privacy::{Guarantee, Neighbours};
use crate::select::exponential::em_guarantee;

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
}
