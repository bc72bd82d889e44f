//! What a tuning runs: the data-independent half of [`super::Tuner::run`].
//!
//! A schedule is drawn from the tuner's generator before any data are touched: the generator
//! first yields the per-run streams, then the number of runs K. Run i samples its configuration
//! from stream i (exhaustive search takes grid point i instead) and keeps the rest of stream i
//! for its own randomness. Whoever executes the runs (the library's parallel loop, or a Python
//! process dispatching callables) sees how many tasks there are: that number is K unless the
//! tuning is capped, so the executor is trusted with it (THEORY.md §6.2). Which of the executed
//! runs count (the first min(K, T)) stays inside the [`super::release::ReleaseRule`] drawn with
//! the schedule; nothing released depends on the task count.

use crate::error::{Error, Result};
use crate::noise::{SecureRng, Streams};
use crate::privacy::repeat::Repeats;

use super::cost::Method;
use super::runs::draw_runs;
use super::space::{Config, SearchSpace};

/// The runs of one tuning, drawn before any data are touched.
pub struct Schedule<'a> {
    space: &'a SearchSpace,
    /// Every grid point, for exhaustive search (run i trains point i); else `None` (sampled).
    grid: Option<Vec<Config>>,
    streams: Streams,
    executed: u64,
}

/// The drawn part of a schedule: the schedule itself and K, the number of runs that count.
pub(super) struct Drawn<'a> {
    pub(super) schedule: Schedule<'a>,
    pub(super) runs: u64,
}

impl<'a> Schedule<'a> {
    /// Draws the schedule of `method` over `space`: the streams, then K; with `cap` (ignored by
    /// exhaustive search, whose K is public) exactly `cap` runs are executed.
    pub(super) fn draw(
        method: &Method,
        space: &'a SearchSpace,
        cap: Option<u64>,
        rng: &mut SecureRng,
    ) -> Result<Drawn<'a>> {
        let streams = rng.streams();
        let (runs, grid) = match *method {
            Method::RepeatAndSelect(r) => (draw_runs(&r, rng)?, None),
            Method::Threshold { gamma, .. } => (draw_runs(&Repeats::geometric(gamma)?, rng)?, None),
            Method::Exhaustive { runs } => (runs as u64, Some(space.grid()?)),
        };
        let executed = match grid {
            Some(_) => runs,
            None => cap.unwrap_or(runs),
        };
        Ok(Drawn {
            schedule: Self {
                space,
                grid,
                streams,
                executed,
            },
            runs,
        })
    }

    /// The number of tasks to execute: K, or the cap T of a capped tuning. Only the executor
    /// may see it (see the module doc): never release, log or report it.
    pub fn tasks(&self) -> u64 {
        self.executed
    }

    /// Task `index`: its configuration and the generator its run draws everything else from
    /// (stream `index` after the configuration was sampled).
    pub fn task(&self, index: u64) -> Result<(Config, SecureRng)> {
        if index >= self.executed {
            return Err(Error::invalid(
                "index",
                index,
                "beyond the tasks of the schedule",
            ));
        }
        let mut rng = self.streams.get(index);
        let config = match &self.grid {
            Some(g) => g[index as usize].clone(),
            None => self.space.sample(&mut rng),
        };
        Ok((config, rng))
    }
}
