//! `colo predict`: per-job samples/s of a set of jobs sharing one GPU, with the memory verdict.
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use colo_calibrate::predictor::{self, ModelChoice, PredictorSpec};
use colo_sim::perf::ShareMode;
use colo_sim::perf::answer::{self, EXIT_OUT_OF_MEMORY};
use colo_sim::perf::query::SetQuery;
use colo_sim::workload::ModelKey;

use super::FormatArg;

/// Arguments of `colo predict`.
#[derive(clap::Args)]
pub struct PredictArgs {
    /// Jobs as MODEL:BATCH:IMAGE, e.g. resnet50:64:224 vit_b_16:32:224.
    #[arg(required = true)]
    pub jobs: Vec<String>,
    #[arg(long, default_value = "h200", help = super::gpu_help())]
    pub gpu: String,
    /// How the jobs share the GPU.
    #[arg(long, value_enum, default_value_t = ShareMode::Mps)]
    pub mode: ShareMode,
    /// MPS SM budgets in percent (1 to 100): one for all jobs or one per job, e.g. 45,48
    /// (default: none).
    #[arg(long, value_delimiter = ',', value_parser = sm_percent)]
    pub sm_pct: Vec<f64>,
    /// MIG layout, job i in slice i, e.g. 3g.71gb,4g.71gb or 7x1g.18gb. Mode mig: real slices,
    /// isolated. Mode mps: slices emulated as MPS clients with each slice's SM budget and memory
    /// limit, sharing the GPU's memory system (as `calibrate profile --mode mig-emulated` runs
    /// them; the same answer as --sm-pct with those budgets).
    #[arg(long)]
    pub layout: Option<String>,
    /// Profile file(s) (default: the profile shipped for the GPU); `gavel:v100` (or p100, k80)
    /// uses Gavel's measured pair table, jobs written like gavel_resnet-18:32:1.
    #[arg(long)]
    pub profile: Vec<PathBuf>,
    /// Folder of your own kernel traces (`colo calibrate trace --cmd ... --out DIR`); repeat
    /// for several. Its points are predicted by the kernel model with the shipped globals, no
    /// refit: alone rate and memory measured by the trace (default: none).
    #[arg(long)]
    pub traces: Vec<PathBuf>,
    /// For traces taken on another GPU: host time on this GPU's host over the tracing host's
    /// (2: its CPU runs the training loop's Python half as fast) [default: 1, the same CPU]
    #[arg(long, default_value_t = 1.0, hide_default_value = true, value_parser = positive_factor)]
    pub cpu_factor: f64,
    /// A traced job's alone speed measured on the GPU you ask about, as POINT=SAMPLES_PER_S
    /// (repeatable; kernel model): its trace's host time is rescaled to reproduce it, since
    /// hosts differ between GPUs of one type (default: the trace's own unprofiled speed).
    #[arg(long, value_parser = alone_rate)]
    pub alone_rate: Vec<(ModelKey, f64)>,
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

/// `--cpu-factor`: a positive, finite number.
fn positive_factor(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(f) if f.is_finite() && f > 0.0 => Ok(f),
        _ => Err(format!(
            "`{text}` is not a positive number (1 = the same CPU speed, 2 = twice the host time)"
        )),
    }
}

/// One `--alone-rate` value: POINT=SAMPLES_PER_S.
pub(super) fn alone_rate(text: &str) -> Result<(ModelKey, f64), String> {
    let (point, rate) = text
        .split_once('=')
        .ok_or_else(|| format!("`{text}`: give POINT=SAMPLES_PER_S, e.g. my_llm:16:1=118.5"))?;
    let key: ModelKey = point.parse().map_err(|e| format!("{e}"))?;
    let rate: f64 = rate
        .trim()
        .parse()
        .map_err(|_| format!("`{rate}` is not a number of samples/s"))?;
    if rate.is_finite() && rate > 0.0 {
        Ok((key, rate))
    } else {
        Err(format!("{rate}: an alone speed must be positive samples/s"))
    }
}

/// Performance model on the command line.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum ModelArg {
    /// Replays each job's alone kernel trace together (the profile's traced points).
    Kernel,
    /// The kernel replay without the cap at alone speed: what `calibrate fit` fits (a
    /// host-bound job may come out faster than alone under MPS).
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

impl ModelArg {
    /// The library's name for the model.
    fn choice(self) -> ModelChoice {
        match self {
            Self::Kernel => ModelChoice::Kernel,
            Self::KernelRaw => ModelChoice::KernelRaw,
            Self::Parametric => ModelChoice::Parametric,
            Self::Exclusive => ModelChoice::Exclusive,
            Self::EqualShare => ModelChoice::EqualShare,
            Self::FixedSlowdown => ModelChoice::FixedSlowdown,
        }
    }
}

/// Runs `colo predict`.
pub fn run(args: PredictArgs) -> anyhow::Result<ExitCode> {
    let jobs = args
        .jobs
        .iter()
        .map(|j| j.parse::<ModelKey>())
        .collect::<Result<Vec<_>, _>>()?;
    let spec = PredictorSpec {
        gpu: args.gpu.clone(),
        profiles: args.profile.clone(),
        traces: args.traces.clone(),
        alone_rates: args.alone_rate.clone(),
        model: args.model.choice(),
        jobs: jobs.clone(),
        cpu_factor: args.cpu_factor,
    };
    let built = predictor::build(&spec)?;
    for note in &built.notes {
        eprintln!("{note}");
    }
    let predictor = built.predictor;
    let gpu = predictor.gpu;
    let layout = args
        .layout
        .as_deref()
        .map(|text| gpu.parse_mig_layout(text))
        .transpose()
        .context("--layout")?;
    let query = SetQuery {
        gpu,
        mode: args.mode,
        jobs,
        sm_budgets: args.sm_pct.iter().map(|p| p / 100.0).collect(),
        layout,
    };
    let answer = answer::answer(&predictor, query)?;
    match args.format {
        FormatArg::Table => super::print(&answer.table())?,
        FormatArg::Json => super::print(&format!(
            "{}\n",
            serde_json::to_string_pretty(&answer.json())?
        ))?,
    }
    if answer.prediction.fits_memory {
        Ok(ExitCode::SUCCESS)
    } else {
        Ok(ExitCode::from(EXIT_OUT_OF_MEMORY))
    }
}
