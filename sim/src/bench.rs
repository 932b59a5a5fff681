//! Benchmarks of the engine (`colo bench`): wall time, events/s and peak memory of synthetic
//! replays, of a trace scenario's variants, and of a sweep on 1 and on N threads.
//!
//! Nothing here prints: each finished case is handed to a callback as a [`BenchRow`], and the
//! binary renders them. Every figure is *measured* on the machine that runs it.
//!
//! The anchor and scale cases run each scenario as a whole `colo simulate` process when the
//! binary can start one ([`BenchPlan::process`]), as their targets are stated: `reps` times,
//! the median wall shown with the range, and the child's own peak RSS (its `VmHWM`, which it
//! writes where [`PEAK_FILE_ENV`] says: a child's `ru_maxrss` would include the parent's).
//!
//! In this process, peak memory is the process's `VmHWM` from `/proc/self/status`, reset before each case by
//! writing `5` to `/proc/self/clear_refs` (Linux >= 4.0). Where either is not possible, the
//! row says so: the peak is then unknown, or the process's peak so far. The reset brings the
//! mark down to the memory resident at that moment, which includes heap the allocator kept
//! from earlier cases: run a case alone (`colo bench --case large`) for its own peak.
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use rayon::prelude::*;
use thiserror::Error;

use crate::engine::{Cluster, EngineError, GpuGroup, SimConfig, Simulation, Unplaceable};
use crate::hardware::{self, GpuSpec};
use crate::metrics::{self, RunLabels};
use crate::perf::kernel::Horizon;
use crate::perf::{
    CoRun, KernelModel, Parametric, Partition, PerfModel, ProfileSet, ShareMode, Tenant,
};
use crate::policy::{PlacementRule, Policy, QueueOrder};
use crate::scenario::schema::{PerfModelSpec, VariantSpec};
use crate::scenario::{Outputs, RunOptions, Scenario, ScenarioError, build_variant_with};
use crate::workload::ModelKey;
use crate::workload::synthetic::{self, MixEntry, SyntheticError, SyntheticPlan};

/// One benchmark case; with the `clap` feature it is `colo bench --case` (the `value(help)`
/// lines).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum BenchCase {
    /// 100,000 synthetic jobs on 1,000 H200s, MPS best-fit (issue 2's figure).
    #[cfg_attr(
        feature = "clap",
        value(help = "100,000 synthetic jobs on 1,000 H200s, MPS best-fit")
    )]
    Small,
    /// 1,000,000 synthetic jobs on 10,000 H200s, MPS best-fit (target: <= 5 s, <= 1 GiB).
    #[cfg_attr(
        feature = "clap",
        value(help = "1,000,000 synthetic jobs on 10,000 H200s, MPS best-fit")
    )]
    Large,
    /// Each variant of the Philly trace scenario, one after another (target: < 1 s each), then
    /// its MPS and time-sliced variants with the kernel model (its memo's hit rate).
    #[cfg_attr(
        feature = "clap",
        value(
            help = "The 82k-job Philly trace scenario, each variant (mode) in turn, then its MPS and time-sliced variants with the kernel model (memo hit rate)"
        )
    )]
    Philly,
    /// A sweep of synthetic variants run on 1 thread, then on N (target: efficiency >= 0.8).
    #[cfg_attr(
        feature = "clap",
        value(help = "A 64-variant synthetic sweep on 1 thread, then on --threads")
    )]
    Sweep,
    /// The kernel model: replay time per distinct set of 2, 4 and 7 traced jobs (target:
    /// <= 20 ms for 7), and a synthetic MPS replay that asks it (memo hit rate).
    #[cfg_attr(
        feature = "clap",
        value(
            help = "The kernel model: replay time per distinct set of 2, 4, 7 jobs, and a 20,000-job synthetic MPS replay with it beside the parametric model (memo hit rate)"
        )
    )]
    Kernel,
    /// The Alibaba PAI-2020 simulator's own inputs as colo scenarios (`scenarios/bench`), each
    /// run whole (load, simulate, write) beside the anchor's recorded figures.
    #[cfg_attr(
        feature = "clap",
        value(
            help = "The Alibaba PAI-2020 simulator's inputs (scenarios/bench), each beside the anchor's recorded wall time and the scale targets"
        )
    )]
    Anchors,
    /// How cost grows with jobs: `synthgen_1m.ron` at 10k, 100k and 1M jobs (and on, by
    /// factors of 10, to [`BenchPlan::scale_to`]).
    #[cfg_attr(
        feature = "clap",
        value(
            help = "How cost grows with jobs: synthgen at 10k, 100k, 1M (up to --scale-to) jobs"
        )
    )]
    Scale,
    /// The answers a user waits for, as whole `colo predict` and `colo pack` processes: a pair
    /// with the kernel model (zoo points, and a user's traces read with `--traces`, target
    /// < 0.1 s), with the parametric model, and a 4-job pack with each model.
    #[cfg_attr(
        feature = "clap",
        value(
            help = "colo predict of a pair (kernel, kernel with --traces, parametric) and colo pack of 4 jobs (kernel, parametric), whole processes"
        )
    )]
    Answers,
}

impl BenchCase {
    /// Every case, in the order they run.
    pub const ALL: [BenchCase; 8] = [
        Self::Small,
        Self::Large,
        Self::Philly,
        Self::Sweep,
        Self::Kernel,
        Self::Anchors,
        Self::Scale,
        Self::Answers,
    ];

    /// Default (jobs, GPUs) of a synthetic case; for `Sweep`, of each variant.
    pub fn default_size(self) -> (u32, u32) {
        match self {
            Self::Small => (100_000, 1_000),
            Self::Large => (1_000_000, 10_000),
            Self::Philly | Self::Anchors | Self::Scale | Self::Answers => (0, 0),
            Self::Sweep => (10_000, 100),
            Self::Kernel => (20_000, 200),
        }
    }
}

/// What to run.
#[derive(Clone, Debug)]
pub struct BenchPlan {
    /// Cases, run in this order.
    pub cases: Vec<BenchCase>,
    /// Replaces the jobs of the synthetic cases (and of each sweep variant).
    pub jobs: Option<u32>,
    /// Replaces the GPUs of the synthetic cases (and of each sweep variant).
    pub gpus: Option<u32>,
    /// Threads of the parallel sweep run (>= 1).
    pub threads: usize,
    /// Variants in the sweep.
    pub variants: usize,
    /// The Philly trace scenario (its sweep variants are timed one by one).
    pub philly_scenario: PathBuf,
    /// Reads at most this many trace jobs (for quick checks; default: all).
    pub trace_limit: Option<usize>,
    /// Profiles for the synthetic cases (an H200 profile is needed).
    pub profiles: Arc<ProfileSet>,
    /// The kernel model over `profiles` (its tables loaded), for the kernel case.
    pub kernel: Option<Arc<KernelModel>>,
    /// Folder of the anchor scenarios and their `anchors.csv` (`scenarios/bench`).
    pub anchor_dir: PathBuf,
    /// Anchor scenarios to run by name; empty: every row not marked heavy.
    pub anchors: Vec<String>,
    /// Largest job count of the scale case (10k, 100k, 1M, ... up to this).
    pub scale_to: u64,
    /// Result files the anchor and scale cases write (`colo simulate --outputs`).
    pub outputs: Outputs,
    /// Starts `colo simulate` in a process of its own, for the anchor and scale cases to
    /// time whole processes as their targets are stated (`None`: they run in this process).
    pub process: Option<ProcessRunner>,
    /// Runs of each anchor and scale step in a process of its own (the median is shown).
    pub reps: usize,
    /// A folder of a user's kernel traces for the answers case (`colo predict --traces`).
    pub user_traces: PathBuf,
}

/// Runs `colo` with these arguments (the subcommand first) in a new process and waits for it;
/// an error names what failed (including the child's own error message).
pub type ProcessRunner = fn(&[std::ffi::OsString]) -> std::io::Result<ProcessRun>;

/// One finished `colo simulate` process: its wall time, and its peak resident memory where
/// the OS reports it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProcessRun {
    /// Seconds from its start to its exit.
    pub wall_s: f64,
    /// Its peak resident memory (MiB).
    pub peak_mib: Option<f64>,
}

/// One measured line of the benchmark table.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchRow {
    /// Case and variant, e.g. `philly/mps`.
    pub case: String,
    /// Jobs simulated (all variants together for a sweep).
    pub jobs: u64,
    /// GPUs in the cluster (per variant for a sweep).
    pub gpus: u32,
    /// Threads used.
    pub threads: usize,
    /// Seconds for the whole case: building the jobs, simulating, summarizing (no file writes).
    pub wall_s: f64,
    /// Seconds inside `Simulation::run` (summed over variants for a sweep).
    pub engine_s: f64,
    /// Events the engine handled.
    pub events: u64,
    /// Events per second of engine time.
    pub events_per_s: f64,
    /// Peak resident memory during the case, MiB, when known.
    pub peak_mib: Option<f64>,
    /// What else the row means (peak caveats, parallel efficiency).
    pub note: String,
}

/// The header of [`BenchRow::table_row`]'s columns.
pub fn table_header() -> String {
    format!(
        "{:<58} {:>9} {:>6} {:>3} {:>8} {:>8} {:>10} {:>11} {:>8}  note",
        "case", "jobs", "GPUs", "thr", "wall s", "engine s", "events", "events/s", "peak MiB"
    )
}

/// The header of [`BenchRow::csv_row`]'s columns.
pub const CSV_HEADER: &str =
    "case,jobs,gpus,threads,wall_s,engine_s,events,events_per_s,peak_mib,note";

impl BenchRow {
    /// Appends `part` to the note, after a `; ` where the note already says something.
    fn add_note(&mut self, part: &str) {
        if !self.note.is_empty() && !part.is_empty() {
            self.note.push_str("; ");
        }
        self.note.push_str(part);
    }

    /// Events and events/s as printed: empty for a case that runs no engine (kernel replay:
    /// 0 events), not a measured 0.
    fn event_cells(&self) -> (String, String) {
        if self.events == 0 {
            (String::new(), String::new())
        } else {
            (self.events.to_string(), format!("{:.0}", self.events_per_s))
        }
    }

    /// The row as aligned columns (`colo bench`).
    pub fn table_row(&self) -> String {
        let peak = self
            .peak_mib
            .map_or("n/a".to_owned(), |p| format!("{p:.0}"));
        let (events, per_s) = self.event_cells();
        let or_dash = |cell: String| {
            if cell.is_empty() {
                "-".to_owned()
            } else {
                cell
            }
        };
        format!(
            "{:<58} {:>9} {:>6} {:>3} {:>8.3} {:>8.3} {:>10} {:>11} {:>8}  {}",
            self.case,
            self.jobs,
            self.gpus,
            self.threads,
            self.wall_s,
            self.engine_s,
            or_dash(events),
            or_dash(per_s),
            peak,
            self.note
        )
    }

    /// The row as CSV (`colo bench --format csv`).
    pub fn csv_row(&self) -> String {
        let (events, per_s) = self.event_cells();
        format!(
            "\"{}\",{},{},{},{:.4},{:.4},{},{},{},\"{}\"",
            self.case,
            self.jobs,
            self.gpus,
            self.threads,
            self.wall_s,
            self.engine_s,
            events,
            per_s,
            self.peak_mib.map_or(String::new(), |p| format!("{p:.1}")),
            self.note.replace('"', "\"\"")
        )
    }
}

/// A benchmark could not run. Fatal.
#[derive(Debug, Error)]
pub enum BenchError {
    /// The trace scenario could not be loaded, built or run.
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// A synthetic case failed in the engine.
    #[error("benchmark case `{case}`: {source}")]
    Engine {
        /// The case.
        case: String,
        /// The engine's error.
        source: Box<EngineError>,
    },
    /// A synthetic workload or cluster could not be made (e.g. no H200 profile).
    #[error("benchmark case `{case}`: {why}; pass profiles with an H200 entry")]
    Setup {
        /// The case.
        case: String,
        /// What went wrong.
        why: String,
    },
    /// `anchors.csv` could not be read, or names a scenario it does not hold.
    #[error("{path}: {why}")]
    Anchors {
        /// The file.
        path: PathBuf,
        /// What was wrong, and how to fix it.
        why: String,
    },
    /// A `colo predict` or `colo pack` process of the answers case failed.
    #[error("colo {command}: {why}")]
    Answer {
        /// The command line after `colo`.
        command: String,
        /// What failed.
        why: String,
    },
    /// A `colo simulate` process of an anchor or scale case failed.
    #[error("colo simulate {scenario}: {why}", scenario = scenario.display())]
    Process {
        /// The scenario it ran.
        scenario: PathBuf,
        /// What failed.
        why: String,
    },
    /// The thread pool could not be built.
    #[error("cannot start {threads} worker threads: {why}; try a smaller --threads")]
    Threads {
        /// Threads asked for.
        threads: usize,
        /// What rayon said.
        why: String,
    },
}

/// Runs every case of `plan`, handing each row to `on_row` as soon as it is measured.
pub fn run(plan: &BenchPlan, on_row: &mut dyn FnMut(&BenchRow)) -> Result<(), BenchError> {
    for &case in &plan.cases {
        match case {
            BenchCase::Small | BenchCase::Large => on_row(&synthetic_case(plan, case)?),
            BenchCase::Philly => philly_case(plan, on_row)?,
            BenchCase::Sweep => sweep_case(plan, on_row)?,
            BenchCase::Kernel => kernel_case(plan, on_row)?,
            BenchCase::Anchors => anchors_case(plan, on_row)?,
            BenchCase::Scale => scale_case(plan, on_row)?,
            BenchCase::Answers => answers_case(plan, on_row)?,
        }
    }
    Ok(())
}

fn size(plan: &BenchPlan, case: BenchCase) -> (u32, u32) {
    let (jobs, gpus) = case.default_size();
    (plan.jobs.unwrap_or(jobs), plan.gpus.unwrap_or(gpus).max(1))
}

fn synthetic_case(plan: &BenchPlan, case: BenchCase) -> Result<BenchRow, BenchError> {
    let (jobs, gpus) = size(plan, case);
    let name = format!("synthetic {jobs} jobs on {gpus} GPUs (mps best-fit)");
    let peak = PeakMemory::reset();
    let start = Instant::now();
    let spec = SyntheticRun {
        jobs,
        gpus,
        mode: ShareMode::Mps,
        seed: 42,
        perf: BenchPerf::Parametric,
    };
    let measured = spec.run(plan, &name)?;
    let wall_s = start.elapsed().as_secs_f64();
    Ok(row(name, measured, gpus, 1, wall_s, peak.read()))
}

/// What one simulation measured.
#[derive(Clone, Copy, Debug, Default)]
struct Measured {
    jobs: u64,
    events: u64,
    engine_s: f64,
}

fn row(
    case: String,
    m: Measured,
    gpus: u32,
    threads: usize,
    wall_s: f64,
    peak: (Option<f64>, &'static str),
) -> BenchRow {
    BenchRow {
        case,
        jobs: m.jobs,
        gpus,
        threads,
        wall_s,
        engine_s: m.engine_s,
        events: m.events,
        events_per_s: if m.engine_s > 0.0 {
            m.events as f64 / m.engine_s
        } else {
            0.0
        },
        peak_mib: peak.0,
        note: peak.1.to_owned(),
    }
}

/// One synthetic simulation: the default scenario's model mix, Poisson arrivals at 1.2 jobs
/// per GPU-hour (about one GPU's worth of exclusive work per GPU), FIFO, best-fit.
#[derive(Clone, Copy, Debug)]
struct SyntheticRun {
    jobs: u32,
    gpus: u32,
    mode: ShareMode,
    seed: u64,
    perf: BenchPerf,
}

/// Which model a synthetic run asks.
#[derive(Clone, Copy, Debug)]
enum BenchPerf {
    Parametric,
    Kernel,
}

const MIX: [(&str, f64); 5] = [
    ("resnet18:128:32", 3.0),
    ("resnet50:64:224", 2.0),
    ("vit_b_16:32:224", 1.0),
    ("mobilenet_v3_large:128:224", 1.0),
    ("efficientnet_b0:64:224", 1.0),
];

impl SyntheticRun {
    fn config(&self, plan: &BenchPlan, case: &str) -> Result<SimConfig, BenchError> {
        let setup = |why: String| BenchError::Setup {
            case: case.to_owned(),
            why,
        };
        let gpu: &'static GpuSpec = hardware::gpu("h200").map_err(|e| setup(e.to_string()))?;
        let perf: Arc<dyn PerfModel> = match (&self.perf, &plan.kernel) {
            (BenchPerf::Kernel, Some(k)) => k.clone(),
            (BenchPerf::Kernel, None) => return Err(setup("no kernel model loaded".into())),
            (BenchPerf::Parametric, _) => Arc::new(Parametric::new(plan.profiles.clone())),
        };
        let mut mix = Vec::with_capacity(MIX.len());
        for (text, weight) in MIX {
            let model: ModelKey = text
                .parse()
                .map_err(|e: crate::workload::ModelKeyError| setup(e.to_string()))?;
            let class = perf.class(gpu, &model).map_err(|e| setup(e.to_string()))?;
            mix.push(MixEntry {
                model,
                weight,
                solo_rate: class.solo_rate,
                min_speed: None,
            });
        }
        let synthetic_plan = SyntheticPlan {
            jobs: self.jobs,
            arrivals_per_hour: 1.2 * f64::from(self.gpus),
            median_s: 1800.0,
            sigma: 1.0,
            mix,
            gpus: Vec::new(),
        };
        let jobs = synthetic::generate(&synthetic_plan, self.seed)
            .map_err(|e: SyntheticError| setup(e.to_string()))?;
        let mig_layout = match self.mode {
            ShareMode::Mig => Some(
                gpu.parse_mig_layout("3g.71gb,4g.71gb")
                    .map_err(|e| setup(e.to_string()))?,
            ),
            _ => None,
        };
        Ok(SimConfig {
            cluster: Cluster {
                groups: vec![GpuGroup {
                    gpu,
                    count: self.gpus,
                    mode: self.mode,
                    mig_layout,
                    sm_budget: None,
                    jobs_per_slice: 1,
                    dynamic_mig: None,
                }],
            },
            policy: Policy {
                order: QueueOrder::Fifo,
                backfill: false,
                backfill_depth: 64,
                placement: PlacementRule::BestFit,
                max_jobs_per_gpu: 4,
                preemption: Default::default(),
            },
            jobs,
            source: None,
            perf,
            on_unplaceable: Unplaceable::Error,
            timeline_every_s: 0.0,
            power: Some(plan.profiles.clone()),
        })
    }

    /// Builds, simulates and summarizes; returns what was measured.
    fn run(&self, plan: &BenchPlan, case: &str) -> Result<Measured, BenchError> {
        let config = self.config(plan, case)?;
        simulate(&config, labels(case), case)
    }
}

fn labels(case: &str) -> RunLabels {
    RunLabels {
        scenario: "bench".into(),
        variant: case.to_owned(),
        seed: 42,
        perf_model: "parametric".into(),
        profiles: Vec::new(),
        profile_origin: String::new(),
        cluster: Vec::new(),
        trace: None,
        user_traces: Vec::new(),
    }
}

/// Simulates `config` and computes its summary (as `colo simulate` does, without the files).
fn simulate(config: &SimConfig, labels: RunLabels, case: &str) -> Result<Measured, BenchError> {
    let start = Instant::now();
    let record = Simulation::run(config, None).map_err(|source| BenchError::Engine {
        case: case.to_owned(),
        source: Box::new(source),
    })?;
    let engine_s = start.elapsed().as_secs_f64();
    let jobs = config.all_jobs().map_err(|source| BenchError::Engine {
        case: case.to_owned(),
        source: Box::new(source),
    })?;
    let summary = metrics::summarize(&jobs, &record, labels);
    Ok(Measured {
        jobs: summary.jobs,
        events: record.events,
        engine_s,
    })
}

/// Median, 10th and 90th percentile of `v` (sorted in place).
fn quantiles(v: &mut [f64]) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.1), at(0.9))
}

/// The replay length the bench compares the shipped one against: four times the window.
const REFERENCE_HORIZON: Horizon = Horizon {
    warmup_cycles: 1.0,
    window_cycles: 8.0,
    max_cycles: 16.0,
};

/// Replay time of distinct sets (no memo hit: each set asked once) of 2, 4 and 7 traced jobs
/// under MPS, then a synthetic MPS replay that asks the kernel model, with its memo hit rate.
fn kernel_case(plan: &BenchPlan, on_row: &mut dyn FnMut(&BenchRow)) -> Result<(), BenchError> {
    let setup = |why: String| BenchError::Setup {
        case: "kernel".into(),
        why,
    };
    let kernel = plan
        .kernel
        .clone()
        .ok_or_else(|| setup("no kernel model loaded".into()))?;
    let gpu: &'static GpuSpec = hardware::gpu("h200").map_err(|e| setup(e.to_string()))?;
    let points = kernel.traced_points(gpu);
    let classes: Vec<_> = points
        .iter()
        .filter_map(|k| kernel.class(gpu, k).ok())
        .collect();
    if classes.len() < 7 {
        return Err(setup("fewer than 7 traced points on h200".into()));
    }
    let partition = Partition::whole(gpu);
    for n in [2usize, 4, 7] {
        let sets = 24;
        let mut times = Vec::with_capacity(sets);
        let mut sets_asked = Vec::with_capacity(sets);
        let start = Instant::now();
        for s in 0..sets {
            let tenants: Vec<Tenant<'_>> = (0..n)
                .map(|i| Tenant {
                    class: &classes[(s * 31 + i * 17 + n * 5) % classes.len()],
                    sm_budget: None,
                    gpus: 1,
                })
                .collect();
            let mut out = vec![0.0; n];
            let t = Instant::now();
            kernel.rates(
                &CoRun {
                    gpu,
                    mode: ShareMode::Mps,
                    partition: &partition,
                    tenants: &tenants,
                },
                &mut out,
            );
            times.push(t.elapsed().as_secs_f64() * 1e3);
            sets_asked.push(tenants);
        }
        let wall_s = start.elapsed().as_secs_f64();
        // Truncation: the shipped window against one four times as long (not timed).
        let mut truncation = Vec::new();
        for tenants in &sets_asked {
            let shipped = kernel.fractions_over(gpu, ShareMode::Mps, tenants, Horizon::default());
            let long = kernel.fractions_over(gpu, ShareMode::Mps, tenants, REFERENCE_HORIZON);
            if let (Some(a), Some(b)) = (shipped, long) {
                truncation.extend(a.iter().zip(&b).map(|(a, b)| 100.0 * (a - b).abs() / b));
            }
        }
        let mean_trunc = truncation.iter().sum::<f64>() / truncation.len().max(1) as f64;
        let max_trunc = truncation.iter().copied().fold(0.0, f64::max);
        let (median, p10, p90) = quantiles(&mut times);
        let max = times.last().copied().unwrap_or(0.0);
        on_row(&BenchRow {
            case: format!("kernel replay: {sets} sets of {n} (mps)"),
            jobs: (sets * n) as u64,
            gpus: 1,
            threads: 1,
            wall_s,
            engine_s: wall_s,
            events: 0,
            events_per_s: 0.0,
            peak_mib: None,
            note: format!(
                "per set: median {median:.2} ms; p10-p90 {p10:.2}-{p90:.2} ms; max {max:.2} ms; \
                 truncation vs a 4x window: mean {mean_trunc:.2}%, max {max_trunc:.2}%"
            ),
        });
    }
    let (jobs, gpus) = size(plan, BenchCase::Kernel);
    for perf in [BenchPerf::Parametric, BenchPerf::Kernel] {
        let name = format!("synthetic {jobs} jobs on {gpus} GPUs (mps best-fit; {perf:?})");
        let before = kernel.memo_stats();
        let peak = PeakMemory::reset();
        let start = Instant::now();
        let spec = SyntheticRun {
            jobs,
            gpus,
            mode: ShareMode::Mps,
            seed: 42,
            perf,
        };
        let measured = spec.run(plan, &name)?;
        let wall_s = start.elapsed().as_secs_f64();
        let mut r = row(name, measured, gpus, 1, wall_s, peak.read());
        if let BenchPerf::Kernel = perf {
            let after = kernel.memo_stats();
            let (hits, misses) = (after.0 - before.0, after.1 - before.1);
            r.add_note(&format!(
                "kernel memo: {hits} hits; {misses} distinct sets replayed ({:.2}% hits)",
                100.0 * hits as f64 / (hits + misses).max(1) as f64
            ));
        }
        on_row(&r);
    }
    Ok(())
}

fn philly_case(plan: &BenchPlan, on_row: &mut dyn FnMut(&BenchRow)) -> Result<(), BenchError> {
    let mut scenario = Scenario::load(&plan.philly_scenario)?;
    if let Some(limit) = plan.trace_limit {
        scenario.limit_traces(limit);
    }
    let options = RunOptions::default();
    // Each variant as the scenario has it, then its sharing variants again with the other model
    // of kernel and parametric (issue 14: a large MPS or time-sliced replay leans on the kernel
    // model's memo of set rates; the parametric model is the cheap baseline).
    let mut runs: Vec<(VariantSpec, Option<&str>)> =
        scenario.variants().into_iter().map(|v| (v, None)).collect();
    let (other, other_name) = match scenario.file.perf_model {
        PerfModelSpec::Kernel => (PerfModelSpec::Parametric, "parametric"),
        _ => (PerfModelSpec::Kernel, "kernel"),
    };
    runs.extend(
        scenario
            .variants()
            .into_iter()
            .filter(|v| {
                v.perf_model.is_none()
                    && v.cluster
                        .as_ref()
                        .unwrap_or(&scenario.file.cluster)
                        .iter()
                        .any(|g| matches!(g.mode, ShareMode::Mps | ShareMode::Timeslice))
            })
            .map(|v| {
                (
                    VariantSpec {
                        perf_model: Some(other.clone()),
                        ..v
                    },
                    Some(other_name),
                )
            }),
    );
    for (variant, model) in runs {
        let case = format!(
            "{}/{}{}",
            scenario.file.name,
            variant.name,
            model.map(|m| format!(" ({m} model)")).unwrap_or_default()
        );
        let peak = PeakMemory::reset();
        let start = Instant::now();
        let (config, labels) = build_variant_with(&scenario, &variant, &options)?;
        let measured = simulate(&config, labels, &case)?;
        let wall_s = start.elapsed().as_secs_f64();
        let gpus = config.cluster.gpu_count();
        let mut r = row(case, measured, gpus, 1, wall_s, peak.read());
        if let Some((hits, misses)) = config.perf.memo_lookups() {
            r.add_note(&format!(
                "kernel memo: {hits} hits; {misses} distinct sets replayed ({:.2}% hits)",
                100.0 * hits as f64 / (hits + misses).max(1) as f64
            ));
        }
        on_row(&r);
    }
    Ok(())
}

/// The sweep's variants: the four modes in turn, each with its own seed.
fn sweep_runs(plan: &BenchPlan) -> Vec<SyntheticRun> {
    let (jobs, gpus) = size(plan, BenchCase::Sweep);
    let modes = [
        ShareMode::Exclusive,
        ShareMode::Timeslice,
        ShareMode::Mps,
        ShareMode::Mig,
    ];
    (0..plan.variants)
        .map(|idx| SyntheticRun {
            jobs,
            gpus,
            mode: modes[idx % modes.len()],
            seed: idx as u64,
            perf: BenchPerf::Parametric,
        })
        .collect()
}

/// Runs the sweep on a pool of `threads`; returns (measured totals, wall seconds).
fn timed_sweep(plan: &BenchPlan, threads: usize) -> Result<(Measured, f64), BenchError> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| BenchError::Threads {
            threads,
            why: e.to_string(),
        })?;
    let runs = sweep_runs(plan);
    let start = Instant::now();
    let results: Vec<Result<Measured, BenchError>> = pool.install(|| {
        runs.par_iter()
            .enumerate()
            .map(|(idx, run)| run.run(plan, &format!("sweep variant {idx}")))
            .collect()
    });
    let wall_s = start.elapsed().as_secs_f64();
    let mut total = Measured::default();
    for measured in results {
        let m = measured?;
        total.jobs += m.jobs;
        total.events += m.events;
        total.engine_s += m.engine_s;
    }
    Ok((total, wall_s))
}

fn sweep_case(plan: &BenchPlan, on_row: &mut dyn FnMut(&BenchRow)) -> Result<(), BenchError> {
    let (jobs, gpus) = size(plan, BenchCase::Sweep);
    let threads = plan.threads.max(1);
    let name = |t: usize| {
        format!(
            "sweep {} x {jobs} jobs on {gpus} GPUs ({t} thread{})",
            plan.variants,
            if t == 1 { "" } else { "s" }
        )
    };
    let peak = PeakMemory::reset();
    let (serial, t1) = timed_sweep(plan, 1)?;
    on_row(&row(name(1), serial, gpus, 1, t1, peak.read()));
    let peak = PeakMemory::reset();
    let (parallel, tn) = timed_sweep(plan, threads)?;
    let mut parallel_row = row(name(threads), parallel, gpus, threads, tn, peak.read());
    let efficiency = t1 / (threads as f64 * tn);
    let note = format!("parallel efficiency t1/(N*tN) = {efficiency:.2}");
    let rest = std::mem::replace(&mut parallel_row.note, note);
    parallel_row.add_note(&rest);
    // Events/s of a parallel run: all variants' events over the wall time.
    parallel_row.events_per_s = parallel.events as f64 / tn;
    on_row(&parallel_row);
    Ok(())
}

/// One row of `anchors.csv`: a scenario and the figures recorded when it was prepared
/// (measured outside this bench; see `scenarios/bench/README.md`).
#[derive(Clone, Debug, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Anchor {
    /// Scenario file name without `.ron`.
    pub scenario: String,
    /// Jobs it replays.
    pub jobs: u64,
    /// GPUs of its cluster.
    pub gpus: u32,
    /// The PAI simulator's fastest recorded wall, s.
    pub anchor_wall_low_s: Option<f64>,
    /// Its median wall, s (where given).
    pub anchor_wall_median_s: Option<f64>,
    /// Its slowest recorded wall, s.
    pub anchor_wall_high_s: Option<f64>,
    /// The PAI simulator's peak RSS, MiB.
    pub anchor_peak_mib: Option<f64>,
    /// colo's wall when the inputs were prepared, s.
    pub colo_before_wall_s: Option<f64>,
    /// colo's peak RSS then, MiB.
    pub colo_before_peak_mib: Option<f64>,
    /// The scale issue's wall target, s (none where empty).
    pub target_wall_s: Option<f64>,
    /// Its peak-memory target, MiB.
    pub target_peak_mib: Option<f64>,
    /// `yes`: runs only when named (or with `all`).
    pub heavy: String,
}

impl Anchor {
    /// The anchor's wall a ratio is taken against: its median, else its fastest run.
    fn reference_wall_s(&self) -> Option<f64> {
        self.anchor_wall_median_s.or(self.anchor_wall_low_s)
    }
}

/// Reads `anchors.csv` in `dir`.
pub fn read_anchors(dir: &Path) -> Result<Vec<Anchor>, BenchError> {
    let path = dir.join("anchors.csv");
    let err = |why: String| BenchError::Anchors {
        path: path.clone(),
        why,
    };
    let mut reader = csv::Reader::from_path(&path).map_err(|e| {
        err(format!(
            "{e}; pass the folder of the anchor scenarios with --anchor-dir (scenarios/bench)"
        ))
    })?;
    let mut rows = Vec::new();
    for (idx, row) in reader.deserialize::<Anchor>().enumerate() {
        // Line 1 is the header.
        let row = row.map_err(|e| err(format!("line {}: {e}", idx + 2)))?;
        if row.heavy != "yes" && row.heavy != "no" {
            return Err(err(format!(
                "line {}: field `heavy` is `{}`; write yes or no",
                idx + 2,
                row.heavy
            )));
        }
        rows.push(row);
    }
    Ok(rows)
}

/// The anchors `plan` asks for: by name, `all`, or every row not marked heavy.
fn chosen_anchors(plan: &BenchPlan) -> Result<Vec<Anchor>, BenchError> {
    let rows = read_anchors(&plan.anchor_dir)?;
    if plan.anchors.is_empty() {
        return Ok(rows.into_iter().filter(|a| a.heavy == "no").collect());
    }
    if plan.anchors.iter().any(|n| n == "all") {
        return Ok(rows);
    }
    plan.anchors
        .iter()
        .map(|name| {
            rows.iter()
                .find(|a| &a.scenario == name)
                .cloned()
                .ok_or_else(|| BenchError::Anchors {
                    path: plan.anchor_dir.join("anchors.csv"),
                    why: format!(
                        "no scenario `{name}`; it holds {}",
                        rows.iter()
                            .map(|a| a.scenario.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                })
        })
        .collect()
}

/// What a whole scenario run measured.
struct WholeRun {
    measured: Measured,
    /// The median over the processes (or the one in-process run).
    wall_s: f64,
    peak: (Option<f64>, &'static str),
    /// Processes run, and the lowest and highest wall among them (none: in this process).
    spread: Option<(usize, f64, f64)>,
}

/// Loads, runs and writes `path` (into a scratch folder, removed after), as `colo simulate`
/// does with `outputs`; with at most `trace_limit` trace jobs and, when given, `jobs` synthetic
/// ones: `plan.reps` times in processes of their own when the plan can start them, else once
/// here.
fn run_whole(
    plan: &BenchPlan,
    path: &Path,
    trace_limit: Option<usize>,
    jobs: Option<u32>,
) -> Result<WholeRun, BenchError> {
    let out = std::env::temp_dir().join(format!(
        "colo-bench-{}-{}",
        std::process::id(),
        path.file_stem().unwrap_or_default().to_string_lossy()
    ));
    if let Some(process) = plan.process {
        let run = run_processes(
            process,
            plan.reps,
            path,
            &out,
            trace_limit,
            jobs,
            plan.outputs,
        );
        // Best effort: a scratch folder left behind is harmless.
        let _ = std::fs::remove_dir_all(&out);
        return run;
    }
    let peak = PeakMemory::reset();
    let start = Instant::now();
    let mut scenario = Scenario::load(path)?;
    if let Some(limit) = trace_limit {
        scenario.limit_traces(limit);
    }
    if let Some(jobs) = jobs {
        scenario.set_synthetic_jobs(jobs);
    }
    let options = RunOptions {
        out: Some(out.clone()),
        outputs: plan.outputs,
        ..RunOptions::default()
    };
    let runs = scenario.run(&options, &|_, _, _| {});
    let wall_s = start.elapsed().as_secs_f64();
    let peak = peak.read();
    let _ = std::fs::remove_dir_all(&out);
    let mut measured = Measured::default();
    for run in runs? {
        measured.jobs += run.summary.jobs;
        measured.events += run.summary.events;
    }
    measured.engine_s = wall_s;
    Ok(WholeRun {
        measured,
        wall_s,
        peak,
        spread: None,
    })
}

/// `reps` (at least one) `colo simulate` processes of `path` into `out`: the median wall, the
/// highest peak, and the jobs and events of the last one's summaries.
fn run_processes(
    process: ProcessRunner,
    reps: usize,
    path: &Path,
    out: &Path,
    trace_limit: Option<usize>,
    jobs: Option<u32>,
    outputs: Outputs,
) -> Result<WholeRun, BenchError> {
    let failed = |why: String| BenchError::Process {
        scenario: path.to_owned(),
        why,
    };
    let mut args: Vec<std::ffi::OsString> = vec![
        "simulate".into(),
        path.into(),
        "--out".into(),
        out.into(),
        "--outputs".into(),
        match outputs {
            Outputs::All => "all",
            Outputs::Jobs => "jobs",
            Outputs::Summary => "summary",
        }
        .into(),
    ];
    if let Some(limit) = trace_limit {
        args.extend(["--trace-limit".into(), limit.to_string().into()]);
    }
    if let Some(jobs) = jobs {
        args.extend(["--jobs".into(), jobs.to_string().into()]);
    }
    let mut walls = Vec::new();
    let mut peak: Option<f64> = None;
    let mut peak_known = true;
    for _ in 0..reps.max(1) {
        let run = process(&args).map_err(|e| failed(e.to_string()))?;
        walls.push(run.wall_s);
        match run.peak_mib {
            Some(mib) => peak = Some(peak.map_or(mib, |p| p.max(mib))),
            None => peak_known = false,
        }
    }
    let mut measured = Measured::default();
    for summary in result_summaries(out).map_err(failed)? {
        measured.jobs += summary.jobs;
        measured.events += summary.events;
    }
    walls.sort_by(f64::total_cmp);
    let median = match walls.len() {
        n if n % 2 == 1 => walls[n / 2],
        n => (walls[n / 2 - 1] + walls[n / 2]) / 2.0,
    };
    measured.engine_s = median;
    Ok(WholeRun {
        measured,
        wall_s: median,
        peak: match (peak, peak_known) {
            (Some(mib), true) => (Some(mib), ""),
            _ => (None, "peak: unavailable (no VmHWM in the child process)"),
        },
        spread: Some((walls.len(), walls[0], walls[walls.len() - 1])),
    })
}

/// The summaries of a result folder: its `summary.json`, else each variant folder's.
fn result_summaries(out: &Path) -> Result<Vec<metrics::Summary>, String> {
    let read = |file: &Path| -> Result<metrics::Summary, String> {
        let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", file.display()))
    };
    let top = out.join("summary.json");
    if top.exists() {
        return Ok(vec![read(&top)?]);
    }
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(out)
        .map_err(|e| format!("{}: {e}", out.display()))?
        .filter_map(|entry| entry.ok().map(|e| e.path().join("summary.json")))
        .filter(|file| file.exists())
        .collect();
    dirs.sort();
    dirs.iter().map(|file| read(file)).collect()
}

/// The answers case: each command `reps` times as a whole process; the median wall.
fn answers_case(plan: &BenchPlan, on_row: &mut dyn FnMut(&BenchRow)) -> Result<(), BenchError> {
    let traces = plan.user_traces.to_string_lossy().into_owned();
    let pair = ["resnet50:64:224", "vit_b_16:32:224"];
    let four = [
        "resnet50:64:224@0.5",
        "vit_b_16:32:224@0.4",
        "resnet18:128:32@0.8",
        "mobilenet_v3_large:128:224@0.4",
    ];
    let mut commands: Vec<(&str, Vec<&str>, &str)> = vec![
        (
            "answers/predict pair (kernel)",
            [&["predict"][..], &pair].concat(),
            "",
        ),
        (
            "answers/predict pair (kernel --traces)",
            vec![
                "predict",
                "--traces",
                &traces,
                "hf_gpt2:8:1",
                "resnet50:64:224",
            ],
            "; target < 0.1 s",
        ),
        (
            "answers/predict pair (parametric)",
            [&["predict", "--model", "parametric"][..], &pair].concat(),
            "",
        ),
        (
            "answers/pack 4 jobs (kernel)",
            [&["pack"][..], &four].concat(),
            "",
        ),
        (
            "answers/pack 4 jobs (parametric)",
            [&["pack", "--model", "parametric"][..], &four].concat(),
            "",
        ),
    ];
    let Some(process) = plan.process else {
        for (case, _, _) in commands.drain(..) {
            let mut r = row(case.to_owned(), Measured::default(), 1, 1, 0.0, (None, ""));
            r.note = "not run: it times whole processes (drop --in-process)".into();
            on_row(&r);
        }
        return Ok(());
    };
    for (case, args, target) in commands {
        let args: Vec<std::ffi::OsString> = args.iter().map(Into::into).collect();
        let mut walls = Vec::new();
        for _ in 0..plan.reps.max(1) {
            let run = process(&args).map_err(|e| BenchError::Answer {
                command: args
                    .iter()
                    .map(|a| a.to_string_lossy())
                    .collect::<Vec<_>>()
                    .join(" "),
                why: e.to_string(),
            })?;
            walls.push(run.wall_s);
        }
        walls.sort_by(f64::total_cmp);
        let median = walls[walls.len() / 2];
        let mut r = row(
            case.to_owned(),
            Measured::default(),
            1,
            1,
            median,
            (None, ""),
        );
        r.jobs = if case.contains("pack") { 4 } else { 2 };
        r.note = format!(
            "wall: whole `colo {}` process (median of {}; range {:.3}-{:.3} s){target}",
            args[0].to_string_lossy(),
            walls.len(),
            walls[0],
            walls[walls.len() - 1]
        );
        on_row(&r);
    }
    Ok(())
}

fn anchors_case(plan: &BenchPlan, on_row: &mut dyn FnMut(&BenchRow)) -> Result<(), BenchError> {
    for anchor in chosen_anchors(plan)? {
        let path = plan.anchor_dir.join(format!("{}.ron", anchor.scenario));
        let run = run_whole(plan, &path, plan.trace_limit, plan.jobs)?;
        let mut r = row(
            format!("anchor {}", anchor.scenario),
            run.measured,
            anchor.gpus,
            1,
            run.wall_s,
            run.peak,
        );
        r.events_per_s = run.measured.events as f64 / run.wall_s.max(1e-9);
        r.note = anchor_note(
            &anchor,
            &run,
            plan.trace_limit.is_some() || plan.jobs.is_some(),
            plan.outputs,
        );
        on_row(&r);
    }
    Ok(())
}

/// What a whole run's wall time covers.
fn wall_note(outputs: Outputs, run: &WholeRun) -> String {
    let files = match outputs {
        Outputs::All => "",
        Outputs::Jobs => " (jobs.csv and summary.json only)",
        Outputs::Summary => " (summary.json only)",
    };
    match run.spread {
        Some((n, low, high)) => format!(
            "wall: whole `colo simulate` process{files} (median of {n}; range {low:.3}-{high:.3} s)"
        ),
        None => format!("wall: load + simulate + write{files} in this process"),
    }
}

/// The measured figures beside the recorded ones.
fn anchor_note(anchor: &Anchor, run: &WholeRun, resized: bool, outputs: Outputs) -> String {
    let mut parts = Vec::new();
    if resized {
        parts.push("resized by --trace-limit/--jobs: not comparable with the anchor".to_owned());
    } else if let Some(pai) = anchor.reference_wall_s() {
        parts.push(format!(
            "{:.0}x the PAI simulator ({pai} s recorded)",
            pai / run.wall_s.max(1e-9)
        ));
    }
    if let Some(before) = anchor.colo_before_wall_s {
        parts.push(format!("colo before: {before} s"));
    }
    if let (Some(target), false) = (anchor.target_wall_s, resized) {
        let met = if run.wall_s <= target {
            "met"
        } else {
            "not met"
        };
        parts.push(format!("target <= {target} s: {met}"));
    }
    if let (Some(target), Some(peak), false) = (anchor.target_peak_mib, run.peak.0, resized) {
        let met = if peak <= target { "met" } else { "not met" };
        parts.push(format!("target <= {target} MiB: {met}"));
    }
    if let Some(peak) = run.peak.0 {
        parts.push(format!(
            "{:.0} bytes/job at peak",
            peak * 1048576.0 / run.measured.jobs.max(1) as f64
        ));
    }
    parts.push(wall_note(outputs, run));
    if !run.peak.1.is_empty() {
        parts.push(run.peak.1.to_owned());
    }
    parts.join("; ")
}

/// 10k, 100k, 1M ... jobs, up to `scale_to` (at least one step).
fn scale_steps(scale_to: u64) -> Vec<u32> {
    let mut steps = vec![10_000u32];
    while let Some(next) = steps.last().and_then(|s| s.checked_mul(10)) {
        if u64::from(next) > scale_to {
            break;
        }
        steps.push(next);
    }
    steps
}

fn scale_case(plan: &BenchPlan, on_row: &mut dyn FnMut(&BenchRow)) -> Result<(), BenchError> {
    let path = plan.anchor_dir.join("synthgen_1m.ron");
    let mut before: Option<(u32, f64)> = None;
    let steps = match plan.jobs {
        Some(jobs) => vec![jobs],
        None => scale_steps(plan.scale_to),
    };
    for jobs in steps {
        let run = run_whole(plan, &path, None, Some(jobs))?;
        let mut r = row(
            format!("scale: synthgen {jobs} jobs"),
            run.measured,
            6500,
            1,
            run.wall_s,
            run.peak,
        );
        r.events_per_s = run.measured.events as f64 / run.wall_s.max(1e-9);
        let mut note = vec![format!(
            "{:.0} ns/job",
            run.wall_s * 1e9 / f64::from(jobs.max(1))
        )];
        if let Some(peak) = run.peak.0 {
            note.push(format!(
                "{:.0} bytes/job at peak",
                peak * 1048576.0 / f64::from(jobs.max(1))
            ));
        }
        if let Some((jobs0, wall0)) = before {
            // Cost ~ jobs^k between consecutive steps.
            let k = (run.wall_s / wall0).ln() / (f64::from(jobs) / f64::from(jobs0)).ln();
            note.push(format!("wall grows as jobs^{k:.2} from the step before"));
        }
        note.push(wall_note(plan.outputs, &run));
        if !run.peak.1.is_empty() {
            note.push(run.peak.1.to_owned());
        }
        r.note = note.join("; ");
        before = Some((jobs, run.wall_s));
        on_row(&r);
    }
    Ok(())
}

/// The process's peak resident memory, reset at the start of a case when Linux allows it.
struct PeakMemory {
    was_reset: bool,
}

impl PeakMemory {
    fn reset() -> Self {
        let was_reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
        Self { was_reset }
    }

    /// (peak MiB, caveat): VmHWM, which without a reset is the process's peak so far.
    fn read(&self) -> (Option<f64>, &'static str) {
        match (vm_hwm_mib(), self.was_reset) {
            (Some(mib), true) => (Some(mib), ""),
            (Some(mib), false) => (Some(mib), "peak: process peak so far (reset not possible)"),
            (None, _) => (None, "peak: unavailable (no VmHWM in /proc/self/status)"),
        }
    }
}

/// The environment variable that makes `colo simulate` write its own peak resident memory
/// (MiB, from `VmHWM`) into the file it names, for [`ProcessRunner`]s.
pub const PEAK_FILE_ENV: &str = "COLO_BENCH_PEAK_FILE";

/// `VmHWM` of /proc/self/status in MiB, if the system has it.
pub fn vm_hwm_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    parse_vm_hwm(&status)
}

fn parse_vm_hwm(status: &str) -> Option<f64> {
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_steps_go_by_tens_up_to_the_limit() {
        assert_eq!(scale_steps(1_000_000), vec![10_000, 100_000, 1_000_000]);
        assert_eq!(scale_steps(5_000_000), vec![10_000, 100_000, 1_000_000]);
        assert_eq!(scale_steps(1), vec![10_000]);
        assert_eq!(scale_steps(u64::MAX).last(), Some(&1_000_000_000));
    }

    #[test]
    fn the_shipped_anchors_table_reads_and_names_its_scenarios() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/bench");
        let rows = read_anchors(&dir).unwrap();
        assert!(rows.len() >= 8, "{rows:?}");
        for a in &rows {
            assert!(dir.join(format!("{}.ron", a.scenario)).is_file(), "{a:?}");
        }
        let s20k = rows.iter().find(|a| a.scenario == "s20k_fifo").unwrap();
        assert_eq!(s20k.reference_wall_s(), Some(35.6));
        let sjf = rows.iter().find(|a| a.scenario == "s20k_sjf").unwrap();
        assert_eq!(
            sjf.reference_wall_s(),
            Some(33.0),
            "no median: the fastest run"
        );
    }

    #[test]
    fn a_bad_anchors_table_names_its_line_and_field() {
        let dir = std::env::temp_dir().join(format!("colo-anchors-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let header = "scenario,jobs,gpus,anchor_wall_low_s,anchor_wall_median_s,anchor_wall_high_s,anchor_peak_mib,colo_before_wall_s,colo_before_peak_mib,target_wall_s,target_peak_mib,heavy";
        std::fs::write(
            dir.join("anchors.csv"),
            format!("{header}\na,1,1,,,,,,,,,no\nb,1,1,,,,,,,,,maybe\n"),
        )
        .unwrap();
        let err = read_anchors(&dir).unwrap_err().to_string();
        assert!(err.contains("line 3") && err.contains("heavy"), "{err}");
        std::fs::write(
            dir.join("anchors.csv"),
            format!("{header}\na,x,1,,,,,,,,,no\n"),
        )
        .unwrap();
        let err = read_anchors(&dir).unwrap_err().to_string();
        assert!(err.contains("line 2"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn rows_align_under_their_header_and_quote_csv() {
        let row = BenchRow {
            case: "small".into(),
            jobs: 1000,
            gpus: 100,
            threads: 1,
            wall_s: 1.5,
            engine_s: 1.25,
            events: 4000,
            events_per_s: 3200.0,
            peak_mib: None,
            note: "a \"note\"".into(),
        };
        assert_eq!(
            row.table_row().find("1000"),
            table_header().find(" jobs").map(|i| i + 1)
        );
        assert!(row.table_row().ends_with("  n/a  a \"note\""));
        assert_eq!(
            row.csv_row(),
            "\"small\",1000,100,1,1.5000,1.2500,4000,3200,,\"a \"\"note\"\"\""
        );
        assert_eq!(
            CSV_HEADER.split(',').count(),
            row.csv_row().split(',').count()
        );
        // A case that runs no engine (kernel replay) has no events to count: empty cells,
        // not a measured 0; a note added to an empty one starts with no separator.
        let mut replay = BenchRow {
            events: 0,
            events_per_s: 0.0,
            note: String::new(),
            ..row
        };
        replay.add_note("per set");
        assert_eq!(
            replay.csv_row(),
            "\"small\",1000,100,1,1.5000,1.2500,,,,\"per set\""
        );
        replay.add_note("memo");
        assert_eq!(replay.note, "per set; memo");
        assert!(replay.table_row().contains(" - "), "{}", replay.table_row());
    }

    #[test]
    fn vm_hwm_is_read_in_mib() {
        let status = "Name:\tcolo\nVmPeak:\t  20000 kB\nVmHWM:\t    2048 kB\nVmRSS:\t 1024 kB\n";
        assert_eq!(parse_vm_hwm(status), Some(2.0));
        assert_eq!(parse_vm_hwm("Name:\tcolo\n"), None);
    }

    #[test]
    fn sweep_cycles_through_the_four_modes_with_distinct_seeds() {
        let plan = BenchPlan {
            cases: vec![BenchCase::Sweep],
            jobs: Some(10),
            gpus: Some(2),
            threads: 2,
            variants: 6,
            philly_scenario: PathBuf::new(),
            trace_limit: None,
            profiles: Arc::new(ProfileSet::default()),
            kernel: None,
            anchor_dir: PathBuf::new(),
            anchors: Vec::new(),
            scale_to: 1_000_000,
            outputs: Outputs::All,
            process: None,
            reps: 1,
            user_traces: PathBuf::new(),
        };
        let runs = sweep_runs(&plan);
        assert_eq!(runs.len(), 6);
        assert_eq!(runs[4].mode, ShareMode::Exclusive);
        assert_eq!(runs[3].mode, ShareMode::Mig);
        assert!(runs.iter().all(|r| r.jobs == 10 && r.gpus == 2));
        assert_ne!(runs[0].seed, runs[4].seed);
    }
}
