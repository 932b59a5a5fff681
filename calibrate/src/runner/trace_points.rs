//! Kernel tracing through a runner: the tracer protocol, its per-point reports, and the real
//! runner's side (one tracer process for all points, alone on the GPU).
//!
//! Protocol (see calibrate/workloads/trace.py): the runner starts `TRACER --points P1,P2,..
//! --out DIR --warmup-s W --window-s S --iterations N` with `CUDA_VISIBLE_DEVICES=<GPU UUID>`
//! and every MPS variable removed, as for an Exclusive worker. The tracer writes
//! `DIR/<model>_<batch>_<image>.trace.json.gz` for each point it traces (skipping files that
//! exist) and prints one JSON line per point: `{"point", "status" (ok, oom, error, skipped),
//! "error", "trace_s", "unprofiled": {"samples_per_s", ..}, "profiled": {"samples_per_s", ..},
//! "n_kernels", "file"}`; other lines are ignored. Points it never reports are recorded as
//! `crash` when it exits, or `timeout` when no point was reported for a point's time limit.
use std::fmt::Write as _;
use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::process::{LaunchDir, stderr_tail};
use super::{CLEARED_ENV, ProcessRunner, RunError, interrupted, worker_env};
use crate::plan::ProcSettings;
use colo_sim::perf::MeasuredMode;
use colo_sim::workload::ModelKey;

/// The tracer colo starts unless told otherwise (run from the repository root).
pub const DEFAULT_TRACER: &str = "python3 calibrate/workloads/trace.py";

/// How each point is traced: the tracer's `--warmup-s`, `--window-s` and `--iterations`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TraceSettings {
    /// Warm-up after the first 2 iterations, seconds (trace.py's default 1.0).
    pub warmup_s: f64,
    /// Unprofiled timing window, seconds (trace.py's default 1.5).
    pub window_s: f64,
    /// Profiled steady iterations (trace.py's default 4).
    pub iterations: u32,
}

impl Default for TraceSettings {
    fn default() -> Self {
        TraceSettings {
            warmup_s: 1.0,
            window_s: 1.5,
            iterations: 4,
        }
    }
}

/// What a runner traces: these points, one after the other, into `out_dir`.
#[derive(Debug, Clone)]
pub struct TraceJob<'a> {
    /// Points, distinct, in order.
    pub points: &'a [ModelKey],
    /// Folder of the trace files (created if missing).
    pub out_dir: &'a Path,
    /// Per-point settings.
    pub settings: TraceSettings,
    /// Stop (points not reached get no report, so a re-run traces them) at this instant.
    pub deadline: Option<Instant>,
}

/// Outcome of tracing one point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TraceStatus {
    /// Traced; the file is written.
    Ok,
    /// Ran out of GPU memory; no file.
    Oom,
    /// The tracer raised another error, or reported a file it did not write; no file.
    Error,
    /// The file existed already; not traced again.
    Skipped,
    /// The tracer exited before reporting this point.
    Crash,
    /// Nothing was reported for a point's time limit; the tracer was killed.
    Timeout,
}

impl TraceStatus {
    /// Name used in tables and the index.
    pub fn label(self) -> &'static str {
        match self {
            TraceStatus::Ok => "ok",
            TraceStatus::Oom => "oom",
            TraceStatus::Error => "error",
            TraceStatus::Skipped => "skipped",
            TraceStatus::Crash => "crash",
            TraceStatus::Timeout => "timeout",
        }
    }

    /// Whether the point has no trace file after this outcome.
    pub fn failed(self) -> bool {
        !matches!(self, TraceStatus::Ok | TraceStatus::Skipped)
    }
}

/// One traced point as a runner reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceReport {
    /// The point.
    pub point: ModelKey,
    /// Outcome.
    pub status: TraceStatus,
    /// What went wrong (failed outcomes).
    pub error: Option<String>,
    /// Seconds the tracer spent on the point (build, warm-up, window, profile, export).
    pub trace_s: Option<f64>,
    /// Samples/s over the unprofiled window.
    pub unprofiled_samples_per_s: Option<f64>,
    /// Samples/s over the profiled iterations.
    pub profiled_samples_per_s: Option<f64>,
    /// GPU activities (kernels, memsets, memcopies) in the trace.
    pub n_kernels: Option<u64>,
    /// The trace file (status ok or skipped).
    pub file: Option<PathBuf>,
}

impl TraceReport {
    /// The line `colo calibrate trace` prints on stderr as the point finishes.
    pub fn line(&self) -> String {
        let report = self;
        let mut line = format!("{} {}", report.point, report.status.label());
        if report.status == TraceStatus::Skipped {
            line.push_str(" (trace file exists)");
        }
        if let Some(n) = report.n_kernels {
            let _ = write!(line, ", {n} kernels");
        }
        if let Some(rate) = report.unprofiled_samples_per_s {
            let _ = write!(line, ", {rate:.1} samples/s unprofiled");
        }
        if let Some(s) = report.trace_s {
            let _ = write!(line, ", {s:.1} s");
        }
        if let Some(error) = &report.error {
            let _ = write!(line, ": {error}");
        }
        line
    }

    /// A report for a point that has no trace file.
    pub fn failure(point: &ModelKey, status: TraceStatus, why: &str) -> TraceReport {
        TraceReport {
            point: point.clone(),
            status,
            error: Some(why.to_string()),
            trace_s: None,
            unprofiled_samples_per_s: None,
            profiled_samples_per_s: None,
            n_kernels: None,
            file: None,
        }
    }

    /// A report for a point whose file exists already.
    pub fn skipped(point: &ModelKey, file: PathBuf) -> TraceReport {
        TraceReport {
            error: None,
            file: Some(file),
            ..TraceReport::failure(point, TraceStatus::Skipped, "")
        }
    }
}

/// File name of a point's trace, as trace.py names it (`resnet50:64:224` ->
/// `resnet50_64_224.trace.json.gz`).
pub fn trace_file_name(point: &ModelKey) -> String {
    let stem = point.to_string().replace(':', "_").replace('/', "-");
    format!("{stem}{}", crate::trace::RAW_SUFFIX)
}

/// Parses one tracer line into the report of the first unreported point it names; `None` for
/// other lines. An ok or skipped point whose file is missing becomes an error.
fn parse_line(line: &str, job: &TraceJob<'_>, reported: &[bool]) -> Option<(usize, TraceReport)> {
    let value: Value = serde_json::from_str(line.trim()).ok()?;
    let named = value.get("point")?.as_str()?;
    let index = (0..job.points.len())
        .find(|&i| !reported[i] && job.points[i].to_string() == named.trim())?;
    let point = &job.points[index];
    let status = match value.get("status").and_then(Value::as_str) {
        Some("ok") => TraceStatus::Ok,
        Some("oom") => TraceStatus::Oom,
        Some("skipped") => TraceStatus::Skipped,
        _ => TraceStatus::Error,
    };
    let speed = |key: &str| {
        value
            .get(key)
            .and_then(|v| v.get("samples_per_s"))
            .and_then(Value::as_f64)
    };
    let error = value
        .get("error")
        .and_then(Value::as_str)
        .map(str::to_string);
    let file = job.out_dir.join(trace_file_name(point));
    let report = TraceReport {
        point: point.clone(),
        status,
        error: error.or_else(|| {
            (status == TraceStatus::Error).then(|| format!("tracer reported status {named:?}"))
        }),
        trace_s: value.get("trace_s").and_then(Value::as_f64),
        unprofiled_samples_per_s: speed("unprofiled"),
        profiled_samples_per_s: speed("profiled"),
        n_kernels: value.get("n_kernels").and_then(Value::as_u64),
        file: (!status.failed()).then_some(file.clone()),
    };
    if !status.failed() && !file.is_file() {
        let why = format!(
            "the tracer reported {} but there is no {}",
            status.label(),
            file.display()
        );
        return Some((index, TraceReport::failure(point, TraceStatus::Error, &why)));
    }
    Some((index, report))
}

/// The tracer process; killed (and reaped) on drop if still running.
struct Tracer {
    child: Option<Child>,
}

impl Tracer {
    /// Waits for the exited tracer and says how it ended.
    fn exit_status(&mut self) -> String {
        match self.child.take() {
            Some(mut child) => child
                .wait()
                .map_or_else(|e| e.to_string(), |s| s.to_string()),
            None => "unknown status".into(),
        }
    }
}

impl Drop for Tracer {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            super::process::kill_group(&mut child);
        }
    }
}

/// Reports every point not yet reported with a failure.
fn report_missing(
    job: &TraceJob<'_>,
    reported: &mut [bool],
    status: TraceStatus,
    why: &str,
    on_report: &mut dyn FnMut(TraceReport) -> Result<(), RunError>,
) -> Result<(), RunError> {
    for (index, done) in reported.iter_mut().enumerate() {
        if !*done {
            *done = true;
            on_report(TraceReport::failure(&job.points[index], status, why))?;
        }
    }
    Ok(())
}

impl ProcessRunner {
    /// The tracer's command line (protocol in the module docs).
    fn tracer_command(&self, job: &TraceJob<'_>) -> Command {
        let points: Vec<String> = job.points.iter().map(ToString::to_string).collect();
        let program = self.cfg.tracer.first().map_or("python3", String::as_str);
        let mut cmd = Command::new(program);
        cmd.args(self.cfg.tracer.iter().skip(1))
            .args(["--points", &points.join(",")])
            .arg("--out")
            .arg(job.out_dir)
            .args(["--warmup-s", &job.settings.warmup_s.to_string()])
            .args(["--window-s", &job.settings.window_s.to_string()])
            .args(["--iterations", &job.settings.iterations.to_string()])
            .env("PYTHONUNBUFFERED", "1");
        cmd
    }

    /// Runs one tracer process over the job's points (see [`super::Runner::trace`]).
    pub(super) fn trace_points(
        &mut self,
        job: &TraceJob<'_>,
        on_report: &mut dyn FnMut(TraceReport) -> Result<(), RunError>,
    ) -> Result<(), RunError> {
        if job.points.is_empty() {
            return Ok(());
        }
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| RunError::Io { path, source }
        };
        std::fs::create_dir_all(job.out_dir).map_err(io(job.out_dir))?;
        let dir = LaunchDir::create(&self.cfg.tmp_root)?;
        let stderr_path = dir.path.join("tracer.stderr");
        let stderr = std::fs::File::create(&stderr_path).map_err(io(&stderr_path))?;
        let mut cmd = self.tracer_command(job);
        // Its own process group, so that stopping it stops what it started too.
        cmd.process_group(0);
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr);
        for key in CLEARED_ENV {
            cmd.env_remove(key);
        }
        let plain = ProcSettings::default();
        cmd.envs(worker_env(
            MeasuredMode::Exclusive,
            &plain,
            &self.gpu.uuid,
            None,
        ));
        let program = cmd.get_program().to_string_lossy().into_owned();
        let mut child = cmd
            .spawn()
            .map_err(|source| RunError::Spawn { program, source })?;
        let stdout = child.stdout.take();
        let mut tracer = Tracer { child: Some(child) };
        let (tx, rx) = mpsc::channel();
        if let Some(stdout) = stdout {
            std::thread::spawn(move || {
                for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                    if tx.send(line).is_err() {
                        return;
                    }
                }
            });
        }
        let mut reported = vec![false; job.points.len()];
        let s = job.settings;
        let point_limit_s =
            self.cfg.launch_grace_s + s.warmup_s + s.window_s + self.cfg.step_grace_s;
        let mut last_report = Instant::now();
        loop {
            match rx.recv_timeout(Duration::from_millis(50)) {
                Ok(line) => {
                    if let Some((index, report)) = parse_line(&line, job, &reported) {
                        reported[index] = true;
                        last_report = Instant::now();
                        on_report(report)?;
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                // Stdout closed: the tracer exited (Ctrl-C reaches it too: not a crash).
                Err(RecvTimeoutError::Disconnected) if interrupted() => {
                    return Err(RunError::Interrupted);
                }
                Err(RecvTimeoutError::Disconnected) => {
                    let status = tracer.exit_status();
                    let why = format!(
                        "tracer exited ({status}) before reporting this point; stderr: {}",
                        stderr_tail(&stderr_path)
                    );
                    return report_missing(job, &mut reported, TraceStatus::Crash, &why, on_report);
                }
            }
            if interrupted() {
                return Err(RunError::Interrupted);
            }
            if job.deadline.is_some_and(|d| Instant::now() > d) {
                return Ok(());
            }
            if last_report.elapsed().as_secs_f64() > point_limit_s {
                drop(tracer);
                let why = format!(
                    "no point reported for {point_limit_s:.0} s; tracer killed; stderr: {}",
                    stderr_tail(&stderr_path)
                );
                return report_missing(job, &mut reported, TraceStatus::Timeout, &why, on_report);
            }
        }
    }
}
