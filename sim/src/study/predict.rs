//! Predicting one set of the study: per-job rates while all run, each job's 5-epoch run played
//! out as the others finish (a small fluid loop), the gain over running the jobs one at a time,
//! and the memory verdict.
use crate::hardware::{GpuSpec, MigLayout};
use crate::perf::query::{QueryError, SetQuery, predict_set};
use crate::perf::{Origin, PerfError, PerfModel};
use crate::workload::ModelKey;

use super::StudySet;
use crate::perf::ShareMode;

/// What the model says of one set.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// Predicted.
    Predicted(SetResult),
    /// The profile lacks these model keys (or the GPU): calibrate them first.
    NotCovered {
        /// Keys to calibrate on this GPU, in set order.
        missing: Vec<ModelKey>,
    },
    /// The set's MIG slices cannot be laid out on this GPU, or the query was refused.
    NotRunnable {
        /// Why, as the catalog or the model says.
        reason: String,
    },
}

/// One job of a predicted set.
#[derive(Clone, Debug, PartialEq)]
pub struct JobResult {
    /// Its model key.
    pub key: ModelKey,
    /// MIG slice on this GPU (`3g.71gb@0`), if any.
    pub slice: Option<String>,
    /// Samples/s while every job of the set runs.
    pub samples_per_s: f64,
    /// Samples/s alone on the whole GPU.
    pub alone_samples_per_s: f64,
    /// Mean epoch time over its run, seconds (co-runners that finish first speed it up).
    pub mean_epoch_s: f64,
    /// Epoch time alone on the whole GPU, seconds.
    pub alone_epoch_s: f64,
    /// GPU memory of its process, context included, GiB.
    pub memory_gib: f64,
    /// Memory of its partition (the GPU, or its slice), GiB.
    pub partition_gib: f64,
    /// Where its profile numbers come from.
    pub origin: Origin,
    /// Relative spread of its alone measurements, when the profile gives it.
    pub spread: Option<f64>,
}

/// The prediction for a set.
#[derive(Clone, Debug, PartialEq)]
pub struct SetResult {
    /// Per job, in set order.
    pub jobs: Vec<JobResult>,
    /// Time until the last job ends, seconds.
    pub makespan_s: f64,
    /// Sum of the jobs' run times alone, one after another, over the makespan: total
    /// throughput normalised to one job alone at a time (> 1: sharing pays).
    pub gain: f64,
    /// Sum of the jobs' rates over their rates alone while every job runs (equal to `gain`
    /// for copies of one model; for mixed sets it shows the sharing itself, not which job is
    /// longest).
    pub gain_while_all_run: f64,
    /// Memory the set needs, GiB.
    pub memory_gib: f64,
    /// Memory it has (the GPU, or the slices used), GiB.
    pub capacity_gib: f64,
    /// Whether every partition holds its jobs.
    pub fits_memory: bool,
    /// Which partition overflows, when one does.
    pub memory_note: Option<String>,
    /// Where its numbers come from: its jobs' profile entries, then (when jobs share) the
    /// mode's sharing parameters; each origin once.
    pub origins: Vec<Origin>,
    /// MIG sets: largest relative gap between a job's rate in the set and its rate alone in
    /// the same slice (0: no interference between slices).
    pub mig_interference: Option<f64>,
}

/// What predicting needs besides the set.
pub(super) struct Context<'a> {
    pub model: &'a dyn PerfModel,
    pub gpu: &'static GpuSpec,
    pub matrix_gpu: &'static GpuSpec,
    pub epochs: u32,
}

/// Predicts `set`, or says why it cannot.
pub(super) fn predict(ctx: &Context<'_>, set: &StudySet) -> Outcome {
    let missing: Vec<ModelKey> = set
        .jobs
        .iter()
        .filter(|job| ctx.model.class(ctx.gpu, &job.key).is_err())
        .map(|job| job.key.clone())
        .fold(Vec::new(), |mut keys, key| {
            if !keys.contains(&key) {
                keys.push(key);
            }
            keys
        });
    if !missing.is_empty() {
        return Outcome::NotCovered { missing };
    }
    let layout = match layout(ctx, set) {
        Ok(layout) => layout,
        Err(reason) => return Outcome::NotRunnable { reason },
    };
    let query = SetQuery {
        gpu: ctx.gpu,
        mode: set.mode,
        jobs: set.jobs.iter().map(|j| j.key.clone()).collect(),
        sm_budgets: Vec::new(),
        layout,
    };
    match result(ctx, set, &query) {
        Ok(result) => Outcome::Predicted(result),
        Err(QueryError::Perf(PerfError::UnknownModel { key, .. })) => {
            Outcome::NotCovered { missing: vec![key] }
        }
        Err(err) => Outcome::NotRunnable {
            reason: err.to_string(),
        },
    }
}

/// The set's MIG layout on this GPU: each matrix slice becomes the profile with the same
/// compute and memory slice counts.
fn layout(ctx: &Context<'_>, set: &StudySet) -> Result<Option<MigLayout>, String> {
    if set.mode != ShareMode::Mig {
        return Ok(None);
    }
    let mut names = Vec::with_capacity(set.jobs.len());
    for job in &set.jobs {
        let name = job.matrix_slice.as_deref().unwrap_or_default();
        let theirs = ctx
            .matrix_gpu
            .mig_profile(name)
            .map_err(|e| e.to_string())?;
        let ours = ctx
            .gpu
            .mig_profiles
            .iter()
            .find(|p| {
                p.compute_slices == theirs.compute_slices
                    && p.memory_slices == theirs.memory_slices
                    && !p.name.contains('+')
            })
            .ok_or_else(|| format!("{} has no MIG profile like {name}", ctx.gpu.name))?;
        names.push(ours.name);
    }
    ctx.gpu.mig_layout(&names).map(Some).map_err(|e| {
        format!(
            "one slice per process ({}) is not a valid layout: {e}",
            names.join(", ")
        )
    })
}

fn result(ctx: &Context<'_>, set: &StudySet, query: &SetQuery) -> Result<SetResult, QueryError> {
    let all = predict_set(ctx.model, query)?;
    let finish_s = completion_times(ctx, set, query)?;
    let epochs = f64::from(ctx.epochs);
    let jobs: Vec<JobResult> = set
        .jobs
        .iter()
        .zip(&all.jobs)
        .zip(&finish_s)
        .enumerate()
        .map(|(idx, ((job, p), finish))| {
            let samples = job.samples_per_epoch as f64;
            JobResult {
                key: job.key.clone(),
                slice: p.slice.clone(),
                samples_per_s: p.samples_per_s,
                alone_samples_per_s: p.exclusive_samples_per_s,
                mean_epoch_s: finish / epochs,
                alone_epoch_s: samples / p.exclusive_samples_per_s,
                memory_gib: p.memory_gib,
                partition_gib: partition_gib(ctx.gpu, query, idx),
                origin: p.origin,
                spread: p.spread,
            }
        })
        .collect();
    let makespan_s = finish_s.iter().copied().fold(0.0, f64::max);
    let alone_total_s: f64 = jobs.iter().map(|j| j.alone_epoch_s * epochs).sum();
    let mig_interference = mig_gap(ctx, query, &all.jobs)?;
    let mut origins: Vec<Origin> = Vec::new();
    let shares = jobs.len() > 1 || query.layout.is_some();
    let mode_origin = shares.then(|| ctx.model.mode_origin(ctx.gpu, query.mode));
    for origin in jobs.iter().map(|j| j.origin).chain(mode_origin) {
        if !origins.contains(&origin) {
            origins.push(origin);
        }
    }
    Ok(SetResult {
        origins,
        jobs,
        makespan_s,
        gain: alone_total_s / makespan_s,
        gain_while_all_run: all.total_fraction,
        memory_gib: all.memory_gib,
        capacity_gib: all.capacity_gib,
        fits_memory: all.fits_memory,
        memory_note: all.memory_note,
        mig_interference,
    })
}

/// Memory of job `idx`'s partition: its slice's (job i runs alone in slice i) or the GPU's.
fn partition_gib(gpu: &GpuSpec, query: &SetQuery, idx: usize) -> f64 {
    let slice = query.layout.as_ref().and_then(|l| l.slices.get(idx));
    slice.map_or(gpu.memory_gib, |s| s.profile.memory_gib)
}

/// When each job of the set ends, seconds, if each trains `epochs` epochs from time 0 and the
/// others speed up as co-runners finish (MIG slices stay as they are).
fn completion_times(
    ctx: &Context<'_>,
    set: &StudySet,
    query: &SetQuery,
) -> Result<Vec<f64>, QueryError> {
    let epochs = f64::from(ctx.epochs);
    let mut remaining: Vec<f64> = set
        .jobs
        .iter()
        .map(|j| j.samples_per_epoch as f64 * epochs)
        .collect();
    let mut finish = vec![f64::INFINITY; remaining.len()];
    let mut active: Vec<usize> = (0..remaining.len()).collect();
    let mut now = 0.0;
    while !active.is_empty() {
        let rates = predict_set(ctx.model, &sub_query(query, &active))?;
        let step = active
            .iter()
            .zip(&rates.jobs)
            .map(|(&i, p)| remaining[i] / p.samples_per_s)
            .fold(f64::INFINITY, f64::min);
        if !step.is_finite() {
            break; // a job with rate 0 never ends; its finish stays infinite
        }
        now += step;
        for (&i, p) in active.iter().zip(&rates.jobs) {
            remaining[i] -= p.samples_per_s * step;
            if remaining[i] <= 1e-9 * job_work(set, i, epochs) {
                finish[i] = now;
            }
        }
        active.retain(|&i| finish[i].is_infinite());
    }
    Ok(finish)
}

fn job_work(set: &StudySet, idx: usize, epochs: f64) -> f64 {
    set.jobs[idx].samples_per_epoch as f64 * epochs
}

/// `query` restricted to the jobs `active` (and, under MIG, their slices).
fn sub_query(query: &SetQuery, active: &[usize]) -> SetQuery {
    SetQuery {
        jobs: active.iter().map(|&i| query.jobs[i].clone()).collect(),
        layout: query.layout.as_ref().map(|layout| MigLayout {
            slices: active.iter().map(|&i| layout.slices[i]).collect(),
        }),
        ..query.clone()
    }
}

/// Largest relative gap between each MIG job's rate in the set and alone in its slice.
fn mig_gap(
    ctx: &Context<'_>,
    query: &SetQuery,
    in_set: &[crate::perf::query::JobPrediction],
) -> Result<Option<f64>, QueryError> {
    if query.layout.is_none() {
        return Ok(None);
    }
    let mut gap: f64 = 0.0;
    for (i, p) in in_set.iter().enumerate() {
        let alone = predict_set(ctx.model, &sub_query(query, &[i]))?;
        let alone_rate = alone.jobs.first().map_or(0.0, |j| j.samples_per_s);
        gap = gap.max((p.samples_per_s / alone_rate - 1.0).abs());
    }
    Ok(Some(gap))
}
