//! Jobs, model profiles and traces.

pub mod trace;
