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

/// In which order waiting jobs are considered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueOrder {
    /// First come, first served.
    Fifo,
    /// Shortest exclusive duration first (durations are known in simulation).
    ShortestFirst,
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
#[derive(Clone, Copy, Debug, PartialEq)]
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
}

impl Default for Policy {
    fn default() -> Self {
        Self {
            order: QueueOrder::Fifo,
            backfill: false,
            backfill_depth: 64,
            placement: PlacementRule::BestFit,
            max_jobs_per_gpu: 4,
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
