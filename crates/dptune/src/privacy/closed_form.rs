//! The closed-form bounds of a composition's parts ([`PartSpec::closed_form`]) and the
//! composition as a [`Guarantee`] that carries them beside its privacy loss distribution
//! ([`ComposeSpec::guarantee`]). Kept outside [`pld`](super::pld) so that the PLD code imports
//! none of the currencies it is compared with (and `Guarantee`, which holds a `Pld`, is not
//! imported back by it).

use super::gaussian::gaussian_rho;
use super::guarantee::{Guarantee, Neighbours};
use super::pld::spec::need;
use super::pld::{ComposeSpec, PartSpec, PldConfig};
use super::rdp::RdpCurve;
use crate::error::{Error, Result};
use crate::numeric::mul_up;

impl PartSpec {
    /// The closed-form guarantee of `times` applications, in the currency each mechanism's
    /// theorem gives: zCDP for the Gaussian (Bun & Steinke 2016, Prop. 1.6) and the discrete
    /// Gaussian (Canonne, Kamath & Steinke 2020, arXiv 2004.00010, Thm. 4), the exact RDP curve
    /// for the subsampled Gaussian (Mironov, Talwar & Zhang 2019), pure ε for Laplace, discrete
    /// Laplace, randomized response and pure parts (Poisson-subsampled ε-DP: ln(1 + q(e^ε − 1)),
    /// Balle, Barthe & Gaboardi 2018, Thm. 8), and (Tε, Tδ) for an (ε, δ) part. Call after
    /// [`PartSpec::pld`] has validated the parameters.
    pub fn closed_form(&self, neighbours: Neighbours) -> Result<Guarantee> {
        let times = self.times.unwrap_or(1) as f64;
        let sens = self.sensitivity.unwrap_or(1.0);
        let pure = |eps: f64| Guarantee::pure(mul_up(eps, times), neighbours);
        let get = |v: Option<f64>, name| need(v, name, &self.mechanism);
        match self.mechanism.as_str() {
            "gaussian" => match self.q {
                Some(q) => Ok(Guarantee::rdp(
                    RdpCurve::subsampled_gaussian(q, get(self.sigma, "sigma")? / sens)?
                        .times(times)?,
                    neighbours,
                )),
                None => Guarantee::zcdp(
                    mul_up(gaussian_rho(get(self.sigma, "sigma")?, sens)?, times),
                    neighbours,
                ),
            },
            "discrete_gaussian" => Guarantee::zcdp(
                mul_up(gaussian_rho(get(self.sigma, "sigma")?, sens)?, times),
                neighbours,
            ),
            "laplace" => {
                let eps = sens / get(self.b, "b")?;
                match self.q {
                    Some(q) => pure((q * eps.exp_m1()).ln_1p().next_up()),
                    None => pure(eps.next_up()),
                }
            }
            "discrete_laplace" => pure((sens / get(self.t, "t")?).next_up()),
            "randomized_response" | "pure" => pure(get(self.eps, "eps")?),
            "approx" => Guarantee::approx(
                mul_up(get(self.eps, "eps")?, times),
                mul_up(get(self.delta, "delta")?, times).min(1.0),
                neighbours,
            ),
            m => Err(Error::invalid("mechanism", m, "unknown mechanism")),
        }
    }
}

impl ComposeSpec {
    /// The composition as a [`Guarantee`]: every part's closed-form bound together with its PLD,
    /// composed, so that [`Guarantee::epsilon_route`] reports the minimum over the valid routes
    /// (PLD, RDP, zCDP, pure, approx) and names the winner.
    pub fn guarantee(&self, config: PldConfig) -> Result<Guarantee> {
        let neighbours = self.neighbours()?;
        let mut total: Option<Guarantee> = None;
        for part in &self.parts {
            let pld = part.composed_pld(neighbours, config)?;
            let g = part.closed_form(neighbours)?.with_pld(pld)?;
            total = Some(match total {
                None => g,
                Some(t) => t.compose(&g)?,
            });
        }
        total.ok_or_else(|| Error::invalid("parts", 0, "at least one part is needed"))
    }
}
