//! `colo calibrate`: run calibration plans or user commands on a GPU, trace points' kernels,
//! summarise the measurements.
use std::path::{Path, PathBuf};
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
    /// Record CUDA kernel traces alone (torch.profiler): colo's zoo points, or your own
    /// unmodified training command (--cmd).
    ///
    /// Points: every point runs alone on --gpu (CUDA_VISIBLE_DEVICES=<its UUID>): built, warmed
    /// up, timed over an unprofiled window, then profiled over a few steady iterations, into
    /// OUT/<model>_<batch>_<image>.trace.json.gz. A point whose trace file exists is skipped, so
    /// an interrupted run resumes. A point that fails (out of memory, an error, the tracer
    /// exiting or hanging) is reported and counted, and the others go on.
    ///
    /// A command (--cmd "python train.py ..." --name NAME): colo runs it unmodified with its
    /// tracer injected (a sitecustomize on PYTHONPATH). Iterations are optimizer steps; after
    /// the warm-up it times an unprofiled window, profiles a few steps, writes
    /// OUT/cmd_<NAME>.trace.json.gz (point NAME:SAMPLES_PER_STEP:1) with the recipe it saw, and
    /// ends the command (--let-finish lets it run on). Then `colo predict --traces OUT
    /// NAME:SAMPLES_PER_STEP:1 ...` predicts it beside anything, with no refit.
    ///
    /// Each outcome is appended to OUT/index.jsonl and a table is printed at the end.
    /// Exit status: 0 when at least one point (or the command) was traced or already had its
    /// trace; 1 when everything failed or the tracer could not be started; 2 when there is no
    /// GPU; 130 on Ctrl-C.
    #[command(
        after_help = "Examples:\n  colo calibrate trace resnet50:64:224 vit_b_16:32:224 --out calibrate/data/h200/traces\n  colo calibrate trace resnet50+bf16-adamw:64:224 --out traces/   (a recipe: +bf16-adamw, +fp16-amp-adamw)\n  colo calibrate trace --cmd \"python train.py --lr 3e-4\" --name my_llm --out traces/\n  colo calibrate trace --cmd \"torchrun --nproc_per_node 1 train.py\" --name ddp_job --samples-per-step 64 --out traces/"
    )]
    Trace(Box<TraceArgs>),
    /// Print a table of a folder of measurements (all *.jsonl files).
    #[command(
        after_help = "Examples:\n  colo calibrate summary calibrate/data/h200\n  colo calibrate summary calibrate/data/h200/h200-mps.jsonl --csv /tmp/mps.csv"
    )]
    Summary(SummaryArgs),
    /// Carry kernel traces taken on one GPU to another (datasheet roofline per kernel, no
    /// fit), and check them against traces measured there.
    ///
    /// Every trace in DIR taken on a GPU other than --to is carried over: each kernel's time
    /// from its waves and the GPUs' peak per SM in its number format (GEMM, convolution,
    /// attention), or their memory bandwidth (everything else); host time kept, or times
    /// --cpu-factor. Prints each point's alone speed measured on its GPU and predicted on --to.
    /// --out writes --to's kernel tables (labelled transferred) for a profile's `kernel.tables`;
    /// --check DIR2 reads traces measured on --to and prints the error per point, beside
    /// assuming the same speed. `colo predict --gpu GPU --traces DIR` transfers on the fly.
    #[command(
        after_help = "Examples:\n  colo calibrate transfer calibrate/data/h200/traces --to a100-40gb\n  colo calibrate transfer calibrate/data/h200/byo/traces --to h100 --check calibrate/data/h100/byo-alone-check/traces --csv check.csv\n  colo calibrate transfer calibrate/data/h200/traces --to a100-40gb --out a100-40gb-kernels.json.gz"
    )]
    Transfer(TransferArgs),
    /// Score traces of published workloads, carried to the GPU their authors measured, against
    /// the published numbers.
    ///
    /// Traces of the reproductions in calibrate/workloads/external/ (points
    /// `py.gavel_resnet18:BATCH:32`, `py.miso_bert:BATCH:512`, ...) are carried to the GPU and
    /// predicted by the kernel model. `--against gavel`: each job alone and every measured
    /// time-sliced pair of Gavel's table (steps/s; --gpu v100, p100 or k80). `--against miso`:
    /// each job alone in every A100-40GB MIG slice MISO ran it in, with the slice's speed over
    /// 7g's. Errors are printed beside the same-speed and equal-share baselines.
    #[command(
        after_help = "Examples:\n  colo calibrate published calibrate/data/h100/external/no-tf32 --against gavel\n  colo calibrate published calibrate/data/h100/external/traces --against miso --csv miso.csv"
    )]
    Published(PublishedArgs),
    /// Compare traces with the DRAM traffic measured per kernel (Nsight Compute), and say which
    /// traces lack it.
    ///
    /// TRAFFIC holds `<point>.dram.json.gz` files (calibrate/workloads/dram_traffic.py under
    /// ncu); kernels are matched by base name. Per trace: the share of its kernel time
    /// matched, DRAM GB per iteration, and the share of kernel time that is bandwidth-bound by
    /// the name rule the replay uses against by measure (achieved bandwidth alone at least
    /// --threshold of the measuring GPU's peak). The replay does not use the traffic yet.
    #[command(
        after_help = "Examples:\n  colo calibrate dram calibrate/data/h200/traces --traffic calibrate/data/h100/dram/traffic"
    )]
    Dram(DramArgs),
    /// Fit a GPU's profile from its measurements and report held-out errors.
    #[command(
        after_help = "Examples:\n  colo calibrate fit calibrate/data/h200 --gpu h200 --out /tmp/h200.ron\n  colo calibrate validate calibrate/data/h200 --gpu h200   (the held-out errors only)"
    )]
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
    /// Measure unmodified PyTorch programs by their optimizer steps: colo injects its step
    /// hook (as `calibrate trace --cmd` does), which prints `samples=<N>` after every step
    /// [default: off: the command prints its own progress, or is measured by its lifetime]
    #[arg(long)]
    step_hook: bool,
    /// Run the set once instead of --repeats times: its noise is then not measured, and
    /// whatever uses the record must say so [default: off]
    #[arg(long, conflicts_with = "repeats")]
    once: bool,
    /// With --step-hook: end each command cleanly at its first step this many seconds after
    /// it started, so that co-runners stop together [default: run to the end]
    #[arg(long, requires = "step_hook")]
    run_s: Option<f64>,
    /// With --step-hook: samples per optimizer step of each command (one per command, as
    /// `calibrate trace --cmd` found them) [default: found by the hook]
    #[arg(long, requires = "step_hook", value_delimiter = ',')]
    samples_per_step: Vec<u32>,
    #[command(flatten)]
    gpu: GpuArgs,
}

/// Arguments of `colo calibrate trace`.
#[derive(clap::Args)]
struct TraceArgs {
    /// Points to trace, MODEL:BATCH:IMAGE (e.g. resnet50:64:224; image is the sequence length
    /// for lm_* models); a point given twice is traced once. Not with --cmd.
    #[arg(required_unless_present = "cmd", conflicts_with = "cmd")]
    points: Vec<String>,
    /// Your own training command to trace instead of points, run with `sh -c` (e.g. "python
    /// train.py --bf16"); needs --name [default: none]
    #[arg(long, requires = "name")]
    cmd: Option<String>,
    /// Name of the traced command: its point is NAME:SAMPLES_PER_STEP:1 (letters, digits, _,
    /// -, .) [default: none]
    #[arg(long, requires = "cmd")]
    name: Option<String>,
    /// Samples one optimizer step trains (with --cmd) [default: the leading dimension of the
    /// batches the program takes from its DataLoaders per step, gradient accumulation
    /// included, else of the first tensor its training forward receives]
    #[arg(long, requires = "cmd")]
    samples_per_step: Option<u32>,
    /// Warm-up steps before timing (with --cmd) [default: 10]
    #[arg(long, default_value_t = 10, hide_default_value = true)]
    warmup_steps: u32,
    /// Seconds to wait for the command's first optimizer step (with --cmd) [default: 600]
    #[arg(long, default_value_t = 600.0, hide_default_value = true)]
    step_timeout_s: f64,
    /// Let the command run to its end after its trace is written (with --cmd) [default: it is
    /// ended once traced]
    #[arg(long, requires = "cmd")]
    let_finish: bool,
    /// Folder of the trace files and their index.jsonl (created if missing).
    #[arg(long)]
    out: PathBuf,
    /// Tracer command for points, split on spaces; colo appends --points, --out, --warmup-s,
    /// --window-s, --iterations [default: python3 calibrate/workloads/trace.py]
    #[arg(long, default_value = DEFAULT_TRACER, hide_default_value = true)]
    worker: String,
    /// Warm-up, seconds: per point after its first 2 iterations, or from a command's first
    /// step [default: 1.0 for points, 10 for --cmd]
    #[arg(long)]
    warmup_s: Option<f64>,
    /// Unprofiled timing window, seconds [default: 1.5 for points, 5 for --cmd]
    #[arg(long)]
    window_s: Option<f64>,
    /// Profiled steady iterations per point or command [default: 4]
    #[arg(long, default_value_t = 4, hide_default_value = true)]
    iterations: u32,
    /// GPU index, as nvidia-smi numbers it [default: 0]
    #[arg(long, default_value_t = 0, hide_default_value = true)]
    gpu: u32,
    /// Folder for the tracer's private folder (its captured output) [default: /tmp]
    #[arg(long, default_value = "/tmp", hide_default_value = true)]
    tmp: PathBuf,
    /// Use no GPU: points get small synthetic traces labelled `fake` (invented numbers, not
    /// measurements); a command runs without CUDA_VISIBLE_DEVICES and its trace is labelled
    /// `fake` (for tests with a stand-in torch).
    #[arg(long)]
    fake_gpu: bool,
}

/// Arguments of `colo calibrate transfer`.
#[derive(clap::Args)]
struct TransferArgs {
    /// Folder of kernel traces (`*.trace.json.gz`, as `colo calibrate trace` writes).
    dir: PathBuf,
    /// GPU to carry them to (a100-40gb, a100-80gb, h100-80gb, h200, or Gavel's v100, p100, k80).
    #[arg(long)]
    to: String,
    /// Host time on the target's host over the source's [default: 1, the same CPU]
    #[arg(long, default_value_t = 1.0, hide_default_value = true)]
    cpu_factor: f64,
    /// Folder of DRAM traffic files (`NAME.dram.json.gz`, Nsight Compute's bytes per kernel,
    /// measured on the traces' GPU) for the traces `NAME.trace.json.gz`: their bandwidth-bound
    /// kernels are carried by their bytes [default: the files beside the traces, if any]
    #[arg(long)]
    traffic: Option<PathBuf>,
    /// Write the carried traces as --to's kernel tables to this file (.json.gz) [default: none]
    #[arg(long)]
    out: Option<PathBuf>,
    /// Folder of traces measured on --to to check against [default: none]
    #[arg(long)]
    check: Option<PathBuf>,
    /// Also write the table as CSV to this file [default: none]
    #[arg(long)]
    csv: Option<PathBuf>,
}

/// Whose published measurements `colo calibrate published` scores against.
#[derive(Clone, Copy, clap::ValueEnum)]
enum PublishedSource {
    /// Gavel's steps/s alone and in time-sliced pairs (V100, P100, K80).
    Gavel,
    /// MISO's per-iteration latencies alone in each A100-40GB MIG slice.
    Miso,
}

/// Arguments of `colo calibrate published`.
#[derive(clap::Args)]
struct PublishedArgs {
    /// Folder of kernel traces of the reproduced workloads (`*.trace.json.gz`).
    dir: PathBuf,
    /// Whose measurements.
    #[arg(long, value_enum)]
    against: PublishedSource,
    /// Gavel's GPU [default: v100; MISO: a100-40gb]
    #[arg(long)]
    gpu: Option<String>,
    /// The published data [default: calibrate/data/external/gavel/simulation_throughputs.json.gz
    /// or calibrate/data/external/miso_a100_mig]
    #[arg(long)]
    data: Option<PathBuf>,
    /// Also write the alone rows as CSV to this file [default: none]
    #[arg(long)]
    csv: Option<PathBuf>,
    /// Also write the pair rows as CSV to this file (Gavel) [default: none]
    #[arg(long)]
    pairs_csv: Option<PathBuf>,
    /// Host time on the authors' host over the tracing host's [default: 1, the same CPU]
    #[arg(long, default_value_t = 1.0, hide_default_value = true)]
    cpu_factor: f64,
}

/// Arguments of `colo calibrate dram`.
#[derive(clap::Args)]
struct DramArgs {
    /// Folder of kernel traces (`*.trace.json.gz`).
    dir: PathBuf,
    /// Folder of measured traffic (`*.dram.json.gz`).
    #[arg(long)]
    traffic: PathBuf,
    /// Share of the peak bandwidth from which a kernel counts as bandwidth-bound
    #[arg(long, default_value_t = 0.5)]
    threshold: f64,
}

/// Arguments of `colo calibrate summary`.
#[derive(clap::Args)]
struct SummaryArgs {
    /// Folder of *.jsonl measurement files, or one such file.
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
        CalibrateCommand::Transfer(args) => transfer(args),
        CalibrateCommand::Published(args) => published(args),
        CalibrateCommand::Dram(args) => dram(args),
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

/// The commands as run: with --step-hook, each prefixed by the environment that activates
/// colo's injected step hook in `dir` (the store records the command as run).
fn hooked_commands(args: &ProfileArgs, dir: &std::path::Path) -> anyhow::Result<Vec<String>> {
    if !args.step_hook {
        return Ok(args.commands.clone());
    }
    if !args.samples_per_step.is_empty() && args.samples_per_step.len() != args.commands.len() {
        anyhow::bail!(
            "--samples-per-step gives {} values for {} commands: give one per --cmd, in order",
            args.samples_per_step.len(),
            args.commands.len()
        );
    }
    if args.run_s.is_some_and(|s| !(s.is_finite() && s > 0.0)) {
        anyhow::bail!("--run-s must be a positive number of seconds");
    }
    let env = colo_calibrate::trace_cmd::injected_env(dir)?;
    let quote = |v: &str| format!("'{}'", v.replace('\'', "'\\''"));
    let mut prefix: Vec<String> = env
        .iter()
        .map(|(k, v)| format!("export {k}={};", quote(v)))
        .collect();
    prefix.push("export COLO_TRACE_MODE=progress;".into());
    if let Some(s) = args.run_s {
        prefix.push(format!("export COLO_STOP_AFTER_S={s};"));
    }
    Ok(args
        .commands
        .iter()
        .enumerate()
        .map(|(i, cmd)| {
            let sps = args
                .samples_per_step
                .get(i)
                .map(|n| format!("export COLO_TRACE_SAMPLES_PER_STEP={n}; "))
                .unwrap_or_default();
            format!("{} {sps}{cmd}", prefix.join(" "))
        })
        .collect())
}

fn profile(args: ProfileArgs) -> anyhow::Result<ExitCode> {
    let hook_dir = args
        .gpu
        .tmp
        .join(format!("colo-step-hook-{}", std::process::id()));
    let commands = hooked_commands(&args, &hook_dir)?;
    let result = profile_commands(&args, commands);
    let _ = std::fs::remove_dir_all(&hook_dir);
    result
}

fn profile_commands(args: &ProfileArgs, commands: Vec<String>) -> anyhow::Result<ExitCode> {
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
        commands,
        repeats: if args.once {
            colo_calibrate::plan::MIN_REPEATS
        } else {
            args.repeats
        },
        warmup_s: args.warmup_s,
        timeout_s: args.timeout_s,
    }
    .with_flags(&lists, colo_sim::hardware::gpu(&args.gpu_type)?)?;
    // --once: checked as a plan of the least repeats, then run once.
    let cmd_plan = CommandPlan {
        repeats: if args.once { 1 } else { cmd_plan.repeats },
        ..cmd_plan
    };
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
    if args.cmd.is_some() {
        return trace_command(args);
    }
    let points: Vec<ModelKey> = args
        .points
        .iter()
        .map(|text| plan::parse_point(text).map_err(anyhow::Error::msg))
        .collect::<anyhow::Result<_>>()?;
    let settings = TraceSettings {
        warmup_s: args.warmup_s.unwrap_or(1.0),
        window_s: args.window_s.unwrap_or(1.5),
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
    for warning in traced.warnings() {
        eprintln!("warning: {warning}");
    }
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

/// `colo calibrate trace --cmd`: one user command traced alone.
fn trace_command(args: TraceArgs) -> anyhow::Result<ExitCode> {
    use colo_calibrate::trace_cmd::{self, CommandTrace};
    let (Some(command), Some(name)) = (args.cmd.clone(), args.name.clone()) else {
        anyhow::bail!("--cmd needs --name");
    };
    trace_cmd::check_name(&name).map_err(anyhow::Error::msg)?;
    let job = CommandTrace {
        command,
        name,
        samples_per_step: args.samples_per_step,
        warmup_steps: args.warmup_steps,
        warmup_s: args.warmup_s.unwrap_or(10.0),
        window_s: args.window_s.unwrap_or(5.0),
        iterations: args.iterations,
        step_timeout_s: args.step_timeout_s,
        let_finish: args.let_finish,
        out_dir: args.out.clone(),
        tmp_root: args.tmp.clone(),
    };
    let positive = |v: f64| v.is_finite() && v > 0.0;
    if !positive(job.warmup_s) && job.warmup_s != 0.0
        || !positive(job.window_s)
        || !positive(job.step_timeout_s)
        || job.iterations == 0
        || job.samples_per_step == Some(0)
    {
        anyhow::bail!(
            "--warmup-s must be 0 or more seconds, --window-s and --step-timeout-s positive \
             seconds, --iterations and --samples-per-step at least 1"
        );
    }
    let (gpu, source) = if args.fake_gpu {
        (FakeRunner::new().gpu().clone(), "fake")
    } else {
        match ProcessRunner::open(ProcessRunnerConfig::for_gpu(args.gpu)) {
            Ok(runner) => (runner.gpu().clone(), "measured"),
            Err(err) => {
                eprintln!("error: {err}");
                return Ok(ExitCode::from(2));
            }
        }
    };
    ctrlc::set_handler(runner::request_interrupt).context("cannot install the Ctrl-C handler")?;
    eprintln!(
        "GPU {} ({}, driver {}, {}): tracing `{}` as {} into {}",
        gpu.index,
        gpu.name,
        gpu.driver,
        gpu.uuid,
        job.command,
        job.name,
        job.out_dir.display()
    );
    let bar = ProgressBar::new_spinner().with_style(
        ProgressStyle::with_template("{spinner} tracing {msg} [{elapsed}]")
            .context("progress bar template")?,
    );
    bar.enable_steady_tick(Duration::from_millis(200));
    bar.set_message(job.name.clone());
    let traced = trace_cmd::trace_command(&job, &gpu, source, &mut |line| {
        bar.suspend(|| eprintln!("{line}"))
    });
    bar.finish_and_clear();
    let traced = match traced {
        Err(runner::RunError::Interrupted) => {
            eprintln!("interrupted: the command was stopped; no trace written");
            return Ok(ExitCode::from(130));
        }
        other => other?,
    };
    super::print(&trace_cmd::outcome_table(&traced, source))?;
    if let Some(error) = &traced.error {
        eprintln!(
            "error: tracing `{}` failed ({}): {error}",
            job.command,
            traced.status.label()
        );
    }
    Ok(if traced.status.failed() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn print_summary(args: SummaryArgs) -> anyhow::Result<ExitCode> {
    let files = if args.dir.is_file() {
        vec![(args.dir.clone(), store::load(&args.dir)?)]
    } else {
        store::load_dir(&args.dir)?
    };
    if files.is_empty() {
        anyhow::bail!(
            "{}: no *.jsonl files; run `colo calibrate run PLAN --out {}` first",
            args.dir.display(),
            args.dir.display()
        );
    }
    if let Some(csv) = &args.csv {
        let folder = match args.dir.is_file() {
            true => args.dir.parent().unwrap_or(Path::new(".")),
            false => args.dir.as_path(),
        };
        store::refuse_overwriting_inputs(csv, folder)?;
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

fn transfer(args: TransferArgs) -> anyhow::Result<ExitCode> {
    use colo_calibrate::transfer;
    let to = colo_sim::hardware::any_gpu(&args.to)?;
    if !(args.cpu_factor.is_finite() && args.cpu_factor > 0.0) {
        anyhow::bail!(
            "--cpu-factor {}: must be a positive number (1 = the same CPU speed)",
            args.cpu_factor
        );
    }
    if let Some(traffic) = &args.traffic
        && !traffic.is_dir()
    {
        anyhow::bail!(
            "--traffic {}: not a folder (name the folder of the traces' NAME.dram.json.gz files)",
            traffic.display()
        );
    }
    let folder =
        transfer::transfer_folder(&args.dir, to, args.cpu_factor, args.traffic.as_deref())?;
    for (path, why) in &folder.skipped {
        eprintln!("skipped {}: {why}", path.display());
    }
    let Some(tables) = folder.transferred else {
        anyhow::bail!(
            "{}: no trace of another GPU to carry to {} (traces already of {} need no transfer)",
            args.dir.display(),
            to.name,
            to.name
        );
    };
    let measured = match &args.check {
        Some(dir) => {
            let m = transfer::measured_tables(dir, to)?;
            for (path, why) in &m.skipped {
                eprintln!("check: skipped {}: {why}", path.display());
            }
            if m.tables.traces.is_empty() {
                anyhow::bail!(
                    "--check {}: no trace measured on {} in it; trace there with `colo calibrate \
                     trace ... --out {}`",
                    dir.display(),
                    to.name,
                    dir.display()
                );
            }
            Some(m.tables)
        }
        None => None,
    };
    let from = tables.transferred_from.clone().unwrap_or_default();
    let rows = transfer::check_rows(
        &transfer::source_points(&args.dir, to),
        &tables,
        measured.as_ref(),
    );
    super::print(&format!(
        "{}\n{}",
        tables.source,
        transfer::render(&rows, &from, to.name)
    ))?;
    if let Some(csv) = &args.csv {
        colo_sim::fsutil::write_atomic(csv, transfer::render_csv(&rows).as_bytes())
            .with_context(|| format!("cannot write {}", csv.display()))?;
        eprintln!("wrote {}", csv.display());
    }
    if let Some(out) = &args.out {
        let bytes = colo_calibrate::fit::kernel::tables_bytes(&tables)?;
        colo_sim::fsutil::write_atomic(out, &bytes)
            .with_context(|| format!("cannot write {}", out.display()))?;
        eprintln!("wrote {} ({} traces)", out.display(), tables.traces.len());
    }
    Ok(ExitCode::SUCCESS)
}

fn published(args: PublishedArgs) -> anyhow::Result<ExitCode> {
    use colo_calibrate::{fit, published, transfer};
    let (gpu_name, data) = match args.against {
        PublishedSource::Gavel => (
            args.gpu.as_deref().unwrap_or("v100"),
            args.data.clone().unwrap_or_else(|| {
                "calibrate/data/external/gavel/simulation_throughputs.json.gz".into()
            }),
        ),
        PublishedSource::Miso => (
            args.gpu.as_deref().unwrap_or("a100-40gb"),
            args.data
                .clone()
                .unwrap_or_else(|| "calibrate/data/external/miso_a100_mig".into()),
        ),
    };
    let gpu = colo_sim::hardware::any_gpu(gpu_name)?;
    if !(args.cpu_factor.is_finite() && args.cpu_factor > 0.0) {
        anyhow::bail!(
            "--cpu-factor {}: must be a positive number (1 = the same CPU speed)",
            args.cpu_factor
        );
    }
    let sources = transfer::source_points(&args.dir, gpu);
    if sources.is_empty() {
        anyhow::bail!(
            "{}: no trace taken on a GPU other than {} (trace the workloads of \
             calibrate/workloads/external/ with calibrate/data/h100/external/trace_external.sh)",
            args.dir.display(),
            gpu.name
        );
    }
    let check = match args.against {
        PublishedSource::Gavel => {
            let table = fit::gavel::read_table(&data, gpu.name)?;
            published::check_gavel(&args.dir, &sources, gpu, &table, args.cpu_factor)?
        }
        PublishedSource::Miso => {
            if gpu.name != "a100-40gb" {
                anyhow::bail!("--gpu {}: MISO measured an A100-40GB (a100-40gb)", gpu.name);
            }
            let runs = fit::miso::read_runs(&data)?;
            published::check_miso(&args.dir, &sources, gpu, &runs, args.cpu_factor)?
        }
    };
    if check.alone.is_empty() {
        anyhow::bail!(
            "{}: none of its {} traced point(s) is a workload the table holds; trace the \
             reproductions of calibrate/workloads/external/ (points py.gavel_*, py.miso_*) with \
             calibrate/data/h100/external/trace_external.sh",
            args.dir.display(),
            check.unmatched.len()
        );
    }
    // The GPUs the traces were taken on, as the transfer names them (`h100-80gb`).
    let mut from: Vec<&str> = sources.iter().map(|s| s.gpu).collect();
    from.sort_unstable();
    from.dedup();
    let source_gpu = from.join(", ");
    super::print(&published::render(&check, &source_gpu))?;
    for (path, rows) in [
        (&args.csv, published::to_csv(&check.alone)?),
        (&args.pairs_csv, published::to_csv(&check.pairs)?),
    ] {
        if let Some(path) = path {
            colo_sim::fsutil::write_atomic(path, rows.as_bytes())
                .with_context(|| format!("cannot write {}", path.display()))?;
            eprintln!("wrote {}", path.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn dram(args: DramArgs) -> anyhow::Result<ExitCode> {
    use colo_sim::perf::kernel::dram;
    use colo_sim::perf::kernel::raw::{RAW_SUFFIX, files_ending, read_raw};
    use std::fmt::Write as _;
    if !(args.threshold > 0.0 && args.threshold <= 1.0) {
        anyhow::bail!(
            "--threshold {}: a share of the peak, in (0, 1]",
            args.threshold
        );
    }
    let dram::TrafficFolder {
        by_point: traffic,
        skipped,
    } = dram::read_traffic_folder(&args.traffic)?;
    for (path, why) in &skipped {
        eprintln!("skipped {}: {why}", path.display());
    }
    if traffic.is_empty() {
        anyhow::bail!(
            "{}: no *{} file; measure with calibrate/data/h100/dram/measure.sh",
            args.traffic.display(),
            dram::DRAM_SUFFIX
        );
    }
    let paths = files_ending(&args.dir, RAW_SUFFIX)?;
    let mut out = format!(
        "DRAM traffic (measured, Nsight Compute, {}) against the traces of {}; bandwidth-bound by measure: achieved alone >= {:.0}% of the measuring GPU's peak\n{:<34} {:>9} {:>9} {:>9} {:>11} {:>10}\n",
        args.traffic.display(),
        args.dir.display(),
        args.threshold * 100.0,
        "point",
        "matched",
        "GB/iter",
        "by name",
        "by measure",
        "agreement"
    );
    let mut lacking = Vec::new();
    let mut agreements = Vec::new();
    for path in &paths {
        let raw = match read_raw(path) {
            Ok(raw) => raw,
            Err(e) => {
                eprintln!("skipped {e}");
                continue;
            }
        };
        let Some(t) = traffic.get(&raw.point) else {
            lacking.push(raw.point.clone());
            continue;
        };
        let peak = colo_sim::hardware::gpu(&t.gpu)
            .with_context(|| format!("traffic of {} measured on an unknown GPU", t.point))?
            .memory_bandwidth_gbs;
        let b = dram::point_bandwidth(&raw, t, peak, args.threshold);
        agreements.push(b.agreement);
        let _ = writeln!(
            out,
            "{:<34} {:>8.1}% {:>9.2} {:>8.1}% {:>10.1}% {:>9.1}%",
            b.point,
            b.matched_share * 100.0,
            b.gb_per_iteration,
            b.memory_by_name * 100.0,
            b.memory_by_measure * 100.0,
            b.agreement * 100.0
        );
    }
    if !agreements.is_empty() {
        let mean = agreements.iter().sum::<f64>() / agreements.len() as f64;
        let _ = writeln!(
            out,
            "name rule and measure agree on {:.1}% of matched kernel time (mean over {} traces)",
            mean * 100.0,
            agreements.len()
        );
    }
    let _ = writeln!(
        out,
        "no DRAM traffic measured for {} of {} traces{}",
        lacking.len(),
        paths.len(),
        if lacking.is_empty() {
            String::new()
        } else {
            format!(": {}", lacking.join(", "))
        }
    );
    super::print(&out)?;
    Ok(ExitCode::SUCCESS)
}
