//! `colo calibrate`: placeholder until its issue lands.
use std::process::ExitCode;

/// Arguments of `colo calibrate`.
#[derive(clap::Args)]
pub struct CalibrateArgs {}

/// Runs `colo calibrate`.
pub fn run(_args: CalibrateArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("colo calibrate is not built yet")
}
