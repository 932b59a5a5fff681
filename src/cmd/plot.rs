//! `colo plot`: draw the figures of one or more result folders (PNG and/or SVG).
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use colo_sim::fsutil::{self, WholeDir};

/// Arguments of `colo plot`.
#[derive(clap::Args)]
pub struct PlotArgs {
    /// Result folders written by `colo simulate`; several are overlaid in one figure each (a
    /// sweep's folder, holding sweep.csv, stands for all its variants).
    #[arg(required = true, value_name = "RESULTS_DIR")]
    results: Vec<PathBuf>,
    /// Folder the figures are written to [default: the first RESULTS_DIR's figures/].
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Which files to write for each figure.
    #[arg(long, value_enum, default_value_t = FormatArg::Both)]
    format: FormatArg,
}

/// Figure file formats on the command line (kept apart from the library's type); `colo
/// report paper` takes them too.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum FormatArg {
    /// PNG only.
    Png,
    /// SVG only.
    Svg,
    /// PNG and SVG.
    Both,
}

impl From<FormatArg> for colo_plots::Format {
    fn from(arg: FormatArg) -> Self {
        match arg {
            FormatArg::Png => colo_plots::Format::Png,
            FormatArg::Svg => colo_plots::Format::Svg,
            FormatArg::Both => colo_plots::Format::Both,
        }
    }
}

/// Runs `colo plot`: reads the folders, writes the figures, lists them on stdout.
pub fn run(args: PlotArgs) -> anyhow::Result<ExitCode> {
    let folders = colo_plots::load_results(&args.results).context("reading result folders")?;
    let out_dir = match args.out {
        Some(dir) => dir,
        None => args.results[0].join("figures"),
    };
    super::interrupt_removes_outputs()?;
    let writing = || format!("writing {}", out_dir.display());
    let inputs: Vec<&Path> = args.results.iter().map(PathBuf::as_path).collect();
    fsutil::check_outside(&out_dir, &inputs).with_context(writing)?;
    let labels: Vec<&str> = folders.iter().map(|f| f.label.as_str()).collect();
    let whole =
        WholeDir::begin_result(&out_dir, "figures", &labels.join(", ")).with_context(writing)?;
    let progress = super::progress::Progress::new(format!(
        "plot: drawing figures from {} result folder(s)",
        folders.len()
    ))?;
    let report = colo_plots::plot_results(&folders, whole.path(), args.format.into());
    drop(progress);
    let mut report = report.context("drawing figures")?;
    report.written = report.written.iter().map(|f| whole.final_path(f)).collect();
    whole.commit().with_context(writing)?;
    for skipped in &report.skipped {
        eprintln!("skipped {skipped}");
    }
    let mut stdout = std::io::stdout().lock();
    writeln!(
        stdout,
        "wrote {} figure files to {} from {} result folder(s): {} (figures show emulated numbers)",
        report.written.len(),
        out_dir.display(),
        folders.len(),
        labels.join(", ")
    )?;
    for path in &report.written {
        writeln!(stdout, "  {}", path.display())?;
    }
    Ok(ExitCode::SUCCESS)
}
