//! Building a [`Simulation`] from a [`SimConfig`]: resolve every job's class once, check that
//! each job fits somewhere, lay out GPUs and partitions.
use std::collections::{BTreeSet, BinaryHeap, HashMap};
use std::sync::Arc;

use thiserror::Error;

use super::{Arrivals, GpuState, GroupState, Kind, PartState, Simulation};
use crate::hardware::{GpuSpec, MigLayout, MigSlice};
use crate::perf::{
    CoRun, JobClass, Partition, PerfError, PerfModel, ProfileSet, ShareMode, Tenant,
};
use crate::policy::{ClusterView, GroupKind, PlacementRule, Policy, QueueOrder, SlotRef};
use crate::workload::stream::{JobSource, SourceError};
use crate::workload::{Job, MinSpeed, ModelKey};

/// A set of identical GPUs shared in one mode.
#[derive(Clone, Debug)]
pub struct GpuGroup {
    /// GPU type.
    pub gpu: &'static GpuSpec,
    /// Number of GPUs.
    pub count: u32,
    /// How jobs share each GPU.
    pub mode: ShareMode,
    /// MIG layout of every GPU (mode `Mig` only).
    pub mig_layout: Option<MigLayout>,
    /// MPS SM budget given to every job (fraction of SMs), if any.
    pub sm_budget: Option<f64>,
    /// Most jobs in one MIG slice (they share it under MPS).
    pub jobs_per_slice: u32,
    /// Dynamic MIG: the layouts an idle GPU of the group may be re-cut to (mode `Mig` only).
    pub dynamic_mig: Option<DynamicMig>,
}

/// Dynamic MIG: when a waiting job fits no slice of the current layouts, an idle GPU of the
/// group is re-cut to the allowed layout with the most slices that hold the job. A GPU is only
/// re-cut when it has no jobs (a slice is never re-cut under a running job), and it takes no
/// work while it is being reconfigured.
#[derive(Clone, Debug)]
pub struct DynamicMig {
    /// Layouts a GPU may be re-cut to (the group's `mig_layout` is where every GPU starts).
    pub layouts: Vec<MigLayout>,
    /// Seconds a re-cut takes (destroying and creating instances).
    pub reconfigure_s: f64,
}

/// The GPUs of a simulated cluster.
#[derive(Clone, Debug)]
pub struct Cluster {
    /// Groups in the order placement tries them.
    pub groups: Vec<GpuGroup>,
}

impl Cluster {
    /// All GPU memory, GiB.
    pub fn memory_total_gib(&self) -> f64 {
        self.groups
            .iter()
            .map(|g| g.gpu.memory_gib * f64::from(g.count))
            .sum()
    }

    /// Number of GPUs.
    pub fn gpu_count(&self) -> u32 {
        self.groups.iter().map(|g| g.count).sum()
    }
}

/// What to do with a job that fits on no GPU of the cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unplaceable {
    /// Stop with an error naming the job.
    Error,
    /// Skip it, count it in the summary.
    Skip,
}

/// Everything one simulation needs.
#[derive(Clone)]
pub struct SimConfig {
    /// The GPUs.
    pub cluster: Cluster,
    /// Queue order and placement.
    pub policy: Policy,
    /// The jobs, in any order (empty when `source` gives them).
    pub jobs: Vec<Job>,
    /// Where the engine takes jobs from as the clock reaches them (a synthetic generator, a
    /// trace read as it goes), instead of `jobs` (which must then be empty): no job is held
    /// before it arrives.
    pub source: Option<Arc<dyn JobSource>>,
    /// How co-located jobs run.
    pub perf: Arc<dyn PerfModel>,
    /// Jobs that fit nowhere: error or skip.
    pub on_unplaceable: Unplaceable,
    /// Minimum seconds between timeline rows (0 = a row at every change).
    pub timeline_every_s: f64,
    /// Profiles whose `power` sections give each GPU type's board power, for the run's energy
    /// (`None`: no energy is computed, and the summary says so).
    pub power: Option<Arc<ProfileSet>>,
}

impl std::fmt::Debug for SimConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimConfig")
            .field("cluster", &self.cluster)
            .field("policy", &self.policy)
            .field("jobs", &self.jobs)
            .field("source", &self.source)
            .field("perf", &self.perf.name())
            .field("on_unplaceable", &self.on_unplaceable)
            .field("timeline_every_s", &self.timeline_every_s)
            .field("power", &self.power.is_some())
            .finish()
    }
}

impl SimConfig {
    /// Number of jobs, listed or given by the source.
    pub fn job_count(&self) -> usize {
        match &self.source {
            Some(source) => source.len() as usize,
            None => self.jobs.len(),
        }
    }

    /// Every job in input order: the listed ones, or the source's, named (all at once, for
    /// callers that need them together, such as [`crate::metrics::summarize`]).
    pub fn all_jobs(&self) -> Result<std::borrow::Cow<'_, [Job]>, EngineError> {
        match &self.source {
            Some(source) => {
                let jobs = source.draws(true).map(|d| d.map(|d| d.job));
                let jobs = jobs.collect::<Result<_, _>>()?;
                Ok(std::borrow::Cow::Owned(jobs))
            }
            None => Ok(std::borrow::Cow::Borrowed(&self.jobs)),
        }
    }
}

/// A simulation could not be set up or went wrong. All fatal.
#[derive(Debug, Error)]
pub enum EngineError {
    /// The clock passed the latest accepted time ([`crate::workload::limits::MAX_CLOCK_S`]).
    #[error(
        "the simulation's clock reached {time_s} s, past the limit of {limit_s:e} s (the latest \
         arrival plus the longest duration colo accepts; see scenarios/README.md, \"Accepted \
         ranges\"): jobs are queued or slowed beyond any meaningful time; check perf_model \
         (e.g. FixedSlowdown's per_corunner), the cluster's size and the workload"
    )]
    ClockOutOfRange {
        /// The time the next event would have happened at, s.
        time_s: f64,
        /// The limit, s.
        limit_s: f64,
    },
    /// A job's fields are out of range.
    #[error("job `{job}`: {why}")]
    BadJob {
        /// The job's name.
        job: String,
        /// What is wrong.
        why: String,
    },
    /// The model cannot run a job's model on any GPU of the cluster.
    #[error("job `{job}`: {source}")]
    Perf {
        /// The job's name.
        job: String,
        /// What the performance model said.
        source: Box<PerfError>,
    },
    /// A job fits on no GPU group.
    #[error(
        "job `{job}` ({model}, {gpus} GPU(s)) fits nowhere in the cluster: {why}. {remedy}, or set `on_unplaceable: Skip` to skip such jobs"
    )]
    Unplaceable {
        /// The job's name.
        job: String,
        /// Its model key.
        model: String,
        /// GPUs it asks for.
        gpus: u32,
        /// Why, per group.
        why: String,
        /// What would place it, for the limits it hit (`Lower its batch size, ...`).
        remedy: String,
    },
    /// The job source could not give a job it counted before the run.
    #[error("{0}")]
    Source(#[from] SourceError),
    /// A configuration lists jobs and has a job source too.
    #[error("the configuration lists {listed} job(s) and has a job source; give one or the other")]
    TwoWorkloads {
        /// Jobs listed.
        listed: usize,
    },
    /// A policy's Las thresholds or preemption costs are out of range.
    #[error("policy: {why}")]
    BadPolicy {
        /// What is wrong.
        why: String,
    },
    /// A MIG group has no layout.
    #[error("GPU group {group} ({gpu}) is in MIG mode but has no `mig_layout`")]
    MissingLayout {
        /// Group index.
        group: usize,
        /// GPU name.
        gpu: &'static str,
    },
    /// The performance model returned a rate that is not a positive number.
    #[error("performance model `{model}` gave job `{job}` the rate {rate}; rates must be positive")]
    BadRate {
        /// Model name.
        model: &'static str,
        /// Job name.
        job: String,
        /// The rate.
        rate: f64,
    },
    /// A placement broke the memory or room rules (a policy bug).
    #[error("internal error: placement of job `{job}` on GPU {gpu} broke the memory or room rules")]
    PolicyBroke {
        /// Job name.
        job: String,
        /// GPU index.
        gpu: u32,
    },
}

const MIB_PER_GIB: f64 = 1024.0;

/// Memory in whole MiB, rounded down for capacities.
fn capacity_mib(gib: f64) -> u64 {
    (gib * MIB_PER_GIB).floor() as u64
}

/// Memory in whole MiB, rounded up for demands.
fn demand_mib(gib: f64) -> u64 {
    (gib * MIB_PER_GIB).ceil() as u64
}

pub(super) fn build(config: &SimConfig) -> Result<Simulation<'_>, EngineError> {
    check_policy(&config.policy)?;
    if config.source.is_some() && !config.jobs.is_empty() {
        return Err(EngineError::TwoWorkloads {
            listed: config.jobs.len(),
        });
    }
    for job in &config.jobs {
        check_job(job)?;
    }
    check_min_speeds(config)?;
    let groups = group_states(config);
    let (gpus, parts, kinds) = layout(config)?;
    let table = JobTable::build(config, &kinds)?;
    let mut view = ClusterView::new(&kinds, config.policy.placement);
    start_layouts(config, &gpus, &mut view);
    let meter = super::power::meter(
        config.power.as_deref(),
        &groups,
        gpus.len(),
        &table.classes,
        &table.rows_class,
    );
    let arrivals = match &config.source {
        Some(source) => Arrivals::Drawn {
            draws: source.draws(false),
            kind_of: table.source_kind,
        },
        None => {
            let jobs = &config.jobs;
            let sorted = jobs
                .windows(2)
                .all(|w| w[0].arrival_s.total_cmp(&w[1].arrival_s).is_le());
            // Jobs listed out of arrival order are taken through a sorted copy of their indices.
            let order = (!sorted).then(|| {
                let mut order: Vec<u32> = (0..jobs.len() as u32).collect();
                order.sort_by(|&a, &b| {
                    let (ja, jb) = (&jobs[a as usize], &jobs[b as usize]);
                    ja.arrival_s.total_cmp(&jb.arrival_s).then(a.cmp(&b))
                });
                order
            });
            Arrivals::Listed {
                order,
                kind_of: table.job_kind,
            }
        }
    };
    let index = indexes_backfill(config, &groups)
        .then(|| super::backfill::BackfillIndex::new(table.requests));
    let busy = vec![super::BusySpans::default(); gpus.len()];
    let mut sim = Simulation {
        perf: config.perf.as_ref(),
        policy: config.policy.clone(),
        jobs: &config.jobs,
        total_jobs: config.job_count(),
        arrivals,
        next: None,
        cursor: 0,
        groups,
        gpus,
        parts,
        state: super::States::default(),
        busy,
        finished: Vec::new(),
        classes: table.classes,
        kinds: table.kinds,
        rows_class: table.rows_class,
        rows_memory: table.rows_memory,
        view,
        queue: BTreeSet::new(),
        index,
        heap: BinaryHeap::new(),
        seq: 0,
        now: 0.0,
        events: 0,
        busy_gpus: 0,
        running: 0,
        memory_used_mib: 0,
        timeline: Vec::new(),
        timeline_every_s: config.timeline_every_s.max(0.0),
        keep_timeline: true,
        scratch_rates: Vec::new(),
        scratch_ids: Vec::new(),
        completed: 0,
        reconfigurations: 0,
        awaiting_recut: Vec::new(),
        meter,
        probe_released: Vec::new(),
        pausing: Vec::new(),
        computing: Vec::new(),
        pass: Default::default(),
        reserved: Vec::new(),
        making_room: Vec::new(),
        priority_bound: f64::NEG_INFINITY,
    };
    sim.draw_next()?;
    Ok(sim)
}

/// What the engine knows of the jobs before any arrives: the job classes, one row per model
/// (its class and memory on every group), and the kinds of job (row, GPUs, minimum speed: all
/// a placement, a fit check and the backfill index read of a job), each checked once to fit
/// somewhere. A listed job's kind is kept per job (4 bytes); a drawn job's comes from its
/// source's kind.
struct JobTable {
    classes: Vec<JobClass>,
    rows_class: Vec<u32>,
    rows_memory: Vec<u64>,
    kinds: Vec<Kind>,
    /// Listed jobs: per job, its kind.
    job_kind: Vec<u32>,
    /// Drawn jobs: per kind of their source, its kind.
    source_kind: Vec<u32>,
    /// Distinct backfill request classes among the kinds.
    requests: usize,
}

/// A job as the table sees it: what it trains, how many GPUs, its minimum speed, its name.
struct JobKey<'a> {
    model: &'a ModelKey,
    gpus: u32,
    min_speed: Option<MinSpeed>,
    name: &'a dyn Fn() -> String,
}

impl JobTable {
    /// Resolves every job's class on each group's GPU type (a job whose model no profile knows
    /// on any group is an error naming the first such job; one known on some groups only may
    /// run only there), then checks each job fits somewhere (the first job that fits nowhere is
    /// an error, or with `Unplaceable::Skip` is skipped when it arrives). Jobs are taken in
    /// input order, so the job named is the one a check of every job in turn would name.
    fn build(config: &SimConfig, kinds: &[(GroupKind, u32)]) -> Result<Self, EngineError> {
        let mut table = JobTable {
            classes: Vec::new(),
            rows_class: Vec::new(),
            rows_memory: Vec::new(),
            kinds: Vec::new(),
            job_kind: Vec::new(),
            source_kind: Vec::new(),
            requests: 0,
        };
        let mut resolver = Resolver::default();
        let mut kinder = Kinder::new(config, kinds);
        match &config.source {
            None => {
                let mut rows = Vec::with_capacity(config.jobs.len());
                let mut previous: Option<(&ModelKey, u32)> = None;
                for job in &config.jobs {
                    // A run of jobs of one model (most traces' rule) takes the previous row.
                    let row = match previous {
                        Some((model, row)) if *model == job.model => row,
                        _ => resolver.row(config, &mut table, &job.model, &|| job.name.clone())?,
                    };
                    previous = Some((&job.model, row));
                    rows.push(row);
                }
                let mut job_kind = Vec::with_capacity(config.jobs.len());
                for (job, &row) in config.jobs.iter().zip(&rows) {
                    let key = JobKey {
                        model: &job.model,
                        gpus: job.gpus,
                        min_speed: job.min_speed,
                        name: &|| job.name.clone(),
                    };
                    job_kind.push(kinder.kind(&mut table, row, &key)?);
                }
                table.job_kind = job_kind;
            }
            Some(source) => {
                let kinds = source.kinds();
                let mut rows = Vec::with_capacity(kinds.len());
                for kind in kinds {
                    let name = || kind.first_name.clone();
                    rows.push(resolver.row(config, &mut table, &kind.model, &name)?);
                }
                for (kind, &row) in kinds.iter().zip(&rows) {
                    let key = JobKey {
                        model: &kind.model,
                        gpus: kind.gpus,
                        min_speed: kind.min_speed,
                        name: &|| kind.first_name.clone(),
                    };
                    let id = kinder.kind(&mut table, row, &key)?;
                    table.source_kind.push(id);
                }
            }
        }
        table.requests = kinder.requests.len();
        Ok(table)
    }
}

/// Class rows by model, and the classes by (GPU type, model).
#[derive(Default)]
struct Resolver<'c> {
    rows: HashMap<&'c ModelKey, u32>,
    cache: HashMap<(&'static str, &'c ModelKey), Result<u32, PerfError>>,
}

impl<'c> Resolver<'c> {
    /// The row of `model` (made on first sight; an error naming the job if no group can run
    /// it).
    fn row(
        &mut self,
        config: &'c SimConfig,
        table: &mut JobTable,
        model: &'c ModelKey,
        name: &dyn Fn() -> String,
    ) -> Result<u32, EngineError> {
        if let Some(&row) = self.rows.get(model) {
            return Ok(row);
        }
        let groups = &config.cluster.groups;
        let mut first_error = None;
        let start = table.rows_class.len();
        for group in groups {
            let classes = &mut table.classes;
            let resolved = self
                .cache
                .entry((group.gpu.name, model))
                .or_insert_with(|| {
                    config.perf.class(group.gpu, model).map(|class| {
                        classes.push(class);
                        (classes.len() - 1) as u32
                    })
                });
            match resolved {
                Ok(id) => {
                    table.rows_class.push(*id);
                    let footprint = config.perf.footprint_gib(
                        group.gpu,
                        group.mode,
                        &table.classes[*id as usize],
                    );
                    table.rows_memory.push(demand_mib(footprint));
                }
                Err(err) => {
                    first_error.get_or_insert_with(|| err.clone());
                    table.rows_class.push(u32::MAX);
                    table.rows_memory.push(u64::MAX);
                }
            }
        }
        if groups.is_empty() || table.rows_class[start..].iter().all(|&c| c == u32::MAX) {
            let source = first_error.unwrap_or(PerfError::NoProfile {
                gpu: "(no GPU groups)".into(),
                known: String::new(),
            });
            return Err(EngineError::Perf {
                job: name(),
                source: Box::new(source),
            });
        }
        let row = (start / groups.len()) as u32;
        self.rows.insert(model, row);
        Ok(row)
    }
}

/// Kinds of job by (row, GPUs, minimum speed), each checked once to fit somewhere, and the
/// backfill request classes by signature.
struct Kinder<'c> {
    fit: FitCheck<'c>,
    by_key: HashMap<(u32, u32, Option<MinSpeed>), u32>,
    requests: HashMap<Vec<u64>, u32>,
}

impl<'c> Kinder<'c> {
    fn new(config: &'c SimConfig, kinds: &'c [(GroupKind, u32)]) -> Self {
        Kinder {
            fit: FitCheck {
                config,
                kinds,
                alone_speed: Vec::new(),
            },
            by_key: HashMap::new(),
            requests: HashMap::new(),
        }
    }

    /// The kind of a job of `row`: made, and checked to fit, on first sight.
    fn kind(
        &mut self,
        table: &mut JobTable,
        row: u32,
        job: &JobKey<'_>,
    ) -> Result<u32, EngineError> {
        let key = (row, job.gpus, job.min_speed);
        if let Some(&kind) = self.by_key.get(&key) {
            return Ok(kind);
        }
        let n_groups = self.fit.kinds.len();
        let range = row as usize * n_groups..(row as usize + 1) * n_groups;
        let classes = &table.rows_class[range.clone()];
        let memory = &table.rows_memory[range];
        let fits = match self.fit.check(&table.classes, classes, memory, job) {
            Ok(()) => true,
            Err(_) if self.fit.config.on_unplaceable == Unplaceable::Skip => false,
            Err(Unfit { why, remedies }) => {
                let mut remedy = remedies.join(", ");
                if let Some(first) = remedy.get_mut(..1) {
                    first.make_ascii_uppercase();
                }
                return Err(EngineError::Unplaceable {
                    job: (job.name)(),
                    model: job.model.to_string(),
                    gpus: job.gpus,
                    why,
                    remedy,
                });
            }
        };
        // Every job has a class on some group (the resolver refuses the others).
        let alone_rate = classes.iter().find(|&&c| c != u32::MAX).map_or(0.0, |&c| {
            table.classes[c as usize].solo_rate * f64::from(job.gpus)
        });
        let mut signature = vec![
            u64::from(job.gpus),
            job.min_speed.map_or(u64::MAX, |m| m.get().to_bits()),
        ];
        for (c, m) in classes.iter().zip(memory) {
            signature.push(u64::from(*c));
            signature.push(*m);
        }
        let next = self.requests.len() as u32;
        let request = *self.requests.entry(signature).or_insert(next);
        let kind = table.kinds.len() as u32;
        table.kinds.push(Kind {
            row,
            gpus: job.gpus,
            min_speed: job.min_speed,
            request,
            fits,
            alone_rate,
        });
        self.by_key.insert(key, kind);
        Ok(kind)
    }
}

/// Whether waiting jobs are indexed by request class for backfill passes without a rescan:
/// with backfill, where nothing in a pass frees room (no preemption, no dynamic MIG re-cut).
fn indexes_backfill(config: &SimConfig, groups: &[GroupState]) -> bool {
    config.policy.backfill
        && !config.policy.order.preempts()
        && groups.iter().all(|g| g.dynamic.is_none())
}

/// Las thresholds and preemption costs: finite, not negative, thresholds increasing.
fn check_policy(policy: &Policy) -> Result<(), EngineError> {
    let bad = |why: String| Err(EngineError::BadPolicy { why });
    if let QueueOrder::Las { thresholds_gpu_s } = &policy.order {
        if thresholds_gpu_s.is_empty() {
            return bad("Las needs at least one threshold".into());
        }
        for (i, &t) in thresholds_gpu_s.iter().enumerate() {
            if !(t.is_finite() && t > 0.0) {
                return bad(format!(
                    "Las threshold {i} is {t}; thresholds must be finite and > 0"
                ));
            }
            if i > 0 && t <= thresholds_gpu_s[i - 1] {
                return bad(format!(
                    "Las threshold {i} ({t}) is not above the one before it; thresholds must increase strictly"
                ));
            }
        }
    }
    let costs = &policy.preemption;
    for (name, value) in [
        ("checkpoint_s", costs.checkpoint_s),
        ("restore_s", costs.restore_s),
        ("min_run_s", costs.min_run_s),
    ] {
        if !(value.is_finite() && value >= 0.0) {
            return bad(format!("{name} is {value}; it must be finite and >= 0"));
        }
    }
    Ok(())
}

fn check_job(job: &Job) -> Result<(), EngineError> {
    let bad = |why: String| {
        Err(EngineError::BadJob {
            job: job.name.clone(),
            why,
        })
    };
    if let Err(err) = crate::workload::limits::arrival(job.arrival_s) {
        return bad(err.to_string());
    }
    if !(job.samples.is_finite() && job.samples > 0.0) {
        return bad(format!(
            "work of {} samples must be a finite number > 0",
            job.samples
        ));
    }
    if job.gpus == 0 {
        return bad("asks for 0 GPUs; a job needs at least 1".into());
    }
    Ok(())
}

/// Under `LeastSlowdown`, minimum speeds need static MIG layouts: a dynamic re-cut chooses its
/// layout by memory alone and could re-cut for a job no slice of it may hold.
fn check_min_speeds(config: &SimConfig) -> Result<(), EngineError> {
    if config.policy.placement != PlacementRule::LeastSlowdown {
        return Ok(());
    }
    let first = match &config.source {
        Some(source) => source.first_min_speed(),
        None => config
            .jobs
            .iter()
            .find(|j| j.min_speed.is_some())
            .map(|j| j.name.clone()),
    };
    let Some(job) = first else {
        return Ok(());
    };
    match config
        .cluster
        .groups
        .iter()
        .position(|g| g.mode == ShareMode::Mig && g.dynamic_mig.is_some())
    {
        Some(group) => Err(EngineError::BadJob {
            job,
            why: format!(
                "has a min_speed, which dynamic MIG (group {group}) cannot honour: a re-cut \
                 chooses slices by memory alone; use a static layout or no min_speed"
            ),
        }),
        None => Ok(()),
    }
}

fn group_states(config: &SimConfig) -> Vec<GroupState> {
    config
        .cluster
        .groups
        .iter()
        .map(|g| GroupState {
            spec: g.gpu,
            mode: g.mode,
            sm_budget: g.sm_budget.filter(|_| g.mode == ShareMode::Mps),
            dynamic: g.dynamic_mig.clone().filter(|_| g.mode == ShareMode::Mig),
        })
        .collect()
}

type Layout = (Vec<GpuState>, Vec<PartState>, Vec<(GroupKind, u32)>);

/// GPUs, their partitions (whole GPU or MIG slices) and the policy view's group shapes.
fn layout(config: &SimConfig) -> Result<Layout, EngineError> {
    let mut gpus = Vec::new();
    let mut parts = Vec::new();
    let mut kinds = Vec::new();
    for (group_idx, group) in config.cluster.groups.iter().enumerate() {
        let (kind, group_parts) = group_partitions(config, group_idx, group)?;
        for _ in 0..group.count {
            gpus.push(GpuState {
                group: group_idx as u32,
                first_part: parts.len() as u32,
                parts: group_parts.len() as u32,
                version: 0,
            });
            parts.extend(group_parts.iter().cloned());
        }
        kinds.push((kind, group.count));
    }
    Ok((gpus, parts, kinds))
}

fn group_partitions(
    config: &SimConfig,
    group_idx: usize,
    group: &GpuGroup,
) -> Result<(GroupKind, Vec<PartState>), EngineError> {
    let gpu = group.gpu;
    if group.mode != ShareMode::Mig {
        let max_jobs = if group.mode == ShareMode::Exclusive {
            1
        } else {
            config.policy.max_jobs_per_gpu.max(1)
        };
        let kind = GroupKind::Whole {
            memory_mib: capacity_mib(gpu.memory_gib),
            max_jobs,
        };
        let part = PartState {
            partition: Partition::whole(gpu),
            slice: None,
            tenants: Default::default(),
        };
        return Ok((kind, vec![part]));
    }
    let layout = group
        .mig_layout
        .as_ref()
        .ok_or(EngineError::MissingLayout {
            group: group_idx,
            gpu: gpu.name,
        })?;
    // A dynamic group's GPUs have as many slice positions as its largest layout; positions the
    // current layout does not use hold no slice (capacity 0). The view's per-position memory is
    // the largest any layout gives it (a filter; each GPU's own capacity decides).
    let layouts: Vec<&MigLayout> = match &group.dynamic_mig {
        Some(dynamic) => dynamic.layouts.iter().collect(),
        None => vec![layout],
    };
    let positions = layouts.iter().map(|l| l.slices.len()).max().unwrap_or(0);
    let parts: Vec<PartState> = (0..positions)
        .map(|p| slice_part(gpu, layout.slices.get(p)))
        .collect();
    let largest = |p: usize, of: &dyn Fn(&MigSlice) -> u64| {
        layouts
            .iter()
            .filter_map(|l| l.slices.get(p))
            .map(of)
            .max()
            .unwrap_or(0)
    };
    let kind = GroupKind::Mig {
        slice_memory_mib: (0..positions)
            .map(|p| largest(p, &|s| capacity_mib(s.profile.memory_gib)))
            .collect(),
        slice_sms: (0..positions)
            .map(|p| largest(p, &|s| u64::from(s.profile.sms)) as u32)
            .collect(),
        max_jobs: group.jobs_per_slice.max(1),
    };
    Ok((kind, parts))
}

/// The partition of one slice position: the slice, or nothing (no slice there).
pub(super) fn slice_part(gpu: &GpuSpec, slice: Option<&MigSlice>) -> PartState {
    let partition = match slice {
        Some(s) => Partition::slice(gpu, s.profile),
        None => Partition {
            sm_fraction: 0.0,
            memory_gib: 0.0,
            is_mig_slice: true,
        },
    };
    PartState {
        partition,
        slice: slice.copied(),
        tenants: Default::default(),
    }
}

/// Memory of a slice position for the view (0: no slice there).
pub(super) fn slot_capacity_mib(slice: Option<&MigSlice>) -> u64 {
    slice.map_or(0, |s| capacity_mib(s.profile.memory_gib))
}

/// Sets each dynamic-MIG GPU's slots to its starting layout (the view starts from the largest
/// capacity per position).
fn start_layouts(config: &SimConfig, gpus: &[GpuState], view: &mut ClusterView) {
    for (gpu_idx, gpu) in gpus.iter().enumerate() {
        let group = &config.cluster.groups[gpu.group as usize];
        let (Some(_), Some(layout)) = (&group.dynamic_mig, &group.mig_layout) else {
            continue;
        };
        for slot in 0..gpu.parts {
            let slot_ref = SlotRef {
                group: gpu.group,
                gpu: gpu_idx as u32,
                slot,
            };
            view.set_capacity(
                slot_ref,
                slot_capacity_mib(layout.slices.get(slot as usize)),
            );
        }
    }
}

/// Why a job fits on no group: the reason per group, and what would lift each limit it hit.
struct Unfit {
    why: String,
    remedies: Vec<String>,
}

/// Whether a job can ever run on some group; what it reads, and the best alone speed per
/// (class, group) found so far (for minimum speeds under `LeastSlowdown`).
struct FitCheck<'c> {
    config: &'c SimConfig,
    kinds: &'c [(GroupKind, u32)],
    alone_speed: Vec<Option<f64>>,
}

impl FitCheck<'_> {
    /// Whether a job of class row `job_class` (memory `job_memory`) can ever run on some
    /// group; if not, why (per group).
    fn check(
        &mut self,
        classes: &[JobClass],
        job_class: &[u32],
        job_memory: &[u64],
        job: &JobKey<'_>,
    ) -> Result<(), Unfit> {
        let min_speed = job
            .min_speed
            .map(MinSpeed::get)
            .filter(|_| self.config.policy.placement == PlacementRule::LeastSlowdown)
            .filter(|_| job.gpus == 1);
        let Some(min_speed) = min_speed else {
            return fit_check(
                self.config,
                self.kinds,
                job_class,
                job_memory,
                job.gpus,
                None,
            );
        };
        let n_groups = self.kinds.len();
        let speeds: Vec<Option<f64>> = (0..n_groups)
            .map(|g| self.alone_speed(classes, job_class[g], job_memory[g], g))
            .collect();
        let speed = Some((min_speed, speeds.as_slice()));
        fit_check(
            self.config,
            self.kinds,
            job_class,
            job_memory,
            job.gpus,
            speed,
        )
    }

    /// The best speed (fraction of alone) a job of class `class` needing `need` MiB has alone
    /// on a partition of group `g` that holds it; `None` where it has no class or no partition
    /// holds it.
    fn alone_speed(
        &mut self,
        classes: &[JobClass],
        class: u32,
        need: u64,
        g: usize,
    ) -> Option<f64> {
        let n_groups = self.kinds.len();
        if class == u32::MAX {
            return None;
        }
        let slot = class as usize * n_groups + g;
        if slot >= self.alone_speed.len() {
            self.alone_speed.resize(slot + 1, None);
        }
        if let Some(speed) = self.alone_speed[slot] {
            return Some(speed);
        }
        let group = &self.config.cluster.groups[g];
        let partitions: Vec<Partition> = match &group.mig_layout {
            Some(layout) if group.mode == ShareMode::Mig => layout
                .slices
                .iter()
                .filter(|s| slot_capacity_mib(Some(s)) >= need)
                .map(|s| slice_part(group.gpu, Some(s)).partition)
                .collect(),
            _ => vec![Partition::whole(group.gpu)],
        };
        let class = &classes[class as usize];
        let tenant = Tenant {
            class,
            sm_budget: group.sm_budget.filter(|_| group.mode == ShareMode::Mps),
            gpus: 1,
        };
        let speed = partitions
            .iter()
            .map(|p| {
                let mut rate = [0.0];
                self.config.perf.rates(
                    &CoRun {
                        gpu: group.gpu,
                        mode: group.mode,
                        partition: p,
                        tenants: &[tenant],
                    },
                    &mut rate,
                );
                rate[0] / class.solo_rate
            })
            .fold(None, |best: Option<f64>, s| {
                Some(best.map_or(s, |b| b.max(s)))
            })?;
        self.alone_speed[slot] = Some(speed);
        Some(speed)
    }
}

/// Whether job `idx` can ever run on some group; if not, why (per group). With `min_speed`
/// (its minimum and its best alone speed per group), a group where it is slower than that
/// even alone cannot hold it either.
fn fit_check(
    config: &SimConfig,
    kinds: &[(GroupKind, u32)],
    job_class: &[u32],
    job_memory: &[u64],
    job_gpus: u32,
    min_speed: Option<(f64, &[Option<f64>])>,
) -> Result<(), Unfit> {
    let mut reasons = Vec::new();
    let mut remedies: Vec<String> = Vec::new();
    let mut remedy = |text: String| {
        if !remedies.contains(&text) {
            remedies.push(text);
        }
    };
    for (g, (kind, count)) in kinds.iter().enumerate() {
        let group = &config.cluster.groups[g];
        // Formatted only when the job does not fit: this runs once per job and group.
        let label = || format!("group {g} ({} x {}, {})", count, group.gpu.name, group.mode);
        if job_class[g] == u32::MAX {
            reasons.push(format!("{}: no profile entry", label()));
            remedy("use a model, batch and image size the group's profile has".to_owned());
            continue;
        }
        let need = job_memory[g];
        let largest = match kind {
            GroupKind::Whole { memory_mib, .. } => *memory_mib,
            GroupKind::Mig {
                slice_memory_mib, ..
            } => slice_memory_mib.iter().copied().max().unwrap_or(0),
        };
        let reason = match kind {
            GroupKind::Mig { .. } if job_gpus > 1 => {
                remedy(format!(
                    "add a group of at least {} GPUs not in MIG mode",
                    job_gpus
                ));
                Some("multi-GPU jobs cannot span MIG slices".to_owned())
            }
            GroupKind::Whole { .. } if job_gpus > *count => {
                remedy(format!("add a group of at least {} GPUs", job_gpus));
                Some(format!("needs {} GPUs, the group has {count}", job_gpus))
            }
            _ if need > largest => {
                remedy("lower its batch size".to_owned());
                remedy("add a larger GPU group".to_owned());
                Some(format!(
                    "needs {:.1} GiB per process, the largest partition holds {:.1} GiB",
                    need as f64 / MIB_PER_GIB,
                    largest as f64 / MIB_PER_GIB
                ))
            }
            _ => match min_speed {
                Some((min, speeds)) if !speeds[g].is_some_and(|s| s >= min) => {
                    remedy("lower its min_speed".to_owned());
                    Some(format!(
                        "alone it runs at {:.3} of its alone speed at best, below its min_speed {}",
                        speeds[g].unwrap_or(0.0),
                        min as f32
                    ))
                }
                _ => None,
            },
        };
        match reason {
            None => return Ok(()),
            Some(r) => reasons.push(format!("{}: {r}", label())),
        }
    }
    Err(Unfit {
        why: reasons.join("; "),
        remedies,
    })
}
