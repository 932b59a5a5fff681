//! Least slowdown: the slot where the performance model predicts the smallest loss of the whole
//! set the job would join, never one where a job would fall below its minimum speed.
//!
//! For each slot with room, the would-be set is the slot's jobs in the order they entered it and
//! the new job last; [`PerfModel::rates`](crate::perf::PerfModel::rates) gives each member's rate
//! there, and its speed is that rate over its alone rate (`class.solo_rate` times its GPUs: the
//! rate its slowdown in the results is measured against, so a slow MIG slice counts as loss). The
//! loss of the set is `sum of (1 - speed)`, the new job included. A slot is a candidate only if
//! every member keeps at least its own `min_speed`. The rule takes the candidate of least loss;
//! ties go to the lowest GPU, then slot.
//!
//! Cost per decision: one `rates` call for each distinct set of a whole-GPU group that has the
//! memory (the view orders its slots by the set they hold, so the walk asks the lowest GPU
//! holding each set and skips the others: `O(d log S)` for `d` distinct sets, not `O(S)`), one
//! for each open MIG slot with the memory, and one for each distinct empty partition (every idle
//! whole GPU of a group holds the same set, so only the lowest is asked; empty MIG slices are
//! asked once per slice shape). The
//! kernel model memoizes its replays per distinct set, so each set costs one replay per run (and
//! the engine's later re-rate of the chosen set is a memo hit); the parametric model is closed
//! form (a few Newton steps), as cheap as a lookup would be, and is not cached.
use super::{Pool, Request, SlotRef};
use crate::perf::{CoRun, Partition, Tenant};

/// The slot of least predicted loss in `group` for `request`.
pub(super) fn place(pool: &Pool<'_>, group: usize, request: &Request<'_>) -> Option<SlotRef> {
    let whole = matches!(pool.view.group_kind(group), super::GroupKind::Whole { .. });
    let mut walk = pool.view.load_walk(group, request.demand.memory_mib)?;
    let mut set = Scratch::default();
    // Losses of the job alone on each empty partition seen in this decision.
    let mut alone: Vec<(Partition, Option<f64>)> = Vec::new();
    let mut best: Option<(f64, SlotRef)> = None;
    while let Some(load) = walk.next() {
        let loss = if load.jobs == 0 {
            if whole {
                // Idle whole GPUs hold the same set; this one has the lowest index.
                walk.skip_class(&load);
            }
            let partition = pool.tenancy.partition(load.slot);
            match alone.iter().find(|(p, _)| *p == partition) {
                Some(&(_, loss)) => loss,
                None => {
                    let loss = set.assess(pool, group, load.slot, request);
                    alone.push((partition, loss));
                    loss
                }
            }
        } else {
            if whole {
                // Other whole GPUs holding this same set would lose as much; this one, the
                // lowest of them, wins their ties.
                walk.skip_set(&load);
            }
            set.assess(pool, group, load.slot, request)
        };
        let Some(loss) = loss else { continue };
        let better = best.is_none_or(|(l, s)| {
            loss.total_cmp(&l)
                .then((load.slot.gpu, load.slot.slot).cmp(&(s.gpu, s.slot)))
                .is_lt()
        });
        if better {
            best = Some((loss, load.slot));
        }
    }
    best.map(|(_, slot)| slot)
}

/// Buffers for one decision's would-be sets.
#[derive(Default)]
struct Scratch<'a> {
    tenants: Vec<Tenant<'a>>,
    min_speeds: Vec<Option<f64>>,
    rates: Vec<f64>,
}

impl<'a> Scratch<'a> {
    /// The loss of the set `slot` would hold with `request` in it, or `None` if a member would
    /// fall below its minimum speed.
    fn assess(
        &mut self,
        pool: &Pool<'a>,
        group: usize,
        slot: SlotRef,
        request: &Request<'a>,
    ) -> Option<f64> {
        let tenancy = pool.tenancy;
        self.tenants.clear();
        self.min_speeds.clear();
        for i in 0..tenancy.tenants_in(slot) {
            let occupant = tenancy.tenant(slot, i);
            self.tenants.push(occupant.tenant);
            self.min_speeds.push(occupant.min_speed);
        }
        self.tenants.push(request.tenant);
        self.min_speeds.push(request.min_speed);
        self.rates.clear();
        self.rates.resize(self.tenants.len(), 0.0);
        let (gpu, mode) = tenancy.sharing(group);
        let partition = tenancy.partition(slot);
        pool.perf.rates(
            &CoRun {
                gpu,
                mode,
                partition: &partition,
                tenants: &self.tenants,
            },
            &mut self.rates,
        );
        set_loss(&self.tenants, &self.min_speeds, &self.rates)
    }
}

/// `sum of (1 - rate / alone rate)` over a set, in its order, or `None` if a member's speed is
/// below its minimum (or not a number).
fn set_loss(tenants: &[Tenant<'_>], min_speeds: &[Option<f64>], rates: &[f64]) -> Option<f64> {
    let mut loss = 0.0;
    for ((tenant, min_speed), rate) in tenants.iter().zip(min_speeds).zip(rates) {
        let speed = rate / (tenant.class.solo_rate * f64::from(tenant.gpus));
        if min_speed.is_some_and(|min| speed < min || speed.is_nan()) {
            return None;
        }
        loss += 1.0 - speed;
    }
    Some(loss)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::PlacementRule::LeastSlowdown;
    use super::super::testkit::{CLASSES, Fixture, any_filling, filled};

    #[test]
    fn a_tenants_minimum_speed_sends_the_job_elsewhere() {
        // Class 0 beside class 2 keeps 1 / (1 + 2 x 0.9 x 0.3) = 0.65 of its speed: the pair's
        // loss (0.61) is below that of two class-2 jobs (1.24), unless class 0 needs 0.95.
        for (min_speed, expect) in [(None, 0), (Some(0.95), 1)] {
            let mut f = Fixture::whole(2, 4, LeastSlowdown);
            let slots = f.slots();
            assert!(f.add(slots[0], 0, min_speed));
            assert!(f.add(slots[1], 2, None));
            let request = f.request(2, None);
            assert_eq!(
                f.place(LeastSlowdown, &request),
                Some(slots[expect]),
                "min_speed {min_speed:?}"
            );
        }
    }

    #[test]
    fn the_jobs_own_minimum_speed_can_leave_it_waiting() {
        let mut f = Fixture::whole(2, 4, LeastSlowdown);
        let slots = f.slots();
        assert!(f.add(slots[0], 2, None));
        assert!(f.add(slots[1], 2, None));
        assert_eq!(
            f.place(LeastSlowdown, &f.request(1, Some(0.5))),
            Some(slots[0])
        );
        assert_eq!(f.place(LeastSlowdown, &f.request(1, Some(0.6))), None);
    }

    #[test]
    fn an_idle_gpu_and_the_larger_slice_cost_least() {
        let mut f = Fixture::whole(3, 4, LeastSlowdown);
        let slots = f.slots();
        assert!(f.add(slots[0], 0, None));
        assert_eq!(f.place(LeastSlowdown, &f.request(0, None)), Some(slots[1]));
        let f = Fixture::mig(1, "1g.18gb,2g.35gb,4g.71gb", 1, LeastSlowdown);
        let chosen = f.place(LeastSlowdown, &f.request(0, None)).unwrap();
        assert_eq!(chosen.slot, 2, "the 4g slice slows a job least");
    }

    #[test]
    fn gpus_holding_the_same_set_are_asked_about_once_and_the_lowest_wins() {
        // Eight GPUs: 0, 2, 5 hold {class 1, class 3} (2 and 5 with the jobs entered the other
        // way round), 1 and 6 hold {class 2}, 3 holds {class 1}, 4 and 7 are idle.
        let mut f = Fixture::whole(8, 4, LeastSlowdown);
        let slots = f.slots();
        for (gpu, classes) in [
            (0, vec![1, 3]),
            (1, vec![2]),
            (2, vec![3, 1]),
            (3, vec![1]),
            (5, vec![3, 1]),
            (6, vec![2]),
        ] {
            for class in classes {
                assert!(f.add(slots[gpu], class, None));
            }
        }
        let (chosen, asked) = f.place_counting(LeastSlowdown, &f.request(0, None));
        // Distinct sets: {1, 3}, {2}, {1} and the idle GPU: four questions, not seven.
        assert_eq!(asked, 4);
        // Worked by hand with the toy (keep sm / (1 + 2 x others' time x own space)): alone on
        // an idle GPU the job loses nothing, so the lowest idle GPU, 4, wins.
        assert_eq!(chosen, Some(slots[4]));
        // With no idle GPU left, class 0 joins {class 1} (loss 0.431) rather than {class 2}
        // (0.615) or {class 1, class 3} (1.365): GPU 3.
        assert!(f.add(slots[4], 2, None) && f.add(slots[7], 2, None));
        let (chosen, asked) = f.place_counting(LeastSlowdown, &f.request(0, None));
        assert_eq!((chosen, asked), (Some(slots[3]), 3));
        // A second {class 1} on GPU 7's place: GPUs 3 and 7 now tie, and 3 is the lower.
        let mut g = Fixture::whole(8, 4, LeastSlowdown);
        for gpu in [7, 3] {
            assert!(g.add(slots[gpu], 1, None));
        }
        for gpu in [0, 1, 2, 4, 5, 6] {
            assert!(g.add(slots[gpu], 2, None));
        }
        assert_eq!(
            g.place_counting(LeastSlowdown, &g.request(0, None)),
            (Some(slots[3]), 2)
        );
    }

    fn check_least_loss(
        f: &Fixture,
        class: usize,
        min_speed: Option<f64>,
    ) -> Result<(), TestCaseError> {
        let request = f.request(class, min_speed);
        let memory = CLASSES[class].2;
        let feasible: Vec<_> = f
            .slots()
            .into_iter()
            .filter(|&s| f.view.has_room(s, memory))
            .filter_map(|s| f.loss(s, &request).map(|loss| (loss, s)))
            .collect();
        let chosen = f.place(LeastSlowdown, &request);
        prop_assert_eq!(chosen.is_some(), !feasible.is_empty());
        let Some(chosen) = chosen else {
            return Ok(());
        };
        let loss = f.loss(chosen, &request);
        prop_assert!(
            loss.is_some(),
            "{:?} puts a job below its minimum speed",
            chosen
        );
        prop_assert!(f.view.has_room(chosen, memory));
        let loss = loss.unwrap();
        for &(other, slot) in &feasible {
            prop_assert!(
                loss <= other + 1e-12,
                "{:?} (loss {}) chosen over {:?} (loss {})",
                chosen,
                loss,
                slot,
                other
            );
            if (loss - other).abs() <= 1e-12 {
                prop_assert!(
                    (chosen.gpu, chosen.slot) <= (slot.gpu, slot.slot),
                    "tie not to the lowest"
                );
            }
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

        #[test]
        fn least_slowdown_never_chooses_a_higher_loss_than_another_that_fits(
            filling in any_filling(),
            gpus in 1u32..6,
            max_jobs in 1u32..5,
            class in 0..CLASSES.len(),
            min_speed in prop::sample::select(vec![None, Some(0.4), Some(0.8)]),
        ) {
            let f = filled(Fixture::whole(gpus, max_jobs, LeastSlowdown), &filling);
            check_least_loss(&f, class, min_speed)?;
        }

        #[test]
        fn least_slowdown_in_mig_never_chooses_a_higher_loss_than_another_that_fits(
            filling in any_filling(),
            gpus in 1u32..4,
            jobs_per_slice in 1u32..3,
            layout in prop::sample::select(vec!["3g.71gb,4g.71gb", "7x1g.18gb", "1g.18gb,2g.35gb,4g.71gb"]),
            class in 0..CLASSES.len(),
            min_speed in prop::sample::select(vec![None, Some(0.1), Some(0.4)]),
        ) {
            let f = filled(Fixture::mig(gpus, layout, jobs_per_slice, LeastSlowdown), &filling);
            check_least_loss(&f, class, min_speed)?;
        }
    }
}
