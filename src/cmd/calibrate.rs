//! `colo calibrate`: run calibration plans or user commands on a GPU, trace points' kernels,
//! summarise the measurements.
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Context;
use colo_calibrate::execute::{self, CommandPlan, RunOptions};
use colo_calibrate::plan::{self, Plan, SettingLists};
use colo_calibrate::runner::{
    self, DEFAULT_TRACER, FakeRunner, ProcessRunner, ProcessRunnerConfig, Runner, TraceJob,
    TraceReport, TraceSettings,
};
use colo_calibrate::{store, summary, tracing};
use colo_sim::perf::MeasuredMode;
use colo_sim::workload::ModelKey;
use indicatif::{ProgressBar, ProgressStyle};

/// Arguments of `colo calibrate`.
#[derive(clap::Args)]
pub struct CalibrateArgs {
    #[command(subcommand)]
    command: CalibrateCommand,
}

#[derive(clap::Subcommand)]
enum CalibrateCommand {
    /// Run a calibration plan on the GPU, appending one JSON line per process-point to
    /// OUT/<plan>.jsonl; re-running skips what is already recorded.
    Run(Box<RunArgs>),
    /// Profile user commands run together under a mode (`--cmd "python train.py ..."`).
    Profile(Box<ProfileArgs>),
    /// Record each point's CUDA kernel trace alone (torch.profiler), one tracer process for all
    /// points, into OUT/<model>_<batch>_<image>.trace.json.gz.
    ///
    /// Every point runs alone on --gpu (CUDA_VISIBLE_DEVICES=<its UUID>): built, warmed up, timed
    /// over an unprofiled window, then profiled over a few steady iterations. A point whose
    /// trace file exists is skipped, so an interrupted run resumes. Each point's outcome is
    /// appended to OUT/index.jsonl (point, status, file, GPU, torch, unprofiled samples/s);
    /// a table of the outcomes is printed at the end. A point that fails (out of memory, an
    /// error, the tracer exiting or hanging) is reported and counted, and the others go on.
    ///
    /// Exit status: 0 when at least one point was traced or already had its trace; 1 when
    /// every point failed or the tracer could not be started; 2 when there is no GPU.
    ///
    /// Example: colo calibrate trace resnet50:64:224 vit_b_16:32:224 --out calibrate/data/h200/traces
    Trace(Box<TraceArgs>),
    /// Print a table of a folder of measurements (all *.jsonl files).
    Summary(SummaryArgs),
    /// Fit a GPU's profile from its measurements and report held-out errors.
    Fit(super::fit::FitArgs),
    /// Report how wrong the fitted model is on runs its fit never saw, beside the baselines.
    Validate(super::fit::ValidateArgs),
    /// Draw measured vs predicted samples/s per mode, and speed vs SM budget per model.
    Plot(super::fit::PlotArgs),
    /// Fit the model to Gavel's measured pair table with pairs held out (V100, P100, K80).
    Gavel(super::fit::GavelArgs),
    /// Build the A100-40GB profile from MISO's MIG slice measurements.
    Miso(super::fit::MisoArgs),
}

/// Arguments of `colo calibrate run`.
#[derive(clap::Args)]
struct RunArgs {
    /// Plan file (RON); see calibrate/README.md.
    plan: PathBuf,
    /// Folder of the measurement store (created if missing).
    #[arg(long)]
    out: PathBuf,
    /// Print the plan and its estimated GPU time; run nothing.
    #[arg(long)]
    dry_run: bool,
    /// Worker command, split on spaces; the runner appends --points, --barrier, ... [default:
    /// python3 calibrate/workloads/train.py]
    #[arg(
        long,
        default_value = "python3 calibrate/workloads/train.py",
        hide_default_value = true
    )]
    worker: String,
    /// Tracer command for groups with `trace: true`, split on spaces; the runner appends
    /// --points, --out, --warmup-s, --window-s, --iterations [default: python3
    /// calibrate/workloads/trace.py]
    #[arg(long, default_value = DEFAULT_TRACER, hide_default_value = true)]
    tracer: String,
    /// Stop starting work after this many seconds; unfinished points stay unrecorded, so a
    /// re-run resumes them [default: no limit]
    #[arg(long)]
    time_limit_s: Option<f64>,
    /// Let groups in mode Mig that give `mig_profiles` instead of `mig_uuids` run: before each
    /// such group colo creates one MIG instance per process on --gpu (`nvidia-smi mig -cgi
    /// PROFILES -C`), and after it destroys exactly those (also after errors, timeouts and
    /// Ctrl-C). Instances it did not create are never touched; MIG mode must already be on
    /// (colo never changes it). Tested only with a fake nvidia-smi [default: off: such groups
    /// are refused before anything runs]
    #[arg(long)]
    allow_mig_reconfigure: bool,
    /// nvidia-smi program used to create and destroy MIG instances (--allow-mig-reconfigure)
    /// [default: nvidia-smi]
    #[arg(long, default_value = "nvidia-smi", hide_default_value = true)]
    nvidia_smi: PathBuf,
    #[command(flatten)]
    gpu: GpuArgs,
}

/// Options shared by the subcommands that run work on a GPU.
#[derive(clap::Args)]
struct GpuArgs {
    /// GPU index, as nvidia-smi numbers it [default: 0]
    #[arg(long, default_value_t = 0, hide_default_value = true)]
    gpu: u32,
    /// MPS control program [default: nvidia-cuda-mps-control]
    #[arg(
        long,
        default_value = "nvidia-cuda-mps-control",
        hide_default_value = true
    )]
    mps_control: PathBuf,
    /// Folder for each launch's private barrier and MPS pipe/log folders [default: /tmp]
    #[arg(long, default_value = "/tmp", hide_default_value = true)]
    tmp: PathBuf,
    /// GPU sampling period in milliseconds [default: 200]
    #[arg(long, default_value_t = 200, hide_default_value = true)]
    sample_ms: u64,
    /// Use no GPU: `run` replays a synthetic profile (and writes synthetic traces), `profile`
    /// runs the commands with a fake GPU identity, no sampling and no MPS daemon (MPS modes set
    /// the commands' MPS variables only). Its records are labelled
    /// `fake` (invented numbers, not measurements; fit and validate take them only with
    /// --allow-fake).
    #[arg(long)]
    fake_gpu: bool,
}

/// Arguments of `colo calibrate profile`.
#[derive(clap::Args)]
struct ProfileArgs {
    /// A command to profile (run with `sh -c`); repeat the flag to run several together. A
    /// command that prints `samples=<N>` (cumulative) is measured by its progress, otherwise by
    /// its lifetime.
    #[arg(long = "cmd", required = true)]
    commands: Vec<String>,
    /// Sharing mode of the commands [default: timeslice]
    #[arg(
        long,
        value_enum,
        default_value = "timeslice",
        hide_default_value = true
    )]
    mode: MeasuredMode,
    /// MPS SM budget per command (one for all, or one per command; mode mps) [default: none]
    #[arg(long)]
    sm_percent: Vec<u32>,
    /// MIG profile per command (mode mig-emulated, e.g. 3g.71gb) [default: none]
    #[arg(long)]
    mig_profile: Vec<String>,
    /// GPU type whose MIG profiles --mig-profile names (a name `colo hardware` lists)
    /// [default: h200]
    #[arg(long, default_value = "h200", hide_default_value = true)]
    gpu_type: String,
    /// MIG instance UUID per command (mode mig) [default: none]
    #[arg(long)]
    mig_uuid: Vec<String>,
    /// Folder of the measurement store (created if missing).
    #[arg(long)]
    out: PathBuf,
    /// Store name: records go to OUT/<name>.jsonl [default: profile]
    #[arg(long, default_value = "profile", hide_default_value = true)]
    name: String,
    /// Times the set runs [default: 3]
    #[arg(long, default_value_t = 3, hide_default_value = true)]
    repeats: u32,
    /// Progress reports in the first seconds are ignored [default: 10]
    #[arg(long, default_value_t = 10.0, hide_default_value = true)]
    warmup_s: f64,
    /// Kill commands still running after this many seconds [default: 3600]
    #[arg(long, default_value_t = 3600.0, hide_default_value = true)]
    timeout_s: f64,
    #[command(flatten)]
    gpu: GpuArgs,
}

/// Arguments of `colo calibrate trace`.
#[derive(clap::Args)]
struct TraceArgs {
    /// Points to trace, MODEL:BATCH:IMAGE (e.g. resnet50:64:224; image is the sequence length
    /// for lm_* models); a point given twice is traced once.
    #[arg(required = true)]
    points: Vec<String>,
    /// Folder of the trace files and their index.jsonl (created if missing).
    #[arg(long)]
    out: PathBuf,
    /// Tracer command, split on spaces; colo appends --points, --out, --warmup-s, --window-s,
    /// --iterations [default: python3 calibrate/workloads/trace.py]
    #[arg(long, default_value = DEFAULT_TRACER, hide_default_value = true)]
    worker: String,
    /// Warm-up per point after its first 2 iterations, seconds [default: 1.0]
    #[arg(long, default_value_t = 1.0, hide_default_value = true)]
    warmup_s: f64,
    /// Unprofiled timing window per point, seconds [default: 1.5]
    #[arg(long, default_value_t = 1.5, hide_default_value = true)]
    window_s: f64,
    /// Profiled steady iterations per point [default: 4]
    #[arg(long, default_value_t = 4, hide_default_value = true)]
    iterations: u32,
    /// GPU index, as nvidia-smi numbers it [default: 0]
    #[arg(long, default_value_t = 0, hide_default_value = true)]
    gpu: u32,
    /// Folder for the tracer's private folder (its captured stderr) [default: /tmp]
    #[arg(long, default_value = "/tmp", hide_default_value = true)]
    tmp: PathBuf,
    /// Use no GPU: write small synthetic traces labelled `fake` (invented numbers, not
    /// measurements).
    #[arg(long)]
    fake_gpu: bool,
}

/// Arguments of `colo calibrate summary`.
#[derive(clap::Args)]
struct SummaryArgs {
    /// Folder of *.jsonl measurement files.
    dir: PathBuf,
    /// Also write the table as CSV to this file [default: none]
    #[arg(long)]
    csv: Option<PathBuf>,
}

/// Runs `colo calibrate`.
pub fn run(args: CalibrateArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        CalibrateCommand::Run(args) => run_plan(*args),
        CalibrateCommand::Profile(args) => profile(*args),
        CalibrateCommand::Trace(args) => trace(*args),
        CalibrateCommand::Summary(args) => print_summary(args),
        CalibrateCommand::Fit(args) => super::fit::fit(args),
        CalibrateCommand::Validate(args) => super::fit::validate(args),
        CalibrateCommand::Plot(args) => super::fit::plot(args),
        CalibrateCommand::Gavel(args) => super::fit::gavel(args),
        CalibrateCommand::Miso(args) => super::fit::miso(args),
    }
}

fn run_plan(args: RunArgs) -> anyhow::Result<ExitCode> {
    let plan = Plan::load(&args.plan)?;
    if args.dry_run {
        super::print(&plan.describe())?;
        return Ok(ExitCode::SUCCESS);
    }
    let opts = RunOptions {
        deadline: args
            .time_limit_s
            .map(|s| Instant::now() + Duration::from_secs_f64(s.max(0.0))),
        allow_mig_reconfigure: args.allow_mig_reconfigure,
    };
    // Refused before the GPU is even probed (run_plan checks again).
    execute::refuse_unallowed_mig_groups(&plan, &opts)?;
    let mut runner: Box<dyn Runner> = if args.gpu.fake_gpu {
        Box::new(FakeRunner::new())
    } else {
        let cfg = ProcessRunnerConfig {
            nvidia_smi: args.nvidia_smi.clone(),
            tracer: args.tracer.split_whitespace().map(str::to_string).collect(),
            ..runner_config(&args.gpu, &args.worker)
        };
        match ProcessRunner::open(cfg) {
            Ok(runner) => Box::new(runner),
            Err(err) => {
                let hint = match err {
                    colo_calibrate::gpu::GpuError::NoGpu { .. } => {
                        "; --dry-run lists the plan and its estimated GPU time without one"
                    }
                    _ => "",
                };
                eprintln!("error: {err}{hint}");
                return Ok(ExitCode::from(2));
            }
        }
    };
    ctrlc::set_handler(runner::request_interrupt).context("cannot install the Ctrl-C handler")?;
    let gpu = runner.gpu().clone();
    eprintln!(
        "GPU {} ({}, driver {}, {}); plan {}: est. {:.0} s",
        gpu.index,
        gpu.name,
        gpu.driver,
        gpu.uuid,
        plan.name,
        plan.estimated_gpu_s()
    );
    let outcome = execute::run_plan(&plan, runner.as_mut(), &args.out, &opts, &mut |line| {
        eprintln!("{line}")
    })?;
    store_warnings(&outcome);
    let traces = if plan.groups.iter().any(|g| g.trace) {
        format!(
            "; {} kernel traces written ({} failed) into {}",
            outcome.traced,
            outcome.trace_failed,
            args.out.join(tracing::TRACES_DIR).display()
        )
    } else {
        String::new()
    };
    eprintln!(
        "{}: {} records written ({} failed), {} set repeats already recorded{traces}{}",
        outcome.store.display(),
        outcome.written,
        outcome.failed,
        outcome.already_done,
        if outcome.stopped_early {
            "; stopped at the time limit: re-run to resume"
        } else {
            ""
        }
    );
    if outcome.interrupted {
        return Ok(interrupted_exit());
    }
    let loaded = store::load(&outcome.store)?;
    super::print(&summary::render_table(&summary::summarize(&loaded.records)))?;
    Ok(ExitCode::SUCCESS)
}

/// The store's unreadable lines and dropped duplicates, as warnings.
fn store_warnings(outcome: &execute::RunOutcome) {
    let loaded = store::Loaded {
        skipped: outcome.bad_lines.clone(),
        duplicates: outcome.duplicates,
        ..store::Loaded::default()
    };
    for warning in loaded.warnings(&outcome.store) {
        eprintln!("warning: {warning}");
    }
}

/// Ctrl-C or SIGTERM stopped a run: what was recorded stays; exit status 130.
fn interrupted_exit() -> ExitCode {
    eprintln!(
        "interrupted: no work started after it, workers stopped (and the MPS daemon shut \
         down); what was recorded stays: re-run the same command to resume"
    );
    ExitCode::from(130)
}

fn runner_config(gpu: &GpuArgs, worker: &str) -> ProcessRunnerConfig {
    ProcessRunnerConfig {
        worker: worker.split_whitespace().map(str::to_string).collect(),
        mps_control: gpu.mps_control.clone(),
        tmp_root: gpu.tmp.clone(),
        sample_interval: Duration::from_millis(gpu.sample_ms.max(10)),
        ..ProcessRunnerConfig::for_gpu(gpu.gpu)
    }
}

fn profile(args: ProfileArgs) -> anyhow::Result<ExitCode> {
    let lists = SettingLists {
        sm_percent: &args.sm_percent,
        mem_limit_mib: &[],
        mig_profiles: &args.mig_profile,
        mig_uuids: &args.mig_uuid,
    };
    let cmd_plan = CommandPlan {
        name: args.name.clone(),
        mode: args.mode,
        procs: Vec::new(),
        commands: args.commands.clone(),
        repeats: args.repeats,
        warmup_s: args.warmup_s,
        timeout_s: args.timeout_s,
    }
    .with_flags(&lists, colo_sim::hardware::gpu(&args.gpu_type)?)?;
    let mut runner = if args.gpu.fake_gpu {
        let gpu = FakeRunner::new().gpu().clone();
        ProcessRunner::on_fake_gpu(runner_config(&args.gpu, ""), gpu)
    } else {
        match ProcessRunner::open(runner_config(&args.gpu, "")) {
            Ok(runner) => runner,
            Err(err) => {
                eprintln!("error: {err}");
                return Ok(ExitCode::from(2));
            }
        }
    };
    ctrlc::set_handler(runner::request_interrupt).context("cannot install the Ctrl-C handler")?;
    let outcome = execute::profile_commands(&cmd_plan, &mut runner, &args.out, &mut |line| {
        eprintln!("{line}")
    })?;
    store_warnings(&outcome);
    eprintln!(
        "{}: {} records written ({} failed), {} repeats already recorded",
        outcome.store.display(),
        outcome.written,
        outcome.failed,
        outcome.already_done
    );
    if outcome.interrupted {
        return Ok(interrupted_exit());
    }
    let loaded = store::load(&outcome.store)?;
    super::print(&summary::render_commands(&loaded.records))?;
    Ok(ExitCode::SUCCESS)
}

fn trace(args: TraceArgs) -> anyhow::Result<ExitCode> {
    let points: Vec<ModelKey> = args
        .points
        .iter()
        .map(|text| plan::parse_point(text).map_err(anyhow::Error::msg))
        .collect::<anyhow::Result<_>>()?;
    let settings = TraceSettings {
        warmup_s: args.warmup_s,
        window_s: args.window_s,
        iterations: args.iterations,
    };
    let positive = |v: f64| v.is_finite() && v > 0.0;
    if !positive(settings.warmup_s) || !positive(settings.window_s) || settings.iterations == 0 {
        anyhow::bail!(
            "--warmup-s and --window-s must be positive seconds, --iterations at least 1"
        );
    }
    let mut runner: Box<dyn Runner> = if args.fake_gpu {
        Box::new(FakeRunner::new())
    } else {
        let cfg = ProcessRunnerConfig {
            tracer: args.worker.split_whitespace().map(str::to_string).collect(),
            tmp_root: args.tmp.clone(),
            ..ProcessRunnerConfig::for_gpu(args.gpu)
        };
        match ProcessRunner::open(cfg) {
            Ok(runner) => Box::new(runner),
            Err(err) => {
                eprintln!("error: {err}");
                return Ok(ExitCode::from(2));
            }
        }
    };
    ctrlc::set_handler(runner::request_interrupt).context("cannot install the Ctrl-C handler")?;
    let distinct = tracing::distinct(&points);
    let gpu = runner.gpu().clone();
    eprintln!(
        "GPU {} ({}, driver {}, {}): tracing {} points alone into {}",
        gpu.index,
        gpu.name,
        gpu.driver,
        gpu.uuid,
        distinct.len(),
        args.out.display()
    );
    let bar = ProgressBar::new(distinct.len() as u64).with_style(
        ProgressStyle::with_template("{spinner} tracing {pos}/{len} points [{elapsed}] {msg}")
            .context("progress bar template")?,
    );
    bar.enable_steady_tick(Duration::from_millis(200));
    bar.set_message(distinct[0].to_string());
    let job = TraceJob {
        points: &distinct,
        out_dir: &args.out,
        settings,
        deadline: None,
    };
    let mut on_report = |report: &TraceReport| {
        bar.inc(1);
        let done = bar.position() as usize;
        if let Some(next) = distinct.get(done) {
            bar.set_message(next.to_string());
        }
        bar.suspend(|| eprintln!("{}", report.line()));
    };
    let traced = tracing::trace_points(runner.as_mut(), &job, None, &mut on_report);
    bar.finish_and_clear();
    if let Err(runner::RunError::Interrupted) = traced {
        return Ok(interrupted_exit());
    }
    let traced = traced?;
    eprintln!(
        "{} traced, {} skipped (trace file exists), {} failed{}; index {}",
        traced.count(runner::TraceStatus::Ok),
        traced.count(runner::TraceStatus::Skipped),
        traced.failed(),
        if traced.unfinished > 0 {
            format!(", {} not reached", traced.unfinished)
        } else {
            String::new()
        },
        traced.index.display()
    );
    super::print(&tracing::outcome_table(
        &traced.reports,
        runner.source().label(),
    ))?;
    let all_failed = traced.reports.iter().all(|r| r.status.failed());
    Ok(if all_failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn print_summary(args: SummaryArgs) -> anyhow::Result<ExitCode> {
    let files = store::load_dir(&args.dir)?;
    if files.is_empty() {
        anyhow::bail!(
            "{}: no *.jsonl files; run `colo calibrate run PLAN --out {}` first",
            args.dir.display(),
            args.dir.display()
        );
    }
    if let Some(csv) = &args.csv {
        store::refuse_overwriting_inputs(csv, &args.dir)?;
    }
    let mut records = Vec::new();
    for (path, loaded) in files {
        for warning in loaded.warnings(&path) {
            eprintln!("warning: {warning}");
        }
        records.extend(loaded.records);
    }
    let rows = summary::summarize(&records);
    super::print(&summary::render_table(&rows))?;
    if let Some(csv) = &args.csv {
        colo_sim::fsutil::write_atomic(csv, summary::render_csv(&rows).as_bytes())
            .with_context(|| format!("cannot write {}", csv.display()))?;
        eprintln!("wrote {}", csv.display());
    }
    Ok(ExitCode::SUCCESS)
}
