//! `colo plot`: placeholder until its issue lands.
use std::process::ExitCode;

/// Arguments of `colo plot`.
#[derive(clap::Args)]
pub struct PlotArgs {}

/// Runs `colo plot`.
pub fn run(_args: PlotArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("colo plot is not built yet")
}
