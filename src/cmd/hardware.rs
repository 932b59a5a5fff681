//! `colo hardware`: the GPU catalog, each GPU's MIG profiles and its valid MIG layouts.
use std::process::ExitCode;

use colo_sim::hardware;

use super::FormatArg;

/// Arguments of `colo hardware`.
#[derive(clap::Args)]
pub struct HardwareArgs {
    /// Show one GPU in detail, with every valid MIG layout (default: list all GPUs).
    #[arg(long)]
    pub gpu: Option<String>,
    /// What stdout gets: `table` (aligned text) or `json` (one JSON object: `gpus`, or with
    /// --gpu `gpu` and `mig_layouts`; units in the key names, each GPU's `source`).
    #[arg(long, value_enum, default_value_t = FormatArg::Table)]
    pub format: FormatArg,
}

/// Runs `colo hardware`.
pub fn run(args: HardwareArgs) -> anyhow::Result<ExitCode> {
    let gpu = args.gpu.as_deref().map(hardware::gpu).transpose()?;
    match (args.format, gpu) {
        (FormatArg::Table, None) => super::print(&hardware::text::catalog_table())?,
        (FormatArg::Table, Some(gpu)) => super::print(&hardware::text::describe(gpu))?,
        (FormatArg::Json, None) => super::print_json(&hardware::text::catalog_json()?)?,
        (FormatArg::Json, Some(gpu)) => super::print_json(&hardware::text::describe_json(gpu)?)?,
    }
    Ok(ExitCode::SUCCESS)
}
