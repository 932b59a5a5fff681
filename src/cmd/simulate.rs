//! `colo simulate`: run a scenario (every sweep variant in parallel) and write its results.
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Mutex;

use anyhow::Context;
use colo_sim::bench;
use colo_sim::metrics::energy;
use colo_sim::metrics::rows::SummaryLine;
use colo_sim::scenario::{Outputs, RunOptions, Scenario, VariantRun};
use indicatif::{ProgressBar, ProgressStyle};

use super::FormatArg;

/// Arguments of `colo simulate`.
#[derive(clap::Args)]
pub struct SimulateArgs {
    /// Scenario file (RON), e.g. scenarios/default.ron.
    pub scenario: PathBuf,
    /// Result folder (default: the scenario's `output`, else `results/NAME`).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Seed of the workload generator (default: the scenario's `seed`).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Read trace workloads strictly: the first defective row is an error naming its file and
    /// line, instead of being skipped and counted (default: the scenario's `strict`, false).
    #[arg(long)]
    pub strict: bool,
    /// Draw this many jobs in every synthetic workload instead of the scenario's `jobs` (a
    /// quick try of a large scenario, or a scaling step).
    #[arg(long)]
    pub jobs: Option<u32>,
    /// Read at most this many jobs of every trace workload (its own `limit` stays when lower).
    #[arg(long, value_name = "JOBS")]
    pub trace_limit: Option<usize>,
    /// Run only shard K of N of the sweep: every N-th variant starting at K (0-based), into
    /// its own folder with a shard.json; join the shards with `colo merge` (e.g. one Slurm
    /// array task each: --shard $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT).
    #[arg(long, value_name = "K/N")]
    pub shard: Option<colo_sim::scenario::shard::Shard>,
    /// Result files per variant: `all` (jobs, placements, timeline, summary), `jobs` (jobs.csv
    /// and summary.json) or `summary` (summary.json only, for large replays).
    #[arg(long, value_enum, default_value_t = OutputsArg::All)]
    pub outputs: OutputsArg,
    /// Write the per-job rows as jobs.parquet (columnar, full-precision numbers, nulls for
    /// empty fields; pandas.read_parquet and polars read it) instead of jobs.csv. Needs colo
    /// built with `cargo build --release --features parquet`.
    #[arg(long)]
    pub columnar: bool,
    /// What stdout gets: `table` (the summary table) or `json` (one JSON object: the
    /// scenario, then per variant the table's figures with their units in the key names, its
    /// perf model, origins and result folder; notes and progress stay on stderr).
    #[arg(long, value_enum, default_value_t = FormatArg::Table)]
    pub format: FormatArg,
}

/// `--outputs` on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputsArg {
    /// summary.json only.
    Summary,
    /// jobs.csv and summary.json.
    Jobs,
    /// Every result file.
    All,
}

impl From<OutputsArg> for Outputs {
    fn from(arg: OutputsArg) -> Self {
        match arg {
            OutputsArg::Summary => Outputs::Summary,
            OutputsArg::Jobs => Outputs::Jobs,
            OutputsArg::All => Outputs::All,
        }
    }
}

/// Runs `colo simulate`.
pub fn run(args: SimulateArgs) -> anyhow::Result<ExitCode> {
    let mut scenario = Scenario::load(&args.scenario)?;
    if let Some(jobs) = args.jobs {
        scenario.set_synthetic_jobs(jobs);
    }
    if let Some(limit) = args.trace_limit {
        scenario.limit_traces(limit);
    }
    super::interrupt_removes_outputs()?;
    let options = RunOptions {
        out: args.out,
        seed: args.seed,
        strict: args.strict,
        shard: args.shard,
        outputs: args.outputs.into(),
        columnar: args.columnar,
    };
    if args.columnar && !cfg!(feature = "parquet") {
        anyhow::bail!("--columnar: {}", colo_sim::metrics::NO_PARQUET);
    }
    let variants = scenario.variants().len();
    let bar = ProgressBar::new(0).with_style(
        ProgressStyle::with_template("{spinner} simulating {pos}/{len} jobs [{elapsed}] {msg}")
            .context("progress bar template")?,
    );
    bar.set_message(format!("{variants} variant(s)"));
    let per_variant = Mutex::new(vec![(0u64, 0u64); variants]);
    let report = |variant: usize, done: u64, total: u64| {
        if let Ok(mut seen) = per_variant.lock() {
            seen[variant] = (done, total);
            bar.set_length(seen.iter().map(|s| s.1).sum());
            bar.set_position(seen.iter().map(|s| s.0).sum());
        }
    };
    let runs = scenario.run(&options, &report);
    bar.finish_and_clear();
    let runs = runs?;
    report_skips(&runs);
    match args.format {
        FormatArg::Table => super::print(&table(&scenario, &runs))?,
        FormatArg::Json => super::print_json(&json(&scenario, &runs)?)?,
    }
    report_peak_for_bench()?;
    Ok(ExitCode::SUCCESS)
}

/// For `colo bench`, which runs this command as a child and cannot read its peak otherwise
/// (a child's `ru_maxrss` includes the parent's at the fork): writes this process's own
/// `VmHWM` (MiB) to the file named by [`bench::PEAK_FILE_ENV`], when that is set.
fn report_peak_for_bench() -> anyhow::Result<()> {
    let Some(file) = std::env::var_os(bench::PEAK_FILE_ENV) else {
        return Ok(());
    };
    if let Some(mib) = bench::vm_hwm_mib() {
        std::fs::write(&file, format!("{mib}\n"))
            .with_context(|| format!("cannot write {}", PathBuf::from(&file).display()))?;
    }
    Ok(())
}

fn table(scenario: &Scenario, runs: &[VariantRun]) -> String {
    let mut out = String::new();
    let Some(first) = runs.first().map(|r| &r.summary) else {
        return out;
    };
    let _ = writeln!(
        out,
        "{} — perf model {}, profile origin: {} (all figures simulated)",
        scenario.file.name, first.labels.perf_model, first.labels.profile_origin
    );
    for line in &first.labels.user_traces {
        let _ = writeln!(out, "traces: {line}");
    }
    let w = super::name_width(runs.iter().map(|r| r.name.as_str()), 14);
    let _ = writeln!(
        out,
        "{:<w$} {:>6} {:>6} {:>10} {:>11} {:>11} {:>11} {:>12} {:>6} {:>10}",
        "variant",
        "jobs",
        "done",
        "makespan h",
        "mean JCT h",
        "p95 JCT h",
        "mean wait h",
        "samples/s",
        "util",
        "energy kWh"
    );
    for run in runs {
        let l = SummaryLine::of(&run.name, &run.summary);
        let _ = writeln!(
            out,
            "{:<w$} {:>6} {:>6} {:>10.2} {:>11.2} {:>11.2} {:>11.2} {:>12.0} {:>6.2} {:>10}",
            l.variant,
            l.jobs,
            l.completed,
            l.makespan_h,
            l.mean_jct_h,
            l.p95_jct_h,
            l.mean_wait_h,
            l.throughput_samples_per_s,
            l.utilization,
            l.energy_kwh
                .map_or_else(|| "unknown".to_owned(), |kwh| format!("{kwh:.1}"))
        );
    }
    let _ = writeln!(out, "{}", energy_provenance(runs));
    let dirs: Vec<String> = runs.iter().map(|r| r.dir.display().to_string()).collect();
    let _ = writeln!(out, "results: {}", dirs.join(", "));
    out
}

/// `--format json`: the table's figures, one [`SummaryLine`] per variant with its result
/// folder, beside the lines the table prints above and below them.
fn json(scenario: &Scenario, runs: &[VariantRun]) -> serde_json::Result<serde_json::Value> {
    let mut variants = Vec::with_capacity(runs.len());
    for run in runs {
        let mut line = serde_json::to_value(SummaryLine::of(&run.name, &run.summary))?;
        line["result_dir"] = run.dir.display().to_string().into();
        variants.push(line);
    }
    let traces = runs.first().map(|r| r.summary.labels.user_traces.clone());
    Ok(serde_json::json!({
        "scenario": scenario.file.name,
        "traces": traces.unwrap_or_default(),
        "energy_provenance": energy_provenance(runs),
        "variants": variants,
    }))
}

/// The table's line on where the energy figures come from.
fn energy_provenance(runs: &[VariantRun]) -> String {
    energy::provenance(runs.iter().filter_map(|r| r.summary.energy.as_ref()))
}

/// Skipped trace rows and unplaceable jobs, on stderr, once per distinct trace.
fn report_skips(runs: &[VariantRun]) {
    let mut seen = Vec::new();
    for run in runs {
        let Some(trace) = &run.summary.labels.trace else {
            continue;
        };
        let line = format!(
            "trace {} ({}): {} rows read, {}; {} jobs replayed{}",
            trace.file,
            trace.format,
            trace.rows_read,
            run.summary.skipped.trace_rows,
            trace.jobs_replayed,
            sharing_note(trace)
        );
        if !seen.contains(&line) {
            eprintln!("note: {line}");
            seen.push(line);
        }
    }
    let skipped: u64 = runs.iter().map(|r| r.summary.skipped.unplaceable).sum();
    if skipped > 0 {
        eprintln!(
            "note: {skipped} job(s) fit nowhere and were skipped (see summary.json `skipped`)"
        );
    }
}

fn sharing_note(trace: &colo_sim::metrics::TraceSummary) -> String {
    trace.gpu_sharing.as_ref().map_or(String::new(), |s| {
        format!(
            " ({} of the {} GPU-sharing pods read; {} skipped by the reader, {} outside the window)",
            s.pods_replayed, s.pods_in_trace, s.pods_skipped, s.pods_outside_window
        )
    })
}
