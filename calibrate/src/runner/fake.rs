//! A runner that replays a synthetic profile: no GPU, no processes. Selected by the hidden
//! `--fake-gpu` flag so CLI tests exercise plans, resume, failure records and summaries.
//!
//! The synthetic model (numbers are invented, and every record says `source: "fake"`): a point
//! alone runs at `base / (batch * image^2)`-ish speed; it keeps the GPU busy a fraction `u` of the
//! time and fills a fraction `s` of its SMs. Time-sliced sets share time (`1 / max(1, sum u)`),
//! MPS sets share SMs (`1 / max(1, sum u*s)`), an SM budget `p` stretches the busy part by
//! `max(1, s/p)`. Model `oom` (or a point over its memory limit) fails with status `oom`; model
//! `crash` fails with status `crash`; model `slow` takes its window in real time (so that a
//! test can interrupt a run). Ctrl-C or SIGTERM ([`super::interrupted`]) stops a launch between
//! its points, as the real runner stops its workers.
//!
//! Traces ([`Runner::trace`]) are small synthetic `colo-kernel-trace` files in trace.py's schema
//! (gzip'd JSON): two iterations of six activities whose GPU time is the point's `u` share of
//! its synthetic iteration time, with `torch: "fake"` and `source: "fake"`. They name an
//! `NVIDIA H200` (the fake GPU is H200-sized) so that sim's kernel tables read them; models
//! `oom` and `crash` fail as in plans.
use std::io::Write as _;
use std::path::Path;
use std::time::Instant;

use super::process::failure_report;
use super::{
    Launch, MpsDirs, Report, RunError, Runner, Step, TraceJob, TraceReport, TraceStatus,
    interrupted, trace_file_name, worker_env,
};
use crate::gpu::{GpuInfo, WindowStats, unix_now};
use crate::store::{Measurement, Source, Status};
use colo_sim::perf::MeasuredMode;
use colo_sim::workload::ModelKey;

/// The fake runner.
pub struct FakeRunner {
    gpu: GpuInfo,
}

impl Default for FakeRunner {
    fn default() -> Self {
        FakeRunner::new()
    }
}

impl FakeRunner {
    /// A fake H200-sized GPU.
    pub fn new() -> FakeRunner {
        let gpu = GpuInfo {
            name: "Fake GPU".into(),
            driver: "0.0".into(),
            uuid: "GPU-fake".into(),
            index: 0,
            memory_total_mib: 143_771,
        };
        FakeRunner { gpu }
    }
}

/// (alone samples/s, time demand u, space demand s, memory MiB) of a point.
fn synthetic(point: &ModelKey) -> (f64, f64, f64, f64) {
    let weight = match point.model.as_str() {
        "resnet18" => 1.0,
        "resnet26" => 1.6,
        "resnet50" => 4.0,
        "resnet152" => 11.0,
        "vit_b_16" => 17.0,
        _ => 3.0,
    };
    let work = weight * f64::from(point.batch) * f64::from(point.image).powi(2) / 1024.0;
    let alone = 2.0e6 * f64::from(point.batch) / (work + 40.0 * f64::from(point.batch));
    let util = work / (work + 200.0);
    let space = (0.3 + work / 20_000.0).min(1.0);
    let memory = 400.0 + work / 4.0;
    (alone, util, space, memory)
}

fn fake_rate(launch: &Launch<'_>, set: &[ModelKey], rank: usize, repeat: u32) -> f64 {
    let (alone, util, space, _) = synthetic(&set[rank]);
    let demands: Vec<(f64, f64)> = set
        .iter()
        .map(synthetic)
        .map(|(_, u, s, _)| (u, s))
        .collect();
    let share = match launch.group.mode {
        MeasuredMode::Exclusive | MeasuredMode::Mig => 1.0,
        MeasuredMode::Timeslice => 1.0 / demands.iter().map(|d| d.0).sum::<f64>().max(1.0),
        MeasuredMode::Mps | MeasuredMode::MigEmulated => {
            1.0 / demands.iter().map(|d| d.0 * d.1).sum::<f64>().max(1.0)
        }
    };
    let budget = launch.group.procs[rank]
        .sm_percent
        .map_or(1.0, |p| f64::from(p) / 100.0);
    let stretch = (1.0 - util) + util * (space / budget).max(1.0);
    let noise = 1.0 + 0.01 * (f64::from(repeat % 3) - 1.0);
    alone * share / stretch * noise
}

/// The synthetic outcome of one process-point.
fn fake_report(
    launch: &Launch<'_>,
    step_idx: usize,
    step: Step,
    rank: usize,
    env: serde_json::Map<String, serde_json::Value>,
) -> Report {
    let set = &launch.group.sets[step.set_index];
    let point = &set[rank];
    let (_, _, _, memory) = synthetic(point);
    let now = unix_now();
    let over_limit = launch.group.procs[rank]
        .mem_limit_mib
        .is_some_and(|limit| memory > limit as f64);
    if point.model == "crash" {
        let why = "worker exited (exit status: 3) before reporting this point (fake)";
        return failure_report(step_idx, rank, Status::Crash, why, now);
    }
    if point.model == "oom" || over_limit {
        let mut oom = failure_report(
            step_idx,
            rank,
            Status::Oom,
            "CUDA out of memory (fake)",
            now,
        );
        oom.measurement.peak_reserved_mib = Some(memory);
        oom.measurement.env = env;
        return oom;
    }
    let failed =
        (0..set.len()).filter(|&r| r != rank && matches!(set[r].model.as_str(), "crash" | "oom"));
    let rate = fake_rate(launch, set, rank, step.repeat);
    let measurement = Measurement {
        status: Status::Ok,
        samples_per_s: Some(rate),
        iterations: Some((rate * launch.window_s / f64::from(point.batch)).round() as u64),
        window_s: Some(launch.window_s),
        warmup_s: Some(launch.warmup_s),
        cpu_time_s: Some(launch.window_s * 0.9),
        peak_allocated_mib: Some(memory * 0.8),
        peak_reserved_mib: Some(memory),
        t_start: now,
        t_end: now + launch.window_s,
        co_failed: failed.collect(),
        error: None,
        env,
        framework: None,
        gpu: WindowStats::default(),
        lifetime_s: None,
    };
    Report {
        step: step_idx,
        rank,
        measurement,
        mig_uuid: None,
    }
}

/// Kernel names of the synthetic trace's cycle, and their kinds (0 kernel, 1 memset).
const FAKE_KERNELS: [(&str, u8); 6] = [
    ("fake_conv_fprop_kernel", 0),
    ("fake_batch_norm_kernel", 0),
    ("fake_gemm_kernel", 0),
    ("fake_conv_dgrad_kernel", 0),
    ("fake_sgd_step_kernel", 0),
    ("fake_memset", 1),
];

/// Iterations in a synthetic trace.
const FAKE_ITERATIONS: u32 = 2;

/// The synthetic trace of a point (trace.py's schema, see calibrate/workloads/trace.py).
pub(crate) fn synthetic_trace(point: &ModelKey, gpu: &GpuInfo) -> serde_json::Value {
    let (alone, util, space, memory) = synthetic(point);
    let iteration_ns = 1e9 * f64::from(point.batch) / alone;
    let slot_ns = iteration_ns / FAKE_KERNELS.len() as f64;
    let n = FAKE_KERNELS.len() * FAKE_ITERATIONS as usize;
    let blocks = (space * 132.0 * 8.0).round().max(1.0) as u32;
    let kind = |i: usize| FAKE_KERNELS[i % FAKE_KERNELS.len()].1;
    // One column of the n activities; memsets have no grid, block or registers.
    let column = |kernel: serde_json::Value, memset: serde_json::Value| {
        let rows = (0..n).map(|i| if kind(i) == 0 { &kernel } else { &memset });
        serde_json::Value::Array(rows.cloned().collect())
    };
    let launch: Vec<i64> = (0..n)
        .map(|i| (i as f64 * slot_ns).round() as i64)
        .collect();
    let dur_ns = (util * slot_ns).round().max(1.0) as i64;
    let kernels = serde_json::json!({
        "name": (0..n).map(|i| i % FAKE_KERNELS.len()).collect::<Vec<_>>(),
        "kind": (0..n).map(kind).collect::<Vec<_>>(),
        "start_ns": launch,
        "dur_ns": vec![dur_ns; n],
        "grid": column(serde_json::json!([blocks, 1, 1]), serde_json::json!([0, 0, 0])),
        "block": column(serde_json::json!([256, 1, 1]), serde_json::json!([0, 0, 0])),
        "regs": column(32.into(), 0.into()),
        "smem": vec![0; n],
        "occupancy_pct": column(50.0.into(), 0.0.into()),
        "blocks_per_sm": column((f64::from(blocks) / 132.0).into(), 0.0.into()),
        "stream": vec![7; n],
        "launch_ns": launch,
        "launch_dur_ns": vec![3000; n],
    });
    let profiled = alone * 0.97;
    let profiled_window = f64::from(FAKE_ITERATIONS * point.batch) / profiled;
    serde_json::json!({
        "gpu_name": "NVIDIA H200",
        "gpu_uuid": gpu.uuid,
        "sm_count": 132,
        "driver": gpu.driver,
        "torch": "fake",
        "cuda": null,
        "cudnn": null,
        "env": {"CUDA_VISIBLE_DEVICES": gpu.uuid},
        "source": "fake",
        "format": "colo-kernel-trace",
        "version": 1,
        "point": point.to_string(),
        "model": point.model,
        "batch": point.batch,
        "image": point.image,
        "status": "ok",
        "unprofiled": {
            "samples_per_s": alone,
            "iterations": (alone * 1.5 / f64::from(point.batch)).round().max(1.0),
            "window_s": 1.5,
        },
        "profiled": {
            "samples_per_s": profiled,
            "window_s": profiled_window,
            "n_iterations": FAKE_ITERATIONS,
        },
        "names": FAKE_KERNELS.iter().map(|(name, _)| *name).collect::<Vec<_>>(),
        "kernels": kernels,
        "syncs": [],
        "peak_allocated_mib": memory * 0.8,
        "peak_reserved_mib": memory,
        "trace_s": 0.0,
    })
}

/// Writes `value` gzip'd to `path`, whole or not at all (as trace.py does).
fn write_gzip_json(path: &Path, value: &serde_json::Value) -> Result<(), RunError> {
    let io = |source| RunError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let text = serde_json::to_vec(value)
        .map_err(std::io::Error::from)
        .map_err(io)?;
    gz.write_all(&text).map_err(io)?;
    let bytes = gz.finish().map_err(io)?;
    colo_sim::fsutil::write_atomic(path, &bytes).map_err(io)
}

/// The synthetic outcome of tracing one point (writes its file when ok).
fn fake_trace(point: &ModelKey, out_dir: &Path, gpu: &GpuInfo) -> Result<TraceReport, RunError> {
    let file = out_dir.join(trace_file_name(point));
    if file.exists() {
        return Ok(TraceReport::skipped(point, file));
    }
    match point.model.as_str() {
        "crash" => {
            let why = "tracer exited (exit status: 3) before reporting this point (fake)";
            return Ok(TraceReport::failure(point, TraceStatus::Crash, why));
        }
        "oom" => {
            let why = "OutOfMemoryError: CUDA out of memory (fake)";
            return Ok(TraceReport::failure(point, TraceStatus::Oom, why));
        }
        _ => {}
    }
    let trace = synthetic_trace(point, gpu);
    write_gzip_json(&file, &trace)?;
    let speed = |key: &str| trace[key]["samples_per_s"].as_f64();
    Ok(TraceReport {
        point: point.clone(),
        status: TraceStatus::Ok,
        error: None,
        trace_s: Some(0.0),
        unprofiled_samples_per_s: speed("unprofiled"),
        profiled_samples_per_s: speed("profiled"),
        n_kernels: Some((FAKE_KERNELS.len() * FAKE_ITERATIONS as usize) as u64),
        file: Some(file),
    })
}

/// Sleeps `seconds` of real time (a `slow` point's window), stopping early at an interrupt.
fn wait_out(seconds: f64) -> Result<(), RunError> {
    let end = Instant::now() + std::time::Duration::from_secs_f64(seconds.max(0.0));
    while Instant::now() < end {
        if interrupted() {
            return Err(RunError::Interrupted);
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    Ok(())
}

impl Runner for FakeRunner {
    fn gpu(&self) -> &GpuInfo {
        &self.gpu
    }

    fn trace(
        &mut self,
        job: &TraceJob<'_>,
        on_report: &mut dyn FnMut(TraceReport) -> Result<(), RunError>,
    ) -> Result<(), RunError> {
        std::fs::create_dir_all(job.out_dir).map_err(|source| RunError::Io {
            path: job.out_dir.to_path_buf(),
            source,
        })?;
        for point in job.points {
            if job.deadline.is_some_and(|d| Instant::now() > d) {
                return Ok(());
            }
            if interrupted() {
                return Err(RunError::Interrupted);
            }
            on_report(fake_trace(point, job.out_dir, &self.gpu)?)?;
        }
        Ok(())
    }

    fn source(&self) -> Source {
        Source::Fake
    }

    fn run(
        &mut self,
        launch: &Launch<'_>,
        on_report: &mut dyn FnMut(Report) -> Result<(), RunError>,
    ) -> Result<(), RunError> {
        let creates = launch.group.creates_mig_instances();
        if creates && !launch.allow_mig_reconfigure {
            return Err(RunError::MigReconfigureNotAllowed {
                group: launch.group.id.clone(),
            });
        }
        let dirs = MpsDirs::under(std::path::Path::new("/tmp/colo-calibrate-fake"));
        for (step_idx, step) in launch.steps.iter().enumerate() {
            let set = &launch.group.sets[step.set_index];
            if set.iter().any(|p| p.model == "slow") {
                wait_out(launch.window_s)?;
            }
            if interrupted() {
                return Err(RunError::Interrupted);
            }
            for rank in 0..launch.group.n_procs() {
                let proc = &launch.group.procs[rank];
                let env = worker_env(launch.group.mode, proc, &self.gpu.uuid, Some(&dirs));
                let env = env
                    .into_iter()
                    .map(|(k, v)| (k, serde_json::Value::String(v)))
                    .collect();
                let report = fake_report(launch, step_idx, *step, rank, env);
                // Stands for the instance a real run creates; the record says `source: fake`.
                let mig_uuid = creates.then(|| format!("MIG-fake-r{rank}"));
                on_report(Report { mig_uuid, ..report })?;
            }
        }
        Ok(())
    }
}
