//! Best-fit packing: the GPU (or slice) left with the least free memory, memory-checked.
use super::{ClusterView, Demand, GroupKind, SlotRef};

/// Smallest free memory that still holds `demand` (lowest GPU on ties); in a MIG group, the
/// smallest slice (by memory, then SMs) that fits, lowest GPU first.
pub(super) fn place(view: &ClusterView, group: usize, demand: Demand) -> Option<SlotRef> {
    let index = &view.groups[group];
    match &index.kind {
        GroupKind::Whole { max_jobs: 1, .. } => super::exclusive::place(view, group, demand),
        GroupKind::Whole { .. } => {
            let by_free = index.by_free.as_ref()?;
            let &(_, gpu) = by_free.range((demand.memory_mib, 0)..).next()?;
            Some(SlotRef {
                group: group as u32,
                gpu,
                slot: 0,
            })
        }
        GroupKind::Mig { .. } => index
            .slices_small_first
            .iter()
            .find_map(|&slot| super::first_fit::first_open(view, group, slot, demand)),
    }
}
