//! A runner that replays a synthetic profile: no GPU, no processes. Selected by the hidden
//! `--fake-gpu` flag so CLI tests exercise plans, resume, failure records and summaries.
//!
//! The synthetic model (numbers are invented, and every record says `source: "fake"`): a point
//! alone runs at `base / (batch * image^2)`-ish speed; it keeps the GPU busy a fraction `u` of the
//! time and fills a fraction `s` of its SMs. Time-sliced sets share time (`1 / max(1, sum u)`),
//! MPS sets share SMs (`1 / max(1, sum u*s)`), an SM budget `p` stretches the busy part by
//! `max(1, s/p)`. Model `oom` (or a point over its memory limit) fails with status `oom`; model
//! `crash` fails with status `crash`.
use super::process::failure_report;
use super::{Launch, MpsDirs, Report, RunError, Runner, Step, worker_env};
use crate::gpu::{GpuInfo, WindowStats, unix_now};
use crate::plan::{Mode, Point};
use crate::store::Status;

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
fn synthetic(point: &Point) -> (f64, f64, f64, f64) {
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

fn fake_rate(launch: &Launch<'_>, set: &[Point], rank: usize, repeat: u32) -> f64 {
    let (alone, util, space, _) = synthetic(&set[rank]);
    let demands: Vec<(f64, f64)> = set
        .iter()
        .map(synthetic)
        .map(|(_, u, s, _)| (u, s))
        .collect();
    let share = match launch.group.mode {
        Mode::Exclusive | Mode::Mig => 1.0,
        Mode::Timeslice => 1.0 / demands.iter().map(|d| d.0).sum::<f64>().max(1.0),
        Mode::Mps | Mode::MigEmulated => {
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
        let oom = failure_report(
            step_idx,
            rank,
            Status::Oom,
            "CUDA out of memory (fake)",
            now,
        );
        return Report {
            peak_reserved_mib: Some(memory),
            env,
            ..oom
        };
    }
    let failed =
        (0..set.len()).filter(|&r| r != rank && matches!(set[r].model.as_str(), "crash" | "oom"));
    let rate = fake_rate(launch, set, rank, step.repeat);
    Report {
        step: step_idx,
        rank,
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
        mig_uuid: None,
    }
}

impl Runner for FakeRunner {
    fn gpu(&self) -> &GpuInfo {
        &self.gpu
    }

    fn source_label(&self) -> &'static str {
        "fake"
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
