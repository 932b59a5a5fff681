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
    Carry, RAW_SUFFIX, TraceError, TracedFolder, files_ending, read_folder_for, read_folder_of,
    read_raw, reduce,
};
use serde::Serialize;

/// The traces of `dir` taken on other GPUs, carried to `to` with host time times `cpu_factor`,
/// bandwidth-bound kernels by the DRAM bytes of the traffic files in `traffic` (or beside the
/// traces); traces already of `to` are left out (nothing to transfer). Fake traces are skipped.
pub fn transfer_folder(
    dir: &Path,
    to: &'static GpuSpec,
    cpu_factor: f64,
    traffic: Option<&Path>,
) -> Result<TracedFolder, TraceError> {
    let carry = Carry {
        cpu_factor,
        traffic,
    };
    read_folder_for(dir, to, false, None, Some(carry))
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
    /// Catalog name of the GPU it was traced on.
    pub gpu: &'static str,
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
    let Ok(paths) = files_ending(dir, RAW_SUFFIX) else {
        return Vec::new();
    };
    paths
        .iter()
        .filter_map(|p| read_raw(p).ok())
        .filter_map(|raw| {
            let from = colo_sim::hardware::gpu(&raw.gpu_name).ok()?;
            (from.name != to.name).then(|| SourcePoint {
                point: raw.point.clone(),
                samples_per_s: raw.unprofiled.samples_per_s,
                gpu_ms: gpu_ms_per_iteration(&reduce(&raw, from)),
                gpu: from.name,
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

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::*;

    /// A kernel table entry: `dur_ns` per activity, `iterations` in the cycle, the alone speed.
    fn trace(
        point: &str,
        speed: f64,
        dur_ns: Vec<u32>,
        dur_scale: f64,
        iterations: u32,
    ) -> KernelTrace {
        let n = dur_ns.len();
        KernelTrace {
            point: point.into(),
            iterations,
            samples_per_iteration: 8,
            unprofiled_samples_per_s: speed,
            profiled_samples_per_s: speed,
            anchor_samples_per_s: None,
            peak_reserved_mib: 1.0,
            host_scale: 1.0,
            dur_scale,
            dur_ns,
            host_ns: vec![0; n],
            blocks: vec![1; n],
            resident: vec![1; n],
            memory_bound: vec![1; n],
            dram_bytes: Vec::new(),
        }
    }

    fn tables(traces: Vec<KernelTrace>) -> KernelTables {
        KernelTables {
            format: "colo-kernel-tables".into(),
            version: 1,
            gpu: "h100-80gb".into(),
            sm_count: 132,
            source: "test".into(),
            transferred_from: None,
            traces,
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn row(
        point: &str,
        (source, transferred, measured): (f64, f64, Option<f64>),
        (error, same): (Option<f64>, Option<f64>),
        (source_ms, transferred_ms, measured_ms, gpu_error): (f64, f64, Option<f64>, Option<f64>),
    ) -> CheckRow {
        CheckRow {
            point: point.into(),
            source_samples_per_s: source,
            transferred_samples_per_s: transferred,
            measured_samples_per_s: measured,
            error_pct: error,
            same_speed_error_pct: same,
            source_gpu_ms: source_ms,
            transferred_gpu_ms: transferred_ms,
            measured_gpu_ms: measured_ms,
            gpu_time_error_pct: gpu_error,
        }
    }

    /// Transferred, not measured on the target.
    fn row_a() -> CheckRow {
        row(
            "a:1:1",
            (100.0, 150.0, None),
            (None, None),
            (2.0, 1.5, None, None),
        )
    }

    /// Measured 100/s and 2 ms on the target: transferred 120/s is 20% fast, the source's 200/s
    /// 100% fast; 2.5 ms of GPU time is 25% slow.
    fn row_b() -> CheckRow {
        row(
            "b:2:2",
            (200.0, 120.0, Some(100.0)),
            (Some(20.0), Some(100.0)),
            (4.0, 2.5, Some(2.0), Some(25.0)),
        )
    }

    /// Measured 50/s and 1 ms: transferred 45/s is 10% slow, the source's 50/s right; 1.2 ms
    /// is 20% slow.
    fn row_d() -> CheckRow {
        row(
            "d:4:4",
            (50.0, 45.0, Some(50.0)),
            (Some(-10.0), Some(0.0)),
            (1.0, 1.2, Some(1.0), Some(20.0)),
        )
    }

    fn cells(line: &str) -> Vec<&str> {
        line.split_whitespace().collect()
    }

    #[test]
    fn issue_37_gpu_time_per_iteration_is_the_kernels_scaled_over_the_iterations() {
        // 1 + 3 ms of kernels at a kernel scale of 0.75, over 2 iterations: 1.5 ms.
        let t = trace("a:1:1", 1.0, vec![1_000_000, 3_000_000], 0.75, 2);
        assert_eq!(gpu_ms_per_iteration(&t), 1.5);
    }

    #[test]
    fn issue_37_check_rows_pair_each_point_with_its_own_source_and_measurement() {
        let sources = [
            SourcePoint {
                point: "a:1:1".into(),
                samples_per_s: 100.0,
                gpu_ms: 2.0,
                gpu: "h200",
            },
            SourcePoint {
                point: "b:2:2".into(),
                samples_per_s: 200.0,
                gpu_ms: 4.0,
                gpu: "h200",
            },
        ];
        // Transferred: a at 150/s with 3 ms of kernels over 2 iterations, b at 120/s with 5 ms.
        let transferred = tables(vec![
            trace("a:1:1", 150.0, vec![1_000_000, 2_000_000], 1.0, 2),
            trace("b:2:2", 120.0, vec![5_000_000], 1.0, 2),
        ]);
        // Measured on the target: b only, 100/s with 4 ms over 2 iterations.
        let measured = tables(vec![trace("b:2:2", 100.0, vec![4_000_000], 1.0, 2)]);
        assert_eq!(
            check_rows(&sources, &transferred, Some(&measured)),
            vec![row_a(), row_b()]
        );
        // Without a check folder nothing is measured.
        let unchecked = check_rows(&sources, &transferred, None);
        assert_eq!(unchecked.len(), 2);
        assert!(unchecked.iter().all(|r| r.measured_samples_per_s.is_none()
            && r.error_pct.is_none()
            && r.gpu_time_error_pct.is_none()));
    }

    #[test]
    fn issue_37_abs_stats_are_mean_median_and_max_of_the_absolute_values() {
        assert_eq!(abs_stats(&[]), None);
        // |values| 1, 2, 4, 5, 10: mean 22 / 5, the middle one 4.
        assert_eq!(
            abs_stats(&[-5.0, 1.0, -2.0, 4.0, 10.0]),
            Some((4.4, 4.0, 10.0, 5))
        );
        // |values| 1, 2, 3, 6: mean 3, median between 2 and 3.
        assert_eq!(abs_stats(&[1.0, -2.0, 6.0, -3.0]), Some((3.0, 2.5, 6.0, 4)));
        // Two: the median is their mean.
        assert_eq!(abs_stats(&[1.0, -3.0]), Some((2.0, 2.0, 3.0, 2)));
    }

    #[test]
    fn issue_37_a_checked_table_shows_the_measured_points_and_counts_the_others() {
        let out = render(&[row_a(), row_b(), row_d()], "h200", "h100");
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines[0].starts_with("point"), "{out}");
        assert_eq!(
            cells(lines[1]),
            [
                "b:2:2",
                "200.0",
                "120.0",
                "100.0",
                "20.0",
                "100.0",
                "4.00/2.50/2.00",
                "25.0"
            ]
        );
        assert_eq!(
            cells(lines[2]),
            [
                "d:4:4",
                "50.0",
                "45.0",
                "50.0",
                "-10.0",
                "0.0",
                "1.00/1.20/1.00",
                "20.0"
            ]
        );
        assert_eq!(
            lines[3],
            "(1 more points transferred, not measured on h100: in --csv)"
        );
        // |errors| 20 and 10; same speed 100 and 0; GPU time 25 and 20.
        assert!(
            lines[4].starts_with(
                "alone speed on h100, transferred from h200 against measured (2 points): mean \
                 |error| 15.0%, median 15.0%, max 20.0%; same speed as on h200: mean 50.0%, \
                 median 50.0%, max 100.0%"
            ),
            "{out}"
        );
        assert!(
            lines[5].starts_with(
                "GPU time per iteration, transferred against measured (2 points): mean |error| \
                 22.5%, median 22.5%, max 25.0%"
            ),
            "{out}"
        );
        assert_eq!(lines.len(), 6, "{out}");
        // Two not measured.
        let out = render(&[row_a(), row_b(), row_a()], "h200", "h100");
        assert!(
            out.contains("\n(2 more points transferred, not measured on h100: in --csv)\n"),
            "{out}"
        );
        // All measured: nothing more to count.
        let out = render(&[row_b(), row_d()], "h200", "h100");
        assert!(!out.contains("more points"), "{out}");
        assert_eq!(out.lines().count(), 5, "{out}");
    }

    #[test]
    fn issue_37_an_unchecked_table_shows_every_point_and_no_summary() {
        let out = render(&[row_a(), row_a()], "h200", "h100");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 3, "{out}");
        for line in &lines[1..] {
            assert_eq!(
                cells(line),
                ["a:1:1", "100.0", "150.0", "-", "-", "-", "2.00/1.50/-", "-"]
            );
        }
    }

    #[test]
    fn issue_37_the_csv_has_a_line_per_point_with_empty_cells_where_not_measured() {
        assert_eq!(
            render_csv(&[row_a(), row_b()]),
            "point,source_samples_per_s,transferred_samples_per_s,measured_samples_per_s,error_pct,same_speed_error_pct,source_gpu_ms,transferred_gpu_ms,measured_gpu_ms,gpu_time_error_pct\n\
             a:1:1,100.0000,150.0000,,,,2.0000,1.5000,,\n\
             b:2:2,200.0000,120.0000,100.0000,20.0000,100.0000,4.0000,2.5000,2.0000,25.0000\n"
        );
    }

    /// A raw trace of `gpu_name` for `point`: two elementwise kernels of 1 and 3 ms over 2
    /// iterations of batch 8, launched 5 ms apart, at 800 samples/s (16 samples every 20 ms:
    /// the host, not the 4 ms of kernels, sets the speed).
    fn write_trace(dir: &Path, file: &str, point: &str, gpu_name: &str) {
        let json = serde_json::json!({
            "format": "colo-kernel-trace", "version": 1, "point": point, "batch": 8,
            "status": "ok", "gpu_name": gpu_name, "sm_count": 132, "driver": "1",
            "torch": "2", "cuda": "12",
            "unprofiled": {"samples_per_s": 800.0},
            "profiled": {"samples_per_s": 700.0, "n_iterations": 2},
            "peak_reserved_mib": 100.0,
            "names": ["elementwise_kernel"],
            "kernels": {
                "name": [0, 0], "kind": [0, 0], "dur_ns": [1_000_000, 3_000_000],
                "grid": [[4, 1, 1], [4, 1, 1]], "block": [[128, 1, 1], [128, 1, 1]],
                "regs": [32, 32], "smem": [0, 0], "launch_ns": [0, 5_000_000]
            }
        });
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(json.to_string().as_bytes()).unwrap();
        std::fs::write(dir.join(file), gz.finish().unwrap()).unwrap();
    }

    #[test]
    fn issue_37_source_points_are_the_traces_of_other_gpus() {
        let dir = tempfile::tempdir().unwrap();
        write_trace(dir.path(), "a.trace.json.gz", "a:8:224", "NVIDIA H200");
        write_trace(
            dir.path(),
            "b.trace.json.gz",
            "b:8:224",
            "NVIDIA H100 80GB HBM3",
        );
        write_trace(dir.path(), "c.trace.json.gz", "c:8:224", "Unknown GPU 9000");
        write_trace(dir.path(), "d.json.gz", "d:8:224", "NVIDIA H200");
        std::fs::write(dir.path().join("e.trace.json.gz"), b"not gzip").unwrap();
        let h100 = colo_sim::hardware::gpu("h100").unwrap();
        // The H200 trace only: 800 samples/s, (1 + 3 ms) / 2 iterations of GPU time.
        assert_eq!(
            source_points(dir.path(), h100),
            vec![SourcePoint {
                point: "a:8:224".into(),
                samples_per_s: 800.0,
                gpu_ms: 2.0,
                gpu: "h200",
            }]
        );
        assert_eq!(source_points(&dir.path().join("missing"), h100), vec![]);
    }
}
