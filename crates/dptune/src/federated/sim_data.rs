//! The two datasets of the DP-HYPE simulation, loaded by the general [`crate::data`] module
//! (bundled in the crate, see `data/PROVENANCE.md`). Features are scaled with public, declared
//! bounds and declared category lists only (DESIGN.md rule 5).

use crate::data;
use crate::error::Result;

/// The simulation's datasets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SimDataset {
    /// UCI Adult, 48 842 rows, binary label income > 50K.
    Adult,
    /// 5 000 MNIST digits, 10 classes.
    Mnist5k,
}

/// A labelled dataset with dense features in row-major order.
#[derive(Debug, Clone)]
pub struct Table {
    /// Features, `rows × dim`.
    pub x: Vec<f32>,
    /// Feature count.
    pub dim: usize,
    /// Labels in 0..classes.
    pub y: Vec<u8>,
    /// Number of classes.
    pub classes: usize,
}

impl Table {
    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.y.len()
    }
    /// Features of row `i`.
    pub fn row(&self, i: usize) -> &[f32] {
        &self.x[i * self.dim..(i + 1) * self.dim]
    }
}

/// Loads a bundled dataset (all rows, in file order) through [`crate::data::bundled`], as the
/// `f32` table the simulation trains on.
pub fn load(ds: SimDataset) -> Result<Table> {
    let name = match ds {
        SimDataset::Adult => "adult",
        SimDataset::Mnist5k => "mnist5k",
    };
    let b = data::bundled(name)?;
    let d = &b.all;
    Ok(Table {
        x: d.features().iter().map(|&v| v as f32).collect(),
        dim: d.dim(),
        y: d.labels().iter().map(|&v| v as u8).collect(),
        classes: d.task().classes(),
    })
}
