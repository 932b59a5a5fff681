//! The one error type of colo-plots: every variant names the file it concerns and says how to fix it.
use std::path::PathBuf;

/// A boxed drawing error from any plotters backend (bitmap or SVG).
pub type DrawError = Box<dyn std::error::Error + Send + Sync>;

/// Why a result folder could not be read or a figure could not be drawn.
///
/// Every variant is fatal for the figure (or folder) it names: nothing half-written is left behind.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    /// A file could not be read or written.
    #[error("{path}: {source}; check the path and its permissions")]
    Io {
        /// The file or folder concerned.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// A folder given to `colo plot` holds neither `jobs.csv` nor a `sweep.csv`.
    #[error(
        "{path} is not a result folder: it has no jobs.csv (nor a sweep.csv listing variant \
         folders); pass a folder written by `colo simulate`"
    )]
    NotAResultFolder {
        /// The folder given.
        path: PathBuf,
    },
    /// A CSV row (or the header) does not follow the result format.
    #[error(
        "{path}: line {line}, column {column} ({column_name}): {message}; fix that row or \
         re-run `colo simulate` to rewrite the file"
    )]
    Csv {
        /// The CSV file.
        path: PathBuf,
        /// 1-based line of the bad row (1 is the header).
        line: u64,
        /// 1-based column number (0 when the whole row is at fault).
        column: u64,
        /// The column's header name, or `row` when the whole row is at fault.
        column_name: String,
        /// What is wrong.
        message: String,
    },
    /// `summary.json` is not valid JSON or lacks a field.
    #[error(
        "{path}: line {line}, column {column}: {message}; fix the file or re-run `colo simulate`"
    )]
    Json {
        /// The JSON file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// There is nothing to draw (e.g. no completed job in any folder).
    #[error("{path}: nothing to draw: {reason}")]
    NoData {
        /// The figure that would have been written.
        path: PathBuf,
        /// Why the data is empty, in words.
        reason: String,
    },
    /// The embedded font could not be registered with plotters (a build problem, not a data one).
    #[error("the embedded DejaVu Sans font could not be registered with plotters; rebuild colo")]
    Font,
    /// plotters failed while drawing or encoding a figure.
    #[error("{path}: drawing failed: {source}; check free disk space and the output folder")]
    Draw {
        /// The figure being written.
        path: PathBuf,
        /// The backend's error.
        source: DrawError,
    },
}
