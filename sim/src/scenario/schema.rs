//! The scenario file's types, exactly as written in RON. Separate from the engine's types and
//! converted by hand in `build.rs`, but for the sharing mode: [`ShareMode`] is read as written
//! (`mode: Mps`). Every field is documented in scenarios/README.md.
use std::collections::BTreeMap;

use serde::Deserialize;

pub use crate::perf::ShareMode;

/// A scenario file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    /// Name: a plain name (no path separator, not `.` or `..`); results go to
    /// `results/<name>/` unless `output` says otherwise.
    pub name: String,
    /// What the scenario shows (free text).
    #[serde(default)]
    pub description: String,
    /// Seed of the workload generator.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Profile files, relative to the scenario file.
    pub profiles: Vec<String>,
    /// Performance model [default: Kernel, falling back to Parametric for untraced points].
    #[serde(default)]
    pub perf_model: PerfModelSpec,
    /// Folders of a user's kernel traces (`colo calibrate trace --cmd ... --out DIR`), relative
    /// to the scenario file: their points are predicted by `perf_model: Kernel` with the
    /// profile's globals, no refit.
    #[serde(default)]
    pub traces: Vec<String>,
    /// GPU groups.
    pub cluster: Vec<GroupSpec>,
    /// The jobs.
    pub workload: WorkloadSpec,
    /// Queue order and placement.
    #[serde(default)]
    pub policy: PolicySpec,
    /// Result folder, relative to the working directory.
    #[serde(default)]
    pub output: Option<String>,
    /// Jobs that fit nowhere: `Error` (default) or `Skip`.
    #[serde(default)]
    pub on_unplaceable: UnplaceableSpec,
    /// Minimum seconds between timeline rows (0: every change; finite, >= 0).
    #[serde(default)]
    pub timeline_every_s: f64,
    /// Variants run side by side; each overrides some top-level fields.
    #[serde(default)]
    pub sweep: Vec<VariantSpec>,
    /// What `colo plan` searches (ignored by `colo simulate`).
    #[serde(default)]
    pub plan: Option<PlanSpec>,
}

fn default_seed() -> u64 {
    42
}

/// One sweep variant: a name and the fields it overrides.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VariantSpec {
    /// Variant name (its result sub-folder).
    pub name: String,
    /// Overrides `seed`.
    #[serde(default)]
    pub seed: Option<u64>,
    /// Overrides `profiles`.
    #[serde(default)]
    pub profiles: Option<Vec<String>>,
    /// Overrides `perf_model`.
    #[serde(default)]
    pub perf_model: Option<PerfModelSpec>,
    /// Overrides `cluster`.
    #[serde(default)]
    pub cluster: Option<Vec<GroupSpec>>,
    /// Overrides `workload`.
    #[serde(default)]
    pub workload: Option<WorkloadSpec>,
    /// Overrides `policy`.
    #[serde(default)]
    pub policy: Option<PolicySpec>,
    /// Overrides `on_unplaceable`.
    #[serde(default)]
    pub on_unplaceable: Option<UnplaceableSpec>,
}

/// Which performance model predicts co-located rates.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub enum PerfModelSpec {
    /// Demand-based model with the profile's sharing parameters.
    Parametric,
    /// Replays each job's alone kernel trace (the profile's `kernel` tables); jobs without a
    /// trace fall back to `Parametric`. The default: the validated model, as `predict` and
    /// `pack` answer.
    #[default]
    Kernel,
    /// Every job as if alone (no interference).
    Exclusive,
    /// Each of n jobs gets 1/n.
    EqualShare,
    /// Each job slowed by 1 + per_corunner (n - 1).
    FixedSlowdown {
        /// Slowdown per co-runner (default 0.15).
        #[serde(default = "default_per_corunner")]
        per_corunner: f64,
    },
}

fn default_per_corunner() -> f64 {
    0.15
}

/// A group of identical GPUs.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroupSpec {
    /// GPU type: a short id of the hardware catalog ([`crate::hardware::catalog`]; `colo
    /// hardware` lists them), or one of its aliases.
    pub gpu: String,
    /// How many (leave out with `from_trace: true`).
    #[serde(default)]
    pub count: u32,
    /// Take the count from the trace's node list: every node GPU that maps to `gpu`.
    #[serde(default)]
    pub from_trace: bool,
    /// Sharing mode.
    pub mode: ShareMode,
    /// MIG layout of each GPU, e.g. "3g.71gb,4g.71gb" or "7x1g.18gb" (mode Mig only).
    #[serde(default)]
    pub mig_layout: Option<String>,
    /// MPS SM budget per job, percent (mode Mps only).
    #[serde(default)]
    pub sm_budget_pct: Option<f64>,
    /// Jobs per MIG slice, sharing it under MPS (mode Mig only; at least 1, default 1).
    #[serde(default)]
    pub jobs_per_slice: Option<u32>,
    /// Dynamic MIG (mode Mig only): layouts an idle GPU may be re-cut to, e.g. ["7x1g.18gb",
    /// "3g.71gb,4g.71gb"]; empty: the layout is static.
    #[serde(default)]
    pub dynamic_layouts: Vec<String>,
    /// Seconds a dynamic MIG re-cut takes (default 30).
    #[serde(default)]
    pub reconfigure_s: Option<f64>,
}

fn one() -> u32 {
    1
}

/// Where the jobs come from.
#[derive(Clone, Debug, Deserialize)]
pub enum WorkloadSpec {
    /// An explicit list.
    Jobs(Vec<JobSpec>),
    /// Generated: Poisson arrivals, log-normal durations, a model mix.
    Synthetic(SyntheticSpec),
    /// Replayed from a cluster trace file; see the "Trace workloads" section of
    /// scenarios/README.md.
    Trace(TraceSpec),
}

/// The layout of a trace file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
pub enum TraceFormatSpec {
    /// Microsoft Philly as prepared for Pollux.
    Philly,
    /// Alibaba GPU cluster trace 2023 "openb" (pod list; node list beside it).
    AlibabaOpenb,
    /// Microsoft ITP 2021, one cluster's CSV.
    Itp,
    /// SenseTime Helios / Acme job log.
    Helios,
    /// colo's own CSV: `name,arrival_s,duration_s,gpus`.
    Colo,
    /// Slurm accounting, `sacct --parsable2` output.
    Slurm,
    /// Kubernetes pod history, one pod object per line (JSON Lines).
    Kubernetes,
}

/// A workload replayed from a trace.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceSpec {
    /// Layout of the file.
    pub format: TraceFormatSpec,
    /// The trace file (the pod list for AlibabaOpenb), relative to the scenario file; .gz ok.
    pub path: String,
    /// AlibabaOpenb: the node list, relative to the scenario file (default: beside the pods).
    #[serde(default)]
    pub nodes: Option<String>,
    /// Refuse the first defective row with an error naming its line (default false).
    #[serde(default)]
    pub strict: bool,
    /// Read at most this many jobs, in file order (default: all).
    #[serde(default)]
    pub limit: Option<usize>,
    /// Slurm, Kubernetes: keep jobs that ended in any state, not only COMPLETED / Succeeded
    /// (default false).
    #[serde(default)]
    pub all_states: bool,
    /// Keep jobs arriving in [from, to) hours after the first arrival; arrivals restart at 0.
    #[serde(default)]
    pub window_hours: Option<(f64, f64)>,
    /// Multiplies arrival times (0.5: the same jobs arrive twice as fast). Default 1.
    #[serde(default = "unit_scale")]
    pub arrival_scale: f64,
    /// Multiplies traced durations before they become work. Default 1.
    #[serde(default = "unit_scale")]
    pub duration_scale: f64,
    /// Which model each trace job trains.
    pub models: ModelMapSpec,
    /// GPU type on which a job alone takes exactly its traced duration (default: the first
    /// group's).
    #[serde(default)]
    pub reference_gpu: Option<String>,
    /// AlibabaOpenb: catalog GPU for every node's GPU model (overridden by `node_gpu_map`).
    #[serde(default)]
    pub node_gpu: Option<String>,
    /// AlibabaOpenb: catalog GPU per node GPU model, e.g. {"V100M32": "a100-40gb"}.
    #[serde(default)]
    pub node_gpu_map: BTreeMap<String, String>,
}

fn unit_scale() -> f64 {
    1.0
}

/// How trace jobs (duration and GPU count, no model) get a model.
#[derive(Clone, Debug, Deserialize)]
pub enum ModelMapSpec {
    /// A seeded weighted draw per job.
    Mix(Vec<MixSpec>),
    /// The first rule whose conditions all hold; every job must match one.
    Rules(Vec<RuleSpec>),
}

/// One mapping rule: conditions (all optional) and the model they give.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleSpec {
    /// Matches jobs with at most this many GPUs.
    #[serde(default)]
    pub max_gpus: Option<u32>,
    /// Matches jobs with at least this many GPUs.
    #[serde(default)]
    pub min_gpus: Option<u32>,
    /// Matches jobs whose traced duration is at most this many hours.
    #[serde(default)]
    pub max_hours: Option<f64>,
    /// Matches jobs whose traced duration is more than this many hours.
    #[serde(default)]
    pub min_hours: Option<f64>,
    /// Matches Alibaba GPU-sharing pods (true) or every other job (false).
    #[serde(default)]
    pub gpu_sharing: Option<bool>,
    /// MODEL:BATCH:IMAGE the matching jobs train.
    pub model: String,
    /// Least speed the matching jobs accept, fraction of alone in (0, 1] (LeastSlowdown only).
    #[serde(default)]
    pub min_speed: Option<f64>,
}

/// One job written out.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobSpec {
    /// Name (default: its index).
    #[serde(default)]
    pub name: Option<String>,
    /// MODEL:BATCH:IMAGE, e.g. "resnet50:64:224".
    pub model: String,
    /// Submission time, seconds.
    #[serde(default)]
    pub arrival_s: f64,
    /// Work in samples (or give epochs and dataset_size).
    #[serde(default)]
    pub samples: Option<f64>,
    /// Epochs (with dataset_size).
    #[serde(default)]
    pub epochs: Option<f64>,
    /// Samples per epoch (with epochs).
    #[serde(default)]
    pub dataset_size: Option<f64>,
    /// GPUs (default 1).
    #[serde(default = "one")]
    pub gpus: u32,
    /// Least speed it accepts, fraction of alone in (0, 1] (LeastSlowdown only; default none).
    #[serde(default)]
    pub min_speed: Option<f64>,
}

/// A synthetic workload.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SyntheticSpec {
    /// Number of jobs.
    pub jobs: u32,
    /// Mean arrivals per hour (Poisson process).
    pub arrivals_per_hour: f64,
    /// Median exclusive duration on the reference GPU, minutes.
    pub median_minutes: f64,
    /// Sigma of the log-normal duration (0.0 = all equal).
    #[serde(default = "default_sigma")]
    pub sigma: f64,
    /// Model mix: MODEL:BATCH:IMAGE with weights.
    pub mix: Vec<MixSpec>,
    /// GPUs per job with weights (default: all 1).
    #[serde(default)]
    pub gpus: Vec<GpuCountSpec>,
    /// GPU type durations refer to (default: the first group's).
    #[serde(default)]
    pub reference_gpu: Option<String>,
}

fn default_sigma() -> f64 {
    1.0
}

/// One entry of a model mix.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MixSpec {
    /// MODEL:BATCH:IMAGE.
    pub model: String,
    /// Relative weight.
    #[serde(default = "unit_weight")]
    pub weight: f64,
    /// Least speed its jobs accept, fraction of alone in (0, 1] (LeastSlowdown only).
    #[serde(default)]
    pub min_speed: Option<f64>,
}

/// One entry of a GPU-count distribution.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuCountSpec {
    /// GPUs.
    pub gpus: u32,
    /// Relative weight.
    #[serde(default = "unit_weight")]
    pub weight: f64,
}

fn unit_weight() -> f64 {
    1.0
}

/// Queue order.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum OrderSpec {
    /// First come, first served.
    #[default]
    Fifo,
    /// Shortest exclusive duration first.
    ShortestFirst,
    /// Least attained service (Tiresias), preemptive: levels by GPU-seconds held.
    Las {
        /// Level boundaries, GPU-seconds, strictly increasing, each > 0 (at least one).
        thresholds_gpu_s: Vec<f64>,
    },
    /// Shortest remaining time first, preemptive.
    Srtf,
}

/// Placement rule.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
pub enum PlacementSpec {
    /// Idle GPUs / empty slices only.
    Exclusive,
    /// Lowest-numbered GPU with room.
    FirstFit,
    /// GPU left with the least free memory.
    #[default]
    BestFit,
    /// Least-loaded GPU (or slice): fewest jobs, then most free memory.
    Spread,
    /// Where the performance model predicts the least loss of the set, respecting
    /// minimum speeds.
    LeastSlowdown,
}

/// Scheduling policy.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicySpec {
    /// Queue order (default Fifo).
    #[serde(default)]
    pub order: OrderSpec,
    /// Let later jobs start when the head cannot (default false).
    #[serde(default)]
    pub backfill: bool,
    /// Jobs a backfill pass may pass over (default 64).
    #[serde(default = "default_backfill_depth")]
    pub backfill_depth: usize,
    /// Placement rule (default BestFit).
    #[serde(default)]
    pub placement: PlacementSpec,
    /// Most jobs per GPU under time-slicing or MPS (default 4).
    #[serde(default = "default_max_jobs")]
    pub max_jobs_per_gpu: u32,
    /// Seconds a preempted job holds its GPUs without progress while it checkpoints (Las and
    /// Srtf only; default 0).
    #[serde(default)]
    pub checkpoint_s: f64,
    /// Seconds a resumed job holds its GPUs without progress while it restores (Las and Srtf
    /// only; default 0).
    #[serde(default)]
    pub restore_s: f64,
    /// A job that has held its GPUs less than this since it (re)started is not preempted (Las
    /// and Srtf only; default 0).
    #[serde(default)]
    pub min_run_s: f64,
}

fn default_backfill_depth() -> usize {
    64
}

fn default_max_jobs() -> u32 {
    4
}

impl Default for PolicySpec {
    fn default() -> Self {
        Self {
            order: OrderSpec::default(),
            backfill: false,
            backfill_depth: default_backfill_depth(),
            placement: PlacementSpec::default(),
            max_jobs_per_gpu: default_max_jobs(),
            checkpoint_s: 0.0,
            restore_s: 0.0,
            min_run_s: 0.0,
        }
    }
}

/// What to do with jobs that fit nowhere.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
pub enum UnplaceableSpec {
    /// Stop with an error.
    #[default]
    Error,
    /// Skip and count them.
    Skip,
}

/// What `colo plan` searches: candidate GPU groups, the largest size, and prices.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanSpec {
    /// Candidate groups; plan finds the smallest count of each that meets the target.
    pub candidates: Vec<CandidateSpec>,
    /// Largest cluster tried per candidate.
    pub max_gpus: u32,
    /// Price of one GPU-hour per GPU type, e.g. {"h200": 3.5} (default: none).
    #[serde(default)]
    pub price_per_gpu_hour: BTreeMap<String, f64>,
}

/// One candidate: a GPU group without its count.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CandidateSpec {
    /// Label in tables and figures (default: `<gpu> <mode>`).
    #[serde(default)]
    pub name: Option<String>,
    /// GPU type.
    pub gpu: String,
    /// Sharing mode.
    pub mode: ShareMode,
    /// MIG layout of each GPU (mode Mig only).
    #[serde(default)]
    pub mig_layout: Option<String>,
    /// MPS SM budget per job, percent (mode Mps only).
    #[serde(default)]
    pub sm_budget_pct: Option<f64>,
    /// Jobs per MIG slice (mode Mig only; at least 1, default 1).
    #[serde(default)]
    pub jobs_per_slice: Option<u32>,
    /// Dynamic MIG layouts, as for a cluster group (default: static).
    #[serde(default)]
    pub dynamic_layouts: Vec<String>,
    /// Seconds a dynamic MIG re-cut takes (default 30).
    #[serde(default)]
    pub reconfigure_s: Option<f64>,
}
