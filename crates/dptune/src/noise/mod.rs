//! Where randomness comes from: [`SecureRng`] and exact samplers.
//!
//! Rule 1 of DESIGN.md: noise is sampled exactly (integer arithmetic on uniform integers) or on
//! a power-of-two grid with the rounding charged. There is no textbook floating-point Laplace,
//! Gaussian, Gumbel or exponential sampler anywhere in dptune's private paths.

mod bernoulli;
mod rng;

pub use bernoulli::{
    below_big, bernoulli_exp, bernoulli_exp_u64, bernoulli_rational, exact_rational,
};
pub use rng::{SecureRng, Streams};
