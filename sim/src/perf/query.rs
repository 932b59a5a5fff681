//! One-set queries (`colo predict`): the rates and memory verdict of a few jobs on one GPU in
//! one mode, with per-job origins.
use thiserror::Error;

use super::{CoRun, Origin, Partition, PerfError, PerfModel, ShareMode, Tenant};
use crate::hardware::{GpuSpec, MigLayout};
use crate::workload::ModelKey;

/// A set of jobs on one GPU.
#[derive(Clone, Debug)]
pub struct SetQuery {
    /// The GPU.
    pub gpu: &'static GpuSpec,
    /// How the jobs share it.
    pub mode: ShareMode,
    /// The jobs.
    pub jobs: Vec<ModelKey>,
    /// MPS SM budgets as fractions: none, one for all, or one per job.
    pub sm_budgets: Vec<f64>,
    /// MIG layout; job i runs in slice i. Under mode mig the slices are real (isolated);
    /// under mode mps they are emulated: each job an MPS client with its slice's SM budget
    /// ([`GpuSpec::emulated_sm_percent`]) and memory limit, all on one GPU (sharing its memory
    /// system), which is how calibrate's mode MigEmulated runs them.
    pub layout: Option<MigLayout>,
}

impl SetQuery {
    /// The layout when its slices are emulated by MPS clients (mode mps), else `None`.
    pub fn emulated_layout(&self) -> Option<&MigLayout> {
        self.layout.as_ref().filter(|_| self.mode == ShareMode::Mps)
    }
}

/// The prediction for one job of the set.
#[derive(Clone, Debug, PartialEq)]
pub struct JobPrediction {
    /// The job.
    pub key: ModelKey,
    /// Predicted samples/s in the set.
    pub samples_per_s: f64,
    /// Samples/s alone on the whole GPU.
    pub exclusive_samples_per_s: f64,
    /// samples_per_s / exclusive_samples_per_s.
    pub fraction_of_exclusive: f64,
    /// Memory of its process, context included, GiB.
    pub memory_gib: f64,
    /// Where the job's profile numbers came from.
    pub origin: Origin,
    /// Relative spread of its measurements, when known.
    pub spread: Option<f64>,
    /// MIG slice (`3g.71gb@0`), when in one.
    pub slice: Option<String>,
    /// MPS SM budget (fraction), when set.
    pub sm_budget: Option<f64>,
}

/// The prediction for a set.
#[derive(Clone, Debug, PartialEq)]
pub struct SetPrediction {
    /// Per job, in the order asked.
    pub jobs: Vec<JobPrediction>,
    /// Sum of the jobs' fractions of exclusive (> 1: sharing beats one job at a time).
    pub total_fraction: f64,
    /// Memory the set needs, GiB.
    pub memory_gib: f64,
    /// Memory available to it, GiB (the GPU, or the slices used).
    pub capacity_gib: f64,
    /// Whether every partition holds its jobs.
    pub fits_memory: bool,
    /// Which partition overflows, when one does.
    pub memory_note: Option<String>,
}

impl SetPrediction {
    /// Whether the profile gave the jobs' memory: one without memory sizes (Gavel's) gives
    /// 0 GiB for every job, which is no measurement.
    pub fn memory_known(&self) -> bool {
        self.memory_gib > 0.0
    }
}

/// A query that cannot be answered. Fatal for the query.
#[derive(Debug, Error, PartialEq)]
pub enum QueryError {
    /// No jobs given.
    #[error("no jobs given; write jobs as MODEL:BATCH:IMAGE, e.g. resnet50:64:224")]
    NoJobs,
    /// The options do not suit the mode.
    #[error("{0}")]
    Mode(String),
    /// The model cannot describe a job.
    #[error(transparent)]
    Perf(#[from] PerfError),
}

/// Predicts `query` with `model`.
pub fn predict_set(model: &dyn PerfModel, query: &SetQuery) -> Result<SetPrediction, QueryError> {
    check(query)?;
    let gpu = query.gpu;
    let classes = query
        .jobs
        .iter()
        .map(|k| model.class(gpu, k))
        .collect::<Result<Vec<_>, _>>()?;
    let budget = |i: usize| match (query.emulated_layout(), query.sm_budgets.len()) {
        (Some(layout), _) => {
            Some(f64::from(gpu.emulated_sm_percent(layout.slices[i].profile)) / 100.0)
        }
        (_, 0) => None,
        (_, 1) => Some(query.sm_budgets[0]),
        _ => Some(query.sm_budgets[i]),
    };
    let groups = partitions(query);
    let mut jobs = Vec::with_capacity(classes.len());
    let mut fits = true;
    let mut note = None;
    let (mut memory_gib, mut capacity_gib) = (0.0, 0.0);
    for (partition, members, slice) in &groups {
        let tenants: Vec<Tenant<'_>> = members
            .iter()
            .map(|&i| Tenant::on_one_gpu(&classes[i], budget(i)))
            .collect();
        let p = model.predict(&CoRun {
            gpu,
            mode: query.mode,
            partition,
            tenants: &tenants,
        });
        memory_gib += p.memory_gib;
        capacity_gib += p.capacity_gib;
        if !p.fits_memory() {
            fits = false;
            let place = slice.clone().unwrap_or_else(|| gpu.name.to_owned());
            note.get_or_insert(format!(
                "{place} needs {:.1} GiB, holds {:.1} GiB",
                p.memory_gib, p.capacity_gib
            ));
        }
        if let Some(layout) = query.emulated_layout() {
            // Each emulated slice holds its job under the slice's pinned memory limit.
            for &i in members {
                let (slice, need) = (
                    &layout.slices[i],
                    model.footprint_gib(gpu, query.mode, &classes[i]),
                );
                if need > slice.profile.memory_gib {
                    fits = false;
                    note.get_or_insert(format!(
                        "{}@{} (emulated) needs {need:.1} GiB, holds {:.1} GiB",
                        slice.profile.name, slice.start, slice.profile.memory_gib
                    ));
                }
            }
        }
        for (&i, rate) in members.iter().zip(p.rates) {
            let c = &classes[i];
            jobs.push((
                i,
                JobPrediction {
                    key: c.key.clone(),
                    samples_per_s: rate,
                    exclusive_samples_per_s: c.solo_rate,
                    fraction_of_exclusive: rate / c.solo_rate,
                    memory_gib: model.footprint_gib(gpu, query.mode, c),
                    origin: c.origin,
                    spread: c.spread,
                    slice: slice_label(query, i).or_else(|| slice.clone()),
                    sm_budget: budget(i),
                },
            ));
        }
    }
    jobs.sort_by_key(|(i, _)| *i);
    let jobs: Vec<JobPrediction> = jobs.into_iter().map(|(_, j)| j).collect();
    let total_fraction = jobs.iter().map(|j| j.fraction_of_exclusive).sum();
    Ok(SetPrediction {
        jobs,
        total_fraction,
        memory_gib,
        capacity_gib,
        fits_memory: fits,
        memory_note: note,
    })
}

fn check(query: &SetQuery) -> Result<(), QueryError> {
    let n = query.jobs.len();
    let fail = |m: String| Err(QueryError::Mode(m));
    if n == 0 {
        return Err(QueryError::NoJobs);
    }
    if query.mode == ShareMode::Exclusive && n > 1 {
        return fail(format!(
            "mode exclusive runs one job per GPU but {n} were given; predict them one at a time or choose timeslice, mps or mig"
        ));
    }
    if !query.sm_budgets.is_empty() && query.layout.is_some() {
        return fail(
            "give SM budgets (--sm-pct) or a layout (--layout), not both: under mode mps a \
             layout sets each job's budget to its slice's"
                .to_string(),
        );
    }
    if !query.sm_budgets.is_empty() && query.mode != ShareMode::Mps {
        return fail(format!(
            "SM budgets (--sm-pct) apply to mode mps only, not {}",
            query.mode
        ));
    }
    if query.sm_budgets.len() > 1 && query.sm_budgets.len() != n {
        return fail(format!(
            "{} SM budgets for {n} jobs; give one for all or one per job",
            query.sm_budgets.len()
        ));
    }
    if let Some(bad) = query.sm_budgets.iter().find(|b| !(**b > 0.0 && **b <= 1.0)) {
        return fail(format!("SM budget {}% is out of (0, 100]", bad * 100.0));
    }
    match (&query.layout, query.mode) {
        (None, ShareMode::Mig) => fail(format!(
            "mode mig needs a layout (--layout), e.g. one of: {}",
            examples(query.gpu)
        )),
        (Some(_), m) if !matches!(m, ShareMode::Mig | ShareMode::Mps) => fail(format!(
            "a MIG layout applies to mode mig (real slices) or mps (slices emulated by SM \
             budgets), not {m}"
        )),
        (Some(layout), _) if layout.slices.len() < n => {
            let slices = layout.slices.len();
            let plural = if slices == 1 { "" } else { "s" };
            fail(format!(
                "{n} jobs but the layout {layout} has {slices} slice{plural}; each job needs its \
                 own slice"
            ))
        }
        _ => Ok(()),
    }
}

fn examples(gpu: &GpuSpec) -> String {
    let names: Vec<&str> = gpu.mig_profiles.iter().map(|p| p.name).collect();
    let smallest = names.first().copied().unwrap_or("1g");
    format!(
        "{}x{smallest} (profiles of {}: {})",
        gpu.mig_compute_slices,
        gpu.name,
        names.join(", ")
    )
}

/// Job `i`'s emulated slice (mode mps with a layout) and its SM budget, as `3g.71gb@4, 45%`.
fn slice_label(query: &SetQuery, i: usize) -> Option<String> {
    let slice = &query.emulated_layout()?.slices[i];
    let percent = query.gpu.emulated_sm_percent(slice.profile);
    Some(format!(
        "{}@{}, {percent}%",
        slice.profile.name, slice.start
    ))
}

/// The partitions of the query, each with the jobs in it and its slice label.
fn partitions(query: &SetQuery) -> Vec<(Partition, Vec<usize>, Option<String>)> {
    let gpu = query.gpu;
    // Emulated slices are MPS clients of one GPU: one partition, a budget per job.
    match query
        .layout
        .as_ref()
        .filter(|_| query.emulated_layout().is_none())
    {
        None => vec![(Partition::whole(gpu), (0..query.jobs.len()).collect(), None)],
        Some(layout) => layout
            .slices
            .iter()
            .zip(0..query.jobs.len())
            .map(|(slice, i)| {
                let partition = Partition::slice(gpu, slice.profile);
                (
                    partition,
                    vec![i],
                    Some(format!("{}@{}", slice.profile.name, slice.start)),
                )
            })
            .collect(),
    }
}
