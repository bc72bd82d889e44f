//! DP Gaussian-process regression by cloaking and private lengthscale selection (DPGP.md).
//!
//! * [`GpRegression`]: RBF-kernel GP regression (Cholesky via nalgebra).
//! * [`cloaked_predictions`]: predictions released under (ε, δ)-DP by cloaking (Smith et al.,
//!   AISTATS 2018), with the noise covariance from the minimum-volume enclosing ellipsoid and
//!   verified after optimisation ([`CloakingCovariance`]); [`hall_predictions`] is the Hall et al.
//!   (2013) RKHS baseline.
//! * [`select_lengthscale`]: K-fold CV over a public grid with a noise-aware score and a
//!   data-independent sensitivity, then the exponential mechanism; [`private_gp`] selects and
//!   predicts, reporting the total (ε_select + ε_predict, δ).
//!
//! * [`load_gp_data`]: the inputs and outputs from a CSV file; [`InputScaling`]: the inputs
//!   mapped to lengthscale units by declared public bounds; [`GpPlot`]: the release drawn as SVG;
//!   [`report`]: what `dptune gp` prints of it.
//!
//! Threat model (DPGP.md §2): inputs are public, outputs are private and clipped into a declared
//! public [`OutputRange`]; neighbours differ in one output (replace-one).

mod cloaking;
mod cost;
mod data;
pub mod demo;
mod linalg;
mod mechanisms;
mod plot;
mod regression;
pub mod report;
mod scaling;
mod select;

pub use cloaking::{
    classic_c_delta, cloaked_predictions, hall_predictions, CloakingCovariance, DpPredictions,
    HallBound, MveeConfig, PredictionInputs,
};
pub use data::{load_gp_data, read_gp_data, GpData};
pub use plot::{GpPlot, NotPrivate};
pub use regression::{Clipped, GpRegression, Kernel, OutputRange};
pub use scaling::{ColumnMap, InputScaling, ScaledInputs};
pub use select::{
    nonprivate_scores, private_gp, select_lengthscale, CandidateInfo, Folds, NonPrivateScores,
    PrivateGp, Selection, SelectionConfig, Utility, CV_MVEE_TOL,
};
