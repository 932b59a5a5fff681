//! A one-set query answered as `colo predict` prints it: the prediction, each job's ± band (the
//! answering model's held-out error for its mode and class, with the noise of its alone
//! measurements), the set's board power, and the labels saying where every number comes from;
//! as an aligned table or one JSON object.
use std::fmt::Write as _;
use std::sync::Arc;

use serde_json::json;

use super::kernel::{LAUNCH_BOUND_BELOW, MAX_JOBS};
use super::profile::{HeldOutError, Origin, PowerMode, PowerParams, find_held_out};
use super::query::{QueryError, SetPrediction, SetQuery, predict_set};
use super::{ClassLookup, KernelModel, MeasuredMode, PerfError, PerfModel, ProfileSet, ShareMode};
use crate::hardware::GpuSpec;
use crate::workload::ModelKey;

/// How output names the profile a command used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProfileName {
    /// Compiled into the binary: `built-in h200 profile`.
    BuiltIn(String),
    /// Named by the user: a file read from disk (or `predict`'s `gavel:NAME` table).
    Named(String),
}

impl ProfileName {
    /// The name alone (JSON's `profile`): the path, or `built-in h200 profile`.
    pub fn as_str(&self) -> &str {
        match self {
            ProfileName::BuiltIn(s) | ProfileName::Named(s) => s,
        }
    }

    /// As a table header says it: `profile PATH`, or `built-in h200 profile`.
    pub fn phrase(&self) -> String {
        match self {
            ProfileName::BuiltIn(s) => s.clone(),
            ProfileName::Named(s) => format!("profile {s}"),
        }
    }
}

/// The model a query is answered with, and what its profile says about its errors and power.
pub struct Predictor {
    /// The GPU type.
    pub gpu: &'static GpuSpec,
    /// The performance model.
    pub model: Arc<dyn PerfModel>,
    /// The kernel model, when it is `model`: it answers for sets whose jobs all have a trace
    /// and falls back to the parametric model for the others.
    pub kernel: Option<Arc<KernelModel>>,
    /// Whether `model` is the parametric model (asked for by name).
    pub parametric: bool,
    /// The profile, as output names it.
    pub profile: ProfileName,
    /// Origin of the profile's numbers (`fitted`, `provisional`, `measured`, ...).
    pub origin: String,
    /// The kernel model's held-out errors per mode and class (the profile's kernel section).
    pub kernel_held_out: Vec<HeldOutError>,
    /// The parametric model's held-out errors per mode and class.
    pub parametric_held_out: Vec<HeldOutError>,
    /// The fitted power model, or why there is none.
    pub power: Result<PowerParams, String>,
}

impl Predictor {
    /// A predictor answering with `model` (and `kernel`, when it is the kernel model) from
    /// `gpu`'s profile in `profiles`, whose held-out errors and power model it carries.
    ///
    /// # Errors
    /// [`PerfError`] if `profiles` has no profile for `gpu`.
    pub fn from_profiles(
        profiles: &ProfileSet,
        gpu: &'static GpuSpec,
        model: Arc<dyn PerfModel>,
        kernel: Option<Arc<KernelModel>>,
        profile: ProfileName,
    ) -> Result<Self, PerfError> {
        let (p, _) = profiles.get(gpu)?;
        Ok(Predictor {
            gpu,
            model,
            kernel,
            parametric: false,
            profile,
            origin: profiles.origin(gpu).to_string(),
            kernel_held_out: p
                .kernel
                .as_ref()
                .map(|k| k.held_out_error.clone())
                .unwrap_or_default(),
            parametric_held_out: p.held_out_error.clone(),
            power: p.power.clone().ok_or_else(|| {
                "the profile has no power section: written before the power model, or from data without NVML power; `colo calibrate fit` on measured data adds it".to_owned()
            }),
        })
    }
}

/// Answers `query` with `predictor`: the prediction, each job's band and the set's power.
///
/// # Errors
/// [`QueryError`]: no jobs, options that do not suit the mode, or a job the model cannot
/// describe.
pub fn answer(predictor: &Predictor, query: SetQuery) -> Result<Answer, QueryError> {
    let (gpu, model) = (predictor.gpu, predictor.model.as_ref());
    let prediction = predict_set(model, &query)?;
    let model_label = match &predictor.kernel {
        Some(k) => kernel_label(k, gpu, &query.jobs),
        None => model.name().to_owned(),
    };
    // The answering model's validated error for each job's mode and class: the kernel model's
    // where every job has a trace, else the parametric model's when it answered (asked for,
    // or the kernel model's fallback); none for the baselines, or alone, where the rate is the
    // measured one.
    let store_mode = Some(query.mode)
        .filter(|m| *m != ShareMode::Exclusive)
        .map(ShareMode::measured_as)
        .filter(|_| query.jobs.len() > 1 || !query.sm_budgets.is_empty() || query.layout.is_some());
    let kernel_answers = predictor
        .kernel
        .as_ref()
        .filter(|k| query.jobs.len() <= MAX_JOBS && query.jobs.iter().all(|j| k.is_traced(gpu, j)));
    let answering = match (kernel_answers, &predictor.kernel, predictor.parametric) {
        (Some(_), _, _) => Some(BandModel::Kernel),
        (None, Some(_), _) | (None, None, true) => Some(BandModel::Parametric),
        _ => None,
    };
    let model_error: Vec<Option<HeldOutError>> = query
        .jobs
        .iter()
        .map(|key| {
            let mode = store_mode?;
            let (errors, launch_bound) = match answering? {
                BandModel::Kernel => (
                    &predictor.kernel_held_out,
                    kernel_answers?.alone_busy_fraction(gpu, key)? < LAUNCH_BOUND_BELOW,
                ),
                BandModel::Parametric => (
                    &predictor.parametric_held_out,
                    model.class(gpu, key).ok()?.time_demand < LAUNCH_BOUND_BELOW,
                ),
            };
            find_held_out(errors, mode, launch_bound).cloned()
        })
        .collect();
    let power = match &predictor.power {
        Ok(params) => within_limit(gpu, set_power(params, store_mode, &prediction)),
        Err(why) => SetPower::Unknown(why.clone()),
    };
    Ok(Answer {
        power,
        model_error,
        model_error_due: store_mode.is_some() && answering.is_some(),
        band_model: answering.unwrap_or(BandModel::Parametric),
        // A baseline (equal share, fixed slowdown) reads no sharing parameter: none to label.
        sharing_origin: if model.reads_sharing_parameters() {
            model.mode_origin(gpu, query.mode).to_string()
        } else {
            format!("none (the {} rule)", model.name())
        },
        query,
        model: model_label,
        profile: predictor.profile.clone(),
        origin: predictor.origin.clone(),
        prediction,
    })
}

/// The origins of the jobs' alone rates in words: one word when they agree, else each once
/// in order (`measured` for traced commands beside `fitted` profile entries).
fn alone_origins(origins: &[String]) -> String {
    let mut distinct: Vec<&str> = Vec::new();
    for o in origins {
        if !distinct.contains(&o.as_str()) {
            distinct.push(o);
        }
    }
    match distinct.as_slice() {
        [one] => (*one).to_owned(),
        many => format!("{} (see the origin column)", many.join(" and ")),
    }
}

/// The set's predicted board power, or why there is none.
#[derive(Clone, Debug, PartialEq)]
pub enum SetPower {
    /// Predicted by the fitted model of the mode, or measured (one job alone).
    Known {
        /// Watts.
        watts: f64,
        /// The mode's coefficients (`None`: one job alone, measured).
        fit: Option<PowerMode>,
        /// The form of the model.
        form: String,
        /// Origin of the numbers (fitted, measured, fake).
        origin: String,
    },
    /// No power: why.
    Unknown(String),
}

/// The power model's answer for the predicted set.
fn set_power(params: &PowerParams, mode: Option<MeasuredMode>, p: &SetPrediction) -> SetPower {
    if !p.fits_memory {
        return SetPower::Unknown("the set does not fit in memory".into());
    }
    let mode = mode.unwrap_or(MeasuredMode::Exclusive);
    let jobs: Vec<(ModelKey, f64)> = p
        .jobs
        .iter()
        .map(|j| (j.key.clone(), j.fraction_of_exclusive))
        .collect();
    match params.predict(mode, &jobs) {
        Some((watts, fit)) => SetPower::Known {
            watts,
            origin: if fit.is_none() && params.origin == Origin::Fitted {
                "measured".into()
            } else {
                params.origin.to_string()
            },
            fit: fit.cloned(),
            form: params.form.to_string(),
        },
        None => {
            let missing: Vec<String> = jobs
                .iter()
                .filter(|(k, _)| params.alone(k).is_none())
                .map(|(k, _)| k.to_string())
                .collect();
            SetPower::Unknown(if missing.is_empty() {
                format!("the power model has no coefficients for mode {mode}")
            } else {
                format!("no measured power alone for {}", missing.join(", "))
            })
        }
    }
}

/// `power`, unless it passes the card's power limit: a board throttles there, so such a
/// figure is a fault of the power model (or of the rates fed to it), not an answer. The rates
/// are still given; the power is unknown, and the note says why and by how much.
fn within_limit(gpu: &GpuSpec, power: SetPower) -> SetPower {
    match power {
        SetPower::Known { watts, .. } if watts > gpu.power_limit_w => SetPower::Unknown(format!(
            "the power model predicts {watts:.0} W, above the {} board's {:.0} W power limit: it \
             is extrapolating past the sets it was fitted on, or the predicted rates are too \
             high",
            gpu.name, gpu.power_limit_w
        )),
        power => power,
    }
}

impl SetPower {
    /// The power line of the table (and JSON's `power_note`).
    pub fn line(&self) -> String {
        match self {
            SetPower::Known {
                watts,
                fit: Some(m),
                form,
                origin,
            } => format!(
                "predicted GPU power: {watts:.0} W ({origin} power model, form {form}, held-out error {:.1}% over {} measured {} sets; rates predicted as above)",
                m.held_out_mape_pct, m.sets, m.mode
            ),
            SetPower::Known {
                watts,
                fit: None,
                origin,
                ..
            } => format!(
                "predicted GPU power: {watts:.0} W ({origin}: the job's median board power alone)"
            ),
            SetPower::Unknown(why) => format!("predicted GPU power: unknown ({why})"),
        }
    }
}

/// Exit status of a set that does not fit in the GPU's memory (documented in `--help`): its
/// processes would fail to allocate, so no speed is printed.
pub const EXIT_OUT_OF_MEMORY: u8 = 3;

/// `kernel` when every job has a trace, else which jobs sent the set to the fallback, or that
/// the set is larger than the replay takes (it gave way to the fallback still labelled `kernel`).
fn kernel_label(k: &KernelModel, gpu: &GpuSpec, jobs: &[ModelKey]) -> String {
    if jobs.len() > MAX_JOBS {
        return format!(
            "parametric (kernel model fallback: {} jobs, more than the {MAX_JOBS} the kernel \
             replay takes, as MPS takes at most {MAX_JOBS} clients)",
            jobs.len()
        );
    }
    let untraced: Vec<String> = jobs
        .iter()
        .filter(|j| !k.is_traced(gpu, j))
        .map(ToString::to_string)
        .collect();
    if untraced.is_empty() {
        k.name().into()
    } else {
        format!(
            "parametric (kernel model fallback: no trace for {})",
            untraced.join(", ")
        )
    }
}

/// Which model's held-out error the band holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BandModel {
    /// The kernel model's.
    Kernel,
    /// The parametric model's.
    Parametric,
}

impl BandModel {
    fn phrase(self) -> &'static str {
        match self {
            BandModel::Kernel => "the kernel model's",
            BandModel::Parametric => "the parametric model's",
        }
    }
}

/// What is known of the error of traces carried to one GPU: the mean |error| of the alone
/// speeds of carried traces against measurements on it (a test recomputes each from the
/// committed files).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TransferCheck {
    /// The GPU checked (catalog or Gavel name).
    pub gpu: &'static str,
    /// Mean |error| of the carried traces' alone speeds, percent.
    pub error_pct: f64,
    /// What was compared, and the command or folder that shows it.
    pub what: &'static str,
}

/// Every check of carried traces against measurements, by target GPU.
pub const TRANSFER_CHECKS: [TransferCheck; 5] = [
    TransferCheck {
        gpu: "h100-80gb",
        error_pct: 16.8,
        what: "H200 traces carried to an H100 against traces measured there, 17 points: calibrate/data/h100/transfer",
    },
    TransferCheck {
        gpu: "a100-40gb",
        error_pct: 47.9,
        what: "H100 traces of MISO's workloads carried to A100-40GB MIG slices against MISO's published times, 71 rows: `colo calibrate published calibrate/data/h100/external/traces --against miso`",
    },
    TransferCheck {
        gpu: "v100",
        error_pct: 40.8,
        what: "H100 traces of Gavel's workloads carried to a V100 against Gavel's table, 20 rows: `colo calibrate published calibrate/data/h100/external/traces --against gavel`",
    },
    TransferCheck {
        gpu: "p100",
        error_pct: 38.7,
        what: "H100 traces of Gavel's workloads carried to a P100 against Gavel's table, 20 rows: `colo calibrate published calibrate/data/h100/external/traces --against gavel --gpu p100`",
    },
    TransferCheck {
        gpu: "k80",
        error_pct: 64.2,
        what: "H100 traces of Gavel's workloads carried to a K80 against Gavel's table, 20 rows: `colo calibrate published calibrate/data/h100/external/traces --against gavel --gpu k80`",
    },
];

/// The check that speaks for traces carried to `gpu`, and whether it was taken on another GPU:
/// its own; the H100's for the H200 (the same pair of GPUs, carried the other way); the
/// A100-40GB's for the A100-80GB. `None`: no measurement checks a transfer to it.
pub fn transfer_check(gpu: &str) -> Option<(&'static TransferCheck, bool)> {
    let stand_in = match gpu {
        "h200" => "h100-80gb",
        "a100-80gb" => "a100-40gb",
        other => other,
    };
    TRANSFER_CHECKS
        .iter()
        .find(|c| c.gpu == stand_in)
        .map(|c| (c, c.gpu != gpu))
}

/// One prediction with its labels, ready to print.
#[derive(Clone, Debug)]
pub struct Answer {
    /// The set's board power.
    pub power: SetPower,
    /// Per job, the model's held-out error in this mode for its class, if known.
    pub model_error: Vec<Option<HeldOutError>>,
    /// Whether the jobs share the GPU and a model (not a baseline) answered: a band then needs
    /// the model's held-out error, and without it there is none (the spread alone is no band).
    pub model_error_due: bool,
    /// The model those errors are of.
    pub band_model: BandModel,
    /// The set asked about.
    pub query: SetQuery,
    /// The model that answered (`kernel`, or which jobs sent it to its fallback).
    pub model: String,
    /// The profile.
    pub profile: ProfileName,
    /// Origin of the profile's numbers.
    pub origin: String,
    /// Origin of the sharing parameters of the query's mode.
    pub sharing_origin: String,
    /// The prediction.
    pub prediction: SetPrediction,
}

impl Answer {
    /// Job `i`'s band, percent: its model error, half its alone spread and, for a job whose
    /// trace was carried from another GPU, the transfer's expected error, in quadrature.
    pub fn band_pct(&self, i: usize) -> Option<f64> {
        if self.model_error_due && self.model_error[i].is_none() {
            return None;
        }
        let job = &self.prediction.jobs[i];
        let parts = [
            self.model_error[i].as_ref().map(|e| e.mape_pct),
            job.spread.map(|s| s * 50.0),
            (job.origin == Origin::Transferred)
                .then(|| transfer_check(self.query.gpu.name).map(|(c, _)| c.error_pct))
                .flatten(),
        ];
        parts.iter().flatten().copied().reduce(f64::hypot)
    }

    /// The footnote saying what the band holds.
    pub fn band_note(&self) -> String {
        let transferred = self
            .prediction
            .jobs
            .iter()
            .any(|j| j.origin == Origin::Transferred);
        let note = self.held_out_note();
        if !transferred {
            return note;
        }
        let gpu = self.query.gpu.name;
        match transfer_check(gpu) {
            Some((check, stand_in)) => format!(
                "{note}; for a transferred job also the transfer's expected error of its alone \
                 speed, {:.1}% (mean |error| of {}{})",
                check.error_pct,
                check.what,
                if stand_in {
                    format!("; no measurement on {gpu} checks it, this is the nearest GPU's")
                } else {
                    String::new()
                }
            ),
            None => format!(
                "{note}; a transferred job's band leaves out the transfer's error: no measurement \
                 checks traces carried to {gpu} (on the GPUs checked it was 9-64%: `colo \
                 calibrate published`)"
            ),
        }
    }

    fn held_out_note(&self) -> String {
        let known: Vec<&HeldOutError> = self.model_error.iter().flatten().collect();
        let unknown = (self.model_error_due && known.len() < self.model_error.len()).then(|| {
            format!(
                "no band (-) where {} held-out error in {} for the job's class is unknown: the \
                 profile's fit saw no measured sets of that kind it did not train on, so how far \
                 off the sharing is has not been measured (`colo calibrate fit` on measured \
                 co-runs adds it)",
                self.band_model.phrase(),
                self.query.mode
            )
        });
        if let Some(unknown) = &unknown
            && known.is_empty()
        {
            return format!("± band: {unknown}");
        }
        if known.is_empty() {
            return "± band: half the spread (max - min) of the job's repeated alone measurements, the noise floor of its numbers".into();
        }
        let mut classes: Vec<String> = known
            .iter()
            .map(|e| {
                format!(
                    "{} {:.1}% over {} jobs",
                    if e.launch_bound {
                        "launch-bound"
                    } else {
                        "GPU-bound"
                    },
                    e.mape_pct,
                    e.jobs
                )
            })
            .collect();
        classes.sort();
        classes.dedup();
        let note = format!(
            "± band: {} held-out error in {} for the job's class (MAPE of samples/s on measured sets its fit never saw: {}; `colo calibrate validate`), combined in quadrature with half the spread of the job's repeated alone measurements",
            self.band_model.phrase(),
            known[0].mode,
            classes.join(", ")
        );
        match unknown {
            Some(unknown) => format!("{note}; {unknown}"),
            None => note,
        }
    }

    /// The aligned table (`--format table`).
    pub fn table(&self) -> String {
        let (q, p, model) = (&self.query, &self.prediction, &self.model);
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{} x {} job(s), mode {}, model {model}, {} ({}); {} sharing parameters: {}",
            q.gpu.name,
            p.jobs.len(),
            q.mode,
            self.profile.phrase(),
            self.origin,
            q.mode,
            self.sharing_origin
        );
        let _ = writeln!(
            out,
            "{:<28} {:>12} {:>7} {:>12} {:>9} {:>9} {:>16}  {:<12}",
            "job", "samples/s", "± band", "alone", "fraction", "mem GiB", "place", "origin"
        );
        // A set that does not fit would crash, not run slowly: no speeds, only the verdict.
        let dash = |text: String| if p.fits_memory { text } else { "-".into() };
        for (i, j) in p.jobs.iter().enumerate() {
            let place = match (&j.slice, j.sm_budget) {
                (Some(slice), _) => slice.clone(),
                (None, Some(b)) => format!("{:.0}% SMs", b * 100.0),
                (None, None) => "whole GPU".into(),
            };
            let _ = writeln!(
                out,
                "{:<28} {:>12} {:>7} {:>12.1} {:>9} {:>9} {:>16}  {:<12}",
                j.key.to_string(),
                dash(format!("{:.1}", j.samples_per_s)),
                dash(
                    self.band_pct(i)
                        .map_or("-".to_owned(), |b| format!("{b:.0}%"))
                ),
                j.exclusive_samples_per_s,
                dash(format!("{:.3}", j.fraction_of_exclusive)),
                // A profile with no memory sizes (Gavel's): `-`, not 0.00.
                if p.memory_known() {
                    format!("{:.2}", j.memory_gib)
                } else {
                    "-".to_owned()
                },
                place,
                j.origin.to_string()
            );
        }
        if p.fits_memory {
            let _ = writeln!(
                out,
                "total fraction of exclusive: {:.3} (predicted by {model}; rates alone are {}, sharing parameters {})",
                p.total_fraction,
                alone_origins(
                    &p.jobs
                        .iter()
                        .map(|j| j.origin.to_string())
                        .collect::<Vec<_>>()
                ),
                self.sharing_origin
            );
            let _ = writeln!(out, "{}", self.band_note());
            if q.emulated_layout().is_some() {
                let _ = writeln!(
                    out,
                    "slices emulated: MPS clients with each slice's SM budget and memory limit on one GPU, sharing its memory bandwidth and L2 (as `colo calibrate profile --mode mig-emulated` runs them, and the same answer as --sm-pct with those budgets); real MIG slices, isolated: --mode mig"
                );
            }
        } else {
            let _ = writeln!(
                out,
                "no speeds: the set does not fit in memory, so its processes would fail with out of memory rather than run (exit status {EXIT_OUT_OF_MEMORY})"
            );
        }
        let verdict = if p.fits_memory {
            "fits".to_owned()
        } else {
            format!(
                "does NOT fit ({})",
                p.memory_note.clone().unwrap_or_default()
            )
        };
        if p.memory_known() {
            let _ = writeln!(
                out,
                "memory: {:.1} GiB of {:.1} GiB: {verdict}",
                p.memory_gib, p.capacity_gib
            );
        } else {
            let _ = writeln!(out, "memory: unknown (the profile holds no memory sizes)");
        }
        let _ = writeln!(out, "{}", self.power.line());
        out
    }

    /// The JSON object (`--format json`).
    pub fn json(&self) -> serde_json::Value {
        let (q, p) = (&self.query, &self.prediction);
        // Out of memory: no speeds (null), only the verdict.
        let speed = |x: f64| p.fits_memory.then_some(x);
        let jobs: Vec<serde_json::Value> = p
            .jobs
            .iter()
            .enumerate()
            .map(|(i, j)| {
                json!({
                    "model": j.key.model,
                    "batch": j.key.batch,
                    "image": j.key.image,
                    "samples_per_s": speed(j.samples_per_s),
                    "exclusive_samples_per_s": j.exclusive_samples_per_s,
                    "fraction_of_exclusive": speed(j.fraction_of_exclusive),
                    "memory_gib": p.memory_known().then_some(j.memory_gib),
                    "slice": j.slice,
                    "sm_budget_pct": j.sm_budget.map(|b| b * 100.0),
                    "origin": j.origin.to_string(),
                    "uncertainty_pct": self.band_pct(i).and_then(speed),
                    "model_error_pct": self.model_error[i].as_ref().map(|e| e.mape_pct).and_then(speed),
                    "noise_pct": j.spread.map(|s| s * 50.0).and_then(speed),
                })
            })
            .collect();
        json!({
            "gpu": q.gpu.name,
            "mode": q.mode.to_string(),
            "perf_model": self.model,
            "profile": self.profile.as_str(),
            "profile_origin": self.origin,
            "sharing_parameters_origin": self.sharing_origin,
            "jobs": jobs,
            "total_fraction": speed(p.total_fraction),
            "memory_gib": p.memory_known().then_some(p.memory_gib),
            "capacity_gib": p.capacity_gib,
            "fits_memory": p.fits_memory,
            "power_w": match &self.power {
                SetPower::Known { watts, .. } => Some(*watts),
                SetPower::Unknown(_) => None,
            },
            "power_error_pct": match &self.power {
                SetPower::Known { fit, .. } => fit.as_ref().map(|m| m.held_out_mape_pct),
                SetPower::Unknown(_) => None,
            },
            "power_origin": match &self.power {
                SetPower::Known { origin, .. } => Some(origin.clone()),
                SetPower::Unknown(_) => None,
            },
            "power_note": self.power.line(),
        })
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;
    use crate::hardware;
    use crate::perf::{Parametric, Profile};

    const PROFILE: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../calibrate/profiles/h200-provisional.ron"
    );

    fn predictor(parametric_held_out: Vec<HeldOutError>) -> Predictor {
        let mut set = ProfileSet::default();
        set.insert(
            Profile::load(Path::new(PROFILE)).unwrap(),
            PathBuf::from(PROFILE),
        );
        let set = Arc::new(set);
        let gpu = hardware::gpu("h200").unwrap();
        let model = Arc::new(Parametric::new(set.clone()));
        let name = ProfileName::Named("p.ron".into());
        let mut p = Predictor::from_profiles(&set, gpu, model, None, name).unwrap();
        p.parametric = true;
        p.parametric_held_out = parametric_held_out;
        p
    }

    fn query(jobs: &[&str]) -> SetQuery {
        SetQuery {
            gpu: hardware::gpu("h200").unwrap(),
            mode: ShareMode::Mps,
            jobs: jobs.iter().map(|j| j.parse().unwrap()).collect(),
            sm_budgets: Vec::new(),
            layout: None,
        }
    }

    fn held_out(launch_bound: bool, mape_pct: f64) -> HeldOutError {
        HeldOutError {
            mode: MeasuredMode::Mps,
            launch_bound,
            mape_pct,
            jobs: 7,
        }
    }

    #[test]
    fn the_band_holds_the_held_out_error_of_the_jobs_class() {
        let p = predictor(vec![held_out(false, 12.0), held_out(true, 30.0)]);
        let a = answer(&p, query(&["resnet50:64:224", "vit_b_16:32:224"])).unwrap();
        assert_eq!(a.band_model, BandModel::Parametric);
        assert_eq!(a.model, "parametric");
        // Both are GPU-bound (time demand 0.97) and have no measured spread.
        assert_eq!(a.band_pct(0), Some(12.0));
        assert!(a.band_note().contains("GPU-bound 12.0% over 7 jobs"));
        // Every job's class known: nothing said of unknown ones.
        assert!(!a.band_note().contains("no band"), "{}", a.band_note());
        // A model (not a baseline) labels its sharing by the profile's origin.
        assert_eq!(a.sharing_origin, "provisional");
        let table = a.table();
        assert!(table.starts_with("h200 x 2 job(s), mode mps, model parametric, profile p.ron"));
        assert!(table.contains("predicted GPU power: unknown (the profile has no power section"));
        let json = a.json();
        assert_eq!(json["profile"], "p.ron");
        assert_eq!(json["jobs"][0]["model_error_pct"], 12.0);
        assert_eq!(json["power_w"], serde_json::Value::Null);
    }

    /// A profile with no held-out error for the mode gives a shared job no band (it used to
    /// show its alone spread, 0% with one alone run, as if the sharing were certain).
    #[test]
    fn a_shared_job_without_the_models_held_out_error_has_no_band() {
        let p = predictor(Vec::new());
        let a = answer(&p, query(&["resnet50:64:224", "vit_b_16:32:224"])).unwrap();
        assert_eq!(a.model_error, vec![None, None]);
        assert_eq!(a.band_pct(0), None);
        assert!(
            a.band_note().starts_with(
                "± band: no band (-) where the parametric model's held-out error in mps"
            ),
            "{}",
            a.band_note()
        );
        assert_eq!(
            a.json()["jobs"][0]["uncertainty_pct"],
            serde_json::Value::Null
        );
        let row = a.table().lines().nth(2).unwrap().to_owned();
        assert_eq!(row.split_whitespace().nth(2), Some("-"), "{row}");
        // One of the two classes known: the other job alone has no band.
        let p = predictor(vec![held_out(false, 12.0)]);
        let mut q = query(&["resnet50:64:224", "vit_b_16:32:224"]);
        q.jobs.push("resnet18:128:32".parse().unwrap());
        let a = answer(&p, q).unwrap();
        let bands: Vec<Option<f64>> = (0..3).map(|i| a.band_pct(i)).collect();
        assert_eq!(bands[0], Some(12.0));
        assert_eq!(bands[2], None, "{}", a.band_note());
        assert!(a.band_note().contains("GPU-bound 12.0% over 7 jobs"));
        assert!(a.band_note().contains("; no band (-) where"));
    }

    /// A baseline's answer labels no sharing parameter as fitted: it reads none.
    #[test]
    fn a_baselines_sharing_is_labelled_as_its_rule() {
        let mut p = predictor(Vec::new());
        p.parametric = false;
        let mut set = ProfileSet::default();
        set.insert(
            Profile::load(Path::new(PROFILE)).unwrap(),
            PathBuf::from(PROFILE),
        );
        p.model = Arc::new(crate::perf::EqualShare::new(Arc::new(set)));
        let a = answer(&p, query(&["resnet50:64:224", "vit_b_16:32:224"])).unwrap();
        assert_eq!(a.sharing_origin, "none (the equal-share rule)");
        assert!(
            a.table()
                .lines()
                .next()
                .unwrap()
                .ends_with("mps sharing parameters: none (the equal-share rule)"),
            "{}",
            a.table()
        );
    }

    #[test]
    fn alone_there_is_no_model_error() {
        let p = predictor(vec![held_out(false, 12.0)]);
        let mut q = query(&["resnet50:64:224"]);
        q.mode = ShareMode::Exclusive;
        let a = answer(&p, q).unwrap();
        assert_eq!(a.model_error, vec![None]);
        assert!(a.band_note().starts_with("± band: half the spread"));
    }

    #[test]
    fn a_set_that_does_not_fit_has_no_speeds() {
        let p = predictor(Vec::new());
        let jobs = ["vit_b_16:32:224"; 13];
        let a = answer(&p, query(&jobs)).unwrap();
        assert!(!a.prediction.fits_memory);
        assert!(
            a.table()
                .contains(&format!("(exit status {EXIT_OUT_OF_MEMORY})"))
        );
        assert_eq!(a.json()["total_fraction"], serde_json::Value::Null);
        assert_eq!(
            a.power,
            SetPower::Unknown(
                "the profile has no power section: written before the power model, or from data without NVML power; `colo calibrate fit` on measured data adds it".into()
            )
        );
    }
}
