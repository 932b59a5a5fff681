//! The real runner: starts worker processes (PyTorch `train.py`, or any program speaking its
//! protocol), sets each one's environment for the mode, runs the MPS daemon when needed, samples
//! the GPU, and turns the workers' JSON lines into reports.
//!
//! Worker protocol (see calibrate/workloads/train.py): arguments `--points P1,P2,.. --warmup-s W
//! --window-s S --barrier DIR --rank R --n-procs N --barrier-timeout-s T`; one JSON line per point
//! on stdout with `"kind": "colo_point"` and `"step"`. When a worker exits, the runner writes
//! `DIR/gone.r<rank>` so co-runners stop waiting for it at the barrier.
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{
    CLEARED_ENV, Launch, MigInstances, MpsDaemon, MpsDirs, Report, RunError, Runner, TraceJob,
    TraceReport, interrupted, worker_env,
};
use crate::gpu::{self, GpuInfo, Sampler, Source, WindowStats};
use crate::store::{Measurement, Status};
use colo_sim::perf::MeasuredMode;

/// How the real runner starts workers.
#[derive(Debug, Clone)]
pub struct ProcessRunnerConfig {
    /// Worker program and its leading arguments, e.g. `["python3", "calibrate/workloads/train.py"]`.
    pub worker: Vec<String>,
    /// Tracer program and its leading arguments, e.g. `["python3",
    /// "calibrate/workloads/trace.py"]` (protocol in `runner::trace_points`).
    pub tracer: Vec<String>,
    /// MPS control program (`nvidia-cuda-mps-control`).
    pub mps_control: PathBuf,
    /// nvidia-smi, used only to create and destroy MIG instances (`--allow-mig-reconfigure`).
    pub nvidia_smi: PathBuf,
    /// GPU index (as nvidia-smi numbers it).
    pub gpu_index: u32,
    /// Folder under which each launch makes its private barrier and MPS folders.
    pub tmp_root: PathBuf,
    /// GPU sampling period.
    pub sample_interval: Duration,
    /// Seconds a worker waits at a barrier for a co-runner that has not arrived.
    pub barrier_timeout_s: f64,
    /// Extra seconds per step before a launch counts as hung (then recorded as timeout).
    pub step_grace_s: f64,
    /// Extra seconds per launch (process start-up) before it counts as hung.
    pub launch_grace_s: f64,
}

impl ProcessRunnerConfig {
    /// The default settings on GPU `index`: no worker, the default tracer
    /// ([`DEFAULT_TRACER`](super::DEFAULT_TRACER)), MPS and nvidia-smi from the `PATH`, launch
    /// folders under `/tmp`, sampling every 200 ms.
    pub fn for_gpu(index: u32) -> Self {
        ProcessRunnerConfig {
            worker: Vec::new(),
            tracer: super::DEFAULT_TRACER
                .split_whitespace()
                .map(str::to_string)
                .collect(),
            mps_control: PathBuf::from("nvidia-cuda-mps-control"),
            nvidia_smi: PathBuf::from("nvidia-smi"),
            gpu_index: index,
            tmp_root: PathBuf::from("/tmp"),
            sample_interval: Duration::from_millis(200),
            barrier_timeout_s: 300.0,
            step_grace_s: 60.0,
            launch_grace_s: 120.0,
        }
    }
}

/// The real runner.
pub struct ProcessRunner {
    pub(super) cfg: ProcessRunnerConfig,
    pub(super) gpu: GpuInfo,
    pub(super) source: Option<Source>,
    /// A fake GPU (`--fake-gpu`): records say `fake`, and no MPS daemon is started.
    pub(super) fake: bool,
}

/// Result of a launch: finished, or stopped at the caller's deadline (unfinished points are not
/// recorded, so a re-run resumes them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Completion {
    /// Every step ran (or was recorded as failed).
    Finished,
    /// The deadline stopped the launch.
    DeadlineReached,
}

impl ProcessRunner {
    /// Probes the GPU (NVML, else nvidia-smi); fails with a clear error where there is none.
    pub fn open(cfg: ProcessRunnerConfig) -> Result<ProcessRunner, gpu::GpuError> {
        let (source, gpu) = gpu::probe(cfg.gpu_index)?;
        Ok(ProcessRunner {
            cfg,
            gpu,
            source: Some(source),
            fake: false,
        })
    }

    /// A runner for a given GPU identity that does not sample (tests with fake workers).
    pub fn without_sampling(cfg: ProcessRunnerConfig, gpu: GpuInfo) -> ProcessRunner {
        ProcessRunner {
            cfg,
            gpu,
            source: Some(Source::Off),
            fake: false,
        }
    }

    /// A runner on a fake GPU (`colo calibrate profile --fake-gpu`): the processes run, but
    /// nothing is sampled, no MPS daemon is started (MPS modes set the workers' variables
    /// only), and records are labelled `fake`.
    pub fn on_fake_gpu(cfg: ProcessRunnerConfig, gpu: GpuInfo) -> ProcessRunner {
        ProcessRunner {
            fake: true,
            ..ProcessRunner::without_sampling(cfg, gpu)
        }
    }

    /// Starts what the processes of a set share: the MPS daemon (in a mode that uses MPS, with
    /// its folders under `dirs`) and the GPU sampler (hand its source back with
    /// `self.source = Some(sampler.stop())`).
    pub(super) fn start_shared(
        &mut self,
        mode: MeasuredMode,
        dirs: &MpsDirs,
    ) -> Result<(Option<MpsDaemon>, Sampler), RunError> {
        let daemon = match mode.uses_mps() && !self.fake {
            true => Some(MpsDaemon::start(
                &self.cfg.mps_control,
                dirs,
                &self.cfg.gpu_index.to_string(),
            )?),
            false => None,
        };
        let sampler = Sampler::start(
            self.source.take().unwrap_or(Source::Off),
            self.cfg.gpu_index,
            self.cfg.sample_interval,
        );
        Ok((daemon, sampler))
    }

    /// Runs a launch and says whether it finished or met the deadline.
    pub fn run_launch(
        &mut self,
        launch: &Launch<'_>,
        on_report: &mut dyn FnMut(Report) -> Result<(), RunError>,
    ) -> Result<Completion, RunError> {
        let dir = LaunchDir::create(&self.cfg.tmp_root)?;
        let mps_dirs = MpsDirs::under(&dir.path);
        let (daemon, sampler) = self.start_shared(launch.group.mode, &mps_dirs)?;
        let res = self.supervise(
            launch,
            &dir.path,
            &mps_dirs,
            daemon.as_ref(),
            &sampler,
            on_report,
        );
        self.source = Some(sampler.stop());
        // Workers are gone by now (Workers' drop kills them); only then stop the daemon.
        if let Some(daemon) = daemon {
            daemon.stop()?;
        }
        res
    }

    fn spawn_workers(
        &self,
        launch: &Launch<'_>,
        dir: &Path,
        mps_dirs: &MpsDirs,
    ) -> Result<Workers, RunError> {
        let group = launch.group;
        let barrier = dir.join("barrier");
        std::fs::create_dir_all(&barrier).map_err(|source| RunError::Io {
            path: barrier.clone(),
            source,
        })?;
        let mut workers = Workers {
            children: Vec::new(),
            barrier,
            dir: dir.to_path_buf(),
        };
        for (rank, proc) in group.procs.iter().enumerate() {
            let env = worker_env(group.mode, proc, &self.gpu.uuid, Some(mps_dirs));
            let stderr_path = workers.stderr_path(rank);
            let stderr = std::fs::File::create(&stderr_path).map_err(|source| RunError::Io {
                path: stderr_path,
                source,
            })?;
            let mut cmd = self.worker_command(launch, rank, &workers.barrier);
            // Its own process group, so that stopping it stops what it started too.
            cmd.process_group(0);
            cmd.stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(stderr);
            for key in CLEARED_ENV {
                cmd.env_remove(key);
            }
            cmd.envs(&env);
            let program = cmd.get_program().to_string_lossy().into_owned();
            let child = cmd
                .spawn()
                .map_err(|source| RunError::Spawn { program, source })?;
            workers.children.push(Some(child));
        }
        Ok(workers)
    }

    /// The worker's command line for one rank (protocol in the module docs).
    fn worker_command(&self, launch: &Launch<'_>, rank: usize, barrier: &Path) -> Command {
        let group = launch.group;
        let points: Vec<String> = launch
            .steps
            .iter()
            .map(|s| group.sets[s.set_index][rank].to_string())
            .collect();
        let program = self.cfg.worker.first().map_or("python3", String::as_str);
        let mut cmd = Command::new(program);
        cmd.args(self.cfg.worker.iter().skip(1))
            .args(["--points", &points.join(",")])
            .args(["--warmup-s", &launch.warmup_s.to_string()])
            .args(["--window-s", &launch.window_s.to_string()])
            .arg("--barrier")
            .arg(barrier)
            .args(["--rank", &rank.to_string()])
            .args(["--n-procs", &group.n_procs().to_string()])
            .args([
                "--barrier-timeout-s",
                &self.cfg.barrier_timeout_s.to_string(),
            ])
            .env("PYTHONUNBUFFERED", "1");
        cmd
    }

    /// Waits for reports, exits, interrupts and time limits. Long because it is the one event
    /// loop of a launch; each event is handled by a helper.
    fn supervise(
        &self,
        launch: &Launch<'_>,
        dir: &Path,
        mps_dirs: &MpsDirs,
        daemon: Option<&MpsDaemon>,
        sampler: &Sampler,
        on_report: &mut dyn FnMut(Report) -> Result<(), RunError>,
    ) -> Result<Completion, RunError> {
        let mut workers = self.spawn_workers(launch, dir, mps_dirs)?;
        let rx = workers.read_stdout();
        let n_procs = launch.group.n_procs();
        let mut reported = vec![vec![false; launch.steps.len()]; n_procs];
        let per_step = launch.warmup_s + launch.window_s + self.cfg.step_grace_s;
        let limit_s = self.cfg.launch_grace_s + per_step * launch.steps.len() as f64;
        let hung_at = Instant::now() + Duration::from_secs_f64(limit_s);
        let mut n_exited = 0;
        while n_exited < n_procs {
            match rx.recv_timeout(Duration::from_millis(50)) {
                Ok(WorkerMsg::Line(rank, line)) => {
                    let Some(report) = parse_report(&line, rank, launch.steps.len()) else {
                        continue;
                    };
                    let pid = workers.pid(rank);
                    let mut report = report;
                    let measured = &mut report.measurement;
                    measured.gpu = sampler.window(measured.t_start, measured.t_end, pid);
                    reported[rank][report.step] = true;
                    on_report(report)?;
                }
                // Ctrl-C reaches the workers too: their exits are not crashes to record.
                Ok(WorkerMsg::Eof(_)) if interrupted() => return Err(RunError::Interrupted),
                Ok(WorkerMsg::Eof(rank)) => {
                    n_exited += 1;
                    let status = workers.reap(rank);
                    let tail = workers.stderr_tail(rank);
                    let mps_logs = daemon.map(MpsDaemon::log_tail).unwrap_or_default();
                    let why = format!(
                        "worker exited ({status}) before reporting this point; stderr: {tail}{mps_logs}"
                    );
                    report_missing(&mut reported[rank], rank, Status::Crash, &why, on_report)?;
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
            if interrupted() {
                return Err(RunError::Interrupted);
            }
            if launch.deadline.is_some_and(|d| Instant::now() > d) {
                return Ok(Completion::DeadlineReached);
            }
            if Instant::now() > hung_at {
                let why = format!("launch ran past its limit of {limit_s:.0} s; workers killed");
                workers.kill_all();
                for (rank, steps) in reported.iter_mut().enumerate() {
                    report_missing(steps, rank, Status::Timeout, &why, on_report)?;
                }
                return Ok(Completion::Finished);
            }
        }
        Ok(Completion::Finished)
    }
}

fn report_missing(
    steps: &mut [bool],
    rank: usize,
    status: Status,
    why: &str,
    on_report: &mut dyn FnMut(Report) -> Result<(), RunError>,
) -> Result<(), RunError> {
    for (step, done) in steps.iter_mut().enumerate() {
        if !*done {
            *done = true;
            let now = gpu::unix_now();
            on_report(failure_report(step, rank, status, why, now))?;
        }
    }
    Ok(())
}

/// A report for a point that produced no measurement.
pub(crate) fn failure_report(
    step: usize,
    rank: usize,
    status: Status,
    why: &str,
    now: f64,
) -> Report {
    Report {
        step,
        rank,
        measurement: Measurement::failed(status, why, now),
        mig_uuid: None,
    }
}

/// Parses one worker line; `None` for lines that are not point reports.
fn parse_report(line: &str, rank: usize, n_steps: usize) -> Option<Report> {
    let value: Value = serde_json::from_str(line.trim()).ok()?;
    if value.get("kind")?.as_str()? != "colo_point" {
        return None;
    }
    let step = usize::try_from(value.get("step")?.as_u64()?)
        .ok()
        .filter(|s| *s < n_steps)?;
    let num = |key: &str| value.get(key).and_then(Value::as_f64);
    let status = match value.get("status").and_then(Value::as_str) {
        Some("ok") => Status::Ok,
        Some("oom") => Status::Oom,
        _ => Status::Error,
    };
    let ranks = |key: &str| -> Vec<usize> {
        let list = value.get(key).and_then(Value::as_array);
        list.map(|l| {
            l.iter()
                .filter_map(|v| v.as_u64().map(|r| r as usize))
                .collect()
        })
        .unwrap_or_default()
    };
    let now = gpu::unix_now();
    let measurement = Measurement {
        status,
        samples_per_s: num("samples_per_s"),
        iterations: value.get("iterations").and_then(Value::as_u64),
        window_s: num("window_s"),
        warmup_s: num("warmup_s"),
        cpu_time_s: num("cpu_time_s"),
        peak_allocated_mib: num("peak_allocated_mib"),
        peak_reserved_mib: num("peak_reserved_mib"),
        t_start: num("t_start").unwrap_or(now),
        t_end: num("t_end").unwrap_or(now),
        co_failed: ranks("co_failed"),
        error: value
            .get("error")
            .and_then(Value::as_str)
            .map(str::to_string),
        env: value
            .get("env")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default(),
        framework: framework(&value),
        gpu: WindowStats::default(),
        lifetime_s: None,
    };
    Some(Report {
        step,
        rank,
        measurement,
        mig_uuid: None,
    })
}

/// `torch <version>, tf32 matmul=<b> cudnn=<b>` from a worker line, if it says.
fn framework(value: &Value) -> Option<String> {
    let torch = value.get("torch")?.as_str()?;
    let tf32 = value.get("tf32");
    let flag = |key: &str| {
        tf32.and_then(|t| t.get(key))
            .and_then(Value::as_bool)
            .map_or("?".to_string(), |b| b.to_string())
    };
    Some(format!(
        "torch {torch}, tf32 matmul={} cudnn={}",
        flag("matmul"),
        flag("cudnn")
    ))
}

impl Runner for ProcessRunner {
    fn gpu(&self) -> &GpuInfo {
        &self.gpu
    }

    fn source(&self) -> crate::store::Source {
        match self.fake {
            true => crate::store::Source::Fake,
            false => crate::store::Source::Measured,
        }
    }

    fn trace(
        &mut self,
        job: &TraceJob<'_>,
        on_report: &mut dyn FnMut(TraceReport) -> Result<(), RunError>,
    ) -> Result<(), RunError> {
        self.trace_points(job, on_report)
    }

    fn run(
        &mut self,
        launch: &Launch<'_>,
        on_report: &mut dyn FnMut(Report) -> Result<(), RunError>,
    ) -> Result<(), RunError> {
        if !launch.group.creates_mig_instances() {
            return self.run_launch(launch, on_report).map(|_| ());
        }
        if !launch.allow_mig_reconfigure {
            return Err(RunError::MigReconfigureNotAllowed {
                group: launch.group.id.clone(),
            });
        }
        self.run_on_new_instances(launch, on_report)
    }
}

impl ProcessRunner {
    /// Creates one MIG instance per process, runs the launch with each process on its own, and
    /// destroys the instances (the guard also destroys them when anything in between fails).
    fn run_on_new_instances(
        &mut self,
        launch: &Launch<'_>,
        on_report: &mut dyn FnMut(Report) -> Result<(), RunError>,
    ) -> Result<(), RunError> {
        let group = launch.group;
        let profiles: Vec<String> = group
            .procs
            .iter()
            .filter_map(|p| p.mig_profile.clone())
            .collect();
        if profiles.len() != group.n_procs() {
            return Err(RunError::Unsupported(format!(
                "group `{}`: mode Mig needs a MIG profile or instance UUID per process",
                group.id
            )));
        }
        let instances = MigInstances::create(&self.cfg.nvidia_smi, self.cfg.gpu_index, &profiles)?;
        let uuids = instances.uuids().to_vec();
        // Stderr, so whoever watches the GPU can see what colo made and will destroy.
        eprintln!(
            "group {}: created MIG instances {} on GPU {} (destroyed after the group)",
            group.id,
            uuids.join(", "),
            self.cfg.gpu_index
        );
        let mut on_instances = group.clone();
        for (proc, uuid) in on_instances.procs.iter_mut().zip(&uuids) {
            proc.mig_uuid = Some(uuid.clone());
        }
        let launch = Launch {
            group: &on_instances,
            ..launch.clone()
        };
        let mut tag = |report: Report| {
            let mig_uuid = uuids.get(report.rank).cloned();
            on_report(Report { mig_uuid, ..report })
        };
        // Workers are gone when run_launch returns (Workers' drop kills them): only then can
        // their instances be destroyed.
        let res = self.run_launch(&launch, &mut tag);
        let destroyed = instances.destroy();
        match (res, destroyed) {
            (Err(err), Err(cleanup)) => {
                // The run's own error wins, but the instances left behind must be seen.
                eprintln!("error: {cleanup}");
                Err(err)
            }
            (res, destroyed) => destroyed.and(res.map(|_| ())),
        }
    }
}

enum WorkerMsg {
    Line(usize, String),
    Eof(usize),
}

/// The launch's worker processes; any still running are killed on drop.
struct Workers {
    children: Vec<Option<Child>>,
    barrier: PathBuf,
    dir: PathBuf,
}

impl Workers {
    fn stderr_path(&self, rank: usize) -> PathBuf {
        self.dir.join(format!("worker{rank}.stderr"))
    }

    fn pid(&self, rank: usize) -> u32 {
        self.children
            .get(rank)
            .and_then(|c| c.as_ref())
            .map_or(0, Child::id)
    }

    fn read_stdout(&mut self) -> Receiver<WorkerMsg> {
        let (tx, rx) = mpsc::channel();
        for (rank, child) in self.children.iter_mut().enumerate() {
            let Some(stdout) = child.as_mut().and_then(|c| c.stdout.take()) else {
                continue;
            };
            let tx = tx.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                    if tx.send(WorkerMsg::Line(rank, line)).is_err() {
                        return;
                    }
                }
                let _ = tx.send(WorkerMsg::Eof(rank));
            });
        }
        rx
    }

    /// Waits for a worker that closed its stdout and marks it gone for the barrier.
    fn reap(&mut self, rank: usize) -> String {
        let status = match self.children.get_mut(rank).and_then(Option::take) {
            Some(mut child) => child
                .wait()
                .map_or_else(|e| e.to_string(), |s| s.to_string()),
            None => "unknown status".into(),
        };
        let _ = std::fs::write(
            self.barrier.join(format!("gone.r{rank}")),
            status.as_bytes(),
        );
        status
    }

    fn stderr_tail(&self, rank: usize) -> String {
        stderr_tail(&self.stderr_path(rank))
    }

    fn kill_all(&mut self) {
        for rank in 0..self.children.len() {
            if let Some(child) = self.children[rank].as_mut() {
                kill_group(child);
                let _ = std::fs::write(self.barrier.join(format!("gone.r{rank}")), b"killed");
            }
            self.children[rank] = None;
        }
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        self.kill_all();
    }
}

/// Kills a child started in its own process group (`process_group(0)`) and everything in the
/// group (a shell's children, a worker's data loaders), then reaps it.
pub(super) fn kill_group(child: &mut Child) {
    if let Ok(None) = child.try_wait() {
        // No libc here (unsafe code is denied): kill(1) signals the group by its negative id.
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", child.id())])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// The last 1500 bytes of a captured stderr file on one line, its last exception line first.
pub(super) fn stderr_tail(path: &Path) -> String {
    let mut text = String::new();
    if let Ok(mut file) = std::fs::File::open(path) {
        let len = file.metadata().map(|m| m.len()).unwrap_or(0);
        let _ = file.seek(SeekFrom::Start(len.saturating_sub(1500)));
        let _ = file.read_to_string(&mut text);
    }
    // The exception line says most: put the last one first, then the tail.
    let last_error = text
        .lines()
        .rev()
        .find(|l| l.contains("Error") || l.contains("error:"))
        .unwrap_or("")
        .trim()
        .to_string();
    let tail = text.trim().replace('\n', " | ");
    match (last_error.is_empty(), tail.is_empty()) {
        (_, true) => "(empty)".into(),
        (true, false) => tail,
        (false, false) => format!("{last_error} || {tail}"),
    }
}

/// A private folder per launch (barrier, MPS pipe and log, worker stderr); removed on drop.
pub(super) struct LaunchDir {
    pub(super) path: PathBuf,
}

impl LaunchDir {
    pub(super) fn create(root: &Path) -> Result<LaunchDir, RunError> {
        static COUNTER: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = root.join(format!("colo-calibrate-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).map_err(|source| RunError::Io {
            path: path.clone(),
            source,
        })?;
        Ok(LaunchDir { path })
    }
}

impl Drop for LaunchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}
