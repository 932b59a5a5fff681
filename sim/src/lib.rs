//! colo-sim: the world and the engine.
#![warn(missing_docs)]
#![warn(clippy::print_stdout)]

/// GPU catalog: SMs, memory, bandwidth, MIG profiles and their placement rules.
pub mod hardware;
