//! `colo bench`: time the engine on synthetic and trace workloads and print a table.
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use colo_calibrate::shipped;
use colo_sim::bench::{self, BenchCase, BenchPlan, BenchRow};

use super::simulate::OutputsArg;

/// Arguments of `colo bench`.
#[derive(clap::Args)]
pub struct BenchArgs {
    /// Cases to run, in order, comma-separated (default: all:
    /// small,large,philly,sweep,kernel,anchors,scale).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub case: Vec<BenchCase>,
    /// Jobs of the synthetic cases and of each sweep variant (default: small 100000, large
    /// 1000000, sweep 10000).
    #[arg(long)]
    pub jobs: Option<u32>,
    /// H200s of the synthetic cases and of each sweep variant (default: small 1000, large
    /// 10000, sweep 100); at least 1.
    #[arg(long, value_parser = at_least_one::<u32>)]
    pub gpus: Option<u32>,
    /// Threads of the parallel sweep run (default: all cores); at least 1.
    #[arg(long, value_parser = at_least_one::<usize>)]
    pub threads: Option<usize>,
    /// Variants in the sweep; at least 1.
    #[arg(long, default_value_t = 64, value_parser = at_least_one::<usize>)]
    pub variants: usize,
    /// Trace scenario of the philly case; a relative path not found from here is looked up
    /// in the source tree.
    #[arg(long, default_value = "scenarios/traces/philly.ron")]
    pub philly: PathBuf,
    /// Read at most this many trace jobs in the philly and anchors cases (default: all).
    #[arg(long)]
    pub trace_limit: Option<usize>,
    /// Folder of the anchor scenarios and their anchors.csv; a relative path not found from
    /// here is looked up in the source tree.
    #[arg(long, default_value = "scenarios/bench")]
    pub anchor_dir: PathBuf,
    /// Anchor scenarios to run, comma-separated, or `all` (default: every one not marked heavy
    /// in anchors.csv, i.e. all but synthgen_10m).
    #[arg(long, value_delimiter = ',')]
    pub anchors: Vec<String>,
    /// Largest job count of the scale case: 10k, 100k, 1M, ... up to this (10000000 adds the
    /// 10M step: some 8 s and 0.5 GiB a run with `--outputs summary` on 2 cores, 10-18 s and
    /// 0.55 GiB with every file; 100000000 adds 100M: some 85 s and 0.7 GiB summary-only).
    #[arg(long, default_value_t = 1_000_000)]
    pub scale_to: u64,
    /// Result files the anchor and scale cases write, as `colo simulate --outputs`: `summary`
    /// measures a large replay without its per-job files.
    #[arg(long, value_enum, default_value_t = OutputsArg::All)]
    pub outputs: OutputsArg,
    /// Runs of each anchor and scale step, each a whole `colo simulate` process (its wall
    /// from start to exit and its peak RSS, as the targets are stated); the median is shown,
    /// with the lowest and highest; at least 1.
    #[arg(long, default_value_t = 3, value_parser = at_least_one::<usize>)]
    pub reps: usize,
    /// Run the anchor and scale cases once each inside this process instead (no child
    /// processes; the peak is then this process's, which holds what earlier cases left).
    #[arg(long)]
    pub in_process: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = FormatArg::Table)]
    pub format: FormatArg,
}

/// A count of at least 1: 0 GPUs, variants or threads would measure nothing.
fn at_least_one<T>(text: &str) -> Result<T, String>
where
    T: std::str::FromStr + From<u8> + PartialOrd,
{
    let n: T = text
        .parse()
        .map_err(|_| format!("`{text}` is not a whole number; give 1 or more"))?;
    if n >= T::from(1) {
        Ok(n)
    } else {
        Err(format!("{text} would measure nothing; give 1 or more"))
    }
}

/// Output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FormatArg {
    /// Aligned columns.
    Table,
    /// Comma-separated values with a header.
    Csv,
}

/// Runs `colo bench`.
pub fn run(args: BenchArgs) -> anyhow::Result<ExitCode> {
    if cfg!(debug_assertions) {
        eprintln!(
            "warning: this is a debug build; its timings say little. Use `cargo run --release -- bench`."
        );
    }
    let profiles = Arc::new(shipped::load(&[])?);
    let plan = BenchPlan {
        cases: cases(&args.case),
        jobs: args.jobs,
        gpus: args.gpus,
        threads: args.threads.unwrap_or_else(all_cores).max(1),
        variants: args.variants,
        philly_scenario: find_scenario(&args.philly),
        trace_limit: args.trace_limit,
        profiles: profiles.clone(),
        kernel: Some(Arc::new(shipped::kernel_model(profiles, &[])?)),
        anchor_dir: find_scenario(&args.anchor_dir),
        anchors: args.anchors,
        scale_to: args.scale_to,
        outputs: args.outputs.into(),
        process: (!args.in_process).then_some(colo_process as bench::ProcessRunner),
        reps: args.reps,
        user_traces: find_scenario(Path::new("calibrate/data/h200/byo/traces")),
    };
    let header = match args.format {
        FormatArg::Table => bench::table_header(),
        FormatArg::Csv => bench::CSV_HEADER.to_owned(),
    };
    super::print(&format!("{header}\n"))?;
    // Rows are printed as they are measured; the first failed write (a closed pipe) ends it.
    let mut write_error = None;
    let mut print = |row: &BenchRow| {
        if write_error.is_none() {
            let line = match args.format {
                FormatArg::Table => row.table_row(),
                FormatArg::Csv => row.csv_row(),
            };
            write_error = super::print(&format!("{line}\n")).err();
        }
    };
    bench::run(&plan, &mut print)?;
    if let Some(err) = write_error {
        return Err(err);
    }
    if args.format == FormatArg::Table {
        super::print(
            "all figures measured on this machine (wall clock; events/s over engine time)\n",
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

fn cases(chosen: &[BenchCase]) -> Vec<BenchCase> {
    if chosen.is_empty() {
        BenchCase::ALL.to_vec()
    } else {
        chosen.to_vec()
    }
}

fn all_cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The scenario (or folder) as given, or else relative to the source tree the binary was
/// built from (so the default works from any folder of a clone).
fn find_scenario(given: &Path) -> PathBuf {
    if given.exists() || given.is_absolute() {
        return given.to_owned();
    }
    let in_tree = Path::new(env!("CARGO_MANIFEST_DIR")).join(given);
    if in_tree.exists() {
        in_tree
    } else {
        given.to_owned()
    }
}

/// Runs `colo ARGS` (the subcommand first) as a child of this binary and waits for it: its wall from spawn
/// to exit and the peak resident memory it reports of itself (Linux; see
/// [`bench::PEAK_FILE_ENV`]); its stderr goes to a temporary file, quoted in the error when it
/// fails.
fn colo_process(args: &[std::ffi::OsString]) -> std::io::Result<bench::ProcessRun> {
    use std::io::{Read, Seek};
    let exe = std::env::current_exe()?;
    let mut stderr = tempfile::tempfile()?;
    let peak_file = tempfile::NamedTempFile::new()?;
    let start = std::time::Instant::now();
    let status = std::process::Command::new(exe)
        .args(args)
        .env(bench::PEAK_FILE_ENV, peak_file.path())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(stderr.try_clone()?)
        .status()?;
    let wall_s = start.elapsed().as_secs_f64();
    if !status.success() {
        let mut text = String::new();
        stderr.rewind()?;
        stderr.read_to_string(&mut text)?;
        return Err(std::io::Error::other(format!(
            "exited with {status}: {}",
            text.trim()
        )));
    }
    let peak_mib = std::fs::read_to_string(peak_file.path())?
        .trim()
        .parse()
        .ok();
    Ok(bench::ProcessRun { wall_s, peak_mib })
}
