//! The `colo` command line: argument parsing and one thin function per subcommand.
// Doc comments in this crate are clap's help text (`OUT/<plan>.jsonl`, `[default: ...]`), not
// rustdoc markup.
#![allow(rustdoc::invalid_html_tags, rustdoc::broken_intra_doc_links)]
mod cmd;
mod profiles;
mod report;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Simulate and calibrate deep-learning training jobs that share GPUs
/// (time-slicing, MPS, MIG).
#[derive(Parser)]
#[command(name = "colo", version, about, help_expected = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a scenario (all its sweep variants in parallel) and write results.
    Simulate(cmd::simulate::SimulateArgs),
    /// Predict per-job throughput and memory fit of jobs sharing one GPU.
    Predict(cmd::predict::PredictArgs),
    /// Search the best packings of jobs on GPUs of one type (time-slicing, MPS, MIG).
    Pack(cmd::pack::PackArgs),
    /// Find the smallest (and cheapest) cluster per candidate that meets a target on a scenario.
    Plan(cmd::plan::PlanArgs),
    /// List GPU types, their MIG profiles and valid MIG layouts.
    Hardware(cmd::hardware::HardwareArgs),
    /// Measure real training on a GPU and fit profiles.
    Calibrate(cmd::calibrate::CalibrateArgs),
    /// Draw figures from result folders.
    Plot(cmd::plot::PlotArgs),
    /// Write generated reports: `colo report paper` reproduces the collocation study.
    Report(cmd::report::ReportArgs),
    /// Time the engine (build with --release): synthetic, trace and sweep cases.
    Bench(cmd::bench::BenchArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let res = match cli.command {
        Command::Simulate(args) => cmd::simulate::run(args),
        Command::Predict(args) => cmd::predict::run(args),
        Command::Pack(args) => cmd::pack::run(args),
        Command::Plan(args) => cmd::plan::run(args),
        Command::Hardware(args) => cmd::hardware::run(args),
        Command::Calibrate(args) => cmd::calibrate::run(args),
        Command::Plot(args) => cmd::plot::run(args),
        Command::Report(args) => cmd::report::run(args),
        Command::Bench(args) => cmd::bench::run(args),
    };
    match res {
        Ok(code) => code,
        Err(err) => {
            if is_broken_pipe(&err) {
                return ExitCode::SUCCESS;
            }
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// A closed pipe (`colo ... | head`) is not an error worth reporting.
fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
