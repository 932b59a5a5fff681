//! The discrete-event engine: fluid job progress, one pending completion per GPU.
#![doc = include_str!("README.md")]
mod backfill;
mod heap;
mod power;
mod setup;
mod tenancy;

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap};
use std::ops::Bound::{Excluded, Unbounded};

use crate::hardware::{GpuSpec, MigSlice};
use crate::metrics::{JobOutcome, RunRecord, RunSpan, TimelineRow};
use crate::perf::{CoRun, JobClass, Partition, PerfModel, ShareMode, Tenant};
use crate::policy::{
    self, ClusterView, Placement, PlacementRule, Policy, Pool, QueueOrder, SlotRef,
};
use crate::workload::stream::{Draws, index_name};
use crate::workload::{Job, MinSpeed};
use heap::{Event, EventKind, JobEvent};
pub use power::power_mode;
pub use setup::{Cluster, DynamicMig, EngineError, GpuGroup, SimConfig, Unplaceable};
use setup::{slice_part, slot_capacity_mib};

/// Co-located sets up to this size are passed to the performance model from the stack.
const INLINE_TENANTS: usize = 8;

/// A job's place in the life cycle. `Restoring`, `Running` and `Checkpointing` hold GPUs; only
/// `Running` makes progress (and is a tenant of its partitions for the performance model).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Pending,
    Queued,
    /// Resumed after a preemption, restoring its state (`restore_s`).
    Restoring,
    Running,
    /// Preempted, writing its checkpoint (`checkpoint_s`) before it gives its GPUs back.
    Checkpointing,
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
    /// Its place in arrival order (index into `arrivals`), its tie-break in the queue.
    rank: u32,
    /// When its current run (or, once it waits again, its last run) began.
    run_start: f64,
    /// Bumped at each placement and preemption; its events are stale once it moved on.
    epoch: u32,
    /// Its index in `computing` while it is `Running` (`u32::MAX` otherwise).
    computing_at: u32,
    /// Its kind (`Simulation::kinds`): class row, GPUs, minimum speed.
    kind: u32,
    /// Its work, samples.
    samples: f64,
}

/// What the engine reads of a job only now and then (as it arrives and finishes, and under
/// preemption or an energy model), kept apart from [`JobState`] so that the states read at
/// every event stay dense in cache: 144 bytes a job instead of 296.
#[derive(Clone, Debug, Default)]
struct ColdState {
    /// The job itself when the engine drew it (a generated workload), handed over with its
    /// outcome; `None` for a listed job.
    drawn: Option<Job>,
    /// What only preemptive orders use.
    pre: PreemptState,
    /// Its energy meter (`power.rs`; unused without profiles).
    meter: power::JobMeter,
}

impl JobState {
    /// A job that has arrived and waits for its first start.
    fn arrived(samples: f64) -> Self {
        JobState {
            kind: 0,
            samples,
            phase: Phase::Pending,
            remaining: samples,
            rate: 0.0,
            last_update: 0.0,
            start: f64::NAN,
            end: f64::NAN,
            slot: None,
            gpus: Vec::new(),
            group: 0,
            memory_mib: 0,
            slice: None,
            awaits_recut: false,
            rank: 0,
            run_start: f64::NAN,
            epoch: 0,
            computing_at: u32::MAX,
        }
    }
}

/// The states of the jobs that have arrived and not finished, by job: a job's state is made
/// when it arrives and dropped when it finishes (its outcome is handed over then), so a long
/// replay holds `O(jobs waiting or running)` of them, not one per job. The map from job to
/// state is a window over job ids, from the oldest job with a state to the newest: jobs arrive
/// in id order (except listed jobs given out of arrival order), so it spans the jobs that
/// arrived since the oldest one still waiting or running.
#[derive(Debug, Default)]
struct States {
    /// Job id of `at[0]`.
    base: u32,
    /// Per job from `base`, its place in `slab` (`u32::MAX`: none).
    at: std::collections::VecDeque<u32>,
    slab: Vec<JobState>,
    /// Each state's cold part, at its place in `slab`.
    cold: Vec<ColdState>,
    /// Places of `slab` free for the next state.
    free: Vec<u32>,
}

impl States {
    fn place(&self, job: u32) -> Option<u32> {
        let at = *self.at.get(job.checked_sub(self.base)? as usize)?;
        (at != u32::MAX).then_some(at)
    }

    fn get(&self, job: u32) -> Option<&JobState> {
        let at = self.place(job)?;
        self.slab.get(at as usize)
    }

    fn get_mut(&mut self, job: u32) -> Option<&mut JobState> {
        let at = self.place(job)?;
        self.slab.get_mut(at as usize)
    }

    fn get_cold(&self, job: u32) -> Option<&ColdState> {
        let at = self.place(job)?;
        self.cold.get(at as usize)
    }

    /// The job's cold part (it has a state).
    fn cold(&self, job: u32) -> &ColdState {
        &self.cold[self.at[(job - self.base) as usize] as usize]
    }

    fn cold_mut(&mut self, job: u32) -> &mut ColdState {
        &mut self.cold[self.at[(job - self.base) as usize] as usize]
    }

    /// The job's state and its cold part (it has a state).
    fn both_mut(&mut self, job: u32) -> (&mut JobState, &mut ColdState) {
        let at = self.at[(job - self.base) as usize] as usize;
        (&mut self.slab[at], &mut self.cold[at])
    }

    fn insert(&mut self, job: u32, state: JobState, cold: ColdState) {
        debug_assert!(self.place(job).is_none(), "job {job} has a state");
        let at = match self.free.pop() {
            Some(at) => {
                self.slab[at as usize] = state;
                self.cold[at as usize] = cold;
                at
            }
            None => {
                self.slab.push(state);
                self.cold.push(cold);
                (self.slab.len() - 1) as u32
            }
        };
        if self.at.is_empty() {
            self.base = job;
        }
        if job < self.base {
            // A listed job out of id order: the window grows to the front.
            for _ in job..self.base {
                self.at.push_front(u32::MAX);
            }
            self.base = job;
        }
        let offset = (job - self.base) as usize;
        if offset >= self.at.len() {
            self.at.resize(offset + 1, u32::MAX);
        }
        self.at[offset] = at;
    }

    fn remove(&mut self, job: u32) -> (JobState, ColdState) {
        let offset = (job - self.base) as usize;
        let at = std::mem::replace(&mut self.at[offset], u32::MAX);
        self.free.push(at);
        while self.at.front() == Some(&u32::MAX) {
            self.at.pop_front();
            self.base += 1;
        }
        (
            std::mem::replace(&mut self.slab[at as usize], JobState::arrived(0.0)),
            std::mem::take(&mut self.cold[at as usize]),
        )
    }

    /// Jobs with a state, in id order.
    fn jobs(&self) -> Vec<u32> {
        (0..self.at.len())
            .filter(|&i| self.at[i] != u32::MAX)
            .map(|i| self.base + i as u32)
            .collect()
    }
}

impl std::ops::Index<usize> for States {
    type Output = JobState;
    fn index(&self, job: usize) -> &JobState {
        &self.slab[self.at[job - self.base as usize] as usize]
    }
}

impl std::ops::IndexMut<usize> for States {
    fn index_mut(&mut self, job: usize) -> &mut JobState {
        &mut self.slab[self.at[job - self.base as usize] as usize]
    }
}

/// A kind of job: what the engine reads of a job besides its work (its class and memory on
/// every group, through its row; its GPUs and minimum speed), checked once to fit somewhere.
#[derive(Clone, Debug)]
struct Kind {
    /// Its row in `rows_class` and `rows_memory`.
    row: u32,
    gpus: u32,
    min_speed: Option<MinSpeed>,
    /// Its request class in the backfill index.
    request: u32,
    /// Whether it fits somewhere (false: skipped as unplaceable).
    fits: bool,
    /// Samples/s alone (times its GPUs) on the first group that can run it.
    alone_rate: f64,
}

/// Where the jobs come from, in arrival order.
enum Arrivals<'a> {
    /// Listed jobs: in id order when the list is in arrival order (`order` is `None`), else
    /// through `order`, their ids sorted by (arrival, id). Each job's kind is kept.
    Listed {
        order: Option<Vec<u32>>,
        kind_of: Vec<u32>,
    },
    /// Given by a source as the clock reaches them (in id order); `kind_of` maps the source's
    /// kinds to the engine's.
    Drawn { draws: Draws<'a>, kind_of: Vec<u32> },
}

/// The next job to arrive, read ahead.
struct Next {
    job: u32,
    arrival_s: f64,
    kind: u32,
    samples: f64,
    drawn: Option<Job>,
}

/// One GPU's busy time as the union of its jobs' runs, kept as they start and end: the spans
/// the summary's sort-and-merge of every run's interval makes (a run starting while another
/// is on the GPU, or at the moment the last one ended, joins its span), the closed ones summed
/// as they close, so the busy seconds are the same sums in the same order
/// ([`crate::metrics::busy_gpu_seconds`]) with nothing kept per span: 32 bytes a GPU, read at
/// every start and end, so that the cluster's fit in cache.
#[derive(Clone, Debug, Default)]
struct BusySpans {
    /// The open span: its start and the latest end of a run in it that has ended.
    start: f64,
    end: f64,
    /// The closed spans' lengths summed in time order.
    closed_s: f64,
    /// Runs on the GPU now.
    active: u32,
    open: bool,
}

impl BusySpans {
    /// A run starts on the GPU.
    fn run_starts(&mut self, now: f64) {
        if self.active == 0 {
            if !self.open {
                self.open = true;
                (self.start, self.end) = (now, now);
            } else if now > self.end {
                self.closed_s += self.end - self.start;
                (self.start, self.end) = (now, now);
            }
        }
        self.active += 1;
    }

    fn run_ends(&mut self, now: f64) {
        self.end = self.end.max(now);
        self.active -= 1;
    }

    /// The GPU's busy seconds: its spans' lengths summed in time order.
    fn busy_s(&self) -> f64 {
        if self.open {
            self.closed_s + (self.end - self.start)
        } else {
            self.closed_s
        }
    }
}

/// What a job carries under a preemptive order only (Las, Srtf): kept beside [`JobState`] so
/// that the other orders do not hold it for every job.
#[derive(Clone, Debug)]
struct PreemptState {
    /// GPU-seconds it held GPUs before its current run.
    attained_gpu_s: f64,
    /// Las: thresholds its attained service has reached, kept by `Demote` events.
    level: u32,
    /// Runs cut short by a preemption, in order.
    preempted: Vec<RunSpan>,
    /// While checkpointing: the job it makes room for.
    room_for: u32,
}

impl Default for PreemptState {
    fn default() -> Self {
        PreemptState {
            attained_gpu_s: 0.0,
            level: 0,
            preempted: Vec::new(),
            room_for: u32::MAX,
        }
    }
}

#[derive(Clone, Debug)]
struct PartState {
    partition: Partition,
    slice: Option<MigSlice>,
    tenants: tenancy::Tenants,
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
    /// The listed jobs (empty when they are drawn).
    jobs: &'a [Job],
    total_jobs: usize,
    /// The jobs in arrival order.
    arrivals: Arrivals<'a>,
    /// The next job to arrive, read ahead.
    next: Option<Next>,
    /// Rank (place in arrival order) of `next`.
    cursor: usize,
    groups: Vec<GroupState>,
    gpus: Vec<GpuState>,
    parts: Vec<PartState>,
    state: States,
    /// Per GPU, its busy spans.
    busy: Vec<BusySpans>,
    /// Outcomes of jobs finished since they were last handed over, as (job, drawn job,
    /// outcome).
    finished: Vec<(u32, Option<Job>, JobOutcome)>,
    /// Job classes; kinds of job; per row (of a kind) and group, the class index (u32::MAX =
    /// cannot run there) and memory.
    classes: Vec<JobClass>,
    kinds: Vec<Kind>,
    rows_class: Vec<u32>,
    rows_memory: Vec<u64>,
    view: ClusterView,
    /// Waiting jobs as (policy key, arrival rank); ties go to the earlier arrival.
    queue: BTreeSet<(u64, u32)>,
    /// The queue again, by request class, for unbounded backfill passes without a rescan
    /// (`backfill.rs`); `None` where a pass may free room (preemption, dynamic MIG) or without
    /// backfill.
    index: Option<backfill::BackfillIndex>,
    heap: BinaryHeap<Reverse<Event>>,
    seq: u64,
    now: f64,
    events: u64,
    busy_gpus: u32,
    running: u32,
    memory_used_mib: u64,
    timeline: Vec<TimelineRow>,
    timeline_every_s: f64,
    /// Whether timeline rows are kept (not when no result file reads them).
    keep_timeline: bool,
    scratch_rates: Vec<f64>,
    scratch_ids: Vec<u32>,
    completed: u64,
    /// Dynamic-MIG re-cuts done.
    reconfigurations: u64,
    /// Jobs whose re-cut is under way (their `awaits_recut` is set), cleared when one lands.
    awaiting_recut: Vec<u32>,
    /// Energy bookkeeping (`power.rs`); `None` without profiles to read power from.
    meter: Option<power::Meter>,
    /// Running jobs a preemption probe has taken off the view (`view_hold`): placement rules
    /// see them neither in the view nor among their partition's tenants.
    probe_released: Vec<u32>,
    /// Jobs holding GPUs without computing (checkpointing or restoring): not tenants of their
    /// partitions (they take no rate) but, as for placement rules, sharing them.
    pausing: Vec<u32>,
    /// Jobs in phase `Running`, in no particular order (preemption candidates come from here).
    computing: Vec<u32>,
    /// One scheduling pass's preemption candidates, built at its first miss.
    pass: PassVictims,
    /// GPUs reserved, as (for job, GPU), while that job's victims checkpoint: locked in the view
    /// so that no job starts on them and takes the room being made.
    reserved: Vec<(u32, u32)>,
    /// Jobs whose victims are still checkpointing to make room for them, as (job, victims
    /// left): such a job preempts no more while it has any, and the GPUs it will take are
    /// reserved for it.
    making_room: Vec<(u32, u32)>,
    /// At least the priority value of every job computing (exact when a pass builds its
    /// candidates; raised as jobs start computing or drop a Las level): a waiting job at or above
    /// it has no candidate below it, without a look at the running jobs.
    priority_bound: f64,
}

/// A running job that may be preempted, ordered as victims are taken: the highest `priority`
/// value (the lowest priority: Las level, or Srtf remaining seconds) first, then the latest
/// (re)start, then the latest arrival. `Ord` puts the first victim greatest.
#[derive(Clone, Copy, Debug)]
struct Candidate {
    priority: f64,
    run_start: f64,
    rank: u32,
    job: u32,
}

impl Ord for Candidate {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.priority
            .total_cmp(&other.priority)
            .then(self.run_start.total_cmp(&other.run_start))
            .then(self.rank.cmp(&other.rank))
    }
}

impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Candidate {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for Candidate {}

/// Preemption candidates of one scheduling pass, built at its first miss (time does not move
/// within a pass): `order` holds the first ones in victim order, `rest` the others, popped into
/// `order` as far as a preemption looks. Jobs suspended in the pass leave `order`.
#[derive(Debug, Default)]
struct PassVictims {
    built: bool,
    order: Vec<Candidate>,
    rest: BinaryHeap<Candidate>,
    /// Jobs whose preemption made no room in this pass: a later job asking no less (and of no
    /// higher priority) cannot make room either.
    failed: Vec<u32>,
    /// Scratch for `could_free_gpus`: candidates per GPU (all zero between calls), GPUs counted.
    gpu_counts: Vec<u32>,
    touched: Vec<u32>,
}

impl PassVictims {
    /// The `i`-th candidate in victim order.
    fn nth(&mut self, i: usize) -> Option<Candidate> {
        while self.order.len() <= i {
            self.order.push(self.rest.pop()?);
        }
        Some(self.order[i])
    }
}

/// Relative width of one instant: events closer than this happen together, so rounding in
/// `remaining / rate` never decides whether a job finishes before or after an arrival.
pub const SAME_INSTANT: f64 = 1e-10;

/// The last time that still belongs to the instant `t`.
pub fn same_instant(t: f64) -> f64 {
    t + SAME_INSTANT * t.abs().max(1.0)
}

/// Grid of Srtf priority values: 2^20 steps a second (about a microsecond).
pub const SRTF_STEPS_PER_S: f64 = 1_048_576.0;

/// A job's Srtf priority value: its remaining `seconds` alone, rounded to the nearest step of
/// [`SRTF_STEPS_PER_S`]. Remaining work is `remaining - rate x (now - last update)` and rounds
/// with the times in it, so two jobs with exactly the same remaining seconds can come out a few
/// ulps apart, either way; on the grid they are equal, and a tie stays a tie (the queue takes
/// the earlier arrival, neither preempts the other). Only a value within rounding of an odd
/// multiple of half a step could still split, a 21-place binary fraction that decimal times and
/// rates do not give; and the rounding stays far below a step for clocks under ~10^8 s.
pub fn srtf_priority(seconds: f64) -> f64 {
    (seconds * SRTF_STEPS_PER_S).round() / SRTF_STEPS_PER_S
}

/// Called every few thousand completions with (finished jobs, all jobs).
pub type Progress<'p> = &'p mut dyn FnMut(u64, u64);

/// Takes the timeline's rows in order as the run goes ([`Simulation::run_streaming`]).
pub type TimelineSink<'s> = &'s mut dyn FnMut(&TimelineRow);

/// Takes each job's outcome as (job, drawn job, outcome) once it is final
/// ([`Simulation::run_streaming`]): when the job finishes, in the order jobs finish;
/// unplaceable jobs' when they arrive. The drawn job is the job itself when the engine took it
/// from its source ([`SimConfig::source`]; an empty name is
/// [`crate::workload::stream::index_name`]`(job)`), `None` for a listed job
/// (`SimConfig::jobs[job]`).
pub type OutcomeSink<'s> = &'s mut dyn FnMut(u32, Option<Job>, JobOutcome);

/// Rows kept before they are handed to a [`TimelineSink`] (the last one is held back: a later
/// change at the same time replaces it).
const TIMELINE_BATCH: usize = if cfg!(test) { 3 } else { 4096 };

impl<'a> Simulation<'a> {
    /// Runs the simulation to the end and returns what happened.
    pub fn run(
        config: &'a SimConfig,
        progress: Option<Progress<'_>>,
    ) -> Result<RunRecord, EngineError> {
        let sim = setup::build(config)?;
        sim.run_collected(config, progress)
    }

    /// [`Self::run`] without the timeline (the record's `timeline` is empty): for runs that write
    /// no timeline, since the summary does not read it and a long replay records a row per
    /// instant. Everything else is as `run` gives it.
    pub fn run_without_timeline(
        config: &'a SimConfig,
        progress: Option<Progress<'_>>,
    ) -> Result<RunRecord, EngineError> {
        let mut sim = setup::build(config)?;
        sim.keep_timeline = false;
        sim.run_collected(config, progress)
    }

    /// Runs with every outcome gathered into the record, in input order.
    fn run_collected(
        mut self,
        config: &'a SimConfig,
        progress: Option<Progress<'_>>,
    ) -> Result<RunRecord, EngineError> {
        let mut outcomes: Vec<Option<JobOutcome>> = (0..config.job_count()).map(|_| None).collect();
        let mut put = |job: u32, _: Option<Job>, o: JobOutcome| outcomes[job as usize] = Some(o);
        self.drive(progress, None, &mut put)?;
        let mut record = self.finish(config, &mut put);
        record.outcomes = outcomes
            .into_iter()
            .map(|o| o.expect("every job has an outcome"))
            .collect();
        Ok(record)
    }

    /// [`Self::run`] handing results over as the run goes instead of keeping them: each job's
    /// outcome to `outcomes` once it is final (in the order jobs finish, unplaceable jobs' at
    /// the end; the record's `outcomes` is empty), and, with `timeline`, the timeline's rows in
    /// order (without, none are recorded, as [`Self::run_without_timeline`]). A long replay
    /// then holds the state of the jobs waiting and running only, and `colo simulate` writes
    /// the rows as they come. The outcomes and rows are those `run` gives.
    pub fn run_streaming(
        config: &'a SimConfig,
        progress: Option<Progress<'_>>,
        timeline: Option<TimelineSink<'_>>,
        outcomes: OutcomeSink<'_>,
    ) -> Result<RunRecord, EngineError> {
        let mut sim = setup::build(config)?;
        match timeline {
            Some(sink) => {
                sim.drive(progress, Some(&mut *sink), &mut *outcomes)?;
                for row in sim.timeline.drain(..) {
                    sink(&row);
                }
            }
            None => {
                sim.keep_timeline = false;
                sim.drive(progress, None, &mut *outcomes)?;
            }
        }
        Ok(sim.finish(config, outcomes))
    }

    fn drive(
        &mut self,
        mut progress: Option<Progress<'_>>,
        mut timeline: Option<TimelineSink<'_>>,
        outcomes: OutcomeSink<'_>,
    ) -> Result<(), EngineError> {
        let total = self.total_jobs as u64;
        let mut reported = 0;
        while let Some(time) = self.next_time() {
            debug_assert!(time >= self.now, "time went back: {time} < {}", self.now);
            // NaN too.
            if time.is_nan() || time > crate::workload::limits::MAX_CLOCK_S {
                return Err(EngineError::ClockOutOfRange {
                    time_s: time,
                    limit_s: crate::workload::limits::MAX_CLOCK_S,
                });
            }
            self.now = self.now.max(time);
            self.handle_events_until(same_instant(time))?;
            self.schedule()?;
            self.record_timeline();
            if let Some(sink) = timeline
                .as_mut()
                .filter(|_| self.timeline.len() > TIMELINE_BATCH)
            {
                let last = self.timeline.len() - 1;
                for row in self.timeline.drain(..last) {
                    sink(&row);
                }
            }
            for (job, drawn, outcome) in self.finished.drain(..) {
                outcomes(job, drawn, outcome);
            }
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
        let arrival = self.next.as_ref().map(|n| n.arrival_s);
        let completion = self.heap.peek().map(|Reverse(e)| e.time);
        match (arrival, completion) {
            (Some(a), Some(c)) => Some(a.min(c)),
            (a, c) => a.or(c),
        }
    }

    fn drop_stale_events(&mut self) {
        while let Some(Reverse(event)) = self.heap.peek() {
            if self.is_live(event.kind) {
                return;
            }
            self.heap.pop();
        }
    }

    /// Whether an event still stands: a completion computed under the GPU's current rates, any
    /// re-cut, a job step of the job's current run (or checkpoint).
    fn is_live(&self, kind: EventKind) -> bool {
        match kind {
            EventKind::Completion { gpu, version } => self.gpus[gpu as usize].version == version,
            EventKind::Recut { .. } => true,
            EventKind::Job { job, epoch, what } => {
                let Some(s) = self.state.get(job) else {
                    // It finished.
                    return false;
                };
                s.epoch == epoch
                    && match what {
                        JobEvent::CheckpointDone => s.phase == Phase::Checkpointing,
                        JobEvent::RestoreDone => s.phase == Phase::Restoring,
                        JobEvent::Demote | JobEvent::MinRun => {
                            matches!(s.phase, Phase::Restoring | Phase::Running)
                        }
                    }
            }
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
            if !self.is_live(event.kind) {
                continue;
            }
            self.events += 1;
            self.now = self.now.max(event.time);
            match event.kind {
                EventKind::Recut { gpu, layout } => self.apply_recut(gpu, layout),
                EventKind::Completion { gpu, .. } => self.complete_on(gpu)?,
                EventKind::Job { job, what, .. } => match what {
                    JobEvent::CheckpointDone => self.checkpoint_done(job),
                    JobEvent::RestoreDone => self.restore_done(job)?,
                    JobEvent::Demote => self.demote(job),
                    JobEvent::MinRun => {}
                },
            }
        }
        while self.next.as_ref().is_some_and(|n| n.arrival_s <= horizon) {
            let Some(next) = self.next.take() else { break };
            self.now = self.now.max(next.arrival_s);
            let rank = self.cursor as u32;
            self.cursor += 1;
            self.events += 1;
            self.draw_next()?;
            self.admit(next, rank);
        }
        Ok(())
    }

    /// Reads the next job to arrive (rank `cursor`) ahead, if any is left.
    fn draw_next(&mut self) -> Result<(), EngineError> {
        let rank = self.cursor;
        self.next = match &mut self.arrivals {
            Arrivals::Listed { order, kind_of } => {
                let job = match order {
                    Some(order) => order.get(rank).copied(),
                    None => (rank < self.jobs.len()).then_some(rank as u32),
                };
                job.map(|job| {
                    let j = &self.jobs[job as usize];
                    Next {
                        job,
                        arrival_s: j.arrival_s,
                        kind: kind_of[job as usize],
                        samples: j.samples,
                        drawn: None,
                    }
                })
            }
            Arrivals::Drawn { draws, kind_of } => draws.next().transpose()?.map(|d| Next {
                job: rank as u32,
                arrival_s: d.job.arrival_s,
                kind: kind_of[d.kind as usize],
                samples: d.job.samples,
                drawn: Some(d.job),
            }),
        };
        Ok(())
    }

    /// The job of arrival rank `rank`.
    fn job_at(&self, rank: u32) -> u32 {
        match &self.arrivals {
            Arrivals::Listed {
                order: Some(order), ..
            } => order[rank as usize],
            _ => rank,
        }
    }

    /// A job arrives: its state is made and it joins the queue, or, if it fits nowhere (and
    /// such jobs are skipped), its outcome is final at once.
    fn admit(&mut self, next: Next, rank: u32) {
        let mut state = JobState::arrived(next.samples);
        state.kind = next.kind;
        let cold = ColdState {
            drawn: next.drawn,
            ..ColdState::default()
        };
        let fits = self.kinds[next.kind as usize].fits;
        if !fits {
            state.phase = Phase::Skipped;
        }
        self.state.insert(next.job, state, cold);
        if fits {
            self.enqueue(next.job, rank);
        } else {
            let (drawn, outcome) = self.take_outcome(next.job);
            self.finished.push((next.job, drawn, outcome));
        }
    }

    fn kind_of(&self, job: u32) -> &Kind {
        &self.kinds[self.state[job as usize].kind as usize]
    }

    /// The job's key in the cluster view: the same for jobs of one kind (class, GPUs and
    /// minimum speed), which the performance model cannot tell apart.
    fn member(&self, job: u32) -> u64 {
        crate::policy::member_key(u64::from(self.state[job as usize].kind))
    }

    /// The job's class on group `group` (`u32::MAX`: it cannot run there).
    fn class_of(&self, job: u32, group: usize) -> u32 {
        let row = self.kind_of(job).row as usize;
        self.rows_class[row * self.groups.len() + group]
    }

    /// The job's memory on group `group`, MiB.
    fn memory_of(&self, job: u32, group: usize) -> u64 {
        let row = self.kind_of(job).row as usize;
        self.rows_memory[row * self.groups.len() + group]
    }

    /// The job's GPUs.
    fn gpus_of(&self, job: u32) -> u32 {
        self.kind_of(job).gpus
    }

    /// The job's name (for errors).
    fn job_name(&self, job: u32) -> String {
        match self.state.get_cold(job).and_then(|c| c.drawn.as_ref()) {
            // A drawn job may come without its name (`JobSource::draws`).
            Some(drawn) if drawn.name.is_empty() => index_name(job),
            Some(drawn) => drawn.name.clone(),
            None => self
                .jobs
                .get(job as usize)
                .map_or_else(|| format!("#{job}"), |j| j.name.clone()),
        }
    }

    fn enqueue(&mut self, job: u32, rank: u32) {
        let state = &mut self.state[job as usize];
        state.phase = Phase::Queued;
        state.rank = rank;
        let key = match &self.policy.order {
            QueueOrder::Fifo => 0,
            QueueOrder::ShortestFirst => self
                .exclusive_seconds(job, self.state[job as usize].samples)
                .to_bits(),
            QueueOrder::Las { .. } => u64::from(self.state.cold(job).pre.level),
            QueueOrder::Srtf => self.waiting_priority(job).to_bits(),
        };
        self.queue.insert((key, rank));
        let request = self.kind_of(job).request;
        if let Some(index) = &mut self.index {
            index.insert(request, (key, rank));
        }
    }

    /// Seconds `samples` of the job take alone on the first group that can run it.
    fn exclusive_seconds(&self, job: u32, samples: f64) -> f64 {
        samples / self.kind_of(job).alone_rate
    }

    /// A waiting job's priority under a preemptive order (lower is served first): its Las level,
    /// or its Srtf remaining seconds alone, on the grid of [`srtf_priority`].
    fn waiting_priority(&self, job: u32) -> f64 {
        match self.policy.order {
            QueueOrder::Las { .. } => f64::from(self.state.cold(job).pre.level),
            _ => srtf_priority(self.exclusive_seconds(job, self.state[job as usize].remaining)),
        }
    }

    /// A running job's priority now: its Las level, or its Srtf remaining seconds alone.
    fn running_priority(&self, job: u32) -> f64 {
        match self.policy.order {
            QueueOrder::Las { .. } => f64::from(self.state.cold(job).pre.level),
            _ => {
                let s = &self.state[job as usize];
                let remaining = s.remaining - s.rate * (self.now - s.last_update);
                srtf_priority(self.exclusive_seconds(job, remaining))
            }
        }
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

    /// Whether the job was preempted before (its next start is a resume).
    fn was_preempted(&self, job: u32) -> bool {
        !self.state.cold(job).pre.preempted.is_empty()
    }

    fn is_lead(&self, job: u32, gpu: u32) -> bool {
        self.state[job as usize].slot.is_some_and(|s| s.gpu == gpu)
    }

    fn finish_job(&mut self, job: u32) {
        let now = self.now;
        {
            let s = &mut self.state[job as usize];
            s.phase = Phase::Done;
            s.remaining = 0.0;
            s.end = now;
        }
        self.stop_computing(job);
        self.completed += 1;
        self.give_back(job);
        let (drawn, outcome) = self.take_outcome(job);
        self.finished.push((job, drawn, outcome));
    }

    /// The job leaves every GPU it holds (its partitions, memory, multi-GPU locks).
    fn give_back(&mut self, job: u32) {
        let (slot, gpus, memory) = {
            let s = &mut self.state[job as usize];
            (
                s.slot.expect("a job holding GPUs has a slot"),
                std::mem::take(&mut s.gpus),
                s.memory_mib,
            )
        };
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
        self.parts[part].tenants.remove_job(job);
        self.view.release(slot, memory, self.member(job));
        self.busy[slot.gpu as usize].run_ends(self.now);
        self.memory_used_mib -= memory;
        if self.view.jobs_on_gpu(slot.gpu) == 0 {
            self.busy_gpus -= 1;
            self.gpus[slot.gpu as usize].version += 1;
        }
    }

    /// One scheduling pass over the queue in policy order. Without backfill it stops at the
    /// first job that cannot start; with backfill it passes over up to `backfill_depth` such
    /// jobs (greedy, no reservations). Under a preemptive order a job that cannot start may
    /// preempt running jobs of lower priority ([`Self::try_preempt`]); it still counts as a
    /// job that could not start, and starts once they have given their GPUs back.
    fn schedule(&mut self) -> Result<(), EngineError> {
        let mut started = std::mem::take(&mut self.scratch_ids);
        started.clear();
        self.pass.built = false;
        let allowed_misses = if self.policy.backfill {
            self.policy.backfill_depth.max(1)
        } else {
            1
        };
        if self.index.is_some() && allowed_misses >= self.queue.len() {
            let result = self.indexed_pass(&mut started);
            if let Some(index) = &mut self.index {
                index.end_pass();
            }
            result?;
            return self.rerate_started(started);
        }
        let mut misses = 0;
        let mut after: Option<(u64, u32)> = None;
        loop {
            let next = match after {
                None => self.queue.first().copied(),
                Some(key) => self.queue.range((Excluded(key), Unbounded)).next().copied(),
            };
            let Some((key, rank)) = next else { break };
            let job = self.job_at(rank);
            match self.find_placement(job) {
                Some((group, placement)) => {
                    self.queue.remove(&(key, rank));
                    let request = self.kind_of(job).request;
                    if let Some(index) = &mut self.index {
                        index.remove(request, (key, rank));
                    }
                    self.start(job, group, placement)?;
                    started.push(self.state[job as usize].slot.map_or(0, |s| s.gpu));
                }
                None => {
                    if !self.try_preempt(job, &mut started) {
                        self.try_recut(job);
                    }
                    misses += 1;
                    if misses >= allowed_misses {
                        break;
                    }
                    after = Some((key, rank));
                }
            }
        }
        self.rerate_started(started)
    }

    /// An unbounded greedy pass through the backfill index: the first waiting job of each
    /// request class not passed over yet, in queue order, until every class has been passed
    /// over. It starts the same jobs in the same order as the scan (`backfill.rs` says why).
    fn indexed_pass(&mut self, started: &mut Vec<u32>) -> Result<(), EngineError> {
        while let Some(head) = self.index.as_ref().and_then(|ix| ix.first()) {
            let (key, rank, request) = head;
            let job = self.job_at(rank);
            let placement = self.find_placement(job);
            let index = self.index.as_mut().expect("an indexed pass has an index");
            match placement {
                Some((group, placement)) => {
                    index.remove(request, (key, rank));
                    self.queue.remove(&(key, rank));
                    self.start(job, group, placement)?;
                    started.push(self.state[job as usize].slot.map_or(0, |s| s.gpu));
                }
                None => index.park(head),
            }
        }
        Ok(())
    }

    /// Re-rates the GPUs jobs started on in a pass (`started`, the scratch list, given back).
    fn rerate_started(&mut self, mut started: Vec<u32>) -> Result<(), EngineError> {
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
            if self.class_of(job, group) == u32::MAX {
                return None;
            }
            let request = self.request(job, group);
            policy::place(&pool, group, self.policy.placement, &request).map(|p| (group as u32, p))
        })
    }

    /// Applies a placement after checking it: memory, room, and idle GPUs for multi-GPU jobs.
    fn start(&mut self, job: u32, group: u32, placement: Placement) -> Result<(), EngineError> {
        let memory = self.memory_of(job, group as usize);
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
                    job: self.job_name(job),
                    gpu: slot.gpu,
                });
            }
        }
        self.advance_gpus(slots);
        let member = self.member(job);
        for slot in slots {
            self.meter_flush(slot.gpu);
            if self.view.jobs_on_gpu(slot.gpu) == 0 {
                self.busy_gpus += 1;
            }
            self.view.occupy(*slot, memory, member);
            self.busy[slot.gpu as usize].run_starts(self.now);
            self.memory_used_mib += memory;
        }
        let slice = self.parts[self.part_index(slots[0])].slice;
        let resumes = self.was_preempted(job);
        let restores = resumes && self.policy.preemption.restore_s > 0.0;
        if !restores {
            for slot in slots {
                let part = self.part_index(*slot);
                self.parts[part].tenants.push(job);
            }
        }
        let now = self.now;
        let state = &mut self.state[job as usize];
        state.phase = if restores {
            Phase::Restoring
        } else {
            Phase::Running
        };
        if !resumes {
            state.start = now;
        }
        state.run_start = now;
        state.epoch += 1;
        state.last_update = now;
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
        if restores {
            self.pausing.push(job);
            let at = now + self.policy.preemption.restore_s;
            self.push_job_event(job, at, JobEvent::RestoreDone);
        } else {
            self.start_computing(job);
        }
        if self.policy.order.preempts() {
            self.push_demote(job);
            if self.policy.preemption.min_run_s > 0.0 {
                let at = now + self.policy.preemption.min_run_s;
                self.push_job_event(job, at, JobEvent::MinRun);
            }
        }
        Ok(())
    }

    fn push_job_event(&mut self, job: u32, time: f64, what: JobEvent) {
        self.seq += 1;
        let epoch = self.state[job as usize].epoch;
        self.heap.push(Reverse(Event {
            time,
            seq: self.seq,
            kind: EventKind::Job { job, epoch, what },
        }));
    }

    /// Las: the event for the next threshold of a job holding GPUs, if any is left. Attained
    /// service grows at the job's GPU count per second from its (re)start.
    fn push_demote(&mut self, job: u32) {
        let QueueOrder::Las { thresholds_gpu_s } = &self.policy.order else {
            return;
        };
        let p = &self.state.cold(job).pre;
        let Some(&threshold) = thresholds_gpu_s.get(p.level as usize) else {
            return;
        };
        let gpus = f64::from(self.gpus_of(job));
        let at = self.state[job as usize].run_start + (threshold - p.attained_gpu_s) / gpus;
        self.push_job_event(job, at, JobEvent::Demote);
    }

    /// A Las threshold is reached: the job drops one level.
    fn demote(&mut self, job: u32) {
        let p = &mut self.state.cold_mut(job).pre;
        p.level += 1;
        self.priority_bound = self.priority_bound.max(f64::from(p.level));
        self.push_demote(job);
    }

    fn start_computing(&mut self, job: u32) {
        let s = &mut self.state[job as usize];
        s.phase = Phase::Running;
        s.computing_at = self.computing.len() as u32;
        self.computing.push(job);
        if self.policy.order.preempts() {
            self.priority_bound = self.priority_bound.max(self.running_priority(job));
        }
    }

    fn stop_computing(&mut self, job: u32) {
        let at = std::mem::replace(&mut self.state[job as usize].computing_at, u32::MAX);
        if at == u32::MAX {
            return;
        }
        self.computing.swap_remove(at as usize);
        if let Some(&moved) = self.computing.get(at as usize) {
            self.state[moved as usize].computing_at = at;
        }
    }

    /// The slots a job holds: its slot, or slot 0 of each of its GPUs.
    fn held_slots(&self, job: u32) -> Vec<SlotRef> {
        let s = &self.state[job as usize];
        let slot = s.slot.expect("a job holding GPUs has a slot");
        if s.gpus.is_empty() {
            vec![slot]
        } else {
            s.gpus
                .iter()
                .map(|&gpu| SlotRef {
                    group: slot.group,
                    gpu,
                    slot: 0,
                })
                .collect()
        }
    }

    /// Whether `job` holds `slot` (one of [`Self::held_slots`], without building the list).
    fn holds(&self, job: u32, slot: SlotRef) -> bool {
        let s = &self.state[job as usize];
        let Some(own) = s.slot else {
            return false;
        };
        if s.gpus.is_empty() {
            own == slot
        } else {
            slot.group == own.group && slot.slot == 0 && s.gpus.contains(&slot.gpu)
        }
    }

    /// A restored job starts making progress.
    fn restore_done(&mut self, job: u32) -> Result<(), EngineError> {
        self.pausing.retain(|&j| j != job);
        let slots = self.held_slots(job);
        for slot in &slots {
            // The restore's seconds integrate as they were (no tenant: idle) before it joins.
            self.meter_flush(slot.gpu);
            let part = self.part_index(*slot);
            self.parts[part].tenants.push(job);
        }
        self.state[job as usize].last_update = self.now;
        self.start_computing(job);
        self.rerate(slots[0].gpu)
    }

    /// Preemption (see the engine's README): `job` cannot be placed. If suspending running jobs
    /// of lower priority would make room, suspend the fewest the rule picks and return true (also
    /// when an earlier preemption is still making room for it); otherwise change nothing and
    /// return false. The GPUs whose rates change are added to `rerate`.
    fn try_preempt(&mut self, job: u32, rerate: &mut Vec<u32>) -> bool {
        if !self.policy.order.preempts() {
            return false;
        }
        if self.making_room.iter().any(|&(j, _)| j == job) {
            return true;
        }
        let priority = self.waiting_priority(job);
        if self.priority_bound <= priority {
            return false;
        }
        self.build_candidates(priority);
        if !self.pass.nth(0).is_some_and(|c| c.priority > priority) {
            return false;
        }
        if self.pass.failed.iter().any(|&f| self.asks_no_less(job, f)) {
            return false;
        }
        if !self.could_free_gpus(job, priority) {
            self.pass.failed.push(job);
            return false;
        }
        // Take candidates off the view in victim order until the job fits, then put them back.
        let mut taken = 0;
        let mut placement = None;
        while placement.is_none() {
            let Some(next) = self.pass.nth(taken).filter(|c| c.priority > priority) else {
                break;
            };
            self.view_hold(next.job, false);
            taken += 1;
            placement = self.find_placement(job);
        }
        for k in (0..taken).rev() {
            let victim = self.pass.order[k].job;
            self.view_hold(victim, true);
        }
        let Some((_, placement)) = placement else {
            debug_assert_eq!(
                self.gpus_of(job),
                1,
                "could_free_gpus said a multi-GPU job would fit"
            );
            self.pass.failed.push(job);
            return false;
        };
        let target: Vec<u32> = match &placement {
            Placement::Slot(slot) => vec![slot.gpu],
            Placement::Gpus(gpus) => gpus.clone(),
        };
        let mut k = 0;
        let mut seen = 0;
        let mut victims = 0;
        while seen < taken {
            seen += 1;
            let victim = self.pass.order[k].job;
            if self
                .held_slots(victim)
                .iter()
                .any(|s| target.contains(&s.gpu))
            {
                self.pass.order.remove(k);
                let lead = self.state[victim as usize].slot.map_or(0, |s| s.gpu);
                self.suspend(victim, job);
                rerate.push(lead);
                victims += 1;
            } else {
                k += 1;
            }
        }
        // The candidate taken last made the room, on the placement's GPUs: there is a victim.
        debug_assert!(victims > 0, "a preemption without victims");
        if victims == 0 {
            return false;
        }
        self.making_room.push((job, victims));
        for gpu in target {
            self.view.set_locked(gpu, true);
            self.reserved.push((job, gpu));
        }
        true
    }

    /// This pass's candidates: jobs computing that have held their GPUs `min_run_s` since they
    /// (re)started, with their priority now, if below `above` (the queue goes in priority order,
    /// so no later job of the pass preempts one at or above the first job that tries).
    fn build_candidates(&mut self, above: f64) {
        if self.pass.built {
            return;
        }
        let mut list = std::mem::take(&mut self.pass.rest).into_vec();
        list.clear();
        let min_run_s = self.policy.preemption.min_run_s;
        let mut bound = f64::NEG_INFINITY;
        for &job in &self.computing {
            let s = &self.state[job as usize];
            let priority = self.running_priority(job);
            bound = bound.max(priority);
            if s.run_start + min_run_s > self.now || priority <= above {
                continue;
            }
            list.push(Candidate {
                priority,
                run_start: s.run_start,
                rank: s.rank,
                job,
            });
        }
        self.priority_bound = bound;
        self.pass.rest = BinaryHeap::from(list);
        self.pass.order.clear();
        self.pass.failed.clear();
        self.pass.built = true;
    }

    /// A multi-GPU job takes idle GPUs of one whole-GPU group (as [`policy::place`] places it):
    /// whether taking every candidate below `priority` off the view would leave enough idle GPUs
    /// in a group the job may run in; a GPU comes free when all its jobs are such candidates. A
    /// quick no, without touching the view; always yes for a one-GPU job.
    fn could_free_gpus(&mut self, job: u32, priority: f64) -> bool {
        let need = self.gpus_of(job);
        if need <= 1 {
            return true;
        }
        let n_groups = self.groups.len();
        let mut counts = std::mem::take(&mut self.pass.gpu_counts);
        counts.resize(self.gpus.len(), 0);
        let mut touched = std::mem::take(&mut self.pass.touched);
        touched.clear();
        for c in self.pass.order.iter().chain(self.pass.rest.iter()) {
            if c.priority <= priority {
                continue;
            }
            let s = &self.state[c.job as usize];
            let lead = s.slot.map_or(0, |slot| slot.gpu);
            for &gpu in s.gpus.iter().chain((s.gpus.is_empty()).then_some(&lead)) {
                if counts[gpu as usize] == 0 {
                    touched.push(gpu);
                }
                counts[gpu as usize] += 1;
            }
        }
        let mut free: Vec<usize> = (0..n_groups).map(|g| self.view.idle_count(g)).collect();
        for &gpu in &touched {
            if counts[gpu as usize] == self.view.jobs_on_gpu(gpu) {
                free[self.gpus[gpu as usize].group as usize] += 1;
            }
            counts[gpu as usize] = 0;
        }
        self.pass.gpu_counts = counts;
        self.pass.touched = touched;
        (0..n_groups).any(|group| {
            self.class_of(job, group) != u32::MAX
                && self.groups[group].mode != ShareMode::Mig
                && free[group] >= need as usize
        })
    }

    /// Whether job `a` asks for at least what `b` does: as many GPUs (both one, or both more
    /// than one) and as much memory in every group (`u64::MAX` where it cannot run). Wherever
    /// `b` cannot be placed, neither can `a`. Under `LeastSlowdown` only the same request does:
    /// that rule also reads the job's class and minimum speed, so a job with no minimum speed
    /// may fit beside a co-runner where one that must run alone did not.
    fn asks_no_less(&self, a: u32, b: u32) -> bool {
        if self.policy.placement == PlacementRule::LeastSlowdown {
            return self.kind_of(a).request == self.kind_of(b).request;
        }
        let (ga, gb) = (self.gpus_of(a), self.gpus_of(b));
        (ga == gb || (gb > 1 && ga > gb))
            && (0..self.groups.len()).all(|g| self.memory_of(a, g) >= self.memory_of(b, g))
    }

    /// Takes a job's hold off the view (`false`) or puts it back (`true`), nothing else.
    fn view_hold(&mut self, job: u32, hold: bool) {
        if hold {
            self.probe_released.retain(|&j| j != job);
        } else {
            self.probe_released.push(job);
        }
        let memory = self.state[job as usize].memory_mib;
        let multi = !self.state[job as usize].gpus.is_empty();
        let member = self.member(job);
        for slot in self.held_slots(job) {
            if hold {
                self.view.occupy(slot, memory, member);
                if multi {
                    self.view.set_locked(slot.gpu, true);
                }
            } else {
                self.view.release(slot, memory, member);
                if multi {
                    self.view.set_locked(slot.gpu, false);
                }
            }
        }
    }

    /// Preempts a running job for `room_for`: it stops making progress now and keeps its GPUs
    /// while its checkpoint is written.
    fn suspend(&mut self, job: u32, room_for: u32) {
        let now = self.now;
        for slot in self.held_slots(job) {
            self.meter_leave(job, slot.gpu);
            let part = self.part_index(slot);
            self.parts[part].tenants.remove_job(job);
        }
        self.stop_computing(job);
        self.pausing.push(job);
        let s = &mut self.state[job as usize];
        s.remaining -= s.rate * (now - s.last_update);
        s.last_update = now;
        s.rate = 0.0;
        s.phase = Phase::Checkpointing;
        s.epoch += 1;
        self.state.cold_mut(job).pre.room_for = room_for;
        let at = now + self.policy.preemption.checkpoint_s;
        self.push_job_event(job, at, JobEvent::CheckpointDone);
    }

    /// A preempted job's checkpoint is written: it gives its GPUs back and waits again, with
    /// its progress and attained service kept.
    fn checkpoint_done(&mut self, job: u32) {
        let now = self.now;
        let gpus_held = f64::from(self.gpus_of(job));
        let (gpus, slice, run_start) = {
            let s = &self.state[job as usize];
            let slot = s.slot.expect("a job holding GPUs has a slot");
            let gpus = if s.gpus.is_empty() {
                vec![slot.gpu]
            } else {
                s.gpus.clone()
            };
            (gpus, s.slice, s.run_start)
        };
        self.pausing.retain(|&j| j != job);
        self.give_back(job);
        let rank = {
            let s = &mut self.state[job as usize];
            s.gpus.clear();
            s.rank
        };
        {
            let p = &mut self.state.cold_mut(job).pre;
            p.preempted.push(RunSpan {
                start_s: run_start,
                end_s: now,
                gpus,
                slice,
            });
            p.attained_gpu_s += gpus_held * (now - run_start);
        }
        if let QueueOrder::Las { thresholds_gpu_s } = &self.policy.order {
            let p = &mut self.state.cold_mut(job).pre;
            let reached = thresholds_gpu_s
                .iter()
                .filter(|&&t| t <= p.attained_gpu_s)
                .count() as u32;
            p.level = p.level.max(reached);
        }
        let room_for = self.state.cold(job).pre.room_for;
        // The job it makes room for may have started elsewhere, and even finished, meanwhile.
        let at = self.making_room.iter().position(|&(j, _)| j == room_for);
        let left = at.map_or(0, |at| {
            self.making_room[at].1 -= 1;
            self.making_room[at].1
        });
        if left == 0 {
            if let Some(at) = at {
                self.making_room.swap_remove(at);
            }
            // Every victim is gone (all in this instant): the room is the job's to take in the
            // pass that follows, before any job of lower priority.
            for k in 0..self.reserved.len() {
                let (owner, gpu) = self.reserved[k];
                if owner == room_for {
                    self.view.set_locked(gpu, false);
                }
            }
            self.reserved.retain(|&(owner, _)| owner != room_for);
        }
        self.enqueue(job, rank);
    }

    /// Dynamic MIG: `job` fits no slice now. If a dynamic group could hold it in some allowed
    /// layout and has an idle GPU, start re-cutting that GPU to the layout with the most slices
    /// that hold the job (the first such layout on ties). At most one re-cut per waiting job.
    fn try_recut(&mut self, job: u32) {
        if self.state[job as usize].awaits_recut || self.gpus_of(job) > 1 {
            return;
        }
        let n_groups = self.groups.len();
        for group in 0..n_groups {
            let Some(dynamic) = &self.groups[group].dynamic else {
                continue;
            };
            if self.class_of(job, group) == u32::MAX {
                continue;
            }
            let need = self.memory_of(job, group);
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
                kind: EventKind::Recut {
                    gpu,
                    layout: layout as u16,
                },
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
            // A job that started elsewhere meanwhile may have finished (its state is gone).
            if let Some(s) = self.state.get_mut(job) {
                s.awaits_recut = false;
            }
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
            let group_idx = self.gpus[gpu as usize].group as usize;
            let n_groups = self.groups.len();
            let (state, kinds, rows, classes) =
                (&self.state, &self.kinds, &self.rows_class, &self.classes);
            let tenant_of = |job: u32| {
                let kind = &kinds[state[job as usize].kind as usize];
                let class = rows[kind.row as usize * n_groups + group_idx];
                Tenant {
                    class: &classes[class as usize],
                    sm_budget: group.sm_budget,
                    gpus: kind.gpus,
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
                &CoRun {
                    gpu: group.spec,
                    mode: group.mode,
                    partition: &p.partition,
                    tenants,
                },
                &mut self.scratch_rates,
            );
            for (&job, &rate) in p.tenants.iter().zip(&self.scratch_rates) {
                if !(rate.is_finite() && rate > 0.0) {
                    return Err(EngineError::BadRate {
                        model: self.perf.name(),
                        job: self.job_name(job),
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
                kind: EventKind::Completion {
                    gpu,
                    version: gpu_state.version,
                },
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
        if !self.keep_timeline {
            return;
        }
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

    /// The record of the run; the outcomes of the jobs that never finished (unplaceable ones)
    /// go to `outcomes`, in input order.
    fn finish(mut self, config: &SimConfig, outcomes: OutcomeSink<'_>) -> RunRecord {
        for (job, drawn, outcome) in self.finished.drain(..) {
            outcomes(job, drawn, outcome);
        }
        // Every job has finished or was skipped when it arrived; any left is handed over as it
        // stands.
        for job in self.state.jobs() {
            let (drawn, outcome) = self.take_outcome(job);
            outcomes(job, drawn, outcome);
        }
        let energy = self.meter_record();
        let mut busy_gpu_s = 0.0;
        for b in &self.busy {
            busy_gpu_s += b.busy_s();
        }
        RunRecord {
            outcomes: Vec::new(),
            busy_gpu_s,
            timeline: self.timeline,
            events: self.events,
            mig_reconfigurations: self.reconfigurations,
            total_gpus: self.gpus.len() as u32,
            memory_total_gib: config.cluster.memory_total_gib(),
            energy,
        }
    }

    /// Drops the job's state and makes its outcome; the job itself if the engine drew it.
    fn take_outcome(&mut self, job: u32) -> (Option<Job>, JobOutcome) {
        let n_groups = self.groups.len();
        let kind = self.kind_of(job);
        let row = &self.rows_class[kind.row as usize * n_groups..][..n_groups];
        let gpus = kind.gpus;
        let (s, mut cold) = self.state.remove(job);
        let class = (0..n_groups)
            .map(|g| (g, row[g]))
            .find(|&(g, c)| c != u32::MAX && (s.phase != Phase::Done || g == s.group as usize));
        let exclusive_rate = class.map_or(f64::NAN, |(_, c)| {
            self.classes[c as usize].solo_rate * f64::from(gpus)
        });
        let completed = s.phase == Phase::Done;
        let slot = s.slot.filter(|_| completed);
        let mut gpus = s.gpus;
        if gpus.is_empty() {
            gpus.extend(slot.map(|sl| sl.gpu));
        }
        let outcome = JobOutcome {
            completed,
            start_s: s.start,
            end_s: s.end,
            group: slot.map(|sl| sl.group),
            gpus,
            slice: s.slice.filter(|_| completed),
            mode: slot.map(|sl| self.groups[sl.group as usize].mode),
            exclusive_rate,
            energy_j: self.meter_job_energy(&cold.meter).filter(|_| completed),
            preempted: std::mem::take(&mut cold.pre.preempted),
            resumed_s: s.run_start,
        };
        (cold.drawn.take(), outcome)
    }
}

#[cfg(test)]
mod tests;
