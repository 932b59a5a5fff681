//! First-fit packing: the lowest-numbered GPU (or slice) with room, memory-checked.
use super::{ClusterView, Demand, GroupKind, SlotRef};

/// Lowest GPU index with room for `demand`; in a MIG group, lowest (GPU, slice).
pub(super) fn place(view: &ClusterView, group: usize, demand: Demand) -> Option<SlotRef> {
    let index = &view.groups[group];
    let group_id = group as u32;
    match &index.kind {
        GroupKind::Whole { max_jobs: 1, .. } => super::exclusive::place(view, group, demand),
        GroupKind::Whole { .. } => {
            let tree = index.max_free.as_ref()?;
            let local = tree.leftmost_at_least(demand.memory_mib as i64)?;
            Some(SlotRef {
                group: group_id,
                gpu: index.first_gpu + local as u32,
                slot: 0,
            })
        }
        GroupKind::Mig { .. } => (0..index.open_slices.len())
            .filter_map(|slot| first_open(view, group, slot, demand))
            .min_by_key(|s| (s.gpu, s.slot)),
    }
}

/// The first GPU whose slice at position `slot` has room for `demand`.
pub(super) fn first_open(
    view: &ClusterView,
    group: usize,
    slot: usize,
    demand: Demand,
) -> Option<SlotRef> {
    let index = &view.groups[group];
    let GroupKind::Mig {
        slice_memory_mib, ..
    } = &index.kind
    else {
        return None;
    };
    if slice_memory_mib[slot] < demand.memory_mib {
        return None;
    }
    view.open_slots(group, slot)
        .find(|s| view.free_mib(*s) >= demand.memory_mib)
}
