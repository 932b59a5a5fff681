//! One module per subcommand: its clap arguments and the thin function that runs it.
pub mod bench;
pub mod calibrate;
pub mod plot;
pub mod predict;
pub mod simulate;
