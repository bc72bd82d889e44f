//! Private selection from private candidates: search spaces, data splits, the Learner/Scorer
//! traits, and the tuners (Liu–Talwar, Papernot–Steinke, exhaustive composition, split–tune–final)
//! with non-private baselines clearly marked.

pub mod baseline;
pub mod candidate;
pub mod cost;
pub mod flow;
pub mod grammar;
pub mod release;
pub mod runs;
pub mod schedule;
pub mod space;
pub mod split;
pub mod tpe;
pub mod tuner;

pub use candidate::{Candidate, Learner, PrivateCandidate, PrivateStep, RunResult, Scorer};
pub use cost::{calibrate, exhaustive_share, tuning_cost, Method};
pub use flow::{split_tune_final, Tuned};
pub use grammar::{SpaceSpec, Written};
pub use release::{ReleaseRule, Selected};
pub use schedule::Schedule;
pub use space::{Config, Domain, SearchSpace, Value};
pub use split::{split_by_coin, Fractions, Split};
pub use tuner::{capped_delta, smallest_cap, Progress, TuneOptions, Tuner, MAX_CAP};
