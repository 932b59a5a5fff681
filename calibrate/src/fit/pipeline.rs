//! The fit commands end to end (`colo calibrate fit | validate | plot | miso`): a [`Dataset`]
//! in; the profile, its kernel tables, the validation report and the predictions CSV out, or
//! the figures of the validation. The command line only loads the data and prints.
use colo_sim::workload::trace::civil_from_days;
use std::path::{Path, PathBuf};

use colo_plots::{
    ChartText, Curve, FigureOut, Format, PlotError, ScatterPoint, plot_curves,
    plot_measured_vs_predicted,
};
use colo_sim::fsutil::write_atomic;
use colo_sim::perf::{Origin, Profile};
use thiserror::Error;

use super::measured::Dataset;
use super::parametric::Fitted;
use super::{kernel, power, report, validate};
use crate::trace::{self, TraceError, TracedFolder};
use colo_sim::perf::MeasuredMode;

/// Where a long fit has got, for a progress line.
pub trait FitProgress {
    /// What is being done now (replaces the previous stage).
    fn stage(&self, what: &str);
    /// A line to show above the progress line.
    fn note(&self, line: &str);
}

/// No progress shown.
pub struct Quiet;

impl FitProgress for Quiet {
    fn stage(&self, _: &str) {}
    fn note(&self, _: &str) {}
}

/// Why a fit's files could not be written. Fatal: files already written stay.
#[derive(Debug, Error)]
pub enum PipelineError {
    /// The kernel traces could not be read.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// The kernel tables could not be serialised.
    #[error("serialising kernel tables: {0}")]
    Tables(#[source] std::io::Error),
    /// The profile could not be serialised.
    #[error("serialising the profile: {0}")]
    Profile(#[source] ron::Error),
    /// An external table could not be read (`calibrate miso`).
    #[error(transparent)]
    Table(#[from] super::TableError),
    /// A file could not be written.
    #[error("writing {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
}

/// Writes `bytes` to `path` whole ([`write_atomic`]).
fn write(path: &Path, bytes: &[u8]) -> Result<(), PipelineError> {
    write_atomic(path, bytes).map_err(|source| PipelineError::Write {
        path: path.to_owned(),
        source,
    })
}

/// What `colo calibrate fit` writes, and how its files name the command.
pub struct FitRequest<'a> {
    /// Folder of the measurements; its `traces/`, when present, fits the kernel model.
    pub data: &'a Path,
    /// Profile file to write; the kernel tables (`-kernels.json.gz`), the validation report
    /// (`-fit-report.txt`) and the predictions (`-fit-predictions.csv`) go beside it.
    pub out: &'a Path,
    /// Date in the profile's provenance (YYYY-MM-DD).
    pub date: &'a str,
    /// The command line, written at the top of the profile and the report.
    pub command: &'a str,
    /// Whether the fake runner's traces are taken too (as its records were).
    pub allow_fake: bool,
}

/// Fits the profile of `ds` (parametric model, power model, and the kernel model's globals when
/// `req.data` has traces), validates it on held-out runs, writes every file of `req`, and
/// returns the summary `colo calibrate fit` prints.
///
/// # Errors
/// [`PipelineError`]: unreadable traces, or a file that cannot be serialised or written.
pub fn fit_profile(
    ds: &Dataset,
    req: &FitRequest<'_>,
    progress: &dyn FitProgress,
) -> Result<String, PipelineError> {
    let full = validate::fit_on(ds, &|_| true);
    let mut profile = validate::fitted_profile(ds, &full, req.date);
    progress.stage("calibrate fit: fitting the power model");
    let (power_params, power_scores) = power::fit_power(ds);
    let power_text = power::power_table(&power_scores, power_params.as_ref().map(|p| p.form));
    profile.power = power_params;
    progress.stage("calibrate fit: reading kernel traces");
    let kernel_check = match traced_folder(req.data, ds, req.allow_fake, progress)? {
        Some(folder) => {
            let tables_path = beside(req.out, "-kernels.json.gz");
            let file_name = tables_path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            progress.note(&format!(
                "kernel model: {} traced points; fitting its globals and validating ...",
                folder.tables.traces.len()
            ));
            progress.stage("calibrate fit: fitting and validating the kernel model");
            let kv = kernel::validate(ds, &folder.tables);
            let origin = if folder.fake {
                Origin::Fake
            } else if kv.every_stage {
                Origin::Fitted
            } else {
                Origin::Provisional
            };
            profile.kernel = Some(kernel::kernel_params(
                &file_name,
                &folder.tables,
                kv.fitted,
                origin,
                kernel::held_out_errors(&kv.jobs),
            ));
            let bytes = kernel::tables_bytes(&folder.tables).map_err(PipelineError::Tables)?;
            write(&tables_path, &bytes)?;
            Some(kv)
        }
        None => None,
    };
    progress.stage("calibrate fit: validating on held-out runs");
    let checks = validate::validate(ds);
    profile.held_out_error = validate::parametric_held_out_errors(&checks.jobs);
    let text = report::profile_file(&profile, req.command).map_err(PipelineError::Profile)?;
    write(req.out, text.as_bytes())?;
    let table = report::validation_table(ds, &validate::error_rows(&checks.jobs), &checks.memory);
    let (report_path, csv_path) = (
        beside(req.out, "-fit-report.txt"),
        beside(req.out, "-fit-predictions.csv"),
    );
    let kernel_text = kernel_check
        .as_ref()
        .map_or(String::new(), |kv| report::kernel_table(kv, &checks.jobs));
    let globals = globals_text(ds, &full);
    // The report names the sharing parameters only when some are defaults (no data constrained
    // them), so that a report of a complete fit reads as before.
    let defaults_line = if globals.starts_with("fitted: ") {
        String::new()
    } else {
        format!("sharing parameters: {globals}\n")
    };
    let command = req.command;
    write(
        &report_path,
        format!("{command}\n{defaults_line}{table}{kernel_text}{power_text}").as_bytes(),
    )?;
    write(&csv_path, report::predictions_csv(&checks.jobs).as_bytes())?;
    Ok(format!(
        "wrote {} ({globals}; {} LM iterations, converged: {})\n{table}{kernel_text}{power_text}report: {}, predictions: {}\n",
        req.out.display(),
        full.iterations,
        full.converged,
        report_path.display(),
        csv_path.display()
    ))
}

/// `colo calibrate miso`: the A100-40GB profile from MISO's slice runs in `data`, with
/// time-slicing, MPS and memory-context parameters carried over from `source` (named
/// `source_name`), written to `out` with its report beside it; returns what the command prints.
///
/// # Errors
/// [`PipelineError`]: unreadable tables, or a file that cannot be serialised or written.
pub fn miso_profile(
    data: &Path,
    source: &Profile,
    source_name: &str,
    out: &Path,
    date: &str,
) -> Result<String, PipelineError> {
    let (profile, quality) = super::miso::a100_profile(data, source, source_name, date)?;
    let command = format!(
        "colo calibrate miso --data {} --transfer-from {source_name} --out {}",
        data.display(),
        out.display()
    );
    let text = report::profile_file(&profile, &command).map_err(PipelineError::Profile)?;
    write(out, text.as_bytes())?;
    let table = report::miso_table(&quality);
    write(
        &beside(out, "-fit-report.txt"),
        format!("{command}\n{table}").as_bytes(),
    )?;
    Ok(format!("wrote {}\n{table}", out.display()))
}

/// The fitted sharing parameters, each group labelled by where it came from: `fitted` (or
/// `fitted to fake records`), or `default` when no set of the data constrained it.
pub fn globals_text(ds: &Dataset, full: &Fitted) -> String {
    let c = validate::constrained(&validate::problem(ds, &|_| true));
    let g = full.globals;
    let parts = [
        (
            c.timeslice,
            format!("switch overhead {:.3}", g.switch_overhead),
        ),
        (c.mps, format!("MPS interference {:.3}", g.interference)),
        (c.mps, format!("MPS launch queueing {:.3}", g.queueing)),
    ];
    let fitted: Vec<&str> = parts.iter().filter(|p| p.0).map(|p| p.1.as_str()).collect();
    let defaults: Vec<&str> = parts
        .iter()
        .filter(|p| !p.0)
        .map(|p| p.1.as_str())
        .collect();
    let label = if ds.fake {
        "fitted to fake records"
    } else {
        "fitted"
    };
    let mut groups = Vec::new();
    if !fitted.is_empty() {
        groups.push(format!("{label}: {}", fitted.join(", ")));
    }
    if !defaults.is_empty() {
        groups.push(format!(
            "default (start values, no set constrained them): {}",
            defaults.join(", ")
        ));
    }
    groups.join("; ")
}

/// The kernel model judged on `ds`, when `data` has a `traces/` folder of kernel traces.
///
/// # Errors
/// [`TraceError`] if the traces cannot be read.
pub fn kernel_validation(
    data: &Path,
    ds: &Dataset,
    allow_fake: bool,
    progress: &dyn FitProgress,
) -> Result<Option<kernel::KernelValidation>, TraceError> {
    let Some(folder) = traced_folder(data, ds, allow_fake, progress)? else {
        return Ok(None);
    };
    Ok(Some(kernel::validate(ds, &folder.tables)))
}

/// The kernel traces under `data/traces`, if there are any, anchored to the alone runs of `ds`
/// (see [`kernel::anchor_to_alone_runs`]); skipped files are noted.
fn traced_folder(
    data: &Path,
    ds: &Dataset,
    allow_fake: bool,
    progress: &dyn FitProgress,
) -> Result<Option<TracedFolder>, TraceError> {
    let dir = data.join("traces");
    if !dir.is_dir() {
        return Ok(None);
    }
    let mut folder = trace::read_folder_of(&dir, ds.gpu, allow_fake)?;
    kernel::anchor_to_alone_runs(&mut folder.tables, &ds.classes);
    for (path, why) in &folder.skipped {
        progress.note(&format!("skipped trace {}: {why}", path.display()));
    }
    Ok((!folder.tables.traces.is_empty()).then_some(folder))
}

/// `colo calibrate plot`'s figures of `ds` into `dir` (PNG): measured against predicted
/// samples/s per mode (the validation's fits, held-out runs marked), and speed against SM
/// budget per model (measured and fitted). Returns the files written.
///
/// # Errors
/// [`PlotError`] if a figure cannot be drawn or written.
pub fn draw_figures(
    ds: &Dataset,
    checks: &validate::Validation,
    dir: &Path,
) -> Result<Vec<PathBuf>, PlotError> {
    let gpu = ds.gpu;
    let mut written = Vec::new();
    for mode in [
        MeasuredMode::Timeslice,
        MeasuredMode::Mps,
        MeasuredMode::MigEmulated,
    ] {
        let points: Vec<ScatterPoint> = checks
            .jobs
            .iter()
            .filter(|j| j.mode == mode && j.split != "model held out")
            .map(|j| ScatterPoint {
                label: j.split.clone(),
                measured: j.measured,
                predicted: j.predicted,
            })
            .collect();
        if points.is_empty() {
            continue;
        }
        let text = ChartText {
            title: format!(
                "{} {mode}: predicted (fitted) vs measured samples/s per job",
                gpu.name
            ),
            x_label: "measured samples/s (log)".into(),
            y_label: "predicted samples/s (fitted, log)".into(),
        };
        let out = FigureOut {
            dir: dir.to_path_buf(),
            stem: format!("measured_vs_predicted_{mode}"),
            format: Format::Png,
        };
        written.extend(plot_measured_vs_predicted(&points, &text, &out)?);
    }
    let curves = validate::budget_curves(ds, &checks.small_sets_fit);
    for (stem, which) in [
        ("sm_budget_measured", "measured"),
        ("sm_budget_fitted", "fitted"),
    ] {
        let lines: Vec<Curve> = curves
            .iter()
            .map(|c| Curve {
                label: c.job.clone(),
                points: if which == "measured" {
                    c.measured.clone()
                } else {
                    c.fitted.clone()
                },
                kind: colo_plots::CurveKind::Line,
            })
            .collect();
        if lines.is_empty() {
            continue;
        }
        let text = ChartText {
            title: format!("{} alone at an SM budget ({which})", gpu.name),
            x_label: "SM budget (% of SMs; MPS or emulated MIG slice)".into(),
            y_label: format!("speed (fraction of alone, {which})"),
        };
        let out = FigureOut {
            dir: dir.to_path_buf(),
            stem: stem.into(),
            format: Format::Png,
        };
        written.extend(plot_curves(&lines, &text, &out)?);
    }
    Ok(written)
}

/// `dir/h200.ron` + `-fit-report.txt` -> `dir/h200-fit-report.txt`.
pub fn beside(profile: &Path, suffix: &str) -> PathBuf {
    let stem = profile
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    profile.with_file_name(format!("{stem}{suffix}"))
}

/// Today's date (UTC) as YYYY-MM-DD, for a profile's provenance.
pub fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_37_the_globals_line_says_which_the_data_fitted_and_which_are_defaults() {
        // The smoke records without their MPS and emulated-MIG sets: one time-sliced pair fits
        // the switch overhead; MPS interference and queueing stay at their start.
        let ds = validate::tests::smoke(&|m| {
            !matches!(m, MeasuredMode::Mps | MeasuredMode::MigEmulated)
        });
        let full = validate::fit_on(&ds, &|_| true);
        let text = globals_text(&ds, &full);
        let start = validate::START;
        assert!(text.starts_with("fitted: switch overhead "), "{text}");
        assert!(
            text.contains(&format!(
                "default (start values, no set constrained them): MPS interference {:.3}, MPS launch queueing {:.3}",
                start.interference, start.queueing
            )),
            "{text}"
        );
    }

    #[test]
    fn issue_37_the_figures_drawn_are_files_that_exist() {
        let ds = validate::tests::smoke(&|_| true);
        let dir = tempfile::tempdir().expect("temp dir");
        let checks = validate::validate(&ds);
        let figures = draw_figures(&ds, &checks, dir.path()).expect("drawn");
        assert!(!figures.is_empty());
        for f in &figures {
            assert!(f.starts_with(dir.path()), "{}", f.display());
            assert!(
                std::fs::metadata(f).expect("written").len() > 1000,
                "{}",
                f.display()
            );
        }
    }

    #[test]
    fn issue_37_today_is_a_date_of_this_century() {
        let t = today();
        let parts: Vec<u32> = t.split('-').map(|p| p.parse().expect("digits")).collect();
        assert_eq!((t.len(), parts.len()), (10, 3), "{t}");
        assert!(
            parts[0] >= 2026 && parts[0] < 2100 && (1..=12).contains(&parts[1]),
            "{t}"
        );
        assert!((1..=31).contains(&parts[2]), "{t}");
    }

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_787), (2026, 11, 30));
    }

    #[test]
    fn beside_puts_the_suffix_after_the_stem() {
        assert_eq!(
            beside(Path::new("dir/h200.ron"), "-fit-report.txt"),
            Path::new("dir/h200-fit-report.txt")
        );
    }
}
