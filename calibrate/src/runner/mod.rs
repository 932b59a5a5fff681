//! Runners start a group's worker processes under a sharing mode and report each process-point.
//!
//! [`ProcessRunner`] is the real one (the only code that starts work on a GPU); [`FakeRunner`]
//! replays a synthetic profile so that plans, resume and the CLI can be tested without a GPU.
//! Both also trace points' kernels alone ([`Runner::trace`], protocol in [`trace_points`]).
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use crate::gpu::GpuInfo;
use crate::plan::{Group, ProcSettings};
use crate::store::{Measurement, Source};
use colo_sim::perf::MeasuredMode;

mod command;
mod fake;
mod mig_instances;
mod mps;
mod process;
pub mod trace_points;

pub use command::{CommandResult, CommandSet, parse_progress, require_existing_mig_instances};
pub use fake::FakeRunner;
#[cfg(test)]
pub(crate) use fake::synthetic_trace;
pub use mig_instances::{
    MigDevice, MigInstances, parse_compute_instances, parse_created, parse_gpu_instances,
    parse_mig_devices,
};
pub use mps::MpsDaemon;
pub use process::{ProcessRunner, ProcessRunnerConfig};
pub use trace_points::{
    DEFAULT_TRACER, TraceJob, TraceReport, TraceSettings, TraceStatus, trace_file_name,
};

/// Why a launch could not run. Fatal for the plan; records already written stay.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A file or folder the runner needs could not be made or read.
    #[error("{path}: {source}")]
    Io {
        /// File or folder.
        path: PathBuf,
        /// Cause.
        source: std::io::Error,
    },
    /// A worker could not be started.
    #[error(
        "cannot start worker `{program}`: {source}; check --worker (python3 with torch) or the workloads folder"
    )]
    Spawn {
        /// Program.
        program: String,
        /// Cause.
        source: std::io::Error,
    },
    /// The MPS control daemon could not be started or stopped.
    #[error("MPS control daemon `{control}`: {message}")]
    Mps {
        /// Control program.
        control: String,
        /// What happened.
        message: String,
    },
    /// A group would need MIG instances created, and the user did not allow it.
    #[error(
        "group `{group}` (mode Mig) gives mig_profiles but no mig_uuids, and colo creates MIG \
         instances only when told to: give `mig_uuids` of instances an administrator made \
         (`nvidia-smi -L` lists them), or pass --allow-mig-reconfigure to let colo create the \
         instances before the group and destroy them after"
    )]
    MigReconfigureNotAllowed {
        /// Group id.
        group: String,
    },
    /// A plan with MIG profiles of one GPU type was run on a GPU of another type.
    #[error(
        "plan `{plan}` names MIG profiles of the {wants} (its `gpu`), but this GPU is a {found}: \
         the slices would be wrong; set the plan's `gpu` to this GPU's type and its profiles"
    )]
    OtherGpu {
        /// Plan name.
        plan: String,
        /// The plan's GPU type.
        wants: &'static str,
        /// The GPU the runner has, as it names itself.
        found: String,
    },
    /// MIG instances were asked for on a GPU whose MIG mode is off.
    #[error(
        "MIG mode is off on GPU {gpu}; an administrator must enable it (colo never changes MIG \
         mode); use mode MigEmulated to emulate slices under MPS"
    )]
    MigDisabled {
        /// GPU index.
        gpu: u32,
    },
    /// Creating, finding or destroying MIG instances failed.
    #[error("MIG instances on GPU {gpu} (`{nvidia_smi}`): {message}")]
    Mig {
        /// nvidia-smi program.
        nvidia_smi: String,
        /// GPU index.
        gpu: u32,
        /// What happened and what to do.
        message: String,
    },
    /// Ctrl-C or SIGTERM: workers were stopped, the MPS daemon shut down.
    #[error(
        "interrupted: workers stopped, MPS daemon shut down, and any MIG instances colo created \
         destroyed unless an error above says otherwise; re-run the same command to resume"
    )]
    Interrupted,
    /// The plan asks for something the runner does not do.
    #[error("{0}")]
    Unsupported(String),
    /// Writing a record failed.
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
}

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Marks the run as interrupted (called from the Ctrl-C / SIGTERM handler of the binary).
pub fn request_interrupt() {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Whether an interrupt was requested.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// One set of a group at one repeat.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    /// Index into the group's sets.
    pub set_index: usize,
    /// Repeat index.
    pub repeat: u32,
}

/// What a runner runs: the group's processes through these steps, in order.
#[derive(Debug, Clone)]
pub struct Launch<'a> {
    /// The group.
    pub group: &'a Group,
    /// Steps, in order (interleaved repeats).
    pub steps: Vec<Step>,
    /// Warm-up per point, seconds.
    pub warmup_s: f64,
    /// Measured window per point, seconds.
    pub window_s: f64,
    /// Stop (and record a timeout) at this instant.
    pub deadline: Option<Instant>,
    /// Whether the runner may create (and then destroy) MIG instances for a Mig group that
    /// gives profiles instead of instance UUIDs.
    pub allow_mig_reconfigure: bool,
}

/// One process-point as a runner reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// Index into `Launch::steps`.
    pub step: usize,
    /// Process rank.
    pub rank: usize,
    /// What was measured (its `lifetime_s` is a user command's, never set here).
    pub measurement: Measurement,
    /// UUID of the MIG instance the runner created for this process (not in the plan).
    pub mig_uuid: Option<String>,
}

/// Starts a group's processes and reports each process-point as it finishes.
pub trait Runner {
    /// The GPU measured.
    fn gpu(&self) -> &GpuInfo;
    /// `measured` or `fake`: written into every record.
    fn source(&self) -> Source;
    /// Runs the launch; `on_report` is called once per process-point, in arrival order.
    fn run(
        &mut self,
        launch: &Launch<'_>,
        on_report: &mut dyn FnMut(Report) -> Result<(), RunError>,
    ) -> Result<(), RunError>;
    /// Traces the job's points alone, one after the other in one tracer process, each into
    /// `out_dir/<model>_<batch>_<image>.trace.json.gz` (a point whose file exists is skipped);
    /// `on_report` is called once per point, in order. Points not reached before the deadline
    /// get no report.
    fn trace(
        &mut self,
        job: &TraceJob<'_>,
        on_report: &mut dyn FnMut(TraceReport) -> Result<(), RunError>,
    ) -> Result<(), RunError>;
}

/// Private folders of the calibrator's MPS daemon.
#[derive(Debug, Clone, PartialEq)]
pub struct MpsDirs {
    /// CUDA_MPS_PIPE_DIRECTORY.
    pub pipe: PathBuf,
    /// CUDA_MPS_LOG_DIRECTORY.
    pub log: PathBuf,
}

impl MpsDirs {
    /// Folders `mps-pipe` and `mps-log` under `root`.
    pub fn under(root: &Path) -> MpsDirs {
        MpsDirs {
            pipe: root.join("mps-pipe"),
            log: root.join("mps-log"),
        }
    }
}

/// Environment variables set for one worker process (others are removed: see [`CLEARED_ENV`]).
///
/// `gpu_uuid` selects the GPU for plain processes (UUIDs, unlike indices, mean the same to CUDA
/// and nvidia-smi). The MPS daemon is started on the one GPU, and the server renumbers the
/// devices it sees from 0 (NVIDIA MPS docs, CUDA_VISIBLE_DEVICES), so MPS clients get `0`.
pub fn worker_env(
    mode: MeasuredMode,
    proc: &ProcSettings,
    gpu_uuid: &str,
    mps: Option<&MpsDirs>,
) -> BTreeMap<String, String> {
    let mut env = BTreeMap::new();
    let visible = match (&proc.mig_uuid, mode) {
        (Some(uuid), MeasuredMode::Mig) => uuid.clone(),
        (_, MeasuredMode::Mps | MeasuredMode::MigEmulated) => "0".to_string(),
        _ => gpu_uuid.to_string(),
    };
    env.insert("CUDA_VISIBLE_DEVICES".to_string(), visible);
    if let (true, Some(dirs)) = (mode.uses_mps(), mps) {
        env.insert(
            "CUDA_MPS_PIPE_DIRECTORY".into(),
            dirs.pipe.display().to_string(),
        );
        env.insert(
            "CUDA_MPS_LOG_DIRECTORY".into(),
            dirs.log.display().to_string(),
        );
        if let Some(pct) = proc.sm_percent {
            env.insert("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE".into(), pct.to_string());
        }
        if let Some(mib) = proc.mem_limit_mib {
            // Device 0 is the only device the worker sees.
            env.insert(
                "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT".into(),
                format!("0={mib}M"),
            );
        }
    }
    env
}

/// Variables removed from every worker's environment so an outer MPS setting cannot leak in.
pub const CLEARED_ENV: [&str; 5] = [
    "CUDA_MPS_PIPE_DIRECTORY",
    "CUDA_MPS_LOG_DIRECTORY",
    "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE",
    "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT",
    "CUDA_VISIBLE_DEVICES",
];

#[cfg(test)]
mod tests;
