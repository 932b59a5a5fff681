//! The discrete-event engine: fluid job progress, one pending completion per GPU.
#![doc = include_str!("README.md")]
mod heap;
mod power;
mod setup;
mod tenancy;

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap};
use std::ops::Bound::{Excluded, Unbounded};

use crate::hardware::{GpuSpec, MigSlice};
use crate::metrics::{JobOutcome, RunRecord, TimelineRow};
use crate::perf::{JobClass, Partition, PerfModel, ShareMode, Tenant};
use crate::policy::{self, ClusterView, Placement, Policy, Pool, QueueOrder, SlotRef};
use crate::workload::Job;
use heap::Event;
pub use power::power_mode;
pub use setup::{Cluster, DynamicMig, EngineError, GpuGroup, SimConfig, Unplaceable};
use setup::{slice_part, slot_capacity_mib};

/// Co-located sets up to this size are passed to the performance model from the stack.
const INLINE_TENANTS: usize = 8;

/// A job's place in the life cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Pending,
    Queued,
    Running,
    Done,
    Skipped,
}

/// No rate integral is kept: a job's mean rate is its samples over `end - start` (see
/// [`crate::metrics::slowdown_of`]).
#[derive(Clone, Debug)]
struct JobState {
    phase: Phase,
    remaining: f64,
    rate: f64,
    last_update: f64,
    start: f64,
    end: f64,
    /// Where it was placed (a multi-GPU job: its first GPU's slot), `None` until it starts;
    /// kept after it ends, for its outcome.
    slot: Option<SlotRef>,
    /// Every GPU of a multi-GPU job (empty for single-GPU jobs).
    gpus: Vec<u32>,
    group: u32,
    memory_mib: u64,
    /// The MIG slice it ran in, kept because the slot may be re-cut after it ends.
    slice: Option<MigSlice>,
    /// A dynamic-MIG re-cut is under way for it.
    awaits_recut: bool,
}

#[derive(Clone, Debug)]
struct PartState {
    partition: Partition,
    slice: Option<MigSlice>,
    tenants: Vec<u32>,
}

#[derive(Clone, Debug)]
struct GpuState {
    group: u32,
    first_part: u32,
    parts: u32,
    version: u32,
}

#[derive(Clone, Debug)]
struct GroupState {
    spec: &'static GpuSpec,
    mode: ShareMode,
    sm_budget: Option<f64>,
    dynamic: Option<DynamicMig>,
}

/// One simulation: owns every piece of state in dense vectors (no shared pointers), so it is
/// `Send` and a sweep can run many side by side.
pub struct Simulation<'a> {
    perf: &'a dyn PerfModel,
    policy: Policy,
    jobs: &'a [Job],
    /// Jobs in arrival order (arrival, then input index).
    arrivals: Vec<u32>,
    cursor: usize,
    groups: Vec<GroupState>,
    gpus: Vec<GpuState>,
    parts: Vec<PartState>,
    state: Vec<JobState>,
    /// Job classes, and per (job, group) the class index (u32::MAX = cannot run there).
    classes: Vec<JobClass>,
    job_class: Vec<u32>,
    job_memory: Vec<u64>,
    view: ClusterView,
    /// Waiting jobs as (policy key, arrival rank); ties go to the earlier arrival.
    queue: BTreeSet<(u64, u32)>,
    heap: BinaryHeap<Reverse<Event>>,
    seq: u64,
    now: f64,
    events: u64,
    busy_gpus: u32,
    running: u32,
    memory_used_mib: u64,
    timeline: Vec<TimelineRow>,
    timeline_every_s: f64,
    scratch_rates: Vec<f64>,
    scratch_ids: Vec<u32>,
    completed: u64,
    /// Dynamic-MIG re-cuts done.
    reconfigurations: u64,
    /// Jobs whose re-cut is under way (their `awaits_recut` is set), cleared when one lands.
    awaiting_recut: Vec<u32>,
    /// Energy bookkeeping (`power.rs`); `None` without profiles to read power from.
    meter: Option<power::Meter>,
}

/// Relative width of one instant: events closer than this happen together, so rounding in
/// `remaining / rate` never decides whether a job finishes before or after an arrival.
pub const SAME_INSTANT: f64 = 1e-10;

/// The last time that still belongs to the instant `t`.
pub fn same_instant(t: f64) -> f64 {
    t + SAME_INSTANT * t.abs().max(1.0)
}

/// Called every few thousand completions with (finished jobs, all jobs).
pub type Progress<'p> = &'p mut dyn FnMut(u64, u64);

impl<'a> Simulation<'a> {
    /// Runs the simulation to the end and returns what happened.
    pub fn run(
        config: &'a SimConfig,
        progress: Option<Progress<'_>>,
    ) -> Result<RunRecord, EngineError> {
        let mut sim = setup::build(config)?;
        sim.drive(progress)?;
        Ok(sim.finish(config))
    }

    fn drive(&mut self, mut progress: Option<Progress<'_>>) -> Result<(), EngineError> {
        let total = self.jobs.len() as u64;
        let mut reported = 0;
        while let Some(time) = self.next_time() {
            debug_assert!(time >= self.now, "time went back: {time} < {}", self.now);
            self.now = self.now.max(time);
            self.handle_events_until(same_instant(time))?;
            self.schedule()?;
            self.record_timeline();
            let due = self.completed >= reported + 4096 || self.completed == total;
            if let Some(report) = progress.as_mut().filter(|_| due) {
                reported = self.completed;
                report(self.completed, total);
            }
        }
        Ok(())
    }

    /// The time of the next arrival or live completion.
    fn next_time(&mut self) -> Option<f64> {
        self.drop_stale_events();
        let arrival = self
            .arrivals
            .get(self.cursor)
            .map(|&j| self.jobs[j as usize].arrival_s);
        let completion = self.heap.peek().map(|Reverse(e)| e.time);
        match (arrival, completion) {
            (Some(a), Some(c)) => Some(a.min(c)),
            (a, c) => a.or(c),
        }
    }

    fn drop_stale_events(&mut self) {
        while let Some(Reverse(event)) = self.heap.peek() {
            if event.recut.is_some() || self.gpus[event.gpu as usize].version == event.version {
                return;
            }
            self.heap.pop();
        }
    }

    /// Completions first (they free room), then arrivals, all at `time`.
    /// Events up to `horizon` form one instant; `now` moves to each as it is handled, so a job
    /// never starts before it arrives.
    fn handle_events_until(&mut self, horizon: f64) -> Result<(), EngineError> {
        while let Some(Reverse(event)) = self.heap.peek().copied() {
            if event.time > horizon {
                break;
            }
            self.heap.pop();
            if let Some(layout) = event.recut {
                self.events += 1;
                self.now = self.now.max(event.time);
                self.apply_recut(event.gpu, layout);
            } else if self.gpus[event.gpu as usize].version == event.version {
                self.events += 1;
                self.now = self.now.max(event.time);
                self.complete_on(event.gpu)?;
            }
        }
        while let Some(&job) = self.arrivals.get(self.cursor) {
            let arrival = self.jobs[job as usize].arrival_s;
            if arrival > horizon {
                break;
            }
            self.now = self.now.max(arrival);
            let rank = self.cursor as u32;
            self.cursor += 1;
            self.events += 1;
            self.enqueue(job, rank);
        }
        Ok(())
    }

    fn enqueue(&mut self, job: u32, rank: u32) {
        let state = &mut self.state[job as usize];
        if state.phase == Phase::Skipped {
            return;
        }
        state.phase = Phase::Queued;
        let key = match self.policy.order {
            QueueOrder::Fifo => 0,
            QueueOrder::ShortestFirst => self.exclusive_duration(job).to_bits(),
        };
        self.queue.insert((key, rank));
    }

    /// Seconds the job takes alone on the first group that can run it.
    fn exclusive_duration(&self, job: u32) -> f64 {
        let n_groups = self.groups.len();
        let j = &self.jobs[job as usize];
        (0..n_groups)
            .map(|g| self.job_class[job as usize * n_groups + g])
            .find(|&c| c != u32::MAX)
            .map_or(f64::MAX, |c| {
                j.samples / (self.classes[c as usize].solo_rate * f64::from(j.gpus))
            })
    }

    /// Finishes every job on `gpu` whose completion time has come, then re-rates the GPU.
    fn complete_on(&mut self, gpu: u32) -> Result<(), EngineError> {
        let horizon = same_instant(self.now);
        self.scratch_ids.clear();
        let range = self.part_range(gpu);
        for part in range.clone() {
            for &job in &self.parts[part].tenants {
                let s = &self.state[job as usize];
                if s.last_update + s.remaining / s.rate <= horizon && self.is_lead(job, gpu) {
                    self.scratch_ids.push(job);
                }
            }
        }
        let finished = std::mem::take(&mut self.scratch_ids);
        for &job in &finished {
            self.finish_job(job);
        }
        self.scratch_ids = finished;
        self.rerate(gpu)
    }

    fn is_lead(&self, job: u32, gpu: u32) -> bool {
        self.state[job as usize].slot.is_some_and(|s| s.gpu == gpu)
    }

    fn finish_job(&mut self, job: u32) {
        let now = self.now;
        let (slot, gpus, memory) = {
            let s = &mut self.state[job as usize];
            s.phase = Phase::Done;
            s.remaining = 0.0;
            s.end = now;
            (
                s.slot.expect("running job has a slot"),
                std::mem::take(&mut s.gpus),
                s.memory_mib,
            )
        };
        self.completed += 1;
        self.running -= 1;
        if gpus.is_empty() {
            self.leave(job, slot, memory);
        } else {
            for &g in &gpus {
                let part = SlotRef {
                    group: slot.group,
                    gpu: g,
                    slot: 0,
                };
                self.leave(job, part, memory);
                self.view.set_locked(g, false);
            }
            self.state[job as usize].gpus = gpus;
        }
    }

    fn leave(&mut self, job: u32, slot: SlotRef, memory: u64) {
        self.meter_leave(job, slot.gpu);
        let part = self.part_index(slot);
        let tenants = &mut self.parts[part].tenants;
        if let Some(pos) = tenants.iter().position(|&t| t == job) {
            tenants.remove(pos);
        }
        self.view.release(slot, memory);
        self.memory_used_mib -= memory;
        if self.view.jobs_on_gpu(slot.gpu) == 0 {
            self.busy_gpus -= 1;
            self.gpus[slot.gpu as usize].version += 1;
        }
    }

    /// One scheduling pass over the queue in policy order. Without backfill it stops at the
    /// first job that cannot start; with backfill it passes over up to `backfill_depth` such
    /// jobs (greedy, no reservations).
    fn schedule(&mut self) -> Result<(), EngineError> {
        let mut started = std::mem::take(&mut self.scratch_ids);
        started.clear();
        let allowed_misses = if self.policy.backfill {
            self.policy.backfill_depth.max(1)
        } else {
            1
        };
        let mut misses = 0;
        let mut after: Option<(u64, u32)> = None;
        loop {
            let next = match after {
                None => self.queue.first().copied(),
                Some(key) => self.queue.range((Excluded(key), Unbounded)).next().copied(),
            };
            let Some((key, rank)) = next else { break };
            let job = self.arrivals[rank as usize];
            match self.find_placement(job) {
                Some((group, placement)) => {
                    self.queue.remove(&(key, rank));
                    self.start(job, group, placement)?;
                    started.push(self.state[job as usize].slot.map_or(0, |s| s.gpu));
                }
                None => {
                    self.try_recut(job);
                    misses += 1;
                    if misses >= allowed_misses {
                        break;
                    }
                    after = Some((key, rank));
                }
            }
        }
        started.sort_unstable();
        started.dedup();
        for &gpu in &started {
            self.rerate(gpu)?;
        }
        self.scratch_ids = started;
        Ok(())
    }

    /// The first group (in cluster order) whose placement rule finds the job a place now.
    fn find_placement(&self, job: u32) -> Option<(u32, Placement)> {
        let n_groups = self.groups.len();
        let pool = Pool {
            view: &self.view,
            tenancy: self,
            perf: self.perf,
        };
        (0..n_groups).find_map(|group| {
            if self.job_class[job as usize * n_groups + group] == u32::MAX {
                return None;
            }
            let request = self.request(job, group);
            policy::place(&pool, group, self.policy.placement, &request).map(|p| (group as u32, p))
        })
    }

    /// Applies a placement after checking it: memory, room, and idle GPUs for multi-GPU jobs.
    fn start(&mut self, job: u32, group: u32, placement: Placement) -> Result<(), EngineError> {
        let n_groups = self.groups.len();
        let memory = self.job_memory[job as usize * n_groups + group as usize];
        // A single slot is borrowed, not collected: this runs once per job start.
        let gang: Vec<SlotRef>;
        let slots: &[SlotRef] = match &placement {
            Placement::Slot(slot) => std::slice::from_ref(slot),
            Placement::Gpus(gpus) => {
                gang = gpus
                    .iter()
                    .map(|&gpu| SlotRef {
                        group,
                        gpu,
                        slot: 0,
                    })
                    .collect();
                &gang
            }
        };
        for slot in slots {
            let idle_needed = matches!(placement, Placement::Gpus(_));
            if !self.view.has_room(*slot, memory)
                || (idle_needed && self.view.jobs_on_gpu(slot.gpu) > 0)
            {
                return Err(EngineError::PolicyBroke {
                    job: self.jobs[job as usize].name.clone(),
                    gpu: slot.gpu,
                });
            }
        }
        self.advance_gpus(slots);
        for slot in slots {
            self.meter_flush(slot.gpu);
            if self.view.jobs_on_gpu(slot.gpu) == 0 {
                self.busy_gpus += 1;
            }
            self.view.occupy(*slot, memory);
            self.memory_used_mib += memory;
            let part = self.part_index(*slot);
            self.parts[part].tenants.push(job);
        }
        let slice = self.parts[self.part_index(slots[0])].slice;
        let state = &mut self.state[job as usize];
        state.phase = Phase::Running;
        state.start = self.now;
        state.last_update = self.now;
        state.slot = Some(slots[0]);
        state.slice = slice;
        state.awaits_recut = false;
        state.group = group;
        state.memory_mib = memory;
        if let Placement::Gpus(gpus) = placement {
            for &g in &gpus {
                self.view.set_locked(g, true);
            }
            state.gpus = gpus;
        }
        self.running += 1;
        Ok(())
    }

    /// Dynamic MIG: `job` fits no slice now. If a dynamic group could hold it in some allowed
    /// layout and has an idle GPU, start re-cutting that GPU to the layout with the most slices
    /// that hold the job (the first such layout on ties). At most one re-cut per waiting job.
    fn try_recut(&mut self, job: u32) {
        if self.state[job as usize].awaits_recut || self.jobs[job as usize].gpus > 1 {
            return;
        }
        let n_groups = self.groups.len();
        for group in 0..n_groups {
            let idx = job as usize * n_groups + group;
            let Some(dynamic) = &self.groups[group].dynamic else {
                continue;
            };
            if self.job_class[idx] == u32::MAX {
                continue;
            }
            let need = self.job_memory[idx];
            let holds = |layout: &crate::hardware::MigLayout| {
                layout
                    .slices
                    .iter()
                    .filter(|s| slot_capacity_mib(Some(s)) >= need)
                    .count()
            };
            let best = (0..dynamic.layouts.len())
                .map(|k| (holds(&dynamic.layouts[k]), k))
                .filter(|(n, _)| *n > 0)
                .max_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
            let (Some((_, layout)), Some(gpu)) = (best, self.view.first_idle(group)) else {
                continue;
            };
            let delay = dynamic.reconfigure_s;
            self.view.set_locked(gpu, true);
            self.state[job as usize].awaits_recut = true;
            self.awaiting_recut.push(job);
            self.seq += 1;
            let event = Event {
                time: self.now + delay,
                seq: self.seq,
                gpu,
                version: 0,
                recut: Some(layout as u16),
            };
            self.heap.push(Reverse(event));
            return;
        }
    }

    /// A re-cut lands: the GPU's slots take the new layout's slices and it takes work again.
    fn apply_recut(&mut self, gpu: u32, layout: u16) {
        let group = self.gpus[gpu as usize].group;
        let Some(dynamic) = &self.groups[group as usize].dynamic else {
            return;
        };
        let layout = &dynamic.layouts[layout as usize];
        let spec = self.groups[group as usize].spec;
        for (position, part) in self.part_range(gpu).enumerate() {
            let slice = layout.slices.get(position);
            debug_assert!(
                self.parts[part].tenants.is_empty(),
                "re-cut under a running job"
            );
            self.parts[part] = slice_part(spec, slice);
            let slot = SlotRef {
                group,
                gpu,
                slot: position as u32,
            };
            self.view.set_capacity(slot, slot_capacity_mib(slice));
        }
        self.view.set_locked(gpu, false);
        self.reconfigurations += 1;
        for job in self.awaiting_recut.drain(..) {
            self.state[job as usize].awaits_recut = false;
        }
    }

    /// Brings every job on these GPUs up to `now` at its current rate.
    fn advance_gpus(&mut self, slots: &[SlotRef]) {
        for slot in slots {
            for part in self.part_range(slot.gpu) {
                for &job in &self.parts[part].tenants {
                    let s = &mut self.state[job as usize];
                    s.remaining -= s.rate * (self.now - s.last_update);
                    s.last_update = self.now;
                }
            }
        }
    }

    /// Recomputes the rates of every job on `gpu` and pushes the GPU's next completion.
    fn rerate(&mut self, gpu: u32) -> Result<(), EngineError> {
        self.meter_flush(gpu);
        let range = self.part_range(gpu);
        let group = &self.groups[self.gpus[gpu as usize].group as usize];
        let mut next = f64::INFINITY;
        for part in range {
            let p = &self.parts[part];
            if p.tenants.is_empty() {
                continue;
            }
            let tenant_of = |job: u32| {
                let idx = job as usize * self.groups.len() + self.gpus[gpu as usize].group as usize;
                Tenant {
                    class: &self.classes[self.job_class[idx] as usize],
                    sm_budget: group.sm_budget,
                    gpus: self.jobs[job as usize].gpus,
                }
            };
            // Small sets (the usual case) live on the stack: this runs at every set change.
            let n = p.tenants.len();
            let mut inline = [tenant_of(p.tenants[0]); INLINE_TENANTS];
            let on_heap: Vec<Tenant<'_>>;
            let tenants: &[Tenant<'_>] = if n <= INLINE_TENANTS {
                for (slot, &job) in inline.iter_mut().zip(&p.tenants) {
                    *slot = tenant_of(job);
                }
                &inline[..n]
            } else {
                on_heap = p.tenants.iter().map(|&job| tenant_of(job)).collect();
                &on_heap
            };
            self.scratch_rates.resize(tenants.len(), 0.0);
            self.perf.rates(
                group.spec,
                group.mode,
                &p.partition,
                tenants,
                &mut self.scratch_rates,
            );
            for (&job, &rate) in p.tenants.iter().zip(&self.scratch_rates) {
                if !(rate.is_finite() && rate > 0.0) {
                    return Err(EngineError::BadRate {
                        model: self.perf.name(),
                        job: self.jobs[job as usize].name.clone(),
                        rate,
                    });
                }
                let s = &mut self.state[job as usize];
                s.remaining -= s.rate * (self.now - s.last_update);
                s.last_update = self.now;
                s.rate = rate;
                if s.slot.is_some_and(|slot| slot.gpu == gpu) {
                    next = next.min(self.now + s.remaining.max(0.0) / rate);
                }
            }
        }
        self.meter_set_power(gpu);
        let gpu_state = &mut self.gpus[gpu as usize];
        gpu_state.version += 1;
        if next.is_finite() {
            self.seq += 1;
            self.heap.push(Reverse(Event {
                time: next,
                seq: self.seq,
                gpu,
                version: gpu_state.version,
                recut: None,
            }));
        }
        Ok(())
    }

    fn part_range(&self, gpu: u32) -> std::ops::Range<usize> {
        let g = &self.gpus[gpu as usize];
        g.first_part as usize..(g.first_part + g.parts) as usize
    }

    fn part_index(&self, slot: SlotRef) -> usize {
        (self.gpus[slot.gpu as usize].first_part + slot.slot) as usize
    }

    fn record_timeline(&mut self) {
        let last = self.timeline.last().map(|r| r.time_s);
        let row = TimelineRow {
            time_s: self.now,
            queued: self.queue.len() as u32,
            running: self.running,
            busy_gpus: self.busy_gpus,
            memory_used_gib: self.memory_used_mib as f64 / 1024.0,
        };
        match last {
            Some(t) if t == self.now => *self.timeline.last_mut().expect("row exists") = row,
            Some(t) if self.now < t + self.timeline_every_s => {}
            _ => self.timeline.push(row),
        }
    }

    fn finish(self, config: &SimConfig) -> RunRecord {
        let outcomes = self
            .state
            .iter()
            .enumerate()
            .map(|(job, s)| self.outcome(job, s))
            .collect();
        let energy = self.meter_record();
        RunRecord {
            outcomes,
            timeline: self.timeline,
            events: self.events,
            mig_reconfigurations: self.reconfigurations,
            total_gpus: self.gpus.len() as u32,
            memory_total_gib: config.cluster.memory_total_gib(),
            energy,
        }
    }

    fn outcome(&self, job: usize, s: &JobState) -> JobOutcome {
        let n_groups = self.groups.len();
        let class = (0..n_groups)
            .map(|g| (g, self.job_class[job * n_groups + g]))
            .find(|&(g, c)| c != u32::MAX && (s.phase != Phase::Done || g == s.group as usize));
        let exclusive_rate = class.map_or(f64::NAN, |(_, c)| {
            self.classes[c as usize].solo_rate * f64::from(self.jobs[job].gpus)
        });
        let completed = s.phase == Phase::Done;
        let slot = s.slot.filter(|_| completed);
        let mut gpus = s.gpus.clone();
        if gpus.is_empty() {
            gpus.extend(slot.map(|sl| sl.gpu));
        }
        JobOutcome {
            completed,
            start_s: s.start,
            end_s: s.end,
            group: slot.map(|sl| sl.group),
            gpus,
            slice: s.slice.filter(|_| completed),
            mode: slot.map(|sl| self.groups[sl.group as usize].mode),
            exclusive_rate,
            energy_j: self.meter_job_energy(job).filter(|_| completed),
        }
    }
}

#[cfg(test)]
mod tests;
