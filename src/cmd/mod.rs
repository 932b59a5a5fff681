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
/// results stay as they were, and exits with 130. Once every folder the command began is
/// published (the previous one removed: the handler waits for that), the results are
/// complete: it says so and exits 0. For the commands that write result folders
/// ([`colo_sim::fsutil::WholeDir`]); `calibrate run` and its kin install their own handler.
pub fn interrupt_removes_outputs() -> anyhow::Result<()> {
    ctrlc::set_handler(|| {
        let found = colo_sim::fsutil::remove_in_progress();
        let (message, code) = interrupt_message(&found);
        eprintln!("\n{message}");
        std::process::exit(code);
    })
    .context("cannot install the Ctrl-C handler")
}

/// What the Ctrl-C handler says about `found`, and its exit code.
fn interrupt_message(found: &colo_sim::fsutil::Interrupted) -> (String, i32) {
    let list = |dirs: &[std::path::PathBuf]| {
        let shown: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        shown.join(", ")
    };
    if found.complete() {
        let message = format!(
            "interrupted after the results were written: {} is complete",
            list(&found.published)
        );
        return (message, 0);
    }
    let mut message = String::from("interrupted: result folders being written were removed");
    if found.published.is_empty() {
        message = String::from("interrupted: result folders left as they were");
    } else {
        message.push_str(&format!(
            "; already written whole: {}",
            list(&found.published)
        ));
    }
    (message, 130)
}

/// Writes `text` to stdout in one go; a closed pipe comes back as an error that `main` treats
/// as success (`colo ... | head`).
pub fn print(text: &str) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(text.as_bytes())?;
    stdout.flush()?;
    Ok(())
}

/// Writes `value` to stdout as pretty JSON and a newline, the whole of stdout (`--format json`).
pub fn print_json(value: &serde_json::Value) -> anyhow::Result<()> {
    print(&format!("{}\n", serde_json::to_string_pretty(value)?))
}

/// `--format` of the commands that print a table or JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FormatArg {
    /// Aligned text.
    Table,
    /// One JSON object (the only thing on stdout; notes and progress go to stderr).
    Json,
}

/// Width of a table's name column: the longest of `names` (in characters), and never less
/// than `floor` (the width the table had when every name was short, so short tables print as
/// before), so that a long name widens the column instead of shifting the row.
pub fn name_width<'a>(names: impl IntoIterator<Item = &'a str>, floor: usize) -> usize {
    names
        .into_iter()
        .map(|n| n.chars().count())
        .fold(floor, usize::max)
}

/// `--gpu`'s help: the catalog's GPU types (`colo hardware` describes them).
pub fn gpu_help() -> String {
    format!("GPU type: {}", colo_sim::hardware::names())
}
