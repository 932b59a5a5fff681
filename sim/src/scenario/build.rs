//! Turning a scenario variant into an engine [`SimConfig`]: GPU names to catalog entries,
//! layouts to MIG geometry, profile paths to a [`ProfileSet`], workloads to jobs.
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::schema::*;
use super::{Scenario, ScenarioError};
use crate::engine::{Cluster, GpuGroup, SimConfig, Unplaceable};
use crate::hardware::{self, GpuSpec};
use crate::metrics::{GroupSummary, RunLabels};
use crate::perf::{
    EqualShare, Exclusive, FixedSlowdown, Parametric, PerfModel, ProfileSet, ShareMode,
};
use crate::policy::{PlacementRule, Policy, QueueOrder};
use crate::workload::synthetic::{self, MixEntry, SyntheticPlan};
use crate::workload::{Job, ModelKey};

/// The engine configuration and summary labels of one variant. `seed` replaces the variant's.
pub fn build_variant(
    scenario: &Scenario,
    variant: &VariantSpec,
    seed: Option<u64>,
) -> Result<(SimConfig, RunLabels), ScenarioError> {
    let file = &scenario.file;
    let path = scenario.path.as_path();
    let seed = seed.or(variant.seed).unwrap_or(file.seed);
    let profile_names = variant.profiles.as_ref().unwrap_or(&file.profiles);
    let profile_paths: Vec<PathBuf> = profile_names.iter().map(|p| scenario.resolve(p)).collect();
    let profiles =
        Arc::new(
            ProfileSet::load(&profile_paths).map_err(|source| ScenarioError::Profile {
                path: path.to_owned(),
                source,
            })?,
        );
    let perf_spec = variant.perf_model.as_ref().unwrap_or(&file.perf_model);
    let perf = perf_model(perf_spec, profiles.clone());
    let cluster = cluster(path, variant.cluster.as_ref().unwrap_or(&file.cluster))?;
    let workload = variant.workload.as_ref().unwrap_or(&file.workload);
    let jobs = jobs(path, workload, seed, &cluster, perf.as_ref())?;
    let policy = policy(path, variant.policy.as_ref().unwrap_or(&file.policy))?;
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
    };
    let timeline_every_s = file.timeline_every_s;
    Ok((
        SimConfig {
            cluster,
            policy,
            jobs,
            perf,
            on_unplaceable,
            timeline_every_s,
        },
        labels,
    ))
}

fn perf_model(spec: &PerfModelSpec, profiles: Arc<ProfileSet>) -> Arc<dyn PerfModel> {
    match spec {
        PerfModelSpec::Parametric => Arc::new(Parametric::new(profiles)),
        PerfModelSpec::Exclusive => Arc::new(Exclusive::new(profiles)),
        PerfModelSpec::EqualShare => Arc::new(EqualShare::new(profiles)),
        PerfModelSpec::FixedSlowdown { per_corunner } => {
            Arc::new(FixedSlowdown::new(profiles, *per_corunner))
        }
    }
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

fn cluster(path: &Path, groups: &[GroupSpec]) -> Result<Cluster, ScenarioError> {
    if groups.is_empty() {
        return Err(ScenarioError::field(
            path,
            "cluster",
            "no GPU groups; add at least one, e.g. (gpu: \"h200\", count: 8, mode: Mps)",
        ));
    }
    let groups = groups
        .iter()
        .enumerate()
        .map(|(idx, spec)| group(path, idx, spec))
        .collect::<Result<_, _>>()?;
    Ok(Cluster { groups })
}

fn group(path: &Path, idx: usize, spec: &GroupSpec) -> Result<GpuGroup, ScenarioError> {
    let field = |name: &str| format!("cluster[{idx}].{name}");
    let gpu = hardware::gpu(&spec.gpu).map_err(|e| ScenarioError::field(path, field("gpu"), e))?;
    if spec.count == 0 {
        return Err(ScenarioError::field(
            path,
            field("count"),
            "must be at least 1",
        ));
    }
    let mode = match spec.mode {
        ModeSpec::Exclusive => ShareMode::Exclusive,
        ModeSpec::Timeslice => ShareMode::Timeslice,
        ModeSpec::Mps => ShareMode::Mps,
        ModeSpec::Mig => ShareMode::Mig,
    };
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
    Ok(GpuGroup {
        gpu,
        count: spec.count,
        mode,
        mig_layout,
        sm_budget,
        jobs_per_slice: spec.jobs_per_slice.max(1),
    })
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
    Ok(Policy {
        order: match spec.order {
            OrderSpec::Fifo => QueueOrder::Fifo,
            OrderSpec::ShortestFirst => QueueOrder::ShortestFirst,
        },
        backfill: spec.backfill,
        backfill_depth: spec.backfill_depth,
        placement: match spec.placement {
            PlacementSpec::Exclusive => PlacementRule::Exclusive,
            PlacementSpec::FirstFit => PlacementRule::FirstFit,
            PlacementSpec::BestFit => PlacementRule::BestFit,
        },
        max_jobs_per_gpu: spec.max_jobs_per_gpu,
    })
}

fn jobs(
    path: &Path,
    spec: &WorkloadSpec,
    seed: u64,
    cluster: &Cluster,
    perf: &dyn PerfModel,
) -> Result<Vec<Job>, ScenarioError> {
    match spec {
        WorkloadSpec::Jobs(list) => list
            .iter()
            .enumerate()
            .map(|(idx, job)| listed_job(path, idx, job))
            .collect(),
        WorkloadSpec::Synthetic(syn) => synthetic_jobs(path, syn, seed, cluster, perf),
    }
}

fn listed_job(path: &Path, idx: usize, spec: &JobSpec) -> Result<Job, ScenarioError> {
    let field = |name: &str| format!("workload.Jobs[{idx}].{name}");
    let model: ModelKey = spec
        .model
        .parse()
        .map_err(|e| ScenarioError::field(path, field("model"), e))?;
    let samples = match (spec.samples, spec.epochs, spec.dataset_size) {
        (Some(samples), None, None) => samples,
        (None, Some(epochs), Some(size)) => epochs * size,
        _ => {
            return Err(ScenarioError::field(
                path,
                field("samples"),
                "give either `samples`, or both `epochs` and `dataset_size`",
            ));
        }
    };
    if !(samples.is_finite() && samples > 0.0) {
        return Err(ScenarioError::field(
            path,
            field("samples"),
            format!("work of {samples} samples must be > 0"),
        ));
    }
    if !(spec.arrival_s.is_finite() && spec.arrival_s >= 0.0) {
        return Err(ScenarioError::field(
            path,
            field("arrival_s"),
            format!("{} must be >= 0", spec.arrival_s),
        ));
    }
    if spec.gpus == 0 {
        return Err(ScenarioError::field(
            path,
            field("gpus"),
            "must be at least 1",
        ));
    }
    Ok(Job {
        name: spec.name.clone().unwrap_or_else(|| format!("j{idx}")),
        model,
        arrival_s: spec.arrival_s,
        samples,
        gpus: spec.gpus,
    })
}

fn synthetic_jobs(
    path: &Path,
    spec: &SyntheticSpec,
    seed: u64,
    cluster: &Cluster,
    perf: &dyn PerfModel,
) -> Result<Vec<Job>, ScenarioError> {
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
        mix.push(MixEntry {
            model,
            weight: entry.weight,
            solo_rate: class.solo_rate,
        });
    }
    let plan = SyntheticPlan {
        jobs: spec.jobs,
        arrivals_per_hour: spec.arrivals_per_hour,
        median_s: spec.median_minutes * 60.0,
        sigma: spec.sigma,
        mix,
        gpus: spec.gpus.iter().map(|g| (g.gpus, g.weight)).collect(),
    };
    synthetic::generate(&plan, seed)
        .map_err(|e| ScenarioError::field(path, "workload.Synthetic", e))
}
