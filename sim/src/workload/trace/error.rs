//! Errors of the trace readers. Every variant is fatal: the read returns no trace.

use std::io;
use std::path::PathBuf;

use super::{SkipReason, TraceFormat};

/// Why a trace could not be read. Bad rows are not errors unless strict mode is on.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The file could not be opened (fatal).
    #[error("cannot open trace file {}; check the path", path.display())]
    Open {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// Reading failed part way: an I/O error or a corrupt gzip stream (fatal).
    #[error(
        "cannot read trace file {} after line {line}; is it a complete CSV or .gz file?",
        path.display()
    )]
    Read {
        /// The file.
        path: PathBuf,
        /// The last line read before the failure (1-based; 0 before the header).
        line: u64,
        /// The CSV or I/O error.
        source: csv::Error,
    },
    /// A line is longer than any trace row could be: the file is not a trace, or has no line
    /// breaks (`/dev/zero`, a gzip bomb). Fatal.
    #[error(
        "{}:{line}: line is longer than {limit} bytes; colo reads trace lines up to {limit} bytes \
         (is this a CSV trace?)",
        path.display()
    )]
    LineTooLong {
        /// The file.
        path: PathBuf,
        /// 1-based line that is too long.
        line: u64,
        /// The longest line accepted, bytes.
        limit: usize,
    },
    /// The header names a column twice: which one holds the values is ambiguous (fatal).
    #[error(
        "trace file {} names column `{column}` twice in its header; rename or remove one",
        path.display()
    )]
    RepeatedColumn {
        /// The file.
        path: PathBuf,
        /// The repeated name (cut to 100 characters).
        column: String,
    },
    /// The header lacks a column the format needs (fatal).
    #[error(
        "trace file {} has no column `{column}`, which {} {format} trace needs (its header is `{header}`); \
         check the trace format, or point at one CSV file rather than an archive",
        path.display(),
        article(&format.to_string())
    )]
    MissingColumn {
        /// The file.
        path: PathBuf,
        /// The format it was read as.
        format: TraceFormat,
        /// The missing column.
        column: &'static str,
        /// The header found, its fields joined by commas (cut to 200 characters).
        header: String,
    },
    /// Strict mode: the first row with a defect (fatal only in strict mode; else counted).
    #[error(
        "{}:{line}: field `{field}` {detail} ({reason}); fix the row, or read without strict \
         mode to skip and count such rows",
        path.display()
    )]
    BadRow {
        /// The file.
        path: PathBuf,
        /// 1-based line of the row (the header is line 1).
        line: u64,
        /// The column at fault.
        field: &'static str,
        /// The skip reason this row would have been counted under.
        reason: SkipReason,
        /// What is wrong, quoting the value.
        detail: String,
    },
    /// A row of an Alibaba node list is bad (always fatal: the node list defines the cluster).
    #[error(
        "{}:{line}: node list field `{field}` {detail}; every node row must be valid, as the \
         node list defines the cluster",
        path.display()
    )]
    BadNode {
        /// The node list file.
        path: PathBuf,
        /// 1-based line of the row.
        line: u64,
        /// The column at fault.
        field: &'static str,
        /// What is wrong, quoting the value.
        detail: String,
    },
    /// A trace format name that is not one of the seven (fatal).
    #[error(
        "unknown trace format `{given}`; choose one of philly, alibaba_openb, itp, helios, colo, \
         slurm, kubernetes"
    )]
    UnknownFormat {
        /// The name given.
        given: String,
    },
}

/// `a` or `an` before `word` as read aloud (`an itp trace`, `a philly trace`).
fn article(word: &str) -> &'static str {
    match word.chars().next() {
        Some('a' | 'e' | 'i' | 'o' | 'u') => "an",
        _ => "a",
    }
}
