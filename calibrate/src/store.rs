//! The measurement store: one JSON line per finished process-point, appended, never rewritten.
//!
//! `DIR/<plan>.jsonl` holds every record of a plan. A set's repeat is finished when every
//! process of it has a record; re-running the plan skips finished repeats (resumable).
//!
//! Each record carries a layout version ([`RECORD_FORMAT_VERSION`]); readers refuse a record
//! newer than they know instead of guessing at its fields.
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::gpu::WindowStats;
use colo_sim::perf::{MeasuredMode, mode_label};
use colo_sim::workload::{ModelKey, ModelKeyError};

/// Why the store could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A file or folder could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// File or folder.
        path: PathBuf,
        /// Cause.
        source: std::io::Error,
    },
    /// A record is of a newer layout than this build reads.
    #[error(
        "{}:{line}: record format version {version} is newer than this colo reads (up to \
         {supported}); read this store with a newer colo",
        path.display()
    )]
    NewerFormat {
        /// Store file.
        path: PathBuf,
        /// Line number (1-based).
        line: usize,
        /// The record's `format_version`.
        version: u32,
        /// [`RECORD_FORMAT_VERSION`].
        supported: u32,
    },
    /// Another process holds the store's lock: two runs must not append to one store.
    #[error(
        "{}: another colo process holds this store (a `colo calibrate run` or `profile` \
         writing to it); wait for it to finish, or give this run another --out",
        path.display()
    )]
    Locked {
        /// Store file.
        path: PathBuf,
    },
    /// A file a command would write is one of its input stores, or a new store in their
    /// folder.
    #[error(
        "refusing to write {}: {why} {}; write it somewhere else",
        output.display(),
        input.display()
    )]
    WouldOverwrite {
        /// The file to be written.
        output: PathBuf,
        /// What it collides with: an input store, or the folder of the stores.
        input: PathBuf,
        /// How.
        why: &'static str,
    },
    /// A record could not be encoded (a bug: please report it).
    #[error("{path}: cannot encode record: {source}")]
    Encode {
        /// Store file.
        path: PathBuf,
        /// Cause.
        source: serde_json::Error,
    },
}

/// Outcome of one process-point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Measured.
    Ok,
    /// Ran out of GPU memory (data for the memory model).
    Oom,
    /// The workload raised another error.
    Error,
    /// The worker process died before reporting this point.
    Crash,
    /// The launch ran past its time limit.
    Timeout,
    /// An outcome this version does not know (a newer writer's): read as not measured, never
    /// as ok or out of memory.
    #[serde(other)]
    Unknown,
}

/// Where a record's numbers come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    /// Measured on a GPU.
    Measured,
    /// Invented by the fake runner (`--fake-gpu`).
    Fake,
    /// A source this version does not know (a newer writer's); such records are never fitted
    /// as measured.
    #[serde(other)]
    Unknown,
}

impl Source {
    /// The name records write (`measured`, `fake`).
    pub fn label(self) -> &'static str {
        match self {
            Source::Measured => "measured",
            Source::Fake => "fake",
            Source::Unknown => "unknown",
        }
    }
}

/// The record layout this build writes and reads. Version 1 leaves `format_version` out, so
/// the records written before versions existed are version 1 and every version-1 store keeps
/// its bytes; a writer that changes the layout bumps this, and its records write the field.
pub const RECORD_FORMAT_VERSION: u32 = 1;

fn first_format_version() -> u32 {
    1
}

// By reference: serde's `skip_serializing_if` passes one.
fn is_first_format_version(version: &u32) -> bool {
    *version == 1
}

/// The one field read before a whole record, so a newer layout is refused by its version
/// rather than by whichever of its fields fails to parse first.
#[derive(Deserialize)]
struct FormatProbe {
    #[serde(default = "first_format_version")]
    format_version: u32,
}

/// What one process of a record ran.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Workload {
    /// A training point of the calibration worker.
    Point(ModelKey),
    /// A user command (`colo calibrate profile`), as given.
    Command(String),
}

impl Workload {
    /// The training point, if it is one.
    pub fn point(&self) -> Option<&ModelKey> {
        match self {
            Workload::Point(key) => Some(key),
            Workload::Command(_) => None,
        }
    }
}

impl fmt::Display for Workload {
    /// What records write as `point`: `MODEL:BATCH:IMAGE`, or the command's text.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Workload::Point(key) => key.fmt(f),
            Workload::Command(text) => f.write_str(text),
        }
    }
}

/// The `model` a user command's record writes (with batch and image 0).
const COMMAND_MODEL: &str = "cmd";

/// One measured (or failed) process-point.
///
/// Written and read through `RecordWire`, the flat layout of the files, so that its typed
/// [`Workload`] keeps the bytes of `point`, `model`, `batch`, `image` and `command`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RecordWire", into = "RecordWire")]
pub struct Record {
    /// Layout version ([`RECORD_FORMAT_VERSION`]); absent (version 1) in every record so far.
    pub format_version: u32,
    /// `measured` on a GPU, `fake` from the fake runner.
    pub source: Source,
    /// Plan name.
    pub plan: String,
    /// Group id.
    pub group: String,
    /// Index of the set in its group.
    pub set_index: usize,
    /// Repeat index (0-based).
    pub repeat: u32,
    /// Process rank within the set.
    pub rank: usize,
    /// What the process ran: a training point or a user command.
    pub workload: Workload,
    /// Sharing mode, written as its label (`exclusive`, `timeslice`, `mps`, `mig`,
    /// `mig-emulated`).
    pub mode: MeasuredMode,
    /// Processes in the set.
    pub n_procs: usize,
    /// What the other processes of the set ran, in rank order: training points, or a
    /// command record's other commands.
    pub co_runners: Vec<Workload>,
    /// MPS SM budget (active-thread percentage), if set.
    pub sm_percent: Option<u32>,
    /// MPS pinned memory limit, MiB, if set.
    pub mem_limit_mib: Option<u64>,
    /// MIG profile (emulated when mode is `mig-emulated`).
    pub mig_profile: Option<String>,
    /// MIG instance UUID (mode `mig`).
    pub mig_uuid: Option<String>,
    /// GPU product name.
    pub gpu_name: String,
    /// Driver version.
    pub driver: String,
    /// GPU UUID.
    pub gpu_uuid: String,
    /// What the runner measured (or saw of the failure).
    pub measurement: Measurement,
}

/// What a runner measured of one process-point, or saw of its failure: the part of a
/// [`Record`] that a runner reports ([`Report`](crate::runner::Report)) and the plan does not
/// say.
#[derive(Debug, Clone, PartialEq)]
pub struct Measurement {
    /// Unix time the window started (or the failure was seen), seconds.
    pub t_start: f64,
    /// Unix time the window ended, seconds.
    pub t_end: f64,
    /// Outcome.
    pub status: Status,
    /// Measured training throughput, samples/s.
    pub samples_per_s: Option<f64>,
    /// Iterations in the window.
    pub iterations: Option<u64>,
    /// Measured window, seconds.
    pub window_s: Option<f64>,
    /// Warm-up, seconds.
    pub warmup_s: Option<f64>,
    /// CPU time of the worker during the window, seconds.
    pub cpu_time_s: Option<f64>,
    /// PyTorch peak allocated memory, MiB.
    pub peak_allocated_mib: Option<f64>,
    /// PyTorch peak reserved memory, MiB.
    pub peak_reserved_mib: Option<f64>,
    /// GPU state during the window.
    pub gpu: WindowStats,
    /// Ranks of co-runners that failed this set.
    pub co_failed: Vec<usize>,
    /// Error text (status other than ok).
    pub error: Option<String>,
    /// Environment the worker saw (CUDA_VISIBLE_DEVICES, MPS variables).
    pub env: serde_json::Map<String, serde_json::Value>,
    /// Framework of the worker (torch version and TF32 flags); absent in early H200 records.
    pub framework: Option<String>,
    /// Seconds from the command's start to its exit (`colo calibrate profile`).
    pub lifetime_s: Option<f64>,
}

impl Measurement {
    /// A point that produced no measurement: `status` and its `error` text, seen at unix time
    /// `now`.
    pub fn failed(status: Status, why: &str, now: f64) -> Measurement {
        Measurement {
            t_start: now,
            t_end: now,
            status,
            samples_per_s: None,
            iterations: None,
            window_s: None,
            warmup_s: None,
            cpu_time_s: None,
            peak_allocated_mib: None,
            peak_reserved_mib: None,
            gpu: WindowStats::default(),
            co_failed: Vec::new(),
            error: Some(why.to_string()),
            env: serde_json::Map::new(),
            framework: None,
            lifetime_s: None,
        }
    }
}

/// [`Record`] as the files lay it out: the workload spread over `point`, `model`, `batch`,
/// `image` (a user command: its text, `cmd`, 0, 0) and `command`.
#[derive(Serialize, Deserialize)]
struct RecordWire {
    #[serde(
        default = "first_format_version",
        skip_serializing_if = "is_first_format_version"
    )]
    format_version: u32,
    source: Source,
    plan: String,
    group: String,
    set_index: usize,
    repeat: u32,
    rank: usize,
    point: String,
    model: String,
    batch: u32,
    image: u32,
    #[serde(with = "mode_label")]
    mode: MeasuredMode,
    n_procs: usize,
    co_runners: Vec<String>,
    sm_percent: Option<u32>,
    mem_limit_mib: Option<u64>,
    mig_profile: Option<String>,
    mig_uuid: Option<String>,
    gpu_name: String,
    driver: String,
    gpu_uuid: String,
    t_start: f64,
    t_end: f64,
    status: Status,
    samples_per_s: Option<f64>,
    iterations: Option<u64>,
    window_s: Option<f64>,
    warmup_s: Option<f64>,
    cpu_time_s: Option<f64>,
    peak_allocated_mib: Option<f64>,
    peak_reserved_mib: Option<f64>,
    gpu: WindowStats,
    co_failed: Vec<usize>,
    error: Option<String>,
    env: serde_json::Map<String, serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    framework: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    command: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    lifetime_s: Option<f64>,
}

/// A co-runner's point, `MODEL:BATCH:IMAGE`, read only in its canonical text (so that a
/// record writes back the bytes it was read from).
fn co_runner_point(text: &str) -> Result<ModelKey, String> {
    let key: ModelKey = text
        .parse()
        .map_err(|e: ModelKeyError| format!("co-runner: {e}"))?;
    if key.to_string() != text {
        return Err(format!("co-runner `{text}` is not written as `{key}`"));
    }
    Ok(key)
}

/// The numbers of a record that must agree with each other.
struct Numbers {
    status: Status,
    samples_per_s: Option<f64>,
    iterations: Option<u64>,
    window_s: Option<f64>,
    /// The point's batch (none for a user command).
    batch: Option<u32>,
}

impl Numbers {
    /// Refuses impossible values: any of `fields` negative or not finite, a window of no
    /// time, and an ok rate that is not its iterations times the batch over the window (the
    /// worker computes it so; 1 % and a batch are allowed for rounding).
    fn check(&self, fields: &[(&str, Option<f64>)]) -> Result<(), String> {
        for (name, value) in fields {
            match value {
                Some(v) if !v.is_finite() => {
                    return Err(format!("field `{name}` is {v}: it must be a finite number"));
                }
                Some(v) if *v < 0.0 => {
                    return Err(format!("field `{name}` is {v}: it cannot be negative"));
                }
                _ => {}
            }
        }
        if let Some(window) = self.window_s.filter(|w| *w == 0.0) {
            return Err(format!(
                "field `window_s` is {window}: a measured window takes time"
            ));
        }
        let (Status::Ok, Some(rate), Some(iterations), Some(window), Some(batch)) = (
            self.status,
            self.samples_per_s,
            self.iterations,
            self.window_s,
            self.batch,
        ) else {
            return Ok(());
        };
        let samples = iterations as f64 * f64::from(batch);
        if (rate * window - samples).abs() > 0.01 * samples + f64::from(batch) {
            return Err(format!(
                "field `samples_per_s` ({rate}) disagrees with `iterations` ({iterations}) × \
                 batch ({batch}) / `window_s` ({window}) = {}",
                samples / window
            ));
        }
        Ok(())
    }
}

impl TryFrom<RecordWire> for Record {
    type Error = String;

    fn try_from(w: RecordWire) -> Result<Record, String> {
        let RecordWire {
            format_version,
            source,
            plan,
            group,
            set_index,
            repeat,
            rank,
            point,
            model,
            batch,
            image,
            mode,
            n_procs,
            co_runners,
            sm_percent,
            mem_limit_mib,
            mig_profile,
            mig_uuid,
            gpu_name,
            driver,
            gpu_uuid,
            t_start,
            t_end,
            status,
            samples_per_s,
            iterations,
            window_s,
            warmup_s,
            cpu_time_s,
            peak_allocated_mib,
            peak_reserved_mib,
            gpu,
            co_failed,
            error,
            env,
            framework,
            command,
            lifetime_s,
        } = w;
        let workload = match command {
            Some(command)
                if point == command && model == COMMAND_MODEL && batch == 0 && image == 0 =>
            {
                Workload::Command(command)
            }
            Some(command) => {
                return Err(format!(
                    "command `{command}` recorded as point `{point}` ({model}, {batch}, {image}); a command record writes its text, `{COMMAND_MODEL}`, 0, 0"
                ));
            }
            None => {
                let key: ModelKey = point.parse().map_err(|e: ModelKeyError| e.to_string())?;
                // Canonical text only: a record writes back the bytes it was read from.
                if key.to_string() != point
                    || (key.model.as_str(), key.batch, key.image) != (model.as_str(), batch, image)
                {
                    return Err(format!(
                        "point `{point}` disagrees with model `{model}`, batch {batch}, image {image}"
                    ));
                }
                Workload::Point(key)
            }
        };
        let numbers = Numbers {
            status,
            samples_per_s,
            iterations,
            window_s,
            batch: workload.point().map(|k| k.batch),
        };
        numbers.check(&[
            ("t_start", Some(t_start)),
            ("t_end", Some(t_end)),
            ("samples_per_s", samples_per_s),
            ("window_s", window_s),
            ("warmup_s", warmup_s),
            ("cpu_time_s", cpu_time_s),
            ("peak_allocated_mib", peak_allocated_mib),
            ("peak_reserved_mib", peak_reserved_mib),
            ("lifetime_s", lifetime_s),
            ("gpu.util_pct", gpu.util_pct),
            ("gpu.sm_clock_mhz", gpu.sm_clock_mhz),
            ("gpu.power_w", gpu.power_w),
            ("gpu.gpu_mem_used_mib", gpu.gpu_mem_used_mib),
            ("gpu.proc_mem_mib", gpu.proc_mem_mib),
        ])?;
        if t_end < t_start {
            return Err(format!(
                "field `t_end` ({t_end}) is before `t_start` ({t_start}): the window ends before \
                 it starts"
            ));
        }
        if rank >= n_procs {
            return Err(format!(
                "field `rank` ({rank}) is not below `n_procs` ({n_procs})"
            ));
        }
        let co_runners = co_runners
            .into_iter()
            .map(|text| match workload {
                Workload::Command(_) => Ok(Workload::Command(text)),
                Workload::Point(_) => co_runner_point(&text).map(Workload::Point),
            })
            .collect::<Result<_, String>>()?;
        Ok(Record {
            format_version,
            source,
            plan,
            group,
            set_index,
            repeat,
            rank,
            workload,
            mode,
            n_procs,
            co_runners,
            sm_percent,
            mem_limit_mib,
            mig_profile,
            mig_uuid,
            gpu_name,
            driver,
            gpu_uuid,
            measurement: Measurement {
                t_start,
                t_end,
                status,
                samples_per_s,
                iterations,
                window_s,
                warmup_s,
                cpu_time_s,
                peak_allocated_mib,
                peak_reserved_mib,
                gpu,
                co_failed,
                error,
                env,
                framework,
                lifetime_s,
            },
        })
    }
}

impl From<Record> for RecordWire {
    fn from(r: Record) -> RecordWire {
        let Record {
            format_version,
            source,
            plan,
            group,
            set_index,
            repeat,
            rank,
            workload,
            mode,
            n_procs,
            co_runners,
            sm_percent,
            mem_limit_mib,
            mig_profile,
            mig_uuid,
            gpu_name,
            driver,
            gpu_uuid,
            measurement:
                Measurement {
                    t_start,
                    t_end,
                    status,
                    samples_per_s,
                    iterations,
                    window_s,
                    warmup_s,
                    cpu_time_s,
                    peak_allocated_mib,
                    peak_reserved_mib,
                    gpu,
                    co_failed,
                    error,
                    env,
                    framework,
                    lifetime_s,
                },
        } = r;
        let (point, model, batch, image, command) = match workload {
            Workload::Point(key) => {
                let point = key.to_string();
                (point, key.model, key.batch, key.image, None)
            }
            Workload::Command(text) => (text.clone(), COMMAND_MODEL.to_owned(), 0, 0, Some(text)),
        };
        let co_runners = co_runners.iter().map(Workload::to_string).collect();
        RecordWire {
            format_version,
            source,
            plan,
            group,
            set_index,
            repeat,
            rank,
            point,
            model,
            batch,
            image,
            mode,
            n_procs,
            co_runners,
            sm_percent,
            mem_limit_mib,
            mig_profile,
            mig_uuid,
            gpu_name,
            driver,
            gpu_uuid,
            t_start,
            t_end,
            status,
            samples_per_s,
            iterations,
            window_s,
            warmup_s,
            cpu_time_s,
            peak_allocated_mib,
            peak_reserved_mib,
            gpu,
            co_failed,
            error,
            env,
            framework,
            command,
            lifetime_s,
        }
    }
}

/// Key of one process of one set's repeat: (group, set index, repeat, rank).
pub type RecordKey = (String, usize, u32, usize);

impl Record {
    /// The resume key.
    pub fn key(&self) -> RecordKey {
        (self.group.clone(), self.set_index, self.repeat, self.rank)
    }
}

/// Records of a store file, and the lines that could not be read.
#[derive(Debug, Default)]
pub struct Loaded {
    /// Records in file order, one per process of a set repeat ([`Record::key`] on one GPU of
    /// one plan): where a resumed or concurrent run wrote one again, the latest is kept.
    pub records: Vec<Record>,
    /// `(line number, message)` of unreadable lines (skipped, reported).
    pub skipped: Vec<(usize, String)>,
    /// Records dropped because a later line records the same process of the same set repeat
    /// (a set repeat that a kill left half-written and the resumed run wrote again).
    pub duplicates: usize,
}

impl Loaded {
    /// The warnings a command prints about this store file: each unreadable line
    /// (`FILE:LINE: ...`) and the records dropped as written twice.
    pub fn warnings(&self, path: &Path) -> Vec<String> {
        let mut out: Vec<String> = self
            .skipped
            .iter()
            .map(|(line, message)| {
                format!(
                    "{}:{line}: unreadable record skipped: {message}",
                    path.display()
                )
            })
            .collect();
        if self.duplicates > 0 {
            out.push(format!(
                "{}: {} records dropped: a later line records the same process of the same set \
                 repeat (a repeat resumed after a kill, or two runs into one store); the latest \
                 of each is kept",
                path.display(),
                self.duplicates
            ));
        }
        out
    }
}

/// Path of a plan's store file.
pub fn store_path(dir: &Path, plan: &str) -> PathBuf {
    dir.join(format!("{plan}.jsonl"))
}

/// Reads a store file; a missing file is empty. A line that is not UTF-8 or not a record is
/// skipped and reported with its number, as is any other bad line.
///
/// # Errors
/// [`StoreError::Io`], or [`StoreError::NewerFormat`] naming the first record too new to read.
pub fn load(path: &Path) -> Result<Loaded, StoreError> {
    let io = |source| StoreError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = match File::open(path) {
        Ok(file) => file,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Loaded::default()),
        Err(err) => return Err(io(err)),
    };
    let mut loaded = Loaded::default();
    for (idx, line) in BufReader::new(file).split(b'\n').enumerate() {
        loaded.take_bytes(path, idx + 1, &line.map_err(io)?)?;
    }
    loaded.keep_latest();
    Ok(loaded)
}

/// Reads the records of store text, as [`load`] reads a file; `path` names it in errors.
///
/// # Errors
/// [`StoreError::NewerFormat`] naming the first record too new to read.
pub fn parse(text: &str, path: &Path) -> Result<Loaded, StoreError> {
    parse_bytes(text.as_bytes(), path)
}

/// Reads the records of store bytes, as [`load`] reads a file (a line that is not UTF-8 is
/// skipped and reported); `path` names it in errors.
///
/// # Errors
/// [`StoreError::NewerFormat`] naming the first record too new to read.
pub fn parse_bytes(bytes: &[u8], path: &Path) -> Result<Loaded, StoreError> {
    let mut loaded = Loaded::default();
    for (idx, line) in bytes.split(|b| *b == b'\n').enumerate() {
        loaded.take_bytes(path, idx + 1, line)?;
    }
    loaded.keep_latest();
    Ok(loaded)
}

/// What makes two records the same process of the same set repeat: plan, GPU UUID, group,
/// set index, repeat, rank.
type ProcessKey<'a> = (&'a str, &'a str, &'a str, usize, u32, usize);

impl Loaded {
    /// Takes line `number` as bytes: a line that is not UTF-8 is skipped, naming the byte.
    fn take_bytes(&mut self, path: &Path, number: usize, line: &[u8]) -> Result<(), StoreError> {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        match std::str::from_utf8(line) {
            Ok(text) => self.take(path, number, text),
            Err(err) => {
                let at = err.valid_up_to();
                self.skipped.push((
                    number,
                    format!(
                        "not UTF-8: byte {} (0x{:02x}) at column {}",
                        at + 1,
                        line[at],
                        at + 1
                    ),
                ));
                Ok(())
            }
        }
    }

    /// Keeps the latest record of each process of a set repeat ([`ProcessKey`]), counting the
    /// others in `duplicates`.
    fn keep_latest(&mut self) {
        let mut latest: BTreeMap<ProcessKey<'_>, usize> = BTreeMap::new();
        for (idx, r) in self.records.iter().enumerate() {
            let key = (
                r.plan.as_str(),
                r.gpu_uuid.as_str(),
                r.group.as_str(),
                r.set_index,
                r.repeat,
                r.rank,
            );
            latest.insert(key, idx);
        }
        if latest.len() == self.records.len() {
            return;
        }
        let mut keep = vec![false; self.records.len()];
        for idx in latest.into_values() {
            keep[idx] = true;
        }
        self.duplicates = keep.iter().filter(|k| !**k).count();
        let mut keep = keep.into_iter();
        self.records.retain(|_| keep.next().unwrap_or(true));
    }

    /// Takes line `number` of a store: a record, a skipped line, or nothing when blank; a
    /// record newer than [`RECORD_FORMAT_VERSION`] is an error (skipping it would fit a
    /// store with its newest measurements silently left out).
    fn take(&mut self, path: &Path, number: usize, line: &str) -> Result<(), StoreError> {
        if line.trim().is_empty() {
            return Ok(());
        }
        if let Ok(FormatProbe { format_version }) = serde_json::from_str(line)
            && format_version > RECORD_FORMAT_VERSION
        {
            return Err(StoreError::NewerFormat {
                path: path.to_path_buf(),
                line: number,
                version: format_version,
                supported: RECORD_FORMAT_VERSION,
            });
        }
        match serde_json::from_str::<Record>(line) {
            Ok(rec) => self.records.push(rec),
            Err(err) => self.skipped.push((number, err.to_string())),
        }
        Ok(())
    }
}

/// Reads every `*.jsonl` file of a folder, in name order.
pub fn load_dir(dir: &Path) -> Result<Vec<(PathBuf, Loaded)>, StoreError> {
    let io = |source| StoreError::Io {
        path: dir.to_path_buf(),
        source,
    };
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io)?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|ext| ext == "jsonl"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|p| load(&p).map(|l| (p, l)))
        .collect()
}

/// Refuses `output`, a file a command is about to write after reading the stores of
/// `data_dir`, when it is one of those stores (the same file by any path or link) or a
/// `*.jsonl` file anywhere in that folder (a store every later read would take, or a traces
/// index).
///
/// # Errors
/// [`StoreError::WouldOverwrite`] naming both.
pub fn refuse_overwriting_inputs(output: &Path, data_dir: &Path) -> Result<(), StoreError> {
    let Some(resolved) = resolve(output) else {
        return Ok(());
    };
    let Ok(dir) = data_dir.canonicalize() else {
        return Ok(());
    };
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for entry in entries.flatten() {
            let input = entry.path();
            let is_store = input.extension().is_some_and(|ext| ext == "jsonl");
            if is_store && input.canonicalize().is_ok_and(|real| real == resolved) {
                return Err(StoreError::WouldOverwrite {
                    output: output.to_path_buf(),
                    input,
                    why: "it is the input store",
                });
            }
        }
    }
    if resolved.starts_with(&dir) && resolved.extension().is_some_and(|ext| ext == "jsonl") {
        return Err(StoreError::WouldOverwrite {
            output: output.to_path_buf(),
            input: data_dir.to_path_buf(),
            why: "a .jsonl file there would be read as a store of the input folder",
        });
    }
    Ok(())
}

/// `path` with its folder (and the file itself, when it exists) resolved through links; `None`
/// when its folder does not exist (then it cannot be an input).
fn resolve(path: &Path) -> Option<PathBuf> {
    if let Ok(real) = path.canonicalize() {
        return Some(real);
    }
    let name = path.file_name()?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    Some(parent.canonicalize().ok()?.join(name))
}

/// Keys already recorded.
pub fn done_keys(records: &[Record]) -> BTreeSet<RecordKey> {
    records.iter().map(Record::key).collect()
}

/// The records of each set repeat, grouped by (GPU UUID, plan, group, set index, repeat) and
/// ordered by rank. A rank recorded twice (a repeat resumed after an interrupt) keeps its
/// latest record, so every set repeat has at most one record per process.
pub fn set_repeats(records: &[Record]) -> Vec<Vec<&Record>> {
    type RepeatKey<'a> = (&'a str, &'a str, &'a str, usize, u32);
    let mut grouped: BTreeMap<RepeatKey<'_>, BTreeMap<usize, &Record>> = BTreeMap::new();
    for r in records {
        let key = (
            r.gpu_uuid.as_str(),
            r.plan.as_str(),
            r.group.as_str(),
            r.set_index,
            r.repeat,
        );
        grouped.entry(key).or_default().insert(r.rank, r);
    }
    grouped
        .into_values()
        .map(|ranks| ranks.into_values().collect())
        .collect()
}

/// Whether a set repeat (from [`set_repeats`]) has a record for every process and each ended
/// ok or out of memory: crashes and timeouts say nothing about speed or memory.
pub fn ran_to_the_end(procs: &[&Record]) -> bool {
    procs
        .first()
        .is_some_and(|first| procs.len() == first.n_procs)
        && procs
            .iter()
            .all(|r| matches!(r.measurement.status, Status::Ok | Status::Oom))
}

/// Resume keys of the records measured on the GPU with this UUID.
pub fn done_keys_on(records: &[Record], gpu_uuid: &str) -> BTreeSet<RecordKey> {
    records
        .iter()
        .filter(|rec| rec.gpu_uuid == gpu_uuid)
        .map(Record::key)
        .collect()
}

/// Appends records to a store file, one line each, flushed per record and synced to the disk
/// per set ([`Appender::sync`]). It holds an advisory lock on the file while it lives, so two
/// colo processes never append to one store at once.
pub struct Appender {
    path: PathBuf,
    file: File,
}

#[cfg(test)]
thread_local! {
    /// Syncs made on this thread (tests count them; a sync cannot be seen in the file).
    pub(crate) static SYNCS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

impl Appender {
    /// Opens (creating folder and file) for appending, and locks the file: another colo
    /// process that holds it is an error, [`StoreError::Locked`]. A file whose last line was
    /// cut short (a kill or a full disk mid-write) gets a newline first, so the next record
    /// starts on a line of its own and the torn line stays one bad line, reported.
    pub fn open(path: &Path) -> Result<Appender, StoreError> {
        let io = |source| StoreError::Io {
            path: path.to_path_buf(),
            source,
        };
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        let mut file = OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .open(path)
            .map_err(io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(StoreError::Locked {
                    path: path.to_path_buf(),
                });
            }
            Err(std::fs::TryLockError::Error(err)) => return Err(io(err)),
        }
        if !ends_with_newline(&mut file).map_err(io)? {
            file.write_all(b"\n").map_err(io)?;
        }
        Ok(Appender {
            path: path.to_path_buf(),
            file,
        })
    }

    /// Appends one record as one line (one write, so a crash leaves whole lines only).
    pub fn append(&mut self, rec: &Record) -> Result<(), StoreError> {
        let mut line = serde_json::to_vec(rec).map_err(|source| StoreError::Encode {
            path: self.path.clone(),
            source,
        })?;
        line.push(b'\n');
        self.file
            .write_all(&line)
            .and_then(|()| self.file.flush())
            .map_err(|source| StoreError::Io {
                path: self.path.clone(),
                source,
            })
    }

    /// Makes the lines appended so far durable (`fsync`): called after each set, so a power
    /// loss cannot take records that the run reported written, and no cost per line.
    pub fn sync(&mut self) -> Result<(), StoreError> {
        #[cfg(test)]
        SYNCS.with(|n| n.set(n.get() + 1));
        self.file.sync_data().map_err(|source| StoreError::Io {
            path: self.path.clone(),
            source,
        })
    }
}

/// Whether a file is empty or ends with a newline.
pub(crate) fn ends_with_newline(file: &mut File) -> std::io::Result<bool> {
    use std::io::{Read as _, Seek as _, SeekFrom};
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(true);
    }
    file.seek(SeekFrom::Start(len - 1))?;
    let mut last = [0u8; 1];
    file.read_exact(&mut last)?;
    Ok(last[0] == b'\n')
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A committed H200 record, re-keyed.
    fn record(gpu: &str, repeat: u32, rank: usize, rate: f64) -> Record {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/h200/h200-paper-ts.jsonl");
        let text = std::fs::read_to_string(path).expect("committed data");
        let mut rec: Record =
            serde_json::from_str(text.lines().next().expect("a line")).expect("record");
        (
            rec.gpu_uuid,
            rec.repeat,
            rec.rank,
            rec.measurement.samples_per_s,
        ) = (gpu.to_owned(), repeat, rank, Some(rate));
        // The window that makes the rate agree with the iterations.
        let samples = rec.measurement.iterations.expect("iterations") as f64 * 128.0;
        rec.measurement.window_s = Some(samples / rate);
        rec
    }

    /// Whether `written` is `line` byte for byte, except numbers that serde_json's default
    /// float parsing (not exact to the last digit, 1 ulp at most) read off by one ulp, where
    /// the text read is the shortest form of its exact value, so that an exact reader writes
    /// it back as it was.
    fn same_bytes_up_to_float_parsing(line: &str, written: &str) -> Result<(), String> {
        // JSON's separators end the atoms compared (a string holding one splits the same
        // way on both sides).
        let split = |c: char| ",:{}[]".contains(c);
        let (read, wrote): (Vec<&str>, Vec<&str>) = (
            line.split_inclusive(split).collect(),
            written.split_inclusive(split).collect(),
        );
        if read.len() != wrote.len() {
            return Err(format!(
                "{} atoms read, {} written",
                read.len(),
                wrote.len()
            ));
        }
        for (r, w) in read.iter().zip(&wrote) {
            if r == w {
                continue;
            }
            let (r, w) = (r.trim_end_matches(split), w.trim_end_matches(split));
            let (Ok(exact), Ok(near)) = (r.parse::<f64>(), w.parse::<f64>()) else {
                return Err(format!("`{r}` written as `{w}`"));
            };
            let one_ulp = exact.to_bits().abs_diff(near.to_bits()) <= 1;
            let shortest = serde_json::to_string(&exact).is_ok_and(|t| t == r);
            if !(one_ulp && shortest) {
                return Err(format!("number `{r}` written as `{w}`"));
            }
        }
        Ok(())
    }

    /// Every committed record reads as typed fields and writes back what it read, byte for
    /// byte (up to serde_json's float parsing).
    #[test]
    fn committed_records_read_typed_and_write_back_what_they_read() {
        use std::io::Read as _;
        // Every store under data/, at any depth, gzipped or not (a store's lines start with
        // its first field; the workers' trace logs beside them are not records).
        fn stores(dir: &Path, out: &mut Vec<PathBuf>) {
            for entry in std::fs::read_dir(dir).expect("data folder") {
                let path = entry.expect("entry").path();
                let name = path.to_string_lossy();
                if path.is_dir() {
                    stores(&path, out);
                } else if name.ends_with(".jsonl") || name.ends_with(".jsonl.gz") {
                    out.push(path);
                }
            }
        }
        let mut files = Vec::new();
        stores(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("data"),
            &mut files,
        );
        files.sort();
        let (mut stores_read, mut lines) = (0, 0);
        for path in files {
            let bytes = std::fs::read(&path).expect("store file");
            let mut text = String::new();
            if path.extension().is_some_and(|e| e == "gz") {
                flate2::read::GzDecoder::new(bytes.as_slice())
                    .read_to_string(&mut text)
                    .expect("gzip");
            } else {
                text = String::from_utf8(bytes).expect("UTF-8");
            }
            if !(text.starts_with("{\"source\":") || text.starts_with("{\"format_version\":")) {
                continue;
            }
            let loaded = parse(&text, &path).expect("a store this build reads");
            assert!(
                loaded.skipped.is_empty(),
                "{}: {:?}",
                path.display(),
                loaded.skipped
            );
            let read: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
            assert_eq!(read.len(), loaded.records.len(), "{}", path.display());
            for (line, rec) in read.iter().zip(&loaded.records) {
                assert_ne!(rec.source, Source::Unknown, "{}", path.display());
                assert_ne!(
                    rec.measurement.status,
                    Status::Unknown,
                    "{}",
                    path.display()
                );
                assert_eq!(rec.format_version, 1, "{}", path.display());
                let written = serde_json::to_string(rec).expect("encodes");
                if let Err(why) = same_bytes_up_to_float_parsing(line, &written) {
                    panic!(
                        "{}: {why}\nread:    {line}\nwritten: {written}",
                        path.display()
                    );
                }
                lines += 1;
            }
            stores_read += 1;
        }
        assert!(
            stores_read >= 15 && lines > 1500,
            "{stores_read} stores, {lines} records"
        );
    }

    #[test]
    fn a_workload_is_a_point_or_a_command_and_a_point_must_agree_with_its_parts() {
        let mut rec = record("GPU-a", 0, 0, 1.0);
        assert!(rec.workload.point().is_some());
        let line = serde_json::to_string(&rec).expect("encodes");
        let other = line.replacen(r#""batch":"#, r#""batch":1"#, 1);
        let loaded = parse(&other, Path::new("t.jsonl")).expect("version 1");
        assert!(
            loaded.skipped[0].1.contains("disagrees with model"),
            "{:?}",
            loaded.skipped
        );

        rec.workload = Workload::Command("python train.py --epochs 1".into());
        let line = serde_json::to_string(&rec).expect("encodes");
        assert!(line.contains(
            r#""point":"python train.py --epochs 1","model":"cmd","batch":0,"image":0,"#
        ));
        assert!(line.contains(r#""command":"python train.py --epochs 1""#));
        let read = parse(&line, Path::new("t.jsonl")).expect("version 1");
        assert_eq!(read.records, vec![rec]);
    }

    #[test]
    fn co_runners_are_points_of_a_point_record_and_commands_of_a_command_record() {
        let mut rec = record("GPU-a", 0, 0, 1.0);
        rec.co_runners = vec![Workload::Point(ModelKey::new("resnet18", 128, 32))];
        let line = serde_json::to_string(&rec).expect("encodes");
        assert!(
            line.contains(r#""co_runners":["resnet18:128:32"],"#),
            "{line}"
        );
        let read = parse(&line, Path::new("t.jsonl")).expect("version 1");
        assert_eq!(read.records, vec![rec]);
        let spaced = line.replacen(r#"["resnet18:128:32"]"#, r#"["resnet18:128:032"]"#, 1);
        let loaded = parse(&spaced, Path::new("t.jsonl")).expect("version 1");
        assert!(
            loaded.skipped[0]
                .1
                .contains("co-runner `resnet18:128:032` is not written as `resnet18:128:32`"),
            "{:?}",
            loaded.skipped
        );

        let mut rec = record("GPU-a", 0, 0, 1.0);
        rec.workload = Workload::Command("sleep 1".into());
        rec.co_runners = vec![Workload::Command("resnet18:128:32".into())];
        let line = serde_json::to_string(&rec).expect("encodes");
        let read = parse(&line, Path::new("t.jsonl")).expect("version 1");
        assert_eq!(read.records, vec![rec]);
    }

    #[test]
    fn an_unknown_mode_is_refused_by_name_and_an_unknown_source_or_status_is_kept_apart() {
        let line = serde_json::to_string(&record("GPU-a", 0, 0, 1.0)).expect("encodes");
        let bad = line.replacen("\"mode\":\"exclusive\"", "\"mode\":\"mig-x\"", 1);
        assert_ne!(bad, line);
        let loaded = parse(&bad, Path::new("t.jsonl")).expect("version 1");
        assert!(loaded.records.is_empty());
        let (number, message) = &loaded.skipped[0];
        assert_eq!(*number, 1);
        assert!(
            message.contains(
                "unknown mode `mig-x`; expected one of exclusive, timeslice, mps, mig, mig-emulated"
            ),
            "{message}"
        );
        let newer = line.replacen("\"source\":\"measured\"", "\"source\":\"replayed\"", 1);
        assert_ne!(newer, line);
        let loaded = parse(&newer, Path::new("t.jsonl")).expect("version 1");
        assert_eq!(loaded.records[0].source, Source::Unknown);
        let later = line.replacen("\"status\":\"ok\"", "\"status\":\"preempted\"", 1);
        assert_ne!(later, line);
        let loaded = parse(&later, Path::new("t.jsonl")).expect("version 1");
        assert_eq!(loaded.records[0].measurement.status, Status::Unknown);
    }

    #[test]
    fn a_version_1_record_writes_no_version_and_a_newer_one_is_refused_by_file_and_line() {
        let line = serde_json::to_string(&record("GPU-a", 0, 0, 1.0)).expect("encodes");
        assert!(!line.contains("format_version"), "{line}");
        let explicit = line.replacen('{', "{\"format_version\":1,", 1);
        let read = parse(&explicit, Path::new("t.jsonl")).expect("version 1");
        assert_eq!(read.records[0].format_version, 1);
        assert_eq!(
            serde_json::to_string(&read.records[0]).expect("encodes"),
            line
        );

        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("newer.jsonl");
        let newer = line.replacen('{', "{\"format_version\":2,", 1);
        std::fs::write(&path, format!("{line}\n{newer}\n")).expect("write");
        let err = load(&path)
            .expect_err("a newer record is refused")
            .to_string();
        let at = format!("{}:2: record format version 2 is newer", path.display());
        assert!(err.starts_with(&at), "{err}");
        assert!(err.contains("(up to 1)"), "{err}");
    }

    /// The text of a record as the store writes it, one line.
    fn line_of(rec: &Record) -> String {
        serde_json::to_string(rec).expect("encodes")
    }

    #[test]
    fn issue_34_a_torn_last_line_is_reported_and_the_next_record_starts_a_new_line() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("t.jsonl");
        let first = line_of(&record("GPU-a", 0, 0, 1.0));
        let torn = &line_of(&record("GPU-a", 1, 0, 1.0))[..40];
        std::fs::write(&path, format!("{first}\n{torn}")).expect("write");
        let mut appender = Appender::open(&path).expect("opens");
        appender
            .append(&record("GPU-a", 2, 0, 3.0))
            .expect("appends");
        drop(appender);
        let loaded = load(&path).expect("reads");
        let repeats: Vec<u32> = loaded.records.iter().map(|r| r.repeat).collect();
        assert_eq!(repeats, vec![0, 2], "the appended record is whole");
        assert_eq!(loaded.skipped.len(), 1, "{:?}", loaded.skipped);
        assert_eq!(loaded.skipped[0].0, 2, "the torn line, by its number");
    }

    #[test]
    fn issue_34_a_line_that_is_not_utf8_is_skipped_with_its_number() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("t.jsonl");
        let mut bytes = line_of(&record("GPU-a", 0, 0, 1.0)).into_bytes();
        bytes.push(b'\n');
        let mut bad = line_of(&record("GPU-a", 1, 0, 1.0)).into_bytes();
        bad[20] = 0xff;
        bytes.extend_from_slice(&bad);
        bytes.push(b'\n');
        bytes.extend_from_slice(line_of(&record("GPU-a", 2, 0, 1.0)).as_bytes());
        std::fs::write(&path, &bytes).expect("write");
        let loaded = load(&path).expect("a bad byte is a bad line, not a fatal error");
        assert_eq!(loaded.records.len(), 2);
        let (number, message) = &loaded.skipped[0];
        assert_eq!(*number, 2);
        assert!(message.contains("not UTF-8: byte 21 (0xff)"), "{message}");
        assert_eq!(parse_bytes(&bytes, &path).expect("reads").records.len(), 2);
    }

    #[test]
    fn issue_34_impossible_values_are_bad_lines_naming_the_field() {
        let good = line_of(&record("GPU-a", 0, 0, 1.0));
        let cases = [
            (
                "\"samples_per_s\":1.0",
                "\"samples_per_s\":-1.0",
                "`samples_per_s` is -1",
            ),
            (
                "\"peak_reserved_mib\":",
                "\"peak_reserved_mib\":-5,\"x\":",
                "`peak_reserved_mib` is -5",
            ),
        ];
        for (from, to, expected) in cases {
            let bad = good.replacen(from, to, 1);
            assert_ne!(bad, good, "{from}");
            let loaded = parse(&bad, Path::new("t.jsonl")).expect("version 1");
            assert!(loaded.records.is_empty(), "{bad}");
            assert!(
                loaded.skipped[0].1.contains(expected),
                "{:?}",
                loaded.skipped
            );
        }
        // A rate that is not its iterations over the window (a real one, doubled).
        let mut doubled = record("GPU-a", 0, 0, 1.0);
        doubled.measurement.samples_per_s = Some(2.0);
        let loaded = parse(&line_of(&doubled), Path::new("t.jsonl")).expect("version 1");
        assert!(
            loaded.skipped[0].1.contains("disagrees with `iterations`"),
            "{:?}",
            loaded.skipped
        );
        let mut no_window = record("GPU-a", 0, 0, 1.0);
        no_window.measurement.window_s = Some(0.0);
        let loaded = parse(&line_of(&no_window), Path::new("t.jsonl")).expect("version 1");
        assert!(
            loaded.skipped[0].1.contains("`window_s` is 0"),
            "{:?}",
            loaded.skipped
        );
        let mut torn_time = record("GPU-a", 0, 0, 1.0);
        torn_time.measurement.t_end = torn_time.measurement.t_start - 1.0;
        let loaded = parse(&line_of(&torn_time), Path::new("t.jsonl")).expect("version 1");
        assert!(
            loaded.skipped[0].1.contains("`t_end`"),
            "{:?}",
            loaded.skipped
        );
    }

    #[test]
    fn issue_34_a_process_recorded_twice_keeps_its_latest_record_and_counts_the_other() {
        let records = [
            record("GPU-a", 0, 0, 1.0),
            record("GPU-a", 0, 0, 2.0), // the same process, written again on resume
            record("GPU-b", 0, 0, 3.0), // another GPU: another process
        ];
        let text: Vec<String> = records.iter().map(line_of).collect();
        let loaded = parse(&text.join("\n"), Path::new("t.jsonl")).expect("reads");
        let rates: Vec<Option<f64>> = loaded
            .records
            .iter()
            .map(|r| r.measurement.samples_per_s)
            .collect();
        assert_eq!(rates, vec![Some(2.0), Some(3.0)]);
        assert_eq!(loaded.duplicates, 1);
        let warnings = loaded.warnings(Path::new("t.jsonl"));
        assert!(
            warnings[0].starts_with("t.jsonl: 1 records dropped"),
            "{warnings:?}"
        );
    }

    #[test]
    fn issue_34_a_store_held_by_one_appender_is_refused_to_another() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("t.jsonl");
        let first = Appender::open(&path).expect("opens");
        let err = Appender::open(&path).err().expect("locked").to_string();
        assert!(
            err.contains("t.jsonl: another colo process holds this store"),
            "{err}"
        );
        drop(first);
        Appender::open(&path).expect("free again once the first is gone");
    }

    #[test]
    fn issue_34_outputs_never_overwrite_an_input_store() {
        let dir = tempfile::tempdir().expect("temp dir");
        let data = dir.path().join("data");
        std::fs::create_dir(&data).expect("mkdir");
        std::fs::write(data.join("a.jsonl"), "").expect("write");
        let err = refuse_overwriting_inputs(&data.join("a.jsonl"), &data)
            .expect_err("the input itself")
            .to_string();
        assert!(err.contains("it is the input store"), "{err}");
        let dotted = data.join(".").join("a.jsonl");
        refuse_overwriting_inputs(&dotted, &data).expect_err("by another path");
        let err = refuse_overwriting_inputs(&data.join("new.jsonl"), &data)
            .expect_err("a new store in the folder")
            .to_string();
        assert!(err.contains("read as a store"), "{err}");
        refuse_overwriting_inputs(&data.join("summary.csv"), &data).expect("not a store");
        refuse_overwriting_inputs(&dir.path().join("b.jsonl"), &data).expect("elsewhere");
    }

    /// `record` as process `rank` of an `n_procs`-process set repeat, ended with `status`.
    fn process(repeat: u32, rank: usize, n_procs: usize, status: Status) -> Record {
        let mut rec = record("GPU-a", repeat, rank, 1.0);
        rec.n_procs = n_procs;
        rec.measurement.status = status;
        rec
    }

    #[test]
    fn issue_37_a_set_repeat_is_finished_only_when_every_process_recorded() {
        // The resume key names the process: two ranks of one repeat are two keys.
        let (r0, r1) = (process(0, 0, 2, Status::Ok), process(0, 1, 2, Status::Ok));
        assert_eq!(
            r1.key(),
            (r1.group.clone(), r1.set_index, 0, 1),
            "(group, set, repeat, rank)"
        );
        assert_ne!(r0.key(), r1.key());
        assert_ne!(r0.key(), process(1, 0, 2, Status::Ok).key());
        let done = done_keys(std::slice::from_ref(&r0));
        assert!(done.contains(&r0.key()) && !done.contains(&r1.key()));
        // Keys of one GPU only.
        let mut other = process(0, 1, 2, Status::Ok);
        other.gpu_uuid = "GPU-b".into();
        let records = [r0.clone(), other];
        assert_eq!(done_keys_on(&records, "GPU-a"), done);
        assert_eq!(done_keys_on(&records, "GPU-c"), BTreeSet::new());
        // One of two processes recorded: not run to the end; both: run; one crashed: not.
        assert!(!ran_to_the_end(&[&r0]));
        assert!(ran_to_the_end(&[&r0, &r1]));
        let oom = process(0, 1, 2, Status::Oom);
        assert!(ran_to_the_end(&[&r0, &oom]), "out of memory is a result");
        for status in [
            Status::Error,
            Status::Crash,
            Status::Timeout,
            Status::Unknown,
        ] {
            let failed = process(0, 1, 2, status);
            assert!(!ran_to_the_end(&[&r0, &failed]), "{status:?}");
        }
        assert!(!ran_to_the_end(&[]));
        // Grouped from a store: the half-recorded repeat 1 is not finished.
        let records = vec![r0, r1, process(1, 1, 2, Status::Ok)];
        let ended: Vec<bool> = set_repeats(&records)
            .iter()
            .map(|procs| ran_to_the_end(procs))
            .collect();
        assert_eq!(ended, vec![true, false]);
    }

    #[test]
    fn issue_37_a_version_past_1_is_written_and_values_at_the_limits_are_kept() {
        // Version 1 leaves the field out; a later layout's records write it (and this build
        // refuses to read them).
        let mut rec = record("GPU-a", 0, 0, 1.0);
        assert!(!line_of(&rec).contains("format_version"));
        rec.format_version = 2;
        let line = line_of(&rec);
        assert!(line.contains("\"format_version\":2"), "{line}");
        assert!(parse(&line, Path::new("t.jsonl")).is_err());
        // Zero is not negative: an idle GPU sample and no warm-up are kept.
        let mut zero = record("GPU-a", 0, 0, 1.0);
        zero.measurement.gpu.util_pct = Some(0.0);
        zero.measurement.warmup_s = Some(0.0);
        let loaded = parse(&line_of(&zero), Path::new("t.jsonl")).expect("version 1");
        assert_eq!(loaded.records.len(), 1, "{:?}", loaded.skipped);
        // The rate may miss iterations x batch / window by 1 % of the samples plus a batch:
        // 200 iterations of 128 in 1 s are 25,600 samples, so 25,600 + 256 + 128 = 25,984
        // samples/s is kept and a hair more is not.
        let mut edge = record("GPU-a", 0, 0, 1.0);
        edge.measurement.iterations = Some(200);
        edge.measurement.window_s = Some(1.0);
        edge.measurement.samples_per_s = Some(25_984.0);
        let loaded = parse(&line_of(&edge), Path::new("t.jsonl")).expect("version 1");
        assert_eq!(loaded.records.len(), 1, "{:?}", loaded.skipped);
        edge.measurement.samples_per_s = Some(25_984.5);
        let loaded = parse(&line_of(&edge), Path::new("t.jsonl")).expect("version 1");
        assert!(loaded.records.is_empty());
    }

    #[test]
    fn issue_37_a_command_record_must_write_its_text_cmd_and_zeros() {
        let mut rec = record("GPU-a", 0, 0, 1.0);
        rec.workload = Workload::Command("python train.py".into());
        let line = line_of(&rec);
        assert_eq!(parse(&line, Path::new("t.jsonl")).unwrap().records.len(), 1);
        for (from, to) in [
            (
                r#""point":"python train.py""#,
                r#""point":"python other.py""#,
            ),
            (r#""model":"cmd""#, r#""model":"resnet18""#),
            (r#""batch":0"#, r#""batch":1"#),
            (r#""image":0"#, r#""image":1"#),
        ] {
            let bad = line.replacen(from, to, 1);
            assert_ne!(bad, line, "{from}");
            let loaded = parse(&bad, Path::new("t.jsonl")).expect("version 1");
            assert!(loaded.records.is_empty(), "{to}");
            assert!(
                loaded.skipped[0].1.contains("recorded as point"),
                "{to}: {:?}",
                loaded.skipped
            );
        }
    }

    #[test]
    fn issue_37_a_missing_store_is_empty_and_an_unopenable_one_an_error() {
        let dir = tempfile::tempdir().expect("temp dir");
        let loaded = load(&dir.path().join("none.jsonl")).expect("a missing store is empty");
        assert!(loaded.records.is_empty() && loaded.skipped.is_empty());
        // Nothing to warn about in a clean store, one warning for its dropped duplicates.
        assert!(loaded.warnings(Path::new("none.jsonl")).is_empty());
        let twice = Loaded {
            duplicates: 1,
            ..Loaded::default()
        };
        let warnings = twice.warnings(Path::new("s.jsonl"));
        assert_eq!(warnings.len(), 1);
        assert!(
            warnings[0].starts_with("s.jsonl: 1 records dropped"),
            "{warnings:?}"
        );
        // Under a file, not a folder: the open fails otherwise than "not found".
        let file = dir.path().join("file");
        std::fs::write(&file, "").expect("write");
        let err = load(&file.join("s.jsonl")).expect_err("not a folder");
        assert!(matches!(err, StoreError::Io { .. }), "{err}");
    }

    #[test]
    fn issue_37_a_bare_file_name_resolves_in_the_working_folder() {
        // A name with no folder, not yet written: its folder is the working one, so that an
        // output named so is still checked against the stores beside it.
        let cwd = std::env::current_dir()
            .expect("cwd")
            .canonicalize()
            .expect("real");
        assert_eq!(
            resolve(Path::new("no-such-store-yet.jsonl")),
            Some(cwd.join("no-such-store-yet.jsonl"))
        );
        // A folder that does not exist: no input can be there.
        assert_eq!(resolve(Path::new("no-such-folder/s.jsonl")), None);
    }

    #[test]
    fn set_repeats_split_by_gpu_and_keep_the_latest_record_of_a_rank() {
        let records = vec![
            record("GPU-a", 0, 1, 1.0),
            record("GPU-a", 0, 0, 2.0),
            record("GPU-b", 0, 0, 3.0),
            record("GPU-a", 0, 1, 4.0), // rank 1 of the same repeat, measured again
        ];
        let repeats = set_repeats(&records);
        let rates: Vec<Vec<(usize, Option<f64>)>> = repeats
            .iter()
            .map(|procs| {
                procs
                    .iter()
                    .map(|r| (r.rank, r.measurement.samples_per_s))
                    .collect()
            })
            .collect();
        assert_eq!(
            rates,
            vec![vec![(0, Some(2.0)), (1, Some(4.0))], vec![(0, Some(3.0))]]
        );
    }
}
