//! Packing search (`colo pack`): the best ways to place a few jobs on GPUs of one type.
//!
//! Each GPU of a packing holds a set of jobs in one configuration: exclusive (one job),
//! time-sliced, MPS without SM budgets, MPS with per-job SM budgets, MIG (one job per slice) or
//! MIG with several jobs sharing a slice under MPS. A packing is feasible when every job reaches
//! its minimum fraction of its alone speed and every partition holds its jobs' memory. Packings
//! are ranked by total throughput: the sum of the jobs' fractions of exclusive (samples/s of
//! different models do not add up meaningfully), with samples/s shown beside it.
//!
//! # Search
//!
//! The rates of one GPU depend only on the jobs on it, so every GPU job set (a bitmask) is
//! scored once per configuration family and the best feasible configuration of each family is
//! kept (module `configs`). The candidates on one GPU are:
//! - time-slicing and plain MPS: one configuration each;
//! - MPS with SM budgets: budgets proportional to the jobs' space demands, and for sets of at
//!   most [`FULL_BUDGET_GRID_MAX`] jobs every per-job combination of 25/50/75/100 % (larger sets
//!   get the uniform budgets 25/50/75 % only);
//! - MIG: every valid layout of the GPU with every assignment of job groups to slices that
//!   leaves no slice empty (an empty slice is the same as a smaller layout, which is listed
//!   too); slices of the same profile are interchangeable, so each assignment is tried once.
//!
//! Packings are set partitions of the jobs into GPU sets. With at most [`EXHAUSTIVE_MAX_JOBS`]
//! jobs, and when every GPU set of at most `max_jobs_per_gpu` jobs has at most
//! [`EXHAUSTIVE_MAX_CONFIGS`] configurations in all (counted up front, before scoring any),
//! every partition is enumerated (exhaustive). Otherwise a beam search places jobs in
//! decreasing order of GPU occupancy (`time_demand × space_demand`), keeping the
//! [`BEAM_WIDTH`] best partial packings after each job: at most `jobs × BEAM_WIDTH × (GPUs + 1)`
//! GPU sets are scored per beam, each in at most [`BEAM_SET_MAX_CONFIGS`] configurations or,
//! for a larger set, with one grouping of its jobs per MIG slice count (dealt round-robin by
//! occupancy) instead of every set partition. The beam's result is not guaranteed optimal. The
//! report says which search was used and why.
mod configs;
pub mod output;
mod search;
#[cfg(test)]
mod tests;

use std::fmt;
use std::str::FromStr;

use thiserror::Error;

use crate::hardware::{GpuSpec, MigLayout};
use crate::perf::{Origin, PerfError, PerfModel, ShareMode};
use crate::workload::ModelKey;

/// Most jobs `pack` accepts (GPU job sets are 64-bit masks).
pub const MAX_JOBS: usize = 64;
/// Above this many jobs the search is a beam search instead of exhaustive.
pub const EXHAUSTIVE_MAX_JOBS: usize = 10;
/// Above this many GPU configurations in all the search is a beam search instead of
/// exhaustive. Ten jobs of at most 5 per GPU have 2.4 M and took 6 s on two busy cores (test
/// build); ten of at most 6 have 11.2 M, ten of at most 10 have 204 M.
pub const EXHAUSTIVE_MAX_CONFIGS: u64 = 5_000_000;
/// Partial packings the beam search keeps after each job.
pub const BEAM_WIDTH: usize = 64;
/// GPU sets with more configurations than this (on an H200: more than 5 jobs) are scored in
/// the beam search with one MIG grouping per slice count instead of every set partition.
pub const BEAM_SET_MAX_CONFIGS: u64 = 10_000;
/// GPU sets up to this size try every per-job SM budget in {25, 50, 75, 100} %.
pub const FULL_BUDGET_GRID_MAX: usize = 4;

/// One job to place and the least speed it accepts.
#[derive(Clone, Debug, PartialEq)]
pub struct PackJob {
    /// What it trains.
    pub key: ModelKey,
    /// Minimum fraction of its alone speed on a whole GPU, in (0, 1] (0: any).
    pub min_fraction: f64,
}

/// A job written `MODEL:BATCH:IMAGE[@MIN]` could not be read.
#[derive(Debug, Error, PartialEq)]
#[error("`{text}`: {why}; write jobs as MODEL:BATCH:IMAGE or MODEL:BATCH:IMAGE@0.5")]
pub struct PackJobError {
    /// The text as given.
    pub text: String,
    /// What is wrong.
    pub why: String,
}

impl FromStr for PackJob {
    type Err = PackJobError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let fail = |why: String| PackJobError {
            text: text.to_owned(),
            why,
        };
        let (key_text, min_text) = match text.split_once('@') {
            Some((key, min)) => (key, Some(min)),
            None => (text, None),
        };
        let key: ModelKey = key_text
            .parse()
            .map_err(|e: crate::workload::ModelKeyError| {
                fail(format!("the job part is wrong ({})", e.why))
            })?;
        let min_fraction = match min_text {
            None => 0.0,
            Some(min) => match min.trim().parse::<f64>() {
                Ok(v) if v > 0.0 && v <= 1.0 => v,
                _ => {
                    return Err(fail(format!(
                        "the minimum `{min}` after '@' is not a fraction of alone speed in (0, 1]"
                    )));
                }
            },
        };
        Ok(Self { key, min_fraction })
    }
}

/// What to search.
#[derive(Clone, Debug)]
pub struct PackRequest {
    /// The GPU type.
    pub gpu: &'static GpuSpec,
    /// The jobs.
    pub jobs: Vec<PackJob>,
    /// Use at most this many GPUs; `None`: the fewest that meet every minimum.
    pub gpus: Option<u32>,
    /// Most jobs on one GPU.
    pub max_jobs_per_gpu: usize,
    /// How many of the best packings to list.
    pub top: usize,
}

/// A family of GPU configurations; the single-mode packings use one family (or a pair) only.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Family {
    /// One job alone.
    Exclusive,
    /// Time-sliced processes.
    Timeslice,
    /// MPS without SM budgets.
    Mps,
    /// MPS with per-job SM budgets.
    MpsBudgets,
    /// MIG, one job per slice.
    Mig,
    /// MIG with at least one slice shared by several jobs under MPS.
    MigMps,
}

impl Family {
    /// All families, in table order.
    pub const ALL: [Family; 6] = [
        Family::Exclusive,
        Family::Timeslice,
        Family::Mps,
        Family::MpsBudgets,
        Family::Mig,
        Family::MigMps,
    ];

    fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Family::Exclusive => "exclusive",
            Family::Timeslice => "timeslice",
            Family::Mps => "mps",
            Family::MpsBudgets => "mps+budgets",
            Family::Mig => "mig",
            Family::MigMps => "mig+mps",
        })
    }
}

/// A single-mode packing: every GPU uses one of these families. `mps+budgets` includes plain
/// MPS (a 100 % budget) and `mig+mps` includes one job per slice.
pub const SINGLE_MODES: [(&str, &[Family]); 5] = [
    ("timeslice", &[Family::Timeslice]),
    ("mps", &[Family::Mps]),
    ("mps+budgets", &[Family::Mps, Family::MpsBudgets]),
    ("mig", &[Family::Mig]),
    ("mig+mps", &[Family::Mig, Family::MigMps]),
];

/// How one GPU runs its jobs.
#[derive(Clone, Debug, PartialEq)]
pub enum GpuConfig {
    /// One job alone on the whole GPU.
    Exclusive,
    /// Time-sliced processes.
    Timeslice,
    /// MPS without SM budgets.
    Mps,
    /// MPS with an SM budget (fraction) per job, in the GPU's job order.
    MpsBudgets(Vec<f64>),
    /// MIG: the layout and, per job in the GPU's job order, the index of its slice.
    Mig {
        /// The GPU's slices.
        layout: MigLayout,
        /// Slice index of each job.
        slice_of: Vec<usize>,
    },
}

impl GpuConfig {
    /// The sharing mode the performance model is asked about.
    pub fn mode(&self) -> ShareMode {
        match self {
            GpuConfig::Exclusive => ShareMode::Exclusive,
            GpuConfig::Timeslice => ShareMode::Timeslice,
            GpuConfig::Mps | GpuConfig::MpsBudgets(_) => ShareMode::Mps,
            GpuConfig::Mig { .. } => ShareMode::Mig,
        }
    }

    /// Its family.
    pub fn family(&self) -> Family {
        match self {
            GpuConfig::Exclusive => Family::Exclusive,
            GpuConfig::Timeslice => Family::Timeslice,
            GpuConfig::Mps => Family::Mps,
            GpuConfig::MpsBudgets(_) => Family::MpsBudgets,
            GpuConfig::Mig { layout, slice_of } if slice_of.len() > layout.slices.len() => {
                Family::MigMps
            }
            GpuConfig::Mig { .. } => Family::Mig,
        }
    }
}

impl fmt::Display for GpuConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GpuConfig::MpsBudgets(budgets) => {
                let pct: Vec<String> = budgets
                    .iter()
                    .map(|b| format!("{:.0}%", b * 100.0))
                    .collect();
                write!(f, "mps, SM budgets {}", pct.join("/"))
            }
            GpuConfig::Mig { layout, .. } => write!(f, "{} {layout}", self.family()),
            other => write!(f, "{}", other.family()),
        }
    }
}

/// One job's predicted place and speed in a packing.
#[derive(Clone, Debug, PartialEq)]
pub struct PlacedJob {
    /// Index of the job in the request.
    pub job: usize,
    /// Predicted samples/s.
    pub samples_per_s: f64,
    /// Fraction of its alone speed on a whole GPU.
    pub fraction: f64,
    /// Memory of its process, context included, GiB.
    pub memory_gib: f64,
    /// Where it runs on the GPU: `whole GPU`, `45% SMs`, or a slice such as `3g.71gb@0`.
    pub place: String,
}

/// One GPU of a packing.
#[derive(Clone, Debug, PartialEq)]
pub struct GpuPlan {
    /// Its configuration.
    pub config: GpuConfig,
    /// Its jobs, in request order.
    pub jobs: Vec<PlacedJob>,
    /// Sum of its jobs' fractions of exclusive.
    pub total_fraction: f64,
    /// Sum of its jobs' samples/s.
    pub samples_per_s: f64,
}

/// A placement of every job on GPUs.
#[derive(Clone, Debug, PartialEq)]
pub struct Packing {
    /// The GPUs used.
    pub gpus: Vec<GpuPlan>,
    /// Sum over jobs of their fraction of exclusive.
    pub total_fraction: f64,
    /// Sum over jobs of their samples/s.
    pub samples_per_s: f64,
}

impl Packing {
    fn from_gpus(gpus: Vec<GpuPlan>) -> Self {
        let total_fraction = gpus.iter().map(|g| g.total_fraction).sum();
        let samples_per_s = gpus.iter().map(|g| g.samples_per_s).sum();
        Self {
            gpus,
            total_fraction,
            samples_per_s,
        }
    }
}

/// Which search produced the report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SearchMethod {
    /// Every set partition of the jobs was scored.
    Exhaustive {
        /// Set partitions scored.
        partitions: u64,
    },
    /// Beam search (not guaranteed optimal).
    Beam {
        /// Partial packings kept per step.
        width: usize,
        /// Why the search is not exhaustive.
        reason: BeamReason,
    },
}

/// Why a request got the beam search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BeamReason {
    /// More than [`EXHAUSTIVE_MAX_JOBS`] jobs.
    ManyJobs,
    /// The exhaustive search would score this many GPU configurations, more than
    /// [`EXHAUSTIVE_MAX_CONFIGS`].
    ManyConfigs(u64),
}

/// How far a search has got, for a progress display.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PackProgress {
    /// GPU configurations scored so far.
    pub configs_scored: u64,
    /// GPU configurations the search will score, when known up front (exhaustive search).
    pub configs_total: Option<u64>,
}

/// `pack (exhaustive): 10 of 88 GPU configurations scored`, or `pack (beam search): 10 GPU
/// configurations scored`.
impl fmt::Display for PackProgress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.configs_total {
            Some(total) => write!(
                f,
                "pack (exhaustive): {} of {total} GPU configurations scored",
                self.configs_scored
            ),
            None => write!(
                f,
                "pack (beam search): {} GPU configurations scored",
                self.configs_scored
            ),
        }
    }
}

impl fmt::Display for SearchMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SearchMethod::Exhaustive { partitions } => write!(
                f,
                "exhaustive: all {partitions} ways to split the jobs into GPU sets, every configuration of each set"
            ),
            SearchMethod::Beam {
                width,
                reason: BeamReason::ManyJobs,
            } => write!(
                f,
                "heuristic: beam search of width {width}, jobs placed by decreasing GPU occupancy; not guaranteed optimal (exhaustive up to {EXHAUSTIVE_MAX_JOBS} jobs)"
            ),
            SearchMethod::Beam {
                width,
                reason: BeamReason::ManyConfigs(configs),
            } => write!(
                f,
                "heuristic: beam search of width {width}, jobs placed by decreasing GPU occupancy, GPU sets of more than {BEAM_SET_MAX_CONFIGS} configurations try one MIG grouping per slice count; not guaranteed optimal (the exhaustive search would score {configs} GPU configurations, above its bound of {EXHAUSTIVE_MAX_CONFIGS}; lower --max-per-gpu for it)"
            ),
        }
    }
}

/// The answer.
#[derive(Clone, Debug)]
pub struct PackReport {
    /// GPUs the packings may use (fixed, or the fewest that meet every minimum).
    pub gpus: u32,
    /// Whether `gpus` is the fewest found (not fixed by the request).
    pub gpus_are_fewest: bool,
    /// Best packings, best first.
    pub best: Vec<Packing>,
    /// Best packing of each single mode on at most `gpus` GPUs (`None`: none is feasible).
    pub single_mode: Vec<(&'static str, Option<Packing>)>,
    /// One job per GPU (needs as many GPUs as jobs).
    pub exclusive: Packing,
    /// Which search ran.
    pub method: SearchMethod,
    /// GPU configurations scored.
    pub configs_evaluated: u64,
    /// Per job: its profile numbers' origin.
    pub job_origins: Vec<Origin>,
    /// Origin of the sharing parameters.
    pub origin: Origin,
    /// The performance model that scored the packings ([`PerfModel::name`]; the caller may
    /// say more, e.g. which jobs the kernel model's fallback answers).
    pub perf_model: String,
}

/// A pack request that cannot be answered. Fatal for the request.
#[derive(Debug, Error)]
pub enum PackError {
    /// No jobs.
    #[error("no jobs given; write jobs as MODEL:BATCH:IMAGE[@MIN], e.g. resnet50:64:224@0.5")]
    NoJobs,
    /// Too many jobs.
    #[error("{0} jobs given; pack handles at most {MAX_JOBS}")]
    TooManyJobs(usize),
    /// A bad option.
    #[error("{0}")]
    Option(String),
    /// The profile does not know a job.
    #[error("job {job}: {source}")]
    Perf {
        /// The job as written.
        job: String,
        /// What the model said.
        source: Box<PerfError>,
    },
    /// A job does not fit on the GPU even alone.
    #[error(
        "job {job} does not fit on {gpu} even alone: it needs {need_gib:.1} GiB, the GPU holds {have_gib:.1} GiB; lower its batch size"
    )]
    DoesNotFit {
        /// The job.
        job: String,
        /// GPU type.
        gpu: String,
        /// Memory it needs.
        need_gib: f64,
        /// Memory the GPU holds.
        have_gib: f64,
    },
    /// No packing on the allowed GPUs meets every minimum.
    #[error("no packing on {gpus} GPU(s) meets every job's minimum and fits in memory: {why}")]
    Infeasible {
        /// GPUs allowed.
        gpus: u32,
        /// Which jobs are in the way, and the fewest GPUs that would do.
        why: String,
    },
}

/// Searches packings of `request` with `model`.
///
/// # Errors
/// [`PackError`]: no jobs, an unknown model, a job that does not fit alone, or no feasible
/// packing on the GPUs allowed (saying which jobs cannot share).
pub fn pack(model: &dyn PerfModel, request: &PackRequest) -> Result<PackReport, PackError> {
    search::run(model, request, &|_| {})
}

/// [`pack`], calling `progress` (from any thread) as GPU configurations are scored.
///
/// # Errors
/// As [`pack`].
pub fn pack_with_progress(
    model: &dyn PerfModel,
    request: &PackRequest,
    progress: &(dyn Fn(PackProgress) + Sync),
) -> Result<PackReport, PackError> {
    search::run(model, request, progress)
}
