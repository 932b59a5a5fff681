//! Kernel traces, read and reduced: the reader lives in sim (a scenario's `traces` need it
//! without calibrate); re-exported here, where calibrate's runner, fit and tests use it.
pub use colo_sim::perf::kernel::raw::*;
