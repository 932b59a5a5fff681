//! Calibration plans: a RON file that says which points run, in which sharing mode, with whom.
//!
//! A plan holds groups. A group is one launch of `n` worker processes under one mode; it steps
//! through its co-run sets in lockstep (set k of every process runs together), and repeats the
//! whole list `repeats` times, interleaved: repeat r of every set before repeat r + 1.
//!
//! ```ron
//! (
//!     name: "h200-pairs",
//!     // The GPU type the plan is for (a catalog name, default h200): MIG profiles are its.
//!     gpu: "h200",
//!     repeats: 3,
//!     warmup_s: 1.5,
//!     window_s: 3.0,
//!     groups: [
//!         // trace: also take each point's kernel trace alone (OUT/traces/), Exclusive only.
//!         (id: "alone", mode: Exclusive, trace: true, sets: [["resnet50:64:224"], ["resnet18:128:32"]]),
//!         (id: "budget50", mode: Mps, sm_percent: [50], sets: [["resnet50:64:224"]]),
//!         (id: "mig-3g", mode: MigEmulated, mig_profiles: ["3g.71gb"], sets: [["resnet50:64:224"]]),
//!         (id: "pairs-ts", mode: Timeslice, sets: [["resnet50:64:224", "resnet18:128:32"]]),
//!     ],
//! )
//! ```
use std::path::{Path, PathBuf};

use colo_sim::hardware::{self, GpuSpec, MigProfile};
use colo_sim::perf::MeasuredMode;
use colo_sim::workload::{ModelKey, ModelKeyFault};
use serde::Deserialize;

/// Why a plan could not be read or is not valid. Fatal: fix the file and run again.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// The file could not be read.
    #[error("cannot read plan {path}: {source}")]
    Read {
        /// Plan file.
        path: PathBuf,
        /// Cause.
        source: std::io::Error,
    },
    /// The RON does not parse or has unknown/missing fields.
    #[error("{path}:{line}:{column}: {message} (see the plan format in calibrate/README.md)")]
    Syntax {
        /// Plan file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What the parser said.
        message: String,
    },
    /// A command-line setting is out of range or inconsistent (`colo calibrate profile`).
    #[error("{0}")]
    Flag(String),
    /// A value is out of range or inconsistent.
    #[error("{path}: {field}: {message}")]
    Invalid {
        /// Plan file.
        path: PathBuf,
        /// Field, e.g. `groups[2].sets[0][1]`.
        field: String,
        /// What is wrong and how to fix it.
        message: String,
    },
}

/// Training recipes the built-in worker knows besides its default (fp32, SGD with momentum),
/// written as a model name's suffix, `MODEL+RECIPE` (`calibrate/workloads/train.py`).
pub const RECIPES: [&str; 2] = ["bf16-adamw", "fp16-amp-adamw"];

/// Reads a plan's training point, `MODEL[+RECIPE]:BATCH:IMAGE` (through
/// [`ModelKey::parse_with`], with model names of letters, digits, `_` or `.` only, and a recipe
/// of [`RECIPES`]); the error says what is expected.
pub fn parse_point(text: &str) -> Result<ModelKey, String> {
    let valid_name = |name: &str| {
        let (model, recipe) = name.split_once('+').unwrap_or((name, RECIPES[0]));
        !model.is_empty()
            && model
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
            && RECIPES.contains(&recipe)
    };
    ModelKey::parse_with(text, valid_name).map_err(|fault| match fault {
        ModelKeyFault::Parts => {
            format!("`{text}` is not MODEL:BATCH:IMAGE (e.g. resnet50:64:224)")
        }
        ModelKeyFault::Model => {
            format!(
                "`{text}`: model name must be letters, digits, '_' or '.', optionally with a \
                 recipe: +{} (none: fp32 with SGD)",
                RECIPES.join(" or +")
            )
        }
        ModelKeyFault::Batch(part) => {
            format!("`{text}`: batch `{part}` is not a positive integer")
        }
        ModelKeyFault::Image(part) => {
            format!("`{text}`: image size `{part}` is not a positive integer")
        }
    })
}

/// Plan as written in the file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PlanFile {
    name: String,
    #[serde(default = "default_gpu")]
    gpu: String,
    #[serde(default = "default_repeats")]
    repeats: u32,
    #[serde(default = "default_warmup_s")]
    warmup_s: f64,
    #[serde(default = "default_window_s")]
    window_s: f64,
    #[serde(default)]
    interleave_groups: bool,
    groups: Vec<GroupFile>,
}

/// Group as written in the file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GroupFile {
    id: String,
    mode: MeasuredMode,
    sets: Vec<Vec<String>>,
    #[serde(default)]
    sm_percent: Vec<u32>,
    #[serde(default)]
    mem_limit_mib: Vec<u64>,
    #[serde(default)]
    mig_profiles: Vec<String>,
    #[serde(default)]
    mig_uuids: Vec<String>,
    #[serde(default)]
    per_gpu: bool,
    #[serde(default)]
    trace: bool,
}

fn default_gpu() -> String {
    "h200".into()
}
fn default_repeats() -> u32 {
    3
}
fn default_warmup_s() -> f64 {
    1.5
}
fn default_window_s() -> f64 {
    3.0
}

/// The fewest repeats a plan may ask for: noise must be measured, not hoped away.
pub const MIN_REPEATS: u32 = 3;

/// A validated plan.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Name; the store file is `<name>.jsonl`.
    pub name: String,
    /// The GPU type the plan is for: its MIG profiles are the ones `mig_profiles` name and
    /// emulate (default h200).
    pub gpu: &'static GpuSpec,
    /// Measurements of each set (at least 3), interleaved.
    pub repeats: u32,
    /// Warm-up per point after its first two iterations, seconds.
    pub warmup_s: f64,
    /// Measured window per point, seconds.
    pub window_s: f64,
    /// Repeat r of every group before repeat r + 1 (each group launched once per repeat), so
    /// alone baselines run between the co-runs they divide; otherwise each group runs all its
    /// repeats in one launch before the next group starts.
    pub interleave_groups: bool,
    /// Launches, in order.
    pub groups: Vec<Group>,
}

/// One launch: `n` processes under one mode stepping through co-run sets together.
#[derive(Debug, Clone)]
pub struct Group {
    /// Unique id within the plan.
    pub id: String,
    /// Sharing mode.
    pub mode: MeasuredMode,
    /// Co-run sets; every set has one point per process.
    pub sets: Vec<Vec<ModelKey>>,
    /// Per-process settings, one per process.
    pub procs: Vec<ProcSettings>,
    /// Re-measured on every GPU the plan runs on (alone baselines: launch-bound rates depend on
    /// the host); other groups count as done whichever GPU measured them.
    pub per_gpu: bool,
    /// After the group's sets, trace every distinct point of it once, alone, into `OUT/traces/`
    /// (mode Exclusive only; points whose trace file exists are skipped).
    pub trace: bool,
}

/// Settings of one process of a group.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProcSettings {
    /// MPS active-thread percentage (SM budget).
    pub sm_percent: Option<u32>,
    /// MPS pinned device memory limit, MiB.
    pub mem_limit_mib: Option<u64>,
    /// MIG profile: emulated (mig-emulated), or the real instance's (mig): the profile the
    /// runner creates an instance of when no UUID is given, a label when one is.
    pub mig_profile: Option<String>,
    /// MIG instance UUID of an existing instance (mode `mig`).
    pub mig_uuid: Option<String>,
}

impl Group {
    /// Number of processes.
    pub fn n_procs(&self) -> usize {
        self.procs.len()
    }

    /// The group's distinct points, in first-seen order (what `trace: true` traces).
    pub fn distinct_points(&self) -> Vec<ModelKey> {
        crate::tracing::distinct(&self.sets.concat())
    }

    /// Whether the group runs on MIG instances the runner must create (mode Mig with
    /// `mig_profiles` and no `mig_uuids`).
    pub fn creates_mig_instances(&self) -> bool {
        creates_mig_instances(self.mode, &self.procs)
    }
}

/// Whether processes of `mode` with these settings run on MIG instances that must be created
/// first: mode Mig, and a process has no instance UUID (a valid plan then gives its profile).
pub fn creates_mig_instances(mode: MeasuredMode, procs: &[ProcSettings]) -> bool {
    mode == MeasuredMode::Mig && procs.iter().any(|p| p.mig_uuid.is_none())
}

impl Plan {
    /// Reads and validates a plan file.
    pub fn load(path: &Path) -> Result<Plan, PlanError> {
        let text = std::fs::read_to_string(path).map_err(|source| PlanError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Plan::parse(&text, path)
    }

    /// Parses and validates plan text; `path` is used in messages only.
    pub fn parse(text: &str, path: &Path) -> Result<Plan, PlanError> {
        let file: PlanFile = ron::from_str(text).map_err(|err| PlanError::Syntax {
            path: path.to_path_buf(),
            line: err.span.start.line,
            column: err.span.start.col,
            message: err.code.to_string(),
        })?;
        validate(file, path)
    }

    /// What `colo calibrate run --dry-run` prints: per group its mode, processes, settings and
    /// sets, then the process-points and the estimated GPU time.
    pub fn describe(&self) -> String {
        let plan = self;
        let mut out = format!(
            "plan {}: {} repeats, warm-up {} s, window {} s\n",
            plan.name, plan.repeats, plan.warmup_s, plan.window_s
        );
        for group in &plan.groups {
            let settings: Vec<String> = group
                .procs
                .iter()
                .map(|p| describe_proc(group.mode, p))
                .collect();
            let traced = if group.trace {
                format!(", then {} points traced", group.distinct_points().len())
            } else {
                String::new()
            };
            out += &format!(
                "  {} [{}] {} processes, {} sets{traced}, per process: {}\n",
                group.id,
                group.mode.label(),
                group.n_procs(),
                group.sets.len(),
                settings.join(" / ")
            );
            for set in &group.sets {
                let points: Vec<String> = set.iter().map(ToString::to_string).collect();
                out += &format!("    {}\n", points.join(" + "));
            }
        }
        out += &format!(
            "{} process-points; estimated GPU time {:.0} s (provisional: warm-up + window + ~4 s per set, ~15 s start-up per group{})\n",
            plan.n_process_points(),
            plan.estimated_gpu_s(),
            if plan.groups.iter().any(|g| g.trace) {
                "; per traced point warm-up + window + ~10 s, ~15 s start-up per traced group"
            } else {
                ""
            }
        );
        out
    }

    /// Process-points the plan measures in all (sets x processes x repeats).
    pub fn n_process_points(&self) -> usize {
        let per_repeat: usize = self.groups.iter().map(|g| g.sets.len() * g.n_procs()).sum();
        per_repeat * self.repeats as usize
    }

    /// Estimated GPU time in seconds: per set and repeat, warm-up, window and about 4 s of
    /// model building and autotuning; per group launch (one, or one per repeat with
    /// `interleave_groups`), about 15 s of process start-up; per group with `trace: true`,
    /// another 15 s start-up and per distinct point warm-up, window and about 10 s of building,
    /// profiling and writing the trace.
    pub fn estimated_gpu_s(&self) -> f64 {
        let per_step = self.warmup_s + self.window_s + 4.0;
        let steps: usize = self.groups.iter().map(|g| g.sets.len()).sum();
        let launches = self.groups.len()
            * if self.interleave_groups {
                self.repeats as usize
            } else {
                1
            };
        let measured = steps as f64 * self.repeats as f64 * per_step + launches as f64 * 15.0;
        let per_trace = self.warmup_s + self.window_s + 10.0;
        let traced: f64 = self
            .groups
            .iter()
            .filter(|g| g.trace)
            .map(|g| 15.0 + g.distinct_points().len() as f64 * per_trace)
            .sum();
        measured + traced
    }
}

/// One process's settings for `--dry-run`.
fn describe_proc(mode: MeasuredMode, proc: &ProcSettings) -> String {
    if mode == MeasuredMode::Mig {
        return match (&proc.mig_uuid, &proc.mig_profile) {
            (Some(uuid), _) => format!("instance {uuid}"),
            (None, Some(profile)) => {
                format!("new {profile} instance (created with --allow-mig-reconfigure)")
            }
            (None, None) => "-".into(),
        };
    }
    match (&proc.mig_profile, proc.sm_percent, proc.mem_limit_mib) {
        (Some(profile), Some(pct), Some(mib)) => format!("{profile} ({pct}% SMs, {mib} MiB)"),
        (_, Some(pct), None) => format!("{pct}% SMs"),
        (_, Some(pct), Some(mib)) => format!("{pct}% SMs, {mib} MiB"),
        (_, None, Some(mib)) => format!("{mib} MiB"),
        _ => "-".into(),
    }
}

fn invalid(path: &Path, field: String, message: impl Into<String>) -> PlanError {
    PlanError::Invalid {
        path: path.to_path_buf(),
        field,
        message: message.into(),
    }
}

fn validate(file: PlanFile, path: &Path) -> Result<Plan, PlanError> {
    let name_ok = !file.name.is_empty()
        && file
            .name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    if !name_ok {
        return Err(invalid(
            path,
            "name".into(),
            "use letters, digits, '-', '_' or '.' (it names the store file)",
        ));
    }
    if file.repeats < MIN_REPEATS {
        return Err(invalid(
            path,
            "repeats".into(),
            format!("at least {MIN_REPEATS}: every point is measured 3+ times"),
        ));
    }
    for (field, value) in [("warmup_s", file.warmup_s), ("window_s", file.window_s)] {
        if !(value.is_finite() && value > 0.0 && value <= 600.0) {
            return Err(invalid(path, field.into(), "seconds in (0, 600]"));
        }
    }
    if file.groups.is_empty() {
        return Err(invalid(path, "groups".into(), "the plan has no groups"));
    }
    let gpu = hardware::gpu(&file.gpu).map_err(|e| invalid(path, "gpu".into(), e.to_string()))?;
    let mut groups = Vec::with_capacity(file.groups.len());
    for (idx, group) in file.groups.into_iter().enumerate() {
        if groups.iter().any(|g: &Group| g.id == group.id) {
            return Err(invalid(
                path,
                format!("groups[{idx}].id"),
                format!("`{}` is used twice", group.id),
            ));
        }
        groups.push(validate_group(group, idx, gpu, path)?);
    }
    Ok(Plan {
        name: file.name,
        gpu,
        repeats: file.repeats,
        warmup_s: file.warmup_s,
        window_s: file.window_s,
        interleave_groups: file.interleave_groups,
        groups,
    })
}

fn validate_group(
    group: GroupFile,
    idx: usize,
    gpu: &'static GpuSpec,
    path: &Path,
) -> Result<Group, PlanError> {
    let at = |field: &str| format!("groups[{idx}].{field}");
    if group.id.is_empty() || group.id.contains(char::is_whitespace) {
        return Err(invalid(path, at("id"), "a non-empty id without spaces"));
    }
    let Some(first) = group.sets.first() else {
        return Err(invalid(
            path,
            at("sets"),
            "no sets: give at least one list of points",
        ));
    };
    let n_procs = first.len();
    if n_procs == 0 {
        return Err(invalid(
            path,
            at("sets[0]"),
            "a set needs at least one point",
        ));
    }
    if group.mode == MeasuredMode::Exclusive && n_procs != 1 {
        return Err(invalid(
            path,
            at("sets"),
            "Exclusive runs one process: use Timeslice or Mps for co-runs",
        ));
    }
    let mut sets = Vec::with_capacity(group.sets.len());
    for (set_idx, set) in group.sets.iter().enumerate() {
        if set.len() != n_procs {
            let msg = format!(
                "has {} points but sets[0] has {n_procs}: every set of a group has one point per process",
                set.len()
            );
            return Err(invalid(path, at(&format!("sets[{set_idx}]")), msg));
        }
        let points = set.iter().enumerate().map(|(k, text)| {
            parse_point(text)
                .map_err(|msg| invalid(path, at(&format!("sets[{set_idx}][{k}]")), msg))
        });
        sets.push(points.collect::<Result<Vec<_>, _>>()?);
    }
    if group.trace && group.mode != MeasuredMode::Exclusive {
        let msg = format!(
            "group `{}` is in mode {:?}, but kernel traces are taken alone: `trace: true` is \
             allowed only on mode Exclusive groups (trace the same points in an Exclusive group)",
            group.id, group.mode
        );
        return Err(invalid(path, at("trace"), msg));
    }
    let procs = proc_settings(&group, n_procs, gpu, &at, path)?;
    Ok(Group {
        id: group.id,
        mode: group.mode,
        sets,
        procs,
        per_gpu: group.per_gpu,
        trace: group.trace,
    })
}

/// Spreads a per-process list (empty, one value for all, or one per process).
fn per_proc<T: Clone>(
    values: &[T],
    n_procs: usize,
    field: String,
    path: &Path,
) -> Result<Vec<Option<T>>, PlanError> {
    match values.len() {
        0 => Ok(vec![None; n_procs]),
        1 => Ok(vec![Some(values[0].clone()); n_procs]),
        n if n == n_procs => Ok(values.iter().cloned().map(Some).collect()),
        n => Err(invalid(
            path,
            field,
            format!("{n} values for {n_procs} processes: give one for all or one per process"),
        )),
    }
}

fn proc_settings(
    group: &GroupFile,
    n_procs: usize,
    gpu: &'static GpuSpec,
    at: &dyn Fn(&str) -> String,
    path: &Path,
) -> Result<Vec<ProcSettings>, PlanError> {
    let lists = SettingLists {
        sm_percent: &group.sm_percent,
        mem_limit_mib: &group.mem_limit_mib,
        mig_profiles: &group.mig_profiles,
        mig_uuids: &group.mig_uuids,
    };
    settings(group.mode, n_procs, &lists, gpu, at, path)
}

/// Per-process lists as a plan group (or the command line) gives them: empty, one value for all
/// processes, or one per process.
#[derive(Debug, Clone, Copy, Default)]
pub struct SettingLists<'a> {
    /// MPS SM budgets, percent.
    pub sm_percent: &'a [u32],
    /// MPS memory limits, MiB.
    pub mem_limit_mib: &'a [u64],
    /// MIG profiles (MigEmulated; Mig: instances to create, or labels of `mig_uuids`).
    pub mig_profiles: &'a [String],
    /// MIG instance UUIDs of existing instances (Mig).
    pub mig_uuids: &'a [String],
}

/// Checks the lists against the mode and spreads them over `n_procs` processes; MIG profiles
/// are `gpu`'s; `at` names a field in messages, `path` the file (or flag) they came from.
pub fn settings(
    mode: MeasuredMode,
    n_procs: usize,
    lists: &SettingLists<'_>,
    gpu: &'static GpuSpec,
    at: &dyn Fn(&str) -> String,
    path: &Path,
) -> Result<Vec<ProcSettings>, PlanError> {
    if mode != MeasuredMode::Mps
        && (!lists.sm_percent.is_empty() || !lists.mem_limit_mib.is_empty())
    {
        return Err(invalid(
            path,
            at("sm_percent"),
            "SM budgets and memory limits are set only in mode Mps (MigEmulated takes them from mig_profiles)",
        ));
    }
    if let Some(p) = lists.sm_percent.iter().find(|p| !(1..=100).contains(*p)) {
        return Err(invalid(
            path,
            at("sm_percent"),
            format!("{p} is not a percentage in 1..=100"),
        ));
    }
    let sm = per_proc(lists.sm_percent, n_procs, at("sm_percent"), path)?;
    let mem = per_proc(lists.mem_limit_mib, n_procs, at("mem_limit_mib"), path)?;
    let profiles = per_proc(lists.mig_profiles, n_procs, at("mig_profiles"), path)?;
    let uuids = per_proc(lists.mig_uuids, n_procs, at("mig_uuids"), path)?;
    let mut procs = Vec::with_capacity(n_procs);
    for rank in 0..n_procs {
        let mut proc = ProcSettings {
            sm_percent: sm[rank],
            mem_limit_mib: mem[rank],
            mig_profile: profiles[rank].clone(),
            mig_uuid: uuids[rank].clone(),
        };
        check_proc(mode, &mut proc, gpu, at, path)?;
        procs.push(proc);
    }
    if mode == MeasuredMode::Mig && n_procs > 1 && !lists.mig_uuids.is_empty() {
        let mut seen: Vec<&Option<String>> = procs.iter().map(|p| &p.mig_uuid).collect();
        seen.sort();
        seen.dedup();
        if seen.len() != n_procs {
            return Err(invalid(
                path,
                at("mig_uuids"),
                "one MIG instance per process: the UUIDs must differ",
            ));
        }
    }
    Ok(procs)
}

/// Checks one process's MIG fields against the mode and fills in emulated budgets.
fn check_proc(
    mode: MeasuredMode,
    proc: &mut ProcSettings,
    gpu: &'static GpuSpec,
    at: &dyn Fn(&str) -> String,
    path: &Path,
) -> Result<(), PlanError> {
    match mode {
        MeasuredMode::MigEmulated => {
            let profile = known_profile(proc.mig_profile.as_deref(), gpu, at, path)?;
            proc.sm_percent = Some(gpu.emulated_sm_percent(profile));
            proc.mem_limit_mib = Some(emulated_memory_mib(profile));
            proc.mig_profile = Some(profile.name.to_string());
        }
        MeasuredMode::Mig if proc.mig_uuid.is_none() && proc.mig_profile.is_none() => {
            return Err(invalid(
                path,
                at("mig_uuids"),
                "mode Mig needs one MIG instance per process: `mig_uuids` of existing instances \
                 (nvidia-smi -L lists them), or `mig_profiles` of instances colo creates and \
                 destroys (only with --allow-mig-reconfigure)",
            ));
        }
        MeasuredMode::Mig if proc.mig_uuid.is_none() => {
            let profile = known_profile(proc.mig_profile.as_deref(), gpu, at, path)?;
            proc.mig_profile = Some(profile.name.to_string());
        }
        MeasuredMode::Mig => {}
        _ if proc.mig_profile.is_some() || proc.mig_uuid.is_some() => {
            return Err(invalid(
                path,
                at("mig_profiles"),
                "MIG fields are used only in modes Mig and MigEmulated",
            ));
        }
        _ => {}
    }
    Ok(())
}

/// `gpu`'s MIG profile named `name` (`3g.71gb`, with or without a leading `MIG `); the error
/// lists the known ones.
fn known_profile(
    name: Option<&str>,
    gpu: &'static GpuSpec,
    at: &dyn Fn(&str) -> String,
    path: &Path,
) -> Result<&'static MigProfile, PlanError> {
    let Some(name) = name else {
        return Err(invalid(
            path,
            at("mig_profiles"),
            "mode MigEmulated needs a MIG profile per process, e.g. [\"3g.71gb\"]",
        ));
    };
    gpu.mig_profile(name).map_err(|_| {
        invalid(
            path,
            at("mig_profiles"),
            format!(
                "unknown profile `{name}`; {} profiles: {}",
                gpu.name,
                gpu.profile_names().join(", ")
            ),
        )
    })
}

/// The MPS pinned memory limit that emulates `profile`: its memory in MiB (the catalog keeps
/// `nvidia-smi`'s MiB / 1024).
pub fn emulated_memory_mib(profile: &MigProfile) -> u64 {
    (profile.memory_gib * 1024.0).round() as u64
}

#[cfg(test)]
mod tests;
