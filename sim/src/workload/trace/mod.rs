//! Trace readers: Philly, Alibaba openb, ITP, Helios, Slurm accounting, Kubernetes pod history
//! and colo CSV files as [`TraceJob`]s.
//!
#![doc = include_str!("README.md")]

mod error;
mod four;
mod helios;
mod kube;
mod openb;
mod philly;
mod row;
mod skip;
mod slurm;
mod source;
mod time;

#[cfg(test)]
mod tests;

use std::fmt;
use std::io::Read;
use std::path::Path;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

pub use error::TraceError;
pub use openb::{NODE_LIST_FILE, read_openb_nodes};
pub use skip::{SkipCounts, SkipReason};
pub use time::civil_from_days;

/// The layout of a trace file. Serialized in snake_case (`alibaba_openb`); the kebab-case
/// spelling (`alibaba-openb`) is accepted too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TraceFormat {
    /// Microsoft Philly as prepared for Pollux (`timestamp,duration,num_gpus,...`).
    Philly,
    /// Alibaba GPU cluster trace 2023 "openb": pod list plus node list.
    #[serde(alias = "alibaba-openb")]
    AlibabaOpenb,
    /// Microsoft ITP 2021, one cluster's CSV (`job_id,submission_time,duration,num_gpu`).
    Itp,
    /// The Helios / Acme job log (`job_id,...,gpu_num,...,submit_time,...,duration,...`).
    Helios,
    /// colo's own CSV (`name,arrival_s,duration_s,gpus`).
    Colo,
    /// Slurm accounting, `sacct --parsable2` (`JobID|...|Submit|Start|End|AllocTRES|State`).
    Slurm,
    /// Kubernetes pod history: one pod object per line (`kubectl get pods -o json`'s items).
    Kubernetes,
}

impl TraceFormat {
    /// Every format.
    pub const ALL: [TraceFormat; 7] = [
        Self::Philly,
        Self::AlibabaOpenb,
        Self::Itp,
        Self::Helios,
        Self::Colo,
        Self::Slurm,
        Self::Kubernetes,
    ];

    /// The snake_case name, as serialized.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Philly => "philly",
            Self::AlibabaOpenb => "alibaba_openb",
            Self::Itp => "itp",
            Self::Helios => "helios",
            Self::Colo => "colo",
            Self::Slurm => "slurm",
            Self::Kubernetes => "kubernetes",
        }
    }
}

impl fmt::Display for TraceFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for TraceFormat {
    type Err = TraceError;

    /// Parse a snake_case or kebab-case name.
    fn from_str(given: &str) -> Result<Self, TraceError> {
        let snake = given.trim().replace('-', "_");
        Self::ALL
            .into_iter()
            .find(|format| format.as_str() == snake)
            .ok_or_else(|| TraceError::UnknownFormat {
                given: given.to_owned(),
            })
    }
}

/// One job of a trace: when it arrived, how long it ran alone, and how many GPUs it held.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceJob {
    /// The job's id in the trace (Philly has none: `philly-<line>`).
    pub name: String,
    /// Seconds from the trace's first kept submission (so the first job arrives at 0); in
    /// `[0, limits::MAX_TIME_S]`.
    pub arrival_s: f64,
    /// Seconds the job ran in the traced cluster; in `[limits::MIN_DURATION_S,
    /// limits::MAX_DURATION_S]`.
    pub duration_s: f64,
    /// GPUs the job held; >= 1.
    pub gpus: u32,
    /// Alibaba only: the share of each GPU in 1/1000 (1..=1000); below 1000 is a GPU-sharing
    /// pod, which always has `gpus == 1`. `None` for the other formats.
    pub gpu_milli: Option<u32>,
    /// 1-based line of the row in the source file (the header is line 1).
    pub line: u64,
}

impl TraceJob {
    /// True for an Alibaba GPU-sharing pod (`gpu_milli < 1000`).
    pub fn shares_gpu(&self) -> bool {
        self.gpu_milli.is_some_and(|milli| milli < 1000)
    }
}

/// One node of an Alibaba openb node list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceNode {
    /// The node's serial name (`sn`).
    pub name: String,
    /// GPUs in the node; >= 1 (CPU-only nodes are left out).
    pub gpus: u32,
    /// The GPU model (`model`: P100, T4, V100M16, V100M32, A10, or undisclosed G1, G2, G3).
    pub gpu_model: String,
}

/// A trace read from a file.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    /// The jobs kept, sorted by (arrival, line).
    pub jobs: Vec<TraceJob>,
    /// Rows skipped, per reason.
    pub skips: SkipCounts,
    /// The cluster defined by the trace (openb node list), if the format has one.
    pub nodes: Option<Vec<TraceNode>>,
    /// Data rows read (header excluded): `jobs.len() + skips.total()`.
    pub rows_read: u64,
    /// Alibaba only: rows that are GPU-sharing pods (a valid `gpu_milli` below 1000), whether
    /// kept or skipped for a later field (such as `zero_duration`). `None` for other formats.
    pub gpu_sharing_rows: Option<u64>,
}

/// How to read a trace.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// Refuse the first row with a defect (see [`SkipReason::is_defect`]) with an error naming
    /// the file, line and field, instead of skipping and counting it. Default: false.
    pub strict: bool,
    /// Stop after this many jobs kept, in file order (before sorting). Default: no limit.
    pub limit: Option<usize>,
    /// Slurm and Kubernetes: keep jobs that ended in any state (`FAILED`, `CANCELLED`,
    /// `TIMEOUT`, ...; a pod in phase `Failed`), each having held its GPUs for its run time.
    /// Default false: only `COMPLETED` jobs (`Succeeded` pods) are kept, the others counted as
    /// `not_completed`.
    pub all_states: bool,
}

/// Read a trace file of `format`, plain or gzip-compressed (recognized by its first bytes).
///
/// For [`TraceFormat::AlibabaOpenb`], `path` is the pod list and the node list is looked for
/// beside it, as [`read_openb`] with no node path does.
pub fn read_trace(
    format: TraceFormat,
    path: &Path,
    opts: &ReadOptions,
) -> Result<Trace, TraceError> {
    match format {
        TraceFormat::AlibabaOpenb => read_openb(path, None, opts),
        _ => read_jobs(format, source::open(path)?, path, opts),
    }
}

/// Read a trace of `format` from `bytes`, plain or gzip-compressed, as [`read_trace`] reads a
/// file (an openb pod list without its node list); `<bytes>` names the source in errors.
pub fn read_trace_bytes(
    format: TraceFormat,
    bytes: &[u8],
    opts: &ReadOptions,
) -> Result<Trace, TraceError> {
    let path = Path::new("<bytes>");
    let input = source::decode(std::io::Cursor::new(bytes.to_vec()), path)?;
    read_jobs(format, input, path, opts)
}

/// Read an Alibaba openb pod list, and the node list from `nodes`, or else from
/// [`NODE_LIST_FILE`] (or its `.gz`) beside the pod list; without either, `nodes` is `None`.
pub fn read_openb(
    pods: &Path,
    nodes: Option<&Path>,
    opts: &ReadOptions,
) -> Result<Trace, TraceError> {
    let input = source::open(pods)?;
    let mut trace = read_jobs(TraceFormat::AlibabaOpenb, input, pods, opts)?;
    trace.nodes = openb_node_list(pods, nodes)?;
    Ok(trace)
}

/// The node list of the openb pod list `pods`: read from `nodes`, or else from
/// [`NODE_LIST_FILE`] (or its `.gz`) beside the pod list; `None` without either.
pub fn openb_node_list(
    pods: &Path,
    nodes: Option<&Path>,
) -> Result<Option<Vec<TraceNode>>, TraceError> {
    openb::node_list_path(pods, nodes)
        .map(|path| read_openb_nodes(&path))
        .transpose()
}

/// Read the jobs of `format` from decoded `input` (see `source::decode`); `path` is used in
/// messages only.
pub(crate) fn read_jobs(
    format: TraceFormat,
    input: Box<dyn Read + Send>,
    path: &Path,
    opts: &ReadOptions,
) -> Result<Trace, TraceError> {
    TraceRows::new(format, input, path, opts)?.collect()
}

/// The columns of one format, found in a file's header.
enum Cols {
    Philly(philly::PhillyCols),
    Openb(openb::PodCols),
    Four(four::FourCols),
    Helios(helios::HeliosCols),
    Slurm(slurm::SlurmCols),
    Kube(kube::KubeCols),
}

impl Cols {
    fn find(
        header: &source::Header<'_>,
        format: TraceFormat,
        opts: &ReadOptions,
    ) -> Result<Self, TraceError> {
        Ok(match format {
            TraceFormat::Philly => Cols::Philly(philly::PhillyCols::find(header)?),
            TraceFormat::AlibabaOpenb => Cols::Openb(openb::PodCols::find(header)?),
            TraceFormat::Itp => Cols::Four(four::FourCols::find(header, &four::ITP)?),
            TraceFormat::Colo => Cols::Four(four::FourCols::find(header, &four::COLO)?),
            TraceFormat::Helios => Cols::Helios(helios::HeliosCols::find(header)?),
            TraceFormat::Slurm => Cols::Slurm(slurm::SlurmCols::find(header, opts.all_states)?),
            TraceFormat::Kubernetes => Self::find_jsonl(opts),
        })
    }

    /// A format of JSON lines has no header: its fields are found per line.
    fn find_jsonl(opts: &ReadOptions) -> Self {
        Cols::Kube(kube::KubeCols::new(opts.all_states))
    }

    fn parse(&self, row: &row::Row<'_>, line: u64) -> Result<row::RawJob, row::Skip> {
        match self {
            Cols::Philly(cols) => cols.parse(row, line),
            Cols::Openb(cols) => cols.parse(row, line),
            Cols::Four(cols) => cols.parse(row, line),
            Cols::Helios(cols) => cols.parse(row, line),
            Cols::Slurm(cols) => cols.parse(row, line),
            Cols::Kube(cols) => cols.parse(row, line),
        }
    }

    /// The submission column's name, for a job whose arrival after the first submission is
    /// beyond the accepted range.
    fn submit_field(format: TraceFormat) -> &'static str {
        match format {
            TraceFormat::Philly => "timestamp",
            TraceFormat::AlibabaOpenb => "creation_time",
            TraceFormat::Itp => four::ITP.submit,
            TraceFormat::Colo => four::COLO.submit,
            TraceFormat::Helios => "submit_time",
            TraceFormat::Slurm => "Submit",
            TraceFormat::Kubernetes => kube::SUBMIT_FIELD,
        }
    }

    /// Alibaba only: rows seen so far that are GPU-sharing pods.
    fn sharing_rows(&self) -> Option<u64> {
        match self {
            Cols::Openb(cols) => Some(cols.sharing_rows.get()),
            _ => None,
        }
    }
}

pub use source::TraceRows;
