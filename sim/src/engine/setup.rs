//! Building a [`Simulation`] from a [`SimConfig`]: resolve every job's class once, check that
//! each job fits somewhere, lay out GPUs and partitions.
use std::collections::{BTreeSet, BinaryHeap, HashMap};
use std::sync::Arc;

use thiserror::Error;

use super::{GpuState, GroupState, JobState, PartState, Phase, Simulation};
use crate::hardware::{GpuSpec, MigLayout, MigSlice};
use crate::perf::{
    CoRun, JobClass, Partition, PerfError, PerfModel, ProfileSet, ShareMode, Tenant,
};
use crate::policy::{ClusterView, GroupKind, PlacementRule, Policy, QueueOrder, SlotRef};
use crate::workload::{Job, MinSpeed};

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
    /// The jobs, in any order.
    pub jobs: Vec<Job>,
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
            .field("perf", &self.perf.name())
            .field("on_unplaceable", &self.on_unplaceable)
            .field("timeline_every_s", &self.timeline_every_s)
            .field("power", &self.power.is_some())
            .finish()
    }
}

/// A simulation could not be set up or went wrong. All fatal.
#[derive(Debug, Error)]
pub enum EngineError {
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
    for job in &config.jobs {
        check_job(job)?;
    }
    check_min_speeds(config)?;
    let groups = group_states(config);
    let (gpus, parts, kinds) = layout(config)?;
    let (classes, job_class, job_memory) = resolve_classes(config)?;
    let n_groups = groups.len();
    let mut state = super::States::new(config.jobs.len());
    let mut fit = FitCheck {
        config,
        kinds: &kinds,
        classes: &classes,
        job_class: &job_class,
        job_memory: &job_memory,
        alone_speed: vec![None; classes.len() * n_groups],
    };
    for (idx, job) in config.jobs.iter().enumerate() {
        let fits = fit.check(idx);
        let phase = match fits {
            Ok(()) => Phase::Pending,
            Err(_) if config.on_unplaceable == Unplaceable::Skip => Phase::Skipped,
            Err(Unfit { why, remedies }) => {
                let mut remedy = remedies.join(", ");
                if let Some(first) = remedy.get_mut(..1) {
                    first.make_ascii_uppercase();
                }
                return Err(EngineError::Unplaceable {
                    job: job.name.clone(),
                    model: job.model.to_string(),
                    gpus: job.gpus,
                    why,
                    remedy,
                });
            }
        };
        // A placeable job's state is made when it arrives.
        if phase == Phase::Skipped {
            let mut skipped = JobState::arrived(job.samples);
            skipped.phase = phase;
            state.insert(idx as u32, skipped);
        }
    }
    debug_assert_eq!(job_class.len(), config.jobs.len() * n_groups);
    let alone_rate = config
        .jobs
        .iter()
        .enumerate()
        .map(|(idx, job)| {
            // Every job has a class on some group (resolve_classes refuses the others).
            job_class[idx * n_groups..(idx + 1) * n_groups]
                .iter()
                .find(|&&c| c != u32::MAX)
                .map_or(0.0, |&c| {
                    classes[c as usize].solo_rate * f64::from(job.gpus)
                })
        })
        .collect();
    let mut view = ClusterView::new(&kinds, config.policy.placement);
    start_layouts(config, &gpus, &mut view);
    let meter = super::power::meter(
        config.power.as_deref(),
        &groups,
        gpus.len(),
        &classes,
        &job_class,
    );
    let mut arrivals: Vec<u32> = (0..config.jobs.len() as u32).collect();
    arrivals.sort_by(|&a, &b| {
        let (ja, jb) = (&config.jobs[a as usize], &config.jobs[b as usize]);
        ja.arrival_s.total_cmp(&jb.arrival_s).then(a.cmp(&b))
    });
    let index = indexes_backfill(config, &groups).then(|| {
        super::backfill::BackfillIndex::new(config.jobs.len(), |job, sig| {
            let j = &config.jobs[job];
            sig.push(u64::from(j.gpus));
            sig.push(j.min_speed.map_or(u64::MAX, |m| m.get().to_bits()));
            for g in job * n_groups..(job + 1) * n_groups {
                sig.push(u64::from(job_class[g]));
                sig.push(job_memory[g]);
            }
        })
    });
    let busy = vec![super::BusySpans::default(); gpus.len()];
    Ok(Simulation {
        perf: config.perf.as_ref(),
        policy: config.policy.clone(),
        jobs: &config.jobs,
        arrivals,
        cursor: 0,
        groups,
        gpus,
        parts,
        state,
        busy,
        finished: Vec::new(),
        pre: if config.policy.order.preempts() {
            vec![super::PreemptState::default(); config.jobs.len()]
        } else {
            Vec::new()
        },
        classes,
        job_class,
        job_memory,
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
        alone_rate,
        computing: Vec::new(),
        pass: Default::default(),
        reserved: Vec::new(),
        priority_bound: f64::NEG_INFINITY,
    })
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
    let Some(job) = config.jobs.iter().find(|j| j.min_speed.is_some()) else {
        return Ok(());
    };
    match config
        .cluster
        .groups
        .iter()
        .position(|g| g.mode == ShareMode::Mig && g.dynamic_mig.is_some())
    {
        Some(group) => Err(EngineError::BadJob {
            job: job.name.clone(),
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
            tenants: Vec::new(),
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
        Some(s) => Partition {
            sm_fraction: gpu.sm_fraction(s.profile),
            memory_gib: s.profile.memory_gib,
            is_mig_slice: true,
        },
        None => Partition {
            sm_fraction: 0.0,
            memory_gib: 0.0,
            is_mig_slice: true,
        },
    };
    PartState {
        partition,
        slice: slice.copied(),
        tenants: Vec::new(),
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

type Classes = (Vec<JobClass>, Vec<u32>, Vec<u64>);

/// Resolves each job's class on each group's GPU type once. A job whose model no profile knows
/// on any group is an error; one known on some groups only may run only there.
fn resolve_classes(config: &SimConfig) -> Result<Classes, EngineError> {
    let groups = &config.cluster.groups;
    let mut classes = Vec::new();
    let mut cache: HashMap<(&'static str, &crate::workload::ModelKey), Result<u32, PerfError>> =
        HashMap::new();
    let mut job_class = Vec::with_capacity(config.jobs.len() * groups.len());
    let mut job_memory = Vec::with_capacity(config.jobs.len() * groups.len());
    let mut previous: Option<&crate::workload::ModelKey> = None;
    for job in &config.jobs {
        // A run of jobs of one model (a synthetic mix of one, most traces' rule) takes the
        // previous row as it is: the same cache hits and footprints, without hashing the key
        // and asking the model per job. Only a row with no error is reused.
        if previous == Some(&job.model) && !groups.is_empty() {
            let row = job_class.len() - groups.len();
            if job_class[row..].iter().all(|&c| c != u32::MAX) {
                job_class.extend_from_within(row..);
                job_memory.extend_from_within(row..);
                continue;
            }
        }
        previous = Some(&job.model);
        let mut first_error = None;
        for group in groups {
            let resolved = cache
                .entry((group.gpu.name, &job.model))
                .or_insert_with(|| {
                    config.perf.class(group.gpu, &job.model).map(|class| {
                        classes.push(class);
                        (classes.len() - 1) as u32
                    })
                });
            match resolved {
                Ok(id) => {
                    job_class.push(*id);
                    let footprint =
                        config
                            .perf
                            .footprint_gib(group.gpu, group.mode, &classes[*id as usize]);
                    job_memory.push(demand_mib(footprint));
                }
                Err(err) => {
                    first_error.get_or_insert_with(|| err.clone());
                    job_class.push(u32::MAX);
                    job_memory.push(u64::MAX);
                }
            }
        }
        let row = job_class.len() - groups.len();
        if groups.is_empty() || job_class[row..].iter().all(|&c| c == u32::MAX) {
            let source = first_error.unwrap_or(PerfError::NoProfile {
                gpu: "(no GPU groups)".into(),
                known: String::new(),
            });
            return Err(EngineError::Perf {
                job: job.name.clone(),
                source: Box::new(source),
            });
        }
    }
    Ok((classes, job_class, job_memory))
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
    classes: &'c [JobClass],
    job_class: &'c [u32],
    job_memory: &'c [u64],
    alone_speed: Vec<Option<f64>>,
}

impl FitCheck<'_> {
    /// Whether job `idx` can ever run on some group; if not, why (per group).
    fn check(&mut self, idx: usize) -> Result<(), Unfit> {
        let min_speed = self.config.jobs[idx]
            .min_speed
            .map(MinSpeed::get)
            .filter(|_| self.config.policy.placement == PlacementRule::LeastSlowdown)
            .filter(|_| self.config.jobs[idx].gpus == 1);
        let Some(min_speed) = min_speed else {
            return fit_check(
                self.config,
                self.kinds,
                self.job_class,
                self.job_memory,
                idx,
                None,
            );
        };
        let n_groups = self.kinds.len();
        let speeds: Vec<Option<f64>> = (0..n_groups).map(|g| self.alone_speed(idx, g)).collect();
        let speed = Some((min_speed, speeds.as_slice()));
        fit_check(
            self.config,
            self.kinds,
            self.job_class,
            self.job_memory,
            idx,
            speed,
        )
    }

    /// The best speed (fraction of alone) job `idx` has alone on a partition of group `g` that
    /// holds it; `None` where it has no class or no partition holds it.
    fn alone_speed(&mut self, idx: usize, g: usize) -> Option<f64> {
        let n_groups = self.kinds.len();
        let class = self.job_class[idx * n_groups + g];
        if class == u32::MAX {
            return None;
        }
        let slot = class as usize * n_groups + g;
        if let Some(speed) = self.alone_speed[slot] {
            return Some(speed);
        }
        let group = &self.config.cluster.groups[g];
        let need = self.job_memory[idx * n_groups + g];
        let partitions: Vec<Partition> = match &group.mig_layout {
            Some(layout) if group.mode == ShareMode::Mig => layout
                .slices
                .iter()
                .filter(|s| slot_capacity_mib(Some(s)) >= need)
                .map(|s| slice_part(group.gpu, Some(s)).partition)
                .collect(),
            _ => vec![Partition::whole(group.gpu)],
        };
        let class = &self.classes[class as usize];
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
    idx: usize,
    min_speed: Option<(f64, &[Option<f64>])>,
) -> Result<(), Unfit> {
    let job = &config.jobs[idx];
    let n_groups = kinds.len();
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
        if job_class[idx * n_groups + g] == u32::MAX {
            reasons.push(format!("{}: no profile entry", label()));
            remedy("use a model, batch and image size the group's profile has".to_owned());
            continue;
        }
        let need = job_memory[idx * n_groups + g];
        let largest = match kind {
            GroupKind::Whole { memory_mib, .. } => *memory_mib,
            GroupKind::Mig {
                slice_memory_mib, ..
            } => slice_memory_mib.iter().copied().max().unwrap_or(0),
        };
        let reason = match kind {
            GroupKind::Mig { .. } if job.gpus > 1 => {
                remedy(format!(
                    "add a group of at least {} GPUs not in MIG mode",
                    job.gpus
                ));
                Some("multi-GPU jobs cannot span MIG slices".to_owned())
            }
            GroupKind::Whole { .. } if job.gpus > *count => {
                remedy(format!("add a group of at least {} GPUs", job.gpus));
                Some(format!("needs {} GPUs, the group has {count}", job.gpus))
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
