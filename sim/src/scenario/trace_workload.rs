//! Trace workloads: read the trace a scenario names, size the GPU groups its node list defines,
//! and turn trace jobs (arrival, duration, GPU count; no model) into engine jobs with a model
//! and an amount of work such that a job alone on the reference GPU takes its traced duration.
use std::collections::BTreeMap;
use std::path::Path;

use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;
use rand_distr::Distribution;
use rand_distr::weighted::WeightedIndex;

use super::schema::{ModelMapSpec, RuleSpec, TraceFormatSpec, TraceSpec};
use super::{Scenario, ScenarioError};
use crate::hardware::{self, GpuSpec};
use crate::metrics::{GpuSharingSummary, TraceSummary};
use crate::perf::PerfModel;
use crate::workload::trace::{self, ReadOptions, Trace, TraceFormat, TraceJob};
use crate::workload::{Job, MinSpeed, ModelKey, limits};

const FIELD: &str = "workload.Trace";

/// The reader's format for a scenario's format name.
pub(super) fn format(spec: TraceFormatSpec) -> TraceFormat {
    match spec {
        TraceFormatSpec::Philly => TraceFormat::Philly,
        TraceFormatSpec::AlibabaOpenb => TraceFormat::AlibabaOpenb,
        TraceFormatSpec::Itp => TraceFormat::Itp,
        TraceFormatSpec::Helios => TraceFormat::Helios,
        TraceFormatSpec::Colo => TraceFormat::Colo,
    }
}

/// Reads the trace (and, for openb, its node list). `strict` (from `colo simulate --strict`)
/// turns strict mode on even where the scenario leaves it off.
pub(super) fn read(
    scenario: &Scenario,
    spec: &TraceSpec,
    strict: bool,
) -> Result<Trace, ScenarioError> {
    let opts = ReadOptions {
        strict: strict || spec.strict,
        limit: spec.limit,
    };
    let path = scenario.resolve(&spec.path);
    let result = match format(spec.format) {
        TraceFormat::AlibabaOpenb => {
            let nodes = spec.nodes.as_ref().map(|n| scenario.resolve(n));
            trace::read_openb(&path, nodes.as_deref(), &opts)
        }
        other if spec.nodes.is_some() => {
            return Err(ScenarioError::field(
                &scenario.path,
                format!("{FIELD}.nodes"),
                format!("a node list is read only for AlibabaOpenb traces, not {other}"),
            ));
        }
        other => trace::read_trace(other, &path, &opts),
    };
    result.map_err(|source| ScenarioError::Trace {
        path: scenario.path.clone(),
        source,
    })
}

/// GPUs per catalog GPU type defined by the trace's node list (`None` without one), each node
/// GPU model mapped by `node_gpu_map`, else `node_gpu`, else its own name in the catalog.
pub(super) fn node_gpus(
    path: &Path,
    spec: &TraceSpec,
    trace: &Trace,
) -> Result<Option<Vec<(&'static GpuSpec, u32)>>, ScenarioError> {
    let Some(nodes) = &trace.nodes else {
        return Ok(None);
    };
    let mut counts: Vec<(&'static GpuSpec, u32)> = Vec::new();
    for node in nodes {
        let gpu = node_gpu(path, spec, &node.gpu_model)?;
        match counts.iter_mut().find(|(g, _)| g.name == gpu.name) {
            Some((_, count)) => *count += node.gpus,
            None => counts.push((gpu, node.gpus)),
        }
    }
    Ok(Some(counts))
}

fn node_gpu(path: &Path, spec: &TraceSpec, model: &str) -> Result<&'static GpuSpec, ScenarioError> {
    let (name, field) = match (spec.node_gpu_map.get(model), &spec.node_gpu) {
        (Some(name), _) => (name.as_str(), "node_gpu_map"),
        (None, Some(name)) => (name.as_str(), "node_gpu"),
        (None, None) => (model, "node_gpu"),
    };
    hardware::gpu(name).map_err(|e| {
        ScenarioError::field(
            path,
            format!("{FIELD}.{field}"),
            format!(
                "node GPU model `{model}` maps to no catalog GPU ({e}); set `node_gpu` for all \
                 nodes or map it in `node_gpu_map`"
            ),
        )
    })
}

/// What a replay needs besides the trace.
pub(super) struct ReplayPlan<'a> {
    /// The scenario file (for messages).
    pub path: &'a Path,
    /// The workload's spec.
    pub spec: &'a TraceSpec,
    /// Seed of the model mix.
    pub seed: u64,
    /// GPU on which a job alone takes its traced duration.
    pub reference: &'static GpuSpec,
    /// Gives each model's exclusive rate on `reference`.
    pub perf: &'a dyn PerfModel,
}

/// Engine jobs and the trace's summary.
pub(super) fn replay(
    plan: &ReplayPlan<'_>,
    trace: &Trace,
) -> Result<(Vec<Job>, TraceSummary), ScenarioError> {
    check_scales(plan.path, plan.spec)?;
    let models = ModelPicker::new(plan)?;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(plan.seed);
    let (from_s, to_s) = window_s(plan.path, plan.spec)?;
    let mut jobs = Vec::with_capacity(trace.jobs.len());
    let mut per_model: BTreeMap<&ModelKey, u64> = BTreeMap::new();
    let mut sharing_replayed = 0;
    for tj in trace
        .jobs
        .iter()
        .filter(|j| j.arrival_s >= from_s && j.arrival_s < to_s)
    {
        let (model, solo_rate, min_speed) = models.pick(plan.path, tj, &mut rng)?;
        let arrival_s = (tj.arrival_s - from_s) * plan.spec.arrival_scale;
        let duration_s = tj.duration_s * plan.spec.duration_scale;
        scaled_in_range(plan.path, tj, "arrival_scale", limits::arrival(arrival_s))?;
        scaled_in_range(
            plan.path,
            tj,
            "duration_scale",
            limits::duration(duration_s),
        )?;
        // Counted by key and written as text once at the end: a `to_string` per job was a
        // tenth of reading a 100k-job trace.
        *per_model.entry(model).or_insert(0) += 1;
        sharing_replayed += u64::from(tj.shares_gpu());
        jobs.push(Job {
            name: tj.name.clone(),
            model: model.clone(),
            arrival_s,
            samples: duration_s * solo_rate * f64::from(tj.gpus),
            gpus: tj.gpus,
            min_speed,
        });
    }
    let mut by_name: BTreeMap<String, u64> = BTreeMap::new();
    for (model, count) in per_model {
        *by_name.entry(model.to_string()).or_insert(0) += count;
    }
    let summary = summarize(plan.spec, trace, &jobs, by_name, sharing_replayed);
    Ok((jobs, summary))
}

/// A trace job's time, scaled by the scenario's `scale`, must stay in the accepted range.
fn scaled_in_range(
    path: &Path,
    job: &TraceJob,
    scale: &str,
    checked: Result<f64, limits::OutOfRange>,
) -> Result<(), ScenarioError> {
    checked.map(|_| ()).map_err(|e| {
        ScenarioError::field(
            path,
            format!("{FIELD}.{scale}"),
            format!(
                "scaled by it, trace job `{}` (line {}) is out of range: the {e}; bring `{scale}` \
                 nearer 1",
                job.name, job.line
            ),
        )
    })
}

fn summarize(
    spec: &TraceSpec,
    trace: &Trace,
    jobs: &[Job],
    models: BTreeMap<String, u64>,
    sharing_replayed: u64,
) -> TraceSummary {
    let jobs_read = trace.jobs.len() as u64;
    let jobs_replayed = jobs.len() as u64;
    let gpu_sharing = trace.gpu_sharing_rows.map(|in_trace| {
        let read = trace.jobs.iter().filter(|j| j.shares_gpu()).count() as u64;
        GpuSharingSummary {
            pods_in_trace: in_trace,
            pods_skipped: in_trace - read,
            pods_outside_window: read - sharing_replayed,
            pods_replayed: sharing_replayed,
        }
    });
    TraceSummary {
        format: format(spec.format).to_string(),
        file: spec.path.clone(),
        rows_read: trace.rows_read,
        rows_skipped: trace.skips.total(),
        skips: trace.skips.clone(),
        jobs_read,
        outside_window: jobs_read - jobs_replayed,
        jobs_replayed,
        models,
        gpu_sharing,
    }
}

fn check_scales(path: &Path, spec: &TraceSpec) -> Result<(), ScenarioError> {
    for (name, value) in [
        ("arrival_scale", spec.arrival_scale),
        ("duration_scale", spec.duration_scale),
    ] {
        if !(value.is_finite() && value > 0.0) {
            return Err(ScenarioError::field(
                path,
                format!("{FIELD}.{name}"),
                format!("{value} must be a number > 0 (1.0 keeps the trace's times)"),
            ));
        }
    }
    Ok(())
}

/// The window in seconds since the first arrival; everything without one.
fn window_s(path: &Path, spec: &TraceSpec) -> Result<(f64, f64), ScenarioError> {
    match spec.window_hours {
        None => Ok((0.0, f64::INFINITY)),
        Some((from, to)) if from >= 0.0 && to > from => Ok((from * 3600.0, to * 3600.0)),
        Some((from, to)) => Err(ScenarioError::field(
            path,
            format!("{FIELD}.window_hours"),
            format!("({from}, {to}) must be (from, to) hours with 0 <= from < to"),
        )),
    }
}

/// Chooses each job's model: a seeded weighted draw, or the first matching rule.
struct ModelPicker {
    /// Models with their exclusive rate on the reference GPU and their jobs' minimum speed.
    models: Vec<(ModelKey, f64, Option<MinSpeed>)>,
    mix: Option<WeightedIndex<f64>>,
    rules: Vec<RuleSpec>,
}

impl ModelPicker {
    fn new(plan: &ReplayPlan<'_>) -> Result<Self, ScenarioError> {
        type Entries<'s> = (Vec<(&'s str, Option<f64>)>, Vec<f64>, Vec<RuleSpec>);
        let (names, weights, rules): Entries<'_> = match &plan.spec.models {
            ModelMapSpec::Mix(mix) => (
                mix.iter()
                    .map(|m| (m.model.as_str(), m.min_speed))
                    .collect(),
                mix.iter().map(|m| m.weight).collect(),
                Vec::new(),
            ),
            ModelMapSpec::Rules(rules) => (
                rules
                    .iter()
                    .map(|r| (r.model.as_str(), r.min_speed))
                    .collect(),
                Vec::new(),
                rules.clone(),
            ),
        };
        let kind = if rules.is_empty() { "Mix" } else { "Rules" };
        if names.is_empty() {
            return Err(ScenarioError::field(
                plan.path,
                format!("{FIELD}.models.{kind}"),
                "is empty; list at least one model",
            ));
        }
        let models = names
            .iter()
            .enumerate()
            .map(|(idx, &(name, min_speed))| {
                let entry = format!("models.{kind}[{idx}]");
                let (key, rate) = resolve_model(plan, &entry, name)?;
                let field = format!("{FIELD}.{entry}.min_speed");
                let min_speed = super::build::min_speed(plan.path, field, min_speed)?;
                Ok((key, rate, min_speed))
            })
            .collect::<Result<Vec<_>, ScenarioError>>()?;
        let mix =
            if rules.is_empty() {
                Some(WeightedIndex::new(weights).map_err(|e| {
                    ScenarioError::field(plan.path, format!("{FIELD}.models.Mix"), e)
                })?)
            } else {
                None
            };
        Ok(Self { models, mix, rules })
    }

    fn pick(
        &self,
        path: &Path,
        job: &TraceJob,
        rng: &mut Xoshiro256PlusPlus,
    ) -> Result<(&ModelKey, f64, Option<MinSpeed>), ScenarioError> {
        let idx = match &self.mix {
            Some(mix) => mix.sample(rng),
            None => self
                .rules
                .iter()
                .position(|rule| rule_matches(rule, job))
                .ok_or_else(|| unmatched(path, job))?,
        };
        let (model, rate, min_speed) = &self.models[idx];
        Ok((model, *rate, *min_speed))
    }
}

fn resolve_model(
    plan: &ReplayPlan<'_>,
    field: &str,
    name: &str,
) -> Result<(ModelKey, f64), ScenarioError> {
    let field = format!("{FIELD}.{field}.model");
    let key: ModelKey = name
        .parse()
        .map_err(|e| ScenarioError::field(plan.path, &field, e))?;
    let class = plan
        .perf
        .class(plan.reference, &key)
        .map_err(|e| ScenarioError::field(plan.path, &field, e))?;
    Ok((key, class.solo_rate))
}

/// Whether every condition the rule sets holds for `job`.
pub(super) fn rule_matches(rule: &RuleSpec, job: &TraceJob) -> bool {
    let hours = job.duration_s / 3600.0;
    rule.max_gpus.is_none_or(|max| job.gpus <= max)
        && rule.min_gpus.is_none_or(|min| job.gpus >= min)
        && rule.max_hours.is_none_or(|max| hours <= max)
        && rule.min_hours.is_none_or(|min| hours > min)
        && rule.gpu_sharing.is_none_or(|s| s == job.shares_gpu())
}

fn unmatched(path: &Path, job: &TraceJob) -> ScenarioError {
    ScenarioError::field(
        path,
        format!("{FIELD}.models.Rules"),
        format!(
            "no rule matches trace job `{}` (line {}: {} GPU(s), {:.3} h{}); end the list with \
             a rule without conditions, e.g. (model: \"resnet50:64:224\")",
            job.name,
            job.line,
            job.gpus,
            job.duration_s / 3600.0,
            if job.shares_gpu() {
                ", GPU-sharing"
            } else {
                ""
            }
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(gpus: u32, hours: f64, milli: Option<u32>) -> TraceJob {
        TraceJob {
            name: "j".into(),
            arrival_s: 0.0,
            duration_s: hours * 3600.0,
            gpus,
            gpu_milli: milli,
            line: 2,
        }
    }

    fn rule(max_gpus: Option<u32>, max_hours: Option<f64>, sharing: Option<bool>) -> RuleSpec {
        RuleSpec {
            max_gpus,
            min_gpus: None,
            max_hours,
            min_hours: None,
            gpu_sharing: sharing,
            model: "m:1:1".into(),
            min_speed: None,
        }
    }

    fn spec(models: ModelMapSpec) -> TraceSpec {
        TraceSpec {
            format: TraceFormatSpec::Colo,
            path: "t.csv".into(),
            nodes: None,
            strict: false,
            limit: None,
            window_hours: Some((1.0, 3.0)),
            arrival_scale: 0.5,
            duration_scale: 2.0,
            models,
            reference_gpu: None,
            node_gpu: None,
            node_gpu_map: BTreeMap::new(),
        }
    }

    fn replay_with(spec: &TraceSpec, seed: u64) -> Result<(Vec<Job>, TraceSummary), ScenarioError> {
        let profile = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../calibrate/profiles/h200-provisional.ron");
        let profiles = crate::perf::ProfileSet::load(&[profile]).unwrap();
        let perf = crate::perf::Exclusive::new(std::sync::Arc::new(profiles));
        let plan = ReplayPlan {
            path: Path::new("s.ron"),
            spec,
            seed,
            reference: hardware::gpu("h200").unwrap(),
            perf: &perf,
        };
        let mut trace_jobs = Vec::new();
        for (idx, (arrival_h, hours, gpus)) in
            [(0.5, 1.0, 1), (1.0, 0.5, 1), (2.5, 2.0, 4), (3.0, 1.0, 1)]
                .into_iter()
                .enumerate()
        {
            trace_jobs.push(TraceJob {
                line: idx as u64 + 2,
                arrival_s: arrival_h * 3600.0,
                ..job(gpus, hours, None)
            });
        }
        let trace = Trace {
            jobs: trace_jobs,
            skips: Default::default(),
            nodes: None,
            rows_read: 4,
            gpu_sharing_rows: None,
        };
        replay(&plan, &trace)
    }

    #[test]
    fn replay_windows_scales_and_converts_duration_to_work() {
        let rules = ModelMapSpec::Rules(vec![
            RuleSpec {
                model: "resnet18:128:32".into(),
                ..rule(Some(1), None, None)
            },
            RuleSpec {
                model: "resnet50:64:224".into(),
                ..rule(None, None, None)
            },
        ]);
        let (jobs, summary) = replay_with(&spec(rules), 1).unwrap();
        // Jobs at 1.0 h and 2.5 h are in [1, 3) h; they restart at 0, then arrive twice as fast.
        let arrivals: Vec<f64> = jobs.iter().map(|j| j.arrival_s).collect();
        assert_eq!(arrivals, [0.0, 0.75 * 3600.0]);
        // samples = duration x duration_scale x solo rate x GPUs (provisional: 19500 and 1100).
        assert_eq!(jobs[0].samples, 0.5 * 3600.0 * 2.0 * 19500.0);
        assert_eq!(jobs[1].samples, 2.0 * 3600.0 * 2.0 * 1100.0 * 4.0);
        assert_eq!((summary.jobs_read, summary.outside_window), (4, 2));
        assert_eq!(summary.models.get("resnet50:64:224"), Some(&1));
    }

    #[test]
    fn mix_is_seeded_and_unmatched_rules_name_the_job() {
        let mix = ModelMapSpec::Mix(vec![
            super::super::schema::MixSpec {
                model: "resnet18:128:32".into(),
                weight: 1.0,
                min_speed: None,
            },
            super::super::schema::MixSpec {
                model: "vit_b_16:32:224".into(),
                weight: 1.0,
                min_speed: None,
            },
        ]);
        let models = |seed| -> Vec<ModelKey> {
            let (jobs, _) = replay_with(&spec(mix.clone()), seed).unwrap();
            jobs.into_iter().map(|j| j.model).collect()
        };
        assert_eq!(models(7), models(7));
        let only_single = ModelMapSpec::Rules(vec![RuleSpec {
            model: "resnet18:128:32".into(),
            ..rule(Some(1), None, None)
        }]);
        let err = replay_with(&spec(only_single), 1).unwrap_err().to_string();
        assert!(
            err.contains("no rule matches trace job `j` (line 4: 4 GPU(s)"),
            "{err}"
        );
    }

    #[test]
    fn rules_check_every_condition_they_set() {
        let short_single = rule(Some(1), Some(1.0), None);
        assert!(rule_matches(&short_single, &job(1, 1.0, None)));
        assert!(!rule_matches(&short_single, &job(1, 1.01, None)));
        assert!(!rule_matches(&short_single, &job(2, 0.5, None)));
        let sharing = rule(None, None, Some(true));
        assert!(rule_matches(&sharing, &job(1, 9.0, Some(300))));
        assert!(!rule_matches(&sharing, &job(1, 9.0, Some(1000))));
        assert!(!rule_matches(&sharing, &job(1, 9.0, None)));
        assert!(rule_matches(&rule(None, None, None), &job(64, 900.0, None)));
    }
}
