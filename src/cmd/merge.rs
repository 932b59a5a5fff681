//! `colo merge`: join the folders of a sweep's shards (`colo simulate --shard K/N`) into one.
use std::path::PathBuf;
use std::process::ExitCode;

use colo_sim::scenario::shard;

/// Arguments of `colo merge`.
#[derive(clap::Args)]
pub struct MergeArgs {
    /// Result folder to write (replaced whole, or left as it was on an error).
    #[arg(long)]
    pub out: PathBuf,
    /// Every shard's result folder (each holds a shard.json), in any order.
    #[arg(required = true)]
    pub shards: Vec<PathBuf>,
}

/// Runs `colo merge`.
pub fn run(args: MergeArgs) -> anyhow::Result<ExitCode> {
    super::interrupt_removes_outputs()?;
    let report = shard::merge(&args.shards, &args.out)?;
    super::print(&format!(
        "{}: {} shards, {} variants merged into {}\n",
        report.scenario,
        report.shards,
        report.variants,
        args.out.display()
    ))?;
    Ok(ExitCode::SUCCESS)
}
