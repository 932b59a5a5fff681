//! One module per subcommand: its clap arguments and the thin function that runs it.
pub mod bench;
pub mod calibrate;
pub mod fit;
pub mod hardware;
pub mod pack;
pub mod plan;
pub mod plot;
pub mod predict;
pub mod progress;
pub mod report;
pub mod simulate;

use std::io::Write as _;

/// Writes `text` to stdout in one go; a closed pipe comes back as an error that `main` treats
/// as success (`colo ... | head`).
pub fn print(text: &str) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(text.as_bytes())?;
    stdout.flush()?;
    Ok(())
}
