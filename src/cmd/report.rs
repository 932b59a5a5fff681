//! `colo report`: generated reports. `colo report paper` reproduces the collocation study on
//! one GPU and writes a Markdown page with figures.
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use super::pack::PackModel;
use super::plot::FormatArg;
use anyhow::Context;
use colo_sim::study::{self, StudySpec};

/// Arguments of `colo report`.
#[derive(clap::Args)]
pub struct ReportArgs {
    #[command(subcommand)]
    command: ReportCommand,
}

#[derive(clap::Subcommand)]
enum ReportCommand {
    /// Reproduce the collocation study (Robroek et al., EuroMLSys 2024) on one GPU: every set
    /// of its matrix predicted, its conclusions checked, DIR/report.md with figures.
    #[command(
        after_help = "Examples:\n  colo report paper --gpu h200 --out docs/paper-h200\n  colo report paper --gpu a100-40gb --out /tmp/a100   (from H200 traces transferred to the A100)\n  colo report paper --gpu a100-40gb --model parametric --out /tmp/a100-miso   (MISO's A100 profile)"
    )]
    Paper(PaperArgs),
}

/// Arguments of `colo report paper`.
#[derive(clap::Args)]
struct PaperArgs {
    /// GPU to reproduce the study on: h200 or a100-40gb (any GPU with a spec file).
    #[arg(long, default_value = "h200")]
    gpu: String,
    /// Profile file [default: the spec's first existing profile: the fitted one, else the
    /// provisional one]
    #[arg(long)]
    profile: Option<PathBuf>,
    /// Reproduction spec [default: scenarios/paper/GPU.report.ron]
    #[arg(long)]
    spec: Option<PathBuf>,
    /// Calibration store of this GPU; the study's sets found in it get a section of measured
    /// numbers [default: calibrate/data/GPU when it exists, else none]
    #[arg(long, value_name = "DIR")]
    data: Option<PathBuf>,
    /// Folder for report.md and figures/, written whole: it is replaced, nothing of an earlier
    /// run stays in it.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Which files to write for each figure (report.md links the PNGs, or the SVGs with svg).
    #[arg(long, value_enum, default_value_t = FormatArg::Png)]
    format: FormatArg,
    /// Performance model: kernel replays the study's points from their kernel traces (on
    /// a100-40gb: the H200's traces transferred, labelled so; untraced points fall back to
    /// parametric), parametric predicts from the profile's fitted demands.
    #[arg(long, value_enum, default_value_t = PackModel::Kernel)]
    model: PackModel,
}

/// Runs `colo report`.
pub fn run(args: ReportArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        ReportCommand::Paper(args) => paper(args),
    }
}

fn paper(args: PaperArgs) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    let spec_path = args
        .spec
        .unwrap_or_else(|| PathBuf::from(format!("scenarios/paper/{}.report.ron", args.gpu)));
    if !spec_path.is_file() {
        anyhow::bail!(
            "no reproduction spec {}; run from the repository root, or pass --spec FILE (shipped: scenarios/paper/h200.report.ron, scenarios/paper/a100-40gb.report.ron)",
            spec_path.display()
        );
    }
    let spec = StudySpec::load(&spec_path)?;
    // The profile is a file: its kernel tables are read beside it; a GPU without them gets the
    // shipped transferred tables.
    let build = |profiles: std::sync::Arc<colo_sim::perf::ProfileSet>,
                 path: Option<&std::path::Path>| {
        let named: Vec<PathBuf> = path.map(PathBuf::from).into_iter().collect();
        colo_calibrate::shipped::kernel_model(profiles, &named).map_err(|e| e.to_string())
    };
    let kernel: Option<&study::KernelBuilder<'_>> = match args.model {
        PackModel::Kernel => Some(&build),
        PackModel::Parametric => None,
    };
    let rep = study::reproduce_with(&spec, args.profile.as_deref(), kernel)?;
    let format: colo_plots::Format = args.format.into();
    let data = args.data.or_else(|| {
        let dir = PathBuf::from(format!("calibrate/data/{}", args.gpu));
        dir.is_dir().then_some(dir)
    });
    if let Some(dir) = data.as_ref().filter(|d| !d.is_dir()) {
        anyhow::bail!("--data {}: no such folder of measurements", dir.display());
    }
    let mut inputs = vec![spec_path.as_path()];
    inputs.extend(rep.profile.as_ref().map(|(path, _)| path.as_path()));
    inputs.extend(data.as_deref());
    colo_sim::fsutil::check_outside(&args.out, &inputs)
        .with_context(|| format!("writing {}", args.out.display()))?;
    super::interrupt_removes_outputs()?;
    let written =
        colo_calibrate::report::write_paper_report(&rep, data.as_deref(), &args.out, format)
            .with_context(|| format!("writing the report into {}", args.out.display()))?;
    let profile = match &rep.profile {
        Some((path, origin)) => format!("profile {} ({origin})", path.display()),
        None => format!(
            "no profile for {}: every set is listed as not covered",
            rep.gpu.name
        ),
    };
    let (predicted, total) = (written.predicted, rep.sets.len());
    super::print(&format!(
        "wrote {} ({} figure files) in {:.1} s: {predicted} of {total} sets predicted (emulated) on {}, {} also measured, {profile}\n",
        written.report.display(),
        written.figures.len(),
        started.elapsed().as_secs_f64(),
        rep.gpu.name,
        written.measured,
    ))?;
    Ok(ExitCode::SUCCESS)
}
