//! `colo calibrate fit | validate | gavel | miso`: fit profiles from measurements and say how
//! wrong they are on runs the fit never saw.
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use colo_calibrate::fit::pipeline::{self, FitProgress, FitRequest, today};
use colo_calibrate::fit::{gavel, measured, power, report, validate};
use colo_calibrate::store;
use colo_sim::fsutil::{self, WholeDir, write_atomic};
use colo_sim::hardware;
use colo_sim::perf::Profile;

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
    for suffix in ["", "-fit-report.txt", "-fit-predictions.csv"] {
        let output = match suffix {
            "" => args.out.clone(),
            _ => pipeline::beside(&args.out, suffix),
        };
        store::refuse_overwriting_inputs(&output, &args.data)?;
    }
    let ds = measured::load_dataset(&args.data, gpu, selection(args.allow_fake))?;
    eprintln!(
        "fitting {} classes on {} sets of {} ...",
        ds.classes.len(),
        ds.sets.len(),
        args.data.display()
    );
    let progress = Progress::new("calibrate fit: fitting the parametric model")?;
    let command = format!(
        "colo calibrate fit {} --gpu {} --out {}{}",
        args.data.display(),
        args.gpu,
        args.out.display(),
        if args.allow_fake { " --allow-fake" } else { "" }
    );
    let request = FitRequest {
        data: &args.data,
        out: &args.out,
        date: &args.date.unwrap_or_else(today),
        command: &command,
        allow_fake: args.allow_fake,
    };
    let summary = pipeline::fit_profile(&ds, &request, &progress)?;
    drop(progress);
    super::print(&summary)?;
    Ok(ExitCode::SUCCESS)
}

impl FitProgress for Progress {
    fn stage(&self, what: &str) {
        self.set_message(what);
    }

    fn note(&self, line: &str) {
        Progress::note(self, line);
    }
}

/// Which records a fit takes: the GPU's own, and the fake runner's only with --allow-fake.
fn selection(allow_fake: bool) -> measured::Selection {
    measured::Selection { allow_fake }
}

/// Runs `colo calibrate validate`.
pub fn validate(args: ValidateArgs) -> anyhow::Result<ExitCode> {
    let gpu = hardware::gpu(&args.gpu)?;
    for csv in args.csv.iter().chain(&args.kernel_csv) {
        store::refuse_overwriting_inputs(csv, &args.data)?;
    }
    let ds = measured::load_dataset(&args.data, gpu, selection(args.allow_fake))?;
    let progress = Progress::new("calibrate validate: fitting without each held-out run set")?;
    let checks = validate::validate(&ds);
    progress.set_message("calibrate validate: kernel model");
    let kernel = pipeline::kernel_validation(&args.data, &ds, args.allow_fake, &progress);
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

/// Runs `colo calibrate plot`: measured against predicted samples/s per mode, and speed against
/// SM budget per model ([`pipeline::draw_figures`]).
pub fn plot(args: PlotArgs) -> anyhow::Result<ExitCode> {
    let gpu = hardware::gpu(&args.gpu)?;
    let dir = args
        .out
        .unwrap_or_else(|| PathBuf::from("results/calibrate-figures"));
    super::interrupt_removes_outputs()?;
    let writing = || format!("writing {}", dir.display());
    fsutil::check_outside(&dir, &[&args.data]).with_context(writing)?;
    // Before the data is read: a folder that will be refused is refused at once.
    let data_name = args.data.display().to_string();
    let whole =
        WholeDir::begin_result(&dir, "calibration figures", &data_name).with_context(writing)?;
    let ds = measured::load_dataset(&args.data, gpu, selection(args.allow_fake))?;
    let progress = Progress::new("calibrate plot: fitting without each held-out run set")?;
    let checks = validate::validate(&ds);
    progress.set_message("calibrate plot: drawing figures");
    let written = pipeline::draw_figures(&ds, &checks, whole.path())?;
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
    let date = args.date.unwrap_or_else(today);
    let text = pipeline::miso_profile(&args.data, &source, &name, &args.out, &date)?;
    super::print(&text)?;
    Ok(ExitCode::SUCCESS)
}
