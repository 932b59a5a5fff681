//! The engine's side of the placement seam: what a rule may read of who runs where
//! ([`Tenancy`]), and the [`Request`] for a job in one group.
use super::Simulation;
use crate::hardware::GpuSpec;
use crate::perf::{Partition, ShareMode, Tenant};
use crate::policy::{Demand, Occupant, Request, SlotRef, Tenancy};
use crate::workload::MinSpeed;

impl Simulation<'_> {
    /// Job `job` as the performance model sees it in group `group` (it must have a class there).
    pub(super) fn tenant_in(&self, job: u32, group: usize) -> Tenant<'_> {
        let class = self.class_of(job, group);
        Tenant {
            class: &self.classes[class as usize],
            sm_budget: self.groups[group].sm_budget,
            gpus: self.gpus_of(job),
        }
    }

    /// The jobs a placement rule sees in `slot`: its tenants (computing), then the jobs holding
    /// it while they checkpoint or restore, less those a preemption probe has taken off.
    fn holders(&self, slot: SlotRef) -> impl Iterator<Item = u32> + '_ {
        let pausing_here = self
            .pausing
            .iter()
            .copied()
            .filter(move |&job| self.holds(job, slot));
        self.parts[self.part_index(slot)]
            .tenants
            .iter()
            .copied()
            .chain(pausing_here)
            .filter(|job| !self.probe_released.contains(job))
    }

    /// What a placement rule is asked to place: `job` in `group` (where it has a class).
    pub(super) fn request(&self, job: u32, group: usize) -> Request<'_> {
        let kind = self.kind_of(job);
        Request {
            demand: Demand {
                memory_mib: self.memory_of(job, group),
                gpus: kind.gpus,
            },
            tenant: self.tenant_in(job, group),
            min_speed: kind.min_speed.map(MinSpeed::get),
        }
    }
}

impl Tenancy for Simulation<'_> {
    fn sharing(&self, group: usize) -> (&'static GpuSpec, ShareMode) {
        let g = &self.groups[group];
        (g.spec, g.mode)
    }

    fn partition(&self, slot: SlotRef) -> Partition {
        self.parts[self.part_index(slot)].partition
    }

    fn tenants_in(&self, slot: SlotRef) -> usize {
        if self.probe_released.is_empty() && self.pausing.is_empty() {
            return self.parts[self.part_index(slot)].tenants.len();
        }
        self.holders(slot).count()
    }

    fn tenant(&self, slot: SlotRef, i: usize) -> Occupant<'_> {
        let job = if self.probe_released.is_empty() && self.pausing.is_empty() {
            self.parts[self.part_index(slot)].tenants[i]
        } else {
            self.holders(slot).nth(i).expect("i < tenants_in")
        };
        Occupant {
            job,
            tenant: self.tenant_in(job, slot.group as usize),
            min_speed: self.kind_of(job).min_speed.map(MinSpeed::get),
        }
    }
}
