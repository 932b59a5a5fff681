//! colo-sim: the world and the engine.
#![doc = include_str!("../README.md")]
#![warn(missing_docs)]
#![warn(clippy::print_stdout)]

pub mod bench;
pub mod engine;
pub mod fsutil;
pub mod fuzz_edit;
#[cfg(test)]
mod fuzzing;
/// GPU catalog: SMs, memory, bandwidth, MIG profiles and their placement rules.
pub mod hardware;
pub mod metrics;
pub mod pack;
pub mod perf;
pub mod plan;
pub mod policy;
pub mod ronfile;
pub mod scenario;
pub mod study;
pub mod workload;
