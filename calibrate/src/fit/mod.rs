//! Fitting: least squares (nalgebra) from measurements to the parameters of colo-sim's
//! parametric performance model, and the external tables (Gavel pairs, MISO MIG slices).
pub mod gavel;
pub mod lm;
pub mod measured;
pub mod miso;
pub mod parametric;
pub mod report;
pub mod validate;
