//! dptune: differentially private hyperparameter tuning with exact, tight accounting.
//!
//! The crate is layered (DESIGN.md, "The house"); each module imports only from those above it:
//!
//! * [`resources`]: memory and time a job needs, checked against this machine before it runs.
//! * [`numeric`]: floating-point error bounds and exact grid sums for private quantities.
//! * [`noise`]: where randomness comes from ([`noise::SecureRng`]) and exact samplers.
//! * [`privacy`]: what a guarantee is and what it costs ([`privacy::Guarantee`], conversions,
//!   Gaussian and subsampled-Gaussian accounting, composition, [`privacy::Ledger`]).
//! * [`select`]: choosing among scored candidates privately.
//! * [`tune`]: private selection from private candidates, split–tune–final, baselines.
//! * [`learn`]: DP learners worth tuning (objective perturbation, DP-SGD, ridge) and DP metrics.
//! * [`gp`]: DP Gaussian-process regression by cloaking and private lengthscale selection.
//! * [`budget`]: a persistent privacy budget (SQLite) charged across runs and processes.
//! * [`data`]: CSV loading with a declared schema, bundled datasets with public test splits.
//! * [`release_schema`]: every field each command releases, and why it may (public input,
//!   charged release, or NOT PRIVATE diagnostic behind a flag).
//!
//! The library prints nothing; long-running work reports progress through callbacks.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod budget;
pub mod data;
pub mod error;
pub mod federated;
pub mod gp;
pub mod learn;

pub mod noise;
pub mod numeric;
pub mod privacy;
pub mod release_schema;
pub mod resources;
pub mod select;
pub mod study;
pub mod svg;
pub mod tune;

pub use error::{Error, Result};
