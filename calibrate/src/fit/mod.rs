//! Fitting: least squares (nalgebra) from measurements to the parameters of colo-sim's
//! parametric performance model, and the external tables (Gavel pairs, MISO MIG slices).
pub mod gavel;
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
    let bytes = std::fs::read(path)?;
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut text = String::new();
        flate2::read::GzDecoder::new(&bytes[..]).read_to_string(&mut text)?;
        Ok(text)
    } else {
        String::from_utf8(bytes)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
    }
}
