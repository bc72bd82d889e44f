//! DP-HYPE: federated private hyperparameter voting with distributed noise and secure
//! aggregation (DPHYPE.md).
//!
//! * [`secagg`]: the secure aggregation protocol (SecAgg/SecAgg+), sums in ℤ_{2^32}.
//! * [`noise_share`]: each client's exact Skellam noise share.
//! * [`accounting`]: client-level RDP and (ε, δ) of the vote sum, calibration, dropouts.
//! * [`vote`]: top-k votes, noisy submissions, the whole round, server selection.
//! * [`sim`], [`sim_data`]: the in-process simulation over Adult and MNIST-5k; [`report`]: what
//!   `dptune federated simulate` prints of it.

pub mod accounting;
mod cost;
pub mod noise_share;
pub mod report;
pub mod secagg;
pub mod sim;
pub mod sim_data;
pub mod vote;
