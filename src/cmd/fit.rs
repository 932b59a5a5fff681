//! `colo calibrate fit | validate | gavel | miso`: fit profiles from measurements and say how
//! wrong they are on runs the fit never saw.
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use colo_calibrate::fit::{gavel, kernel, measured, miso, power, report, validate};
use colo_calibrate::trace;
use colo_sim::fsutil::{self, WholeDir, write_atomic};
use colo_sim::hardware;
use colo_sim::perf::{Origin, Profile};

use super::progress::Progress;

/// Arguments of `colo calibrate fit`.
#[derive(clap::Args)]
pub struct FitArgs {
    /// Folder of measurements (*.jsonl), e.g. calibrate/data/h200.
    pub data: PathBuf,
    /// GPU the measurements were taken on.
    #[arg(long, default_value = "h200")]
    pub gpu: String,
    /// Profile to write; the validation report (`<stem>-fit-report.txt`) and predictions
    /// (`<stem>-fit-predictions.csv`) go beside it.
    #[arg(long)]
    pub out: PathBuf,
    /// Date recorded in the profile's provenance (default: today, UTC).
    #[arg(long)]
    pub date: Option<String>,
    /// Also take records of the fake runner (`colo calibrate run --fake-gpu`: invented
    /// numbers, for tests) as if taken on --gpu; everything written is then labelled fake.
    #[arg(long)]
    pub allow_fake: bool,
}

/// Arguments of `colo calibrate validate`.
#[derive(clap::Args)]
pub struct ValidateArgs {
    /// Folder of measurements (*.jsonl), e.g. calibrate/data/h200.
    pub data: PathBuf,
    /// GPU the measurements were taken on.
    #[arg(long, default_value = "h200")]
    pub gpu: String,
    /// Also write every prediction to this CSV.
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// Also write every kernel-model prediction to this CSV (when DATA/traces exists).
    #[arg(long)]
    pub kernel_csv: Option<PathBuf>,
    /// Also take records of the fake runner (`colo calibrate run --fake-gpu`: invented
    /// numbers, for tests) as if taken on --gpu; everything written is then labelled fake.
    #[arg(long)]
    pub allow_fake: bool,
}

/// Arguments of `colo calibrate plot`.
#[derive(clap::Args)]
pub struct PlotArgs {
    /// Folder of measurements (*.jsonl), e.g. calibrate/data/h200.
    pub data: PathBuf,
    /// GPU the measurements were taken on.
    #[arg(long, default_value = "h200")]
    pub gpu: String,
    /// Folder for the figures, written whole: it is replaced, nothing of an earlier run stays
    /// in it (default: results/calibrate-figures, never inside the data).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Also take records of the fake runner (`colo calibrate run --fake-gpu`: invented
    /// numbers, for tests) as if taken on --gpu; everything written is then labelled fake.
    #[arg(long)]
    pub allow_fake: bool,
}

/// Arguments of `colo calibrate gavel`.
#[derive(clap::Args)]
pub struct GavelArgs {
    /// Gavel's simulation_throughputs.json (plain or gzipped).
    #[arg(
        long,
        default_value = "calibrate/data/external/gavel/simulation_throughputs.json.gz"
    )]
    pub table: PathBuf,
    /// GPUs of the table to fit, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "v100,p100,k80")]
    pub gpus: Vec<String>,
    /// Folds of the cross-validation over pairs.
    #[arg(long, default_value_t = 5)]
    pub folds: usize,
}

/// Arguments of `colo calibrate miso`.
#[derive(clap::Args)]
pub struct MisoArgs {
    /// Folder of MISO's A100 MIG runs (SLICE_MODEL_trainBATCH.json[.gz] and memory.json[.gz]).
    #[arg(long, default_value = "calibrate/data/external/miso_a100_mig")]
    pub data: PathBuf,
    /// Profile whose time-slicing, MPS and context-memory parameters are carried over
    /// (labelled transferred).
    #[arg(long, default_value = "calibrate/profiles/h200.ron")]
    pub transfer_from: PathBuf,
    /// Profile to write (default under `results/`, so a tour run leaves the shipped profile
    /// alone; refresh the shipped one with `--out calibrate/profiles/a100-40gb.ron`).
    #[arg(long, default_value = "results/a100-40gb.ron")]
    pub out: PathBuf,
    /// Date recorded in the profile's provenance (default: today, UTC).
    #[arg(long)]
    pub date: Option<String>,
}

/// Runs `colo calibrate fit`.
pub fn fit(args: FitArgs) -> anyhow::Result<ExitCode> {
    let gpu = hardware::gpu(&args.gpu)?;
    let ds = measured::load_dataset(&args.data, gpu, selection(args.allow_fake))?;
    eprintln!(
        "fitting {} classes on {} sets of {} ...",
        ds.classes.len(),
        ds.sets.len(),
        args.data.display()
    );
    let progress = Progress::new("calibrate fit: fitting the parametric model")?;
    let full = validate::fit_on(&ds, &|_| true);
    let date = args.date.unwrap_or_else(today);
    let mut profile = validate::fitted_profile(&ds, &full, &date);
    progress.set_message("calibrate fit: fitting the power model");
    let (power_params, power_scores) = power::fit_power(&ds);
    let power_text = power::power_table(&power_scores, power_params.as_ref().map(|p| p.form));
    profile.power = power_params;
    progress.set_message("calibrate fit: reading kernel traces");
    let kernel_check = match traced_folder(&args.data, &ds, args.allow_fake, &progress)? {
        Some(folder) => {
            let tables_path = beside(&args.out, "-kernels.json.gz");
            let file_name = tables_path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            progress.note(&format!(
                "kernel model: {} traced points; fitting its globals and validating ...",
                folder.tables.traces.len()
            ));
            progress.set_message("calibrate fit: fitting and validating the kernel model");
            let kv = kernel::validate(&ds, &folder.tables);
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
            let bytes =
                kernel::tables_bytes(&folder.tables).context("serialising kernel tables")?;
            write_atomic(&tables_path, &bytes)
                .with_context(|| format!("writing {}", tables_path.display()))?;
            Some(kv)
        }
        None => None,
    };
    let command = format!(
        "colo calibrate fit {} --gpu {} --out {}{}",
        args.data.display(),
        args.gpu,
        args.out.display(),
        if args.allow_fake { " --allow-fake" } else { "" }
    );
    progress.set_message("calibrate fit: validating on held-out runs");
    let checks = validate::validate(&ds);
    profile.held_out_error = validate::parametric_held_out_errors(&checks.jobs);
    let text = report::profile_file(&profile, &command).context("serialising the profile")?;
    write_atomic(&args.out, text.as_bytes())
        .with_context(|| format!("writing {}", args.out.display()))?;
    drop(progress);
    let table = report::validation_table(&ds, &validate::error_rows(&checks.jobs), &checks.memory);
    let (report_path, csv_path) = (
        beside(&args.out, "-fit-report.txt"),
        beside(&args.out, "-fit-predictions.csv"),
    );
    let kernel_text = kernel_check
        .as_ref()
        .map_or(String::new(), |kv| report::kernel_table(kv, &checks.jobs));
    let globals = globals_text(&ds, &full);
    // The report names the sharing parameters only when some are defaults (no data constrained
    // them), so that a report of a complete fit reads as before.
    let defaults_line = if globals.starts_with("fitted: ") {
        String::new()
    } else {
        format!("sharing parameters: {globals}\n")
    };
    write_atomic(
        &report_path,
        format!("{command}\n{defaults_line}{table}{kernel_text}{power_text}").as_bytes(),
    )?;
    write_atomic(&csv_path, report::predictions_csv(&checks.jobs).as_bytes())?;
    let summary = format!(
        "wrote {} ({globals}; {} LM iterations, converged: {})\n{table}{kernel_text}{power_text}report: {}, predictions: {}\n",
        args.out.display(),
        full.iterations,
        full.converged,
        report_path.display(),
        csv_path.display()
    );
    super::print(&summary)?;
    Ok(ExitCode::SUCCESS)
}

/// Which records a fit takes: the GPU's own, and the fake runner's only with --allow-fake.
fn selection(allow_fake: bool) -> measured::Selection {
    measured::Selection { allow_fake }
}

/// The fitted sharing parameters, each group labelled by where it came from: `fitted` (or
/// `fitted to fake records`), or `default` when no set of the data constrained it.
fn globals_text(ds: &measured::Dataset, full: &colo_calibrate::fit::parametric::Fitted) -> String {
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
fn kernel_validation(
    data: &Path,
    ds: &measured::Dataset,
    allow_fake: bool,
    progress: &Progress,
) -> anyhow::Result<Option<kernel::KernelValidation>> {
    let Some(folder) = traced_folder(data, ds, allow_fake, progress)? else {
        return Ok(None);
    };
    Ok(Some(kernel::validate(ds, &folder.tables)))
}

/// The kernel traces under `data/traces`, if there are any, anchored to the alone runs of `ds`
/// (see [`kernel::anchor_to_alone_runs`]); skipped files are reported.
fn traced_folder(
    data: &Path,
    ds: &measured::Dataset,
    allow_fake: bool,
    progress: &Progress,
) -> anyhow::Result<Option<trace::TracedFolder>> {
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

/// Runs `colo calibrate validate`.
pub fn validate(args: ValidateArgs) -> anyhow::Result<ExitCode> {
    let gpu = hardware::gpu(&args.gpu)?;
    let ds = measured::load_dataset(&args.data, gpu, selection(args.allow_fake))?;
    let progress = Progress::new("calibrate validate: fitting without each held-out run set")?;
    let checks = validate::validate(&ds);
    progress.set_message("calibrate validate: kernel model");
    let kernel = kernel_validation(&args.data, &ds, args.allow_fake, &progress);
    drop(progress);
    if let Some(csv) = &args.csv {
        write_atomic(csv, report::predictions_csv(&checks.jobs).as_bytes())?;
    }
    super::print(&report::validation_table(
        &ds,
        &validate::error_rows(&checks.jobs),
        &checks.memory,
    ))?;
    if let Some(kv) = kernel? {
        if let Some(csv) = &args.kernel_csv {
            write_atomic(csv, report::predictions_csv(&kv.jobs).as_bytes())?;
        }
        super::print(&report::kernel_table(&kv, &checks.jobs))?;
    }
    let (power_params, power_scores) = power::fit_power(&ds);
    super::print(&power::power_table(
        &power_scores,
        power_params.map(|p| p.form),
    ))?;
    Ok(ExitCode::SUCCESS)
}

/// Runs `colo calibrate plot`: measured against predicted samples/s per mode (the validation's
/// fits, held-out runs marked), and speed against SM budget per model (measured and fitted).
pub fn plot(args: PlotArgs) -> anyhow::Result<ExitCode> {
    use colo_plots::{
        ChartText, Curve, FigureOut, Format, ScatterPoint, plot_curves, plot_measured_vs_predicted,
    };
    let gpu = hardware::gpu(&args.gpu)?;
    let ds = measured::load_dataset(&args.data, gpu, selection(args.allow_fake))?;
    let dir = args
        .out
        .unwrap_or_else(|| PathBuf::from("results/calibrate-figures"));
    super::interrupt_removes_outputs()?;
    let writing = || format!("writing {}", dir.display());
    fsutil::check_outside(&dir, &[&args.data]).with_context(writing)?;
    let whole = WholeDir::begin(&dir).with_context(writing)?;
    let progress = Progress::new("calibrate plot: fitting without each held-out run set")?;
    let checks = validate::validate(&ds);
    progress.set_message("calibrate plot: drawing figures");
    let mut written = Vec::new();
    for mode in ["timeslice", "mps", "mig-emulated"] {
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
            dir: whole.path().to_path_buf(),
            stem: format!("measured_vs_predicted_{mode}"),
            format: Format::Png,
        };
        written.extend(plot_measured_vs_predicted(&points, &text, &out)?);
    }
    let curves = validate::budget_curves(&ds, &checks.small_sets_fit);
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
            dir: whole.path().to_path_buf(),
            stem: stem.into(),
            format: Format::Png,
        };
        written.extend(plot_curves(&lines, &text, &out)?);
    }
    drop(progress);
    let written: Vec<PathBuf> = written.iter().map(|p| whole.final_path(p)).collect();
    whole.commit().with_context(writing)?;
    let list: Vec<String> = written
        .iter()
        .map(|p| format!("  {}\n", p.display()))
        .collect();
    super::print(&format!(
        "wrote {} figure(s):\n{}",
        written.len(),
        list.concat()
    ))?;
    Ok(ExitCode::SUCCESS)
}

/// Runs `colo calibrate gavel`.
pub fn gavel(args: GavelArgs) -> anyhow::Result<ExitCode> {
    let model_gpu = hardware::gpu("h100-80gb")?;
    let mut reports = Vec::new();
    let progress = Progress::new("calibrate gavel")?;
    for (done, name) in args.gpus.iter().enumerate() {
        progress.set_message(format!(
            "calibrate gavel: cross-validating {name} ({} of {})",
            done + 1,
            args.gpus.len()
        ));
        let table = gavel::read_table(&args.table, name)?;
        reports.push(gavel::cross_validate(&table, model_gpu, args.folds.max(2)));
    }
    drop(progress);
    super::print(&report::gavel_table(&reports))?;
    Ok(ExitCode::SUCCESS)
}

/// Runs `colo calibrate miso`.
pub fn miso(args: MisoArgs) -> anyhow::Result<ExitCode> {
    let source = Profile::load(&args.transfer_from)?;
    let name = args.transfer_from.display().to_string();
    let (profile, quality) =
        miso::a100_profile(&args.data, &source, &name, &args.date.unwrap_or_else(today))?;
    let command = format!(
        "colo calibrate miso --data {} --transfer-from {} --out {}",
        args.data.display(),
        name,
        args.out.display()
    );
    let text = report::profile_file(&profile, &command).context("serialising the profile")?;
    write_atomic(&args.out, text.as_bytes())
        .with_context(|| format!("writing {}", args.out.display()))?;
    let table = report::miso_table(&quality);
    write_atomic(
        &beside(&args.out, "-fit-report.txt"),
        format!("{command}\n{table}").as_bytes(),
    )?;
    super::print(&format!("wrote {}\n{table}", args.out.display()))?;
    Ok(ExitCode::SUCCESS)
}

/// `dir/h200.ron` + `-fit-report.txt` -> `dir/h200-fit-report.txt`.
fn beside(profile: &Path, suffix: &str) -> PathBuf {
    let stem = profile
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    profile.with_file_name(format!("{stem}{suffix}"))
}

/// Today's date (UTC) as YYYY-MM-DD.
fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    format!("{y:04}-{m:02}-{d:02}")
}

/// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_787), (2026, 11, 30));
    }
}
