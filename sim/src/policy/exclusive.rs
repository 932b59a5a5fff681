//! Exclusive placement: a job gets an idle GPU (or an empty MIG slice) to itself.
use super::{ClusterView, Demand, GroupKind, SlotRef};

/// The lowest-numbered idle GPU, or in a MIG group the first empty slice that fits.
pub(super) fn place(view: &ClusterView, group: usize, demand: Demand) -> Option<SlotRef> {
    let index = &view.groups[group];
    let group_id = group as u32;
    match &index.kind {
        GroupKind::Whole { memory_mib, .. } => {
            if demand.memory_mib > *memory_mib {
                return None;
            }
            let gpu = index.idle.first()?;
            Some(SlotRef {
                group: group_id,
                gpu,
                slot: 0,
            })
        }
        GroupKind::Mig { .. } => first_empty_slice(view, group, demand),
    }
}

/// In a MIG group: the first (GPU, slice) in index order whose slice is empty and big enough.
fn first_empty_slice(view: &ClusterView, group: usize, demand: Demand) -> Option<SlotRef> {
    let index = &view.groups[group];
    (0..index.open_slices.len())
        .filter_map(|slot| {
            view.open_slots(group, slot)
                .find(|s| view.jobs_in(*s) == 0 && view.capacity_mib(*s) >= demand.memory_mib)
        })
        .min_by_key(|s| (s.gpu, s.slot))
}

/// `count` idle GPUs of a whole-GPU group, lowest indices first.
pub(super) fn idle_gpus(view: &ClusterView, group: usize, count: u32) -> Option<Vec<u32>> {
    let index = &view.groups[group];
    if !matches!(index.kind, GroupKind::Whole { .. }) || index.idle.len() < count as usize {
        return None;
    }
    Some(index.idle.iter().take(count as usize).collect())
}
