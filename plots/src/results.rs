//! Readers for a result folder (`jobs.csv`, `placements.csv`, `timeline.csv`, `summary.json`).
//!
//! The rows are the simulator's own serde types ([`colo_sim::metrics::rows`] and
//! [`colo_sim::metrics::Summary`]), so the reader follows the writer. Columns it does not know
//! are ignored, and columns added after a file's first layout ([`CsvRow::ADDED`]) may be
//! missing, so that newer and older result folders still plot. A malformed row is an error
//! naming the file, line and column.
use std::path::{Path, PathBuf};

use colo_sim::metrics::rows::CsvRow;
pub use colo_sim::metrics::rows::{
    JobRow as JobRecord, JobStatus, PlacementRow as Placement, TimelineCsvRow as TimelinePoint,
};
use serde::Deserialize;
use serde::de::DeserializeOwned;

use crate::error::PlotError;

/// `summary.json` (the simulator's summary).
pub use colo_sim::metrics::Summary;

/// Everything read from one result folder.
#[derive(Debug, Clone)]
pub struct ResultFolder {
    /// The folder read.
    pub path: PathBuf,
    /// Name used in legends: the folder's name (made unique by [`load_results`]).
    pub label: String,
    /// Rows of `jobs.csv`.
    pub jobs: Vec<JobRecord>,
    /// Rows of `placements.csv`.
    pub placements: Vec<Placement>,
    /// Rows of `timeline.csv`.
    pub timeline: Vec<TimelinePoint>,
    /// `summary.json`.
    pub summary: Summary,
}

/// Reads result folders; a sweep root (a folder with `sweep.csv` and no `jobs.csv`) stands for
/// its variant folders, in `sweep.csv` order. Legend labels are the folder names, prefixed by
/// the parent's name when two folders share a name.
pub fn load_results(dirs: &[PathBuf]) -> Result<Vec<ResultFolder>, PlotError> {
    let mut folders = Vec::new();
    for dir in dirs {
        for folder_dir in expand_sweep(dir)? {
            folders.push(read_result_folder(&folder_dir)?);
        }
    }
    make_labels_unique(&mut folders);
    Ok(folders)
}

/// Reads one result folder.
pub fn read_result_folder(dir: &Path) -> Result<ResultFolder, PlotError> {
    Ok(ResultFolder {
        path: dir.to_path_buf(),
        label: folder_name(dir),
        jobs: read_rows(dir)?,
        placements: read_rows(dir)?,
        timeline: read_rows(dir)?,
        summary: read_summary(&dir.join("summary.json"))?,
    })
}

/// The variant folders a directory stands for: itself, or those its `sweep.csv` lists.
fn expand_sweep(dir: &Path) -> Result<Vec<PathBuf>, PlotError> {
    if dir.join("jobs.csv").is_file() {
        return Ok(vec![dir.to_path_buf()]);
    }
    if !dir.is_dir() {
        return Err(PlotError::Io {
            path: dir.to_path_buf(),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such folder"),
        });
    }
    let sweep_path = dir.join("sweep.csv");
    if !sweep_path.is_file() {
        return Err(PlotError::NotAResultFolder {
            path: dir.to_path_buf(),
        });
    }
    #[derive(Deserialize)]
    struct SweepRow {
        variant: String,
    }
    let rows: Vec<SweepRow> = read_csv(&sweep_path, &["variant"], |_| None)?;
    Ok(rows.into_iter().map(|row| dir.join(row.variant)).collect())
}

fn folder_name(dir: &Path) -> String {
    dir.file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|| dir.display().to_string())
}

/// Two folders named alike (`a/base`, `b/base`) get their parent's name in front.
fn make_labels_unique(folders: &mut [ResultFolder]) {
    let names: Vec<String> = folders.iter().map(|f| f.label.clone()).collect();
    for folder in folders.iter_mut() {
        let n_same = names.iter().filter(|name| **name == folder.label).count();
        if n_same > 1
            && let Some(parent) = folder.path.parent().filter(|p| p.file_name().is_some())
        {
            folder.label = format!("{}/{}", folder_name(parent), folder.label);
        }
    }
}

/// Reads `R`'s file in `dir`, requiring every column of `R` but those added later.
fn read_rows<R: CsvRow>(dir: &Path) -> Result<Vec<R>, PlotError> {
    let required: Vec<&str> = R::COLUMNS
        .iter()
        .copied()
        .filter(|c| !R::ADDED.contains(c))
        .collect();
    read_csv(&dir.join(R::FILE), &required, R::out_of_range)
}

/// Reads a whole CSV file into rows, checking the header holds `required` columns first and
/// each row with `out_of_range` (a column and why, for a value no run writes).
fn read_csv<T: DeserializeOwned>(
    path: &Path,
    required: &[&str],
    out_of_range: impl Fn(&T) -> Option<(&'static str, String)>,
) -> Result<Vec<T>, PlotError> {
    let io_err = |source| PlotError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io_err)?;
    let mut reader = csv::ReaderBuilder::new().from_reader(std::io::BufReader::new(file));
    let header = reader
        .headers()
        .map_err(|err| csv_error(path, &[], None, err))?
        .clone();
    let header_names: Vec<String> = header.iter().map(str::to_string).collect();
    if let Some(missing) = required
        .iter()
        .find(|col| !header_names.iter().any(|h| h == *col))
    {
        return Err(PlotError::Csv {
            path: path.to_path_buf(),
            line: 1,
            column: 0,
            column_name: "header".to_string(),
            message: format!(
                "the header lacks column `{missing}` (it has: {})",
                header_names.join(",")
            ),
        });
    }
    let mut rows = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|err| csv_error(path, &header_names, None, err))?;
        let row = record
            .deserialize(Some(&header))
            .map_err(|err| csv_error(path, &header_names, Some(&record), err))?;
        if let Some((column_name, message)) = out_of_range(&row) {
            return Err(PlotError::Csv {
                path: path.to_path_buf(),
                line: record.position().map_or(0, csv::Position::line),
                column: header_names
                    .iter()
                    .position(|h| h == column_name)
                    .map_or(0, |i| i + 1) as u64,
                column_name: column_name.to_owned(),
                message,
            });
        }
        rows.push(row);
    }
    Ok(rows)
}

/// Turns a csv error into one naming the file, line and column (with the column's header name).
fn csv_error(
    path: &Path,
    header: &[String],
    record: Option<&csv::StringRecord>,
    err: csv::Error,
) -> PlotError {
    let line = err
        .position()
        .or_else(|| record.and_then(|r| r.position()))
        .map_or(0, csv::Position::line);
    let (column, message) = match err.kind() {
        csv::ErrorKind::Deserialize { err: de_err, .. } => {
            let message = de_err.kind().to_string();
            let field = de_err.field().or_else(|| quoted_field(record, &message));
            (field.map_or(0, |idx| idx + 1), message)
        }
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => (
            0,
            format!("the row has {len} fields where the header has {expected_len}"),
        ),
        csv::ErrorKind::Utf8 { err: utf8_err, .. } => (
            utf8_err.field() as u64 + 1,
            "the field is not valid UTF-8".to_string(),
        ),
        csv::ErrorKind::Io(io_err) => (0, io_err.to_string()),
        _ => (0, err.to_string()),
    };
    let column_name = usize::try_from(column)
        .ok()
        .and_then(|col| col.checked_sub(1))
        .and_then(|idx| header.get(idx))
        .map_or_else(|| "row".to_string(), |name| name.clone());
    PlotError::Csv {
        path: path.to_path_buf(),
        line,
        column,
        column_name,
        message,
    }
}

/// The field a serde message quotes (`unknown variant `lost``): csv gives no field index for
/// errors raised by a type's own deserializer, such as an unknown enum value.
fn quoted_field(record: Option<&csv::StringRecord>, message: &str) -> Option<u64> {
    let record = record?;
    let idx = record
        .iter()
        .position(|value| !value.is_empty() && message.contains(&format!("`{value}`")))?;
    u64::try_from(idx).ok()
}

fn read_summary(path: &Path) -> Result<Summary, PlotError> {
    let text = std::fs::read_to_string(path).map_err(|source| PlotError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|err| PlotError::Json {
        path: path.to_path_buf(),
        line: err.line(),
        column: err.column(),
        message: err.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes `jobs.csv` with the first-layout header (no columns added later) and `body`.
    fn write_jobs(dir: &Path, body: &str) {
        let header: Vec<&str> = JobRecord::COLUMNS
            .iter()
            .copied()
            .filter(|c| !JobRecord::ADDED.contains(c))
            .collect();
        let header = header.join(",");
        std::fs::write(dir.join("jobs.csv"), format!("{header}\n{body}")).unwrap();
    }

    /// A negative time (a hand-edited file) is refused with its line and column, not left
    /// out of a CDF whose legend still counts it.
    #[test]
    fn a_negative_time_names_file_line_and_column() {
        let dir = tempfile::tempdir().unwrap();
        write_jobs(
            dir.path(),
            "0,a,resnet50,64,224,1,0,0,10,0,10,0,0,,mps,1000,100,100,1,completed\n\
             1,b,resnet50,64,224,1,0,0,10,0,-5,0,0,,mps,1000,100,100,1,completed\n",
        );
        let err = read_rows::<JobRecord>(dir.path()).unwrap_err().to_string();
        assert!(
            err.contains("jobs.csv: line 3, column 11 (jct_s): -5 s: a time must be finite"),
            "{err}"
        );
    }

    #[test]
    fn bad_float_names_file_line_and_column() {
        let dir = tempfile::tempdir().unwrap();
        write_jobs(
            dir.path(),
            "0,a,resnet50,64,224,1,0,0,10,0,10,0,0,,mps,1000,100,100,1,completed\n\
             1,b,resnet50,64,224,1,0,0,10,0,ten,0,0,,mps,1000,100,100,1,completed\n",
        );
        let err = read_rows::<JobRecord>(dir.path()).unwrap_err();
        let PlotError::Csv {
            line,
            column,
            column_name,
            ..
        } = &err
        else {
            panic!("expected a CSV error, got {err}");
        };
        assert_eq!((*line, *column, column_name.as_str()), (3, 11, "jct_s"));
        assert!(
            err.to_string()
                .contains("jobs.csv: line 3, column 11 (jct_s)"),
            "{err}"
        );
    }

    #[test]
    fn short_row_and_unknown_status_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        write_jobs(dir.path(), "0,a,resnet50\n");
        let err = read_rows::<JobRecord>(dir.path()).unwrap_err();
        assert!(err.to_string().contains("line 2"), "{err}");
        write_jobs(
            dir.path(),
            "0,a,resnet50,64,224,1,0,0,10,0,10,0,0,,mps,1000,100,100,1,lost\n",
        );
        let err = read_rows::<JobRecord>(dir.path()).unwrap_err();
        assert!(err.to_string().contains("column 20 (status)"), "{err}");
    }

    #[test]
    fn missing_column_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("timeline.csv");
        std::fs::write(&path, "time_s,queued,busy_gpus\n0,1,1\n").unwrap();
        let err = read_rows::<TimelinePoint>(dir.path()).unwrap_err();
        assert!(err.to_string().contains("lacks column `running`"), "{err}");
    }

    #[test]
    fn bad_summary_names_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("summary.json");
        std::fs::write(&path, "{\n  \"makespan_s\": 1,\n  oops\n}").unwrap();
        let err = read_summary(&path).unwrap_err();
        assert!(err.to_string().contains("summary.json: line 3"), "{err}");
    }

    #[test]
    fn empty_fields_read_as_none() {
        let dir = tempfile::tempdir().unwrap();
        write_jobs(
            dir.path(),
            "0,a,resnet50,64,224,9,0,,,,,0,,,mig,1000,0,100,,unplaceable\n",
        );
        let jobs = read_rows::<JobRecord>(dir.path()).unwrap();
        assert_eq!(jobs[0].status, JobStatus::Unplaceable);
        assert!(jobs[0].jct_s.is_none());
    }

    #[test]
    fn rows_the_simulator_writes_read_back_with_energy() {
        let dir = tempfile::tempdir().unwrap();
        let row = |energy_j| JobRecord {
            job: 0,
            name: "a".into(),
            model: "resnet50".into(),
            batch: 64,
            image: 224,
            gpus: 1,
            arrival_s: 0.0,
            start_s: Some(0.0),
            end_s: Some(10.0),
            wait_s: Some(0.0),
            jct_s: Some(10.0),
            group: Some(0),
            gpu: Some(0),
            slice: None,
            mode: Some(colo_sim::perf::ShareMode::Mps),
            samples: 1000.0,
            mean_rate: Some(100.0),
            exclusive_rate: 100.0,
            slowdown: Some(1.0),
            status: JobStatus::Completed,
            energy_j,
            preemptions: 0,
        };
        let rows = [row(Some(5500.25)), row(None)];
        let bytes = colo_sim::metrics::rows::csv_bytes(rows.clone()).unwrap();
        std::fs::write(dir.path().join("jobs.csv"), bytes).unwrap();
        let back = read_rows::<JobRecord>(dir.path()).unwrap();
        assert_eq!(back, rows);
        // A folder written before `energy_j` existed reads with it empty.
        write_jobs(
            dir.path(),
            "0,a,resnet50,64,224,1,0,0,10,0,10,0,0,,mps,1000,100,100,1,completed\n",
        );
        let old = read_rows::<JobRecord>(dir.path()).unwrap();
        assert_eq!(old[0].energy_j, None);
    }
}
