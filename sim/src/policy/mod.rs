//! Scheduling policies: the order of the queue and where a job goes.
//!
//! A placement rule is given the job (a [`Request`]: its memory, its class as the performance
//! model sees it, its minimum speed) and a read-only [`Pool`]: the indexed [`ClusterView`] (free
//! memory and job counts per slot), the [`Tenancy`] (which jobs share each partition, the
//! partition itself, the group's GPU type and mode) and the [`PerfModel`]. It returns a
//! [`Placement`]; the engine checks memory and room, then applies it. One rule per file.
//!
//! | rule | file | cost per decision (G GPUs, S open slots of the group) |
//! |---|---|---|
//! | `Exclusive` | `exclusive.rs` | `O(log G)`; MIG `O(S)` |
//! | `FirstFit` | `first_fit.rs` | `O(log G)`; MIG `O(S)` |
//! | `BestFit` | `best_fit.rs` | `O(log G)`; MIG `O(S)` |
//! | `Spread` | `spread.rs` | `O(c log S)`, c the distinct (tenants, GPU tenants) counts present |
//! | `LeastSlowdown` | `least_slowdown.rs` | one `PerfModel::rates` call per open slot that holds jobs, plus one per distinct empty partition; MIG walks every open slot |
mod best_fit;
mod exclusive;
mod first_fit;
mod least_slowdown;
mod spread;
mod view;

#[cfg(test)]
mod testkit;

use std::fmt;

use crate::hardware::GpuSpec;
use crate::perf::{Partition, PerfModel, ShareMode, Tenant};
pub use view::{ClusterView, GroupKind, SlotRef, member_key};

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
    /// The least-loaded slot that fits: fewest jobs, then most free memory, lowest index.
    Spread,
    /// The slot where the performance model predicts the smallest loss of the whole set
    /// (`sum of 1 - rate / alone rate`), never below a job's minimum speed.
    LeastSlowdown,
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
            PlacementRule::Spread => "spread",
            PlacementRule::LeastSlowdown => "least-slowdown",
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

/// The job a rule places, in one group.
#[derive(Clone, Copy, Debug)]
pub struct Request<'a> {
    /// Memory per process and whole GPUs.
    pub demand: Demand,
    /// The job as [`PerfModel::rates`] takes it: its class on the group's GPU type (model key
    /// and alone numbers), SM budget and GPUs.
    pub tenant: Tenant<'a>,
    /// Least speed it accepts, as a fraction of its alone rate (`class.solo_rate` per GPU, the
    /// rate its slowdown is measured against); `None`: any. Read by `LeastSlowdown` only.
    pub min_speed: Option<f64>,
}

/// One job already in a partition, as a rule sees it.
#[derive(Clone, Copy, Debug)]
pub struct Occupant<'a> {
    /// Engine job id.
    pub job: u32,
    /// The job as [`PerfModel::rates`] takes it.
    pub tenant: Tenant<'a>,
    /// Its minimum speed (fraction of alone), if any.
    pub min_speed: Option<f64>,
}

/// Who runs where, read-only: what the engine knows of each partition beyond the memory and
/// counts the [`ClusterView`] indexes. The engine implements it over its own state.
pub trait Tenancy {
    /// GPU type and sharing mode of a group.
    fn sharing(&self, group: usize) -> (&'static GpuSpec, ShareMode);
    /// The partition (whole GPU or MIG slice) behind a slot, as it is cut now.
    fn partition(&self, slot: SlotRef) -> Partition;
    /// How many jobs the slot holds (the view's [`ClusterView::jobs_in`]).
    fn tenants_in(&self, slot: SlotRef) -> usize;
    /// The `i`-th job in the slot (`i < tenants_in`), in the order they entered it: the order
    /// the engine passes them to [`PerfModel::rates`].
    fn tenant(&self, slot: SlotRef, i: usize) -> Occupant<'_>;
}

/// Everything a placement rule may read.
#[derive(Clone, Copy)]
pub struct Pool<'a> {
    /// Free memory and job counts per slot, indexed for the rule.
    pub view: &'a ClusterView,
    /// Which jobs share each partition.
    pub tenancy: &'a dyn Tenancy,
    /// How a would-be set would run.
    pub perf: &'a dyn PerfModel,
}

/// Chooses a placement for `request` in group `group` of `pool` under `rule`, or `None` when
/// nothing has room now.
pub fn place(
    pool: &Pool<'_>,
    group: usize,
    rule: PlacementRule,
    request: &Request<'_>,
) -> Option<Placement> {
    let view = pool.view;
    let demand = request.demand;
    if demand.gpus > 1 {
        return exclusive::idle_gpus(view, group, demand.gpus).map(Placement::Gpus);
    }
    let slot = match rule {
        PlacementRule::Exclusive => exclusive::place(view, group, demand),
        PlacementRule::FirstFit => first_fit::place(view, group, demand),
        PlacementRule::BestFit => best_fit::place(view, group, demand),
        PlacementRule::Spread => spread::place(view, group, demand),
        PlacementRule::LeastSlowdown => least_slowdown::place(pool, group, request),
    };
    slot.map(Placement::Slot)
}
