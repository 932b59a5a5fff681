//! One module per subcommand: its clap arguments and the thin function that runs it.
pub mod bench;
pub mod calibrate;
pub mod fit;
pub mod hardware;
pub mod merge;
pub mod pack;
pub mod plan;
pub mod plot;
pub mod predict;
pub mod progress;
pub mod report;
pub mod simulate;

use std::io::Write as _;

use anyhow::Context as _;

/// Ctrl-C (or SIGTERM) while result folders are being written: removes them, so the previous
/// results stay as they were, and exits with 130. For the commands that write result folders
/// ([`colo_sim::fsutil::WholeDir`]); `calibrate run` and its kin install their own handler.
pub fn interrupt_removes_outputs() -> anyhow::Result<()> {
    ctrlc::set_handler(|| {
        colo_sim::fsutil::remove_in_progress();
        eprintln!("\ninterrupted: result folders left as they were");
        std::process::exit(130);
    })
    .context("cannot install the Ctrl-C handler")
}

/// Writes `text` to stdout in one go; a closed pipe comes back as an error that `main` treats
/// as success (`colo ... | head`).
pub fn print(text: &str) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(text.as_bytes())?;
    stdout.flush()?;
    Ok(())
}

/// `--gpu`'s help: the catalog's GPU types (`colo hardware` describes them).
pub fn gpu_help() -> String {
    format!("GPU type: {}", colo_sim::hardware::names())
}
