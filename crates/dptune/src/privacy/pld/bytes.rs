//! The PLD part of the exact byte encoding of a guarantee (`privacy::bytes`): the grid and
//! truncation (interval h, tail), then the forward loss law and, if the pair is not symmetric,
//! the backward one. A law is h, the offset of its first grid point (i64), its masses, the mass
//! at +∞ and its floating-point error bound, every `f64` by its bit pattern.

use std::sync::Arc;

use super::grid_limit::GridTooLarge;
use super::pmf::LossPmf;
use super::{Pld, PldConfig};
use crate::error::{Error, Result};
use crate::privacy::bytes::{Reader, Writer};

fn malformed(reason: &str) -> Error {
    Error::invalid("bytes", "an encoded privacy loss distribution", reason)
}

fn write_pmf(w: &mut Writer, p: &LossPmf) {
    w.f64(p.h);
    w.i64(p.offset);
    w.f64s(&p.probs);
    w.f64(p.inf);
    w.f64(p.err);
}

/// A loss law, checked as the computations leave one: on the configured grid, at most
/// [`MAX_POINTS`](super::grid_limit::MAX_POINTS) points with indices below 2^53
/// ([`GridTooLarge::window`]), finite non-negative masses, an atom at +∞ and an error bound in
/// [0, 1].
fn read_pmf(r: &mut Reader<'_>, config: &PldConfig) -> Result<LossPmf> {
    let h = r.f64()?;
    let offset = r.i64()?;
    let probs = r.f64s()?;
    let inf = r.f64()?;
    let err = r.f64()?;
    let unit = |x: f64| (0.0..=1.0).contains(&x);
    if h != config.interval {
        return Err(malformed(
            "the grid of a loss law differs from the configured interval",
        ));
    }
    let lo = offset as f64;
    let held = GridTooLarge::window(lo, lo + (probs.len() as f64 - 1.0), probs.len() as f64);
    if probs.is_empty() || held.is_err() {
        return Err(malformed(
            "a loss law has no grid point, too many, or grid indices of 2^53 or more",
        ));
    }
    if !(probs.iter().all(|p| p.is_finite() && *p >= 0.0) && unit(inf) && unit(err)) {
        return Err(malformed(
            "masses must be finite, non-negative and at most 1",
        ));
    }
    Ok(LossPmf {
        h,
        offset,
        probs,
        inf,
        err,
    })
}

impl Pld {
    pub(crate) fn write(&self, w: &mut Writer) {
        w.u8(match self.neighbours {
            crate::privacy::Neighbours::AddRemove => 0,
            crate::privacy::Neighbours::Replace => 1,
        });
        w.f64(self.config.interval);
        w.f64(self.config.tail);
        write_pmf(w, &self.forward);
        match &self.backward {
            None => w.u8(0),
            Some(b) => {
                w.u8(1);
                write_pmf(w, b);
            }
        }
    }

    pub(crate) fn read(r: &mut Reader<'_>) -> Result<Pld> {
        let neighbours = match r.u8()? {
            0 => crate::privacy::Neighbours::AddRemove,
            1 => crate::privacy::Neighbours::Replace,
            _ => return Err(malformed("unknown neighbour relation")),
        };
        let config = PldConfig {
            interval: r.f64()?,
            tail: r.f64()?,
        };
        config.check()?;
        let forward = Arc::new(read_pmf(r, &config)?);
        let backward = if r.flag()? {
            Some(Arc::new(read_pmf(r, &config)?))
        } else {
            None
        };
        Ok(Pld {
            neighbours,
            config,
            forward,
            backward,
        })
    }
}
