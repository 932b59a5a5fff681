//! Profile files: per-GPU model throughput, demand and memory, plus the global sharing
//! parameters of each mode. Written by `colo calibrate fit` (or by hand, labelled provisional);
//! read by every [`PerfModel`](super::PerfModel).
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::{JobClass, MeasuredMode, mode_label};
use crate::ronfile::{RonFileError, read_ron};
use crate::workload::ModelKey;

/// The profile format this build reads and writes.
pub const PROFILE_VERSION: u32 = 1;

/// Where a number came from. Every figure colo prints carries one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// Written by hand from a few observations, to be replaced by a fit.
    Provisional,
    /// Measured on the GPU named by the profile.
    Measured,
    /// Fitted by least squares to measurements.
    Fitted,
    /// Measured under MPS SM budgets standing in for MIG slices.
    Emulated,
    /// Carried over from another GPU's fit.
    Transferred,
    /// A starting value that no data constrained (the fit saw no run that depends on it).
    Default,
    /// From the fake runner (`--fake-gpu`): invented numbers for tests, not measurements.
    Fake,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Origin::Provisional => "provisional",
            Origin::Measured => "measured",
            Origin::Fitted => "fitted",
            Origin::Emulated => "emulated",
            Origin::Transferred => "transferred",
            Origin::Default => "default",
            Origin::Fake => "fake",
        })
    }
}

/// Which data and method a profile rests on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Provenance {
    /// How the numbers were obtained, in a sentence.
    pub source: String,
    /// Data files behind the fit (empty for a provisional profile).
    #[serde(default)]
    pub data: Vec<String>,
    /// When the profile was written (ISO date).
    pub created: String,
    /// GPU driver of the measurements, when known.
    #[serde(default)]
    pub driver: Option<String>,
}

/// Per-process GPU memory that is not the model's own.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemoryParams {
    /// CUDA context of a plain process (exclusive, time-sliced), GiB.
    pub context_gib: f64,
    /// CUDA context of an MPS client (MPS, MIG), GiB.
    pub mps_context_gib: f64,
}

/// Time-slicing: the GPU runs one context at a time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimeSliceParams {
    /// Fraction of GPU time lost per extra busy context (context switches).
    pub switch_overhead: f64,
    /// Where this parameter came from, when not the profile's own origin (e.g. transferred).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<Origin>,
}

/// MPS: kernels of several processes share the SMs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MpsParams {
    /// Stretch of a job's GPU time per unit of its co-runners' SM occupancy (caches, bandwidth).
    pub interference: f64,
    /// Stretch of a job's host (launch) time per unit of its co-runners' SM occupancy: its
    /// small kernels queue behind their large ones, so launch-bound jobs suffer most. 0 when
    /// absent (profiles fitted before it existed).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub queueing: f64,
    /// Where this parameter came from, when not the profile's own origin (e.g. transferred).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<Origin>,
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

/// MIG: hardware slices with their own SMs, memory and bandwidth.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MigParams {
    /// Rate in a slice relative to the job alone at the same SM budget under MPS.
    pub efficiency: f64,
    /// Where this parameter came from, when not the profile's own origin (e.g. transferred).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<Origin>,
}

/// One model at one batch and image size on this GPU, alone.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelEntry {
    /// Model name.
    pub model: String,
    /// Batch size.
    pub batch: u32,
    /// Image side or sequence length.
    pub image: u32,
    /// Training samples per second alone on the whole GPU.
    pub samples_per_s: f64,
    /// Fraction of wall time the GPU is busy with its kernels when alone (0..=1).
    pub time_demand: f64,
    /// Fraction of the SMs its kernels can fill (0..=1): sets its speed under an SM budget or in
    /// a MIG slice.
    pub space_demand: f64,
    /// Fraction of the SMs it contends for when sharing under MPS (0..=1); `space_demand` when
    /// absent. Kept apart because a job can slow down at a small SM budget yet leave room for a
    /// co-runner's kernels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contention_demand: Option<f64>,
    /// Peak GPU memory of the process, context excluded, GiB.
    pub memory_gib: f64,
    /// Relative spread of repeated measurements (e.g. 0.05), when measured.
    #[serde(default)]
    pub spread: Option<f64>,
    /// Where this entry's numbers came from; the profile's origin when absent.
    #[serde(default)]
    pub origin: Option<Origin>,
}

/// A profile file: how jobs run on one GPU type.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// Format version ([`PROFILE_VERSION`]).
    pub version: u32,
    /// GPU catalog name, e.g. `h200`.
    pub gpu: String,
    /// Where the profile's numbers came from, overall.
    pub origin: Origin,
    /// Data and method behind it.
    pub provenance: Provenance,
    /// Per-process memory overheads.
    pub memory: MemoryParams,
    /// Time-slicing parameters.
    pub timeslice: TimeSliceParams,
    /// MPS parameters.
    pub mps: MpsParams,
    /// MIG parameters.
    pub mig: MigParams,
    /// The models it knows.
    pub models: Vec<ModelEntry>,
    /// The kernel model's tables and global parameters; absent in profiles without traces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<KernelParams>,
    /// The parametric model's held-out error per mode and job class (`calibrate fit`, from
    /// `calibrate validate`'s held-out tests); empty where no validation ran.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub held_out_error: Vec<HeldOutError>,
    /// The GPU's board power as a function of the set it runs; absent in profiles fitted
    /// before it existed (then no power is predicted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power: Option<PowerParams>,
}

impl Profile {
    /// The parametric model's held-out error for `mode` and job class, if the profile carries
    /// one.
    pub fn held_out(&self, mode: MeasuredMode, launch_bound: bool) -> Option<&HeldOutError> {
        find_held_out(&self.held_out_error, mode, launch_bound)
    }
}

/// The entry of `errors` for `mode` and job class.
pub fn find_held_out(
    errors: &[HeldOutError],
    mode: MeasuredMode,
    launch_bound: bool,
) -> Option<&HeldOutError> {
    errors
        .iter()
        .find(|e| e.mode == mode && e.launch_bound == launch_bound)
}

/// How a set's GPU power grows with what it runs (see [`PowerParams`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PowerForm {
    /// `P = idle + slope * sum_j util_j * f_j`: each job's alone GPU-busy fraction (NVML
    /// utilisation) times its fraction of alone speed.
    Util,
    /// `P = idle + slope * sum_j (alone_j - idle) * f_j`: each job's alone power above idle,
    /// scaled by its fraction of alone speed.
    Alone,
    /// [`PowerForm::Alone`]'s activity `x` saturating at `max_w`:
    /// `P = idle + (max - idle) * (1 - exp(-slope * x / (max - idle)))`.
    AloneSaturating,
}

impl fmt::Display for PowerForm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PowerForm::Util => "util",
            PowerForm::Alone => "alone",
            PowerForm::AloneSaturating => "alone-saturating",
        })
    }
}

/// One job of a set as the power model sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PowerMember {
    /// Board power with the job alone on the whole GPU, W (measured).
    pub alone_w: f64,
    /// Fraction of time the GPU was busy with the job alone (NVML utilisation / 100).
    pub util: f64,
    /// The job's speed in the set as a fraction of its speed alone.
    pub fraction: f64,
}

impl PowerForm {
    /// The form's power of `members`, W, with coefficients `idle_w`, `slope` and `max_w`
    /// (read by [`PowerForm::AloneSaturating`] only): [`PowerForm::of_activity`] of the sum of
    /// the members' [`PowerForm::activity`].
    pub fn power(self, idle_w: f64, slope: f64, max_w: f64, members: &[PowerMember]) -> f64 {
        let x: f64 = members.iter().map(|m| self.activity(idle_w, m)).sum();
        self.of_activity(idle_w, slope, max_w, x)
    }

    /// One member's activity term: `util * fraction` ([`PowerForm::Util`]) or
    /// `(alone_w - idle_w) * fraction` (the alone forms).
    pub fn activity(self, idle_w: f64, member: &PowerMember) -> f64 {
        match self {
            PowerForm::Util => member.util * member.fraction,
            PowerForm::Alone | PowerForm::AloneSaturating => {
                (member.alone_w - idle_w) * member.fraction
            }
        }
    }

    /// The power, W, of a set whose members' activity terms sum to `x`.
    pub fn of_activity(self, idle_w: f64, slope: f64, max_w: f64, x: f64) -> f64 {
        if self != PowerForm::AloneSaturating || !max_w.is_finite() {
            idle_w + slope * x
        } else {
            let head = (max_w - idle_w).max(1e-9);
            idle_w + head * (1.0 - (-slope * x / head).exp())
        }
    }
}

/// The fitted power coefficients of one sharing mode.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PowerMode {
    /// `timeslice`, `mps` or `mig-emulated` (written as the calibration store's labels).
    #[serde(with = "mode_label")]
    pub mode: MeasuredMode,
    /// Board power with nothing running (the fit's intercept), W.
    pub idle_w: f64,
    /// Watts per unit of activity (see [`PowerForm`]).
    pub slope: f64,
    /// Saturation power, W ([`PowerForm::AloneSaturating`]; else unused).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_w: Option<f64>,
    /// Measured sets the fit saw.
    pub sets: usize,
    /// Mean absolute percentage error of the set's power on sets held out one at a time.
    pub held_out_mape_pct: f64,
}

/// One model point's board power alone on the whole GPU (measured: median of its alone runs).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AlonePower {
    /// The point, `MODEL:BATCH:IMAGE`.
    pub point: String,
    /// Board power, W.
    pub power_w: f64,
    /// NVML utilisation alone, as a fraction.
    pub util: f64,
}

/// The board-power model of this GPU: one form, coefficients per sharing mode, and each model's
/// measured power alone.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PowerParams {
    /// The form kept (least held-out error over the modes).
    pub form: PowerForm,
    /// Where the coefficients came from (`fitted`).
    pub origin: Origin,
    /// Coefficients per mode.
    pub modes: Vec<PowerMode>,
    /// Measured power alone per point.
    pub alone: Vec<AlonePower>,
}

impl PowerParams {
    /// The point's measured power alone.
    pub fn alone(&self, key: &ModelKey) -> Option<&AlonePower> {
        let point = key.to_string();
        self.alone.iter().find(|a| a.point == point)
    }

    /// The predicted board power, W, of `jobs` (each with its fraction of alone speed)
    /// sharing in `mode` ([`MeasuredMode::Exclusive`] is one job alone: its measured power),
    /// and the coefficients used (none alone); `None` when the mode or a point is unknown.
    pub fn predict(
        &self,
        mode: MeasuredMode,
        jobs: &[(ModelKey, f64)],
    ) -> Option<(f64, Option<&PowerMode>)> {
        let members: Vec<PowerMember> = jobs
            .iter()
            .map(|(key, fraction)| {
                self.alone(key).map(|a| PowerMember {
                    alone_w: a.power_w,
                    util: a.util,
                    fraction: *fraction,
                })
            })
            .collect::<Option<_>>()?;
        if mode == MeasuredMode::Exclusive {
            return match members.as_slice() {
                [one] => Some((one.alone_w, None)),
                _ => None,
            };
        }
        let m = self.modes.iter().find(|m| m.mode == mode)?;
        let p = self.form.power(
            m.idle_w,
            m.slope,
            m.max_w.unwrap_or(f64::INFINITY),
            &members,
        );
        Some((p, Some(m)))
    }
}

/// The kernel-level model on this GPU: where its traces are and its few global parameters
/// (see the perf README, "The kernel model").
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelParams {
    /// Kernel-table file, relative to the profile's folder (e.g. `h200-kernels.json.gz`).
    pub tables: String,
    /// Points that have a trace in the tables (`MODEL:BATCH:IMAGE`).
    pub traced: Vec<String>,
    /// MPS: slowdown of a kernel per unit of co-runners' SM share while they overlap.
    pub mps_overlap: f64,
    /// MPS: extra host time per kernel launch while two or more clients share, microseconds.
    pub mps_launch_us: f64,
    /// Time-slicing: GPU time lost per idle-to-busy burst of a job while others share, us.
    pub timeslice_switch_us: f64,
    /// Time-slicing: fraction of GPU time lost to time-slice switches while two or more jobs
    /// keep the GPU busy.
    pub timeslice_overhead: f64,
    /// How a compute-bound kernel's time grows with its waves on fewer SMs (1: in proportion).
    pub wave_exponent: f64,
    /// Where a bandwidth-bound kernel's bandwidth saturates on fewer SMs than its grid fills:
    /// the SMs it fills alone over the SMs that already draw its bandwidth (0: never, its time
    /// grows in proportion to its SMs).
    pub memory_knee: f64,
    /// How that knee moves with the kernel's waves alone (knee / waves^this).
    pub memory_knee_waves: f64,
    /// Host time of an MPS client relative to a plain process (launch path through MPS).
    pub mps_host_factor: f64,
    /// Slowdown of a compute-bound kernel per unit of co-runners' bandwidth draw.
    #[serde(default)]
    pub compute_overlap: f64,
    /// DRAM bandwidth running kernels share, as a fraction of the datasheet peak (the
    /// bandwidth stage; 0, as in profiles written before it existed: no stage).
    #[serde(default)]
    pub dram_efficiency: f64,
    /// Part of the co-runners' mean residual kernel time a time-sliced job's burst waits (0, as
    /// in profiles written before it existed: no wait).
    #[serde(default)]
    pub timeslice_wait: f64,
    /// Time-slicing: GPU time between a context's back-to-back kernels, microseconds (0, as in
    /// profiles written before it existed: none).
    #[serde(default)]
    pub timeslice_kernel_gap_us: f64,
    /// Where the global parameters came from (`fitted`, or `provisional` for defaults no
    /// data constrained).
    pub origin: Origin,
    /// The model's error with these globals on the measured sets their fit never saw, per mode
    /// and job class (from `colo calibrate fit`'s validation); `colo predict` widens its band by
    /// it. Empty in profiles written before it existed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub held_out_error: Vec<HeldOutError>,
}

/// A model's held-out error in one mode for one job class (measured against fitted).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeldOutError {
    /// `mps`, `timeslice` or `mig-emulated` (written as the calibration store's labels).
    #[serde(with = "mode_label")]
    pub mode: MeasuredMode,
    /// Launch-bound jobs (GPU busy under 60% of the time alone) or GPU-bound ones.
    pub launch_bound: bool,
    /// Mean absolute percentage error of per-job samples/s as predicted from the profile (median
    /// alone rates) against the samples/s measured in the set, percent.
    pub mape_pct: f64,
    /// Jobs it was measured on.
    pub jobs: usize,
}

impl KernelParams {
    /// The held-out error for `mode` and job class, if the profile carries one.
    pub fn held_out(&self, mode: MeasuredMode, launch_bound: bool) -> Option<&HeldOutError> {
        find_held_out(&self.held_out_error, mode, launch_bound)
    }
}

/// A profile could not be loaded or is inconsistent. Fatal.
#[derive(Debug, Error)]
pub enum ProfileError {
    /// The file could not be read or parsed.
    #[error(transparent)]
    File(#[from] RonFileError),
    /// The profile's version is not one this build reads.
    #[error("{}: profile version {found} is not supported; this colo reads version {PROFILE_VERSION}", path.display())]
    Version {
        /// The file.
        path: PathBuf,
        /// Its version.
        found: u32,
    },
    /// A value is out of its range.
    #[error("{}: {field} = {value} is out of range ({expected})", path.display())]
    Range {
        /// The file.
        path: PathBuf,
        /// Which field, e.g. `models[3].time_demand`.
        field: String,
        /// The value found.
        value: f64,
        /// The range it must lie in.
        expected: &'static str,
    },
    /// The same model key appears twice.
    #[error("{}: {key} appears twice in `models`; keep one entry per MODEL:BATCH:IMAGE", path.display())]
    Duplicate {
        /// The file.
        path: PathBuf,
        /// The repeated key.
        key: ModelKey,
    },
    /// Two profile files describe the same GPU: which one a job on it should use is ambiguous.
    #[error(
        "{} and {} are both profiles for GPU `{gpu}`; list one profile per GPU type",
        first.display(),
        second.display()
    )]
    SameGpu {
        /// The GPU both describe.
        gpu: String,
        /// The file listed first.
        first: PathBuf,
        /// The file listed later.
        second: PathBuf,
    },
}

impl ModelEntry {
    /// The entry's model key.
    pub fn key(&self) -> ModelKey {
        ModelKey::new(&self.model, self.batch, self.image)
    }

    /// The job class this entry describes; `origin` where the entry names none.
    pub fn class(&self, origin: Origin) -> JobClass {
        JobClass {
            key: self.key(),
            solo_rate: self.samples_per_s,
            time_demand: self.time_demand,
            space_demand: self.space_demand,
            contention_demand: self.contention_demand.unwrap_or(self.space_demand),
            memory_gib: self.memory_gib,
            spread: self.spread,
            origin: self.origin.unwrap_or(origin),
        }
    }
}

impl Profile {
    /// Loads and checks a profile file.
    pub fn load(path: &Path) -> Result<Self, ProfileError> {
        let profile: Profile = read_ron(path)?;
        profile.validate(path)?;
        Ok(profile)
    }

    /// Reads and checks a profile from `text`; `path` names it in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Self, ProfileError> {
        let profile: Profile = crate::ronfile::parse_ron(text, path)?;
        profile.validate(path)?;
        Ok(profile)
    }

    /// Checks versions and ranges; `path` names the source in errors.
    pub fn validate(&self, path: &Path) -> Result<(), ProfileError> {
        if self.version != PROFILE_VERSION {
            return Err(ProfileError::Version {
                path: path.to_owned(),
                found: self.version,
            });
        }
        // Every number must be finite: NaN fails each comparison below, infinity the bounds.
        let range = |field: String, value: f64, ok: bool, expected| {
            if ok && value.is_finite() {
                Ok(())
            } else {
                Err(ProfileError::Range {
                    path: path.to_owned(),
                    field,
                    value,
                    expected,
                })
            }
        };
        let m = &self.memory;
        range(
            "memory.context_gib".into(),
            m.context_gib,
            m.context_gib >= 0.0,
            ">= 0, finite",
        )?;
        range(
            "memory.mps_context_gib".into(),
            m.mps_context_gib,
            m.mps_context_gib >= 0.0,
            ">= 0, finite",
        )?;
        let o = self.timeslice.switch_overhead;
        range(
            "timeslice.switch_overhead".into(),
            o,
            (0.0..1.0).contains(&o),
            "0 <= x < 1",
        )?;
        let i = self.mps.interference;
        range(
            "mps.interference".into(),
            i,
            (0.0..=10.0).contains(&i),
            "0 <= x <= 10",
        )?;
        let q = self.mps.queueing;
        range(
            "mps.queueing".into(),
            q,
            (0.0..=50.0).contains(&q),
            "0 <= x <= 50",
        )?;
        let e = self.mig.efficiency;
        range(
            "mig.efficiency".into(),
            e,
            e > 0.0 && e <= 2.0,
            "0 < x <= 2",
        )?;
        if let Some(k) = &self.kernel {
            let globals = [
                ("mps_overlap", k.mps_overlap),
                ("mps_launch_us", k.mps_launch_us),
                ("timeslice_switch_us", k.timeslice_switch_us),
                ("timeslice_overhead", k.timeslice_overhead),
                ("wave_exponent", k.wave_exponent),
                ("memory_knee", k.memory_knee),
                ("memory_knee_waves", k.memory_knee_waves),
                ("mps_host_factor", k.mps_host_factor),
                ("compute_overlap", k.compute_overlap),
                ("dram_efficiency", k.dram_efficiency),
                ("timeslice_wait", k.timeslice_wait),
                ("timeslice_kernel_gap_us", k.timeslice_kernel_gap_us),
            ];
            for (name, value) in globals {
                range(
                    format!("kernel.{name}"),
                    value,
                    value >= 0.0,
                    ">= 0, finite",
                )?;
            }
        }
        let mut seen = HashMap::new();
        for (idx, entry) in self.models.iter().enumerate() {
            let field = |name: &str| format!("models[{idx}].{name} ({})", entry.key());
            range(
                field("samples_per_s"),
                entry.samples_per_s,
                entry.samples_per_s > 0.0,
                "> 0, finite",
            )?;
            let u = entry.time_demand;
            range(
                field("time_demand"),
                u,
                (0.0..=1.0).contains(&u),
                "0 <= x <= 1",
            )?;
            let s = entry.space_demand;
            range(field("space_demand"), s, s > 0.0 && s <= 1.0, "0 < x <= 1")?;
            range(
                field("memory_gib"),
                entry.memory_gib,
                entry.memory_gib >= 0.0,
                ">= 0, finite",
            )?;
            if let Some(spread) = entry.spread {
                range(field("spread"), spread, spread >= 0.0, ">= 0, finite")?;
            }
            if let Some(c) = entry.contention_demand {
                range(
                    field("contention_demand"),
                    c,
                    c > 0.0 && c <= 1.0,
                    "0 < x <= 1",
                )?;
            }
            if seen.insert(entry.key(), idx).is_some() {
                return Err(ProfileError::Duplicate {
                    path: path.to_owned(),
                    key: entry.key(),
                });
            }
        }
        Ok(())
    }

    /// The entry for `key`, if the profile has it.
    pub fn entry(&self, key: &ModelKey) -> Option<&ModelEntry> {
        self.models
            .iter()
            .find(|e| e.model == key.model && e.batch == key.batch && e.image == key.image)
    }

    /// What the profile knows of `model` at any size, as `MODEL:BATCH:IMAGE` texts.
    pub fn known_sizes(&self, model: &str) -> Vec<String> {
        self.models
            .iter()
            .filter(|e| e.model == model)
            .map(|e| e.key().to_string())
            .collect()
    }

    /// The distinct model names, sorted.
    pub fn model_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.models.iter().map(|e| e.model.clone()).collect();
        names.sort();
        names.dedup();
        names
    }
}
