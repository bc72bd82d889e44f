//! Where randomness comes from: [`SecureRng`] and exact samplers.
//!
//! Rule 1 of DESIGN.md: noise is sampled exactly (integer arithmetic on uniform integers) or on
//! a power-of-two grid with the rounding charged. There is no textbook floating-point Laplace,
//! Gaussian, Gumbel or exponential sampler anywhere in dptune's private paths.
//!
//! Samplers (each a plain struct with a validating constructor and `sample(&self, rng)`):
//! [`Geometric`] (by rate), [`GeometricTrials`] (by stop probability), [`DiscreteLaplace`],
//! [`DiscreteGaussian`], [`Poisson`], [`TruncatedNegativeBinomial`] (with its logarithmic case).

mod bernoulli;
mod gaussian;
mod geometric;
mod laplace;
mod negbin;
mod poisson;
mod rng;
#[cfg(test)]
mod testutil;
mod wide;

pub use bernoulli::{
    below_big, bernoulli_exp, bernoulli_exp_u64, bernoulli_rational, exact_rational,
};
pub use gaussian::DiscreteGaussian;
pub use geometric::{Geometric, GeometricTrials};
pub use laplace::DiscreteLaplace;
pub use negbin::TruncatedNegativeBinomial;
pub use poisson::Poisson;
pub use rng::{SecureRng, Streams};
pub use wide::bernoulli_exp_u128;
