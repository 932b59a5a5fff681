//! Fitting: least squares (nalgebra) from measurements to the parameters of colo-sim's
//! parametric performance model, and the external tables (Gavel pairs, MISO MIG slices).
pub mod gavel;
pub mod gavel_model;
pub mod kernel;
pub mod lm;
pub mod measured;
pub mod miso;
pub mod parametric;
pub mod pipeline;
pub mod power;
pub mod report;
pub mod validate;

use std::io::Read as _;
use std::path::{Path, PathBuf};

use thiserror::Error;

/// An external measurement table (Gavel's pairs, MISO's MIG runs) could not be read. Fatal.
#[derive(Debug, Error)]
pub enum TableError {
    /// A file could not be read or decompressed.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// A file is not in the table's layout.
    #[error("{}: {message}", path.display())]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

/// The text of a table file (gunzipped when compressed).
pub fn read_table_text(path: &Path) -> Result<String, TableError> {
    let io = |source| TableError::Io {
        path: path.to_owned(),
        source,
    };
    text_maybe_gzipped(std::fs::read(path).map_err(io)?).map_err(io)
}

/// Parses JSON `text` read from `path`, naming the line and column of an error.
pub fn parse_json(text: &str, path: &Path) -> Result<serde_json::Value, TableError> {
    serde_json::from_str(text).map_err(|e| TableError::Format {
        path: path.to_owned(),
        message: format!("line {}, column {}: {e}", e.line(), e.column()),
    })
}

/// `bytes` as text, gunzipped when they start with gzip's magic bytes (the external tables ship
/// compressed).
pub fn text_maybe_gzipped(bytes: Vec<u8>) -> std::io::Result<String> {
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut text = String::new();
        flate2::read::GzDecoder::new(&bytes[..]).read_to_string(&mut text)?;
        Ok(text)
    } else {
        String::from_utf8(bytes)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
    }
}
