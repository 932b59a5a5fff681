//! Reading the study's experiment matrix: one CSV row per training process, grouped into the
//! sets (experiment, workload) that ran together on one GPU.
use std::path::Path;

use super::StudyError;
use crate::perf::ShareMode;

/// One training process of the matrix.
#[derive(Clone, Debug, PartialEq)]
pub struct Process {
    /// CSV line (1-based, header = 1).
    pub line: u64,
    /// timm model name (`resnet26`).
    pub model: String,
    /// Last folder of `--data-dir` (`cifar10`).
    pub dataset: String,
    /// `--batch-size`.
    pub batch: u32,
    /// How it shared the GPU, from the `Collocation` column: `-` (plain processes,
    /// "naive") is [`ShareMode::Timeslice`], `MPS` [`ShareMode::Mps`], a MIG profile name
    /// [`ShareMode::Mig`].
    pub mode: ShareMode,
    /// Its MIG slice, named as on the matrix's GPU (`3g.20gb`), when `mode` is `Mig`.
    pub slice: Option<String>,
}

/// The processes that ran together: one (experiment, workload) of the matrix.
#[derive(Clone, Debug, PartialEq)]
pub struct MatrixSet {
    /// `Experiment` column.
    pub experiment: u32,
    /// `Workload` column.
    pub workload: u32,
    /// Its processes, in file order.
    pub processes: Vec<Process>,
}

/// Reads the matrix at `path`, grouping rows by (experiment, workload) in first-seen order.
///
/// # Errors
/// [`StudyError::Matrix`] naming the file, line and column for an unreadable file, a missing
/// column or a bad value.
pub fn read_matrix(path: &Path) -> Result<Vec<MatrixSet>, StudyError> {
    let bad = |line: u64, field: &str, message: String| StudyError::Matrix {
        path: path.to_owned(),
        line,
        field: field.to_owned(),
        message,
    };
    let mut reader = csv::Reader::from_path(path).map_err(|e| bad(0, "file", e.to_string()))?;
    let headers = reader
        .headers()
        .map_err(|e| bad(1, "header", e.to_string()))?
        .clone();
    let column = |name: &str| {
        headers
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| bad(1, name, "missing column".to_owned()))
    };
    let cols = [
        column("Experiment")?,
        column("Workload")?,
        column("Collocation")?,
        column("Params")?,
    ];
    let mut sets: Vec<MatrixSet> = Vec::new();
    for (idx, record) in reader.records().enumerate() {
        let line = idx as u64 + 2;
        let record = record.map_err(|e| bad(line, "row", e.to_string()))?;
        let get = |i: usize| record.get(cols[i]).unwrap_or("").trim();
        let number = |i: usize, name: &str| {
            get(i)
                .parse::<u32>()
                .map_err(|_| bad(line, name, format!("`{}` is not a whole number", get(i))))
        };
        let (experiment, workload) = (number(0, "Experiment")?, number(1, "Workload")?);
        let process = process(line, get(2), get(3)).map_err(|(f, m)| bad(line, f, m))?;
        match sets
            .iter_mut()
            .find(|s| s.experiment == experiment && s.workload == workload)
        {
            Some(set) => set.processes.push(process),
            None => sets.push(MatrixSet {
                experiment,
                workload,
                processes: vec![process],
            }),
        }
    }
    Ok(sets)
}

/// One process from its `Collocation` and `Params` cells; an error names the column.
fn process(line: u64, collocation: &str, params: &str) -> Result<Process, (&'static str, String)> {
    let (mode, slice) = match collocation {
        "-" => (ShareMode::Timeslice, None),
        "MPS" => (ShareMode::Mps, None),
        "" => return Err(("Collocation", "empty; write -, MPS or a MIG profile".into())),
        slice => (ShareMode::Mig, Some(slice.to_owned())),
    };
    let words: Vec<&str> = params.split_whitespace().collect();
    let value = |flag: &str| {
        words
            .iter()
            .position(|w| *w == flag)
            .and_then(|i| words.get(i + 1).copied())
            .ok_or_else(|| ("Params", format!("no `{flag} VALUE` in `{params}`")))
    };
    let batch_text = value("--batch-size")?;
    let batch = batch_text.parse::<u32>().map_err(|_| {
        (
            "Params",
            format!("--batch-size `{batch_text}` is not a number"),
        )
    })?;
    let dataset = value("--data-dir")?
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or_default()
        .to_owned();
    Ok(Process {
        line,
        model: value("--model")?.to_owned(),
        dataset,
        batch,
        mode,
        slice,
    })
}
