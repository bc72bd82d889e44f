//! The whole cost of a DP-HYPE simulation, known from public settings before any data is read
//! (so that a persistent budget can be charged first).

use super::sim::SimConfig;
use crate::error::{Error, Result};
use crate::privacy::convert::mul_up;
use crate::privacy::{Guarantee, Neighbours};

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
}
