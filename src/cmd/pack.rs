//! `colo pack`: the best packings of a few jobs on GPUs of one type, beside one job per GPU.
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use colo_calibrate::shipped;
use colo_sim::hardware;
use colo_sim::pack::{PackJob, PackProgress, PackRequest, output, pack_with_progress};
use colo_sim::perf::Parametric;

use super::predict::FormatArg;

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
    /// Output format.
    #[arg(long, value_enum, default_value_t = FormatArg::Table)]
    pub format: FormatArg,
}

/// Runs `colo pack`.
pub fn run(args: PackArgs) -> anyhow::Result<ExitCode> {
    let gpu = hardware::gpu(&args.gpu)?;
    let profiles = Arc::new(shipped::load(&args.profile)?);
    let profile_name = shipped::name(&args.profile, profiles.get(gpu)?.1, gpu.name);
    let model = Parametric::new(profiles.clone());
    let jobs = args
        .jobs
        .iter()
        .map(|j| j.parse::<PackJob>())
        .collect::<Result<Vec<_>, _>>()?;
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
    let report = pack_with_progress(&model, &request, &on_progress);
    drop(progress);
    let report = report?;
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
