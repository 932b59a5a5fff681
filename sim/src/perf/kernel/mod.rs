//! The kernel-level model: each co-located set predicted from its jobs' alone kernel traces
//! (MPS and MIG slices: a fluid replay of the traces together; time-slicing: max-min fair time
//! shares of the traces' GPU time, less a cost per burst). Points without a trace fall back to
//! the parametric model. The algorithm, and the data that chose it, are in the perf README.
pub mod dram;
pub mod raw;
mod replay;
mod table;
mod timeslice;
pub mod transfer;

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

pub use replay::{
    AloneTimeline, Horizon, MAX_JOBS, ReplayJob, ReplayParams, alone_timeline, host_scale, replay,
};
pub use table::{KernelTables, KernelTrace, TABLES_FORMAT, TABLES_VERSION, TablesError};
pub use timeslice::{TimesliceParams, timeslice_shares};

use super::profile::KernelParams;
use super::{
    ClassLookup, CoRun, JobClass, Origin, Parametric, Partition, PerfError, PerfModel, ProfileSet,
    ShareMode, Tenant,
};
use crate::hardware::GpuSpec;
use crate::workload::ModelKey;

/// Whether the replay takes this set: at most [`MAX_JOBS`] tenants (the MPS client limit), and
/// a job spanning GPUs only alone. Other sets go to the fallback, and say so
/// ([`KernelModel::answering`]).
fn replay_takes(tenants: &[Tenant<'_>]) -> bool {
    tenants.len() <= MAX_JOBS && (tenants.len() <= 1 || tenants.iter().all(|t| t.gpus <= 1))
}

/// The global parameters of the kernel model on one GPU, in the replay's units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KernelGlobals {
    /// MPS overlap slowdown per unit of co-runners' SM share.
    pub mps_overlap: f64,
    /// MPS extra host time per launch while sharing, seconds.
    pub mps_launch_s: f64,
    /// Time-slicing GPU time lost per burst, seconds.
    pub timeslice_switch_s: f64,
    /// Time-slicing overhead while two or more jobs keep the GPU busy.
    pub timeslice_overhead: f64,
    /// Kernel time growth with waves on fewer SMs (compute-bound kernels).
    pub wave_exponent: f64,
    /// Bandwidth knee of bandwidth-bound kernels on fewer SMs (see `ReplayParams`).
    pub memory_knee: f64,
    /// How the knee moves with a kernel's waves.
    pub memory_knee_waves: f64,
    /// Host time of an MPS client relative to a plain process.
    pub mps_host_factor: f64,
    /// Slowdown of compute-bound kernels per unit of co-runners' bandwidth draw.
    pub compute_overlap: f64,
    /// DRAM bandwidth running kernels share, fraction of the datasheet peak (0: no stage).
    pub dram_efficiency: f64,
    /// Part of co-runners' mean residual kernel time a time-sliced burst waits (0: none).
    pub timeslice_wait: f64,
    /// Time-slicing: GPU time between a context's back-to-back kernels, seconds (0: none).
    pub timeslice_kernel_gap_s: f64,
}

impl KernelGlobals {
    /// No fitted parameter: the alone-only model (kernels in proportion to their waves).
    pub const ALONE_ONLY: KernelGlobals = KernelGlobals {
        mps_overlap: 0.0,
        mps_launch_s: 0.0,
        timeslice_switch_s: 0.0,
        timeslice_overhead: 0.0,
        wave_exponent: 1.0,
        memory_knee: 0.0,
        memory_knee_waves: 0.0,
        mps_host_factor: 1.0,
        compute_overlap: 0.0,
        dram_efficiency: 0.0,
        timeslice_wait: 0.0,
        timeslice_kernel_gap_s: 0.0,
    };

    /// The profile's parameters.
    pub fn of(params: &KernelParams) -> Self {
        Self {
            mps_overlap: params.mps_overlap,
            mps_launch_s: params.mps_launch_us * 1e-6,
            timeslice_switch_s: params.timeslice_switch_us * 1e-6,
            timeslice_overhead: params.timeslice_overhead,
            wave_exponent: params.wave_exponent,
            memory_knee: params.memory_knee,
            memory_knee_waves: params.memory_knee_waves,
            mps_host_factor: params.mps_host_factor,
            compute_overlap: params.compute_overlap,
            dram_efficiency: params.dram_efficiency,
            timeslice_wait: params.timeslice_wait,
            timeslice_kernel_gap_s: params.timeslice_kernel_gap_us * 1e-6,
        }
    }
}

/// One trace with what the model derives from it once.
#[derive(Debug)]
struct Traced {
    trace: KernelTrace,
    key: ModelKey,
    host_scale: f64,
    dur_scale: f64,
    alone: OnceLock<AloneTimeline>,
    /// Measured, or transferred from another GPU's trace.
    origin: Origin,
}

/// The traces of one GPU type.
#[derive(Debug)]
struct GpuTraces {
    gpu: String,
    sm_count: u32,
    source: String,
    globals: KernelGlobals,
    origin: Origin,
    /// The GPU the traces were taken on, when carried here by `transfer`.
    transferred_from: Option<String>,
    traced: Vec<Traced>,
    /// Datasheet peak DRAM bandwidth of the GPU, bytes/s (0 for a GPU not in the catalog: no
    /// bandwidth stage).
    dram_peak_bytes_per_s: f64,
    /// Its memory, GiB (a MIG slice's bandwidth share is its memory's share).
    memory_gib: f64,
}

impl GpuTraces {
    fn new(tables: KernelTables, globals: KernelGlobals, origin: Origin) -> Self {
        let sm_count = tables.sm_count;
        let trace_origin = match tables.transferred_from {
            Some(_) => Origin::Transferred,
            None => Origin::Measured,
        };
        let traced = tables
            .traces
            .into_iter()
            .filter_map(|trace| {
                let key = trace.key()?;
                Some(Traced {
                    host_scale: trace.host_scale,
                    dur_scale: trace.dur_scale,
                    trace,
                    key,
                    alone: OnceLock::new(),
                    origin: trace_origin,
                })
            })
            .collect();
        let catalog = crate::hardware::gpu(&tables.gpu).ok();
        Self {
            dram_peak_bytes_per_s: catalog.map_or(0.0, |g| g.memory_bandwidth_gbs * 1e9),
            memory_gib: catalog.map_or(0.0, |g| g.memory_gib),
            gpu: tables.gpu,
            sm_count,
            source: tables.source,
            globals,
            origin,
            transferred_from: tables.transferred_from,
            traced,
        }
    }

    /// Share of the GPU's DRAM bandwidth `partition` has: all of it, unless it is a MIG slice
    /// (its memory slices' share, from the catalog's slice memory: never measured here).
    fn dram_share(&self, partition: &Partition) -> f64 {
        if partition.is_mig_slice && self.memory_gib > 0.0 {
            (partition.memory_gib / self.memory_gib).clamp(0.0, 1.0)
        } else {
            1.0
        }
    }

    fn index(&self, key: &ModelKey) -> Option<usize> {
        self.traced.iter().position(|t| &t.key == key)
    }

    /// Replay parameters for a partition of `capacity` holding `dram_share` of the GPU's memory
    /// bandwidth; MPS clients' host time and launch cost when `mps`.
    fn params(&self, capacity: f64, dram_share: f64, mps: bool) -> ReplayParams {
        ReplayParams {
            sm_count: self.sm_count,
            capacity,
            overlap: self.globals.mps_overlap,
            wave_exponent: self.globals.wave_exponent,
            launch_cost_s: if mps { self.globals.mps_launch_s } else { 0.0 },
            memory_knee: self.globals.memory_knee,
            memory_knee_waves: self.globals.memory_knee_waves,
            host_factor: if mps {
                self.globals.mps_host_factor
            } else {
                1.0
            },
            compute_overlap: self.globals.compute_overlap,
            dram_bytes_per_s: self.globals.dram_efficiency * self.dram_peak_bytes_per_s,
            dram_share,
        }
    }

    fn alone(&self, idx: usize) -> &AloneTimeline {
        let t = &self.traced[idx];
        t.alone.get_or_init(|| {
            let probe = AloneTimeline::placeholder();
            let job = self.job(idx, 1.0, &probe);
            alone_timeline(&job, &self.params(1.0, 1.0, false))
        })
    }

    fn job<'a>(&'a self, idx: usize, cap: f64, alone: &'a AloneTimeline) -> ReplayJob<'a> {
        let t = &self.traced[idx];
        ReplayJob {
            trace: &t.trace,
            host_scale: t.host_scale,
            dur_scale: t.dur_scale,
            cap,
            alone,
        }
    }

    /// Fraction of each job's whole-GPU alone speed, for jobs (trace index, SM cap) sharing a
    /// partition of `capacity` in `mode`.
    fn fractions(
        &self,
        mode: ShareMode,
        (capacity, dram_share): (f64, f64),
        jobs: &[(usize, f64)],
        horizon: Horizon,
    ) -> Vec<f64> {
        match mode {
            ShareMode::Timeslice if jobs.len() > 1 => {
                let alone: Vec<&AloneTimeline> = jobs.iter().map(|&(i, _)| self.alone(i)).collect();
                let params = TimesliceParams {
                    switch_s: self.globals.timeslice_switch_s,
                    overhead: self.globals.timeslice_overhead,
                    wait: self.globals.timeslice_wait,
                    kernel_gap_s: self.globals.timeslice_kernel_gap_s,
                };
                timeslice_shares(&alone, params)
            }
            ShareMode::Exclusive | ShareMode::Timeslice if jobs[0].1 >= 1.0 => {
                vec![1.0; jobs.len()]
            }
            _ => {
                let alone: Vec<&AloneTimeline> = jobs.iter().map(|&(i, _)| self.alone(i)).collect();
                let replay_jobs: Vec<ReplayJob<'_>> = jobs
                    .iter()
                    .zip(&alone)
                    .map(|(&(i, cap), a)| self.job(i, cap, a))
                    .collect();
                replay(
                    &replay_jobs,
                    &self.params(capacity, dram_share, mode.is_mps_client()),
                    horizon,
                )
            }
        }
    }
}

/// The globals of `gpu` from its profile's `kernel` section, and their origin; alone-only
/// (provisional) where it has none.
fn globals_of(profiles: &ProfileSet, gpu: &str) -> (KernelGlobals, Origin) {
    profiles
        .profiles()
        .find(|(p, _)| p.gpu.eq_ignore_ascii_case(gpu))
        .and_then(|(p, _)| p.kernel.as_ref())
        .map_or((KernelGlobals::ALONE_ONLY, Origin::Provisional), |k| {
            (KernelGlobals::of(k), k.origin)
        })
}

/// The globals for `tables`: its GPU's own, else, for traces carried from another GPU, that
/// GPU's, else (a source GPU nothing was calibrated on either, as an H100) the calibrated GPU's
/// (both labelled transferred: fitted on co-runs there, not on this GPU).
fn globals_for(profiles: &ProfileSet, tables: &KernelTables) -> (KernelGlobals, Origin) {
    let own = globals_of(profiles, &tables.gpu);
    let Some(from) = &tables.transferred_from else {
        return own;
    };
    if own.1 != Origin::Provisional {
        return own;
    }
    let source = globals_of(profiles, from.split(", ").next().unwrap_or(from));
    if source.1 != Origin::Provisional {
        return (source.0, Origin::Transferred);
    }
    match profiles.calibrated().and_then(|(p, _)| p.kernel.as_ref()) {
        Some(k) => (KernelGlobals::of(k), Origin::Transferred),
        None => own,
    }
}

/// A set as the memo knows it: mode, partition (SMs, bandwidth share) and (trace, budget) per
/// job, in canonical order.
type SetKey = (u8, u64, u64, Vec<(usize, u64)>);

/// Fractions of alone per (GPU index, set).
type Memo = HashMap<(usize, SetKey), Arc<[f64]>>;

/// A job whose GPU is busy less than this fraction of its alone time is launch-bound: its
/// host sets its speed (the calibration's job classes split them so).
pub const LAUNCH_BOUND_BELOW: f64 = 0.6;

/// The kernel-level model over a profile set and the kernel tables of its GPUs.
pub struct KernelModel {
    profiles: Arc<ProfileSet>,
    fallback: Parametric,
    gpus: Vec<GpuTraces>,
    memo: Mutex<Memo>,
    stats: Mutex<(u64, u64)>,
    user_points: std::collections::HashSet<ModelKey>,
    /// Alone speeds the user measured (`anchor`), by GPU name (lowercase) and point: they
    /// replace the profile's, so a rate is the anchored replay's fraction times that speed.
    user_anchors: HashMap<(String, ModelKey), f64>,
    cap_at_alone: bool,
}

impl std::fmt::Debug for KernelModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KernelModel")
            .field(
                "gpus",
                &self.gpus.iter().map(|g| &g.gpu).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl KernelModel {
    /// The model over `profiles`, with the kernel tables given (one per GPU type); each GPU's
    /// globals come from its profile's `kernel` section (alone-only where it has none).
    pub fn with_tables(profiles: Arc<ProfileSet>, tables: Vec<KernelTables>) -> Self {
        let gpus = tables
            .into_iter()
            .map(|t| {
                let (globals, origin) = globals_for(&profiles, &t);
                GpuTraces::new(t, globals, origin)
            })
            .collect();
        Self {
            fallback: Parametric::new(profiles.clone()),
            profiles,
            gpus,
            memo: Mutex::new(HashMap::new()),
            stats: Mutex::new((0, 0)),
            user_points: Default::default(),
            user_anchors: HashMap::new(),
            cap_at_alone: true,
        }
    }

    /// The model over `profiles`, reading each profile's kernel tables from the file its
    /// `kernel.tables` names (relative to the profile).
    pub fn load(profiles: Arc<ProfileSet>) -> Result<Self, TablesError> {
        let mut tables = Vec::new();
        for (profile, path) in profiles.profiles() {
            if let Some(k) = &profile.kernel {
                let dir = path.parent().unwrap_or(Path::new("."));
                tables.push(KernelTables::load(&dir.join(&k.tables))?);
            }
        }
        Ok(Self::with_tables(profiles, tables))
    }

    /// Adds a user's traces (`colo predict --traces DIR`, a scenario's `traces`) to the model:
    /// predicted with the GPU's shipped globals, no refit. A point already traced is replaced.
    /// The class of each added point (alone rate, memory) comes from its trace, measured, even
    /// where the profile has an entry for it. Returns the points added.
    pub fn add_traces(&mut self, tables: KernelTables) -> Vec<ModelKey> {
        let (globals, origin) = globals_for(&self.profiles, &tables);
        let added = GpuTraces::new(tables, globals, origin);
        let keys: Vec<ModelKey> = added.traced.iter().map(|t| t.key.clone()).collect();
        match self
            .gpus
            .iter_mut()
            .find(|g| g.gpu.eq_ignore_ascii_case(&added.gpu))
        {
            Some(g) => {
                g.traced.retain(|t| !keys.contains(&t.key));
                g.traced.extend(added.traced);
                g.source = format!("{}; user traces: {}", g.source, added.source);
            }
            None => self.gpus.push(added),
        }
        self.user_points.extend(keys.iter().cloned());
        self.memo.lock().map(|mut m| m.clear()).unwrap_or(());
        keys
    }

    /// Re-anchors `key`'s trace on `gpu` to an alone speed measured on the GPU asked about
    /// (samples/s): its host time is rescaled so that the alone replay reproduces that speed,
    /// as validation does with the store's alone runs (hosts differ between GPUs of one type:
    /// a host-bound job's alone speed by up to 43%). Returns false when `key` has no trace.
    pub fn anchor(&mut self, gpu: &GpuSpec, key: &ModelKey, samples_per_s: f64) -> bool {
        let Some(g) = self.gpu_index(gpu) else {
            return false;
        };
        let sm_count = self.gpus[g].sm_count.max(1);
        let Some(idx) = self.gpus[g].index(key) else {
            return false;
        };
        let traced = &mut self.gpus[g].traced[idx];
        traced.trace.anchor_samples_per_s = Some(samples_per_s);
        (traced.host_scale, traced.dur_scale) = host_scale(&traced.trace, sm_count);
        (traced.trace.host_scale, traced.trace.dur_scale) = (traced.host_scale, traced.dur_scale);
        traced.alone = OnceLock::new();
        self.user_anchors
            .insert((gpu.name.to_ascii_lowercase(), key.clone()), samples_per_s);
        self.memo.lock().map(|mut m| m.clear()).unwrap_or(());
        true
    }

    /// The fastest `key` can run alone on `gpu` by its trace (samples/s): its kernels back to
    /// back as traced, no host time at all; `None` where it has no trace there. A measured
    /// alone speed far above it is not this point's ([`anchor`](Self::anchor) would have to
    /// shrink the kernels to reach it).
    pub fn kernel_ceiling_samples_per_s(&self, gpu: &GpuSpec, key: &ModelKey) -> Option<f64> {
        let g = &self.gpus[self.gpu_index(gpu)?];
        let trace = &g.traced[g.index(key)?].trace;
        let cycle_s = replay::alone_cycle_s(trace, 0.0, 1.0, g.sm_count.max(1));
        let samples = f64::from(trace.iterations) * f64::from(trace.samples_per_iteration);
        (cycle_s > 0.0).then(|| samples / cycle_s)
    }

    /// The raw replay, a job faster sharing than alone included: what the globals are fitted on
    /// (`calibrate fit`; a fit on the capped answer moved them and made emulated-MIG layouts
    /// worse, 5.0% -> 5.4%). Answers (predict, pack, simulate) cap each job at its alone speed,
    /// and `calibrate validate` scores those answers.
    pub fn uncapped(mut self) -> Self {
        self.cap_at_alone = false;
        self
    }

    /// Whether `key` was added from a user's traces ([`KernelModel::add_traces`]).
    pub fn is_user_traced(&self, key: &ModelKey) -> bool {
        self.user_points.contains(key)
    }

    /// The same traces with other global parameters on `gpu` (for fitting and validation).
    pub fn set_globals(&mut self, gpu: &GpuSpec, globals: KernelGlobals) {
        if let Some(g) = self.gpu_mut(gpu) {
            g.globals = globals;
        }
        self.memo.lock().map(|mut m| m.clear()).unwrap_or(());
    }

    /// A model of only the traces of `anchors`' points on `gpu`, each re-anchored to the alone
    /// speed given (samples/s; `None` keeps the trace's own), with this model's globals.
    pub fn reanchored(&self, gpu: &GpuSpec, anchors: &[(ModelKey, Option<f64>)]) -> Option<Self> {
        let g = &self.gpus[self.gpu_index(gpu)?];
        let mut traces: Vec<KernelTrace> = Vec::with_capacity(anchors.len());
        for (key, rate) in anchors {
            if traces.iter().any(|t| t.key().as_ref() == Some(key)) {
                continue;
            }
            let mut t = g.traced[g.index(key)?].trace.clone();
            if let Some(rate) = *rate {
                t.anchor_samples_per_s = Some(rate);
                (t.host_scale, t.dur_scale) = host_scale(&t, g.sm_count.max(1));
            }
            traces.push(t);
        }
        let tables = KernelTables {
            transferred_from: g.transferred_from.clone(),
            format: TABLES_FORMAT.to_string(),
            version: TABLES_VERSION,
            gpu: g.gpu.clone(),
            sm_count: g.sm_count,
            source: g.source.clone(),
            traces,
        };
        Some(Self {
            fallback: Parametric::new(self.profiles.clone()),
            profiles: self.profiles.clone(),
            gpus: vec![GpuTraces::new(tables, g.globals, g.origin)],
            memo: Mutex::new(HashMap::new()),
            stats: Mutex::new((0, 0)),
            user_points: self.user_points.clone(),
            user_anchors: self.user_anchors.clone(),
            cap_at_alone: self.cap_at_alone,
        })
    }

    fn gpu_mut(&mut self, gpu: &GpuSpec) -> Option<&mut GpuTraces> {
        self.gpus
            .iter_mut()
            .find(|g| g.gpu.eq_ignore_ascii_case(gpu.name))
    }

    fn gpu_index(&self, gpu: &GpuSpec) -> Option<usize> {
        self.gpus
            .iter()
            .position(|g| g.gpu.eq_ignore_ascii_case(gpu.name))
    }

    /// Whether `key` has a trace on `gpu`.
    pub fn is_traced(&self, gpu: &GpuSpec, key: &ModelKey) -> bool {
        self.gpu_index(gpu)
            .is_some_and(|g| self.gpus[g].index(key).is_some())
    }

    /// Fraction of wall time the GPU runs `key`'s kernels in its alone replay on `gpu`, if
    /// traced (below [`LAUNCH_BOUND_BELOW`]: launch-bound, as the calibration's job classes).
    pub fn alone_busy_fraction(&self, gpu: &GpuSpec, key: &ModelKey) -> Option<f64> {
        let g = self.gpu_index(gpu)?;
        let idx = self.gpus[g].index(key)?;
        Some(self.gpus[g].alone(idx).busy_fraction())
    }

    /// Traced points on `gpu`.
    pub fn traced_points(&self, gpu: &GpuSpec) -> Vec<ModelKey> {
        self.gpu_index(gpu).map_or_else(Vec::new, |g| {
            self.gpus[g].traced.iter().map(|t| t.key.clone()).collect()
        })
    }

    /// How the traces of `gpu` were taken, if it has any.
    pub fn source(&self, gpu: &GpuSpec) -> Option<&str> {
        self.gpu_index(gpu).map(|g| self.gpus[g].source.as_str())
    }

    /// Memo lookups so far: (hits, misses).
    pub fn memo_stats(&self) -> (u64, u64) {
        self.stats.lock().map_or((0, 0), |s| *s)
    }

    /// Which model answers for this set: `kernel` when the replay takes it (every tenant
    /// traced, at most [`MAX_JOBS`] of them, none spanning GPUs unless alone), else the
    /// fallback's name: [`PerfModel::rates`] uses the fallback for exactly these sets.
    pub fn answering(&self, gpu: &GpuSpec, tenants: &[Tenant<'_>]) -> &'static str {
        if self.trace_indices(gpu, tenants).is_some() && replay_takes(tenants) {
            self.name()
        } else {
            self.fallback.name()
        }
    }

    /// Fractions of whole-GPU alone speed for a set of whole-GPU MPS or time-sliced tenants (no
    /// budgets), replayed over `horizon` without the memo: for measuring how the replay's
    /// length changes its answer. `None` when a tenant has no trace.
    pub fn fractions_over(
        &self,
        gpu: &GpuSpec,
        mode: ShareMode,
        tenants: &[Tenant<'_>],
        horizon: Horizon,
    ) -> Option<Vec<f64>> {
        let (g, idx) = self.trace_indices(gpu, tenants)?;
        let jobs: Vec<(usize, f64)> = idx.into_iter().map(|i| (i, 1.0)).collect();
        Some(self.gpus[g].fractions(mode, (1.0, 1.0), &jobs, horizon))
    }

    fn trace_indices(&self, gpu: &GpuSpec, tenants: &[Tenant<'_>]) -> Option<(usize, Vec<usize>)> {
        let g = self.gpu_index(gpu)?;
        let idx = tenants
            .iter()
            .map(|t| self.gpus[g].index(&t.class.key))
            .collect::<Option<Vec<_>>>()?;
        Some((g, idx))
    }

    /// Fractions of whole-GPU alone speed for the set, memoized per distinct set.
    fn memo_fractions(
        &self,
        g: usize,
        mode: ShareMode,
        partition: &Partition,
        jobs: Vec<(usize, f64)>,
    ) -> Vec<f64> {
        let mut order: Vec<usize> = (0..jobs.len()).collect();
        order.sort_by(|&a, &b| {
            jobs[a]
                .0
                .cmp(&jobs[b].0)
                .then(jobs[a].1.total_cmp(&jobs[b].1))
        });
        let canonical: Vec<(usize, f64)> = order.iter().map(|&i| jobs[i]).collect();
        let dram_share = self.gpus[g].dram_share(partition);
        let key: SetKey = (
            mode as u8,
            partition.sm_fraction.to_bits(),
            dram_share.to_bits(),
            canonical.iter().map(|&(i, c)| (i, c.to_bits())).collect(),
        );
        let cached = self
            .memo
            .lock()
            .ok()
            .and_then(|m| m.get(&(g, key.clone())).cloned());
        let fractions = match cached {
            Some(f) => {
                self.count(true);
                f
            }
            None => {
                self.count(false);
                let f: Arc<[f64]> = self.gpus[g]
                    .fractions(
                        mode,
                        (partition.sm_fraction, dram_share),
                        &canonical,
                        Horizon::default(),
                    )
                    .into();
                if let Ok(mut m) = self.memo.lock() {
                    m.insert((g, key), f.clone());
                }
                f
            }
        };
        let mut out = vec![0.0; jobs.len()];
        for (pos, &i) in order.iter().enumerate() {
            out[i] = fractions[pos];
        }
        out
    }

    fn count(&self, hit: bool) {
        if let Ok(mut s) = self.stats.lock() {
            if hit {
                s.0 += 1;
            } else {
                s.1 += 1;
            }
        }
    }

    /// The job class of a traced point the profile has no entry for, from its trace alone:
    /// solo rate and memory measured in the tracing process.
    fn class_from_trace(&self, gpu: &GpuSpec, key: &ModelKey) -> Option<JobClass> {
        let g = self.gpu_index(gpu)?;
        let idx = self.gpus[g].index(key)?;
        let traced = &self.gpus[g].traced[idx];
        let t = &traced.trace;
        let alone = self.gpus[g].alone(idx);
        let busy = alone.busy_fraction().clamp(0.0, 1.0);
        Some(JobClass {
            key: key.clone(),
            solo_rate: t.alone_samples_per_s(),
            time_demand: busy,
            space_demand: 1.0,
            contention_demand: 1.0,
            memory_gib: t.peak_reserved_mib / 1024.0,
            spread: None,
            origin: traced.origin,
        })
    }
}

impl PerfModel for KernelModel {
    fn name(&self) -> &'static str {
        if self.cap_at_alone {
            "kernel"
        } else {
            "kernel-raw"
        }
    }

    fn memo_lookups(&self) -> Option<(u64, u64)> {
        Some(self.memo_stats())
    }

    fn lookup(&self) -> &dyn ClassLookup {
        &*self.profiles
    }

    // A traced job missing from the profile still has a class: from its trace (anchored, when
    // the user gave an alone speed). A profiled job whose alone speed the user measured takes
    // that speed instead of the profile's: its replay was anchored to it.
    fn class(&self, gpu: &GpuSpec, key: &ModelKey) -> Result<JobClass, PerfError> {
        if self.user_points.contains(key)
            && let Some(class) = self.class_from_trace(gpu, key)
        {
            return Ok(class);
        }
        match self.profiles.class(gpu, key) {
            Ok(mut class) => {
                if let Some(&rate) = self
                    .user_anchors
                    .get(&(gpu.name.to_ascii_lowercase(), key.clone()))
                {
                    class.solo_rate = rate;
                    class.origin = Origin::Measured;
                    class.spread = None;
                }
                Ok(class)
            }
            Err(err) => self.class_from_trace(gpu, key).ok_or(err),
        }
    }

    fn mode_origin(&self, gpu: &GpuSpec, mode: ShareMode) -> Origin {
        match self.gpu_index(gpu) {
            // MIG is never run here: its globals were fitted on MPS SM budgets standing in for
            // the slices, so MIG answers are emulated, as the profile's MIG parameters are.
            Some(g) if mode == ShareMode::Mig && self.gpus[g].origin == Origin::Fitted => {
                Origin::Emulated
            }
            Some(g) if mode != ShareMode::Exclusive => self.gpus[g].origin,
            _ => self.profiles.mode_origin(gpu, mode),
        }
    }

    fn rates(&self, set: &CoRun<'_>, out: &mut [f64]) {
        let (gpu, mode, partition, tenants) = (set.gpu, set.mode, set.partition, set.tenants);
        let Some((g, idx)) = self.trace_indices(gpu, tenants) else {
            return self.fallback.rates(set, out);
        };
        if !replay_takes(tenants) {
            return self.fallback.rates(set, out);
        }
        // Alone on a whole GPU without an SM budget a job runs at its alone rate in any mode:
        // the MPS globals are fitted on co-runs, and no measurement shows a lone MPS client
        // faster (the host factor < 1 would make it so). The raw replay (`uncapped`) replays a
        // lone MPS client too, so that a run of one can test that.
        if let [t] = tenants
            && (self.cap_at_alone || !mode.is_mps_client())
            && !partition.is_mig_slice
            && t.sm_budget.is_none_or(|b| b >= 1.0)
        {
            out[0] = t.class.solo_rate * f64::from(t.gpus);
            return;
        }
        // Each job's SMs: its partition's, or fewer under an MPS budget (whole TPCs, as the
        // driver gives them); as a fraction of the GPU, an exact multiple of one SM.
        let sms = f64::from(gpu.sms);
        let partition_sms = (partition.sm_fraction * sms).round();
        let jobs: Vec<(usize, f64)> = tenants
            .iter()
            .zip(&idx)
            .map(|(t, &i)| {
                let held = match t.sm_budget {
                    Some(b) if mode.is_mps_client() && b < 1.0 => {
                        f64::from(gpu.mps_client_sms(b)).min(partition_sms)
                    }
                    _ => partition_sms,
                };
                (i, held / sms)
            })
            .collect();
        let fractions = self.memo_fractions(g, mode, partition, jobs);
        let efficiency = match self.profiles.get(gpu) {
            Ok((p, _)) if partition.is_mig_slice => p.mig.efficiency,
            _ => 1.0,
        };
        // Sharing never makes a job faster than alone: the MPS host factor (< 1, fitted on
        // co-runs of GPU-heavy jobs) would otherwise speed up a host-bound job (bert_mlm:32:1,
        // 32 ms of CPU per 32 ms step, at 1.06 of alone beside a ResNet-50), and a lone client
        // under an SM budget (resnet18:128:32 at 50%: 1.07); no measurement shows either.
        for ((o, t), f) in out.iter_mut().zip(tenants).zip(fractions) {
            let f = if self.cap_at_alone { f.min(1.0) } else { f };
            *o = t.class.solo_rate * f64::from(t.gpus) * f * efficiency;
        }
    }
}

#[cfg(test)]
mod tests;
