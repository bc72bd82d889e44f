//! The privacy of DP-SGD as a whole: T steps of the Poisson-subsampled Gaussian
//! ([`super::subsampled`], one step's Rényi divergence) composed into an RDP curve and a
//! [`Guarantee`], for continuous and for lattice noise. Kept apart from the per-step
//! mathematics so that the curve type and the guarantee depend on it, not it on them.

use super::convert::{rdp_epsilon_on, EpsAtOrder};
use super::guarantee::{Guarantee, Neighbours};
use super::rdp::{default_orders, RdpCurve, RdpPart};
use super::subsampled::check_q_z;
#[cfg(doc)]
use super::subsampled::{discrete_rdp, subsampled_gaussian_rdp};
use crate::error::{check_delta, Error, Result};

/// The RDP curve of `steps` DP-SGD steps: `steps` × one Poisson-subsampled Gaussian step
/// (MTZ19, arXiv 1908.10530; composition, THEORY.md §9). Preconditions as in
/// [`subsampled_gaussian_rdp`]; `steps` ≥ 1.
pub fn dpsgd_curve(q: f64, z: f64, steps: u64) -> Result<RdpCurve> {
    if steps == 0 {
        return Err(Error::invalid("steps", steps, "must be >= 1"));
    }
    RdpCurve::subsampled_gaussian(q, z)?.times(steps as f64)
}

/// The guarantee of `steps` DP-SGD steps with Poisson sampling rate `q` and noise multiplier `z`
/// (add/remove-one; MTZ19 arXiv 1908.10530 with Abadi et al. 2016 arXiv 1607.00133).
pub fn dpsgd_guarantee(q: f64, z: f64, steps: u64) -> Result<Guarantee> {
    Ok(Guarantee::rdp(
        dpsgd_curve(q, z, steps)?,
        Neighbours::AddRemove,
    ))
}

/// The RDP curve of `steps` DP-SGD steps whose noise is the discrete Gaussian on a lattice
/// ([`crate::noise::GridGaussian`]) with effective multiplier `z`: `steps` × one step of
/// [`discrete_rdp`] (module doc). Preconditions as in [`dpsgd_curve`].
pub fn dpsgd_discrete_curve(q: f64, z: f64, steps: u64) -> Result<RdpCurve> {
    if steps == 0 {
        return Err(Error::invalid("steps", steps, "must be >= 1"));
    }
    check_q_z(q, z)?;
    RdpCurve::from_part(RdpPart::SubsampledDiscreteGaussian { q, z }).times(steps as f64)
}

/// The guarantee of `steps` DP-SGD steps on lattice noise ([`dpsgd_discrete_curve`],
/// add/remove-one).
pub fn dpsgd_discrete_guarantee(q: f64, z: f64, steps: u64) -> Result<Guarantee> {
    Ok(Guarantee::rdp(
        dpsgd_discrete_curve(q, z, steps)?,
        Neighbours::AddRemove,
    ))
}

/// ε(δ) of `steps` DP-SGD steps by CKS20 Prop. 12 on dp_accounting's default order grid (the
/// number comparable with dp_accounting). For the continuous-order optimum use
/// [`rdp_epsilon`](super::convert::rdp_epsilon) on [`dpsgd_curve`].
pub fn dpsgd_epsilon_grid(q: f64, z: f64, steps: u64, delta: f64) -> Result<EpsAtOrder> {
    check_delta("delta", delta)?;
    rdp_epsilon_on(&dpsgd_curve(q, z, steps)?, delta, &default_orders())
}
