//! Capacity planning (`colo plan`): the smallest cluster of each candidate GPU group that meets
//! a target on a scenario's workload, and the cheapest of them when prices are given.
//!
//! # Search
//!
//! For each candidate (in parallel), sizes 1, 2, 4, ... up to `max_gpus` (and `max_gpus`
//! itself) are simulated side by side; the first that meets the target bounds the answer from
//! above and the size before it from below. The gap is then closed by k-section: up to four
//! evenly spaced sizes inside the gap are simulated at once, and the gap shrinks to the sizes
//! around the first that meets. The sizes tried do not depend on the thread count. The answer N meets the target and N - 1 was simulated
//! and does not. The search assumes the target is monotone in cluster size, which queueing
//! usually gives but need not (placement is greedy, and a larger cluster can change which jobs
//! share a GPU); N + 1 is simulated too and any larger size seen to miss the target is
//! reported as a non-monotone note.
//!
//! Every candidate runs the same jobs: a synthetic workload without `reference_gpu` has it
//! pinned to the scenario's first cluster group, so durations do not follow the candidate.
//! Sweep variants are ignored; the top-level fields are planned.
mod csv;
mod target;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;
use thiserror::Error;

use crate::engine::{Cluster, GpuGroup, Simulation};
use crate::hardware;
use crate::metrics::{self, Summary};
use crate::scenario::schema::{CandidateSpec, GroupSpec, ShareMode, VariantSpec, WorkloadSpec};
use crate::scenario::{Scenario, ScenarioError, build_variant_on, checked_group};
pub use csv::{PLAN_CSV_HEADER, plan_csv};
pub use target::{Metric, Target, TargetError, Unit};

/// Capacity planning could not run. Fatal; the message names the file and field.
#[derive(Debug, Error)]
pub enum CapacityPlanError {
    /// The scenario has no `plan` section.
    #[error(
        "{}: no `plan` section; add e.g. plan: (candidates: [(gpu: \"h200\", mode: Mps)], max_gpus: 16) (see scenarios/README.md, \"Planning\")",
        path.display()
    )]
    NoPlan {
        /// The scenario file.
        path: PathBuf,
    },
    /// A field of the plan section is wrong.
    #[error("{}: {field}: {message}", path.display())]
    Field {
        /// The scenario file.
        path: PathBuf,
        /// Field path, e.g. `plan.candidates[1].mig_layout`.
        field: String,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// The scenario cannot be built with a candidate.
    #[error("plan candidate `{candidate}` (checked as `cluster[0]`): {source}")]
    Scenario {
        /// Candidate label.
        candidate: String,
        /// What building it said.
        source: Box<ScenarioError>,
    },
}

/// One simulated cluster size of a candidate.
#[derive(Clone, Debug, PartialEq)]
pub struct SizeResult {
    /// GPUs in the cluster.
    pub gpus: u32,
    /// The target's metric (in its base unit: seconds, samples/s, kWh, samples/J); NaN when
    /// the run failed or the summary does not know it (energy without a power model).
    pub value: f64,
    /// Whether the target is met (and every job completed).
    pub meets: bool,
    /// The run's summary, when it ran.
    pub summary: Option<Summary>,
    /// Why it does not count (a job fits nowhere, jobs skipped), when so.
    pub note: Option<String>,
}

/// What the search found for one candidate.
#[derive(Clone, Debug)]
pub struct CandidateResult {
    /// Label.
    pub label: String,
    /// GPU catalog name.
    pub gpu: &'static str,
    /// Sharing mode (and layout or budget), as text.
    pub mode: String,
    /// Every size simulated, ascending.
    pub points: Vec<SizeResult>,
    /// The smallest size that meets the target, if any up to `max_gpus`.
    pub smallest: Option<u32>,
    /// Price of one GPU-hour, when given.
    pub price_per_gpu_hour: Option<f64>,
    /// Larger sizes that were seen to miss the target (non-monotone), when any.
    pub non_monotone: Vec<u32>,
}

impl CandidateResult {
    /// The point at `gpus`, if simulated.
    pub fn point(&self, gpus: u32) -> Option<&SizeResult> {
        self.points.iter().find(|p| p.gpus == gpus)
    }

    /// Cost of the cluster per hour at `gpus`, when a price is known.
    pub fn cost_per_hour(&self, gpus: u32) -> Option<f64> {
        self.price_per_gpu_hour.map(|p| p * f64::from(gpus))
    }
}

/// The answer.
#[derive(Clone, Debug)]
pub struct PlanReport {
    /// The target.
    pub target: Target,
    /// Largest size tried.
    pub max_gpus: u32,
    /// Per candidate, in scenario order.
    pub candidates: Vec<CandidateResult>,
    /// Index of the cheapest candidate meeting the target (by cluster cost per hour; ties:
    /// [`TIE_BREAK`]).
    pub cheapest: Option<usize>,
    /// Simulations run.
    pub simulations: u64,
}

impl PlanReport {
    /// The candidates (labels, in scenario order) whose answer costs the same per hour as the
    /// cheapest one's, the cheapest among them; empty when none ties with it.
    pub fn tied_with_cheapest(&self) -> Vec<&str> {
        let Some(best) = self.cheapest else {
            return Vec::new();
        };
        let cost = |c: &CandidateResult| c.cost_per_hour(c.smallest?);
        let best_cost = self.candidates.get(best).and_then(cost);
        let tied: Vec<&str> = self
            .candidates
            .iter()
            .filter(|c| cost(c).is_some() && cost(c) == best_cost)
            .map(|c| c.label.as_str())
            .collect();
        if tied.len() > 1 { tied } else { Vec::new() }
    }
}

/// Finds, per candidate of `scenario`'s `plan` section, the smallest cluster meeting `target`.
/// `progress(simulations done)` is called from worker threads.
///
/// # Errors
/// [`CapacityPlanError`]: no plan section, a bad candidate or price, or a scenario that cannot be built.
pub fn plan(
    scenario: &Scenario,
    target: &Target,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<PlanReport, CapacityPlanError> {
    let path = scenario.path.clone();
    let spec = scenario
        .file
        .plan
        .as_ref()
        .ok_or_else(|| CapacityPlanError::NoPlan { path: path.clone() })?;
    let field = |field: String, message: String| CapacityPlanError::Field {
        path: path.clone(),
        field,
        message,
    };
    if spec.candidates.is_empty() {
        return Err(field(
            "plan.candidates".into(),
            "is empty; list at least one GPU group".into(),
        ));
    }
    if spec.max_gpus == 0 {
        return Err(field("plan.max_gpus".into(), "must be at least 1".into()));
    }
    let prices =
        prices(&spec.price_per_gpu_hour).map_err(|m| field("plan.price_per_gpu_hour".into(), m))?;
    let workload = pinned_workload(scenario);
    let done = AtomicU64::new(0);
    let searches: Vec<Result<CandidateResult, CapacityPlanError>> = spec
        .candidates
        .par_iter()
        .enumerate()
        .map(|(idx, candidate)| {
            let gpu = hardware::gpu(&candidate.gpu)
                .map_err(|e| field(format!("plan.candidates[{idx}].gpu"), e.to_string()))?;
            let group = checked_group(scenario, &group_spec(candidate)).map_err(|source| {
                CapacityPlanError::Scenario {
                    candidate: label(candidate),
                    source: Box::new(source),
                }
            })?;
            let search = Search {
                scenario,
                candidate,
                group,
                workload: &workload,
                target,
                max_gpus: spec.max_gpus,
                points: Mutex::new(BTreeMap::new()),
                done: &done,
                progress,
            };
            search.result(gpu.name, prices.get(gpu.name).copied())
        })
        .collect();
    let candidates = searches.into_iter().collect::<Result<Vec<_>, _>>()?;
    let cheapest = cheapest(&candidates);
    Ok(PlanReport {
        target: *target,
        max_gpus: spec.max_gpus,
        candidates,
        cheapest,
        simulations: done.load(Ordering::Relaxed),
    })
}

/// Prices keyed by catalog GPU name; a key that names no GPU, or a bad price, is an error.
fn prices(given: &BTreeMap<String, f64>) -> Result<BTreeMap<&'static str, f64>, String> {
    let mut out = BTreeMap::new();
    for (name, &price) in given {
        let gpu = hardware::gpu(name).map_err(|e| e.to_string())?;
        if !(price.is_finite() && price >= 0.0) {
            return Err(format!("price {price} for {name} must be a number >= 0"));
        }
        out.insert(gpu.name, price);
    }
    Ok(out)
}

/// The scenario's workload, with a synthetic or trace workload's reference GPU pinned to the first
/// cluster group's, so every candidate runs the same jobs.
fn pinned_workload(scenario: &Scenario) -> WorkloadSpec {
    let mut workload = scenario.file.workload.clone();
    let first_gpu = scenario.file.cluster.first().map(|g| g.gpu.clone());
    let reference = match &mut workload {
        WorkloadSpec::Synthetic(syn) => &mut syn.reference_gpu,
        WorkloadSpec::Trace(trace) => &mut trace.reference_gpu,
        WorkloadSpec::Jobs(_) => return workload,
    };
    if reference.is_none() {
        *reference = first_gpu;
    }
    workload
}

/// How [`PlanReport::cheapest`] chooses between candidates whose answers cost the same per
/// hour (`colo plan` prints it, and its help says it).
pub const TIE_BREAK: &str = "candidates whose answers cost the same per hour: the one listed first in the scenario's plan.candidates is named cheapest";

/// The cheapest by cost per hour of its answer; ties go to the earlier candidate
/// ([`TIE_BREAK`]).
fn cheapest(candidates: &[CandidateResult]) -> Option<usize> {
    candidates
        .iter()
        .enumerate()
        .filter_map(|(idx, c)| Some((idx, c.cost_per_hour(c.smallest?)?)))
        .min_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)))
        .map(|(idx, _)| idx)
}

/// The label of a candidate: its `name`, or `<gpu> <mode>`.
pub fn label(candidate: &CandidateSpec) -> String {
    candidate
        .name
        .clone()
        .unwrap_or_else(|| format!("{} {}", candidate.gpu, mode_text(candidate)))
}

fn mode_text(candidate: &CandidateSpec) -> String {
    match (
        candidate.mode,
        &candidate.mig_layout,
        candidate.sm_budget_pct,
    ) {
        (ShareMode::Mig, Some(layout), _) if !candidate.dynamic_layouts.is_empty() => {
            format!("mig dynamic from {layout}")
        }
        (ShareMode::Mig, Some(layout), _) => format!("mig {layout}"),
        (ShareMode::Mps, _, Some(pct)) => format!("mps {pct}%"),
        (mode, ..) => mode.to_string(),
    }
}

/// `candidate` as a one-GPU cluster group, as a scenario would write it: checked once, and
/// each size searched copies the checked group with its own count.
fn group_spec(candidate: &CandidateSpec) -> GroupSpec {
    GroupSpec {
        gpu: candidate.gpu.clone(),
        count: 1,
        mode: candidate.mode,
        mig_layout: candidate.mig_layout.clone(),
        sm_budget_pct: candidate.sm_budget_pct,
        jobs_per_slice: candidate.jobs_per_slice,
        from_trace: false,
        dynamic_layouts: candidate.dynamic_layouts.clone(),
        reconfigure_s: candidate.reconfigure_s,
    }
}

/// Sizes simulated side by side in each narrowing round. Fixed rather than the thread count,
/// so the sizes tried (and plan.csv) are the same on any machine.
const SIZES_PER_ROUND: u32 = 4;

/// One candidate's search, with every simulated size remembered.
struct Search<'a> {
    scenario: &'a Scenario,
    candidate: &'a CandidateSpec,
    /// The candidate's group, checked; sizes differ only in its count.
    group: GpuGroup,
    workload: &'a WorkloadSpec,
    target: &'a Target,
    max_gpus: u32,
    points: Mutex<BTreeMap<u32, SizeResult>>,
    done: &'a AtomicU64,
    progress: &'a (dyn Fn(u64) + Sync),
}

impl Search<'_> {
    /// Runs the search and gathers what it found.
    fn result(
        self,
        gpu: &'static str,
        price_per_gpu_hour: Option<f64>,
    ) -> Result<CandidateResult, CapacityPlanError> {
        let smallest = self.smallest()?;
        let (label, mode) = (label(self.candidate), mode_text(self.candidate));
        let points = self.into_points();
        let non_monotone = smallest
            .map(|n| {
                let misses = points.iter().filter(|p| p.gpus > n && !p.meets);
                misses.map(|p| p.gpus).collect()
            })
            .unwrap_or_default();
        Ok(CandidateResult {
            label,
            gpu,
            mode,
            points,
            smallest,
            price_per_gpu_hour,
            non_monotone,
        })
    }

    /// Exponential, then k-section, then the neighbour above the answer.
    fn smallest(&self) -> Result<Option<u32>, CapacityPlanError> {
        let mut sizes: Vec<u32> = std::iter::successors(Some(1u32), |s| s.checked_mul(2))
            .take_while(|&s| s < self.max_gpus)
            .collect();
        sizes.push(self.max_gpus);
        self.simulate_all(&sizes)?;
        let Some(mut hi) = self.first_meeting() else {
            return Ok(None);
        };
        let mut lo = self.last_failing_below(hi);
        while hi - lo > 1 {
            let gap = hi - lo;
            let step = gap.div_ceil(SIZES_PER_ROUND + 1).max(1);
            let inside: Vec<u32> = (1..=SIZES_PER_ROUND)
                .map(|k| lo + k * step)
                .filter(|&s| s < hi)
                .collect();
            self.simulate_all(&inside)?;
            hi = self.first_meeting().unwrap_or(hi);
            lo = self.last_failing_below(hi);
        }
        if hi < self.max_gpus {
            self.simulate_all(&[hi + 1])?;
        }
        Ok(Some(hi))
    }

    fn first_meeting(&self) -> Option<u32> {
        let points = self.points.lock().ok()?;
        points.values().find(|p| p.meets).map(|p| p.gpus)
    }

    /// The largest simulated size below `hi` (all of them miss the target), or 0.
    fn last_failing_below(&self, hi: u32) -> u32 {
        self.points
            .lock()
            .ok()
            .and_then(|p| p.range(..hi).next_back().map(|(&g, _)| g))
            .unwrap_or(0)
    }

    fn simulate_all(&self, sizes: &[u32]) -> Result<(), CapacityPlanError> {
        let fresh: Vec<u32> = {
            let known = self
                .points
                .lock()
                .map(|p| p.keys().copied().collect::<Vec<_>>());
            let known = known.unwrap_or_default();
            sizes
                .iter()
                .copied()
                .filter(|s| !known.contains(s))
                .collect()
        };
        let points = fresh
            .par_iter()
            .map(|&gpus| self.simulate(gpus))
            .collect::<Result<Vec<_>, _>>()?;
        if let Ok(mut known) = self.points.lock() {
            for point in points {
                known.insert(point.gpus, point);
            }
        }
        Ok(())
    }

    /// Runs the scenario's workload on `gpus` GPUs of the candidate.
    fn simulate(&self, gpus: u32) -> Result<SizeResult, CapacityPlanError> {
        let variant = VariantSpec {
            name: format!("{}-{gpus}", label(self.candidate)),
            workload: Some(self.workload.clone()),
            ..VariantSpec::default()
        };
        let cluster = Cluster {
            groups: vec![GpuGroup {
                count: gpus,
                ..self.group.clone()
            }],
        };
        let built = build_variant_on(self.scenario, &variant, cluster);
        let (config, labels) = built.map_err(|source| CapacityPlanError::Scenario {
            candidate: label(self.candidate),
            source: Box::new(source),
        })?;
        let run = Simulation::run(&config, None)
            .and_then(|run| config.all_jobs().map(|jobs| (jobs, run)));
        let point = match run {
            Err(err) => SizeResult {
                gpus,
                value: f64::NAN,
                meets: false,
                summary: None,
                note: Some(err.to_string()),
            },
            Ok((jobs, run)) => {
                let summary = metrics::summarize(&jobs, &run, labels);
                let value = self.target.metric.of(&summary);
                let skipped = summary.jobs - summary.completed;
                let unknown = self.target.metric.unknown_because(&summary);
                let note = match (
                    (skipped > 0).then(|| format!("{skipped} job(s) skipped")),
                    unknown,
                ) {
                    (Some(a), Some(b)) => Some(format!("{a}; {b}")),
                    (a, b) => a.or(b),
                };
                SizeResult {
                    gpus,
                    value,
                    meets: skipped == 0 && self.target.met_by(value),
                    summary: Some(summary),
                    note,
                }
            }
        };
        let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        (self.progress)(done);
        Ok(point)
    }

    fn into_points(self) -> Vec<SizeResult> {
        self.points
            .into_inner()
            .map(|p| p.into_values().collect())
            .unwrap_or_default()
    }
}
