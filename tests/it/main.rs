//! CLI integration tests: one binary, one module per subcommand.
mod bench;
mod calibrate;
mod calibrate_trust;
mod common;
mod fit;
mod merge_trust;
mod pack;
mod placement;
mod plan;
mod plot;
mod predict;
mod report;
mod simulate;
mod simulate_traces;
mod tidy;
mod trust_numbers;
mod whole;
