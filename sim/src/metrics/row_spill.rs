//! Rendered rows held for input order, past a budget, in a temporary file: a job that runs
//! for most of a replay holds back every later job's rows, and in memory those would make a
//! long replay's memory grow with its jobs again.
#[cfg(not(unix))]
use std::io::Read;
use std::io::{Seek, SeekFrom, Write};

/// Bytes appended before they are written to the file.
const PENDING: usize = if cfg!(test) { 256 } else { 1 << 20 };

/// Rows appended in the order they come and read back in any order, each by its place.
pub(super) struct RowSpill {
    /// Anonymous (removed when closed), in `TMPDIR`.
    file: std::fs::File,
    /// Bytes in the file.
    written: u64,
    /// Bytes appended after them.
    pending: Vec<u8>,
}

impl RowSpill {
    pub fn new() -> std::io::Result<Self> {
        Ok(RowSpill {
            file: tempfile::tempfile()?,
            written: 0,
            pending: Vec::new(),
        })
    }

    /// Appends `bytes`; gives their place.
    pub fn push(&mut self, bytes: &[u8]) -> std::io::Result<u64> {
        let at = self.written + self.pending.len() as u64;
        self.pending.extend_from_slice(bytes);
        if self.pending.len() >= PENDING {
            self.file.seek(SeekFrom::End(0))?;
            self.file.write_all(&self.pending)?;
            self.written += self.pending.len() as u64;
            self.pending.clear();
        }
        Ok(at)
    }

    /// Appends to `into` the `len` bytes pushed at `at`.
    pub fn read(&mut self, at: u64, len: usize, into: &mut Vec<u8>) -> std::io::Result<()> {
        if at >= self.written {
            // Not written yet (a push is written whole, never split).
            let start = (at - self.written) as usize;
            into.extend_from_slice(&self.pending[start..start + len]);
            return Ok(());
        }
        let start = into.len();
        into.resize(start + len, 0);
        read_exact_at(&mut self.file, &mut into[start..], at)
    }
}

/// Reads `buf.len()` bytes at `at`: one `pread` on Unix.
#[cfg(unix)]
fn read_exact_at(file: &mut std::fs::File, buf: &mut [u8], at: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, at)
}

#[cfg(not(unix))]
fn read_exact_at(file: &mut std::fs::File, buf: &mut [u8], at: u64) -> std::io::Result<()> {
    file.seek(SeekFrom::Start(at))?;
    file.read_exact(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_read_back_in_any_order_are_the_bytes_pushed() {
        let mut spill = RowSpill::new().unwrap();
        // Rows of many sizes, past a write of the pending bytes more than once.
        let mut rows: Vec<Vec<u8>> = (0..3000_u32)
            .map(|i| (0..(i * 7919 % 1500)).map(|b| (b ^ i) as u8).collect())
            .collect();
        // The last one stays in the bytes not written yet.
        rows.push(vec![7]);
        let places: Vec<u64> = rows.iter().map(|r| spill.push(r).unwrap()).collect();
        assert!(spill.written > 0 && !spill.pending.is_empty());
        let mut order: Vec<usize> = (0..rows.len()).collect();
        order.sort_by_key(|&i| (i * 2654435761) % rows.len());
        for i in order.into_iter().chain(0..rows.len()) {
            let mut back = Vec::new();
            spill.read(places[i], rows[i].len(), &mut back).unwrap();
            assert_eq!(back, rows[i], "row {i}");
        }
    }
}
