//! Privacy loss distributions (PLDs): the tightest numerical accounting dptune has.
//!
//! A [`Pld`] holds, for one neighbour relation, the law of the privacy loss L = ln(P(o)/Q(o)),
//! o ~ P, of a dominating pair (P, Q), in both orders: "forward" (M(D), M(D′)) and "backward"
//! (M(D′), M(D)); under add/remove-one these are the remove and the add directions, and both are
//! needed because the relation is symmetric (THEORY.md §16a). Every query takes the larger.
//!
//! * Discretisation: connect-the-dots on a uniform loss grid (`discretise`; Doroshenko et al.
//!   2022, arXiv 2207.04380), refining the pessimistic bucketing of Meiser & Mohammadi 2018
//!   ("Tight on budget?", CCS): every rounding moves loss up; mass cut above the grid goes to the
//!   +∞ atom.
//! * Composition: losses of independent mechanisms add, so laws convolve (Koskela, Jälkö &
//!   Honkela 2020, arXiv 1906.03049, Thm. 1 with the FFT of §4; Sommer, Meiser & Mohammadi 2019);
//!   a T-fold self-composition is one FFT, a T-th power by repeated squaring, one inverse FFT,
//!   on a window whose aliasing is bounded and charged (`pmf`; the windowing follows Gopi, Lee
//!   & Wutschitz 2021, arXiv 2106.02848).
//! * Queries: δ(ε) = E[(1 − e^{ε−L})₊] + P[L = ∞], its inverse ε(δ), and the profile; all upper
//!   bounds with the floating-point error charged.
//!
//! The numbers dptune reports are never below the truth (DESIGN.md rule 2): the acceptance test
//! `tests/golden_pld.rs` checks them against optimistic lower bounds from dp_accounting and
//! prv_accountant, and keeps deliberately wrong variants that it rejects.

mod bytes;
mod discretise;
mod fft;
mod grid_limit;
mod lattice;
mod mechanisms;
mod pmf;
mod progression;
pub(super) mod spec;

use std::cell::RefCell;
use std::sync::Arc;

use serde::Serialize;

use super::neighbours::Neighbours;
use crate::error::{check_delta, check_open_unit, check_positive, Error, Result};
use crate::numeric::bisect::{halve_to_failure, smallest_between, Halved};
pub use lattice::{dpsgd_lattice_pld, is_grid_refusal, ROUNDING_VARIANCE};
use mechanisms::Direction;
use pmf::LossPmf;
pub use spec::{ComposeSpec, PartSpec};

/// Grid and truncation of a PLD computation.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PldConfig {
    /// Width h of the uniform loss grid (dp_accounting calls it the value discretisation
    /// interval).
    pub interval: f64,
    /// Mass cut from each tail, at construction and after every composition.
    pub tail: f64,
}

impl Default for PldConfig {
    /// h = 1e-4 (dp_accounting's default) and tails of 1e-18.
    fn default() -> Self {
        Self {
            interval: 1e-4,
            tail: 1e-18,
        }
    }
}

impl PldConfig {
    fn check(&self) -> Result<()> {
        check_positive("interval", self.interval)?;
        if self.interval > 1.0 {
            return Err(Error::invalid("interval", self.interval, "must be <= 1"));
        }
        if !(self.tail > 0.0 && self.tail <= 1e-9) {
            return Err(Error::invalid("tail", self.tail, "must lie in (0, 1e-9]"));
        }
        Ok(())
    }
}

/// A privacy loss distribution in both directions, for one neighbour relation.
#[derive(Debug, Clone, PartialEq)]
pub struct Pld {
    neighbours: Neighbours,
    config: PldConfig,
    forward: Arc<LossPmf>,
    /// `None` when the pair is symmetric (the backward law equals the forward one).
    backward: Option<Arc<LossPmf>>,
}

/// One point of a privacy profile.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ProfilePoint {
    /// ε.
    pub eps: f64,
    /// An upper bound on the smallest δ with (ε, δ)-DP.
    pub delta: f64,
}

fn sensitivity_up(value: f64, sensitivity: f64, name: &'static str) -> Result<f64> {
    check_positive(name, value)?;
    check_positive("sensitivity", sensitivity)?;
    Ok(crate::numeric::round_up(sensitivity / value))
}

fn integer_sensitivity(sensitivity: f64) -> Result<i64> {
    if sensitivity >= 1.0 && sensitivity.fract() == 0.0 && sensitivity <= 1e9 {
        Ok(sensitivity as i64)
    } else {
        Err(Error::invalid(
            "sensitivity",
            sensitivity,
            "a discrete mechanism needs an integer sensitivity >= 1",
        ))
    }
}

impl Pld {
    fn symmetric(pmf: LossPmf, neighbours: Neighbours, config: PldConfig) -> Self {
        Self {
            neighbours,
            config,
            forward: Arc::new(pmf),
            backward: None,
        }
    }

    /// The parameter checks of [`Pld::gaussian`], with the same errors.
    pub(super) fn check_gaussian(sigma: f64, sensitivity: f64, config: PldConfig) -> Result<()> {
        config.check()?;
        sensitivity_up(sigma, sensitivity, "sigma").map(|_| ())
    }

    /// The Gaussian mechanism N(0, σ²) on a query of L2 sensitivity Δ under `neighbours`
    /// (mechanisms::gaussian; Δ is the sensitivity under that relation).
    pub fn gaussian(
        sigma: f64,
        sensitivity: f64,
        neighbours: Neighbours,
        config: PldConfig,
    ) -> Result<Self> {
        config.check()?;
        let s = 1.0 / sensitivity_up(sigma, sensitivity, "sigma")?;
        Ok(Self::symmetric(
            mechanisms::gaussian(s, &config, false).map_err(|e| e.refuse("sigma", sigma))?,
            neighbours,
            config,
        ))
    }

    /// The Laplace mechanism with scale b on a query of L1 sensitivity Δ.
    pub fn laplace(
        b: f64,
        sensitivity: f64,
        neighbours: Neighbours,
        config: PldConfig,
    ) -> Result<Self> {
        config.check()?;
        let r = sensitivity_up(b, sensitivity, "b")?;
        Ok(Self::symmetric(
            mechanisms::laplace(r, &config, false).map_err(|e| e.refuse("b", b))?,
            neighbours,
            config,
        ))
    }

    /// The discrete Gaussian with parameter σ on an integer query of sensitivity Δ.
    pub fn discrete_gaussian(
        sigma: f64,
        sensitivity: f64,
        neighbours: Neighbours,
        config: PldConfig,
    ) -> Result<Self> {
        Self::discrete_gaussian_times(sigma, sensitivity, 1, neighbours, config)
    }

    /// The parameter checks of [`Pld::discrete_gaussian`]; the integer sensitivity.
    fn check_discrete_gaussian(sigma: f64, sensitivity: f64, config: PldConfig) -> Result<i64> {
        config.check()?;
        check_positive("sigma", sigma)?;
        let d = integer_sensitivity(sensitivity)?;
        if sigma > 1e6 {
            return Err(Error::invalid("sigma", sigma, "must be <= 1e6"));
        }
        Ok(d)
    }

    /// `times` applications of [`Pld::discrete_gaussian`]: composed exactly on the progression
    /// of its losses and discretised once (module `progression`: tighter, and far less work
    /// than an FFT over the grid window), or by [`Pld::self_compose`] when the progression is
    /// too long for direct convolution (σ in the thousands) or no coarser than the grid.
    pub(super) fn discrete_gaussian_times(
        sigma: f64,
        sensitivity: f64,
        times: u64,
        neighbours: Neighbours,
        config: PldConfig,
    ) -> Result<Self> {
        let d = Self::check_discrete_gaussian(sigma, sensitivity, config)?;
        if times == 0 {
            return Err(Error::invalid("times", times, "must be >= 1"));
        }
        let one = mechanisms::discrete_gaussian_progression(sigma, d, &config);
        // Neighbouring losses are 2Δ/(2σ²) apart; finer than the grid, the FFT is the better way.
        let exact = if times == 1 {
            None
        } else if d as f64 / (sigma * sigma) > config.interval {
            one.power(times, config.tail)
        } else {
            None
        };
        let discretised = |law: &progression::Progression, name: &'static str, value: f64| {
            law.discretise(config.interval)
                .map(|pmf| Self::symmetric(pmf, neighbours, config))
                .map_err(|e| e.refuse(name, value))
        };
        match exact {
            Some(law) => discretised(&law, "times", times as f64),
            None => discretised(&one, "sigma", sigma)?.self_compose(times),
        }
    }

    /// The discrete Laplace P(o) ∝ e^{−|o|/t} on an integer query of sensitivity Δ.
    pub fn discrete_laplace(
        t: f64,
        sensitivity: f64,
        neighbours: Neighbours,
        config: PldConfig,
    ) -> Result<Self> {
        config.check()?;
        check_positive("t", t)?;
        let d = integer_sensitivity(sensitivity)?;
        if d > 1_000_000 {
            return Err(Error::invalid("sensitivity", d, "must be <= 1e6"));
        }
        Ok(Self::symmetric(
            mechanisms::discrete_laplace(t, d, &config).map_err(|e| e.refuse("t", t))?,
            neighbours,
            config,
        ))
    }

    /// k-ary randomized response with parameter ε (k = 2: the worst case of pure ε-DP).
    pub fn randomized_response(
        eps: f64,
        k: u32,
        neighbours: Neighbours,
        config: PldConfig,
    ) -> Result<Self> {
        config.check()?;
        check_positive("eps", eps)?;
        if k < 2 {
            return Err(Error::invalid("k", k, "must be >= 2"));
        }
        Ok(Self::symmetric(
            mechanisms::randomized_response(eps, k, &config).map_err(|e| e.refuse("eps", eps))?,
            neighbours,
            config,
        ))
    }

    /// Any ε-DP mechanism, by its worst-case pair (binary randomized response).
    pub fn pure(eps: f64, neighbours: Neighbours, config: PldConfig) -> Result<Self> {
        Self::randomized_response(eps, 2, neighbours, config)
    }

    /// Any (ε, δ)-DP mechanism, by its worst-case pair (mechanisms::approx).
    pub fn approx(eps: f64, delta: f64, neighbours: Neighbours, config: PldConfig) -> Result<Self> {
        config.check()?;
        check_positive("eps", eps)?;
        check_delta("delta", delta)?;
        Ok(Self::symmetric(
            mechanisms::approx(eps, delta, &config).map_err(|e| e.refuse("eps", eps))?,
            neighbours,
            config,
        ))
    }

    fn check_poisson(q: f64, neighbours: Neighbours) -> Result<()> {
        if !(q > 0.0 && q <= 1.0) {
            return Err(Error::invalid("q", q, "a Poisson rate must lie in (0, 1]"));
        }
        if neighbours != Neighbours::AddRemove {
            return Err(Error::invalid(
                "q",
                q,
                "Poisson subsampling is accounted under add/remove-one only",
            ));
        }
        Ok(())
    }

    /// One step of DP-SGD: the Poisson-subsampled Gaussian with rate q and σ/Δ = `sigma`/
    /// `sensitivity`, add/remove-one, both directions (mechanisms::subsampled_gaussian).
    pub fn subsampled_gaussian(
        q: f64,
        sigma: f64,
        sensitivity: f64,
        config: PldConfig,
    ) -> Result<Self> {
        config.check()?;
        Self::check_poisson(q, Neighbours::AddRemove)?;
        let s = 1.0 / sensitivity_up(sigma, sensitivity, "sigma")?;
        if q == 1.0 {
            return Self::gaussian(sigma, sensitivity, Neighbours::AddRemove, config);
        }
        let (remove, add) = rayon::join(
            || mechanisms::subsampled_gaussian_direction(q, s, &config, false, Direction::Remove),
            || mechanisms::subsampled_gaussian_direction(q, s, &config, false, Direction::Add),
        );
        let refuse = |e: grid_limit::GridTooLarge| e.refuse("sigma", sigma);
        let (remove, add) = (remove.map_err(refuse)?, add.map_err(refuse)?);
        Ok(Self {
            neighbours: Neighbours::AddRemove,
            config,
            forward: Arc::new(remove),
            backward: Some(Arc::new(add)),
        })
    }

    /// The Poisson-subsampled Laplace mechanism with rate q, scale b, sensitivity Δ.
    pub fn subsampled_laplace(q: f64, b: f64, sensitivity: f64, config: PldConfig) -> Result<Self> {
        config.check()?;
        Self::check_poisson(q, Neighbours::AddRemove)?;
        let r = sensitivity_up(b, sensitivity, "b")?;
        if q == 1.0 {
            return Self::laplace(b, sensitivity, Neighbours::AddRemove, config);
        }
        let (remove, add) =
            mechanisms::subsampled_laplace(q, r, &config, false).map_err(|e| e.refuse("b", b))?;
        Ok(Self {
            neighbours: Neighbours::AddRemove,
            config,
            forward: Arc::new(remove),
            backward: Some(Arc::new(add)),
        })
    }

    /// The neighbour relation.
    pub fn neighbours(&self) -> Neighbours {
        self.neighbours
    }

    /// The grid and truncation.
    pub fn config(&self) -> PldConfig {
        self.config
    }

    /// Grid points held (both directions): the memory, whatever was composed.
    pub fn grid_points(&self) -> usize {
        self.forward.len() + self.backward.as_ref().map_or(0, |b| b.len())
    }

    fn backward_or_forward(&self) -> &LossPmf {
        self.backward.as_deref().unwrap_or(&self.forward)
    }

    /// Sequential composition with another PLD on the same grid and relation.
    pub fn compose(&self, other: &Pld) -> Result<Pld> {
        if self.neighbours != other.neighbours {
            return Err(Error::NeighboursMismatch {
                left: self.neighbours.to_string(),
                right: other.neighbours.to_string(),
            });
        }
        let tail = self.config.tail.min(other.config.tail);
        let (forward, backward) = match (&self.backward, &other.backward) {
            (None, None) => (
                on_worker(|| self.forward.compose(&other.forward, tail)),
                Ok(None),
            ),
            _ => rayon::join(
                || self.forward.compose(&other.forward, tail),
                || {
                    self.backward_or_forward()
                        .compose(other.backward_or_forward(), tail)
                        .map(|b| Some(Arc::new(b)))
                },
            ),
        };
        Ok(Pld {
            neighbours: self.neighbours,
            config: self.config,
            forward: Arc::new(forward?),
            backward: backward?,
        })
    }

    /// `times`-fold self-composition.
    pub fn self_compose(&self, times: u64) -> Result<Pld> {
        let tail = self.config.tail;
        let (forward, backward) = match &self.backward {
            None => (on_worker(|| self.forward.power(times, tail)), Ok(None)),
            Some(b) => rayon::join(
                || self.forward.power(times, tail),
                || b.power(times, tail).map(|b| Some(Arc::new(b))),
            ),
        };
        Ok(Pld {
            neighbours: self.neighbours,
            config: self.config,
            forward: Arc::new(forward?),
            backward: backward?,
        })
    }

    /// An upper bound on the smallest δ such that the mechanism is (ε, δ)-DP.
    pub fn delta(&self, eps: f64) -> Result<f64> {
        if !(eps.is_finite() && eps >= 0.0) {
            return Err(Error::invalid("epsilon", eps, "must be finite and >= 0"));
        }
        let b = self.backward.as_ref().map_or(0.0, |b| b.delta(eps));
        Ok(self.forward.delta(eps).max(b))
    }

    /// The smallest ε ≥ 0 such that the mechanism is (ε, δ)-DP by this PLD. An error when the
    /// +∞ atom (and the charged error) alone exceed δ.
    pub fn epsilon(&self, delta: f64) -> Result<f64> {
        if !(delta > 0.0 && delta < 1.0) {
            return Err(Error::invalid("delta", delta, "must lie in (0, 1)"));
        }
        let dirs = std::iter::once(&*self.forward).chain(self.backward.as_deref());
        let mut eps: f64 = 0.0;
        for d in dirs {
            match d.epsilon(delta) {
                Some(e) => eps = eps.max(e),
                None => {
                    return Err(Error::Conversion {
                        from: "a privacy loss distribution".into(),
                        to: format!("(eps, delta = {delta:e})-DP"),
                        reason: format!(
                            "the infinite-loss mass and the charged error ({:e}) exceed delta",
                            d.inf + d.err
                        ),
                    })
                }
            }
        }
        Ok(eps)
    }

    /// δ(ε) at each ε of `eps` (the privacy profile).
    pub fn profile(&self, eps: &[f64]) -> Result<Vec<ProfilePoint>> {
        eps.iter()
            .map(|&e| {
                Ok(ProfilePoint {
                    eps: e,
                    delta: self.delta(e)?,
                })
            })
            .collect()
    }
}

/// `f` run on a rayon worker thread (the calling thread waits), for the one direction of a
/// symmetric PLD. Not on the calling thread: a worker's allocator arena keeps the freed
/// transform buffers for the next call, where the main thread's returns them to the system
/// after every call, so that every call page-faults its buffers in again (measured: about 1,500
/// page faults and twice the CPU time per Laplace T = 20 call). Not through `rayon::join` with
/// an empty second task either: that wakes a second worker, which spins for work before it
/// sleeps again (about 5 % of the CPU time of that call). `rayon::scope` runs `f` on a worker
/// and queues nothing else.
fn on_worker<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    rayon::scope(|_| f())
}

/// ε(δ) of `steps` DP-SGD steps (Poisson rate q, noise multiplier z, add/remove-one) by PLD on
/// the default grid.
pub fn dpsgd_epsilon(q: f64, z: f64, steps: u64, delta: f64) -> Result<f64> {
    dpsgd_pld(q, z, steps, PldConfig::default())?.epsilon(delta)
}

/// The PLD of `steps` DP-SGD steps.
pub fn dpsgd_pld(q: f64, z: f64, steps: u64, config: PldConfig) -> Result<Pld> {
    if steps == 0 {
        return Err(Error::invalid("steps", steps, "must be >= 1"));
    }
    Pld::subsampled_gaussian(q, z, 1.0, config)?.self_compose(steps)
}

/// A DP-SGD noise calibration by PLD ([`calibrate_dpsgd_noise`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NoiseCalibration {
    /// The noise multiplier found: the PLD at it, on the calibration's grid, gives `epsilon`,
    /// at most the target.
    pub noise_multiplier: f64,
    /// ε by the PLD at `noise_multiplier` (the value the search checked, not recomputed).
    pub epsilon: f64,
    /// Whether the search was stopped from below by the grid rather than by the target: just
    /// below `noise_multiplier` (within the precision) the PLD needs more grid points than are
    /// held, so less noise may meet the target, provably so only on a coarser grid.
    pub grid_limited: bool,
}

/// Why a noise multiplier failed the calibration's check.
#[derive(Debug)]
enum Failure {
    /// ε above the target.
    Exceeds,
    /// No finite ε at the target δ: the +∞ atom and the charged error exceed it (the error
    /// says so, naming δ).
    NoEpsilon(Error),
    /// The PLD needs more grid points than are held (the refusal names what drives the window).
    Refused(Error),
}

/// The noise multipliers DP-SGD calibrations search (this crate's, and the tuner's
/// `tune::cost::NOISE_MULTIPLIERS`).
pub const NOISE_MULTIPLIER_RANGE: (f64, f64) = (0.05, 1e4);

/// The smallest noise multiplier z (to relative precision 1e-4, rounded up) such that `steps`
/// DP-SGD steps at rate q are (ε, δ)-DP by PLD on the grid of `config`. ε(z) decreases in z:
/// the answer is bracketed from z = 1 by halving or doubling, then the bracket is bisected
/// (`numeric::bisect::smallest_between`) on the verified predicate "ε(z) ≤ target", so the z
/// returned is one at which it was checked, with the ε checked there. A z whose PLD needs more
/// grid points than are held counts as not verified (the search moves up, never down); when
/// that is what bounds the search from below, the result says so
/// ([`NoiseCalibration::grid_limited`]) instead of passing the grid's limit off as the target's.
///
/// Errors, naming the parameter at fault: `epsilon` not positive, `delta` not in (0, 1), a
/// bad grid; the target met at the start of [`NOISE_MULTIPLIER_RANGE`] already; at its end, ε
/// still above the target (`epsilon`), no finite ε at `delta` (`delta`: the PLD's +∞ atom and
/// charged error, which grow with the steps, exceed it), or the grid refused (the refusal
/// itself, naming what drives the window; `interval` when it is the single step's window,
/// which only a coarser grid shrinks).
pub fn calibrate_dpsgd_noise(
    q: f64,
    steps: u64,
    eps: f64,
    delta: f64,
    config: PldConfig,
) -> Result<NoiseCalibration> {
    check_positive("epsilon", eps)?;
    check_open_unit("delta", delta)?;
    config.check()?;
    let probe = |z: f64| -> Result<std::result::Result<f64, Failure>> {
        match dpsgd_pld(q, z, steps, config).and_then(|p| p.epsilon(delta)) {
            Ok(e) if e <= eps => Ok(Ok(e)),
            Ok(_) => Ok(Err(Failure::Exceeds)),
            Err(e @ Error::Conversion { .. }) => Ok(Err(Failure::NoEpsilon(e))),
            Err(e) if is_grid_refusal(&e) => Ok(Err(Failure::Refused(e))),
            Err(e) => Err(e),
        }
    };
    smallest_verified(probe, eps, delta, config.interval)
}

/// The search of [`calibrate_dpsgd_noise`], given what `probe` says at each z (`eps`,
/// `delta` and `interval` only name the parameters of its errors).
fn smallest_verified(
    probe: impl Fn(f64) -> Result<std::result::Result<f64, Failure>>,
    eps: f64,
    delta: f64,
    interval: f64,
) -> Result<NoiseCalibration> {
    // How the last z that did not fit failed: the lower end of the bracket.
    let failure = RefCell::new(None);
    let fits = |z: f64| -> Result<Option<(f64, f64)>> {
        Ok(match probe(z)? {
            Ok(e) => Some((z, e)),
            Err(f) => {
                *failure.borrow_mut() = Some(f);
                None
            }
        })
    };
    let (low, high) = NOISE_MULTIPLIER_RANGE;
    // Bracket from z = 1 by halving or doubling: a bisection from the bottom of the range
    // would probe small multipliers, whose grids are the largest (q 0.01, T 1000, (8, 1e-5):
    // z = 0.22 first, 30 % more time and 50 % more memory than the whole search needs now).
    let (lo, hi, best) = match fits(1.0)? {
        Some(best) => match halve_to_failure(low, 1.0, best, fits)? {
            Halved::Bracket { lo, hi, best } => (lo, hi, best),
            Halved::Floor(_) => {
                return Err(Error::invalid(
                    "epsilon",
                    eps,
                    format!(
                        "the target is met at z = {low} already; the calibration range starts \
                         there"
                    ),
                ))
            }
        },
        None => {
            let mut hi = 1.0;
            loop {
                if hi >= high {
                    return Err(top_failure(failure.take(), eps, delta, interval));
                }
                let lo = hi;
                hi = (2.0 * hi).min(high);
                if let Some(best) = fits(hi)? {
                    break (lo, hi, best);
                }
            }
        }
    };
    let (noise_multiplier, epsilon) = smallest_between(lo, hi, best, 1.0 + 1e-4, fits)?;
    let grid_limited = matches!(failure.into_inner(), Some(Failure::Refused(_)));
    Ok(NoiseCalibration {
        noise_multiplier,
        epsilon,
        grid_limited,
    })
}

/// The error of a calibration whose largest noise multiplier failed as `failure` did, naming
/// the parameter at fault: the refusal itself when the window of the composition is too wide
/// (it names the steps), the grid when even one step's window is, δ when the PLD has no ε
/// there (its +∞ atom and charged error, which grow with the steps, exceed it), else ε.
fn top_failure(failure: Option<Failure>, eps: f64, delta: f64, interval: f64) -> Error {
    let high = NOISE_MULTIPLIER_RANGE.1;
    match failure {
        Some(Failure::Refused(Error::InvalidParameter { name: "sigma", .. })) => Error::invalid(
            "interval",
            interval,
            format!(
                "even one DP-SGD step at noise multiplier {high} needs more grid points than \
                 are held"
            ),
        ),
        Some(Failure::Refused(e)) => e,
        Some(Failure::NoEpsilon(e)) => Error::invalid(
            "delta",
            delta,
            format!(
                "even at noise multiplier {high} the PLD of these steps reaches no epsilon at \
                 this delta ({e}; the error grows with the number of steps: a larger delta or \
                 fewer steps may fit, and `dptune account dpsgd` shows the RDP epsilon)"
            ),
        ),
        _ => Error::invalid(
            "epsilon",
            eps,
            format!("no noise multiplier up to {high} reaches this target"),
        ),
    }
}

#[cfg(test)]
mod tests;
