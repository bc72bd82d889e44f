//! DP-HYPE: federated private hyperparameter voting with distributed noise and secure
//! aggregation (DPHYPE.md).
//!
//! * [`secagg`]: the secure aggregation protocol (SecAgg/SecAgg+), sums in ℤ_{2^32}.

pub mod secagg;
