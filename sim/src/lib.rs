//! colo-sim: the world and the engine.
#![warn(missing_docs)]
#![warn(clippy::print_stdout)]

pub mod workload;
