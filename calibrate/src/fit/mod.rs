//! Fitting: least squares (nalgebra) from measurements to the parameters of colo-sim's
//! parametric performance model, and the external tables (Gavel pairs, MISO MIG slices).
pub mod gavel;
pub mod gavel_model;
pub mod lm;
pub mod measured;
pub mod miso;
pub mod parametric;
pub mod report;
pub mod validate;

use std::io::Read as _;
use std::path::Path;

/// The text of a file, gunzipped when it starts with gzip's magic bytes (the external tables
/// ship compressed).
pub fn read_text_maybe_gzipped(path: &Path) -> std::io::Result<String> {
    text_maybe_gzipped(std::fs::read(path)?)
}

/// `bytes` as text, gunzipped when they start with gzip's magic bytes.
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
