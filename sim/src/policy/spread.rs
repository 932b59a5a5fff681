//! Spread: the least-loaded slot that fits, memory-checked.
//!
//! Load is the number of jobs in the slot, then the number on its GPU (a MIG slice of an idle GPU
//! comes before an empty slice of a busy one; on a whole GPU the two are the same), then the most
//! free memory; ties go to the lowest GPU, then slot. An idle GPU that fits is therefore always
//! taken before a busy one. Exclusive groups hold one job per GPU, so it is the lowest idle GPU.
//!
//! Cost per decision: `O(c log S)` on the view's load index (an ordered set of the group's `S`
//! open slots), `c` the load classes (distinct pairs of job counts) passed over because their
//! freest slot is too small; no call to the performance model. Each job start or end updates the
//! index in `O(k log S)`, `k` the slots of the GPU (1 for a whole GPU).
use super::{ClusterView, Demand, SlotRef};

/// The least-loaded slot of `group` with room for `demand`.
pub(super) fn place(view: &ClusterView, group: usize, demand: Demand) -> Option<SlotRef> {
    view.load_walk(group, demand.memory_mib)?
        .next()
        .map(|load| load.slot)
}

#[cfg(test)]
mod tests {
    use std::cmp::Reverse;

    use proptest::prelude::*;

    use super::super::PlacementRule::{BestFit, Spread};
    use super::super::testkit::{CLASSES, Fixture, any_filling, filled};

    #[test]
    fn an_idle_gpu_comes_before_the_least_loaded_busy_one() {
        let mut f = Fixture::whole(3, 4, Spread);
        let slots = f.slots();
        assert!(f.add(slots[0], 0, None));
        assert!(f.add(slots[1], 0, None));
        assert!(f.add(slots[1], 0, None));
        assert_eq!(f.place(Spread, &f.request(1, None)), Some(slots[2]));
        assert!(f.add(slots[2], 2, None));
        // Now every GPU is busy: the one with fewest jobs, then most free memory.
        assert_eq!(f.place(Spread, &f.request(1, None)), Some(slots[0]));
        let mut best_fit = Fixture::whole(3, 4, BestFit);
        for (slot, class) in [(0, 0), (1, 0), (1, 0)] {
            assert!(best_fit.add(slots[slot], class, None));
        }
        assert_eq!(
            best_fit.place(BestFit, &best_fit.request(1, None)),
            Some(slots[1]),
            "best-fit packs where spread does not"
        );
    }

    #[test]
    fn in_mig_a_slice_of_an_idle_gpu_comes_before_an_empty_slice_of_a_busy_one() {
        let mut f = Fixture::mig(2, "3g.71gb,4g.71gb", 1, Spread);
        let slots = f.slots();
        assert!(f.add(slots[1], 0, None));
        let chosen = f.place(Spread, &f.request(0, None)).unwrap();
        assert_eq!(chosen.gpu, 1, "{chosen:?}");
    }

    fn check_spread(f: &Fixture, class: usize) -> Result<(), TestCaseError> {
        let request = f.request(class, None);
        let memory = CLASSES[class].2;
        let view = &f.view;
        let open: Vec<_> = f
            .slots()
            .into_iter()
            .filter(|&s| view.has_room(s, memory))
            .collect();
        let chosen = f.place(Spread, &request);
        prop_assert_eq!(chosen.is_some(), !open.is_empty());
        let Some(chosen) = chosen else {
            return Ok(());
        };
        prop_assert!(open.contains(&chosen));
        if view.jobs_on_gpu(chosen.gpu) > 0 {
            let idle = open.iter().find(|s| view.jobs_on_gpu(s.gpu) == 0);
            prop_assert!(idle.is_none(), "{:?} left idle for {:?}", idle, chosen);
        }
        let key = |s: &super::SlotRef| {
            (
                view.jobs_in(*s),
                view.jobs_on_gpu(s.gpu),
                Reverse(view.free_mib(*s)),
                s.gpu,
                s.slot,
            )
        };
        prop_assert_eq!(Some(chosen), open.iter().min_by_key(|s| key(s)).copied());
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

        #[test]
        fn spread_never_leaves_an_idle_gpu_for_a_busy_one(
            filling in any_filling(),
            gpus in 1u32..6,
            max_jobs in 1u32..5,
            class in 0..CLASSES.len(),
        ) {
            check_spread(&filled(Fixture::whole(gpus, max_jobs, Spread), &filling), class)?;
        }

        #[test]
        fn spread_in_mig_never_leaves_an_idle_gpu_for_a_busy_one(
            filling in any_filling(),
            gpus in 1u32..4,
            jobs_per_slice in 1u32..3,
            layout in prop::sample::select(vec!["3g.71gb,4g.71gb", "7x1g.18gb", "1g.18gb,2g.35gb,4g.71gb"]),
            class in 0..CLASSES.len(),
        ) {
            let f = filled(Fixture::mig(gpus, layout, jobs_per_slice, Spread), &filling);
            check_spread(&f, class)?;
        }
    }
}
