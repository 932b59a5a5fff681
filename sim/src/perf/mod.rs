//! Performance models: how fast each job of a co-located set runs, and whether the set fits in
//! memory.
//!
//! [`PerfModel`] is the only seam between measurement and simulation. Its implementations read
//! a [`ProfileSet`] (one [`Profile`] per GPU type); the fitted parameters change, the trait does
//! not.
#![doc = include_str!("README.md")]
pub mod answer;
mod baselines;
pub mod kernel;
mod parametric;
pub mod profile;
pub mod query;

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::hardware::{GpuSpec, MigProfile};
use crate::workload::ModelKey;
pub use baselines::{
    AsIfAlone, Baseline, Divisor, EqualShare, Exclusive, FixedSlowdown, OneNth, PerCorunner,
};
pub use kernel::KernelModel;
pub use parametric::Parametric;
pub use profile::{Origin, Profile, ProfileError};

/// How jobs share a GPU: the one vocabulary of the engine, the scenario file (`mode: Mps`,
/// read as the variant's name), the result rows (`mps`, written snake_case) and, with the
/// `clap` feature, `colo predict --mode` (the `value(help)` lines are its help).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all(serialize = "snake_case", deserialize = "PascalCase"))]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum ShareMode {
    /// One job per GPU.
    #[cfg_attr(feature = "clap", value(help = "One job alone"))]
    #[serde(alias = "exclusive")]
    Exclusive,
    /// Plain processes; the GPU runs one context at a time.
    #[cfg_attr(feature = "clap", value(help = "Plain processes, time-sliced"))]
    #[serde(alias = "timeslice", alias = "time_slice", alias = "naive")]
    Timeslice,
    /// One MPS server; kernels of several processes run side by side.
    #[cfg_attr(feature = "clap", value(help = "MPS (with optional SM budgets)"))]
    #[serde(alias = "mps")]
    Mps,
    /// MIG slices; jobs inside one slice share it under MPS.
    #[cfg_attr(feature = "clap", value(help = "MIG slices (needs --layout)"))]
    #[serde(alias = "mig")]
    Mig,
}

impl ShareMode {
    /// All modes, in the order tables list them.
    pub const ALL: [ShareMode; 4] = [
        ShareMode::Exclusive,
        ShareMode::Timeslice,
        ShareMode::Mps,
        ShareMode::Mig,
    ];

    /// Whether processes run as MPS clients (smaller context, SM budgets apply).
    pub fn is_mps_client(self) -> bool {
        matches!(self, ShareMode::Mps | ShareMode::Mig)
    }
}

impl ShareMode {
    /// The mode's name as the result rows write it (`exclusive`, `timeslice`, `mps`, `mig`).
    pub fn label(self) -> &'static str {
        match self {
            ShareMode::Exclusive => "exclusive",
            ShareMode::Timeslice => "timeslice",
            ShareMode::Mps => "mps",
            ShareMode::Mig => "mig",
        }
    }
}

impl fmt::Display for ShareMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

impl ShareMode {
    /// The measured mode whose records and fitted numbers stand for this one: itself, except
    /// [`ShareMode::Mig`], which profiles know from emulated slices
    /// ([`MeasuredMode::MigEmulated`]).
    pub fn measured_as(self) -> MeasuredMode {
        match self {
            ShareMode::Exclusive => MeasuredMode::Exclusive,
            ShareMode::Timeslice => MeasuredMode::Timeslice,
            ShareMode::Mps => MeasuredMode::Mps,
            ShareMode::Mig => MeasuredMode::MigEmulated,
        }
    }
}

/// How processes shared a GPU when they were measured: the [`ShareMode`]s plus MIG emulated
/// under MPS. Calibration plans name a variant (`mode: MigEmulated`); records, profiles and
/// tables write its label (`mig-emulated`, [`MeasuredMode::label`], through [`mode_label`]);
/// with the `clap` feature it is `colo calibrate profile --mode` (the `value(help)` lines).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum MeasuredMode {
    /// One process alone on the GPU.
    #[cfg_attr(feature = "clap", value(help = "One command alone"))]
    Exclusive,
    /// Plain processes sharing the GPU by the driver's time-slicing.
    #[cfg_attr(
        feature = "clap",
        value(help = "Plain processes, time-sliced by the driver")
    )]
    Timeslice,
    /// Processes under the calibrator's own MPS daemon.
    #[cfg_attr(
        feature = "clap",
        value(help = "Under the calibrator's own MPS daemon")
    )]
    Mps,
    /// Each process on its own real MIG instance: an existing one by UUID (`mig_uuids`), or
    /// one the runner creates from a profile (`mig_profiles`, only with
    /// `--allow-mig-reconfigure`) and destroys afterwards.
    #[cfg_attr(
        feature = "clap",
        value(help = "On existing MIG instances (--mig-uuid)")
    )]
    Mig,
    /// MPS with each process's SM budget and memory limit set from a MIG profile.
    #[cfg_attr(
        feature = "clap",
        value(help = "MPS with budgets and memory limits of MIG profiles (--mig-profile)")
    )]
    MigEmulated,
}

impl MeasuredMode {
    /// Every mode, in the order tables list them.
    pub const ALL: [MeasuredMode; 5] = [
        MeasuredMode::Exclusive,
        MeasuredMode::Timeslice,
        MeasuredMode::Mps,
        MeasuredMode::Mig,
        MeasuredMode::MigEmulated,
    ];

    /// The mode of a label ([`MeasuredMode::label`]), if it names one.
    pub fn from_label(label: &str) -> Option<MeasuredMode> {
        MeasuredMode::ALL.into_iter().find(|m| m.label() == label)
    }

    /// Name used in records, profiles and tables.
    pub fn label(self) -> &'static str {
        match self {
            MeasuredMode::Exclusive => "exclusive",
            MeasuredMode::Timeslice => "timeslice",
            MeasuredMode::Mps => "mps",
            MeasuredMode::Mig => "mig",
            MeasuredMode::MigEmulated => "mig-emulated",
        }
    }

    /// Whether the mode runs under the calibrator's MPS daemon.
    pub fn uses_mps(self) -> bool {
        matches!(self, MeasuredMode::Mps | MeasuredMode::MigEmulated)
    }
}

impl fmt::Display for MeasuredMode {
    // `pad`, so that a table's `{:<13}` aligns a mode as it aligns its label.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.label())
    }
}

/// Serde for a [`MeasuredMode`] written as its label (`mig-emulated`), the form of
/// calibration records and profiles (`#[serde(with = "mode_label")]`), where plans name the
/// variant (`MigEmulated`).
pub mod mode_label {
    use serde::de::Error as _;
    use serde::{Deserialize, Deserializer, Serializer};

    use super::MeasuredMode;

    /// Writes the mode's label.
    pub fn serialize<S: Serializer>(mode: &MeasuredMode, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(mode.label())
    }

    /// Reads a label; any other text is an error that lists the labels.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<MeasuredMode, D::Error> {
        let text = String::deserialize(d)?;
        MeasuredMode::from_label(&text).ok_or_else(|| {
            let known: Vec<&str> = MeasuredMode::ALL.iter().map(|m| m.label()).collect();
            D::Error::custom(format!(
                "unknown mode `{text}`; expected one of {}",
                known.join(", ")
            ))
        })
    }
}

/// The part of a GPU a set of jobs shares: the whole GPU or one MIG slice.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Partition {
    /// Fraction of the GPU's SMs (1 for the whole GPU).
    pub sm_fraction: f64,
    /// Memory of the partition, GiB.
    pub memory_gib: f64,
    /// Whether it is a MIG slice (isolated memory bandwidth and L2).
    pub is_mig_slice: bool,
}

impl Partition {
    /// The whole of `gpu`.
    pub fn whole(gpu: &GpuSpec) -> Self {
        Self {
            sm_fraction: 1.0,
            memory_gib: gpu.memory_gib,
            is_mig_slice: false,
        }
    }

    /// A MIG slice of `profile` on `gpu`: its SMs and memory.
    pub fn slice(gpu: &GpuSpec, profile: &MigProfile) -> Self {
        Self {
            sm_fraction: gpu.sm_fraction(profile),
            memory_gib: profile.memory_gib,
            is_mig_slice: true,
        }
    }
}

/// How one model at one size runs alone on one GPU type, as a profile says.
#[derive(Clone, Debug, PartialEq)]
pub struct JobClass {
    /// What the job trains.
    pub key: ModelKey,
    /// Samples per second alone on one whole GPU.
    pub solo_rate: f64,
    /// Fraction of wall time the GPU runs its kernels when alone.
    pub time_demand: f64,
    /// Fraction of SMs its kernels fill (budget and MIG slowdown).
    pub space_demand: f64,
    /// Fraction of SMs it contends for under MPS.
    pub contention_demand: f64,
    /// Peak GPU memory of its process, context excluded, GiB.
    pub memory_gib: f64,
    /// Relative spread of repeated measurements, when known.
    pub spread: Option<f64>,
    /// Where these numbers came from.
    pub origin: Origin,
}

/// One job in a co-located set.
#[derive(Clone, Copy, Debug)]
pub struct Tenant<'a> {
    /// Its class on this GPU type.
    pub class: &'a JobClass,
    /// MPS SM budget (CUDA_MPS_ACTIVE_THREAD_PERCENTAGE / 100), if set.
    pub sm_budget: Option<f64>,
    /// Whole GPUs the job spans (more than one only when alone on each).
    pub gpus: u32,
}

impl<'a> Tenant<'a> {
    /// A job of `class` on one GPU (or a slice of it), under `sm_budget` if set.
    pub fn on_one_gpu(class: &'a JobClass, sm_budget: Option<f64>) -> Self {
        Self {
            class,
            sm_budget,
            gpus: 1,
        }
    }
}

/// What a model predicts for one co-located set.
#[derive(Clone, Debug, PartialEq)]
pub struct Prediction {
    /// Samples per second of each job, in the order given.
    pub rates: Vec<f64>,
    /// Memory the set needs, contexts included, GiB.
    pub memory_gib: f64,
    /// Memory of the partition, GiB.
    pub capacity_gib: f64,
}

impl Prediction {
    /// Whether the set fits in the partition's memory.
    pub fn fits_memory(&self) -> bool {
        self.memory_gib <= self.capacity_gib
    }
}

/// A GPU type or model the profiles do not cover. Fatal for the job or query that asked.
#[derive(Clone, Debug, Error, PartialEq)]
pub enum PerfError {
    /// No profile describes this GPU type.
    #[error(
        "no profile for GPU `{gpu}` ({}); add one to the scenario's `profiles` or pass --profile",
        loaded_for(known)
    )]
    NoProfile {
        /// GPU catalog name.
        gpu: String,
        /// GPUs that have a profile.
        known: String,
    },
    /// The profile for this GPU does not know the model at this size.
    #[error("{}: no entry for {key} on {gpu}; {hint}", path.display())]
    UnknownModel {
        /// The profile file.
        path: PathBuf,
        /// GPU catalog name.
        gpu: String,
        /// What was asked for.
        key: ModelKey,
        /// What the profile does have.
        hint: String,
    },
}

/// The GPUs that have a profile, as [`PerfError::NoProfile`] says it: `profiles loaded for:
/// a100-40gb`, or `no profile is loaded` (it said "profiles loaded for: " with nothing after).
fn loaded_for(known: &str) -> String {
    if known.is_empty() {
        "no profile is loaded".to_owned()
    } else {
        format!("profiles loaded for: {known}")
    }
}

/// One co-located set as a model sees it: jobs sharing one partition of one GPU type in one
/// mode.
#[derive(Clone, Copy, Debug)]
pub struct CoRun<'a> {
    /// The GPU type.
    pub gpu: &'a GpuSpec,
    /// How the jobs share it.
    pub mode: ShareMode,
    /// The whole GPU or the MIG slice they share.
    pub partition: &'a Partition,
    /// The jobs.
    pub tenants: &'a [Tenant<'a>],
}

/// The lookup half of a [`PerfModel`]: how each job runs alone, what memory it takes and where
/// those numbers came from. [`ProfileSet`] is the usual one; models differ in how they share.
pub trait ClassLookup: Send + Sync {
    /// How `key` runs alone on `gpu`. Called once per job and GPU type, never in the hot loop.
    fn class(&self, gpu: &GpuSpec, key: &ModelKey) -> Result<JobClass, PerfError>;

    /// Where the numbers used on `gpu` came from, overall.
    fn origin(&self, gpu: &GpuSpec) -> Origin;

    /// Where the sharing parameters of `mode` on `gpu` came from.
    fn mode_origin(&self, gpu: &GpuSpec, mode: ShareMode) -> Origin {
        let _ = mode;
        self.origin(gpu)
    }

    /// GPU memory one process of `class` takes in `mode`, context included, GiB.
    fn footprint_gib(&self, gpu: &GpuSpec, mode: ShareMode, class: &JobClass) -> f64;
}

/// Predicts per-job rates of a co-located set. Implementations must be deterministic: the
/// same inputs give the same bits. Classes, origins and footprints come from [`PerfModel::lookup`];
/// an implementation says only how jobs share (and overrides a lookup where it knows more).
pub trait PerfModel: Send + Sync {
    /// Short name for reports (`parametric`, `equal-share`, ...).
    fn name(&self) -> &'static str;

    /// Where this model looks classes, origins and footprints up.
    fn lookup(&self) -> &dyn ClassLookup;

    /// How `key` runs alone on `gpu` ([`ClassLookup::class`]).
    fn class(&self, gpu: &GpuSpec, key: &ModelKey) -> Result<JobClass, PerfError> {
        self.lookup().class(gpu, key)
    }

    /// Where the numbers used on `gpu` came from ([`ClassLookup::origin`]).
    fn origin(&self, gpu: &GpuSpec) -> Origin {
        self.lookup().origin(gpu)
    }

    /// Where the sharing parameters of `mode` came from ([`ClassLookup::mode_origin`]).
    fn mode_origin(&self, gpu: &GpuSpec, mode: ShareMode) -> Origin {
        self.lookup().mode_origin(gpu, mode)
    }

    /// Whether sets are predicted from parameters of the profile (fitted, measured or
    /// transferred); a baseline's fixed rule (equal share, fixed slowdown) reads none.
    fn reads_sharing_parameters(&self) -> bool {
        true
    }

    /// Memory of one process ([`ClassLookup::footprint_gib`]).
    fn footprint_gib(&self, gpu: &GpuSpec, mode: ShareMode, class: &JobClass) -> f64 {
        self.lookup().footprint_gib(gpu, mode, class)
    }

    /// Writes the samples/s of each tenant of `set` into `out` (same length).
    fn rates(&self, set: &CoRun<'_>, out: &mut [f64]);

    /// For a model that memoizes set rates (the kernel model): its memo lookups so far as
    /// (hits, misses). `None` for models that compute every set afresh.
    fn memo_lookups(&self) -> Option<(u64, u64)> {
        None
    }

    /// Rates and memory verdict for one set; allocates, so meant for queries, not the engine.
    fn predict(&self, set: &CoRun<'_>) -> Prediction {
        let mut rates = vec![0.0; set.tenants.len()];
        self.rates(set, &mut rates);
        let memory_gib = set
            .tenants
            .iter()
            .map(|t| self.footprint_gib(set.gpu, set.mode, t.class))
            .sum();
        Prediction {
            rates,
            memory_gib,
            capacity_gib: set.partition.memory_gib,
        }
    }
}

/// The profiles a model reads, one per GPU type, with the files they came from.
#[derive(Clone, Debug, Default)]
pub struct ProfileSet {
    profiles: Vec<(Profile, PathBuf)>,
}

impl ProfileSet {
    /// Loads each file; two files for the same GPU are an error naming both (the one to use
    /// would be a guess).
    pub fn load(paths: &[PathBuf]) -> Result<Self, ProfileError> {
        let mut set = Self::default();
        for path in paths {
            let profile = Profile::load(path)?;
            if let Some((_, first)) = set
                .profiles
                .iter()
                .find(|(p, _)| p.gpu.eq_ignore_ascii_case(&profile.gpu))
            {
                return Err(ProfileError::SameGpu {
                    gpu: profile.gpu,
                    first: first.clone(),
                    second: path.clone(),
                });
            }
            set.insert(profile, path.clone());
        }
        Ok(set)
    }

    /// Adds `profile` (read from `path`), replacing any for the same GPU.
    pub fn insert(&mut self, profile: Profile, path: PathBuf) {
        self.profiles.retain(|(p, _)| p.gpu != profile.gpu);
        self.profiles.push((profile, path));
    }

    /// The profile for `gpu` and its file.
    pub fn get(&self, gpu: &GpuSpec) -> Result<(&Profile, &Path), PerfError> {
        self.profiles
            .iter()
            .find(|(p, _)| p.gpu.eq_ignore_ascii_case(gpu.name))
            .map(|(p, path)| (p, path.as_path()))
            .ok_or_else(|| PerfError::NoProfile {
                gpu: gpu.name.to_owned(),
                known: self.gpus().join(", "),
            })
    }

    /// Every profile with the file it came from.
    pub fn profiles(&self) -> impl Iterator<Item = (&Profile, &Path)> {
        self.profiles.iter().map(|(p, path)| (p, path.as_path()))
    }

    /// GPU names that have a profile.
    pub fn gpus(&self) -> Vec<String> {
        self.profiles.iter().map(|(p, _)| p.gpu.clone()).collect()
    }

    /// For `gpu`, which has no profile: the profile of the GPU whose kernel-model globals were
    /// fitted on co-runs (the calibrated one), carried to `gpu` so that traces transferred there
    /// can be predicted. It keeps the sharing, memory-overhead and kernel globals (all labelled
    /// transferred: fitted there, not here) and drops what belongs to the other GPU only: its
    /// model entries (a job must come with a trace), kernel tables, held-out errors and power
    /// model. `None` if no profile has fitted kernel globals.
    pub fn carried_to(&self, gpu: &GpuSpec) -> Option<(Profile, PathBuf)> {
        let (source, path) = self.calibrated()?;
        let mut carried = source.clone();
        carried.gpu = gpu.name.to_owned();
        carried.origin = Origin::Transferred;
        carried.provenance.source = format!(
            "{}'s profile ({}) carried to {}, which has none: its sharing, memory-overhead and kernel-model parameters, no model entries, kernel tables or power model",
            source.gpu,
            path.display(),
            gpu.name
        );
        carried.models.clear();
        carried.held_out_error.clear();
        carried.power = None;
        if let Some(kernel) = carried.kernel.as_mut() {
            kernel.tables.clear();
            kernel.traced.clear();
            kernel.held_out_error.clear();
            kernel.origin = Origin::Transferred;
        }
        Some((carried, path.to_owned()))
    }

    /// The profile whose kernel-model globals were fitted (or measured) on co-runs: the GPU colo
    /// was calibrated on, whose sharing other GPUs borrow.
    pub fn calibrated(&self) -> Option<(&Profile, &Path)> {
        self.profiles().find(|(p, _)| {
            p.kernel
                .as_ref()
                .is_some_and(|k| matches!(k.origin, Origin::Fitted | Origin::Measured))
        })
    }
}

/// Classes, footprints and origins straight from the profiles.
impl ClassLookup for ProfileSet {
    /// The job class of `key` on `gpu`, straight from the profile.
    fn class(&self, gpu: &GpuSpec, key: &ModelKey) -> Result<JobClass, PerfError> {
        let (profile, path) = self.get(gpu)?;
        let Some(entry) = profile.entry(key) else {
            return Err(unknown_model(profile, path, key));
        };
        Ok(entry.class(profile.origin))
    }

    /// Memory of one process of `class` in `mode`, from the profile's context overheads.
    fn footprint_gib(&self, gpu: &GpuSpec, mode: ShareMode, class: &JobClass) -> f64 {
        let context = match self.get(gpu) {
            Ok((p, _)) if mode.is_mps_client() => p.memory.mps_context_gib,
            Ok((p, _)) => p.memory.context_gib,
            Err(_) => 0.0,
        };
        class.memory_gib + context
    }

    /// The profile's overall origin for `gpu` (provisional when none is loaded).
    fn origin(&self, gpu: &GpuSpec) -> Origin {
        self.get(gpu).map_or(Origin::Provisional, |(p, _)| p.origin)
    }

    /// Origin of the sharing parameters `mode` uses on `gpu` (they may be transferred from
    /// another GPU while the per-model numbers are measured).
    fn mode_origin(&self, gpu: &GpuSpec, mode: ShareMode) -> Origin {
        let Ok((p, _)) = self.get(gpu) else {
            return Origin::Provisional;
        };
        let section = match mode {
            ShareMode::Exclusive => None,
            ShareMode::Timeslice => p.timeslice.origin,
            ShareMode::Mps => p.mps.origin,
            ShareMode::Mig => p.mig.origin,
        };
        section.unwrap_or(p.origin)
    }
}

fn unknown_model(profile: &Profile, path: &Path, key: &ModelKey) -> PerfError {
    let sizes = profile.known_sizes(&key.model);
    let how_to_trace = format!(
        "to predict your own job, trace it once on a GPU: `colo calibrate trace --cmd \"python \
         train.py ...\" --name {} --out DIR` (or `colo calibrate trace {key} --out DIR` for a \
         zoo model), then pass --traces DIR (scenarios: `traces: [\"DIR\"]`); no refit needed",
        key.model
    );
    let hint = if sizes.is_empty() {
        format!(
            "known models: {}; {how_to_trace}",
            profile.model_names().join(", ")
        )
    } else {
        format!(
            "it has {} at: {}; {how_to_trace}",
            key.model,
            sizes.join(", ")
        )
    };
    PerfError::UnknownModel {
        path: path.to_owned(),
        gpu: profile.gpu.clone(),
        key: key.clone(),
        hint,
    }
}

/// The rate of a job alone at SM fraction `sm` relative to its rate on the whole GPU:
/// `1 / ((1 - u) + u * max(1, s / sm))` (DESIGN.md's first model).
pub fn alone_fraction(class: &JobClass, sm: f64) -> f64 {
    let u = class.time_demand;
    1.0 / ((1.0 - u) + u * (class.space_demand / sm).max(1.0))
}

#[cfg(test)]
mod tests;
