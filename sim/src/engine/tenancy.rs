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

/// The jobs computing in one partition, in the order they joined: up to [`Tenants::INLINE`] of
/// them held in place (the usual case: one under exclusive use, a few when shared), more in a
/// vector. Reading a partition's tenants then costs no look-up beyond the partition itself.
#[derive(Clone, Debug, Default)]
pub(super) struct Tenants {
    len: u32,
    inline: [u32; Tenants::INLINE],
    /// Every tenant, once there are more than `INLINE`.
    more: Vec<u32>,
}

impl Tenants {
    const INLINE: usize = 4;

    pub(super) fn push(&mut self, job: u32) {
        let len = self.len as usize;
        if len < Self::INLINE {
            self.inline[len] = job;
        } else {
            if len == Self::INLINE {
                self.more.clear();
                self.more.extend_from_slice(&self.inline);
            }
            self.more.push(job);
        }
        self.len += 1;
    }

    /// Takes `job` out, if it is a tenant; the others keep their order.
    pub(super) fn remove_job(&mut self, job: u32) {
        let Some(pos) = self.iter().position(|&t| t == job) else {
            return;
        };
        let len = self.len as usize;
        if len <= Self::INLINE {
            self.inline.copy_within(pos + 1..len, pos);
        } else {
            self.more.remove(pos);
            if len - 1 == Self::INLINE {
                self.inline.copy_from_slice(&self.more);
            }
        }
        self.len -= 1;
    }
}

impl std::ops::Deref for Tenants {
    type Target = [u32];
    fn deref(&self) -> &[u32] {
        let len = self.len as usize;
        if len <= Self::INLINE {
            &self.inline[..len]
        } else {
            &self.more
        }
    }
}

impl<'t> IntoIterator for &'t Tenants {
    type Item = &'t u32;
    type IntoIter = std::slice::Iter<'t, u32>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::Tenants;

    /// Tenants keep their order through growing past the inline ones and shrinking back, as a
    /// vector does.
    #[test]
    fn tenants_behave_as_a_vector() {
        let mut t = Tenants::default();
        let mut v: Vec<u32> = Vec::new();
        let steps: [(bool, u32); 16] = [
            (true, 1),
            (true, 2),
            (true, 3),
            (true, 4),
            (true, 5),
            (true, 6),
            (false, 2),
            (false, 6),
            (true, 7),
            (false, 1),
            (false, 9),
            (false, 5),
            (false, 3),
            (true, 8),
            (false, 4),
            (false, 7),
        ];
        for (add, job) in steps {
            if add {
                t.push(job);
                v.push(job);
            } else {
                t.remove_job(job);
                if let Some(pos) = v.iter().position(|&x| x == job) {
                    v.remove(pos);
                }
            }
            assert_eq!(&t[..], &v[..], "after {add} {job}");
        }
        assert_eq!(&t[..], &[8]);
    }
}
