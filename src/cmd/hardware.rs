//! `colo hardware`: the GPU catalog, each GPU's MIG profiles and its valid MIG layouts.
use std::process::ExitCode;

use colo_sim::hardware;

/// Arguments of `colo hardware`.
#[derive(clap::Args)]
pub struct HardwareArgs {
    /// Show one GPU in detail, with every valid MIG layout (default: list all GPUs).
    #[arg(long)]
    pub gpu: Option<String>,
}

/// Runs `colo hardware`.
pub fn run(args: HardwareArgs) -> anyhow::Result<ExitCode> {
    let out = match args.gpu {
        None => hardware::text::catalog_table(),
        Some(name) => hardware::text::describe(hardware::gpu(&name)?),
    };
    super::print(&out)?;
    Ok(ExitCode::SUCCESS)
}
