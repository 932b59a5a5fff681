//! `NaiveEngine`: a slow, obviously-correct reference for the engine. At every step it looks
//! at every job and every slot: the next event is the earliest arrival, finish, checkpoint or
//! restore end, Las threshold or end of a minimum run over all jobs, placement is a linear scan,
//! preemption tries ever longer prefixes of the victim order on a copy of the slots, and every
//! rate is recomputed from scratch. It shares only the inputs (SimConfig) and the PerfModel with
//! the real engine.
use std::cmp::Reverse;

use crate::engine::{SimConfig, Unplaceable, srtf_priority};
use crate::hardware::MigSlice;
use crate::perf::{CoRun, JobClass, Partition, ShareMode, Tenant};
use crate::policy::{PlacementRule, QueueOrder};

/// What the naive engine says happened to one job.
#[derive(Clone, Debug, PartialEq)]
pub struct NaiveOutcome {
    pub completed: bool,
    pub start_s: f64,
    pub end_s: f64,
    pub gpus: Vec<u32>,
    pub slice: Option<MigSlice>,
    /// Runs cut short by a preemption: (start, end, GPUs, slice).
    pub preempted: Vec<(f64, f64, Vec<u32>, Option<MigSlice>)>,
}

#[derive(Clone, Debug)]
struct Slot {
    group: usize,
    gpu: u32,
    pos: usize,
    partition: Partition,
    slice: Option<MigSlice>,
    capacity_mib: u64,
    max_jobs: u32,
    jobs: Vec<usize>,
}

struct Job {
    class: Vec<Option<JobClass>>,
    memory_mib: Vec<u64>,
    remaining: f64,
    rate: f64,
    slots: Vec<usize>,
    /// 0 pending, 1 queued, 2 running (making progress), 3 done, 4 skipped, 5 restoring,
    /// 6 checkpointing.
    state: u8,
    start: f64,
    end: f64,
    /// Start of the current (or last) run.
    last_start: f64,
    /// GPU-seconds held before the current run.
    attained: f64,
    /// Las level.
    level: usize,
    /// End of the restore or checkpoint under way.
    phase_end: f64,
    /// Las: when the current run reaches the next threshold.
    demote_at: Option<f64>,
    /// When the current run has lasted min_run_s.
    min_run_at: Option<f64>,
    /// Its victims still checkpointing for it.
    victims_left: usize,
    /// GPUs no job may start on until its victims are gone.
    reserved: Vec<u32>,
    /// While checkpointing: the job it makes room for.
    room_for: usize,
    preempted: Vec<(f64, f64, Vec<u32>, Option<MigSlice>)>,
}

const RUNNING: u8 = 2;
const RESTORING: u8 = 5;
const CHECKPOINTING: u8 = 6;

/// Runs `config` naively.
pub fn run(config: &SimConfig) -> Vec<NaiveOutcome> {
    let mut slots = build_slots(config);
    let mut jobs = build_jobs(config, &slots);
    let mut now = 0.0f64;
    loop {
        let next_arrival = jobs
            .iter()
            .enumerate()
            .filter(|(_, j)| j.state == 0)
            .map(|(i, _)| config.jobs[i].arrival_s)
            .fold(f64::INFINITY, f64::min);
        let next_finish = jobs
            .iter()
            .filter(|j| j.state == 2)
            .map(|j| now + j.remaining / j.rate)
            .fold(f64::INFINITY, f64::min);
        let next_step = jobs
            .iter()
            .flat_map(job_steps)
            .map(|(_, at)| at)
            .fold(f64::INFINITY, f64::min);
        let t0 = next_arrival.min(next_finish).min(next_step);
        if !t0.is_finite() {
            break;
        }
        // One instant: everything up to the horizon happens together, at the latest of it.
        let horizon = crate::engine::same_instant(t0);
        let finishes: Vec<(usize, f64)> = jobs
            .iter()
            .enumerate()
            .filter(|(_, j)| j.state == 2)
            .map(|(i, j)| (i, now + j.remaining / j.rate))
            .filter(|(_, finish)| *finish <= horizon)
            .collect();
        let arrivals: Vec<usize> = (0..jobs.len())
            .filter(|&i| jobs[i].state == 0 && config.jobs[i].arrival_s <= horizon)
            .collect();
        let steps: Vec<(usize, Step, f64)> = jobs
            .iter()
            .enumerate()
            .flat_map(|(i, j)| job_steps(j).map(move |(step, at)| (i, step, at)))
            .filter(|(_, _, at)| *at <= horizon)
            .collect();
        let t = finishes
            .iter()
            .map(|(_, f)| *f)
            .chain(arrivals.iter().map(|&i| config.jobs[i].arrival_s))
            .chain(steps.iter().map(|(_, _, at)| *at))
            .fold(t0, f64::max);
        for job in jobs.iter_mut().filter(|j| j.state == 2) {
            job.remaining -= job.rate * (t - now);
        }
        now = t;
        for (i, finish) in finishes {
            let job = &mut jobs[i];
            job.state = 3;
            job.end = finish;
            for &s in &job.slots {
                slots[s].jobs.retain(|&k| k != i);
            }
        }
        for (i, step, _) in steps {
            match step {
                Step::CheckpointEnd => {
                    let gpus = config.jobs[i].gpus;
                    let job = &mut jobs[i];
                    job.preempted.push((
                        job.last_start,
                        now,
                        job.slots.iter().map(|&s| slots[s].gpu).collect(),
                        job.slots.first().and_then(|&s| slots[s].slice),
                    ));
                    job.attained += f64::from(gpus) * (now - job.last_start);
                    if let QueueOrder::Las { thresholds_gpu_s } = &config.policy.order {
                        let reached = thresholds_gpu_s
                            .iter()
                            .filter(|&&t| t <= job.attained)
                            .count();
                        job.level = job.level.max(reached);
                    }
                    job.state = 1;
                    for &s in &job.slots {
                        slots[s].jobs.retain(|&k| k != i);
                    }
                    job.slots.clear();
                    let room_for = job.room_for;
                    jobs[room_for].victims_left -= 1;
                    if jobs[room_for].victims_left == 0 {
                        jobs[room_for].reserved.clear();
                    }
                }
                Step::RestoreEnd => {
                    jobs[i].state = RUNNING;
                    // It joins its partitions' running jobs last, as if placed now.
                    for &s in &jobs[i].slots {
                        slots[s].jobs.retain(|&k| k != i);
                        slots[s].jobs.push(i);
                    }
                }
                Step::Demote => {
                    let job = &mut jobs[i];
                    job.level += 1;
                    job.demote_at = demote_time(config, job, config.jobs[i].gpus);
                }
                Step::MinRun => jobs[i].min_run_at = None,
            }
        }
        for i in arrivals {
            jobs[i].state = 1;
        }
        schedule(config, &mut slots, &mut jobs, now);
        rerate_all(config, &slots, &mut jobs);
    }
    jobs.iter()
        .map(|j| NaiveOutcome {
            completed: j.state == 3,
            start_s: j.start,
            end_s: j.end,
            gpus: j.slots.iter().map(|&s| slots[s].gpu).collect(),
            slice: j.slots.first().and_then(|&s| slots[s].slice),
            preempted: j.preempted.clone(),
        })
        .collect()
}

#[derive(Clone, Copy, Debug)]
enum Step {
    CheckpointEnd,
    RestoreEnd,
    Demote,
    MinRun,
}

/// The timed steps a job has pending.
fn job_steps(j: &Job) -> impl Iterator<Item = (Step, f64)> {
    let phase_end = match j.state {
        CHECKPOINTING => Some((Step::CheckpointEnd, j.phase_end)),
        RESTORING => Some((Step::RestoreEnd, j.phase_end)),
        _ => None,
    };
    let running = matches!(j.state, RUNNING | RESTORING);
    phase_end
        .into_iter()
        .chain(j.demote_at.filter(|_| running).map(|at| (Step::Demote, at)))
        .chain(
            j.min_run_at
                .filter(|_| running)
                .map(|at| (Step::MinRun, at)),
        )
}

/// Las: when a run reaches the job's next threshold (GPUs x seconds since it began, on top of
/// what it held before).
fn demote_time(config: &SimConfig, job: &Job, gpus: u32) -> Option<f64> {
    let QueueOrder::Las { thresholds_gpu_s } = &config.policy.order else {
        return None;
    };
    let threshold = *thresholds_gpu_s.get(job.level)?;
    Some(job.last_start + (threshold - job.attained) / f64::from(gpus))
}

fn build_slots(config: &SimConfig) -> Vec<Slot> {
    let mut slots = Vec::new();
    let mut gpu = 0u32;
    for (group, g) in config.cluster.groups.iter().enumerate() {
        for _ in 0..g.count {
            match (&g.mig_layout, g.mode) {
                (Some(layout), ShareMode::Mig) => {
                    for (pos, slice) in layout.slices.iter().enumerate() {
                        slots.push(Slot {
                            group,
                            gpu,
                            pos,
                            partition: Partition::slice(g.gpu, slice.profile),
                            slice: Some(*slice),
                            capacity_mib: (slice.profile.memory_gib * 1024.0).floor() as u64,
                            max_jobs: g.jobs_per_slice.max(1),
                            jobs: vec![],
                        });
                    }
                }
                _ => slots.push(Slot {
                    group,
                    gpu,
                    pos: 0,
                    partition: Partition::whole(g.gpu),
                    slice: None,
                    capacity_mib: (g.gpu.memory_gib * 1024.0).floor() as u64,
                    max_jobs: if g.mode == ShareMode::Exclusive {
                        1
                    } else {
                        config.policy.max_jobs_per_gpu.max(1)
                    },
                    jobs: vec![],
                }),
            }
            gpu += 1;
        }
    }
    slots
}

fn build_jobs(config: &SimConfig, slots: &[Slot]) -> Vec<Job> {
    config
        .jobs
        .iter()
        .map(|job| {
            let class: Vec<Option<JobClass>> = config
                .cluster
                .groups
                .iter()
                .map(|g| config.perf.class(g.gpu, &job.model).ok())
                .collect();
            let memory_mib = config
                .cluster
                .groups
                .iter()
                .zip(&class)
                .map(|(g, c)| {
                    c.as_ref().map_or(u64::MAX, |c| {
                        (config.perf.footprint_gib(g.gpu, g.mode, c) * 1024.0).ceil() as u64
                    })
                })
                .collect();
            let mut j = Job {
                class,
                memory_mib,
                remaining: job.samples,
                rate: 0.0,
                slots: vec![],
                state: 0,
                start: f64::NAN,
                end: f64::NAN,
                last_start: f64::NAN,
                attained: 0.0,
                level: 0,
                phase_end: f64::NAN,
                demote_at: None,
                min_run_at: None,
                victims_left: 0,
                reserved: Vec::new(),
                room_for: usize::MAX,
                preempted: Vec::new(),
            };
            if !can_ever_run(config, slots, &j, job.gpus)
                || !meets_min_speed_somewhere(config, slots, &j, job)
            {
                assert_eq!(
                    config.on_unplaceable,
                    Unplaceable::Skip,
                    "naive engine: unplaceable job with on_unplaceable = Error"
                );
                j.state = 4;
            }
            j
        })
        .collect()
}

fn can_ever_run(config: &SimConfig, slots: &[Slot], job: &Job, gpus: u32) -> bool {
    config.cluster.groups.iter().enumerate().any(|(g, group)| {
        job.class[g].is_some()
            && if gpus > 1 {
                group.mode != ShareMode::Mig
                    && group.count >= gpus
                    && slots
                        .iter()
                        .any(|s| s.group == g && s.capacity_mib >= job.memory_mib[g])
            } else {
                slots
                    .iter()
                    .any(|s| s.group == g && s.capacity_mib >= job.memory_mib[g])
            }
    })
}

/// Under `LeastSlowdown`, a single-GPU job with a minimum speed needs a slot where, alone, it
/// keeps that speed.
fn meets_min_speed_somewhere(
    config: &SimConfig,
    slots: &[Slot],
    job: &Job,
    spec: &crate::workload::Job,
) -> bool {
    let Some(min) = spec.min_speed.map(crate::workload::MinSpeed::get) else {
        return true;
    };
    if config.policy.placement != PlacementRule::LeastSlowdown || spec.gpus > 1 {
        return true;
    }
    slots.iter().any(|s| {
        let group = &config.cluster.groups[s.group];
        let Some(class) = &job.class[s.group] else {
            return false;
        };
        if s.capacity_mib < job.memory_mib[s.group] {
            return false;
        }
        let tenant = Tenant {
            class,
            sm_budget: group.sm_budget.filter(|_| group.mode == ShareMode::Mps),
            gpus: 1,
        };
        let mut rate = [0.0];
        config.perf.rates(
            &CoRun {
                gpu: group.gpu,
                mode: group.mode,
                partition: &s.partition,
                tenants: &[tenant],
            },
            &mut rate,
        );
        rate[0] / class.solo_rate >= min
    })
}

/// Seconds `samples` of job `i` take alone on the first group with a class for it.
fn alone_s(config: &SimConfig, jobs: &[Job], i: usize, samples: f64) -> f64 {
    let rate = jobs[i]
        .class
        .iter()
        .flatten()
        .next()
        .map_or(f64::MAX, |c| c.solo_rate);
    samples / (rate * f64::from(config.jobs[i].gpus))
}

/// Priority under a preemptive order, lower first: the Las level, or the remaining seconds
/// alone (Srtf) on the engine's grid, which keeps the rounding that stepping `remaining` at
/// every instant piles up from deciding a tie.
fn priority(config: &SimConfig, jobs: &[Job], i: usize) -> f64 {
    match config.policy.order {
        QueueOrder::Las { .. } => jobs[i].level as f64,
        _ => srtf_priority(alone_s(config, jobs, i, jobs[i].remaining)),
    }
}

fn queue_order(config: &SimConfig, jobs: &[Job]) -> Vec<usize> {
    let mut queued: Vec<usize> = (0..jobs.len()).filter(|&i| jobs[i].state == 1).collect();
    let key = |i: usize| -> (f64, f64, usize) {
        let j = &config.jobs[i];
        let order = match config.policy.order {
            QueueOrder::Fifo => 0.0,
            QueueOrder::ShortestFirst => alone_s(config, jobs, i, j.samples),
            QueueOrder::Las { .. } | QueueOrder::Srtf => priority(config, jobs, i),
        };
        (order, j.arrival_s, i)
    };
    queued.sort_by(|&a, &b| {
        let (ka, kb) = (key(a), key(b));
        ka.0.total_cmp(&kb.0)
            .then(ka.1.total_cmp(&kb.1))
            .then(ka.2.cmp(&kb.2))
    });
    queued
}

fn schedule(config: &SimConfig, slots: &mut [Slot], jobs: &mut [Job], now: f64) {
    let allowed_misses = if config.policy.backfill {
        config.policy.backfill_depth.max(1)
    } else {
        1
    };
    let mut misses = 0;
    let costs = config.policy.preemption;
    for i in queue_order(config, jobs) {
        match find(config, slots, jobs, i) {
            Some((_, chosen)) => {
                for &s in &chosen {
                    slots[s].jobs.push(i);
                }
                let gpus = config.jobs[i].gpus;
                let job = &mut jobs[i];
                job.slots = chosen;
                let resumed = !job.preempted.is_empty();
                if !resumed {
                    job.start = now;
                }
                job.last_start = now;
                if resumed && costs.restore_s > 0.0 {
                    job.state = RESTORING;
                    job.phase_end = now + costs.restore_s;
                } else {
                    job.state = RUNNING;
                }
                if config.policy.order.preempts() {
                    job.demote_at = demote_time(config, job, gpus);
                    job.min_run_at = (costs.min_run_s > 0.0).then_some(now + costs.min_run_s);
                }
            }
            None => {
                preempt(config, slots, jobs, i, now);
                misses += 1;
                if misses >= allowed_misses {
                    return;
                }
            }
        }
    }
}

/// If job `i` has a higher priority than some running jobs that have run `min_run_s`: take them
/// in victim order (lowest priority, then latest start, then latest arrival) until `i` would fit
/// without the first k of them, and suspend those of the k on the GPUs it would take.
fn preempt(config: &SimConfig, slots: &[Slot], jobs: &mut [Job], i: usize, now: f64) {
    if !config.policy.order.preempts() || jobs[i].victims_left > 0 {
        return;
    }
    let costs = config.policy.preemption;
    let mine = priority(config, jobs, i);
    let mut victims: Vec<usize> = (0..jobs.len())
        .filter(|&k| jobs[k].state == RUNNING && jobs[k].last_start + costs.min_run_s <= now)
        .filter(|&k| priority(config, jobs, k) > mine)
        .collect();
    victims.sort_by(|&a, &b| {
        priority(config, jobs, b)
            .total_cmp(&priority(config, jobs, a))
            .then(jobs[b].last_start.total_cmp(&jobs[a].last_start))
            .then(
                config.jobs[b]
                    .arrival_s
                    .total_cmp(&config.jobs[a].arrival_s),
            )
            .then(b.cmp(&a))
    });
    for k in 1..=victims.len() {
        let mut without = slots.to_vec();
        for slot in &mut without {
            slot.jobs.retain(|j| !victims[..k].contains(j));
        }
        let Some((_, chosen)) = find(config, &without, jobs, i) else {
            continue;
        };
        let taken: Vec<u32> = chosen.iter().map(|&s| slots[s].gpu).collect();
        for &v in &victims[..k] {
            if jobs[v].slots.iter().any(|&s| taken.contains(&slots[s].gpu)) {
                let job = &mut jobs[v];
                job.state = CHECKPOINTING;
                job.phase_end = now + costs.checkpoint_s;
                job.room_for = i;
                jobs[i].victims_left += 1;
            }
        }
        jobs[i].reserved = taken;
        return;
    }
}

fn used_mib(slots: &[Slot], jobs: &[Job], s: usize) -> u64 {
    slots[s]
        .jobs
        .iter()
        .map(|&k| jobs[k].memory_mib[slots[s].group])
        .sum()
}

fn gpu_jobs(slots: &[Slot], gpu: u32) -> usize {
    slots
        .iter()
        .filter(|s| s.gpu == gpu)
        .map(|s| s.jobs.len())
        .sum()
}

/// Held by a multi-GPU job, or reserved for a job whose victims are checkpointing.
fn locked(slots: &[Slot], jobs: &[Job], gpu: u32) -> bool {
    slots
        .iter()
        .filter(|s| s.gpu == gpu)
        .flat_map(|s| &s.jobs)
        .any(|&k| jobs[k].slots.len() > 1)
        || jobs.iter().any(|j| j.reserved.contains(&gpu))
}

fn find(config: &SimConfig, slots: &[Slot], jobs: &[Job], i: usize) -> Option<(usize, Vec<usize>)> {
    let want = config.jobs[i].gpus;
    (0..config.cluster.groups.len()).find_map(|g| {
        jobs[i].class[g].as_ref()?;
        let need = jobs[i].memory_mib[g];
        let in_group: Vec<usize> = (0..slots.len()).filter(|&s| slots[s].group == g).collect();
        if want > 1 {
            if config.cluster.groups[g].mode == ShareMode::Mig {
                return None;
            }
            let idle: Vec<usize> = in_group
                .iter()
                .copied()
                .filter(|&s| {
                    gpu_jobs(slots, slots[s].gpu) == 0 && !locked(slots, jobs, slots[s].gpu)
                })
                .take(want as usize)
                .collect();
            return (idle.len() == want as usize).then_some((g, idle));
        }
        let room = |s: usize| {
            slots[s].capacity_mib >= need
                && (slots[s].jobs.len() as u32) < slots[s].max_jobs
                && !locked(slots, jobs, slots[s].gpu)
                && slots[s].capacity_mib - used_mib(slots, jobs, s) >= need
        };
        let is_mig = config.cluster.groups[g].mode == ShareMode::Mig;
        let exclusive_group = in_group.iter().all(|&s| slots[s].max_jobs == 1 && !is_mig);
        let first_empty = || {
            let empty = |s: usize| {
                if is_mig {
                    slots[s].jobs.is_empty()
                } else {
                    gpu_jobs(slots, slots[s].gpu) == 0
                }
            };
            in_group
                .iter()
                .copied()
                .filter(|&s| empty(s) && room(s))
                .min_by_key(|&s| (slots[s].gpu, slots[s].pos))
        };
        let open = || in_group.iter().copied().filter(|&s| room(s));
        let pick = match config.policy.placement {
            PlacementRule::Exclusive => first_empty(),
            PlacementRule::FirstFit | PlacementRule::BestFit if exclusive_group => first_empty(),
            PlacementRule::FirstFit => open().min_by_key(|&s| (slots[s].gpu, slots[s].pos)),
            PlacementRule::BestFit if is_mig => open().min_by_key(|&s| {
                (
                    slots[s].capacity_mib,
                    slots[s].slice.map_or(0, |x| x.profile.sms),
                    slots[s].pos,
                    slots[s].gpu,
                )
            }),
            PlacementRule::BestFit => open().min_by_key(|&s| {
                (
                    slots[s].capacity_mib - used_mib(slots, jobs, s),
                    slots[s].gpu,
                )
            }),
            PlacementRule::Spread => open().min_by_key(|&s| {
                (
                    slots[s].jobs.len(),
                    gpu_jobs(slots, slots[s].gpu),
                    Reverse(slots[s].capacity_mib - used_mib(slots, jobs, s)),
                    slots[s].gpu,
                    slots[s].pos,
                )
            }),
            PlacementRule::LeastSlowdown => open()
                .filter_map(|s| set_loss(config, slots, jobs, s, i).map(|loss| (loss, s)))
                .min_by(|a, b| {
                    a.0.total_cmp(&b.0).then(
                        (slots[a.1].gpu, slots[a.1].pos).cmp(&(slots[b.1].gpu, slots[b.1].pos)),
                    )
                })
                .map(|(_, s)| s),
        };
        pick.map(|s| (g, vec![s]))
    })
}

/// The predicted loss (sum of 1 - rate / alone rate) of slot `s`'s jobs with job `i` added
/// last, or `None` if one would run below its minimum speed.
fn set_loss(config: &SimConfig, slots: &[Slot], jobs: &[Job], s: usize, i: usize) -> Option<f64> {
    let slot = &slots[s];
    let members: Vec<usize> = slot.jobs.iter().copied().chain([i]).collect();
    let rates = member_rates(config, slot, jobs, &members);
    let mut loss = 0.0;
    for (&k, rate) in members.iter().zip(rates) {
        let class = jobs[k].class[slot.group]
            .as_ref()
            .expect("placed job has a class");
        let speed = rate / (class.solo_rate * f64::from(config.jobs[k].gpus));
        if let Some(min) = config.jobs[k].min_speed.map(crate::workload::MinSpeed::get)
            && (speed < min || speed.is_nan())
        {
            return None;
        }
        loss += 1.0 - speed;
    }
    Some(loss)
}

/// The rates the performance model gives `members` (job indices) sharing `slot`'s partition.
fn member_rates(config: &SimConfig, slot: &Slot, jobs: &[Job], members: &[usize]) -> Vec<f64> {
    let group = &config.cluster.groups[slot.group];
    let tenants: Vec<Tenant<'_>> = members
        .iter()
        .map(|&k| Tenant {
            class: jobs[k].class[slot.group]
                .as_ref()
                .expect("placed job has a class"),
            sm_budget: group.sm_budget.filter(|_| group.mode == ShareMode::Mps),
            gpus: config.jobs[k].gpus,
        })
        .collect();
    let mut rates = vec![0.0; tenants.len()];
    config.perf.rates(
        &CoRun {
            gpu: group.gpu,
            mode: group.mode,
            partition: &slot.partition,
            tenants: &tenants,
        },
        &mut rates,
    );
    rates
}

fn rerate_all(config: &SimConfig, slots: &[Slot], jobs: &mut [Job]) {
    for slot in slots {
        let lead: Vec<usize> = slot
            .jobs
            .iter()
            .copied()
            .filter(|&k| jobs[k].state == RUNNING && slots[jobs[k].slots[0]].gpu == slot.gpu)
            .collect();
        if lead.is_empty() {
            continue;
        }
        let rates = member_rates(config, slot, jobs, &lead);
        for (&k, r) in lead.iter().zip(rates) {
            jobs[k].rate = r;
        }
    }
}
