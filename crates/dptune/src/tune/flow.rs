//! Split–tune–final (THEORY.md §10): split the data by coins into a tuning part and a final
//! part, tune on the first, fit the chosen configuration on the second. The parts are disjoint,
//! so both may spend the full outer allowance and the total is their parallel composition.
//!
//! The `cheating` switch fits the final model on all the data instead. That reuses the tuning
//! data, so the result has **no** guarantee: it is typed [`Privacy::NotPrivate`] and every
//! output that shows it must say so. It exists for debugging and comparison only.

use crate::error::{Error, Result};
use crate::noise::SecureRng;
use crate::privacy::{Guarantee, Ledger};

use super::candidate::{Learner, Scorer};
use super::space::Config;
use super::split::split_by_coin;
use super::tuner::{TuneOptions, Tuner};
use crate::data::Records;

/// What the final result may claim.
#[derive(Debug, Clone, PartialEq)]
pub enum Privacy {
    /// Tuning and final fit together satisfy this guarantee.
    Private(Guarantee),
    /// The final fit reused the tuning data (the `cheating` switch): no guarantee at all.
    NotPrivate,
}

/// A privately tuned model.
#[derive(Debug)]
pub struct DpTuned<M> {
    /// The chosen configuration.
    pub config: Config,
    /// The chosen candidate's private tuning score.
    pub tuning_score: f64,
    /// The final model.
    pub model: M,
    /// The guarantee of tuning plus final fit, or the statement that there is none.
    pub privacy: Privacy,
}

/// The fractions of the coin splits.
#[derive(Debug, Clone, Copy)]
pub struct Fractions {
    /// Probability that a record goes to the tuning part (the rest is for the final fit).
    pub tune: f64,
    /// Probability that a tuning record is used for training (the rest scores).
    pub train: f64,
}

/// Tunes on one part of `data` and fits the chosen configuration on the other, each under
/// `allowance` (the tuner's per-run budget must already be calibrated to it; the final fit gets
/// it whole). Returns `Ok(None)` with nothing released when the tuning released ⊥.
#[allow(clippy::too_many_arguments)]
pub fn split_tune_final<L: Learner, S: Scorer<L>>(
    tuner: &Tuner<'_>,
    learner: &L,
    scorer: &S,
    data: &L::Data,
    allowance: &Guarantee,
    fractions: Fractions,
    options: &TuneOptions<'_>,
    cheating: bool,
    rng: &mut SecureRng,
) -> Result<Option<DpTuned<L::Model>>> {
    let outer = split_by_coin(data.len(), fractions.tune, rng)?;
    let tuning_data = data.select(&outer.first);
    let inner = split_by_coin(tuning_data.len(), fractions.train, rng)?;
    let tuned = tuner.run(learner, scorer, &tuning_data, &inner, options, rng)?;
    let mut ledger = Ledger::new(allowance.clone())?;
    ledger.charge(&tuned.spent)?;
    let Some(best) = tuned.value else {
        return Ok(None);
    };
    let (final_data, privacy_of_final) = if cheating {
        (data.select(&(0..data.len()).collect::<Vec<_>>()), false)
    } else {
        (data.select(&outer.second), true)
    };
    let fitted = learner
        .fit(&best.config, &final_data, allowance, rng)
        .map_err(|e| match e {
            Error::InvalidParameter { .. } => Error::NoRelease {
                reason: format!("the chosen configuration could not be fitted: {e}"),
            },
            other => other,
        })?;
    Ledger::new(allowance.clone())?.charge(&fitted.spent)?;
    let privacy = if privacy_of_final {
        Privacy::Private(Guarantee::parallel(&[tuned.spent, fitted.spent])?)
    } else {
        Privacy::NotPrivate
    };
    Ok(Some(DpTuned {
        config: best.config,
        tuning_score: best.score,
        model: fitted.value,
        privacy,
    }))
}
