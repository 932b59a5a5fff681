//! CLI integration tests: one binary, one module per subcommand.

mod bench;
mod simulate_traces;
