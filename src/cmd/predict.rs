//! `colo predict`: per-job samples/s of a set of jobs sharing one GPU, with the memory verdict.
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use colo_calibrate::fit::gavel_model::shipped_predictor;
use colo_calibrate::shipped;
use colo_sim::hardware;
use colo_sim::perf::answer::{self, EXIT_OUT_OF_MEMORY, Predictor};
use colo_sim::perf::kernel::raw::add_user_traces;
use colo_sim::perf::query::SetQuery;
use colo_sim::perf::{EqualShare, Exclusive, FixedSlowdown, Parametric, PerfModel, ShareMode};
use colo_sim::workload::ModelKey;

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
    /// MIG layout, job i in slice i, e.g. 3g.71gb,4g.71gb or 7x1g.18gb (mode mig).
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
    let predictor = match &gavel {
        Some(name) => {
            let gpu = hardware::gavel_gpu(name).with_context(|| {
                let names: Vec<&str> = hardware::gavel_gpus().iter().map(|g| g.name).collect();
                let (last, rest) = names.split_last().unwrap_or((&"", &[]));
                format!(
                    "gavel:{name}: Gavel's table has {} and {last}",
                    rest.join(", ")
                )
            })?;
            shipped_predictor(gpu)?
        }
        None => profile_predictor(&args)?,
    };
    let gpu = predictor.gpu;
    let predictor = Predictor {
        parametric: matches!(args.model, ModelArg::Parametric),
        ..predictor
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

/// The `--model` asked for over the profiles given (or shipped) for `--gpu`.
fn profile_predictor(args: &PredictArgs) -> anyhow::Result<Predictor> {
    let gpu = hardware::gpu(&args.gpu)?;
    let profiles = Arc::new(shipped::load(&args.profile)?);
    let (_, path) = match profiles.get(gpu) {
        Ok(found) => found,
        // The library's hint says "pass --profile"; here --profile was passed, for other GPUs.
        Err(_) if !args.profile.is_empty() => anyhow::bail!(
            "--profile gives profiles for {} only, not for --gpu {} (the default is h200); pass \
             --gpu {}, or a --profile for {}",
            profiles.gpus().join(", "),
            gpu.name,
            profiles.gpus().first().map_or("GPU", String::as_str),
            gpu.name
        ),
        Err(err) => return Err(err.into()),
    };
    let name = shipped::name(&args.profile, path, gpu.name);
    let mut kernel = None;
    let model: Arc<dyn PerfModel> = match args.model {
        ModelArg::Kernel => {
            let k = kernel_with_traces(
                &profiles,
                &args.profile,
                &args.traces,
                &args.alone_rate,
                gpu,
                &args.jobs,
            )?;
            let k = Arc::new(k);
            kernel = Some(k.clone());
            k
        }
        _ if !args.traces.is_empty() => {
            anyhow::bail!("--traces is read by the kernel model only; drop --model or --traces")
        }
        ModelArg::Parametric => Arc::new(Parametric::new(profiles.clone())),
        ModelArg::Exclusive => Arc::new(Exclusive::new(profiles.clone())),
        ModelArg::EqualShare => Arc::new(EqualShare::new(profiles.clone())),
        ModelArg::FixedSlowdown => Arc::new(FixedSlowdown::new(
            profiles.clone(),
            FixedSlowdown::DEFAULT_PER_CORUNNER,
        )),
    };
    Ok(Predictor::from_profiles(
        &profiles, gpu, model, kernel, name,
    )?)
}

/// The kernel model over `profiles` (read from `profile_paths`, or the shipped tables), with
/// the user's trace folders added and `--alone-rate` anchors applied; skipped files are
/// warned about, and where each job of `shown` was traced is said on stderr.
pub(super) fn kernel_with_traces(
    profiles: &Arc<colo_sim::perf::ProfileSet>,
    profile_paths: &[PathBuf],
    traces: &[PathBuf],
    alone_rates: &[(ModelKey, f64)],
    gpu: &'static hardware::GpuSpec,
    shown: &[String],
) -> anyhow::Result<colo_sim::perf::KernelModel> {
    let mut k = shipped::kernel_model(profiles.clone(), profile_paths)?;
    // Only the asked points' files are read: a folder may hold many traces.
    let wanted: Vec<String> = shown
        .iter()
        .map(|job| job.split('@').next().unwrap_or(job).to_owned())
        .chain(alone_rates.iter().map(|(key, _)| key.to_string()))
        .collect();
    let (notes, skipped) = add_user_traces(&mut k, traces, gpu, Some(&wanted))?;
    for (path, why) in &skipped {
        eprintln!("warning: {}: skipped: {why}", path.display());
    }
    for (point, note) in notes.iter().filter(|(p, _)| {
        shown
            .iter()
            .any(|job| job.split('@').next() == Some(p.as_str()))
    }) {
        eprintln!("trace of {point}: {note}");
    }
    for (key, rate) in alone_rates {
        if !k.anchor(gpu, key, *rate) {
            anyhow::bail!(
                "--alone-rate {key}={rate}: {key} has no kernel trace on {}; trace it first \
                 (colo calibrate trace) or pass its folder with --traces",
                gpu.name
            );
        }
        eprintln!("{key}: alone speed anchored to {rate} samples/s (measured, --alone-rate)");
    }
    Ok(k)
}
