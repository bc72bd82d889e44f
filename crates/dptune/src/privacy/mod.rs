//! What a guarantee is and what it costs: [`Guarantee`] (pure, approximate, zCDP, RDP, and a
//! privacy loss distribution from [`pld`]), the
//! neighbour relation, conversions, composition and the [`Ledger`].
//!
//! Rule 2 of DESIGN.md: privacy arithmetic rounds up; a computed ε is never smaller than the
//! truth.

pub(crate) mod bytes;
mod closed_form;
pub mod convert;
pub mod dpsgd;
pub mod gaussian;
mod guarantee;
mod ledger;
mod neighbours;
mod normal;
pub mod pld;
mod rdp;
pub mod repeat;
pub mod report;
pub mod subsampled;

pub use guarantee::{fmt_number, Bound, Guarantee, Release, Route};
pub use ledger::{fits, Ledger};
pub use neighbours::Neighbours;
pub use rdp::{default_orders, RdpCurve, RdpPart};
