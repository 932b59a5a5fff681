//! The collocation study reproduced: Robroek et al., "An Analysis of Collocation on GPUs for
//! Deep Learning Training" (EuroMLSys 2024) ran ResNet-26/50/152 alone and as 2, 3 and 7 copies
//! time-sliced, under MPS and in MIG slices on an A100-40GB. This module reads its experiment
//! matrix, predicts every set with a [`PerfModel`] on any GPU of the
//! catalog, and checks the study's stated conclusions against the predictions.
//!
//! A set whose models the profile lacks is reported as not covered, naming the model key to
//! calibrate; no number is guessed for it.
mod conclusions;
mod matrix;
mod predict;
mod spec;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use thiserror::Error;

pub use conclusions::{Conclusion, Status};
pub use matrix::{MatrixSet, Process, read_matrix};
pub use predict::{JobResult, Outcome, SetResult};
pub use spec::{Dataset, StudySpec};

use crate::hardware::{self, GpuSpec, HardwareError};
use crate::perf::{
    ClassLookup, KernelModel, Origin, Parametric, PerfModel, ProfileError, ProfileSet, ShareMode,
};
use crate::ronfile::RonFileError;
use crate::workload::ModelKey;

/// The study could not be reproduced. Fatal; each message names the file and what to fix.
#[derive(Debug, Error)]
pub enum StudyError {
    /// The spec file could not be read or parsed.
    #[error(transparent)]
    Spec(#[from] RonFileError),
    /// A spec field is wrong.
    #[error("{}: {field}: {message}", path.display())]
    Field {
        /// The spec file.
        path: PathBuf,
        /// The field, e.g. `datasets[1]`.
        field: String,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// A row of the matrix is wrong.
    #[error("{}:{line}: {field}: {message}", path.display())]
    Matrix {
        /// The matrix file.
        path: PathBuf,
        /// 1-based line (0: the file could not be opened).
        line: u64,
        /// The column or part at fault.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// The spec names a GPU the catalog lacks.
    #[error("{}: {source}", path.display())]
    Gpu {
        /// The spec file.
        path: PathBuf,
        /// The catalog's error (it lists the known GPUs).
        source: HardwareError,
    },
    /// The profile could not be loaded.
    #[error(transparent)]
    Profile(#[from] ProfileError),
    /// The kernel model asked for could not be built.
    #[error("{}: kernel model: {message}", path.display())]
    Model {
        /// The spec file.
        path: PathBuf,
        /// Why.
        message: String,
    },
}

/// How the study names a set's sharing mode (its tables and figures): `naive` for plain
/// time-sliced processes, `MPS`, `MIG`. The study's sets are time-sliced, MPS or MIG only.
pub fn study_label(mode: ShareMode) -> &'static str {
    match mode {
        ShareMode::Exclusive => "exclusive",
        ShareMode::Timeslice => "naive",
        ShareMode::Mps => "MPS",
        ShareMode::Mig => "MIG",
    }
}

/// One training process of a set, in the simulator's terms.
#[derive(Clone, Debug, PartialEq)]
pub struct StudyJob {
    /// Model key `MODEL:BATCH:IMAGE`.
    pub key: ModelKey,
    /// Dataset folder (`cifar10`).
    pub dataset: String,
    /// Samples per epoch of its dataset.
    pub samples_per_epoch: u64,
    /// Its MIG slice as the matrix names it (on the matrix's GPU), if any.
    pub matrix_slice: Option<String>,
}

/// One set of the matrix: the processes that ran together on one GPU.
#[derive(Clone, Debug, PartialEq)]
pub struct StudySet {
    /// `Experiment` column (33: batch 128, 34: batch 32, 35/36: other models, 37: mixed).
    pub experiment: u32,
    /// `Workload` column.
    pub workload: u32,
    /// How its processes shared the GPU.
    pub mode: ShareMode,
    /// Its processes.
    pub jobs: Vec<StudyJob>,
}

impl StudySet {
    /// `33/11`: experiment and workload, as the matrix numbers them.
    pub fn id(&self) -> String {
        format!("{}/{}", self.experiment, self.workload)
    }

    /// The key all jobs share, when the set is copies of one model.
    pub fn single_key(&self) -> Option<&ModelKey> {
        let first = &self.jobs.first()?.key;
        self.jobs.iter().all(|j| j.key == *first).then_some(first)
    }

    /// `3 x resnet50:128:64` or `2 x resnet26:128:32 + resnet50:128:64`.
    pub fn describe(&self) -> String {
        let mut parts: Vec<(usize, &ModelKey)> = Vec::new();
        for job in &self.jobs {
            match parts.iter_mut().find(|(_, k)| **k == job.key) {
                Some((n, _)) => *n += 1,
                None => parts.push((1, &job.key)),
            }
        }
        let text: Vec<String> = parts
            .iter()
            .map(|(n, k)| {
                if *n == 1 {
                    k.to_string()
                } else {
                    format!("{n} x {k}")
                }
            })
            .collect();
        text.join(" + ")
    }
}

/// One set and what the model says of it.
#[derive(Clone, Debug)]
pub struct SetReport {
    /// The set.
    pub set: StudySet,
    /// Prediction, or why there is none.
    pub outcome: Outcome,
}

/// The whole reproduction on one GPU.
#[derive(Clone, Debug)]
pub struct Reproduction {
    /// The spec it follows.
    pub spec: StudySpec,
    /// The GPU it ran on.
    pub gpu: &'static GpuSpec,
    /// The profile file used and its overall origin; `None` when no profile file exists.
    pub profile: Option<(PathBuf, Origin)>,
    /// Origin of the sharing parameters per mode (naive, MPS, MIG), when a profile is loaded.
    pub mode_origins: Vec<(ShareMode, Origin)>,
    /// Every set of the matrix, in matrix order.
    pub sets: Vec<SetReport>,
    /// The study's conclusions, checked.
    pub conclusions: Vec<Conclusion>,
    /// The model that predicted the sets, in words (`parametric`, or `kernel` with where its
    /// traces come from).
    pub model: String,
}

/// Builds the kernel model over the profiles a reproduction loaded and the profile file they
/// came from (the caller knows where the kernel tables are: shipped, beside the profile, or
/// transferred); `Err` says why not.
pub type KernelBuilder<'a> =
    dyn Fn(Arc<ProfileSet>, Option<&Path>) -> Result<KernelModel, String> + 'a;

impl Reproduction {
    /// Model keys the profile lacks, each with the number of sets that need it.
    pub fn missing_keys(&self) -> Vec<(ModelKey, usize)> {
        let mut missing: Vec<(ModelKey, usize)> = Vec::new();
        for report in &self.sets {
            let Outcome::NotCovered { missing: keys } = &report.outcome else {
                continue;
            };
            for key in keys {
                match missing.iter_mut().find(|(k, _)| k == key) {
                    Some((_, n)) => *n += 1,
                    None => missing.push((key.clone(), 1)),
                }
            }
        }
        missing
    }
}

/// Reproduces the study as `spec` says, with `profile` instead of the spec's list when given.
///
/// # Errors
/// A bad spec, matrix or profile file, or a GPU the catalog lacks. A model the profile lacks
/// is not an error: its sets come back as [`Outcome::NotCovered`].
pub fn reproduce(spec: &StudySpec, profile: Option<&Path>) -> Result<Reproduction, StudyError> {
    reproduce_with(spec, profile, None)
}

/// [`reproduce`], with the kernel model `kernel` builds (jobs without a trace on the GPU go to
/// its parametric fallback) instead of the parametric model.
pub fn reproduce_with(
    spec: &StudySpec,
    profile: Option<&Path>,
    kernel: Option<&KernelBuilder<'_>>,
) -> Result<Reproduction, StudyError> {
    let gpu_err = |source| StudyError::Gpu {
        path: spec.path.clone(),
        source,
    };
    let gpu = hardware::gpu(&spec.gpu).map_err(gpu_err)?;
    let matrix_gpu = hardware::gpu(&spec.matrix_gpu).map_err(gpu_err)?;
    let profile_path = profile.or_else(|| spec.existing_profile());
    let profiles = match profile_path {
        Some(path) => ProfileSet::load(&[path.to_owned()])?,
        None => ProfileSet::default(),
    };
    let loaded = profiles.get(gpu).is_ok();
    let profile = profile_path
        .filter(|_| loaded)
        .map(|path| (path.to_owned(), profiles.origin(gpu)));
    let profiles = Arc::new(profiles);
    let (model, model_words): (Box<dyn PerfModel>, String) = match kernel {
        Some(build) => {
            let km =
                build(profiles.clone(), profile_path).map_err(|message| StudyError::Model {
                    path: spec.path.clone(),
                    message,
                })?;
            let words = match km.source(gpu) {
                Some(source) => format!("kernel model (traces {source})"),
                None => format!(
                    "kernel model (no kernel trace of {}: every set falls back to parametric)",
                    gpu.name
                ),
            };
            (Box::new(km), words)
        }
        None => (
            Box::new(Parametric::new(profiles.clone())),
            "parametric model".to_owned(),
        ),
    };
    let mode_origins = if loaded {
        [ShareMode::Timeslice, ShareMode::Mps, ShareMode::Mig]
            .map(|m| (m, model.mode_origin(gpu, m)))
            .to_vec()
    } else {
        Vec::new()
    };
    let study_sets = study_sets(spec, &read_matrix(&spec.matrix)?)?;
    let ctx = predict::Context {
        model: model.as_ref(),
        gpu,
        matrix_gpu,
        epochs: spec.epochs,
    };
    let sets: Vec<SetReport> = study_sets
        .into_iter()
        .map(|set| SetReport {
            outcome: predict::predict(&ctx, &set),
            set,
        })
        .collect();
    let conclusions = conclusions::check(&sets, &mode_origins);
    Ok(Reproduction {
        spec: spec.clone(),
        gpu,
        profile,
        mode_origins,
        sets,
        conclusions,
        model: model_words,
    })
}

/// The matrix's sets in the simulator's terms: model keys from the datasets' image sides.
fn study_sets(spec: &StudySpec, matrix: &[MatrixSet]) -> Result<Vec<StudySet>, StudyError> {
    matrix.iter().map(|set| study_set(spec, set)).collect()
}

fn study_set(spec: &StudySpec, set: &MatrixSet) -> Result<StudySet, StudyError> {
    let bad = |line: u64, field: &str, message: String| StudyError::Matrix {
        path: spec.matrix.clone(),
        line,
        field: field.to_owned(),
        message,
    };
    let mut jobs = Vec::with_capacity(set.processes.len());
    let mut modes = Vec::new();
    for p in &set.processes {
        let Some(dataset) = spec.dataset(&p.dataset) else {
            let known: Vec<&str> = spec.datasets.iter().map(|d| d.dir.as_str()).collect();
            let message = format!(
                "dataset `{}` is not in {}'s datasets ({}); add it there",
                p.dataset,
                spec.path.display(),
                known.join(", ")
            );
            return Err(bad(p.line, "Params --data-dir", message));
        };
        let (mode, slice) = (p.mode, p.slice.clone());
        if modes.last().is_some_and(|m| *m != mode) {
            let message = format!(
                "mixes {} and {} in one set",
                study_label(modes[0]),
                study_label(mode)
            );
            return Err(bad(p.line, "Collocation", message));
        }
        modes.push(mode);
        jobs.push(StudyJob {
            key: ModelKey::new(&p.model, p.batch, dataset.image),
            dataset: p.dataset.clone(),
            samples_per_epoch: dataset.samples_per_epoch,
            matrix_slice: slice,
        });
    }
    Ok(StudySet {
        experiment: set.experiment,
        workload: set.workload,
        mode: modes.first().copied().unwrap_or(ShareMode::Timeslice),
        jobs,
    })
}
