//! Opening a trace (plain or gzip), finding its columns, and the row loop shared by all
//! formats: one row at a time, skips counted, strict mode, limit, then times made relative.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use csv::ByteRecord;
use flate2::bufread::MultiGzDecoder;

use super::row::{Col, Row, Skip, out_of_range};
use super::{Cols, ReadOptions, SkipCounts, Trace, TraceError, TraceFormat, TraceJob};
use crate::workload::limits;

/// Open `path` for reading; gzip is recognized by its magic bytes, not by the file name.
pub(crate) fn open(path: &Path) -> Result<Box<dyn Read + Send>, TraceError> {
    let file = File::open(path).map_err(|source| TraceError::Open {
        path: path.to_owned(),
        source,
    })?;
    decode(file, path)
}

/// Longest line a trace may have, in bytes (after decompression): far above any real row
/// (a few hundred bytes), low enough that a file with no line breaks (`/dev/zero`, a gzip bomb
/// of one line) stops with an error instead of filling memory.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// The error [`Lines`] reads as when a line is longer than [`MAX_LINE_BYTES`].
#[derive(Debug, thiserror::Error)]
#[error("line {line} is longer than {MAX_LINE_BYTES} bytes")]
pub(crate) struct LineTooLong {
    /// 1-based line (line breaks counted as [`Lines`] counts them).
    pub line: u64,
}

/// `input` with every line break made `\n`, as a text editor counts them: `\r\n` becomes `\n` and
/// a lone `\r` becomes `\n` (the CSV reader counts `\n` only, so CRLF lines were numbered one
/// too low and CR-only files were all line 1). A line longer than [`MAX_LINE_BYTES`] is an
/// error ([`LineTooLong`]).
struct Lines<R> {
    inner: R,
    /// The last byte passed on was a `\r` (now `\n`): a `\n` next is its pair, dropped.
    after_cr: bool,
    /// Bytes of the current line so far.
    line_bytes: usize,
    /// Line breaks passed on.
    breaks: u64,
}

impl<R: Read> Read for Lines<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            let n = self.inner.read(buf)?;
            if n == 0 {
                return Ok(0);
            }
            let mut out = 0;
            for idx in 0..n {
                let byte = buf[idx];
                if byte == b'\n' && self.after_cr {
                    self.after_cr = false;
                    continue;
                }
                self.after_cr = byte == b'\r';
                if byte == b'\n' || byte == b'\r' {
                    self.breaks += 1;
                    self.line_bytes = 0;
                    buf[out] = b'\n';
                } else {
                    self.line_bytes += 1;
                    if self.line_bytes > MAX_LINE_BYTES {
                        return Err(std::io::Error::new(
                            std::io::ErrorKind::InvalidData,
                            LineTooLong {
                                line: self.breaks + 1,
                            },
                        ));
                    }
                    buf[out] = byte;
                }
                out += 1;
            }
            if out > 0 {
                return Ok(out);
            }
        }
    }
}

/// The error for a failed read of `path` after `line`: [`TraceError::LineTooLong`] for an
/// over-long line, else [`TraceError::Read`].
pub(crate) fn read_error(path: &Path, line: u64, source: csv::Error) -> TraceError {
    if let csv::ErrorKind::Io(io) = source.kind()
        && let Some(long) = io.get_ref().and_then(|e| e.downcast_ref::<LineTooLong>())
    {
        return TraceError::LineTooLong {
            path: path.to_owned(),
            line: long.line,
            limit: MAX_LINE_BYTES,
        };
    }
    TraceError::Read {
        path: path.to_owned(),
        line,
        source,
    }
}

/// Wrap `input` in a gzip decoder when it starts with the gzip magic bytes, with line breaks
/// made `\n` and lines capped in length ([`Lines`]).
pub(crate) fn decode(
    input: impl Read + Send + 'static,
    path: &Path,
) -> Result<Box<dyn Read + Send>, TraceError> {
    let mut buffered = BufReader::with_capacity(1 << 16, input);
    let is_gzip = buffered
        .fill_buf()
        .map_err(|source| TraceError::Open {
            path: path.to_owned(),
            source,
        })?
        .starts_with(&[0x1f, 0x8b]);
    let decoded: Box<dyn Read + Send> = if is_gzip {
        Box::new(BufReader::with_capacity(
            1 << 16,
            MultiGzDecoder::new(buffered),
        ))
    } else {
        Box::new(buffered)
    };
    Ok(Box::new(Lines {
        inner: decoded,
        after_cr: false,
        line_bytes: 0,
        breaks: 0,
    }))
}

/// A CSV reader over `input` that tolerates short and long rows (they are judged per field).
pub(crate) fn csv_reader(input: Box<dyn Read + Send>) -> csv::Reader<Box<dyn Read + Send>> {
    csv::ReaderBuilder::new()
        .flexible(true)
        .has_headers(true)
        .from_reader(input)
}

/// The reader of one format's rows: comma-separated CSV; `|`-separated without quoting for
/// Slurm (`sacct --parsable2` quotes nothing); one unquoted field per line and no header for
/// Kubernetes (JSON Lines: the unit separator never appears raw in JSON).
fn rows_reader(
    input: Box<dyn Read + Send>,
    format: TraceFormat,
) -> csv::Reader<Box<dyn Read + Send>> {
    let mut builder = csv::ReaderBuilder::new();
    builder.flexible(true).has_headers(true);
    match format {
        TraceFormat::Slurm => builder.delimiter(b'|').quoting(false),
        TraceFormat::Kubernetes => builder.delimiter(0x1f).quoting(false).has_headers(false),
        _ => &mut builder,
    };
    builder.from_reader(input)
}

/// The header row of a trace, to find columns by name.
pub(crate) struct Header<'p> {
    names: Vec<String>,
    path: &'p Path,
    format: TraceFormat,
}

impl<'p> Header<'p> {
    /// Read the header of `reader`; a leading byte-order mark and spaces around names are dropped.
    pub fn read(
        reader: &mut csv::Reader<Box<dyn Read + Send>>,
        path: &'p Path,
        format: TraceFormat,
    ) -> Result<Self, TraceError> {
        let record = reader
            .byte_headers()
            .map_err(|source| read_error(path, 0, source))?;
        let names: Vec<String> = record
            .iter()
            .map(|field| {
                let name = String::from_utf8_lossy(field);
                name.trim_start_matches('\u{feff}').trim().to_owned()
            })
            .collect();
        // A name given twice is ambiguous: which column holds the value is a guess.
        for (idx, name) in names.iter().enumerate() {
            if !name.is_empty() && names[..idx].contains(name) {
                return Err(TraceError::RepeatedColumn {
                    path: path.to_owned(),
                    column: name.chars().take(100).collect(),
                });
            }
        }
        Ok(Header {
            names,
            path,
            format,
        })
    }

    /// The column called `name`, if there is one.
    pub fn find(&self, name: &'static str) -> Option<Col> {
        let idx = self.names.iter().position(|n| n == name)?;
        Some(Col { idx, name })
    }

    /// The column called `name`, or an error naming it and the header found.
    pub fn require(&self, name: &'static str) -> Result<Col, TraceError> {
        self.find(name).ok_or_else(|| {
            let header: String = self.names.join(",").chars().take(200).collect();
            TraceError::MissingColumn {
                path: self.path.to_owned(),
                format: self.format,
                column: name,
                header,
            }
        })
    }
}

/// A trace's jobs one at a time in file order, each row parsed as it is read (one record
/// reused), its skip counted, strict mode and the limit applied: what [`super::read_trace`]
/// collects and sorts, and what a replay of a trace in submission order reads as its clock
/// goes. A job's `arrival_s` is its submission time as the file gives it until
/// [`TraceRows::arrival_from`] makes it relative.
pub struct TraceRows {
    reader: csv::Reader<Box<dyn Read + Send>>,
    record: ByteRecord,
    cols: Cols,
    path: PathBuf,
    opts: ReadOptions,
    submit_field: &'static str,
    skips: SkipCounts,
    rows_read: u64,
    kept: usize,
    line: u64,
}

impl TraceRows {
    /// Opens the trace file `path` of `format`, plain or gzip-compressed, and reads its header.
    pub fn open(format: TraceFormat, path: &Path, opts: &ReadOptions) -> Result<Self, TraceError> {
        Self::new(format, open(path)?, path, opts)
    }

    /// Reads the header of decoded `input` (see [`decode`]); `path` names it in messages.
    pub(crate) fn new(
        format: TraceFormat,
        input: Box<dyn Read + Send>,
        path: &Path,
        opts: &ReadOptions,
    ) -> Result<Self, TraceError> {
        let mut reader = rows_reader(input, format);
        let (cols, line) = if format == TraceFormat::Kubernetes {
            (Cols::find_jsonl(opts), 0)
        } else {
            let header = Header::read(&mut reader, path, format)?;
            (Cols::find(&header, format, opts)?, 1)
        };
        Ok(TraceRows {
            reader,
            record: ByteRecord::new(),
            cols,
            path: path.to_owned(),
            opts: opts.clone(),
            submit_field: Cols::submit_field(format),
            skips: SkipCounts::default(),
            rows_read: 0,
            kept: 0,
            line,
        })
    }

    /// The next job in file order (its `arrival_s` the submission time as written), or `None`
    /// at the end of the file or of the limit.
    pub fn next_job(&mut self) -> Result<Option<TraceJob>, TraceError> {
        while self.opts.limit.is_none_or(|limit| self.kept < limit) {
            let more = self
                .reader
                .read_byte_record(&mut self.record)
                .map_err(|source| read_error(&self.path, self.line, source))?;
            if !more {
                break;
            }
            self.rows_read += 1;
            let line = self
                .record
                .position()
                .map_or(self.line + 1, |pos| pos.line());
            self.line = line;
            match self.cols.parse(
                &Row {
                    record: &self.record,
                },
                line,
            ) {
                Ok(raw) => {
                    self.kept += 1;
                    return Ok(Some(TraceJob {
                        name: raw.name,
                        arrival_s: raw.submit_s,
                        duration_s: raw.duration_s,
                        gpus: raw.gpus,
                        gpu_milli: raw.gpu_milli,
                        line,
                    }));
                }
                Err(skip) if self.opts.strict && skip.reason.is_defect() => {
                    return Err(bad_row(&self.path, line, skip));
                }
                Err(skip) => self.skips.add(skip.reason),
            }
        }
        Ok(None)
    }

    /// Makes `job`'s arrival (as [`Self::next_job`] gave it) relative to `first_submit_s`, the
    /// earliest submission among the jobs kept; an arrival then beyond the accepted range
    /// (`workload::limits`) is a skip counted (`Ok(false)`), or in strict mode an error.
    pub fn arrival_from(
        &mut self,
        job: &mut TraceJob,
        first_submit_s: f64,
    ) -> Result<bool, TraceError> {
        job.arrival_s -= first_submit_s;
        match limits::arrival(job.arrival_s) {
            Ok(_) => Ok(true),
            Err(err) => {
                let submit = Col {
                    idx: 0,
                    name: self.submit_field,
                };
                let mut skip = out_of_range(submit, &err);
                skip.detail = format!("{} (counted from the first submission)", skip.detail);
                if self.opts.strict {
                    return Err(bad_row(&self.path, job.line, skip));
                }
                self.skips.add(skip.reason);
                Ok(false)
            }
        }
    }

    /// Rows skipped so far, per reason.
    pub fn skips(&self) -> &SkipCounts {
        &self.skips
    }

    /// Data rows read so far (header excluded).
    pub fn rows_read(&self) -> u64 {
        self.rows_read
    }

    /// Alibaba only: rows read so far that are GPU-sharing pods (see
    /// [`Trace::gpu_sharing_rows`]); `None` for other formats.
    pub fn gpu_sharing_rows(&self) -> Option<u64> {
        self.cols.sharing_rows()
    }

    /// Every job left, with arrivals relative to the earliest submission, sorted by (arrival,
    /// line): the whole trace.
    pub fn collect(mut self) -> Result<Trace, TraceError> {
        let mut read = Vec::new();
        while let Some(job) = self.next_job()? {
            read.push(job);
        }
        let first_submit_s = read
            .iter()
            .map(|job| job.arrival_s)
            .min_by(f64::total_cmp)
            .unwrap_or(0.0);
        // Relative first, then sorted: subtracting one number keeps the order.
        for job in &mut read {
            job.arrival_s -= first_submit_s;
        }
        read.sort_by(|a, b| {
            a.arrival_s
                .total_cmp(&b.arrival_s)
                .then(a.line.cmp(&b.line))
        });
        let mut jobs = Vec::with_capacity(read.len());
        for mut job in read {
            // Already relative: checked against the range only.
            if self.arrival_from(&mut job, 0.0)? {
                jobs.push(job);
            }
        }
        Ok(Trace {
            jobs,
            skips: self.skips,
            nodes: None,
            rows_read: self.rows_read,
            gpu_sharing_rows: self.cols.sharing_rows(),
        })
    }
}

fn bad_row(path: &Path, line: u64, skip: Skip) -> TraceError {
    TraceError::BadRow {
        path: path.to_owned(),
        line,
        field: skip.field,
        reason: skip.reason,
        detail: skip.detail,
    }
}
