//! Opening a trace (plain or gzip), finding its columns, and the row loop shared by all
//! formats: one row at a time, skips counted, strict mode, limit, then times made relative.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use csv::ByteRecord;
use flate2::bufread::MultiGzDecoder;

use super::row::{Col, RawJob, Row, Skip, out_of_range};
use super::{ReadOptions, SkipCounts, Trace, TraceError, TraceFormat, TraceJob};
use crate::workload::limits;

/// Open `path` for reading; gzip is recognized by its magic bytes, not by the file name.
pub(crate) fn open(path: &Path) -> Result<Box<dyn Read>, TraceError> {
    let file = File::open(path).map_err(|source| TraceError::Open {
        path: path.to_owned(),
        source,
    })?;
    decode(file, path)
}

/// Wrap `input` in a gzip decoder when it starts with the gzip magic bytes.
pub(crate) fn decode(input: impl Read + 'static, path: &Path) -> Result<Box<dyn Read>, TraceError> {
    let mut buffered = BufReader::with_capacity(1 << 16, input);
    let is_gzip = buffered
        .fill_buf()
        .map_err(|source| TraceError::Open {
            path: path.to_owned(),
            source,
        })?
        .starts_with(&[0x1f, 0x8b]);
    Ok(if is_gzip {
        Box::new(BufReader::with_capacity(
            1 << 16,
            MultiGzDecoder::new(buffered),
        ))
    } else {
        Box::new(buffered)
    })
}

/// A CSV reader over `input` that tolerates short and long rows (they are judged per field).
pub(crate) fn csv_reader(input: Box<dyn Read>) -> csv::Reader<Box<dyn Read>> {
    csv::ReaderBuilder::new()
        .flexible(true)
        .has_headers(true)
        .from_reader(input)
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
        reader: &mut csv::Reader<Box<dyn Read>>,
        path: &'p Path,
        format: TraceFormat,
    ) -> Result<Self, TraceError> {
        let record = reader.byte_headers().map_err(|source| TraceError::Read {
            path: path.to_owned(),
            line: 0,
            source,
        })?;
        let names = record
            .iter()
            .map(|field| {
                let name = String::from_utf8_lossy(field);
                name.trim_start_matches('\u{feff}').trim().to_owned()
            })
            .collect();
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

/// Read every row of `reader`, turning each into a job with `parse` or counting its skip.
/// `submit_field` names the submission column, for a job whose arrival after the first
/// submission is beyond the accepted range (`workload::limits`).
pub(crate) fn collect_jobs(
    mut reader: csv::Reader<Box<dyn Read>>,
    path: &Path,
    opts: &ReadOptions,
    submit_field: &'static str,
    mut parse: impl FnMut(&Row<'_>, u64) -> Result<RawJob, Skip>,
) -> Result<Trace, TraceError> {
    let mut record = ByteRecord::new();
    let mut raw_jobs: Vec<(RawJob, u64)> = Vec::new();
    let mut skips = SkipCounts::default();
    let mut rows_read = 0_u64;
    let mut line = 1_u64;
    while opts.limit.is_none_or(|limit| raw_jobs.len() < limit) {
        let more = reader
            .read_byte_record(&mut record)
            .map_err(|source| TraceError::Read {
                path: path.to_owned(),
                line,
                source,
            })?;
        if !more {
            break;
        }
        rows_read += 1;
        line = record.position().map_or(line + 1, |pos| pos.line());
        match parse(&Row { record: &record }, line) {
            Ok(job) => raw_jobs.push((job, line)),
            Err(skip) if opts.strict && skip.reason.is_defect() => {
                return Err(bad_row(path, line, skip));
            }
            Err(skip) => skips.add(skip.reason),
        }
    }
    let submit = Col {
        idx: 0,
        name: submit_field,
    };
    let mut jobs = Vec::with_capacity(raw_jobs.len());
    for job in relative_sorted(raw_jobs) {
        match limits::arrival(job.arrival_s) {
            Ok(_) => jobs.push(job),
            Err(err) => {
                let mut skip = out_of_range(submit, &err);
                skip.detail = format!("{} (counted from the first submission)", skip.detail);
                if opts.strict {
                    return Err(bad_row(path, job.line, skip));
                }
                skips.add(skip.reason);
            }
        }
    }
    Ok(Trace {
        jobs,
        skips,
        nodes: None,
        rows_read,
        gpu_sharing_rows: None,
    })
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

/// Jobs with arrivals relative to the earliest submission, sorted by (arrival, line).
fn relative_sorted(raw_jobs: Vec<(RawJob, u64)>) -> Vec<TraceJob> {
    let first_submit = raw_jobs
        .iter()
        .map(|(job, _)| job.submit_s)
        .min_by(f64::total_cmp)
        .unwrap_or(0.0);
    let mut jobs: Vec<TraceJob> = raw_jobs
        .into_iter()
        .map(|(raw, line)| TraceJob {
            name: raw.name,
            arrival_s: raw.submit_s - first_submit,
            duration_s: raw.duration_s,
            gpus: raw.gpus,
            gpu_milli: raw.gpu_milli,
            line,
        })
        .collect();
    jobs.sort_by(|a, b| {
        a.arrival_s
            .total_cmp(&b.arrival_s)
            .then(a.line.cmp(&b.line))
    });
    jobs
}
