//! `colo calibrate transfer`: a folder of kernel traces carried to another GPU
//! (`colo_sim::perf::kernel::transfer`), written as that GPU's kernel tables, and checked against
//! traces measured on it: per point the alone speed predicted against the one measured, beside
//! the "same speed as on the source" baseline.
use std::fmt::Write as _;
use std::path::Path;

use colo_sim::hardware::GpuSpec;
use colo_sim::perf::kernel::KernelTables;
use colo_sim::perf::kernel::KernelTrace;
use colo_sim::perf::kernel::raw::{
    RAW_SUFFIX, TraceError, TracedFolder, read_folder_for, read_folder_of, read_raw, reduce,
};
use serde::Serialize;

/// The traces of `dir` taken on other GPUs, carried to `to` with host time times `cpu_factor`;
/// traces already of `to` are left out (nothing to transfer). Fake traces are skipped.
pub fn transfer_folder(
    dir: &Path,
    to: &'static GpuSpec,
    cpu_factor: f64,
) -> Result<TracedFolder, TraceError> {
    read_folder_for(dir, to, false, None, Some(cpu_factor))
}

/// One point carried over and, where the check folder has it, measured on the target.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CheckRow {
    /// `MODEL:BATCH:IMAGE`.
    pub point: String,
    /// Alone samples/s measured on the source GPU (the trace's unprofiled window).
    pub source_samples_per_s: f64,
    /// Alone samples/s on the target predicted from the transferred trace.
    pub transferred_samples_per_s: f64,
    /// Alone samples/s measured on the target (its own trace's unprofiled window), if traced.
    pub measured_samples_per_s: Option<f64>,
    /// (transferred - measured) / measured, percent.
    pub error_pct: Option<f64>,
    /// (source - measured) / measured, percent: the error of assuming the same speed.
    pub same_speed_error_pct: Option<f64>,
    /// GPU time per iteration (its kernels' summed time) on the source, ms (measured).
    pub source_gpu_ms: f64,
    /// The same on the target from the transferred trace, ms (predicted).
    pub transferred_gpu_ms: f64,
    /// The same in the target's own trace, ms (measured), if traced.
    pub measured_gpu_ms: Option<f64>,
    /// (transferred - measured) / measured GPU time, percent: the transfer's error without the
    /// hosts' difference (a host-bound job's speed follows its CPU, not its GPU).
    pub gpu_time_error_pct: Option<f64>,
}

/// Kernel time per iteration of a trace, ms: its activities' durations (concurrent ones merged)
/// times its kernel scale, over its iterations.
pub fn gpu_ms_per_iteration(trace: &KernelTrace) -> f64 {
    let ns: f64 = trace.dur_ns.iter().map(|&d| f64::from(d)).sum();
    ns * trace.dur_scale / f64::from(trace.iterations.max(1)) / 1e6
}

/// What the transfer starts from for one point: measured on the source GPU.
#[derive(Clone, Debug, PartialEq)]
pub struct SourcePoint {
    /// `MODEL:BATCH:IMAGE`.
    pub point: String,
    /// Unprofiled alone samples/s.
    pub samples_per_s: f64,
    /// GPU time per iteration, ms ([`gpu_ms_per_iteration`]).
    pub gpu_ms: f64,
}

/// Rows of every transferred point: its source speed from `source_speeds` (point, samples/s),
/// and the target's measured speed from `measured` (traces of the target GPU, e.g. `colo
/// calibrate trace` run there) where it has the point.
pub fn check_rows(
    sources: &[SourcePoint],
    transferred: &KernelTables,
    measured: Option<&KernelTables>,
) -> Vec<CheckRow> {
    transferred
        .traces
        .iter()
        .map(|t| {
            let target = measured.and_then(|m| m.traces.iter().find(|mt| mt.point == t.point));
            let measured_speed = target.map(KernelTrace::alone_samples_per_s);
            let measured_gpu_ms = target.map(gpu_ms_per_iteration);
            let source = sources.iter().find(|s| s.point == t.point);
            let source_speed = source.map_or(f64::NAN, |s| s.samples_per_s);
            let pct = |v: f64| measured_speed.map(|m| 100.0 * (v - m) / m);
            let transferred_gpu_ms = gpu_ms_per_iteration(t);
            CheckRow {
                source_gpu_ms: source.map_or(f64::NAN, |s| s.gpu_ms),
                transferred_gpu_ms,
                measured_gpu_ms,
                gpu_time_error_pct: measured_gpu_ms.map(|m| 100.0 * (transferred_gpu_ms - m) / m),
                point: t.point.clone(),
                source_samples_per_s: source_speed,
                transferred_samples_per_s: t.unprofiled_samples_per_s,
                measured_samples_per_s: measured_speed,
                error_pct: pct(t.unprofiled_samples_per_s),
                same_speed_error_pct: pct(source_speed),
            }
        })
        .collect()
}

/// What each trace file in `dir` taken on a catalog GPU other than `to` measured, the points
/// the transfer starts from; unreadable files are left to the folder read to report.
pub fn source_points(dir: &Path, to: &GpuSpec) -> Vec<SourcePoint> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<_> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(RAW_SUFFIX))
        .collect();
    paths.sort();
    paths
        .iter()
        .filter_map(|p| read_raw(p).ok())
        .filter_map(|raw| {
            let from = colo_sim::hardware::gpu(&raw.gpu_name).ok()?;
            (from.name != to.name).then(|| SourcePoint {
                point: raw.point.clone(),
                samples_per_s: raw.unprofiled.samples_per_s,
                gpu_ms: gpu_ms_per_iteration(&reduce(&raw, from)),
            })
        })
        .collect()
}

/// Reads the target's own traces for the check.
pub fn measured_tables(dir: &Path, to: &'static GpuSpec) -> Result<TracedFolder, TraceError> {
    read_folder_of(dir, to, false)
}

/// Mean, median and largest absolute value of `values`, and how many; `None` when empty.
pub fn abs_stats(values: &[f64]) -> Option<(f64, f64, f64, usize)> {
    if values.is_empty() {
        return None;
    }
    let mut abs: Vec<f64> = values.iter().map(|v| v.abs()).collect();
    abs.sort_by(f64::total_cmp);
    let n = abs.len();
    let median = if n % 2 == 1 {
        abs[n / 2]
    } else {
        0.5 * (abs[n / 2 - 1] + abs[n / 2])
    };
    Some((abs.iter().sum::<f64>() / n as f64, median, abs[n - 1], n))
}

/// The printed table: one row per point (with a check, only the points measured on the target,
/// the others counted), and the summary of the check where there is one.
pub fn render(rows: &[CheckRow], from: &str, to: &str) -> String {
    let mut out = String::new();
    let checked = rows.iter().any(|r| r.measured_samples_per_s.is_some());
    let unmeasured = rows.len()
        - rows
            .iter()
            .filter(|r| r.measured_samples_per_s.is_some())
            .count();
    let rows: Vec<&CheckRow> = rows
        .iter()
        .filter(|r| !checked || r.measured_samples_per_s.is_some())
        .collect();
    let width = rows.iter().map(|r| r.point.len()).max().unwrap_or(5).max(5);
    let _ = writeln!(
        out,
        "{:<width$}  {:>18}  {:>18}  {:>18}  {:>8}  {:>12}  {:>24}  {:>11}",
        "point",
        format!("{from} meas. /s"),
        format!("{to} transf. /s"),
        format!("{to} meas. /s"),
        "error %",
        "same-speed %",
        "GPU ms/it src/tr./meas.",
        "GPU error %"
    );
    let cell = |v: Option<f64>, digits: usize| {
        v.map_or_else(|| "-".to_owned(), |v| format!("{v:.digits$}"))
    };
    for r in &rows {
        let _ = writeln!(
            out,
            "{:<width$}  {:>18.1}  {:>18.1}  {:>18}  {:>8}  {:>12}  {:>24}  {:>11}",
            r.point,
            r.source_samples_per_s,
            r.transferred_samples_per_s,
            cell(r.measured_samples_per_s, 1),
            cell(r.error_pct, 1),
            cell(r.same_speed_error_pct, 1),
            format!(
                "{:.2}/{:.2}/{}",
                r.source_gpu_ms,
                r.transferred_gpu_ms,
                cell(r.measured_gpu_ms, 2)
            ),
            cell(r.gpu_time_error_pct, 1),
        );
    }
    if checked && unmeasured > 0 {
        let _ = writeln!(
            out,
            "({unmeasured} more points transferred, not measured on {to}: in --csv)"
        );
    }
    let errors: Vec<f64> = rows.iter().filter_map(|r| r.error_pct).collect();
    let same: Vec<f64> = rows.iter().filter_map(|r| r.same_speed_error_pct).collect();
    if let (Some(e), Some(s)) = (abs_stats(&errors), abs_stats(&same)) {
        let _ = writeln!(
            out,
            "alone speed on {to}, transferred from {from} against measured ({} points): mean \
             |error| {:.1}%, median {:.1}%, max {:.1}%; same speed as on {from}: mean {:.1}%, \
             median {:.1}%, max {:.1}%",
            e.3, e.0, e.1, e.2, s.0, s.1, s.2
        );
    }
    let gpu: Vec<f64> = rows.iter().filter_map(|r| r.gpu_time_error_pct).collect();
    if let Some(g) = abs_stats(&gpu) {
        let _ = writeln!(
            out,
            "GPU time per iteration, transferred against measured ({} points): mean |error| \
             {:.1}%, median {:.1}%, max {:.1}% (the hosts' CPUs differ: a host-bound job's speed \
             follows its CPU; --cpu-factor states it)",
            g.3, g.0, g.1, g.2
        );
    }
    out
}

/// The rows as CSV (a header, one line per point; empty cells where not measured).
pub fn render_csv(rows: &[CheckRow]) -> String {
    let mut out = String::from(
        "point,source_samples_per_s,transferred_samples_per_s,measured_samples_per_s,error_pct,same_speed_error_pct,source_gpu_ms,transferred_gpu_ms,measured_gpu_ms,gpu_time_error_pct\n",
    );
    let cell = |v: Option<f64>| v.map_or_else(String::new, |v| format!("{v:.4}"));
    for r in rows {
        let _ = writeln!(
            out,
            "{},{:.4},{:.4},{},{},{},{:.4},{:.4},{},{}",
            r.point,
            r.source_samples_per_s,
            r.transferred_samples_per_s,
            cell(r.measured_samples_per_s),
            cell(r.error_pct),
            cell(r.same_speed_error_pct),
            r.source_gpu_ms,
            r.transferred_gpu_ms,
            cell(r.measured_gpu_ms),
            cell(r.gpu_time_error_pct)
        );
    }
    out
}
