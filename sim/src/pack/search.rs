//! Packings as set partitions of the jobs into GPU sets: exhaustive enumeration for a few jobs,
//! beam search beyond (see the module docs for the bound).
use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

use super::configs::{
    Ctx, SetBest, best_per_family, best_per_family_within, configs_per_set, evaluate,
};
use super::{
    BEAM_SET_MAX_CONFIGS, BEAM_WIDTH, BeamReason, EXHAUSTIVE_MAX_CONFIGS, EXHAUSTIVE_MAX_JOBS,
    Family, GpuConfig, MAX_JOBS, PackError, PackProgress, PackReport, PackRequest, Packing,
    SINGLE_MODES, SearchMethod,
};

/// Where a search reports how far it has got.
pub(super) type Progress<'a> = dyn Fn(PackProgress) + Sync + 'a;
use crate::perf::PerfModel;

/// A packing found by the search: its total and its GPU sets (job bitmasks).
#[derive(Clone, Debug, PartialEq)]
struct Candidate {
    total: f64,
    sets: Vec<u64>,
}

/// Best first; equal totals in a fixed order of sets, so results do not depend on threads.
fn better(a: &Candidate, b: &Candidate) -> std::cmp::Ordering {
    b.total
        .total_cmp(&a.total)
        .then_with(|| a.sets.len().cmp(&b.sets.len()))
        .then_with(|| a.sets.cmp(&b.sets))
}

/// Keeps the `capacity` best candidates.
#[derive(Clone, Debug, Default)]
struct TopList {
    capacity: usize,
    items: Vec<Candidate>,
}

impl TopList {
    fn new(capacity: usize) -> Self {
        Self {
            capacity,
            items: Vec::new(),
        }
    }

    fn offer(&mut self, candidate: Candidate) {
        if self.items.len() == self.capacity
            && self
                .items
                .last()
                .is_some_and(|worst| better(worst, &candidate).is_lt())
        {
            return;
        }
        let at = self
            .items
            .partition_point(|c| better(c, &candidate).is_lt());
        self.items.insert(at, candidate);
        self.items.truncate(self.capacity);
    }

    fn merge(&mut self, other: TopList) {
        for c in other.items {
            self.offer(c);
        }
    }
}

/// Best candidates per number of GPUs used: overall, and per single mode.
#[derive(Clone, Debug)]
struct Tally {
    /// Index: GPUs used.
    overall: Vec<TopList>,
    single: Vec<[Option<Candidate>; SINGLE_MODES.len()]>,
    partitions: u64,
}

impl Tally {
    fn new(n_jobs: usize, top: usize) -> Self {
        Self {
            overall: vec![TopList::new(top); n_jobs + 1],
            single: vec![Default::default(); n_jobs + 1],
            partitions: 0,
        }
    }

    fn record(&mut self, table: &[Option<SetBest>], sets: &[u64]) {
        self.partitions += 1;
        let total_in = |families: &[Family]| -> Option<f64> {
            sets.iter()
                .map(|&s| {
                    table[s as usize]
                        .as_ref()?
                        .best_in(families)
                        .map(|b| b.total)
                })
                .sum()
        };
        let n = sets.len();
        if let Some(total) = total_in(&Family::ALL) {
            self.overall[n].offer(Candidate {
                total,
                sets: sets.to_vec(),
            });
        }
        for (idx, (_, families)) in SINGLE_MODES.iter().enumerate() {
            if let Some(total) = total_in(families) {
                let candidate = Candidate {
                    total,
                    sets: sets.to_vec(),
                };
                let slot = &mut self.single[n][idx];
                if slot.as_ref().is_none_or(|s| better(&candidate, s).is_lt()) {
                    *slot = Some(candidate);
                }
            }
        }
    }

    fn merge(&mut self, other: Tally) {
        self.partitions += other.partitions;
        for (mine, theirs) in self.overall.iter_mut().zip(other.overall) {
            mine.merge(theirs);
        }
        for (mine, theirs) in self.single.iter_mut().zip(other.single) {
            for (slot, candidate) in mine.iter_mut().zip(theirs) {
                if let Some(c) = candidate
                    && slot.as_ref().is_none_or(|s| better(&c, s).is_lt())
                {
                    *slot = Some(c);
                }
            }
        }
    }
}

fn members(mask: u64) -> Vec<usize> {
    (0..64).filter(|&i| mask & (1u64 << i) != 0).collect()
}

/// Entry point behind [`super::pack`].
pub(super) fn run(
    model: &dyn PerfModel,
    request: &PackRequest,
    progress: &Progress<'_>,
) -> Result<PackReport, PackError> {
    let ctx = context(model, request)?;
    let n = request.jobs.len();
    let exclusive = exclusive_packing(&ctx, request)?;
    let configs = exhaustive_configs(&ctx, n, request.max_jobs_per_gpu);
    let (gpus, gpus_are_fewest, best, single, method, evaluated) = if n > EXHAUSTIVE_MAX_JOBS {
        beam_search(&ctx, request, BeamReason::ManyJobs, progress)?
    } else if configs > EXHAUSTIVE_MAX_CONFIGS {
        beam_search(&ctx, request, BeamReason::ManyConfigs(configs), progress)?
    } else {
        exhaustive(&ctx, request, progress)?
    };
    Ok(PackReport {
        gpus,
        gpus_are_fewest,
        best,
        single_mode: single,
        exclusive,
        method,
        configs_evaluated: evaluated,
        job_origins: ctx.classes.iter().map(|c| c.origin).collect(),
        origin: model.origin(request.gpu),
        perf_model: model.name().to_owned(),
    })
}

pub(super) type Found = (
    u32,
    bool,
    Vec<Packing>,
    Vec<(&'static str, Option<Packing>)>,
    SearchMethod,
    u64,
);

pub(super) fn context<'a>(
    model: &'a dyn PerfModel,
    request: &PackRequest,
) -> Result<Ctx<'a>, PackError> {
    let n = request.jobs.len();
    if n == 0 {
        return Err(PackError::NoJobs);
    }
    if n > MAX_JOBS {
        return Err(PackError::TooManyJobs(n));
    }
    if request.max_jobs_per_gpu == 0 || request.top == 0 || request.gpus == Some(0) {
        return Err(PackError::Option(
            "--gpus, --max-per-gpu and --top must be at least 1".into(),
        ));
    }
    let classes = request
        .jobs
        .iter()
        .map(|j| {
            model
                .class(request.gpu, &j.key)
                .map_err(|source| PackError::Perf {
                    job: j.key.to_string(),
                    source: Box::new(source),
                })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mins = request.jobs.iter().map(|j| j.min_fraction).collect();
    Ok(Ctx::new(model, request.gpu, classes, mins))
}

/// Configurations the exhaustive search scores for `n` jobs: every GPU set of at most
/// `max_per_gpu` jobs in every configuration (saturating at `u64::MAX`).
pub(super) fn exhaustive_configs(ctx: &Ctx<'_>, n: usize, max_per_gpu: usize) -> u64 {
    let mut sets_of_size = 1u64; // C(n, m), built up as m grows
    let mut total = 0u64;
    for m in 1..=max_per_gpu.min(n) {
        sets_of_size = sets_of_size.saturating_mul((n + 1 - m) as u64) / m as u64;
        total = total.saturating_add(sets_of_size.saturating_mul(configs_per_set(ctx, m)));
    }
    total
}

/// One job per GPU; fails when a job does not fit even alone.
fn exclusive_packing(ctx: &Ctx<'_>, request: &PackRequest) -> Result<Packing, PackError> {
    let mut gpus = Vec::with_capacity(request.jobs.len());
    for (idx, job) in request.jobs.iter().enumerate() {
        let Some(plan) = evaluate(ctx, &[idx], &GpuConfig::Exclusive) else {
            let mode = GpuConfig::Exclusive.mode();
            return Err(PackError::DoesNotFit {
                job: job.key.to_string(),
                gpu: request.gpu.name.to_owned(),
                need_gib: ctx.model.footprint_gib(ctx.gpu, mode, &ctx.classes[idx]),
                have_gib: ctx.gpu.memory_gib,
            });
        };
        gpus.push(plan);
    }
    Ok(Packing::from_gpus(gpus))
}

/// Scores every GPU set, then walks every set partition (in parallel over the set that holds
/// job 0).
pub(super) fn exhaustive(
    ctx: &Ctx<'_>,
    request: &PackRequest,
    progress: &Progress<'_>,
) -> Result<Found, PackError> {
    let n = request.jobs.len();
    let (masks, table, evaluated) = score_all_sets(ctx, request, progress);
    let keep = request.top * 4 + 8;
    let all: u64 = (1u64 << n) - 1;
    let first_sets: Vec<u64> = masks.iter().copied().filter(|m| m & 1 == 1).collect();
    let tally = first_sets
        .par_iter()
        .filter(|&&first| table[first as usize].is_some())
        .map(|&first| {
            let mut tally = Tally::new(n, keep);
            let mut sets = vec![first];
            walk(&table, all ^ first, &mut sets, &mut tally);
            tally
        })
        .reduce(
            || Tally::new(n, keep),
            |mut a, b| {
                a.merge(b);
                a
            },
        );
    let method = SearchMethod::Exhaustive {
        partitions: tally.partitions,
    };
    let (gpus, fewest) = choose_gpus(request, |g| !tally.overall[g].items.is_empty())
        .ok_or_else(|| infeasible(ctx, request, |g| !tally.overall[g].items.is_empty()))?;
    let limit = (gpus as usize).min(n);
    let mut overall = TopList::new(keep);
    for list in &tally.overall[1..=limit] {
        overall.merge(list.clone());
    }
    let lookup = |mask: u64| table[mask as usize].clone();
    let best = materialize(ctx, &lookup, &overall.items, &Family::ALL, request.top);
    let single = SINGLE_MODES
        .iter()
        .enumerate()
        .map(|(idx, (name, families))| {
            let found: Vec<Candidate> = (1..=limit)
                .filter_map(|g| tally.single[g][idx].clone())
                .collect();
            let mut list = TopList::new(1);
            found.into_iter().for_each(|c| list.offer(c));
            let packing = materialize(ctx, &lookup, &list.items, families, 1).pop();
            (*name, packing)
        })
        .collect();
    Ok((gpus, fewest, best, single, method, evaluated))
}

/// Every GPU set of at most `max_jobs_per_gpu` jobs, scored in parallel; the table (indexed by
/// mask) holds the sets with a feasible configuration.
fn score_all_sets(
    ctx: &Ctx<'_>,
    request: &PackRequest,
    progress: &Progress<'_>,
) -> (Vec<u64>, Vec<Option<SetBest>>, u64) {
    let n = request.jobs.len();
    let max_per_gpu = request.max_jobs_per_gpu.min(n);
    let masks: Vec<u64> = (1..1u64 << n)
        .filter(|m| m.count_ones() as usize <= max_per_gpu)
        .collect();
    let total = exhaustive_configs(ctx, n, max_per_gpu);
    let done = AtomicU64::new(0);
    let scored: Vec<SetBest> = masks
        .par_iter()
        .map(|&m| {
            let best = best_per_family(ctx, &members(m));
            let scored = done.fetch_add(best.evaluated, Ordering::Relaxed) + best.evaluated;
            progress(PackProgress {
                configs_scored: scored,
                configs_total: Some(total),
            });
            best
        })
        .collect();
    let evaluated = scored.iter().map(|s| s.evaluated).sum();
    let mut table: Vec<Option<SetBest>> = vec![None; 1 << n];
    for (mask, best) in masks.iter().zip(scored) {
        if best.best_in(&Family::ALL).is_some() {
            table[*mask as usize] = Some(best);
        }
    }
    (masks, table, evaluated)
}

/// Depth-first over set partitions: the next set always holds the lowest job left.
fn walk(table: &[Option<SetBest>], remaining: u64, sets: &mut Vec<u64>, tally: &mut Tally) {
    if remaining == 0 {
        tally.record(table, sets);
        return;
    }
    let lowest = remaining & remaining.wrapping_neg();
    let rest = remaining ^ lowest;
    let mut sub = rest;
    loop {
        let set = sub | lowest;
        if table[set as usize].is_some() {
            sets.push(set);
            walk(table, remaining ^ set, sets, tally);
            sets.pop();
        }
        if sub == 0 {
            break;
        }
        sub = (sub - 1) & rest;
    }
}

/// The GPU count to report on: the request's, or the fewest with a feasible packing.
fn choose_gpus(request: &PackRequest, feasible: impl Fn(usize) -> bool) -> Option<(u32, bool)> {
    let n = request.jobs.len();
    match request.gpus {
        Some(g) => (1..=(g as usize).min(n))
            .any(&feasible)
            .then_some((g, false)),
        None => (1..=n).find(|&g| feasible(g)).map(|g| (g as u32, true)),
    }
}

/// Why no packing fits on the GPUs allowed: the jobs that cannot reach their own minimum
/// beside any other job (whatever that job's minimum), and the fewest GPUs that would do.
fn infeasible(ctx: &Ctx<'_>, request: &PackRequest, feasible: impl Fn(usize) -> bool) -> PackError {
    let n = request.jobs.len();
    let gpus = request.gpus.unwrap_or(n as u32);
    let loners: Vec<String> = (0..n)
        .filter(|&j| cannot_share(ctx, j))
        .map(|j| describe_job(request, j))
        .collect();
    let fewest = (1..=n).find(|&g| feasible(g)).unwrap_or(n);
    let mut why = String::new();
    if !loners.is_empty() {
        why.push_str(&format!(
            "{} cannot reach their minimum beside any other job (each needs a GPU of its own); ",
            loners.join(", ")
        ));
    }
    let max_per_gpu = request.max_jobs_per_gpu;
    let held = (gpus as usize).saturating_mul(max_per_gpu);
    if held < n {
        // Not a question of minimums: the GPUs allowed cannot hold the jobs at all.
        let raise = if lightest_fit(ctx, n.div_ceil(gpus.max(1) as usize)) {
            " or raise --max-per-gpu"
        } else {
            " (raising --max-per-gpu would not help: no GPU holds that many of these jobs in \
             memory)"
        };
        why.push_str(&format!(
            "{gpus} GPU(s) of at most {max_per_gpu} jobs each (--max-per-gpu {max_per_gpu}) hold {held} of the {n} jobs; the fewest GPUs that meet every minimum is {fewest}; use --gpus {fewest}{raise}"
        ));
    } else if request.jobs.iter().any(|j| j.min_fraction > 0.0) {
        why.push_str(&format!(
            "the fewest GPUs that meet every minimum is {fewest}; use --gpus {fewest} or lower the minimums"
        ));
    } else {
        why.push_str(&format!(
            "the jobs do not fit in memory together; the fewest GPUs that hold them is {fewest}; use --gpus {fewest}"
        ));
    }
    PackError::Infeasible { gpus, why }
}

/// Whether one GPU could hold `count` of the jobs in memory, sharing as plain processes or
/// under MPS: the lightest `count`, by each job's footprint in that mode. Some GPU of `g` must
/// hold `ceil(n / g)` jobs; where the lightest that many do not fit, raising `--max-per-gpu`
/// cannot help.
fn lightest_fit(ctx: &Ctx<'_>, count: usize) -> bool {
    use crate::perf::ShareMode;
    [ShareMode::Timeslice, ShareMode::Mps].iter().any(|&mode| {
        let mut footprints: Vec<f64> = ctx
            .classes
            .iter()
            .map(|c| ctx.model.footprint_gib(ctx.gpu, mode, c))
            .collect();
        footprints.sort_by(f64::total_cmp);
        footprints.len() >= count
            && footprints.iter().take(count).sum::<f64>() <= ctx.gpu.memory_gib
    })
}

/// Whether job `j` misses its minimum in every pair, counting only its own minimum.
fn cannot_share(ctx: &Ctx<'_>, j: usize) -> bool {
    let only_j: Vec<f64> = (0..ctx.mins.len())
        .map(|k| if k == j { ctx.mins[j] } else { 0.0 })
        .collect();
    let solo = Ctx::new(ctx.model, ctx.gpu, ctx.classes.clone(), only_j);
    (0..ctx.mins.len()).filter(|&k| k != j).all(|k| {
        let pair = if j < k { [j, k] } else { [k, j] };
        best_per_family(&solo, &pair)
            .best_in(&Family::ALL)
            .is_none()
    })
}

fn describe_job(request: &PackRequest, job: usize) -> String {
    let j = &request.jobs[job];
    match j.min_fraction {
        0.0 => format!("#{} {}", job + 1, j.key),
        min => format!("#{} {}@{min}", job + 1, j.key),
    }
}

/// Turns candidates into packings with full predictions, best first, dropping packings that
/// differ only by swapping identical jobs.
fn materialize(
    ctx: &Ctx<'_>,
    lookup: &dyn Fn(u64) -> Option<SetBest>,
    candidates: &[Candidate],
    families: &[Family],
    top: usize,
) -> Vec<Packing> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for candidate in candidates {
        let gpus: Option<Vec<_>> = candidate
            .sets
            .iter()
            .map(|&set| {
                let best = lookup(set)?;
                let config = best.best_in(families)?.config.clone();
                evaluate(ctx, &members(set), &config)
            })
            .collect();
        let Some(mut gpus) = gpus else { continue };
        gpus.sort_by_key(|g| g.jobs.first().map_or(usize::MAX, |j| j.job));
        let packing = Packing::from_gpus(gpus);
        if seen.insert(signature(ctx, &packing)) {
            out.push(packing);
        }
        if out.len() == top {
            break;
        }
    }
    out
}

/// Text that is equal for packings that differ only by which of two identical jobs goes where.
fn signature(ctx: &Ctx<'_>, packing: &Packing) -> Vec<String> {
    let mut gpus: Vec<String> = packing
        .gpus
        .iter()
        .map(|g| {
            let mut jobs: Vec<String> = g
                .jobs
                .iter()
                .map(|j| {
                    let c = &ctx.classes[j.job];
                    format!("{}@{}@{}", c.key, ctx.mins[j.job], j.place)
                })
                .collect();
            jobs.sort();
            format!("{} {}", g.config, jobs.join(","))
        })
        .collect();
    gpus.sort();
    gpus
}

/// Beam search for more than [`EXHAUSTIVE_MAX_JOBS`] jobs or [`EXHAUSTIVE_MAX_CONFIGS`]
/// configurations.
pub(super) fn beam_search(
    ctx: &Ctx<'_>,
    request: &PackRequest,
    reason: BeamReason,
    progress: &Progress<'_>,
) -> Result<Found, PackError> {
    let n = request.jobs.len();
    let mut beam = Beam {
        ctx,
        max_per_gpu: request.max_jobs_per_gpu.min(n),
        cache: HashMap::new(),
        evaluated: 0,
        progress,
    };
    let lower = n.div_ceil(beam.max_per_gpu);
    let mut feasible_at: HashMap<usize, Vec<Candidate>> = HashMap::new();
    let mut states_for = |g: usize, beam: &mut Beam<'_, '_, '_>| -> bool {
        let states = feasible_at
            .entry(g)
            .or_insert_with(|| beam.run(g, &Family::ALL));
        !states.is_empty()
    };
    let chosen = match request.gpus {
        Some(g) => states_for((g as usize).min(n), &mut beam).then_some((g, false)),
        None => (lower..=n)
            .find(|&g| states_for(g, &mut beam))
            .map(|g| (g as u32, true)),
    };
    let Some((gpus, fewest)) = chosen else {
        let fewest = (lower..=n).find(|&g| states_for(g, &mut beam));
        return Err(infeasible(ctx, request, |g| Some(g) == fewest));
    };
    let limit = (gpus as usize).min(n);
    let candidates = feasible_at.remove(&limit).unwrap_or_default();
    let single: Vec<(&str, Vec<Candidate>)> = SINGLE_MODES
        .iter()
        .map(|(name, families)| (*name, beam.run(limit, families)))
        .collect();
    let cache = beam.cache;
    let lookup = |mask: u64| cache.get(&mask).cloned();
    let best = materialize(ctx, &lookup, &candidates, &Family::ALL, request.top);
    let single = single
        .into_iter()
        .zip(SINGLE_MODES)
        .map(|((name, found), (_, families))| {
            (name, materialize(ctx, &lookup, &found, families, 1).pop())
        })
        .collect();
    let evaluated = beam.evaluated;
    let method = SearchMethod::Beam {
        width: BEAM_WIDTH,
        reason,
    };
    Ok((gpus, fewest, best, single, method, evaluated))
}

struct Beam<'c, 'm, 'p> {
    ctx: &'c Ctx<'m>,
    max_per_gpu: usize,
    cache: HashMap<u64, SetBest>,
    evaluated: u64,
    progress: &'p Progress<'p>,
}

impl Beam<'_, '_, '_> {
    /// Complete packings on at most `limit` GPUs using `families`, best first.
    fn run(&mut self, limit: usize, families: &[Family]) -> Vec<Candidate> {
        let classes = &self.ctx.classes;
        let mut order: Vec<usize> = (0..classes.len()).collect();
        let occupancy = |j: usize| classes[j].time_demand * classes[j].space_demand;
        order.sort_by(|&a, &b| occupancy(b).total_cmp(&occupancy(a)).then(a.cmp(&b)));
        let mut states = vec![Candidate {
            total: 0.0,
            sets: Vec::new(),
        }];
        for job in order {
            let bit = 1u64 << job;
            self.score_sets(&states, bit);
            let mut next = Vec::new();
            for state in &states {
                self.extend(state, bit, limit, families, &mut next);
            }
            next.sort_by(better);
            next.dedup_by(|a, b| a.sets == b.sets);
            next.truncate(super::BEAM_WIDTH);
            states = next;
        }
        states
    }

    fn total(&self, set: u64, families: &[Family]) -> Option<f64> {
        let best = self.cache.get(&set)?.best_in(families)?;
        Some(best.total)
    }

    /// The states after placing `bit` on each GPU of `state`, or on a new GPU.
    fn extend(
        &self,
        state: &Candidate,
        bit: u64,
        limit: usize,
        families: &[Family],
        next: &mut Vec<Candidate>,
    ) {
        let mut push = |sets: Vec<u64>, total: f64| {
            let mut sets = sets;
            sets.sort_unstable();
            next.push(Candidate { total, sets });
        };
        for (idx, &set) in state.sets.iter().enumerate() {
            let grown = set | bit;
            let (Some(old), Some(new)) = (self.total(set, families), self.total(grown, families))
            else {
                continue;
            };
            let mut sets = state.sets.clone();
            sets[idx] = grown;
            push(sets, state.total - old + new);
        }
        if state.sets.len() < limit
            && let Some(alone) = self.total(bit, families)
        {
            let mut sets = state.sets.clone();
            sets.push(bit);
            push(sets, state.total + alone);
        }
    }

    /// Scores, in parallel, every GPU set the next step may form that is not cached yet.
    fn score_sets(&mut self, states: &[Candidate], bit: u64) {
        let mut wanted: BTreeSet<u64> = states
            .iter()
            .flat_map(|s| s.sets.iter().map(move |&set| set | bit))
            .filter(|set| set.count_ones() as usize <= self.max_per_gpu)
            .collect();
        wanted.insert(bit);
        wanted.retain(|set| !self.cache.contains_key(set));
        let wanted: Vec<u64> = wanted.into_iter().collect();
        let scored: Vec<SetBest> = wanted
            .par_iter()
            .map(|&set| best_per_family_within(self.ctx, &members(set), BEAM_SET_MAX_CONFIGS))
            .collect();
        for (set, best) in wanted.into_iter().zip(scored) {
            self.evaluated += best.evaluated;
            self.cache.insert(set, best);
        }
        (self.progress)(PackProgress {
            configs_scored: self.evaluated,
            configs_total: None,
        });
    }
}
