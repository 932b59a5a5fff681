//! Scheduling policies: the order of the queue and where a job goes.
//!
//! A policy reads a [`ClusterView`] and returns a [`Placement`]; the engine checks memory and the
//! MIG layout, then applies it. One placement rule per file.
mod best_fit;
mod exclusive;
mod first_fit;
mod view;

use std::fmt;

pub use view::{ClusterView, GroupKind, SlotRef};

/// In which order waiting jobs are considered. `Fifo` and `ShortestFirst` never preempt;
/// `Las` and `Srtf` do (see [`Preemption`] and the engine's README).
#[derive(Clone, Debug, PartialEq)]
pub enum QueueOrder {
    /// First come, first served.
    Fifo,
    /// Shortest exclusive duration first (durations are known in simulation).
    ShortestFirst,
    /// Least attained service, as Tiresias: a job's attained service is its GPUs times the
    /// seconds it has held them; its level is how many thresholds that has reached (level 0 is
    /// served first); first come, first served within a level. A job of a lower level may
    /// preempt running jobs of a higher one.
    Las {
        /// Level boundaries, GPU-seconds, strictly increasing and > 0 (at least one).
        thresholds_gpu_s: Vec<f64>,
    },
    /// Shortest remaining time first: remaining samples over the job's exclusive rate (the
    /// simulator knows each job's remaining work). A job may preempt running jobs with more
    /// remaining time.
    Srtf,
}

impl QueueOrder {
    /// Whether this order preempts running jobs.
    pub fn preempts(&self) -> bool {
        matches!(self, QueueOrder::Las { .. } | QueueOrder::Srtf)
    }
}

/// Costs and limits of preemption (used by preemptive orders only; all 0 by default).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Preemption {
    /// Seconds a preempted job keeps its GPUs, without progress, while it checkpoints.
    pub checkpoint_s: f64,
    /// Seconds a resumed job holds its new GPUs, without progress, while it restores.
    pub restore_s: f64,
    /// A job that has held its GPUs less than this since it (re)started is not preempted.
    pub min_run_s: f64,
}

/// How a job's GPU (or MIG slice) is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlacementRule {
    /// Only idle GPUs (or empty MIG slices): no packing.
    Exclusive,
    /// The first GPU (lowest index) with room, memory-checked.
    FirstFit,
    /// The GPU (or slice) left with the least free memory after placing, memory-checked.
    BestFit,
}

/// A complete scheduling policy.
#[derive(Clone, Debug, PartialEq)]
pub struct Policy {
    /// Queue order.
    pub order: QueueOrder,
    /// Whether later jobs may start when the head of the queue cannot (greedy, no reservation).
    pub backfill: bool,
    /// How many waiting jobs one scheduling pass considers at most (with backfill).
    pub backfill_depth: usize,
    /// Placement rule.
    pub placement: PlacementRule,
    /// Most jobs sharing one whole GPU in a time-slicing or MPS group (at least 1). Exclusive
    /// groups take one job per GPU whatever this says, and a MIG group's slices take their
    /// group's own limit ([`GpuGroup::jobs_per_slice`](crate::engine::GpuGroup::jobs_per_slice),
    /// the scenario's `jobs_per_slice`), not this one.
    pub max_jobs_per_gpu: u32,
    /// Checkpoint and restore costs and the minimum run between preemptions (preemptive
    /// orders only).
    pub preemption: Preemption,
}

impl Default for Policy {
    fn default() -> Self {
        Self {
            order: QueueOrder::Fifo,
            backfill: false,
            backfill_depth: 64,
            placement: PlacementRule::BestFit,
            max_jobs_per_gpu: 4,
            preemption: Preemption::default(),
        }
    }
}

impl fmt::Display for PlacementRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PlacementRule::Exclusive => "exclusive",
            PlacementRule::FirstFit => "first-fit",
            PlacementRule::BestFit => "best-fit",
        })
    }
}

/// What one job asks for in one GPU group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Demand {
    /// Memory per process, MiB (context included).
    pub memory_mib: u64,
    /// Whole GPUs; more than one means idle GPUs only.
    pub gpus: u32,
}

/// Where a job goes: a slot (whole GPU or MIG slice) in one group, or several idle GPUs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Placement {
    /// One partition: the whole GPU or one of its MIG slices.
    Slot(SlotRef),
    /// Several idle GPUs of one group (global GPU indices).
    Gpus(Vec<u32>),
}

/// Chooses a placement for `demand` in group `group` of `view` under `rule`, or `None` when
/// nothing has room now.
pub fn place(
    view: &ClusterView,
    group: usize,
    rule: PlacementRule,
    demand: Demand,
) -> Option<Placement> {
    if demand.gpus > 1 {
        return exclusive::idle_gpus(view, group, demand.gpus).map(Placement::Gpus);
    }
    let slot = match rule {
        PlacementRule::Exclusive => exclusive::place(view, group, demand),
        PlacementRule::FirstFit => first_fit::place(view, group, demand),
        PlacementRule::BestFit => best_fit::place(view, group, demand),
    };
    slot.map(Placement::Slot)
}
