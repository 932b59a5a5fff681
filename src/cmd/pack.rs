//! `colo pack`: the best packings of a few jobs on GPUs of one type, beside one job per GPU.
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use colo_calibrate::shipped;
use colo_sim::hardware;
use colo_sim::pack::{PackJob, PackProgress, PackRequest, output, pack_with_progress};
use colo_sim::workload::ModelKey;

use super::FormatArg;

/// Arguments of `colo pack`.
#[derive(clap::Args)]
pub struct PackArgs {
    /// Jobs as MODEL:BATCH:IMAGE, each optionally with @MIN, the least fraction of its alone
    /// speed it accepts (default: any), e.g. resnet50:64:224@0.5 vit_b_16:32:224.
    #[arg(required = true)]
    pub jobs: Vec<String>,
    #[arg(long, default_value = "h200", help = super::gpu_help())]
    pub gpu: String,
    /// Use at most this many GPUs (default: the fewest that meet every minimum).
    #[arg(long)]
    pub gpus: Option<u32>,
    /// Most jobs on one GPU.
    #[arg(long, default_value_t = 4)]
    pub max_per_gpu: usize,
    /// How many of the best packings to list.
    #[arg(long, default_value_t = 5)]
    pub top: usize,
    /// Profile file(s) (default: the profile shipped for the GPU).
    #[arg(long)]
    pub profile: Vec<PathBuf>,
    /// Performance model (default: kernel, as `colo predict`; it falls back to parametric for
    /// jobs without a kernel trace, and each job's row says which answered).
    #[arg(long, value_enum, default_value_t = PackModel::Kernel)]
    pub model: PackModel,
    /// Folder of your own kernel traces (`colo calibrate trace --cmd ... --out DIR`); repeat
    /// for several (kernel model; default: none).
    #[arg(long)]
    pub traces: Vec<PathBuf>,
    /// A traced job's alone speed measured on the GPU you ask about, as POINT=SAMPLES_PER_S
    /// (repeatable; kernel model; default: the trace's own unprofiled speed).
    #[arg(long, value_parser = super::predict::alone_rate)]
    pub alone_rate: Vec<(ModelKey, f64)>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = FormatArg::Table)]
    pub format: FormatArg,
}

/// Performance model of `colo pack`.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum PackModel {
    /// Replays each job's alone kernel trace together (the validated model).
    Kernel,
    /// Demand-based model with the profile's fitted parameters.
    Parametric,
}

/// Runs `colo pack`.
pub fn run(args: PackArgs) -> anyhow::Result<ExitCode> {
    let gpu = hardware::gpu(&args.gpu)?;
    let profiles = Arc::new(shipped::load(&args.profile)?);
    let profile_name = shipped::name(&args.profile, profiles.get(gpu)?.1, gpu.name);
    let jobs = args
        .jobs
        .iter()
        .map(|j| j.parse::<PackJob>())
        .collect::<Result<Vec<_>, _>>()?;
    let keys: Vec<ModelKey> = jobs.iter().map(|j| j.key.clone()).collect();
    let built = colo_calibrate::predictor::pack_model(
        &profiles,
        &args.profile,
        &args.traces,
        &args.alone_rate,
        gpu,
        &keys,
        matches!(args.model, PackModel::Kernel),
    )?;
    for note in &built.notes {
        eprintln!("{note}");
    }
    let request = PackRequest {
        gpu,
        jobs,
        gpus: args.gpus,
        max_jobs_per_gpu: args.max_per_gpu,
        top: args.top,
    };
    let started = Instant::now();
    let progress = super::progress::Progress::new("pack: counting GPU configurations")?;
    let on_progress = |p: PackProgress| progress.set_message(p.to_string());
    let report = pack_with_progress(built.model.as_ref(), &request, &on_progress);
    drop(progress);
    let mut report = report?;
    if let Some(described) = built.described {
        report.perf_model = described;
    }
    let seconds = started.elapsed().as_secs_f64();
    let text = match args.format {
        FormatArg::Table => output::table(&request, &report, &profile_name.phrase(), seconds),
        FormatArg::Json => {
            let value = output::to_json(&request, &report, profile_name.as_str(), seconds);
            format!("{}\n", serde_json::to_string_pretty(&value)?)
        }
    };
    super::print(&text)?;
    Ok(ExitCode::SUCCESS)
}
