//! Scenarios: a RON file naming a cluster, a workload, a policy and profiles, with an optional
//! sweep of variants that run side by side (rayon, one simulation per thread).
mod build;
pub mod schema;
pub mod shard;
mod trace_workload;

use std::path::{Path, PathBuf};

use rayon::prelude::*;
use thiserror::Error;

use crate::engine::{EngineError, SimConfig, Simulation};
use crate::fsutil;
use crate::metrics::{self, RunLabels, Summary};
use crate::perf::ProfileError;
use crate::ronfile::{RonFileError, read_ron};
use crate::workload::trace::TraceError;
pub use build::{build_variant, build_variant_on, build_variant_with, checked_group};
use schema::{ScenarioFile, VariantSpec, WorkloadSpec};

/// A scenario could not be loaded, built or run. Fatal; the message names the file and field.
#[derive(Debug, Error)]
pub enum ScenarioError {
    /// The file could not be read or parsed.
    #[error(transparent)]
    File(#[from] RonFileError),
    /// A field's value is wrong.
    #[error("{}: {field}: {message}", path.display())]
    Field {
        /// The scenario file.
        path: PathBuf,
        /// Field path, e.g. `cluster[1].mig_layout`.
        field: String,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// A profile named by the scenario could not be loaded.
    #[error("{}: profiles: {source}", path.display())]
    Profile {
        /// The scenario file.
        path: PathBuf,
        /// The profile's error.
        source: ProfileError,
    },
    /// `perf_model: Kernel` needs the kernel tables a profile names, and they could not be read.
    #[error("{}: perf_model Kernel: {source}", path.display())]
    KernelTables {
        /// The scenario file.
        path: PathBuf,
        /// The tables' error.
        source: crate::perf::kernel::TablesError,
    },
    /// A folder named in `traces` gave no usable kernel trace, or could not be read.
    #[error("{}: traces: {source}", path.display())]
    UserTraces {
        /// The scenario file.
        path: PathBuf,
        /// The reader's error.
        source: crate::perf::kernel::raw::TracesError,
    },
    /// The trace named by a `Trace` workload could not be read (or, in strict mode, has a bad
    /// row: the message names its file and line).
    #[error("{}: workload.Trace: {source}", path.display())]
    Trace {
        /// The scenario file.
        path: PathBuf,
        /// The reader's error.
        source: TraceError,
    },
    /// The simulation failed.
    #[error("{}: variant `{variant}`: {source}", path.display())]
    Engine {
        /// The scenario file.
        path: PathBuf,
        /// Variant name.
        variant: String,
        /// The engine's error.
        source: Box<EngineError>,
    },
    /// A result file could not be written.
    #[error("cannot write results to {}: {source}", dir.display())]
    Write {
        /// The result folder.
        dir: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
}

impl ScenarioError {
    fn field(path: &Path, field: impl Into<String>, message: impl ToString) -> Self {
        ScenarioError::Field {
            path: path.to_owned(),
            field: field.into(),
            message: message.to_string(),
        }
    }
}

/// A loaded scenario file.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// The file it came from.
    pub path: PathBuf,
    /// Its contents.
    pub file: ScenarioFile,
}

/// How to run a scenario (from the command line).
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Replaces the scenario's `output` folder.
    pub out: Option<PathBuf>,
    /// Replaces the seed of every variant.
    pub seed: Option<u64>,
    /// Reads traces in strict mode: a defective row is an error naming its line.
    pub strict: bool,
    /// Runs only this shard's variants of the sweep (see [`shard`]).
    pub shard: Option<shard::Shard>,
    /// Which result files each variant writes.
    pub outputs: Outputs,
    /// Per-job rows as `jobs.parquet` instead of `jobs.csv` (cargo feature `parquet`).
    pub columnar: bool,
}

/// Which result files a variant's folder gets (`colo simulate --outputs`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Outputs {
    /// `summary.json` only: for large replays where per-job rows are not wanted.
    Summary,
    /// `jobs.csv` and `summary.json`.
    Jobs,
    /// `jobs.csv`, `placements.csv`, `timeline.csv` and `summary.json`.
    #[default]
    All,
}

/// One variant's run: its jobs, what happened, and the summary.
#[derive(Debug)]
pub struct VariantRun {
    /// Variant name.
    pub name: String,
    /// Its result folder.
    pub dir: PathBuf,
    /// The summary (also in summary.json).
    pub summary: Summary,
}

impl Scenario {
    /// Reads a scenario file.
    pub fn load(path: &Path) -> Result<Self, ScenarioError> {
        Self::checked(path, read_ron(path)?)
    }

    /// Reads a scenario from `text`, as [`Scenario::load`] reads the file at `path` (which
    /// names it in errors and anchors its relative paths).
    pub fn parse(text: &str, path: &Path) -> Result<Self, ScenarioError> {
        Self::checked(path, crate::ronfile::parse_ron(text, path)?)
    }

    /// Reads a scenario from JSON `text` in the same schema (the Python face's dicts: an enum
    /// variant with fields is an object `{"Trace": {...}}`, one without is a string
    /// `"Exclusive"`); `path` names it in errors and anchors its relative paths.
    pub fn parse_json(text: &str, path: &Path) -> Result<Self, ScenarioError> {
        let file = serde_json::from_str(text).map_err(|err| {
            let message = err.to_string();
            // serde_json ends its messages with " at line L column C", given apart here.
            let message = match message.rfind(" at line ") {
                Some(at) => message[..at].to_owned(),
                None => message,
            };
            RonFileError::Syntax {
                path: path.to_owned(),
                line: err.line(),
                column: err.column(),
                message,
            }
        })?;
        Self::checked(path, file)
    }

    /// Caps every trace workload (top level and variants) at `limit` jobs (`colo simulate
    /// --trace-limit`): a scenario's own `limit` stays when it is lower.
    pub fn limit_traces(&mut self, limit: usize) {
        self.for_each_workload(|w| {
            if let WorkloadSpec::Trace(spec) = w {
                spec.limit = Some(spec.limit.map_or(limit, |l| l.min(limit)));
            }
        });
    }

    /// Sets the job count of every synthetic workload (top level and variants) to `jobs`
    /// (`colo simulate --jobs`).
    pub fn set_synthetic_jobs(&mut self, jobs: u32) {
        self.for_each_workload(|w| {
            if let WorkloadSpec::Synthetic(spec) = w {
                spec.jobs = jobs;
            }
        });
    }

    fn for_each_workload(&mut self, mut change: impl FnMut(&mut WorkloadSpec)) {
        change(&mut self.file.workload);
        for variant in &mut self.file.sweep {
            if let Some(w) = variant.workload.as_mut() {
                change(w);
            }
        }
    }

    fn checked(path: &Path, file: ScenarioFile) -> Result<Self, ScenarioError> {
        let scenario = Scenario {
            path: path.to_owned(),
            file,
        };
        scenario.check_names()?;
        scenario.check_timeline()?;
        Ok(scenario)
    }

    fn check_timeline(&self) -> Result<(), ScenarioError> {
        let every = self.file.timeline_every_s;
        if every.is_finite() && every >= 0.0 {
            return Ok(());
        }
        Err(ScenarioError::field(
            &self.path,
            "timeline_every_s",
            format!("{every} must be a finite number of seconds >= 0 (0: a row at every change)"),
        ))
    }

    fn check_names(&self) -> Result<(), ScenarioError> {
        if !is_plain_name(&self.file.name) {
            return Err(ScenarioError::field(
                &self.path,
                "name",
                format!(
                    "`{}` must be a plain name: not empty, no `/` or `\\`, no `..`, not `.` \
                     (it names the folder results/<name>/)",
                    self.file.name
                ),
            ));
        }
        let mut names: Vec<&str> = self.file.sweep.iter().map(|v| v.name.as_str()).collect();
        names.sort_unstable();
        for pair in names.windows(2) {
            if pair[0] == pair[1] {
                return Err(ScenarioError::field(
                    &self.path,
                    "sweep",
                    format!("two variants are named `{}`; names must differ", pair[0]),
                ));
            }
        }
        for variant in &self.file.sweep {
            check_variant_name(&variant.name)
                .map_err(|why| ScenarioError::field(&self.path, "sweep", why))?;
        }
        Ok(())
    }

    /// The variants to run: the sweep's, or one called `base`.
    pub fn variants(&self) -> Vec<VariantSpec> {
        if self.file.sweep.is_empty() {
            vec![VariantSpec {
                name: "base".into(),
                ..VariantSpec::default()
            }]
        } else {
            self.file.sweep.clone()
        }
    }

    /// Folder the results go to: `--out`, else the scenario's `output`, else `results/NAME`;
    /// a shard's default has `-shard-K-of-N` appended.
    pub fn output_dir(&self, options: &RunOptions) -> PathBuf {
        options.out.clone().unwrap_or_else(|| {
            let base = self
                .file
                .output
                .clone()
                .unwrap_or_else(|| format!("results/{}", self.file.name));
            match options.shard {
                Some(s) => PathBuf::from(format!("{base}-shard-{}-of-{}", s.index, s.count)),
                None => PathBuf::from(base),
            }
        })
    }

    /// Resolves paths in the scenario relative to its file.
    pub fn resolve(&self, relative: &str) -> PathBuf {
        let base = self.path.parent().unwrap_or(Path::new(""));
        base.join(relative)
    }

    /// Runs every variant (in parallel) and writes the result folder whole
    /// ([`crate::fsutil::WholeDir`]): each variant's files (in a subfolder per variant for a
    /// sweep) and, for a sweep, `sweep.csv`. Nothing of an earlier run stays in it; on an error
    /// the previous folder is left as it was. `progress(variant, jobs done, jobs)` is called
    /// from worker threads.
    pub fn run(
        &self,
        options: &RunOptions,
        progress: &(dyn Fn(usize, u64, u64) + Sync),
    ) -> Result<Vec<VariantRun>, ScenarioError> {
        let variants = self.variants();
        let out = self.output_dir(options);
        let write_err = |source| ScenarioError::Write {
            dir: out.clone(),
            source,
        };
        if options.shard.is_some() && self.file.sweep.is_empty() {
            return Err(ScenarioError::Field {
                path: self.path.clone(),
                field: "sweep".into(),
                message: "--shard splits a sweep's variants and this scenario has no sweep; run it without --shard".into(),
            });
        }
        // A shard runs every N-th variant; progress keeps each variant's position.
        let chosen: Vec<(usize, &VariantSpec)> = variants
            .iter()
            .enumerate()
            .filter(|(idx, _)| options.shard.is_none_or(|s| s.takes(*idx)))
            .collect();
        if let Some(s) = options.shard.filter(|_| chosen.is_empty()) {
            return Err(ScenarioError::Field {
                path: self.path.clone(),
                field: "sweep".into(),
                message: format!(
                    "--shard {s}: shard {s} of a sweep of {n} variants is empty; use N <= {n} \
                     (colo merge needs no shard K >= {n})",
                    n = variants.len()
                ),
            });
        }
        fsutil::check_outside(&out, &[&self.path]).map_err(write_err)?;
        let whole =
            fsutil::WholeDir::begin_result(&out, "results", &self.file.name).map_err(write_err)?;
        let one = |&(idx, variant): &(usize, &VariantSpec)| {
            let dir = if self.file.sweep.is_empty() {
                whole.path().to_path_buf()
            } else {
                whole.path().join(&variant.name)
            };
            let mut run = self.run_variant(variant, options, dir, &mut |done, total| {
                progress(idx, done, total)
            })?;
            run.dir = whole.final_path(&run.dir);
            Ok(run)
        };
        // One variant runs on this thread: starting rayon's pool for it costs more than a
        // 20k-job replay on a small machine (its idle workers spin in `sched_yield`, taking
        // the cores the simulation needs).
        let runs: Vec<Result<VariantRun, ScenarioError>> = if chosen.len() == 1 {
            chosen.iter().map(one).collect()
        } else {
            chosen.par_iter().map(one).collect()
        };
        let runs = runs.into_iter().collect::<Result<Vec<_>, _>>()?;
        if !self.file.sweep.is_empty() {
            let csv = sweep_csv(&runs).map_err(write_err)?;
            std::fs::write(whole.path().join(SWEEP_CSV), csv).map_err(write_err)?;
        }
        if let Some(shard) = options.shard {
            let manifest = shard::ShardManifest {
                format: shard::MANIFEST_FORMAT,
                scenario: self.file.name.clone(),
                scenario_fingerprint: shard::fingerprint(format!("{:?}", self.file).as_bytes()),
                seed: options.seed,
                strict: options.strict,
                index: shard.index,
                count: shard.count,
                total_variants: variants.len(),
                files: variant_files(options),
                variants: chosen
                    .iter()
                    .map(|&(index, v)| shard::ShardVariant {
                        index,
                        name: v.name.clone(),
                    })
                    .collect(),
            };
            let json = serde_json::to_vec_pretty(&manifest).map_err(|e| write_err(e.into()))?;
            std::fs::write(whole.path().join(shard::MANIFEST), json).map_err(write_err)?;
        }
        whole.commit().map_err(write_err)?;
        Ok(runs)
    }

    fn run_variant(
        &self,
        variant: &VariantSpec,
        options: &RunOptions,
        dir: PathBuf,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<VariantRun, ScenarioError> {
        let (config, labels) = build_variant_with(self, variant, options)?;
        let summary =
            simulate_into(&config, labels, &dir, options, progress).map_err(|err| match err {
                SimulateError::Engine(source) => ScenarioError::Engine {
                    path: self.path.clone(),
                    variant: variant.name.clone(),
                    source: Box::new(source),
                },
                SimulateError::Write(source) => ScenarioError::Write {
                    dir: dir.clone(),
                    source,
                },
            })?;
        Ok(VariantRun {
            name: variant.name.clone(),
            dir,
            summary,
        })
    }
}

/// A name that is one path component of its own: not empty, not `.`, no separator (or NUL),
/// no `..`. Scenario and variant names become folder names.
fn is_plain_name(name: &str) -> bool {
    !name.is_empty() && name != "." && !name.contains("..") && !name.contains(['/', '\\', '\0'])
}

/// File name of a sweep's table of variants, beside their folders.
pub const SWEEP_CSV: &str = "sweep.csv";

/// Names colo writes at the top of a sweep's folder, beside the variants' folders.
const RESERVED: [&str; 3] = [SWEEP_CSV, shard::MANIFEST, fsutil::MARKER];

/// Checks a variant's name, which names its folder in the sweep's: a plain name
/// (`is_plain_name`) and none of the files colo writes beside the variants' folders. The
/// error says what is wrong with it. `colo merge` checks the names in a `shard.json` with it.
pub fn check_variant_name(name: &str) -> Result<(), String> {
    if !is_plain_name(name) {
        return Err(format!(
            "variant name `{name}` must be non-empty, hold no slash or `..` and not be `.`"
        ));
    }
    if RESERVED.contains(&name) {
        return Err(format!(
            "variant name `{name}` is taken by a file colo writes beside the variants' folders \
             ({}); rename the variant",
            RESERVED.join(", ")
        ));
    }
    Ok(())
}

enum SimulateError {
    Engine(EngineError),
    Write(std::io::Error),
}

/// Runs one configuration and writes its result files (those `outputs` asks for) into `dir`.
fn simulate_into(
    config: &SimConfig,
    labels: RunLabels,
    dir: &Path,
    options: &RunOptions,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Summary, SimulateError> {
    let outputs = options.outputs;
    let write = |result: std::io::Result<()>| result.map_err(SimulateError::Write);
    write(fsutil::create_result_dir(dir))?;
    // Rows are written as the run hands them over: each job's (in input order) once it and
    // every job before it are final, the timeline's (only with `Outputs::All`; the summary does
    // not read it) as they come.
    let total_gpus = config.cluster.gpu_count();
    let jobs = metrics::JobStream::create(
        &config.jobs,
        config.job_count(),
        dir,
        match (outputs, options.columnar) {
            (Outputs::Summary, _) => metrics::JobsFile::None,
            (_, false) => metrics::JobsFile::Csv,
            (_, true) => metrics::JobsFile::Parquet,
        },
        outputs == Outputs::All,
    )
    .map_err(SimulateError::Write)?;
    let timeline = if outputs == Outputs::All {
        Some(
            metrics::TimelineFile::create(dir, total_gpus, config.cluster.memory_total_gib())
                .map_err(SimulateError::Write)?,
        )
    } else {
        None
    };
    // The rows are formatted and written on a second thread while the engine runs.
    let (run, jobs, timeline) = metrics::write_beside(jobs, timeline, |outcomes, timeline| {
        Simulation::run_streaming(config, Some(progress), timeline, outcomes)
    });
    let run = run.map_err(SimulateError::Engine)?;
    if let Some(file) = timeline {
        write(file.finish())?;
    }
    let summary = jobs.finish(&run, labels).map_err(SimulateError::Write)?;
    let summary_json =
        serde_json::to_vec_pretty(&summary).map_err(|e| SimulateError::Write(e.into()))?;
    write(metrics::write_result_dir(
        dir,
        &[("summary.json", summary_json)],
    ))?;
    Ok(summary)
}

/// The files each variant's folder gets with `options` (a shard's `shard.json` lists them,
/// for `colo merge` to check).
fn variant_files(options: &RunOptions) -> Vec<String> {
    let jobs = if options.columnar {
        "jobs.parquet"
    } else {
        "jobs.csv"
    };
    let names: &[&str] = match options.outputs {
        Outputs::Summary => &["summary.json"],
        Outputs::Jobs => &[jobs, "summary.json"],
        Outputs::All => &[jobs, "placements.csv", "timeline.csv", "summary.json"],
    };
    names.iter().map(|n| (*n).to_owned()).collect()
}

/// `sweep.csv`'s columns: every statistic of the printed table and of `summary.json`'s top
/// level (the first nine as before, the rest appended so readers by name keep working).
const SWEEP_COLUMNS: [&str; 25] = [
    "variant",
    "jobs",
    "completed",
    "makespan_s",
    "mean_jct_s",
    "p95_jct_s",
    "mean_wait_s",
    "throughput_samples_per_s",
    "utilization",
    "p50_jct_s",
    "p99_jct_s",
    "max_jct_s",
    "p50_wait_s",
    "p95_wait_s",
    "p99_wait_s",
    "max_wait_s",
    "mean_slowdown",
    "p95_slowdown",
    "gpu_hours_total",
    "gpu_hours_busy",
    "energy_kwh",
    "samples_per_joule",
    "events",
    "preemptions",
    "mig_reconfigurations",
];

/// `sweep.csv`: one row per variant, in sweep order, through the CSV writer (a variant name
/// holding a comma, a quote or a line break is quoted). Unknown energy is an empty cell.
fn sweep_csv(runs: &[VariantRun]) -> std::io::Result<Vec<u8>> {
    let rows = runs.iter().map(|run| {
        let s = &run.summary;
        let energy = s.energy.as_ref();
        let optional = |v: Option<f64>, decimals: usize| {
            v.map_or_else(String::new, |v| format!("{v:.decimals$}"))
        };
        vec![
            run.name.clone(),
            s.jobs.to_string(),
            s.completed.to_string(),
            format!("{:.3}", s.makespan_s),
            format!("{:.3}", s.jct_s.mean),
            format!("{:.3}", s.jct_s.p95),
            format!("{:.3}", s.wait_s.mean),
            format!("{:.3}", s.throughput_samples_per_s),
            format!("{:.4}", s.utilization),
            format!("{:.3}", s.jct_s.p50),
            format!("{:.3}", s.jct_s.p99),
            format!("{:.3}", s.jct_s.max),
            format!("{:.3}", s.wait_s.p50),
            format!("{:.3}", s.wait_s.p95),
            format!("{:.3}", s.wait_s.p99),
            format!("{:.3}", s.wait_s.max),
            format!("{:.4}", s.slowdown.mean),
            format!("{:.4}", s.slowdown.p95),
            format!("{:.3}", s.gpu_hours_total),
            format!("{:.3}", s.gpu_hours_busy),
            optional(energy.and_then(|e| e.energy_kwh), 3),
            optional(energy.and_then(|e| e.samples_per_joule), 5),
            s.events.to_string(),
            s.preemptions.to_string(),
            s.mig_reconfigurations.to_string(),
        ]
    });
    write_sweep_csv(SWEEP_COLUMNS, rows)
}

/// Writes a `sweep.csv` of `header` and `rows` as [`Scenario::run`] does (`colo merge` writes
/// the merged one with it, so the two agree byte for byte).
pub fn write_sweep_csv<H, R>(header: H, rows: R) -> std::io::Result<Vec<u8>>
where
    H: IntoIterator,
    H::Item: AsRef<[u8]>,
    R: IntoIterator,
    R::Item: IntoIterator,
    <R::Item as IntoIterator>::Item: AsRef<[u8]>,
{
    let mut writer = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    writer.write_record(header)?;
    for row in rows {
        writer.write_record(row)?;
    }
    writer
        .into_inner()
        .map_err(|e| std::io::Error::other(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 34.1 and 34.15: the names a variant may have (its folder's).
    #[test]
    fn variant_names_are_plain_and_not_reserved() {
        for good in ["a", "a,b", "two\nlines", "x.csv", ".hidden"] {
            assert!(check_variant_name(good).is_ok(), "{good:?}");
        }
        for bad in [
            "",
            ".",
            "..",
            "../x",
            "/abs",
            "a/b",
            "a\\b",
            "sweep.csv",
            "shard.json",
        ] {
            assert!(check_variant_name(bad).is_err(), "{bad:?}");
        }
        assert!(check_variant_name(fsutil::MARKER).is_err());
    }
}
