//! Benchmarks of the engine (`colo bench`): wall time, events/s and peak memory of synthetic
//! replays, of a trace scenario's variants, and of a sweep on 1 and on N threads.
//!
//! Nothing here prints: each finished case is handed to a callback as a [`BenchRow`], and the
//! binary renders them. Every figure is *measured* on the machine that runs it.
//!
//! Peak memory is the process's `VmHWM` from `/proc/self/status`, reset before each case by
//! writing `5` to `/proc/self/clear_refs` (Linux >= 4.0). Where either is not possible, the
//! row says so: the peak is then unknown, or the process's peak so far. The reset brings the
//! mark down to the memory resident at that moment, which includes heap the allocator kept
//! from earlier cases: run a case alone (`colo bench --case large`) for its own peak.
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use rayon::prelude::*;
use thiserror::Error;

use crate::engine::{Cluster, EngineError, GpuGroup, SimConfig, Simulation, Unplaceable};
use crate::hardware::{self, GpuSpec};
use crate::metrics::{self, RunLabels};
use crate::perf::kernel::Horizon;
use crate::perf::{KernelModel, Parametric, Partition, PerfModel, ProfileSet, ShareMode, Tenant};
use crate::policy::{PlacementRule, Policy, QueueOrder};
use crate::scenario::{RunOptions, Scenario, ScenarioError, build_variant_with};
use crate::workload::ModelKey;
use crate::workload::synthetic::{self, MixEntry, SyntheticError, SyntheticPlan};

/// One benchmark case.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BenchCase {
    /// 100,000 synthetic jobs on 1,000 H200s, MPS best-fit (issue 2's figure).
    Small,
    /// 1,000,000 synthetic jobs on 10,000 H200s, MPS best-fit (target: <= 5 s, <= 1 GiB).
    Large,
    /// Each variant of the Philly trace scenario, one after another (target: < 1 s each).
    Philly,
    /// A sweep of synthetic variants run on 1 thread, then on N (target: efficiency >= 0.8).
    Sweep,
    /// The kernel model: replay time per distinct set of 2, 4 and 7 traced jobs (target:
    /// <= 20 ms for 7), and a synthetic MPS replay that asks it (memo hit rate).
    Kernel,
}

impl BenchCase {
    /// Every case, in the order they run.
    pub const ALL: [BenchCase; 5] = [
        Self::Small,
        Self::Large,
        Self::Philly,
        Self::Sweep,
        Self::Kernel,
    ];

    /// Default (jobs, GPUs) of a synthetic case; for `Sweep`, of each variant.
    pub fn default_size(self) -> (u32, u32) {
        match self {
            Self::Small => (100_000, 1_000),
            Self::Large => (1_000_000, 10_000),
            Self::Philly => (0, 0),
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
            perf,
            on_unplaceable: Unplaceable::Error,
            timeline_every_s: 0.0,
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
    let summary = metrics::summarize(&config.jobs, &record, labels);
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
            kernel.rates(gpu, ShareMode::Mps, &partition, &tenants, &mut out);
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
            r.note = format!(
                "{}; kernel memo: {hits} hits; {misses} distinct sets replayed ({:.2}% hits)",
                r.note,
                100.0 * hits as f64 / (hits + misses).max(1) as f64
            );
        }
        on_row(&r);
    }
    Ok(())
}

fn philly_case(plan: &BenchPlan, on_row: &mut dyn FnMut(&BenchRow)) -> Result<(), BenchError> {
    let mut scenario = Scenario::load(&plan.philly_scenario)?;
    if let Some(limit) = plan.trace_limit {
        limit_traces(&mut scenario, limit);
    }
    let options = RunOptions::default();
    for variant in scenario.variants() {
        let case = format!("{}/{}", scenario.file.name, variant.name);
        let peak = PeakMemory::reset();
        let start = Instant::now();
        let (config, labels) = build_variant_with(&scenario, &variant, &options)?;
        let measured = simulate(&config, labels, &case)?;
        let wall_s = start.elapsed().as_secs_f64();
        let gpus = config.cluster.gpu_count();
        on_row(&row(case, measured, gpus, 1, wall_s, peak.read()));
    }
    Ok(())
}

/// Caps every trace workload of the scenario (top level and variants) at `limit` jobs.
fn limit_traces(scenario: &mut Scenario, limit: usize) {
    use crate::scenario::schema::WorkloadSpec;
    let cap = |w: &mut WorkloadSpec| {
        if let WorkloadSpec::Trace(spec) = w {
            spec.limit = Some(spec.limit.map_or(limit, |l| l.min(limit)));
        }
    };
    cap(&mut scenario.file.workload);
    for variant in &mut scenario.file.sweep {
        if let Some(w) = variant.workload.as_mut() {
            cap(w);
        }
    }
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
    parallel_row.note = if parallel_row.note.is_empty() {
        note
    } else {
        format!("{note}; {}", parallel_row.note)
    };
    // Events/s of a parallel run: all variants' events over the wall time.
    parallel_row.events_per_s = parallel.events as f64 / tn;
    on_row(&parallel_row);
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

/// `VmHWM` of /proc/self/status in MiB, if the system has it.
fn vm_hwm_mib() -> Option<f64> {
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
        };
        let runs = sweep_runs(&plan);
        assert_eq!(runs.len(), 6);
        assert_eq!(runs[4].mode, ShareMode::Exclusive);
        assert_eq!(runs[3].mode, ShareMode::Mig);
        assert!(runs.iter().all(|r| r.jobs == 10 && r.gpus == 2));
        assert_ne!(runs[0].seed, runs[4].seed);
    }
}
