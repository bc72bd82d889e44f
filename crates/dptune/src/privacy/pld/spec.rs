//! A list of mechanisms to compose, in the JSON form of `golden/pld.json`'s `inputs` (and of
//! `dptune account compose FILE`): the one parser, shared by the CLI and the tests.

use serde::Deserialize;

use super::{Pld, PldConfig};
use crate::error::{Error, Result};
use crate::privacy::neighbours::Neighbours;

/// One mechanism, applied `times` times.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartSpec {
    /// gaussian | laplace | discrete_gaussian | discrete_laplace | randomized_response | pure |
    /// approx.
    pub mechanism: String,
    /// Noise standard deviation (gaussian) or parameter (discrete_gaussian).
    pub sigma: Option<f64>,
    /// Laplace scale.
    pub b: Option<f64>,
    /// Discrete Laplace scale: P(o) ∝ e^{−|o|/t}.
    pub t: Option<f64>,
    /// ε (randomized_response, pure, approx).
    pub eps: Option<f64>,
    /// δ (approx).
    pub delta: Option<f64>,
    /// Number of answers of randomized response (default 2).
    pub k: Option<u32>,
    /// Sensitivity under the file's relation (default 1).
    pub sensitivity: Option<f64>,
    /// Poisson sampling rate (gaussian and laplace, add/remove-one).
    pub q: Option<f64>,
    /// Repetitions (default 1).
    pub times: Option<u64>,
}

/// Parts to compose, the δ to report ε at, and the neighbour relation.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ComposeSpec {
    /// The mechanisms.
    pub parts: Vec<PartSpec>,
    /// δ at which ε is reported.
    pub delta: f64,
    /// `add_remove` or `replace_one`.
    pub neighbours: String,
}

pub(in crate::privacy) fn need(
    value: Option<f64>,
    name: &'static str,
    mechanism: &str,
) -> Result<f64> {
    value.ok_or_else(|| Error::invalid(name, "missing", format!("{mechanism} needs `{name}`")))
}

/// Parses a relation as spelled in reports (`add_remove`, `replace_one`).
pub fn parse_neighbours(s: &str) -> Result<Neighbours> {
    match s {
        "add_remove" => Ok(Neighbours::AddRemove),
        "replace_one" | "replace" => Ok(Neighbours::Replace),
        _ => Err(Error::invalid(
            "neighbours",
            s,
            "must be add_remove or replace_one",
        )),
    }
}

impl PartSpec {
    /// The PLD of all `times` applications. T Gaussian mechanisms with noise σ are exactly one
    /// with noise σ/√T (their losses are Gaussian, N(Tμ, 2Tμ); THEORY.md §16a), so that case is
    /// discretised once, with σ/√T rounded down (less noise only raises δ), instead of composed;
    /// T discrete Gaussians are composed exactly before discretising
    /// (`Pld::discrete_gaussian_times`); everything else is self-composed.
    pub fn composed_pld(&self, neighbours: Neighbours, config: PldConfig) -> Result<Pld> {
        let times = self.times.unwrap_or(1);
        if times == 0 {
            return Err(Error::invalid("times", 0, "must be >= 1"));
        }
        if self.mechanism == "gaussian" && self.q.is_none() && times > 1 {
            // The checks of `pld`, without discretising the single mechanism.
            self.refuse_extra(&["sigma", "q", "sensitivity"])?;
            let sigma = need(self.sigma, "sigma", &self.mechanism)?;
            let sensitivity = self.sensitivity.unwrap_or(1.0);
            Pld::check_gaussian(sigma, sensitivity, config)?;
            let root = (times as f64).sqrt().next_up();
            return Pld::gaussian((sigma / root).next_down(), sensitivity, neighbours, config);
        }
        if self.mechanism == "discrete_gaussian" && times > 1 {
            self.refuse_extra(&["sigma", "sensitivity"])?;
            let sigma = need(self.sigma, "sigma", &self.mechanism)?;
            let sensitivity = self.sensitivity.unwrap_or(1.0);
            return Pld::discrete_gaussian_times(sigma, sensitivity, times, neighbours, config);
        }
        self.pld(neighbours, config)?.self_compose(times)
    }

    fn refuse_extra(&self, allowed: &[&str]) -> Result<()> {
        let given = [
            ("sigma", self.sigma.is_some()),
            ("b", self.b.is_some()),
            ("t", self.t.is_some()),
            ("eps", self.eps.is_some()),
            ("delta", self.delta.is_some()),
            ("k", self.k.is_some()),
            ("q", self.q.is_some()),
            ("sensitivity", self.sensitivity.is_some()),
        ];
        for (name, present) in given {
            if present && !allowed.contains(&name) {
                return Err(Error::invalid(
                    "parts",
                    format!("{} with `{name}`", self.mechanism),
                    format!("`{name}` does not apply to {}", self.mechanism),
                ));
            }
        }
        Ok(())
    }

    /// The PLD of one application.
    pub fn pld(&self, neighbours: Neighbours, config: PldConfig) -> Result<Pld> {
        let m = self.mechanism.as_str();
        let sens = self.sensitivity.unwrap_or(1.0);
        match m {
            "gaussian" => {
                self.refuse_extra(&["sigma", "q", "sensitivity"])?;
                let sigma = need(self.sigma, "sigma", m)?;
                match self.q {
                    Some(q) => Pld::subsampled_gaussian(q, sigma, sens, config)
                        .and_then(|p| same(p, neighbours)),
                    None => Pld::gaussian(sigma, sens, neighbours, config),
                }
            }
            "laplace" => {
                self.refuse_extra(&["b", "q", "sensitivity"])?;
                let b = need(self.b, "b", m)?;
                match self.q {
                    Some(q) => Pld::subsampled_laplace(q, b, sens, config)
                        .and_then(|p| same(p, neighbours)),
                    None => Pld::laplace(b, sens, neighbours, config),
                }
            }
            "discrete_gaussian" => {
                self.refuse_extra(&["sigma", "sensitivity"])?;
                Pld::discrete_gaussian(need(self.sigma, "sigma", m)?, sens, neighbours, config)
            }
            "discrete_laplace" => {
                self.refuse_extra(&["t", "sensitivity"])?;
                Pld::discrete_laplace(need(self.t, "t", m)?, sens, neighbours, config)
            }
            "randomized_response" => {
                self.refuse_extra(&["eps", "k"])?;
                let eps = need(self.eps, "eps", m)?;
                Pld::randomized_response(eps, self.k.unwrap_or(2), neighbours, config)
            }
            "pure" => {
                self.refuse_extra(&["eps"])?;
                Pld::pure(need(self.eps, "eps", m)?, neighbours, config)
            }
            "approx" => {
                self.refuse_extra(&["eps", "delta"])?;
                let (eps, delta) = (need(self.eps, "eps", m)?, need(self.delta, "delta", m)?);
                Pld::approx(eps, delta, neighbours, config)
            }
            _ => Err(Error::invalid(
                "mechanism",
                m,
                "must be gaussian, laplace, discrete_gaussian, discrete_laplace, \
                 randomized_response, pure or approx",
            )),
        }
    }
}

/// Poisson subsampling is only defined under add/remove-one here.
fn same(p: Pld, neighbours: Neighbours) -> Result<Pld> {
    if p.neighbours() == neighbours {
        Ok(p)
    } else {
        Err(Error::invalid(
            "q",
            "given",
            "Poisson subsampling is accounted under add/remove-one only",
        ))
    }
}

impl ComposeSpec {
    /// The relation.
    pub fn neighbours(&self) -> Result<Neighbours> {
        parse_neighbours(&self.neighbours)
    }

    /// The composition of every part, each self-composed `times` times.
    pub fn pld(&self, config: PldConfig) -> Result<Pld> {
        let neighbours = self.neighbours()?;
        let mut total: Option<Pld> = None;
        if self.parts.is_empty() {
            return Err(Error::invalid("parts", 0, "at least one part is needed"));
        }
        for part in &self.parts {
            let p = part.composed_pld(neighbours, config)?;
            total = Some(match total {
                None => p,
                Some(t) => t.compose(&p)?,
            });
        }
        total.ok_or_else(|| Error::invalid("parts", 0, "at least one part is needed"))
    }
}
