//! The predictor `colo predict` answers with, and the Python face's `colo.predict`: a
//! performance model over the shipped (or given) profiles of one GPU type, with the user's own
//! kernel traces added and anchored, or Gavel's measured pair table (`gavel:NAME`).

use std::path::PathBuf;
use std::sync::Arc;

use colo_sim::hardware::{self, HardwareError};
use colo_sim::perf::answer::{Predictor, ProfileName};
use colo_sim::perf::{EqualShare, Exclusive, FixedSlowdown, Parametric, PerfError, PerfModel};
use colo_sim::workload::ModelKey;
use thiserror::Error;

use crate::fit::TableError;
use crate::fit::gavel_model::shipped_predictor;
use crate::shipped::{self, ShippedError};
use colo_sim::perf::KernelModel;
use colo_sim::perf::ProfileSet;
use colo_sim::perf::kernel::LAUNCH_BOUND_BELOW;
use colo_sim::perf::kernel::raw::{TracesError, add_user_traces};

/// The performance model a prediction asks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelChoice {
    /// Replays each job's alone kernel trace together (falls back to parametric without one).
    Kernel,
    /// The same replay without the cap at alone speed (what `calibrate fit` fits).
    KernelRaw,
    /// Demand-based model with the profile's fitted parameters.
    Parametric,
    /// Each job as if alone.
    Exclusive,
    /// Each of n jobs gets 1/n.
    EqualShare,
    /// Each job slowed by 1 + 0.15 (n - 1).
    FixedSlowdown,
}

impl ModelChoice {
    /// Whether the choice is the kernel replay (capped or raw).
    pub fn is_kernel(self) -> bool {
        matches!(self, Self::Kernel | Self::KernelRaw)
    }
}

/// What to build a predictor from: `colo predict`'s options.
#[derive(Clone, Debug)]
pub struct PredictorSpec {
    /// GPU type (catalog name, e.g. `h200`).
    pub gpu: String,
    /// Profile files (empty: the shipped ones); `gavel:NAME` uses Gavel's pair table.
    pub profiles: Vec<PathBuf>,
    /// Folders of the user's kernel traces (kernel model only).
    pub traces: Vec<PathBuf>,
    /// Traced points' alone speeds measured on the GPU asked about, samples/s.
    pub alone_rates: Vec<(ModelKey, f64)>,
    /// The model.
    pub model: ModelChoice,
    /// The jobs asked about (trace notes are kept for these only).
    pub jobs: Vec<ModelKey>,
    /// Host time on the asked GPU's host over the tracing host's, for traces carried from
    /// another GPU (1: the same CPU speed).
    pub cpu_factor: f64,
}

/// A predictor, and what the caller should tell the user about how it was built (trace files
/// skipped, where each traced job was measured, anchored speeds): one line each.
pub struct Built {
    /// The predictor.
    pub predictor: Predictor,
    /// Notes, one line each, for stderr or a warning.
    pub notes: Vec<String>,
}

/// Why no predictor could be built. Every variant is fatal.
#[derive(Debug, Error)]
pub enum PredictorError {
    /// The GPU type is not in the catalog.
    #[error(transparent)]
    Hardware(#[from] HardwareError),
    /// `gavel:NAME` names no GPU of Gavel's table.
    #[error("gavel:{name}: Gavel's table has {names}")]
    Gavel {
        /// The name given.
        name: String,
        /// Gavel's GPUs, `a, b and c`.
        names: String,
    },
    /// Gavel's shipped table could not be read.
    #[error(transparent)]
    Table(#[from] TableError),
    /// A profile or kernel table could not be loaded.
    #[error(transparent)]
    Shipped(#[from] ShippedError),
    /// The profiles have none for the GPU.
    #[error(transparent)]
    Perf(#[from] PerfError),
    /// Profiles were given, for other GPUs only.
    #[error(
        "--profile gives profiles for {given} only, not for --gpu {gpu} (the default is h200); \
         pass --gpu {first}, or a --profile for {gpu}"
    )]
    ProfileForOtherGpu {
        /// The GPUs the given profiles are for.
        given: String,
        /// The GPU asked about.
        gpu: String,
        /// The first of `given`.
        first: String,
    },
    /// A trace folder gave nothing.
    #[error(transparent)]
    Traces(#[from] TracesError),
    /// `--alone-rate` for a point without a kernel trace.
    #[error(
        "--alone-rate {key}={rate}: {key} has no kernel trace on {gpu}; trace it first (colo \
         calibrate trace) or pass its folder with --traces"
    )]
    NoTrace {
        /// The point.
        key: ModelKey,
        /// The rate given.
        rate: f64,
        /// The GPU asked about.
        gpu: String,
    },
    /// `--alone-rate` faster than the point's traced kernels allow.
    #[error(
        "--alone-rate {key}={rate}: faster than {key}'s trace allows on {gpu}: its kernels back \
         to back, with no host time at all, give {ceiling:.1} samples/s, and a measured speed \
         beyond {factor} times that is not this point's; give samples/s (not iterations or \
         tokens), of this batch size, measured alone on {gpu}",
        factor = ANCHOR_CEILING_FACTOR
    )]
    AloneRateTooFast {
        /// The point.
        key: ModelKey,
        /// The rate given.
        rate: f64,
        /// The trace's kernel ceiling.
        ceiling: f64,
        /// The GPU asked about.
        gpu: String,
    },
    /// Traces (or alone rates) given with a model that does not read them.
    #[error("--traces and --alone-rate are read by the kernel model only; drop --model, or them")]
    TracesNeedKernel,
}

/// Builds the predictor `spec` asks for.
///
/// # Errors
/// [`PredictorError`]: an unknown GPU, a profile, table or trace folder that cannot be read,
/// or options that do not go together.
pub fn build(spec: &PredictorSpec) -> Result<Built, PredictorError> {
    let gavel = spec
        .profiles
        .iter()
        .find_map(|p| p.to_str()?.strip_prefix("gavel:").map(str::to_owned));
    let mut built = match gavel {
        Some(name) => Built {
            predictor: shipped_predictor(gavel_gpu(&name)?)?,
            notes: Vec::new(),
        },
        None => profile_predictor(spec)?,
    };
    built.predictor.parametric = spec.model == ModelChoice::Parametric;
    Ok(built)
}

fn gavel_gpu(name: &str) -> Result<&'static hardware::GpuSpec, PredictorError> {
    hardware::gavel_gpu(name).ok_or_else(|| {
        let names: Vec<&str> = hardware::gavel_gpus().iter().map(|g| g.name).collect();
        let (last, rest) = names.split_last().unwrap_or((&"", &[]));
        PredictorError::Gavel {
            name: name.to_owned(),
            names: format!("{} and {last}", rest.join(", ")),
        }
    })
}

/// The model asked for over the profiles given (or shipped) for the GPU.
fn profile_predictor(spec: &PredictorSpec) -> Result<Built, PredictorError> {
    let gpu = hardware::any_gpu(&spec.gpu)?;
    let mut profiles = shipped::load(&spec.profiles)?;
    let mut carried_from = None;
    if profiles.get(gpu).is_err() && spec.model.is_kernel() && !spec.traces.is_empty() {
        // A GPU nothing was calibrated on (H100, V100...): the user's traces are carried to it,
        // and the calibrated GPU's sharing parameters with them, labelled transferred.
        if let Some((carried, path)) = profiles.carried_to(gpu) {
            let source = profiles
                .profiles()
                .find(|(_, p)| *p == path.as_path())
                .map_or_else(String::new, |(p, _)| p.gpu.clone());
            carried_from = Some(shipped::name(&spec.profiles, &path, &source));
            profiles.insert(carried, path);
        }
    }
    let profiles = Arc::new(profiles);
    let (_, path) = match profiles.get(gpu) {
        Ok(found) => found,
        // The library's hint says "pass --profile"; here --profile was passed, for other GPUs.
        Err(_) if !spec.profiles.is_empty() => {
            return Err(PredictorError::ProfileForOtherGpu {
                given: profiles.gpus().join(", "),
                gpu: gpu.name.to_owned(),
                first: profiles
                    .gpus()
                    .first()
                    .cloned()
                    .unwrap_or_else(|| "GPU".into()),
            });
        }
        Err(err) => return Err(err.into()),
    };
    let name = match carried_from {
        Some(source) => ProfileName::BuiltIn(format!(
            "{} carried to {} (no profile of its own)",
            source.as_str(),
            gpu.name
        )),
        None => shipped::name(&spec.profiles, path, gpu.name),
    };
    let mut notes = Vec::new();
    let mut kernel = None;
    let model: Arc<dyn PerfModel> = match spec.model {
        ModelChoice::Kernel | ModelChoice::KernelRaw => {
            let (k, kernel_notes) = kernel_with_traces(
                &profiles,
                &spec.profiles,
                &spec.traces,
                &spec.alone_rates,
                gpu,
                &spec.jobs,
                spec.cpu_factor,
            )?;
            notes.extend(kernel_notes);
            let k = Arc::new(if spec.model == ModelChoice::KernelRaw {
                k.uncapped()
            } else {
                k
            });
            kernel = Some(k.clone());
            k
        }
        _ if !spec.traces.is_empty() => return Err(PredictorError::TracesNeedKernel),
        ModelChoice::Parametric => Arc::new(Parametric::new(profiles.clone())),
        ModelChoice::Exclusive => Arc::new(Exclusive::new(profiles.clone())),
        ModelChoice::EqualShare => Arc::new(EqualShare::new(profiles.clone())),
        ModelChoice::FixedSlowdown => Arc::new(FixedSlowdown::new(
            profiles.clone(),
            FixedSlowdown::DEFAULT_PER_CORUNNER,
        )),
    };
    let predictor = Predictor::from_profiles(&profiles, gpu, model, kernel, name)?;
    Ok(Built { predictor, notes })
}

/// How far above its trace's kernel ceiling
/// ([`KernelModel::kernel_ceiling_samples_per_s`]) a measured alone speed may lie: the profiler
/// stretches kernels, so real runs beat the ceiling (the committed H200 traces' own unprofiled
/// speeds by up to 1.25 times: kernel scale 0.797 at the lowest over 86 traces), but twice it is
/// another point, or iterations or tokens given as samples.
pub const ANCHOR_CEILING_FACTOR: f64 = 2.0;

/// The kernel model over `profiles` (read from `profile_paths`, or the shipped tables), with
/// the user's trace folders added (only the files of `jobs` and the anchored points are read:
/// a folder may hold many traces) and `alone_rates` anchored; and the notes for the user (files
/// skipped, where each job of `jobs` was traced, anchors). `colo predict` and `colo pack`.
///
/// # Errors
/// A table or trace folder that cannot be read, or an alone rate for an untraced point.
pub fn kernel_with_traces(
    profiles: &Arc<ProfileSet>,
    profile_paths: &[PathBuf],
    traces: &[PathBuf],
    alone_rates: &[(ModelKey, f64)],
    gpu: &'static hardware::GpuSpec,
    jobs: &[ModelKey],
    cpu_factor: f64,
) -> Result<(KernelModel, Vec<String>), PredictorError> {
    let mut notes = Vec::new();
    let mut k = shipped::kernel_model(profiles.clone(), profile_paths)?;
    let wanted: Vec<String> = jobs
        .iter()
        .chain(alone_rates.iter().map(|(key, _)| key))
        .map(ToString::to_string)
        .collect();
    let (added, skipped) = add_user_traces(&mut k, traces, gpu, Some(&wanted), cpu_factor)?;
    for (path, why) in &skipped {
        notes.push(format!("warning: {}: skipped: {why}", path.display()));
    }
    for (point, note) in &added {
        if jobs.iter().any(|job| job.to_string() == *point) {
            notes.push(format!("trace of {point}: {note}"));
        }
    }
    for (key, rate) in alone_rates {
        if let Some(ceiling) = k.kernel_ceiling_samples_per_s(gpu, key)
            && *rate > ANCHOR_CEILING_FACTOR * ceiling
        {
            return Err(PredictorError::AloneRateTooFast {
                key: key.clone(),
                rate: *rate,
                ceiling,
                gpu: gpu.name.to_owned(),
            });
        }
        if !k.anchor(gpu, key, *rate) {
            return Err(PredictorError::NoTrace {
                key: key.clone(),
                rate: *rate,
                gpu: gpu.name.to_owned(),
            });
        }
        notes.push(format!(
            "{key}: alone speed anchored to {rate} samples/s (measured, --alone-rate)"
        ));
    }
    // A launch-bound job's speed alone, and so its share of a GPU, is its host's: the traced
    // host's unless the user says how fast it runs on theirs (calibrate/data/h100-ts-mixed).
    let mut hinted: Vec<&ModelKey> = Vec::new();
    for key in jobs {
        if hinted.contains(&key) || alone_rates.iter().any(|(anchored, _)| anchored == key) {
            continue;
        }
        if let Some(busy) = k
            .alone_busy_fraction(gpu, key)
            .filter(|&b| b < LAUNCH_BOUND_BELOW)
        {
            hinted.push(key);
            notes.push(format!(
                "{key}: launch-bound (GPU busy {:.0}% of its alone time where traced): its speed \
                 alone and its share depend on your host's CPU; measure it alone on your machine \
                 and pass --alone-rate {key}=SAMPLES_PER_S",
                100.0 * busy
            ));
        }
    }
    Ok((k, notes))
}

/// The model `colo pack` (and the Python face's `colo.pack`) scores packings with: the kernel
/// model with the user's traces (`kernel`), or the parametric model; and, for the kernel model,
/// how the report names it when some jobs have no trace (their GPU sets go to the parametric
/// fallback), with the notes for the user.
pub struct PackModel {
    /// The model.
    pub model: Box<dyn PerfModel>,
    /// The report's `perf_model` when it should say more than the model's name.
    pub described: Option<String>,
    /// Notes for the user, one line each (trace files skipped, where jobs were traced).
    pub notes: Vec<String>,
}

/// Builds the model `colo pack` scores with; `kernel` false is the parametric model, which
/// reads no traces.
///
/// # Errors
/// As [`kernel_with_traces`]; [`PredictorError::TracesNeedKernel`] for traces or alone rates
/// with the parametric model.
pub fn pack_model(
    profiles: &Arc<ProfileSet>,
    profile_paths: &[PathBuf],
    traces: &[PathBuf],
    alone_rates: &[(ModelKey, f64)],
    gpu: &'static hardware::GpuSpec,
    jobs: &[ModelKey],
    kernel: bool,
) -> Result<PackModel, PredictorError> {
    if !kernel {
        if !traces.is_empty() || !alone_rates.is_empty() {
            return Err(PredictorError::TracesNeedKernel);
        }
        return Ok(PackModel {
            model: Box::new(Parametric::new(profiles.clone())),
            described: None,
            notes: Vec::new(),
        });
    }
    let (k, notes) =
        kernel_with_traces(profiles, profile_paths, traces, alone_rates, gpu, jobs, 1.0)?;
    let mut untraced: Vec<String> = jobs
        .iter()
        .filter(|key| !k.is_traced(gpu, key))
        .map(ToString::to_string)
        .collect();
    untraced.dedup();
    let described = (!untraced.is_empty()).then(|| {
        format!(
            "kernel (parametric fallback for any GPU set holding {}: no kernel trace)",
            untraced.join(", ")
        )
    });
    Ok(PackModel {
        model: Box::new(k),
        described,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use colo_sim::perf::kernel::KernelTables;

    /// The kernel ceiling is the trace's samples over its kernels' summed time (worked out
    /// here from the table's own columns); the project's measured alone speeds lie within
    /// 1.25-1.26 times it (the profiler's stretch), so the check refuses none of them; and the
    /// check's edge is at twice the ceiling.
    #[test]
    fn alone_rates_beyond_twice_the_kernel_ceiling_are_refused_and_measured_ones_pass() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let tables = KernelTables::load(&root.join("profiles/h200-kernels.json.gz")).unwrap();
        let profiles = Arc::new(shipped::load(&[]).unwrap());
        let gpu = hardware::gpu("h200").unwrap();
        let model = shipped::kernel_model(profiles.clone(), &[]).unwrap();
        let mut worst: f64 = 0.0;
        for trace in &tables.traces {
            let key = trace.key().unwrap();
            let ceiling = model.kernel_ceiling_samples_per_s(gpu, &key).unwrap();
            let kernel_s: f64 = trace.dur_ns.iter().map(|&d| f64::from(d) * 1e-9).sum();
            let samples = f64::from(trace.iterations) * f64::from(trace.samples_per_iteration);
            let by_hand = samples / kernel_s;
            assert!(
                (ceiling / by_hand - 1.0).abs() < 0.01,
                "{key}: {ceiling} vs {by_hand}"
            );
            let measured = trace
                .anchor_samples_per_s
                .unwrap_or(0.0)
                .max(trace.unprofiled_samples_per_s);
            worst = worst.max(measured / ceiling);
        }
        assert!((1.25..1.26).contains(&worst), "{worst}");

        let key = tables.traces[0].key().unwrap();
        let ceiling = model.kernel_ceiling_samples_per_s(gpu, &key).unwrap();
        let with_rate = |rate: f64| {
            let rates = [(key.clone(), rate)];
            kernel_with_traces(
                &profiles,
                &[],
                &[],
                &rates,
                gpu,
                std::slice::from_ref(&key),
                1.0,
            )
        };
        assert!(with_rate(1.99 * ceiling).is_ok());
        let err = with_rate(2.01 * ceiling).unwrap_err();
        assert!(
            matches!(err, PredictorError::AloneRateTooFast { .. }),
            "{err}"
        );
        assert!(
            err.to_string().contains("samples/s (not iterations"),
            "{err}"
        );
    }
}
