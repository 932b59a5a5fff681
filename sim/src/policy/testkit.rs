//! A pool without an engine, for the rules' unit tests: one group of H200s (whole GPUs under MPS,
//! or MIG slices), a few job classes, a toy performance model, and a [`Tenancy`] kept beside
//! the [`ClusterView`] by [`Fixture::add`].
use std::collections::BTreeMap;

use proptest::prelude::*;

use super::{ClusterView, Demand, GroupKind, Occupant, PlacementRule, Pool, Request, SlotRef};
use super::{Placement, Tenancy};
use crate::hardware::{self, GpuSpec};
use crate::perf::{
    ClassLookup, CoRun, JobClass, Origin, Partition, PerfError, PerfModel, ShareMode, Tenant,
};
use crate::workload::ModelKey;

/// Job classes: (time demand, space demand, memory MiB). Alone rate 100 samples/s each.
pub(super) const CLASSES: [(f64, f64, u64); 4] = [
    (0.2, 0.3, 4_000),
    (0.6, 0.5, 20_000),
    (0.9, 0.9, 60_000),
    (0.4, 1.0, 10_000),
];

/// One group of GPUs as a rule sees it, without an engine.
pub(super) struct Fixture {
    pub(super) view: ClusterView,
    pub(super) gpu: &'static GpuSpec,
    pub(super) mode: ShareMode,
    classes: Vec<JobClass>,
    partitions: Vec<Partition>,
    /// Per slot: (job id, class, minimum speed), in the order they entered.
    tenants: BTreeMap<SlotRef, Vec<(u32, usize, Option<f64>)>>,
    next_job: u32,
}

impl Fixture {
    /// `gpus` whole H200s under MPS, up to `max_jobs` each.
    pub(super) fn whole(gpus: u32, max_jobs: u32, rule: PlacementRule) -> Self {
        let gpu = hardware::gpu("h200").unwrap();
        let kind = GroupKind::Whole {
            memory_mib: (gpu.memory_gib * 1024.0) as u64,
            max_jobs,
        };
        let partitions = vec![Partition::whole(gpu)];
        Self::new(gpu, ShareMode::Mps, kind, gpus, partitions, rule)
    }

    /// `gpus` H200s cut into `layout`, up to `jobs_per_slice` per slice.
    pub(super) fn mig(gpus: u32, layout: &str, jobs_per_slice: u32, rule: PlacementRule) -> Self {
        let gpu = hardware::gpu("h200").unwrap();
        let layout = gpu.parse_mig_layout(layout).unwrap();
        let kind = GroupKind::Mig {
            slice_memory_mib: layout
                .slices
                .iter()
                .map(|s| (s.profile.memory_gib * 1024.0) as u64)
                .collect(),
            slice_sms: layout.slices.iter().map(|s| s.profile.sms).collect(),
            max_jobs: jobs_per_slice,
        };
        let partitions = layout
            .slices
            .iter()
            .map(|s| Partition::slice(gpu, s.profile))
            .collect();
        Self::new(gpu, ShareMode::Mig, kind, gpus, partitions, rule)
    }

    fn new(
        gpu: &'static GpuSpec,
        mode: ShareMode,
        kind: GroupKind,
        gpus: u32,
        partitions: Vec<Partition>,
        rule: PlacementRule,
    ) -> Self {
        let classes = CLASSES
            .iter()
            .enumerate()
            .map(|(i, &(u, s, mib))| JobClass {
                key: ModelKey::new(&format!("m{i}"), 1, 1),
                solo_rate: 100.0,
                time_demand: u,
                space_demand: s,
                contention_demand: s,
                memory_gib: mib as f64 / 1024.0,
                spread: None,
                origin: Origin::Provisional,
            })
            .collect();
        Self {
            view: ClusterView::new(&[(kind, gpus)], rule),
            gpu,
            mode,
            classes,
            partitions,
            tenants: BTreeMap::new(),
            next_job: 0,
        }
    }

    /// Every slot of the group.
    pub(super) fn slots(&self) -> Vec<SlotRef> {
        self.view
            .group_gpus(0)
            .flat_map(|gpu| {
                (0..self.view.slot_count(gpu)).map(move |slot| SlotRef {
                    group: 0,
                    gpu,
                    slot,
                })
            })
            .collect()
    }

    /// Puts a job of `class` into `slot` if it has room; whether it did.
    pub(super) fn add(&mut self, slot: SlotRef, class: usize, min_speed: Option<f64>) -> bool {
        let memory = CLASSES[class].2;
        if !self.view.has_room(slot, memory) {
            return false;
        }
        // Jobs of one class and minimum speed are the same to the model.
        let member =
            super::member_key(class as u64 ^ min_speed.map_or(0, |m| m.to_bits().rotate_left(17)));
        self.view.occupy(slot, memory, member);
        self.tenants
            .entry(slot)
            .or_default()
            .push((self.next_job, class, min_speed));
        self.next_job += 1;
        true
    }

    /// A single-GPU job of `class`.
    pub(super) fn request(&self, class: usize, min_speed: Option<f64>) -> Request<'_> {
        Request {
            demand: Demand {
                memory_mib: CLASSES[class].2,
                gpus: 1,
            },
            tenant: self.tenant_of(class),
            min_speed,
        }
    }

    fn tenant_of(&self, class: usize) -> Tenant<'_> {
        Tenant {
            class: &self.classes[class],
            sm_budget: None,
            gpus: 1,
        }
    }

    /// What `rule` chooses for `request`.
    pub(super) fn place(&self, rule: PlacementRule, request: &Request<'_>) -> Option<SlotRef> {
        let pool = Pool {
            view: &self.view,
            tenancy: self,
            perf: &Toy,
        };
        match super::place(&pool, 0, rule, request)? {
            Placement::Slot(slot) => Some(slot),
            Placement::Gpus(_) => panic!("a single-GPU job got several GPUs"),
        }
    }

    /// What `rule` chooses for `request`, and how many sets it asked the model about.
    pub(super) fn place_counting(
        &self,
        rule: PlacementRule,
        request: &Request<'_>,
    ) -> (Option<SlotRef>, usize) {
        let counting = Counting(std::sync::atomic::AtomicUsize::new(0));
        let pool = Pool {
            view: &self.view,
            tenancy: self,
            perf: &counting,
        };
        let chosen = match super::place(&pool, 0, rule, request) {
            Some(Placement::Slot(slot)) => Some(slot),
            Some(Placement::Gpus(_)) => panic!("a single-GPU job got several GPUs"),
            None => None,
        };
        (chosen, counting.0.into_inner())
    }

    /// The loss of `slot`'s set with `request` added last, computed here from the toy model's
    /// rates (`None` if a member falls below its minimum).
    pub(super) fn loss(&self, slot: SlotRef, request: &Request<'_>) -> Option<f64> {
        let mut tenants: Vec<Tenant<'_>> = Vec::new();
        let mut mins = Vec::new();
        for i in 0..self.tenants_in(slot) {
            let o = self.tenant(slot, i);
            tenants.push(o.tenant);
            mins.push(o.min_speed);
        }
        tenants.push(request.tenant);
        mins.push(request.min_speed);
        let mut rates = vec![0.0; tenants.len()];
        let set = CoRun {
            gpu: self.gpu,
            mode: self.mode,
            partition: &self.partition(slot),
            tenants: &tenants,
        };
        Toy.rates(&set, &mut rates);
        let speeds: Vec<f64> = rates.iter().map(|r| r / 100.0).collect();
        if speeds
            .iter()
            .zip(&mins)
            .any(|(s, m)| m.is_some_and(|m| *s < m))
        {
            return None;
        }
        Some(speeds.iter().map(|s| 1.0 - s).sum())
    }
}

impl Tenancy for Fixture {
    fn sharing(&self, _group: usize) -> (&'static GpuSpec, ShareMode) {
        (self.gpu, self.mode)
    }

    fn partition(&self, slot: SlotRef) -> Partition {
        self.partitions[slot.slot as usize]
    }

    fn tenants_in(&self, slot: SlotRef) -> usize {
        self.tenants.get(&slot).map_or(0, Vec::len)
    }

    fn tenant(&self, slot: SlotRef, i: usize) -> Occupant<'_> {
        let (job, class, min_speed) = self.tenants[&slot][i];
        Occupant {
            job,
            tenant: self.tenant_of(class),
            min_speed,
        }
    }
}

/// A toy model: a job keeps `sm / (1 + 2 sum of its co-runners' time demand x its own space
/// demand)` of its alone rate, `sm` the partition's share of the SMs. Asymmetric and
/// order-independent.
pub(super) struct Toy;

impl PerfModel for Toy {
    fn name(&self) -> &'static str {
        "toy"
    }

    fn lookup(&self) -> &dyn ClassLookup {
        self
    }

    fn rates(&self, set: &CoRun<'_>, out: &mut [f64]) {
        let total: f64 = set.tenants.iter().map(|t| t.class.time_demand).sum();
        for (o, t) in out.iter_mut().zip(set.tenants) {
            let others = total - t.class.time_demand;
            *o = t.class.solo_rate * set.partition.sm_fraction
                / (1.0 + 2.0 * others * t.class.space_demand);
        }
    }
}

/// The toy model, counting the sets it is asked about.
struct Counting(std::sync::atomic::AtomicUsize);

impl PerfModel for Counting {
    fn name(&self) -> &'static str {
        "counting toy"
    }

    fn lookup(&self) -> &dyn ClassLookup {
        &Toy
    }

    fn rates(&self, set: &CoRun<'_>, out: &mut [f64]) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Toy.rates(set, out);
    }
}

/// The toy knows no model: its fixtures hand it classes directly.
impl ClassLookup for Toy {
    fn class(&self, _gpu: &GpuSpec, key: &ModelKey) -> Result<JobClass, PerfError> {
        Err(PerfError::NoProfile {
            gpu: key.to_string(),
            known: String::new(),
        })
    }

    fn origin(&self, _gpu: &GpuSpec) -> Origin {
        Origin::Provisional
    }

    fn footprint_gib(&self, _gpu: &GpuSpec, _mode: ShareMode, class: &JobClass) -> f64 {
        class.memory_gib
    }
}

/// A random filling: (slot pick, class, minimum speed) per attempted job.
pub(super) fn any_filling() -> impl Strategy<Value = Vec<(prop::sample::Index, usize, Option<f64>)>>
{
    prop::collection::vec(
        (
            any::<prop::sample::Index>(),
            0..CLASSES.len(),
            prop::sample::select(vec![None, None, Some(0.3), Some(0.5), Some(0.7)]),
        ),
        0..24,
    )
}

/// The fixture after trying each job of `filling` in the slot it picks.
pub(super) fn filled(
    mut fixture: Fixture,
    filling: &[(prop::sample::Index, usize, Option<f64>)],
) -> Fixture {
    let slots = fixture.slots();
    for (pick, class, min_speed) in filling {
        fixture.add(slots[pick.index(slots.len())], *class, *min_speed);
    }
    fixture
}
