//! `colo predict`: per-job samples/s of a set of jobs sharing one GPU, with the memory verdict.
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use colo_calibrate::fit::gavel;
use colo_calibrate::fit::gavel_model::{GavelModel, gavel_gpu_spec};
use colo_calibrate::fit::text_maybe_gzipped;
use colo_sim::hardware::{self, GpuSpec};
use colo_sim::perf::profile::{HeldOutError, Origin, PowerMode, PowerParams, find_held_out};
use colo_sim::perf::query::{SetPrediction, SetQuery, predict_set};
use colo_sim::perf::{
    EqualShare, Exclusive, FixedSlowdown, KernelModel, Parametric, PerfModel, ShareMode,
};
use colo_sim::workload::ModelKey;
use serde_json::json;

use crate::profiles::ProfileName;

/// Arguments of `colo predict`.
#[derive(clap::Args)]
pub struct PredictArgs {
    /// Jobs as MODEL:BATCH:IMAGE, e.g. resnet50:64:224 vit_b_16:32:224.
    #[arg(required = true)]
    pub jobs: Vec<String>,
    /// GPU type: a100-40gb, a100-80gb, h100-80gb, h200.
    #[arg(long, default_value = "h200")]
    pub gpu: String,
    /// How the jobs share the GPU.
    #[arg(long, value_enum, default_value_t = ModeArg::Mps)]
    pub mode: ModeArg,
    /// MPS SM budgets in percent (1 to 100): one for all jobs or one per job, e.g. 45,48
    /// (default: none).
    #[arg(long, value_delimiter = ',', value_parser = sm_percent)]
    pub sm_pct: Vec<f64>,
    /// MIG layout, job i in slice i, e.g. 3g.71gb,4g.71gb or 7x1g.18gb (mode mig).
    #[arg(long)]
    pub layout: Option<String>,
    /// Profile file(s) (default: the profile shipped for the GPU); `gavel:v100` (or p100, k80)
    /// uses Gavel's measured pair table, jobs written like gavel_resnet-18:32:1.
    #[arg(long)]
    pub profile: Vec<PathBuf>,
    /// Performance model (default: kernel, which falls back to parametric for jobs without
    /// a kernel trace and says so).
    #[arg(long, value_enum, default_value_t = ModelArg::Kernel)]
    pub model: ModelArg,
    /// Output format.
    #[arg(long, value_enum, default_value_t = FormatArg::Table)]
    pub format: FormatArg,
}

/// One `--sm-pct` value: a percentage of the SMs from 1 to 100 (below 1% no kernel runs, and
/// MPS takes no more than 100%).
fn sm_percent(text: &str) -> Result<f64, String> {
    let pct: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a number; give a percentage from 1 to 100"))?;
    if (1.0..=100.0).contains(&pct) {
        Ok(pct)
    } else {
        Err(format!("{pct} is outside 1..=100 (percent of the SMs)"))
    }
}

/// Sharing mode on the command line.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum ModeArg {
    /// One job alone.
    Exclusive,
    /// Plain processes, time-sliced.
    Timeslice,
    /// MPS (with optional SM budgets).
    Mps,
    /// MIG slices (needs --layout).
    Mig,
}

/// Performance model on the command line.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum ModelArg {
    /// Replays each job's alone kernel trace together (the profile's traced points).
    Kernel,
    /// Demand-based model with the profile's fitted parameters.
    Parametric,
    /// Each job as if alone.
    Exclusive,
    /// Each of n jobs gets 1/n.
    EqualShare,
    /// Each job slowed by 1 + 0.15 (n - 1).
    FixedSlowdown,
}

/// Output format.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum FormatArg {
    /// Aligned text.
    Table,
    /// One JSON object.
    Json,
}

/// Runs `colo predict`.
pub fn run(args: PredictArgs) -> anyhow::Result<ExitCode> {
    let gavel = args
        .profile
        .iter()
        .find_map(|p| p.to_str()?.strip_prefix("gavel:").map(str::to_owned));
    let mut kernel: Option<Arc<KernelModel>> = None;
    let mut held_out: Vec<HeldOutError> = Vec::new();
    let mut parametric_held_out: Vec<HeldOutError> = Vec::new();
    let mut power: Option<PowerParams> = None;
    let (gpu, model, profile_name, origin): (
        &'static GpuSpec,
        Arc<dyn PerfModel>,
        ProfileName,
        String,
    ) = match &gavel {
        Some(name) => gavel_model(name)?,
        None => {
            let gpu = hardware::gpu(&args.gpu)?;
            let profiles = Arc::new(crate::profiles::load(&args.profile)?);
            let (profile, path) = profiles.get(gpu)?;
            if let Some(k) = &profile.kernel {
                held_out.clone_from(&k.held_out_error);
            }
            parametric_held_out.clone_from(&profile.held_out_error);
            power.clone_from(&profile.power);
            let path = crate::profiles::name(&args.profile, path, gpu.name);
            let origin = profiles.origin(gpu).to_string();
            let model: Arc<dyn PerfModel> = match args.model {
                ModelArg::Kernel => {
                    let k = Arc::new(crate::profiles::kernel_model(
                        profiles.clone(),
                        &args.profile,
                    )?);
                    kernel = Some(k.clone());
                    k
                }
                ModelArg::Parametric => Arc::new(Parametric::new(profiles.clone())),
                ModelArg::Exclusive => Arc::new(Exclusive::new(profiles.clone())),
                ModelArg::EqualShare => Arc::new(EqualShare::new(profiles.clone())),
                ModelArg::FixedSlowdown => Arc::new(FixedSlowdown::new(
                    profiles.clone(),
                    FixedSlowdown::DEFAULT_PER_CORUNNER,
                )),
            };
            (gpu, model, path, origin)
        }
    };
    let jobs = args
        .jobs
        .iter()
        .map(|j| j.parse::<ModelKey>())
        .collect::<Result<Vec<_>, _>>()?;
    let layout = args
        .layout
        .as_deref()
        .map(|text| gpu.parse_mig_layout(text))
        .transpose()
        .context("--layout")?;
    let query = SetQuery {
        gpu,
        mode: match args.mode {
            ModeArg::Exclusive => ShareMode::Exclusive,
            ModeArg::Timeslice => ShareMode::Timeslice,
            ModeArg::Mps => ShareMode::Mps,
            ModeArg::Mig => ShareMode::Mig,
        },
        jobs,
        sm_budgets: args.sm_pct.iter().map(|p| p / 100.0).collect(),
        layout,
    };
    let prediction = predict_set(model.as_ref(), &query)?;
    let model_label = match &kernel {
        Some(k) => kernel_label(k, gpu, &query.jobs),
        None => model.name().to_owned(),
    };
    // The answering model's validated error for each job's mode and class: the kernel model's
    // where every job has a trace, else the parametric model's when it answered (asked for,
    // or the kernel model's fallback); none for the baselines, or alone, where the rate is the
    // measured one.
    let store_mode = match query.mode {
        ShareMode::Mps => Some("mps"),
        ShareMode::Timeslice => Some("timeslice"),
        ShareMode::Mig => Some("mig-emulated"),
        ShareMode::Exclusive => None,
    }
    .filter(|_| query.jobs.len() > 1 || !query.sm_budgets.is_empty() || query.layout.is_some());
    let kernel_answers = kernel
        .as_ref()
        .filter(|k| query.jobs.iter().all(|j| k.is_traced(gpu, j)));
    let answering = match (kernel_answers, &kernel, args.model) {
        (Some(_), _, _) => Some(BandModel::Kernel),
        (None, Some(_), _) | (None, None, ModelArg::Parametric) => Some(BandModel::Parametric),
        _ => None,
    };
    let model_error: Vec<Option<HeldOutError>> = query
        .jobs
        .iter()
        .map(|key| {
            let mode = store_mode?;
            let (errors, launch_bound) = match answering? {
                BandModel::Kernel => (
                    &held_out,
                    kernel_answers?.alone_busy_fraction(gpu, key)? < 0.6,
                ),
                BandModel::Parametric => (
                    &parametric_held_out,
                    model.class(gpu, key).ok()?.time_demand < 0.6,
                ),
            };
            find_held_out(errors, mode, launch_bound).cloned()
        })
        .collect();
    let power = if gavel.is_some() {
        SetPower::Unknown("Gavel's table holds throughputs only, no power measurements".into())
    } else {
        set_power(power.as_ref(), store_mode, &prediction)
    };
    let report = Report {
        power: &power,
        model_error: &model_error,
        band_model: answering.unwrap_or(BandModel::Parametric),
        query: &query,
        model: &model_label,
        profile: &profile_name,
        origin,
        sharing_origin: model.mode_origin(gpu, query.mode).to_string(),
        prediction: &prediction,
    };
    match args.format {
        FormatArg::Table => super::print(&report.table())?,
        FormatArg::Json => super::print(&report.json()?)?,
    }
    if prediction.fits_memory {
        Ok(ExitCode::SUCCESS)
    } else {
        Ok(ExitCode::from(EXIT_OUT_OF_MEMORY))
    }
}

/// The set's predicted board power, or why there is none.
enum SetPower {
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
fn set_power(params: Option<&PowerParams>, mode: Option<&str>, p: &SetPrediction) -> SetPower {
    let Some(params) = params else {
        return SetPower::Unknown(
            "the profile has no power section: written before the power model, or from data without NVML power; `colo calibrate fit` on measured data adds it".into(),
        );
    };
    if !p.fits_memory {
        return SetPower::Unknown("the set does not fit in memory".into());
    }
    let mode = mode.unwrap_or("exclusive");
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

impl SetPower {
    fn line(&self) -> String {
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

/// `kernel` when every job has a trace, else which jobs sent the set to the fallback.
fn kernel_label(k: &KernelModel, gpu: &GpuSpec, jobs: &[ModelKey]) -> String {
    let untraced: Vec<String> = jobs
        .iter()
        .filter(|j| !k.is_traced(gpu, j))
        .map(ToString::to_string)
        .collect();
    if untraced.is_empty() {
        "kernel".into()
    } else {
        format!(
            "parametric (kernel model fallback: no trace for {})",
            untraced.join(", ")
        )
    }
}

/// Gavel's table shipped in the binary (stanford-futuredata/gavel, MIT).
const GAVEL_TABLE: &[u8] =
    include_bytes!("../../calibrate/data/external/gavel/simulation_throughputs.json.gz");

/// `--profile gavel:NAME`: Gavel's measured pairs (and a parametric fit to them for other sets).
fn gavel_model(
    name: &str,
) -> anyhow::Result<(&'static GpuSpec, Arc<dyn PerfModel>, ProfileName, String)> {
    let gpu = gavel_gpu_spec(name)
        .with_context(|| format!("gavel:{name}: Gavel's table has v100, p100 and k80"))?;
    let text = text_maybe_gzipped(GAVEL_TABLE.to_vec()).context("the shipped Gavel table")?;
    let path = std::path::Path::new("calibrate/data/external/gavel/simulation_throughputs.json.gz");
    let table = gavel::parse_table(&text, path, gpu.name)?;
    let label = format!(
        "gavel:{} (measured pairs; other sets from a parametric fit to them)",
        gpu.name
    );
    Ok((
        gpu,
        Arc::new(GavelModel::new(table)),
        ProfileName::Named(label),
        "measured".into(),
    ))
}

/// Which model's held-out error the band holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BandModel {
    Kernel,
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

/// One prediction with its labels, ready to print.
struct Report<'a> {
    /// The set's board power.
    power: &'a SetPower,
    /// Per job, the model's held-out error in this mode for its class, if known.
    model_error: &'a [Option<HeldOutError>],
    /// The model those errors are of.
    band_model: BandModel,
    query: &'a SetQuery,
    model: &'a str,
    profile: &'a ProfileName,
    origin: String,
    sharing_origin: String,
    prediction: &'a SetPrediction,
}

impl Report<'_> {
    /// Job `i`'s band, percent: its model error and half its alone spread, in quadrature.
    fn band_pct(&self, i: usize) -> Option<f64> {
        let noise = self.prediction.jobs[i].spread.map(|s| s * 50.0);
        match (self.model_error[i].as_ref(), noise) {
            (Some(e), n) => Some(e.mape_pct.hypot(n.unwrap_or(0.0))),
            (None, n) => n,
        }
    }

    /// The footnote saying what the band holds.
    fn band_note(&self) -> String {
        let known: Vec<&HeldOutError> = self.model_error.iter().flatten().collect();
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
        format!(
            "± band: {} held-out error in {} for the job's class (MAPE of samples/s on measured sets its fit never saw: {}; `colo calibrate validate`), combined in quadrature with half the spread of the job's repeated alone measurements",
            self.band_model.phrase(),
            known[0].mode,
            classes.join(", ")
        )
    }

    fn table(&self) -> String {
        let (q, p, model) = (self.query, self.prediction, self.model);
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
            "{:<28} {:>12} {:>7} {:>12} {:>9} {:>9} {:>12}  {:<12}",
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
                "{:<28} {:>12} {:>7} {:>12.1} {:>9} {:>9.2} {:>12}  {:<12}",
                j.key.to_string(),
                dash(format!("{:.1}", j.samples_per_s)),
                dash(
                    self.band_pct(i)
                        .map_or("-".to_owned(), |b| format!("{b:.0}%"))
                ),
                j.exclusive_samples_per_s,
                dash(format!("{:.3}", j.fraction_of_exclusive)),
                j.memory_gib,
                place,
                j.origin.to_string()
            );
        }
        if p.fits_memory {
            let _ = writeln!(
                out,
                "total fraction of exclusive: {:.3} (predicted by {model}; rates alone are {}, sharing parameters {})",
                p.total_fraction, self.origin, self.sharing_origin
            );
            let _ = writeln!(out, "{}", self.band_note());
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
        if p.memory_gib > 0.0 {
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

    fn json(&self) -> anyhow::Result<String> {
        let (q, p) = (self.query, self.prediction);
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
                    "memory_gib": j.memory_gib,
                    "slice": j.slice,
                    "sm_budget_pct": j.sm_budget.map(|b| b * 100.0),
                    "origin": j.origin.to_string(),
                    "uncertainty_pct": self.band_pct(i).and_then(speed),
                    "model_error_pct": self.model_error[i].as_ref().map(|e| e.mape_pct).and_then(speed),
                    "noise_pct": j.spread.map(|s| s * 50.0).and_then(speed),
                })
            })
            .collect();
        let out = json!({
            "gpu": q.gpu.name,
            "mode": q.mode.to_string(),
            "perf_model": self.model,
            "profile": self.profile.as_str(),
            "profile_origin": self.origin,
            "sharing_parameters_origin": self.sharing_origin,
            "jobs": jobs,
            "total_fraction": speed(p.total_fraction),
            "memory_gib": p.memory_gib,
            "capacity_gib": p.capacity_gib,
            "fits_memory": p.fits_memory,
            "power_w": match self.power {
                SetPower::Known { watts, .. } => Some(*watts),
                SetPower::Unknown(_) => None,
            },
            "power_error_pct": match self.power {
                SetPower::Known { fit, .. } => fit.as_ref().map(|m| m.held_out_mape_pct),
                SetPower::Unknown(_) => None,
            },
            "power_origin": match self.power {
                SetPower::Known { origin, .. } => Some(origin.clone()),
                SetPower::Unknown(_) => None,
            },
            "power_note": self.power.line(),
        });
        Ok(format!("{}\n", serde_json::to_string_pretty(&out)?))
    }
}
