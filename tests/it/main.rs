//! CLI integration tests: one binary, one module per subcommand.
mod common;
mod pack;
mod plan;
mod plot;
mod predict;
mod simulate;
mod tidy;
