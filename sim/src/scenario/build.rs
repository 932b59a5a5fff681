//! Turning a scenario variant into an engine [`SimConfig`]: GPU names to catalog entries,
//! layouts to MIG geometry, profile paths to a [`ProfileSet`], workloads to jobs.
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::schema::*;
use super::trace_workload::{self, ReplayPlan, Replayed};
use super::{RunOptions, Scenario, ScenarioError};
use crate::engine::{Cluster, DynamicMig, GpuGroup, SimConfig, Unplaceable};
use crate::hardware::{self, GpuSpec, MigLayout};
use crate::metrics::{GroupSummary, RunLabels, TraceSummary};
use crate::perf::{
    EqualShare, Exclusive, FixedSlowdown, Parametric, PerfModel, ProfileSet, ShareMode,
};
use crate::policy::{PlacementRule, Policy, Preemption, QueueOrder};
use crate::workload::stream::JobSource;
use crate::workload::synthetic::{Generator, MixEntry, SyntheticPlan};
use crate::workload::{Job, MinSpeed, ModelKey, limits};

/// The engine configuration and summary labels of one variant. `seed` replaces the variant's.
pub fn build_variant(
    scenario: &Scenario,
    variant: &VariantSpec,
    seed: Option<u64>,
) -> Result<(SimConfig, RunLabels), ScenarioError> {
    let options = RunOptions {
        seed,
        ..RunOptions::default()
    };
    build_variant_with(scenario, variant, &options)
}

/// As [`build_variant`], with every command-line option (seed, strict trace reading).
pub fn build_variant_with(
    scenario: &Scenario,
    variant: &VariantSpec,
    options: &RunOptions,
) -> Result<(SimConfig, RunLabels), ScenarioError> {
    build(scenario, variant, options, None)
}

/// As [`build_variant`], on a cluster already built (and checked) instead of the variant's
/// groups: for searches that vary only the GPU count of groups checked once (`colo plan`).
pub fn build_variant_on(
    scenario: &Scenario,
    variant: &VariantSpec,
    cluster: Cluster,
) -> Result<(SimConfig, RunLabels), ScenarioError> {
    build(scenario, variant, &RunOptions::default(), Some(cluster))
}

/// One cluster group checked as the scenario's `cluster[0]` would be (errors name that
/// field), for a search to copy with other counts.
pub fn checked_group(scenario: &Scenario, spec: &GroupSpec) -> Result<GpuGroup, ScenarioError> {
    group(scenario.path.as_path(), 0, spec, None)
}

fn build(
    scenario: &Scenario,
    variant: &VariantSpec,
    options: &RunOptions,
    built_cluster: Option<Cluster>,
) -> Result<(SimConfig, RunLabels), ScenarioError> {
    let file = &scenario.file;
    let path = scenario.path.as_path();
    let seed = options.seed.or(variant.seed).unwrap_or(file.seed);
    let profile_names = variant.profiles.as_ref().unwrap_or(&file.profiles);
    if profile_names.is_empty() {
        return Err(ScenarioError::field(
            path,
            "profiles",
            "is empty: list the profile file of each GPU type in the cluster, e.g. \
             profiles: [\"../calibrate/profiles/h200.ron\"]",
        ));
    }
    let profile_paths: Vec<PathBuf> = profile_names.iter().map(|p| scenario.resolve(p)).collect();
    let profiles =
        Arc::new(
            ProfileSet::load(&profile_paths).map_err(|source| ScenarioError::Profile {
                path: path.to_owned(),
                source,
            })?,
        );
    let perf_spec = variant.perf_model.as_ref().unwrap_or(&file.perf_model);
    check_perf_model(path, perf_spec)?;
    let (perf, user_traces) = perf_model(scenario, perf_spec, profiles.clone())?;
    let workload = variant.workload.as_ref().unwrap_or(&file.workload);
    let node_gpus = match workload {
        WorkloadSpec::Trace(spec) => {
            let nodes = trace_workload::nodes(scenario, spec)?;
            trace_workload::node_gpus(path, spec, nodes.as_deref())?
        }
        _ => None,
    };
    // A built cluster is the variant's own, as if written in it (min_speed errors say so).
    let cluster_in_variant = variant.cluster.is_some() || built_cluster.is_some();
    let cluster = match built_cluster {
        Some(cluster) => cluster,
        None => {
            let groups = variant.cluster.as_ref().unwrap_or(&file.cluster);
            cluster(path, groups, node_gpus.as_deref())
                .map_err(|e| in_variant(scenario, variant, variant.cluster.is_some(), e))?
        }
    };
    let workload_plan = WorkloadPlan {
        scenario,
        strict: options.strict,
        path,
        seed,
        cluster: &cluster,
        perf: perf.as_ref(),
    };
    let (jobs, source, trace_summary) = jobs(&workload_plan, workload)
        .map_err(|e| in_variant(scenario, variant, variant.workload.is_some(), e))?;
    let policy = policy(path, variant.policy.as_ref().unwrap_or(&file.policy))
        .map_err(|e| in_variant(scenario, variant, variant.policy.is_some(), e))?;
    check_kernel_set_sizes(path, perf_spec, &cluster, &policy)?;
    let in_variant = if variant.policy.is_some() || cluster_in_variant {
        format!(" (sweep variant `{}`)", variant.name)
    } else {
        String::new()
    };
    let first_min_speed = match &source {
        Some(source) => source.first_min_speed(),
        None => jobs
            .iter()
            .find(|j| j.min_speed.is_some())
            .map(|j| j.name.clone()),
    };
    check_min_speeds(path, &in_variant, &cluster, &policy, first_min_speed)?;
    let on_unplaceable = match variant.on_unplaceable.unwrap_or(file.on_unplaceable) {
        UnplaceableSpec::Error => Unplaceable::Error,
        UnplaceableSpec::Skip => Unplaceable::Skip,
    };
    let labels = RunLabels {
        scenario: file.name.clone(),
        variant: variant.name.clone(),
        seed,
        perf_model: perf.name().to_owned(),
        profiles: profile_names.clone(),
        profile_origin: origins(&cluster, perf.as_ref()),
        cluster: cluster.groups.iter().map(group_summary).collect(),
        trace: trace_summary,
        user_traces,
    };
    let timeline_every_s = file.timeline_every_s;
    Ok((
        SimConfig {
            cluster,
            policy,
            jobs,
            source,
            perf,
            on_unplaceable,
            timeline_every_s,
            power: Some(profiles),
        },
        labels,
    ))
}

/// `error` as the sweep variant's own where the field it names came from the variant's
/// override (`overridden`): `sweep[2] ("mps").cluster[0].count`, not the top-level
/// `cluster[0]` it shadows, which may be fine.
fn in_variant(
    scenario: &Scenario,
    variant: &VariantSpec,
    overridden: bool,
    error: ScenarioError,
) -> ScenarioError {
    let index = scenario
        .file
        .sweep
        .iter()
        .position(|v| v.name == variant.name);
    match (error, index) {
        (
            ScenarioError::Field {
                path,
                field,
                message,
            },
            Some(k),
        ) if overridden => ScenarioError::Field {
            path,
            field: format!("sweep[{k}] (\"{}\").{field}", variant.name),
            message,
        },
        (error, _) => error,
    }
}

/// The performance model, and for the scenario's `traces` what was added (per point, where
/// and when it was measured; then the files skipped, with why).
fn perf_model(
    scenario: &Scenario,
    spec: &PerfModelSpec,
    profiles: Arc<ProfileSet>,
) -> Result<(Arc<dyn PerfModel>, Vec<String>), ScenarioError> {
    let path = scenario.path.as_path();
    let traces = &scenario.file.traces;
    if !traces.is_empty() && *spec != PerfModelSpec::Kernel {
        return Err(ScenarioError::field(
            path,
            "traces",
            format!(
                "is read only by perf_model: Kernel, and this run uses {spec:?}: set perf_model: \
                 Kernel (the traced points are predicted from their traces, never by another \
                 model), or drop traces"
            ),
        ));
    }
    let tables_error = |source| ScenarioError::KernelTables {
        path: path.to_owned(),
        source,
    };
    Ok(match spec {
        PerfModelSpec::Kernel => {
            let mut model =
                crate::perf::KernelModel::load(profiles.clone()).map_err(tables_error)?;
            let mut added = Vec::new();
            if !traces.is_empty() {
                let gpus: Vec<&'static GpuSpec> = profiles
                    .profiles()
                    .filter_map(|(p, _)| crate::hardware::gpu(&p.gpu).ok())
                    .collect();
                let dirs: Vec<PathBuf> = traces.iter().map(|d| scenario.resolve(d)).collect();
                let (notes, skipped) =
                    crate::perf::kernel::raw::add_user_traces_of(&mut model, &dirs, &gpus, None)
                        .map_err(|source| ScenarioError::UserTraces {
                            path: path.to_owned(),
                            source,
                        })?;
                added.extend(
                    notes
                        .into_iter()
                        .map(|(point, note)| format!("{point}: {note}")),
                );
                added.extend(
                    skipped
                        .into_iter()
                        .map(|(file, why)| format!("skipped {}: {why}", file.display())),
                );
            }
            (Arc::new(model), added)
        }
        PerfModelSpec::Parametric => (Arc::new(Parametric::new(profiles)), vec![]),
        PerfModelSpec::Exclusive => (Arc::new(Exclusive::new(profiles)), vec![]),
        PerfModelSpec::EqualShare => (Arc::new(EqualShare::new(profiles)), vec![]),
        PerfModelSpec::FixedSlowdown { per_corunner } => (
            Arc::new(FixedSlowdown::new(profiles, *per_corunner)),
            vec![],
        ),
    })
}

fn check_perf_model(path: &Path, spec: &PerfModelSpec) -> Result<(), ScenarioError> {
    match spec {
        PerfModelSpec::FixedSlowdown { per_corunner }
            if !(per_corunner.is_finite() && *per_corunner >= 0.0) =>
        {
            Err(ScenarioError::field(
                path,
                "perf_model.FixedSlowdown.per_corunner",
                format!(
                    "{per_corunner} must be a finite number >= 0 (each co-runner slows a job by \
                     this fraction of its alone time; below 0 jobs would run faster together \
                     than alone)"
                ),
            ))
        }
        _ => Ok(()),
    }
}

/// Under `perf_model: Kernel`, no GPU (or MIG slice) may take more jobs than the replay does
/// ([`crate::perf::kernel::MAX_JOBS`], MPS's client limit): a larger set would be predicted by
/// the parametric model under the kernel label.
fn check_kernel_set_sizes(
    path: &Path,
    spec: &PerfModelSpec,
    cluster: &Cluster,
    policy: &Policy,
) -> Result<(), ScenarioError> {
    let max = crate::perf::kernel::MAX_JOBS;
    if *spec != PerfModelSpec::Kernel {
        return Ok(());
    }
    for (idx, group) in cluster.groups.iter().enumerate() {
        let (field, jobs) = match group.mode {
            ShareMode::Exclusive => continue,
            ShareMode::Mig => (
                format!("cluster[{idx}].jobs_per_slice"),
                group.jobs_per_slice,
            ),
            ShareMode::Mps | ShareMode::Timeslice => (
                "policy.max_jobs_per_gpu".to_owned(),
                policy.max_jobs_per_gpu,
            ),
        };
        if jobs as usize > max {
            return Err(ScenarioError::field(
                path,
                field,
                format!(
                    "{jobs} lets more than {max} jobs share one GPU of cluster[{idx}], but \
                     perf_model Kernel replays at most {max} together (MPS's client limit); \
                     set it to at most {max}, or use perf_model: Parametric"
                ),
            ));
        }
    }
    Ok(())
}

fn origins(cluster: &Cluster, perf: &dyn PerfModel) -> String {
    let mut names: Vec<String> = cluster
        .groups
        .iter()
        .map(|g| format!("{}: {}", g.gpu.name, perf.origin(g.gpu)))
        .collect();
    names.dedup();
    names.join(", ")
}

fn group_summary(group: &GpuGroup) -> GroupSummary {
    GroupSummary {
        gpu: group.gpu.name.to_owned(),
        count: group.count,
        mode: group.mode.to_string(),
        mig_layout: group.mig_layout.as_ref().map(|l| l.to_string()),
    }
}

/// GPUs per catalog type defined by a trace's node list.
type NodeGpus = [(&'static GpuSpec, u32)];

fn cluster(
    path: &Path,
    groups: &[GroupSpec],
    node_gpus: Option<&NodeGpus>,
) -> Result<Cluster, ScenarioError> {
    if groups.is_empty() {
        return Err(ScenarioError::field(
            path,
            "cluster",
            "no GPU groups; add at least one, e.g. (gpu: \"h200\", count: 8, mode: Mps)",
        ));
    }
    let built: Vec<GpuGroup> = groups
        .iter()
        .enumerate()
        .map(|(idx, spec)| group(path, idx, spec, node_gpus))
        .collect::<Result<_, _>>()?;
    check_gpu_total(path, &built)?;
    let from_trace: Vec<&str> = groups
        .iter()
        .zip(&built)
        .filter(|(spec, _)| spec.from_trace)
        .map(|(_, group)| group.gpu.name)
        .collect();
    check_nodes_placed(path, &from_trace, node_gpus)?;
    Ok(Cluster { groups: built })
}

/// All groups together hold at most [`limits::MAX_GPUS`] GPUs: the engine keeps state per GPU.
fn check_gpu_total(path: &Path, groups: &[GpuGroup]) -> Result<(), ScenarioError> {
    let mut total = 0u64;
    for (idx, group) in groups.iter().enumerate() {
        total += u64::from(group.count);
        if total > u64::from(limits::MAX_GPUS) {
            let what = if idx == 0 {
                format!("{} GPUs are", group.count)
            } else {
                format!(
                    "with this group's {}, the cluster's {total} GPUs are",
                    group.count
                )
            };
            return Err(ScenarioError::field(
                path,
                format!("cluster[{idx}].count"),
                format!(
                    "{what} above the limit of {} GPUs in one cluster (see scenarios/README.md, \
                     \"Accepted ranges\")",
                    limits::MAX_GPUS
                ),
            ));
        }
    }
    Ok(())
}

/// With a node list in use (some group `from_trace`), each of its GPU types must have one.
fn check_nodes_placed(
    path: &Path,
    from_trace: &[&str],
    node_gpus: Option<&NodeGpus>,
) -> Result<(), ScenarioError> {
    let Some(node_gpus) = node_gpus.filter(|_| !from_trace.is_empty()) else {
        return Ok(());
    };
    for (gpu, count) in node_gpus {
        if !from_trace.contains(&gpu.name) {
            return Err(ScenarioError::field(
                path,
                "cluster",
                format!(
                    "the trace's node list has {count} GPU(s) that map to {}, but no group \
                     (gpu: \"{}\", from_trace: true); add one, or map them elsewhere",
                    gpu.name, gpu.name
                ),
            ));
        }
    }
    Ok(())
}

/// The group's GPU count: `count`, or with `from_trace` the node list's GPUs of its type.
fn group_count(
    path: &Path,
    idx: usize,
    spec: &GroupSpec,
    gpu: &GpuSpec,
    node_gpus: Option<&NodeGpus>,
) -> Result<u32, ScenarioError> {
    let field = format!("cluster[{idx}].count");
    match (spec.from_trace, node_gpus) {
        (false, _) if spec.count == 0 => {
            Err(ScenarioError::field(path, field, "must be at least 1"))
        }
        (false, _) => Ok(spec.count),
        (true, _) if spec.count != 0 => Err(ScenarioError::field(
            path,
            field,
            "give either `count` or `from_trace: true`, not both",
        )),
        (true, None) => Err(ScenarioError::field(
            path,
            format!("cluster[{idx}].from_trace"),
            "needs a trace workload with a node list (AlibabaOpenb); give `count` instead",
        )),
        (true, Some([])) => Err(ScenarioError::field(
            path,
            format!("cluster[{idx}].from_trace"),
            "the trace's node list has no GPU node (every row has 0 GPUs, or there is no row); \
             give `count` instead, or point `nodes` at a node list with GPUs",
        )),
        (true, Some(nodes)) => nodes
            .iter()
            .find(|(g, _)| g.name == gpu.name)
            .map(|(_, count)| *count)
            .ok_or_else(|| {
                ScenarioError::field(
                    path,
                    format!("cluster[{idx}].from_trace"),
                    format!(
                        "no node of the trace maps to {}; set the trace's `node_gpu` or \
                         `node_gpu_map`",
                        gpu.name
                    ),
                )
            }),
    }
}

fn group(
    path: &Path,
    idx: usize,
    spec: &GroupSpec,
    node_gpus: Option<&NodeGpus>,
) -> Result<GpuGroup, ScenarioError> {
    let field = |name: &str| format!("cluster[{idx}].{name}");
    let gpu = hardware::gpu(&spec.gpu).map_err(|e| ScenarioError::field(path, field("gpu"), e))?;
    let count = group_count(path, idx, spec, gpu, node_gpus)?;
    let mode = spec.mode;
    let mig_layout = match (&spec.mig_layout, mode) {
        (Some(text), ShareMode::Mig) => Some(
            gpu.parse_mig_layout(text)
                .map_err(|e| ScenarioError::field(path, field("mig_layout"), e))?,
        ),
        (None, ShareMode::Mig) => {
            return Err(ScenarioError::field(
                path,
                field("mig_layout"),
                format!(
                    "mode Mig needs a layout, e.g. mig_layout: \"{}\"",
                    example_layout(gpu)
                ),
            ));
        }
        (Some(_), _) => {
            return Err(ScenarioError::field(
                path,
                field("mig_layout"),
                "is only for mode Mig; remove it or set mode: Mig",
            ));
        }
        (None, _) => None,
    };
    let sm_budget = match spec.sm_budget_pct {
        Some(pct) if mode != ShareMode::Mps => {
            return Err(ScenarioError::field(
                path,
                field("sm_budget_pct"),
                format!("{pct}% is only for mode Mps"),
            ));
        }
        Some(pct) if !(pct > 0.0 && pct <= 100.0) => {
            return Err(ScenarioError::field(
                path,
                field("sm_budget_pct"),
                format!("{pct} must be in (0, 100]"),
            ));
        }
        pct => pct.map(|p| p / 100.0),
    };
    let jobs_per_slice = match spec.jobs_per_slice {
        None => 1,
        Some(n) if mode != ShareMode::Mig => {
            return Err(ScenarioError::field(
                path,
                field("jobs_per_slice"),
                format!(
                    "{n} is only for mode Mig (jobs sharing one MIG slice); remove it or set mode: Mig"
                ),
            ));
        }
        Some(0) => {
            return Err(ScenarioError::field(
                path,
                field("jobs_per_slice"),
                "0 must be at least 1 (jobs sharing one MIG slice; default 1)",
            ));
        }
        Some(n) => n,
    };
    let dynamic_mig = dynamic_mig(path, idx, spec, gpu, mig_layout.as_ref())?;
    Ok(GpuGroup {
        gpu,
        count,
        mode,
        mig_layout,
        sm_budget,
        jobs_per_slice,
        dynamic_mig,
    })
}

/// Default seconds a MIG re-cut takes (destroying and creating instances): an assumption, not a
/// measurement; scenarios set `reconfigure_s` when they know better.
const DEFAULT_RECONFIGURE_S: f64 = 30.0;

fn dynamic_mig(
    path: &Path,
    idx: usize,
    spec: &GroupSpec,
    gpu: &'static GpuSpec,
    initial: Option<&MigLayout>,
) -> Result<Option<DynamicMig>, ScenarioError> {
    let field = |name: &str| format!("cluster[{idx}].{name}");
    if spec.dynamic_layouts.is_empty() {
        if spec.reconfigure_s.is_some() {
            return Err(ScenarioError::field(
                path,
                field("reconfigure_s"),
                "is only for dynamic MIG; add `dynamic_layouts` or remove it",
            ));
        }
        return Ok(None);
    }
    let Some(initial) = initial else {
        return Err(ScenarioError::field(
            path,
            field("dynamic_layouts"),
            "is only for mode Mig with a `mig_layout` (where every GPU starts)",
        ));
    };
    let mut layouts = vec![initial.clone()];
    for (k, text) in spec.dynamic_layouts.iter().enumerate() {
        let layout = gpu.parse_mig_layout(text).map_err(|e| {
            ScenarioError::field(path, format!("cluster[{idx}].dynamic_layouts[{k}]"), e)
        })?;
        if !layouts.contains(&layout) {
            layouts.push(layout);
        }
    }
    let reconfigure_s = spec.reconfigure_s.unwrap_or(DEFAULT_RECONFIGURE_S);
    if !(0.0..=limits::MAX_TIME_S).contains(&reconfigure_s) {
        return Err(ScenarioError::field(
            path,
            field("reconfigure_s"),
            format!(
                "{reconfigure_s} must be in [0, {:e}] s (the accepted range of times)",
                limits::MAX_TIME_S
            ),
        ));
    }
    Ok(Some(DynamicMig {
        layouts,
        reconfigure_s,
    }))
}

fn example_layout(gpu: &GpuSpec) -> String {
    gpu.mig_profiles.first().map_or_else(String::new, |p| {
        format!("{}x{}", gpu.mig_compute_slices, p.name)
    })
}

fn policy(path: &Path, spec: &PolicySpec) -> Result<Policy, ScenarioError> {
    if spec.max_jobs_per_gpu == 0 {
        return Err(ScenarioError::field(
            path,
            "policy.max_jobs_per_gpu",
            "must be at least 1",
        ));
    }
    let order = match &spec.order {
        OrderSpec::Fifo => QueueOrder::Fifo,
        OrderSpec::ShortestFirst => QueueOrder::ShortestFirst,
        OrderSpec::Las { thresholds_gpu_s } => QueueOrder::Las {
            thresholds_gpu_s: las_thresholds(path, thresholds_gpu_s)?,
        },
        OrderSpec::Srtf => QueueOrder::Srtf,
    };
    let mut preemption = Preemption::default();
    for (name, value, slot) in [
        (
            "checkpoint_s",
            spec.checkpoint_s,
            &mut preemption.checkpoint_s,
        ),
        ("restore_s", spec.restore_s, &mut preemption.restore_s),
        ("min_run_s", spec.min_run_s, &mut preemption.min_run_s),
    ] {
        let field = format!("policy.{name}");
        if !(0.0..=limits::MAX_TIME_S).contains(&value) {
            return Err(ScenarioError::field(
                path,
                field,
                format!(
                    "{value} must be in [0, {:e}] s (the accepted range of times)",
                    limits::MAX_TIME_S
                ),
            ));
        }
        if value != 0.0 && !order.preempts() {
            return Err(ScenarioError::field(
                path,
                field,
                "only the preemptive orders `Las(thresholds_gpu_s: [...])` and `Srtf` use it: \
                 set `order` to one of them, or leave the field out",
            ));
        }
        *slot = value;
    }
    Ok(Policy {
        order,
        backfill: spec.backfill,
        backfill_depth: spec.backfill_depth,
        placement: match spec.placement {
            PlacementSpec::Exclusive => PlacementRule::Exclusive,
            PlacementSpec::FirstFit => PlacementRule::FirstFit,
            PlacementSpec::BestFit => PlacementRule::BestFit,
            PlacementSpec::Spread => PlacementRule::Spread,
            PlacementSpec::LeastSlowdown => PlacementRule::LeastSlowdown,
        },
        max_jobs_per_gpu: spec.max_jobs_per_gpu,
        preemption,
    })
}

/// A `min_speed` field: a fraction of the job's alone speed in (0, 1], or none.
pub(super) fn min_speed(
    path: &Path,
    field: impl Into<String>,
    value: Option<f64>,
) -> Result<Option<MinSpeed>, ScenarioError> {
    match value.map(|v| (v, MinSpeed::new(v))) {
        None => Ok(None),
        Some((_, Some(min))) => Ok(Some(min)),
        Some((v, None)) => Err(ScenarioError::field(
            path,
            field,
            format!(
                "{v} must be in (0, 1]: the least fraction of its alone speed a job accepts \
                 (0.5: at most twice as slow); leave it out for none"
            ),
        )),
    }
}

/// Jobs with a minimum speed need the rule that honours it, and static MIG layouts (a dynamic
/// re-cut chooses slices by memory alone). `in_variant` names the sweep variant, or is empty.
fn check_min_speeds(
    path: &Path,
    in_variant: &str,
    cluster: &Cluster,
    policy: &Policy,
    first_min_speed: Option<String>,
) -> Result<(), ScenarioError> {
    let Some(job) = first_min_speed else {
        return Ok(());
    };
    if policy.placement != PlacementRule::LeastSlowdown {
        return Err(ScenarioError::field(
            path,
            "policy.placement",
            format!(
                "is {}{in_variant}, but job `{}` has a min_speed, which only LeastSlowdown \
                 honours; set placement: LeastSlowdown or remove the workload's min_speed",
                policy.placement, job
            ),
        ));
    }
    if let Some(idx) = cluster.groups.iter().position(|g| g.dynamic_mig.is_some()) {
        return Err(ScenarioError::field(
            path,
            format!("cluster[{idx}].dynamic_layouts"),
            format!(
                "dynamic MIG{in_variant} re-cuts by memory alone and cannot honour job `{}`'s \
                 min_speed; use a static mig_layout or remove the workload's min_speed",
                job
            ),
        ));
    }
    Ok(())
}

/// Las thresholds: at least one, each finite and > 0, strictly increasing.
fn las_thresholds(path: &Path, thresholds: &[f64]) -> Result<Vec<f64>, ScenarioError> {
    let field = "policy.order.Las.thresholds_gpu_s";
    if thresholds.is_empty() {
        return Err(ScenarioError::field(
            path,
            field,
            "is empty: give at least one level boundary in GPU-seconds, e.g. [3600.0, 36000.0] \
             (with none, Las is Fifo)",
        ));
    }
    for (i, &t) in thresholds.iter().enumerate() {
        if !(t.is_finite() && t > 0.0) {
            return Err(ScenarioError::field(
                path,
                format!("{field}[{i}]"),
                format!("{t} must be a finite number of GPU-seconds > 0"),
            ));
        }
        if i > 0 && t <= thresholds[i - 1] {
            return Err(ScenarioError::field(
                path,
                format!("{field}[{i}]"),
                format!(
                    "{t} is not above the threshold before it ({}): list the thresholds in \
                     strictly increasing order",
                    thresholds[i - 1]
                ),
            ));
        }
    }
    Ok(thresholds.to_vec())
}

/// What turning a workload into jobs needs besides the workload.
struct WorkloadPlan<'a> {
    scenario: &'a Scenario,
    /// Strict trace reading (`colo simulate --strict`).
    strict: bool,
    path: &'a Path,
    seed: u64,
    cluster: &'a Cluster,
    perf: &'a dyn PerfModel,
}

type Workload = (Vec<Job>, Option<Arc<dyn JobSource>>, Option<TraceSummary>);

/// The jobs: listed, or a source the engine takes them from as the clock reaches each (a
/// synthetic workload's generator, a trace read as it goes), with a trace's summary.
fn jobs(plan: &WorkloadPlan<'_>, spec: &WorkloadSpec) -> Result<Workload, ScenarioError> {
    let path = plan.path;
    match spec {
        WorkloadSpec::Jobs(list) => {
            let jobs: Vec<Job> = list
                .iter()
                .enumerate()
                .map(|(idx, job)| listed_job(path, idx, job))
                .collect::<Result<_, _>>()?;
            let jobs = rebase(jobs);
            for (idx, job) in jobs.iter().enumerate() {
                check_listed_duration(plan, idx, job)?;
            }
            Ok((jobs, None, None))
        }
        WorkloadSpec::Synthetic(syn) => {
            let generator = synthetic_jobs(path, syn, plan.seed, plan.cluster, plan.perf)?;
            Ok((Vec::new(), Some(Arc::new(generator)), None))
        }
        WorkloadSpec::Trace(spec) => {
            let reference = reference_gpu(path, spec.reference_gpu.as_deref(), plan.cluster)?;
            let replay = ReplayPlan {
                path,
                spec,
                seed: plan.seed,
                reference,
                perf: plan.perf,
            };
            let file = trace_workload::file(plan.scenario, spec, plan.strict);
            match trace_workload::replay(&replay, file)? {
                (Replayed::Listed(jobs), summary) => Ok((jobs, None, Some(summary))),
                (Replayed::Streamed(source), summary) => {
                    Ok((Vec::new(), Some(Arc::new(*source)), Some(summary)))
                }
            }
        }
    }
}

/// The named GPU, or the first group's.
fn reference_gpu(
    path: &Path,
    name: Option<&str>,
    cluster: &Cluster,
) -> Result<&'static GpuSpec, ScenarioError> {
    match name {
        Some(name) => hardware::gpu(name)
            .map_err(|e| ScenarioError::field(path, "workload.Trace.reference_gpu", e)),
        None => Ok(cluster.groups[0].gpu),
    }
}

fn listed_job(path: &Path, idx: usize, spec: &JobSpec) -> Result<Job, ScenarioError> {
    let field = |name: &str| format!("workload.Jobs[{idx}].{name}");
    let model: ModelKey = spec
        .model
        .parse()
        .map_err(|e| ScenarioError::field(path, field("model"), e))?;
    // Each given number must be finite and > 0 on its own: two negatives (or inf times 0)
    // multiply to a work that looks valid, or to NaN, and the message would name neither.
    let positive = |name: &str, value: f64| {
        if value.is_finite() && value > 0.0 {
            Ok(value)
        } else {
            Err(ScenarioError::field(
                path,
                field(name),
                format!("{value} must be a finite number > 0"),
            ))
        }
    };
    let samples = match (spec.samples, spec.epochs, spec.dataset_size) {
        (Some(samples), None, None) => positive("samples", samples)?,
        (None, Some(epochs), Some(size)) => {
            positive("epochs", epochs)? * positive("dataset_size", size)?
        }
        _ => {
            return Err(ScenarioError::field(
                path,
                field("samples"),
                "give either `samples`, or both `epochs` and `dataset_size`",
            ));
        }
    };
    if !samples.is_finite() {
        return Err(ScenarioError::field(
            path,
            field("epochs"),
            "`epochs` times `dataset_size` is beyond the range of numbers (inf samples); lower \
             either",
        ));
    }
    limits::arrival(spec.arrival_s)
        .map_err(|e| ScenarioError::field(path, field("arrival_s"), e))?;
    if !(1..=limits::MAX_GPUS).contains(&spec.gpus) {
        return Err(ScenarioError::field(
            path,
            field("gpus"),
            format!("{} must be in [1, {}]", spec.gpus, limits::MAX_GPUS),
        ));
    }
    let min_speed = min_speed(path, field("min_speed"), spec.min_speed)?;
    Ok(Job {
        name: spec.name.clone().unwrap_or_else(|| format!("j{idx}")),
        model,
        arrival_s: spec.arrival_s,
        samples,
        gpus: spec.gpus,
        min_speed,
    })
}

/// Listed jobs with arrivals relative to the earliest (which arrives at 0), as trace jobs are:
/// a job that arrives first starts on the clock at 0, where its end time is held exactly. The
/// subtraction is exact for the whole seconds scenarios usually give (see `workload::limits`).
fn rebase(mut jobs: Vec<Job>) -> Vec<Job> {
    let first = jobs
        .iter()
        .map(|j| j.arrival_s)
        .min_by(f64::total_cmp)
        .unwrap_or(0.0);
    for job in &mut jobs {
        job.arrival_s -= first;
    }
    jobs
}

/// A listed job's work must take an accepted duration alone, on the first group that can run it.
fn check_listed_duration(
    plan: &WorkloadPlan<'_>,
    idx: usize,
    job: &Job,
) -> Result<(), ScenarioError> {
    let Some((gpu, class)) = plan
        .cluster
        .groups
        .iter()
        .find_map(|g| plan.perf.class(g.gpu, &job.model).ok().map(|c| (g.gpu, c)))
    else {
        return Ok(());
    };
    let alone_s = job.samples / (class.solo_rate * f64::from(job.gpus));
    limits::duration(alone_s).map(|_| ()).map_err(|e| {
        ScenarioError::field(
            plan.path,
            format!("workload.Jobs[{idx}].samples"),
            format!(
                "{} samples take {alone_s} s alone on {}: the {e}",
                job.samples, gpu.name
            ),
        )
    })
}

fn synthetic_jobs(
    path: &Path,
    spec: &SyntheticSpec,
    seed: u64,
    cluster: &Cluster,
    perf: &dyn PerfModel,
) -> Result<Generator, ScenarioError> {
    let reference = match &spec.reference_gpu {
        Some(name) => hardware::gpu(name)
            .map_err(|e| ScenarioError::field(path, "workload.Synthetic.reference_gpu", e))?,
        None => cluster.groups[0].gpu,
    };
    let mut mix = Vec::with_capacity(spec.mix.len());
    for (idx, entry) in spec.mix.iter().enumerate() {
        let field = format!("workload.Synthetic.mix[{idx}].model");
        let model: ModelKey = entry
            .model
            .parse()
            .map_err(|e| ScenarioError::field(path, &field, e))?;
        let class = perf
            .class(reference, &model)
            .map_err(|e| ScenarioError::field(path, &field, e))?;
        let min_speed = min_speed(
            path,
            format!("workload.Synthetic.mix[{idx}].min_speed"),
            entry.min_speed,
        )?;
        mix.push(MixEntry {
            model,
            weight: entry.weight,
            solo_rate: class.solo_rate,
            min_speed,
        });
    }
    for (idx, choice) in spec.gpus.iter().enumerate() {
        if !(1..=limits::MAX_GPUS).contains(&choice.gpus) {
            return Err(ScenarioError::field(
                path,
                format!("workload.Synthetic.gpus[{idx}].gpus"),
                format!(
                    "{} must be in [1, {}] (GPUs per job)",
                    choice.gpus,
                    limits::MAX_GPUS
                ),
            ));
        }
    }
    let plan = SyntheticPlan {
        jobs: spec.jobs,
        arrivals_per_hour: spec.arrivals_per_hour,
        median_s: spec.median_minutes * 60.0,
        sigma: spec.sigma,
        mix,
        gpus: spec.gpus.iter().map(|g| (g.gpus, g.weight)).collect(),
    };
    Generator::new(plan, seed).map_err(|e| ScenarioError::field(path, "workload.Synthetic", e))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::ronfile::parse_ron;

    /// A scenario `(name: "t", profiles: [the provisional H200 profile], FIELDS)` at
    /// `dir/t.ron`, built.
    fn build_fields(fields: &str, dir: &Path) -> Result<(SimConfig, RunLabels), ScenarioError> {
        let profile = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../calibrate/profiles/h200-provisional.ron");
        let text = format!(
            "(name: \"t\", profiles: [{:?}], {fields})",
            profile.display().to_string()
        );
        let path = dir.join("t.ron");
        let file: ScenarioFile = parse_ron(&text, &path).unwrap();
        let scenario = Scenario { path, file };
        let variant = scenario.variants().remove(0);
        build_variant(&scenario, &variant, None)
    }

    fn build(workload: &str, dir: &Path) -> Result<(SimConfig, RunLabels), ScenarioError> {
        build_fields(
            &format!("cluster: [(gpu: \"h200\", count: 1, mode: Exclusive)], workload: {workload}"),
            dir,
        )
    }

    /// A bad value in a sweep variant's own cluster, workload or policy is named as the
    /// variant's field, not as the top-level one it shadows (which is fine here); a bad
    /// top-level field keeps its name.
    #[test]
    fn errors_in_a_sweep_variants_overrides_name_the_variant() {
        let profile = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../calibrate/profiles/h200-provisional.ron");
        let error_of = |cluster: &str, sweep: &str, pick: usize| {
            let text = format!(
                "(name: \"t\", profiles: [{:?}], cluster: [{cluster}], \
                 workload: Jobs([(model: \"resnet18:128:32\", samples: 1000.0)]), \
                 sweep: [(name: \"fine\"), {sweep}])",
                profile.display().to_string()
            );
            let path = Path::new("t.ron").to_owned();
            let file: ScenarioFile = parse_ron(&text, &path).unwrap();
            let scenario = Scenario { path, file };
            let variant = scenario.variants().remove(pick);
            build_variant(&scenario, &variant, None)
                .unwrap_err()
                .to_string()
        };
        let good = "(gpu: \"h200\", count: 1, mode: Mps)";
        let bad = "(gpu: \"h200\", count: 0, mode: Mps)";
        let err = error_of(good, &format!("(name: \"zero\", cluster: [{bad}])"), 1);
        assert_eq!(
            err,
            "t.ron: sweep[1] (\"zero\").cluster[0].count: must be at least 1"
        );
        let err = error_of(
            good,
            "(name: \"w\", workload: Jobs([(model: \"resnet18:128:32\", samples: -1.0)]))",
            1,
        );
        assert!(err.starts_with("t.ron: sweep[1] (\"w\").workload"), "{err}");
        let err = error_of(
            good,
            "(name: \"p\", policy: (order: Las(thresholds_gpu_s: [-5.0])))",
            1,
        );
        assert!(err.starts_with("t.ron: sweep[1] (\"p\").policy"), "{err}");
        // The top-level cluster is bad and the variant does not override it: its own name.
        let err = error_of(bad, "(name: \"other\")", 1);
        assert_eq!(err, "t.ron: cluster[0].count: must be at least 1");
    }

    /// One listed job under `policy` (RON of a policy).
    fn build_policy(policy: &str) -> Result<(SimConfig, RunLabels), ScenarioError> {
        let dir = tempfile::tempdir().unwrap();
        build_fields(
            &format!(
                "cluster: [(gpu: \"h200\", count: 1, mode: Exclusive)], \
                 workload: Jobs([(model: \"resnet18:128:32\", samples: 195000.0)]), \
                 policy: {policy}"
            ),
            dir.path(),
        )
    }

    #[test]
    fn preemptive_orders_and_their_costs_are_read() {
        let (cfg, _) = build_policy(
            "(order: Las(thresholds_gpu_s: [3600, 36000.0]), checkpoint_s: 30, restore_s: 20.5, \
             min_run_s: 600)",
        )
        .unwrap();
        assert_eq!(
            cfg.policy.order,
            QueueOrder::Las {
                thresholds_gpu_s: vec![3600.0, 36000.0]
            }
        );
        assert_eq!(
            cfg.policy.preemption,
            Preemption {
                checkpoint_s: 30.0,
                restore_s: 20.5,
                min_run_s: 600.0
            }
        );
        let (cfg, _) = build_policy("(order: Srtf)").unwrap();
        assert_eq!(cfg.policy.order, QueueOrder::Srtf);
        assert_eq!(cfg.policy.preemption, Preemption::default());
    }

    #[test]
    fn bad_las_thresholds_and_preemption_costs_are_refused_naming_the_field() {
        let cases = [
            (
                "(order: Las(thresholds_gpu_s: []))",
                "t.ron: policy.order.Las.thresholds_gpu_s: is empty",
            ),
            (
                "(order: Las(thresholds_gpu_s: [3600.0, 100.0]))",
                "policy.order.Las.thresholds_gpu_s[1]: 100 is not above the threshold before it \
                 (3600): list the thresholds in strictly increasing order",
            ),
            (
                "(order: Las(thresholds_gpu_s: [-1.0]))",
                "policy.order.Las.thresholds_gpu_s[0]: -1 must be a finite number of GPU-seconds > 0",
            ),
            (
                "(order: Srtf, checkpoint_s: -1.0)",
                "policy.checkpoint_s: -1 must be in [0, 1e10] s",
            ),
            (
                "(order: Srtf, restore_s: inf)",
                "policy.restore_s: inf must be in [0, 1e10] s",
            ),
            (
                "(order: Fifo, min_run_s: 60.0)",
                "policy.min_run_s: only the preemptive orders `Las(thresholds_gpu_s: [...])` and \
                 `Srtf` use it",
            ),
        ];
        for (policy, expected) in cases {
            match build_policy(policy) {
                Ok(_) => panic!("{policy} was accepted"),
                Err(err) => assert!(err.to_string().contains(expected), "{policy}: {err}"),
            }
        }
    }

    fn error(workload: &str) -> String {
        let dir = tempfile::tempdir().unwrap();
        match build(workload, dir.path()) {
            Ok(_) => panic!("{workload} was accepted"),
            Err(err) => err.to_string(),
        }
    }

    /// Issue 12.6: arrivals of 1e17 s (a 10 s job reported a JCT of 16 s) and 1e300 s (an
    /// infinite mean rate) are refused, naming the field and the limit.
    #[test]
    fn listed_arrivals_beyond_the_limit_are_refused() {
        for arrival in ["1e17", "1e300", "-1.0", "inf", "NaN"] {
            let err = error(&format!(
                "Jobs([(model: \"resnet18:128:32\", arrival_s: {arrival}, samples: 195000.0)])"
            ));
            assert!(
                err.contains("t.ron: workload.Jobs[0].arrival_s: arrival of"),
                "{err}"
            );
            assert!(err.contains("[0, 1e10] s"), "{err}");
        }
    }

    /// Issue 12.6: a job of 1e-308 s (work 1e-308 s times its rate) is refused; so is one too
    /// long to end inside the range.
    #[test]
    fn listed_work_outside_the_duration_range_is_refused() {
        for samples in ["1.95e-304", "0.0001", "1e300"] {
            let err = error(&format!(
                "Jobs([(model: \"resnet18:128:32\", samples: {samples})])"
            ));
            assert!(err.contains("workload.Jobs[0].samples:"), "{err}");
            assert!(err.contains("alone on h200"), "{err}");
            assert!(err.contains("[1e-6, 1e10] s"), "{err}");
        }
    }

    /// Issue 34 items 14 and 20: negative `epochs` times negative `dataset_size` ran as positive
    /// work, and `epochs: inf` said "work of NaN samples" (inf times 0) or "inf samples",
    /// naming neither field; each number is checked on its own, naming its field.
    #[test]
    fn issue_34_epochs_and_dataset_size_are_checked_one_by_one() {
        let job = |fields: &str| format!("Jobs([(model: \"resnet18:128:32\", {fields})])");
        let cases = [
            ("epochs: -5.0, dataset_size: -50000.0", "epochs: -5 must be"),
            (
                "epochs: 5.0, dataset_size: -50000.0",
                "dataset_size: -50000 must be",
            ),
            ("epochs: inf, dataset_size: 0.0", "epochs: inf must be"),
            (
                "epochs: 5.0, dataset_size: NaN",
                "dataset_size: NaN must be",
            ),
            ("samples: -1.0", "samples: -1 must be"),
            (
                "epochs: 1e300, dataset_size: 1e300",
                "epochs: `epochs` times `dataset_size`",
            ),
        ];
        for (fields, expected) in cases {
            let err = error(&job(fields));
            assert!(
                err.contains(&format!("workload.Jobs[0].{expected}")),
                "{fields}: {err}"
            );
        }
    }

    /// Issue 34 items 14 and 19: `gpus: 0` in a synthetic mix was made 1 without a word, and
    /// 4e9 GPUs (a group, a job) were taken as written until memory ran out.
    #[test]
    fn issue_34_gpu_counts_outside_the_limits_are_refused() {
        let synthetic = |gpus: &str| {
            format!(
                "Synthetic((jobs: 3, arrivals_per_hour: 10.0, median_minutes: 30.0, \
                 mix: [(model: \"resnet18:128:32\")], gpus: [(gpus: 1), (gpus: {gpus})]))"
            )
        };
        let err = error(&synthetic("0"));
        assert!(
            err.contains("workload.Synthetic.gpus[1].gpus: 0 must be in [1, 1000000]"),
            "{err}"
        );
        let err = error(&synthetic("4000000000"));
        assert!(err.contains("gpus[1].gpus: 4000000000 must be"), "{err}");
        let err = error("Jobs([(model: \"resnet18:128:32\", samples: 1e6, gpus: 4000000000)])");
        assert!(
            err.contains("workload.Jobs[0].gpus: 4000000000 must be in [1, 1000000]"),
            "{err}"
        );
        let dir = tempfile::tempdir().unwrap();
        let jobs = "workload: Jobs([(model: \"resnet18:128:32\", samples: 1e6)])";
        let err = build_fields(
            &format!("cluster: [(gpu: \"h200\", count: 4000000000, mode: Mps)], {jobs}"),
            dir.path(),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("cluster[0].count: 4000000000 GPUs are above the limit of 1000000"),
            "{err}"
        );
        let err = build_fields(
            &format!(
                "cluster: [(gpu: \"h200\", count: 600000, mode: Mps), \
                 (gpu: \"h200\", count: 600000, mode: Mps)], {jobs}"
            ),
            dir.path(),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("cluster[1].count: with this group's 600000, the cluster's 1200000"),
            "{err}"
        );
    }

    /// Issue 34 items 14 and 20: `FixedSlowdown(per_corunner: -0.2)` made co-located jobs
    /// faster than alone, and below -1/(n-1) failed at run time with a negative "rate" that
    /// never named the field.
    #[test]
    fn issue_34_a_negative_per_corunner_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        for value in ["-0.2", "-1000.0", "inf"] {
            let err = build_fields(
                &format!(
                    "perf_model: FixedSlowdown(per_corunner: {value}), cluster: [(gpu: \"h200\", \
                     count: 1, mode: Mps)], workload: Jobs([(model: \"resnet18:128:32\", \
                     samples: 1e6)])"
                ),
                dir.path(),
            )
            .unwrap_err()
            .to_string();
            assert!(
                err.contains(&format!(
                    "perf_model.FixedSlowdown.per_corunner: {} must be a finite number >= 0",
                    value.trim_end_matches(".0")
                )),
                "{err}"
            );
        }
    }

    /// An AlibabaOpenb replay of one pod on the node list `nodes` (CSV rows after the header),
    /// every node mapped to h200, the cluster its nodes (`from_trace`).
    fn build_openb(nodes: &str, dir: &Path) -> String {
        std::fs::write(
            dir.join("pods.csv"),
            "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,\
             deletion_time,scheduled_time\np0,12000,16384,1,1000,,LS,Running,100,1100,100\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("nodes.csv"),
            format!("sn,cpu_milli,memory_mib,gpu,model\n{nodes}"),
        )
        .unwrap();
        build_fields(
            "cluster: [(gpu: \"h200\", from_trace: true, mode: Mps)], workload: \
             Trace((format: AlibabaOpenb, path: \"pods.csv\", nodes: \"nodes.csv\", \
             node_gpu: \"h200\", models: Mix([(model: \"resnet18:128:32\")])))",
            dir,
        )
        .map(|_| String::new())
        .unwrap_or_else(|e| e.to_string())
    }

    /// Issue 34 items 19 and 20: a node of 4e9 GPUs became a cluster of 4e9 GPUs (out of
    /// memory); a node list without GPU nodes said "set the trace's `node_gpu`" although it
    /// was set.
    #[test]
    fn issue_34_node_lists_too_large_or_without_gpus_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(build_openb("n0,64000,262144,8,A10\n", dir.path()), "");
        let err = build_openb("n0,64000,262144,4000000000,A10\n", dir.path());
        assert!(
            err.contains(
                "workload.Trace.nodes: the node list's GPUs, 4000000000 up to node `n0`, are \
                 above the limit of 1000000 GPUs"
            ),
            "{err}"
        );
        let err = build_openb("n0,64000,262144,0,nan\n", dir.path());
        assert!(
            err.contains("cluster[0].from_trace: the trace's node list has no GPU node"),
            "{err}"
        );
        assert!(!err.contains("set the trace's `node_gpu`"), "{err}");
    }

    /// Issue 34 item 14: `window_hours: (0.0, inf)` was accepted, though infinite values are
    /// refused everywhere else.
    #[test]
    fn issue_34_an_infinite_trace_window_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("t.csv"),
            "name,arrival_s,duration_s,gpus\na,0,60,1\n",
        )
        .unwrap();
        for window in ["(0.0, inf)", "(0.0, 1e306)", "(inf, inf)", "(NaN, 1.0)"] {
            let err = build(
                &format!(
                    "Trace((format: Colo, path: \"t.csv\", window_hours: {window}, models: \
                     Mix([(model: \"resnet18:128:32\")])))"
                ),
                dir.path(),
            )
            .map(|_| String::new())
            .unwrap_or_else(|e| e.to_string());
            assert!(
                err.contains("workload.Trace.window_hours:") && err.contains("both finite"),
                "{window}: {err}"
            );
        }
    }

    /// Issue 34 item 14: jobs slowed for centuries (`per_corunner: 1e12`) ended the run with a
    /// makespan far past the accepted range of times (1.8e304 s with a larger slowdown) and exit
    /// 0; the run stops with an error naming the time and the limit.
    #[test]
    fn issue_34_a_clock_past_the_limit_stops_the_run() {
        let dir = tempfile::tempdir().unwrap();
        let run = |per_corunner: &str| {
            let (cfg, _) = build_fields(
                &format!(
                    "perf_model: FixedSlowdown(per_corunner: {per_corunner}), cluster: [(gpu: \
                     \"h200\", count: 1, mode: Mps)], workload: Jobs([(model: \
                     \"resnet18:128:32\", samples: 1e6), (model: \"resnet18:128:32\", \
                     samples: 1e6)])"
                ),
                dir.path(),
            )
            .unwrap();
            crate::engine::Simulation::run(&cfg, None).map(|record| record.outcomes.len())
        };
        assert_eq!(run("0.15").unwrap(), 2);
        let err = run("1e12").unwrap_err().to_string();
        assert!(
            err.starts_with("the simulation's clock reached ")
                && err.contains("past the limit of 2e10 s"),
            "{err}"
        );
    }

    /// Issue 34 item 13: under `perf_model: Kernel`, sets above the replay's 48 jobs went to
    /// the parametric model while the run said `kernel`; a policy that allows them is refused.
    #[test]
    fn issue_34_kernel_sets_above_the_replay_limit_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let err = build_fields(
            "perf_model: Kernel, cluster: [(gpu: \"h200\", count: 1, mode: Mps)], \
             policy: (max_jobs_per_gpu: 49), workload: Jobs([(model: \"resnet18:128:32\", \
             samples: 1e6)])",
            dir.path(),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("policy.max_jobs_per_gpu: 49 lets more than 48 jobs share one GPU"),
            "{err}"
        );
    }

    /// Issue 34 item 20: `profiles: []` failed later with "(profiles loaded for: )".
    #[test]
    fn issue_34_an_empty_profile_list_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let text = "(name: \"t\", profiles: [], cluster: [(gpu: \"h200\", count: 1, mode: Mps)], \
                    workload: Jobs([(model: \"resnet18:128:32\", samples: 1e6)]))";
        let path = dir.path().join("t.ron");
        let file: ScenarioFile = parse_ron(text, &path).unwrap();
        let scenario = Scenario { path, file };
        let variant = scenario.variants().remove(0);
        let err = build_variant(&scenario, &variant, None)
            .unwrap_err()
            .to_string();
        assert!(err.contains("t.ron: profiles: is empty"), "{err}");
    }

    /// Listed arrivals are relative to the first, as trace arrivals are.
    #[test]
    fn listed_arrivals_are_rebased_to_the_first() {
        let dir = tempfile::tempdir().unwrap();
        let (cfg, _) = build(
            "Jobs([(model: \"resnet18:128:32\", arrival_s: 5000.0, samples: 1.0e6), \
             (model: \"resnet18:128:32\", arrival_s: 3600.0, samples: 1.0e6)])",
            dir.path(),
        )
        .unwrap();
        let arrivals: Vec<f64> = cfg.jobs.iter().map(|j| j.arrival_s).collect();
        assert_eq!(arrivals, [1400.0, 0.0]);
    }

    #[test]
    fn scales_and_synthetic_draws_outside_the_range_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("t.csv"),
            "name,arrival_s,duration_s,gpus\na,0,60,1\nb,3600,60,1\n",
        )
        .unwrap();
        let trace = |scales: &str| {
            format!(
                "Trace((format: Colo, path: \"t.csv\", {scales} models: Mix([(model: \
                 \"resnet18:128:32\")])))"
            )
        };
        let err = build(&trace("arrival_scale: 1e300,"), dir.path())
            .unwrap_err()
            .to_string();
        assert!(err.contains("workload.Trace.arrival_scale:"), "{err}");
        assert!(err.contains("trace job `b` (line 3)"), "{err}");
        let err = build(&trace("duration_scale: 1e-308,"), dir.path())
            .unwrap_err()
            .to_string();
        assert!(err.contains("workload.Trace.duration_scale:"), "{err}");
        assert!(err.contains("below the limit of 1e-6 s"), "{err}");
        assert!(build(&trace(""), dir.path()).is_ok());
        let err = error(
            "Synthetic((jobs: 3, arrivals_per_hour: 1e-300, median_minutes: 30.0, \
             mix: [(model: \"resnet18:128:32\")]))",
        );
        assert!(err.contains("workload.Synthetic:"), "{err}");
        assert!(err.contains("above the limit of 1e10 s"), "{err}");
    }

    fn build_with(cluster: &str, policy: &str, workload: &str) -> Result<SimConfig, String> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("t.csv"),
            "name,arrival_s,duration_s,gpus\na,0,60,1\nb,3600,60,1\n",
        )
        .unwrap();
        build_fields(
            &format!("cluster: [{cluster}], policy: {policy}, workload: {workload}"),
            dir.path(),
        )
        .map(|(cfg, _)| cfg)
        .map_err(|e| e.to_string())
    }

    const MPS: &str = "(gpu: \"h200\", count: 2, mode: Mps)";
    const LEAST: &str = "(placement: LeastSlowdown)";

    /// Minimum speeds reach the jobs from a listed job, a synthetic mix entry and a trace rule.
    #[test]
    fn min_speeds_reach_the_jobs_from_every_workload() {
        let listed = build_with(
            MPS,
            LEAST,
            "Jobs([(model: \"resnet18:128:32\", samples: 1e6, min_speed: 0.5), \
             (model: \"resnet18:128:32\", samples: 1e6)])",
        )
        .unwrap();
        let speeds: Vec<_> = listed.jobs.iter().map(|j| j.min_speed).collect();
        assert_eq!(speeds, [MinSpeed::new(0.5), None]);
        let synthetic = build_with(
            MPS,
            LEAST,
            "Synthetic((jobs: 20, arrivals_per_hour: 10.0, median_minutes: 5.0, mix: [\
             (model: \"resnet18:128:32\", min_speed: 0.7), (model: \"vit_b_16:32:224\")]))",
        )
        .unwrap();
        for job in &synthetic.jobs {
            let expect = MinSpeed::new(0.7).filter(|_| job.model.model == "resnet18");
            assert_eq!(job.min_speed, expect, "{job:?}");
        }
        let trace = build_with(
            MPS,
            LEAST,
            "Trace((format: Colo, path: \"t.csv\", models: Rules([\
             (max_hours: 0.5, model: \"resnet18:128:32\", min_speed: 0.8)])))",
        )
        .unwrap();
        assert!(trace.jobs.iter().all(|j| j.min_speed == MinSpeed::new(0.8)));
        assert_eq!(trace.policy.placement, PlacementRule::LeastSlowdown);
    }

    #[test]
    fn min_speeds_out_of_range_unhonoured_or_with_dynamic_mig_are_refused() {
        let err = build_with(
            MPS,
            LEAST,
            "Synthetic((jobs: 2, arrivals_per_hour: 10.0, median_minutes: 5.0, mix: [\
             (model: \"resnet18:128:32\", min_speed: 0.0)]))",
        )
        .unwrap_err();
        assert!(
            err.contains("t.ron: workload.Synthetic.mix[0].min_speed: 0 must be in (0, 1]"),
            "{err}"
        );
        let err = build_with(
            MPS,
            LEAST,
            "Trace((format: Colo, path: \"t.csv\", models: Mix([\
             (model: \"resnet18:128:32\", min_speed: 2.0)])))",
        )
        .unwrap_err();
        assert!(
            err.contains("workload.Trace.models.Mix[0].min_speed: 2 must be in (0, 1]"),
            "{err}"
        );
        let job = "Jobs([(name: \"x\", model: \"resnet18:128:32\", samples: 1e6, min_speed: 0.5)])";
        let err = build_with(MPS, "(placement: Spread)", job).unwrap_err();
        assert!(
            err.contains("policy.placement: is spread, but job `x`"),
            "{err}"
        );
        let dynamic = "(gpu: \"h200\", count: 1, mode: Mig, mig_layout: \"7x1g.18gb\", \
                       dynamic_layouts: [\"3g.71gb,4g.71gb\"])";
        let err = build_with(dynamic, LEAST, job).unwrap_err();
        assert!(
            err.contains("cluster[0].dynamic_layouts: dynamic MIG"),
            "{err}"
        );
        assert!(build_with(MPS, LEAST, job).is_ok());
    }

    /// A colo trace of `rows` (name, arrival, duration minutes, GPUs) replayed with a seeded
    /// mix on two H200s under MPS: the config and labels.
    fn trace_run(dir: &Path, rows: &[(String, f64, f64, u32)]) -> (SimConfig, RunLabels) {
        write_trace(dir, rows);
        build_fields(
            "cluster: [(gpu: \"h200\", count: 2, mode: Mps)], workload: Trace((format: Colo, \
             path: \"t.csv\", models: Mix([(model: \"resnet18:128:32\", weight: 1), (model: \
             \"resnet50:64:224\", weight: 1)])))",
            dir,
        )
        .unwrap()
    }

    /// Writes `dir/t.csv` with `rows` and two rows the reader skips (counted in the summary).
    fn write_trace(dir: &Path, rows: &[(String, f64, f64, u32)]) {
        let mut csv = String::from("name,arrival_s,duration_s,gpus\n");
        for (name, arrival, minutes, gpus) in rows {
            csv.push_str(&format!("{name},{arrival},{},{gpus}\n", minutes * 60.0));
        }
        csv.push_str("bad,-5,60,1\nzero,10,0,1\n");
        std::fs::write(dir.join("t.csv"), csv).unwrap();
    }

    fn trace_rows(jobs: usize) -> Vec<(String, f64, f64, u32)> {
        (0..jobs)
            .map(|i| {
                let arrival = (i * 37 % 11) as f64 * 60.0 + (i / 11) as f64 * 700.0;
                (
                    format!("t{i}"),
                    arrival,
                    5.0 + (i % 7) as f64,
                    1 + (i % 3 == 0) as u32,
                )
            })
            .collect()
    }

    #[test]
    fn traces_stream_in_order_and_out_of_order_traces_give_the_same_run() {
        let rows = trace_rows(200);
        let mut sorted = rows.clone();
        sorted.sort_by(|a, b| a.1.total_cmp(&b.1));
        assert_ne!(rows, sorted, "the rows must be out of order for this test");
        let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (streamed, streamed_labels) = trace_run(dir_a.path(), &sorted);
        let (held, held_labels) = trace_run(dir_b.path(), &rows);
        assert_eq!(streamed_labels.trace, held_labels.trace);
        let summary = streamed_labels.trace.unwrap();
        assert_eq!((summary.jobs_replayed, summary.rows_skipped), (200, 2));
        let jobs = |cfg: &SimConfig| cfg.all_jobs().unwrap().into_owned();
        assert_eq!(jobs(&streamed), jobs(&held));
        assert!(
            jobs(&streamed)
                .windows(2)
                .all(|w| w[0].arrival_s <= w[1].arrival_s)
        );
        let (a, b) = (
            crate::engine::Simulation::run(&streamed, None).unwrap(),
            crate::engine::Simulation::run(&held, None).unwrap(),
        );
        assert_eq!(a.outcomes, b.outcomes);
        assert_eq!(a.outcomes.len(), 200);
        // The trace in order is read again as the run goes; the other one's jobs are held.
        std::fs::remove_file(dir_a.path().join("t.csv")).unwrap();
        std::fs::remove_file(dir_b.path().join("t.csv")).unwrap();
        assert!(crate::engine::Simulation::run(&streamed, None).is_err());
        assert_eq!(
            crate::engine::Simulation::run(&held, None)
                .unwrap()
                .outcomes,
            b.outcomes
        );
    }

    #[test]
    fn a_short_trace_is_held_from_its_first_reading() {
        let dir = tempfile::tempdir().unwrap();
        let mut rows = trace_rows(40);
        rows.sort_by(|a, b| a.1.total_cmp(&b.1));
        let (cfg, _) = trace_run(dir.path(), &rows);
        let before = crate::engine::Simulation::run(&cfg, None).unwrap();
        std::fs::remove_file(dir.path().join("t.csv")).unwrap();
        let after = crate::engine::Simulation::run(&cfg, None).unwrap();
        assert_eq!(before.outcomes, after.outcomes);
    }

    #[test]
    fn a_trace_changed_before_its_run_is_an_error_not_a_wrong_run() {
        let dir = tempfile::tempdir().unwrap();
        // Longer than a trace held from its first reading.
        let mut rows = trace_rows(100);
        rows.sort_by(|a, b| a.1.total_cmp(&b.1));
        let (cfg, _) = trace_run(dir.path(), &rows);
        let mut moved = rows.clone();
        moved.swap(10, 30);
        let mut more = rows.clone();
        more.push(("late".into(), 1e6, 5.0, 1));
        let mut other_gpus = rows.clone();
        other_gpus[20].3 = 8;
        let mut longer = rows.clone();
        longer[20].2 += 1.0;
        let mut renamed = rows.clone();
        renamed[20].0.push('x');
        for changed in [
            &rows[..40],
            &rows[..0],
            &moved,
            &more,
            &other_gpus,
            &longer,
            &renamed,
        ] {
            write_trace(dir.path(), changed);
            let err = crate::engine::Simulation::run(&cfg, None)
                .unwrap_err()
                .to_string();
            assert!(err.contains("changed or became unreadable"), "{err}");
        }
        std::fs::remove_file(dir.path().join("t.csv")).unwrap();
        let err = crate::engine::Simulation::run(&cfg, None)
            .unwrap_err()
            .to_string();
        assert!(err.contains("changed or became unreadable"), "{err}");
    }
}
