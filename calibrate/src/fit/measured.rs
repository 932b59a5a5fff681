//! From a calibration store (`calibrate/data/<gpu>/*.jsonl`) to the parametric model's fit
//! problem: one class per point measured alone, one observation per co-run set (the median over
//! its repeats), each job's rate taken as a fraction of the same point alone on the same GPU
//! (hosts differ for launch-bound jobs) times the point's median alone rate.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use colo_sim::hardware::{self, GpuSpec};
use colo_sim::perf::{Partition, ShareMode};
use colo_sim::workload::ModelKey;
use thiserror::Error;

use super::parametric::{ClassSpec, Member, Observation};
use crate::store::{self, Record, Source, Status, StoreError, Workload};
use colo_sim::perf::MeasuredMode;

/// Measurements that cannot be fitted. Fatal.
#[derive(Debug, Error)]
pub enum DataError {
    /// The store could not be read.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Nothing usable was found.
    #[error("{}: {message}", dir.display())]
    Empty {
        /// The data folder.
        dir: PathBuf,
        /// What is missing and how to get it.
        message: String,
    },
    /// No record was taken on the GPU being fitted.
    #[error("{}: no records taken on {wanted}; the store holds {found}; {fix}", dir.display())]
    WrongGpu {
        /// The data folder.
        dir: PathBuf,
        /// The GPU asked for, e.g. `a100-40gb (NVIDIA A100-SXM4-40GB)`.
        wanted: String,
        /// What the store holds instead, e.g. `2116 records of h200 (NVIDIA H200)`.
        found: String,
        /// How to fit what is there.
        fix: String,
    },
}

/// Which records a fit takes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Selection {
    /// Take records of the fake runner (`source: "fake"`, `--fake-gpu`) as if measured on the
    /// GPU being fitted; the profile and reports are then labelled fake.
    pub allow_fake: bool,
}

/// The catalog name of the GPU a record was taken on, or its raw name in backquotes when the
/// catalog does not know it.
fn record_gpu(r: &Record) -> String {
    hardware::gpu(&r.gpu_name).map_or_else(
        |_| format!("`{}` (not in colo's GPU catalog)", r.gpu_name),
        |g| format!("{} ({})", g.name, g.display_name),
    )
}

/// Records kept (each beside the index of its file) and counts of the others by why.
type Selected = (Vec<(usize, Record)>, BTreeMap<String, usize>);

/// Records taken on `gpu`, and the fake runner's when `select` allows them, with counts of the
/// others by why they were left out; an error naming what the store holds when none is left.
fn select_records(
    dir: &Path,
    gpu: &'static GpuSpec,
    select: Selection,
    records: Vec<(usize, Record)>,
) -> Result<Selected, DataError> {
    let mut kept = Vec::new();
    let mut other_gpus: BTreeMap<String, usize> = BTreeMap::new();
    let mut fake = 0usize;
    for (idx, r) in records {
        if r.source == Source::Fake {
            if select.allow_fake {
                kept.push((idx, r));
            } else {
                fake += 1;
            }
        } else if hardware::gpu(&r.gpu_name).is_ok_and(|g| g.name == gpu.name) {
            kept.push((idx, r));
        } else {
            *other_gpus.entry(record_gpu(&r)).or_insert(0) += 1;
        }
    }
    let fake_note = "from the fake runner (`colo calibrate run --fake-gpu`: invented numbers, not measurements)";
    let mut left_out = BTreeMap::new();
    if fake > 0 {
        left_out.insert(
            format!(
                "{fake_note}; pass --allow-fake to fit them (the profile is then labelled fake)"
            ),
            fake,
        );
    }
    for (name, n) in &other_gpus {
        left_out.insert(format!("taken on {name}, not {}", gpu.name), *n);
    }
    if !kept.is_empty() {
        return Ok((kept, left_out));
    }
    let mut found: Vec<String> = other_gpus
        .iter()
        .map(|(name, n)| format!("{n} record(s) of {name}"))
        .collect();
    if fake > 0 {
        found.push(format!("{fake} record(s) {fake_note}"));
    }
    let known: Vec<&str> = other_gpus
        .keys()
        .filter_map(|name| name.split(' ').next().filter(|n| !n.starts_with('`')))
        .collect();
    let mut fixes = Vec::new();
    match known.as_slice() {
        [] => {}
        [one] => fixes.push(format!("pass `--gpu {one}` to fit the {one} records")),
        many => fixes.push(format!(
            "pass `--gpu` with the GPU they were taken on ({})",
            many.join(", ")
        )),
    }
    if fake > 0 {
        fixes.push("pass `--allow-fake` to fit the fake runner's records (labelled fake)".into());
    }
    if fixes.is_empty() {
        fixes.push(
            "measure this GPU (`colo calibrate run PLAN --out DIR` on it), or fit a GPU colo knows"
                .into(),
        );
    }
    Err(DataError::WrongGpu {
        dir: dir.to_owned(),
        wanted: format!("{} ({})", gpu.name, gpu.display_name),
        found: found.join(", "),
        fix: fixes.join(", or "),
    })
}

/// What was measured of one point alone.
#[derive(Clone, Debug, PartialEq)]
pub struct ClassInfo {
    /// Alone runs (repeats, all hosts).
    pub alone_runs: usize,
    /// (max - min) / median of the alone rates.
    pub spread: f64,
    /// Mean absolute deviation from the median / median, of the alone rates.
    pub noise: f64,
    /// Median NVML utilisation alone, percent.
    pub util_pct: Option<f64>,
    /// Median PyTorch peak reserved memory alone, MiB.
    pub reserved_mib: f64,
    /// Median NVML board power alone, W.
    pub power_w: Option<f64>,
}

impl ClassInfo {
    /// Launch-bound: the GPU is busy less than 60% of the time alone.
    pub fn launch_bound(&self) -> bool {
        self.util_pct.is_some_and(|u| u < 60.0)
    }
}

/// One measured co-run set, aggregated over its repeats.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSet {
    /// `mode: a + b` for reports.
    pub label: String,
    /// How its jobs shared the GPU, as recorded: `Timeslice`, `Mps` or `MigEmulated`.
    pub mode: MeasuredMode,
    /// The observation (rates relative to each class's median alone rate).
    pub observation: Observation,
    /// Per member: mean absolute deviation of its repeats from their median, relative.
    pub member_noise: Vec<f64>,
    /// Per member: its samples/s in the set, the median over repeats as measured (not relative
    /// to alone).
    pub member_samples_per_s: Vec<f64>,
    /// Per member: the same relative deviation of its alone runs on the set's GPU (the
    /// denominator of its fraction of alone); 0 where none ran there.
    pub alone_noise: Vec<f64>,
    /// Per member: the median of its alone runs on the set's GPU, samples/s (`None` where none
    /// ran there).
    pub host_alone_rate: Vec<Option<f64>>,
    /// Repeats aggregated.
    pub repeats: usize,
    /// MIG profile of each member (mig-emulated), else None.
    pub mig_profiles: Vec<Option<String>>,
    /// Measured peak reserved memory of each member, MiB.
    pub reserved_mib: Vec<f64>,
    /// Board power of the GPU while the set ran, W: per repeat the median over its processes
    /// (each reports the same GPU's NVML power over its window), then the median over repeats.
    pub power_w: Option<f64>,
}

/// Whether a set's label (`mode [group]: ...`) names a zoo group (`zoo-*`, `zoo2-*`, ...): models
/// outside the calibrated set, which no fit may see and reports keep apart.
pub fn zoo_set(label: &str) -> bool {
    label
        .split_once(" [")
        .is_some_and(|(_, rest)| rest.starts_with("zoo"))
}

impl RunSet {
    /// Jobs in the set.
    pub fn n_jobs(&self) -> usize {
        self.observation.members.len()
    }
}

/// One launched set repeat as the memory check sees it: what each process ran, and whether any
/// ran out of memory.
#[derive(Clone, Debug, PartialEq)]
pub struct MemoryCase {
    /// The mode it ran under.
    pub mode: MeasuredMode,
    /// Each process's point.
    pub points: Vec<ModelKey>,
    /// Each process's (emulated) MIG profile, by rank.
    pub mig_profiles: Vec<Option<String>>,
    /// Whether an MPS process ran under a pinned memory limit (the check knows no such limit).
    pub mps_memory_limit: bool,
    /// Whether any process ran out of memory.
    pub any_oom: bool,
}

/// Everything the fit and its report need from a data folder.
#[derive(Clone, Debug)]
pub struct Dataset {
    /// The GPU.
    pub gpu: &'static GpuSpec,
    /// One class per point measured alone (rate = median over all alone runs).
    pub classes: Vec<ClassSpec>,
    /// What was measured of each class alone.
    pub info: Vec<ClassInfo>,
    /// Co-run and SM-budget sets.
    pub sets: Vec<RunSet>,
    /// Store files read.
    pub files: Vec<String>,
    /// Drivers seen.
    pub drivers: Vec<String>,
    /// Sets left out, with why.
    pub left_out: BTreeMap<String, usize>,
    /// Records left out (other GPUs, the fake runner's), with why.
    pub records_left_out: BTreeMap<String, usize>,
    /// Whether any record taken comes from the fake runner (`--allow-fake`).
    pub fake: bool,
    /// Processes recorded as out of memory.
    pub oom_records: usize,
    /// Every launched set repeat whose processes all ended ok or out of memory.
    pub memory_cases: Vec<MemoryCase>,
    /// Median CUDA context overhead, MiB (NVML's process memory minus PyTorch's peak reserved),
    /// of plain processes (exclusive, time-sliced) and of MPS clients (MPS, emulated MIG).
    pub context_mib: (Option<f64>, Option<f64>),
}

/// Median of `values` (sorted in place); NaN when empty.
fn median(values: &mut [f64]) -> f64 {
    crate::summary::median(values).unwrap_or(f64::NAN)
}

fn relative_noise(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    let m = median(&mut sorted);
    values.iter().map(|v| (v - m).abs()).sum::<f64>() / values.len().max(1) as f64 / m
}

/// The training point of a dataset record ([`load_dataset`] keeps no other).
fn key_of(r: &Record) -> ModelKey {
    match &r.workload {
        Workload::Point(key) => key.clone(),
        Workload::Command(text) => {
            unreachable!("load_dataset keeps training points only, not command `{text}`")
        }
    }
}

/// Reads every `*.jsonl` store in `dir` for `gpu`: only records taken on `gpu`, and the fake
/// runner's only when `select` allows them; an error names the GPUs found when none is left.
pub fn load_dataset(
    dir: &Path,
    gpu: &'static GpuSpec,
    select: Selection,
) -> Result<Dataset, DataError> {
    let stores = store::load_dir(dir)?;
    let mut records: Vec<(usize, Record)> = Vec::new();
    let mut paths = Vec::new();
    let mut commands = 0usize;
    for (idx, (path, loaded)) in stores.into_iter().enumerate() {
        paths.push(path.display().to_string());
        let (training, of_commands): (Vec<Record>, Vec<Record>) = loaded
            .records
            .into_iter()
            .partition(|r| r.workload.point().is_some());
        commands += of_commands.len();
        records.extend(training.into_iter().map(|r| (idx, r)));
    }
    if records.is_empty() && commands > 0 {
        return Err(DataError::Empty {
            dir: dir.to_owned(),
            message: format!(
                "{commands} records in {}, all of user commands (`colo calibrate profile`): a \
                 command has no training point (MODEL:BATCH:IMAGE), so no model can be fitted \
                 to it; fit the records of `colo calibrate run PLAN`",
                paths.join(", ")
            ),
        });
    }
    if records.is_empty() {
        return Err(DataError::Empty { dir: dir.to_owned(), message: "no calibration records (*.jsonl); run `colo calibrate run PLAN --out DIR` on a GPU first".into() });
    }
    let (kept, records_left_out) = select_records(dir, gpu, select, records)?;
    let mut used = vec![false; paths.len()];
    for (idx, _) in &kept {
        used[*idx] = true;
    }
    // A file with no record taken is not data of the fit.
    let files: Vec<String> = paths
        .into_iter()
        .zip(used)
        .filter_map(|(p, u)| u.then_some(p))
        .collect();
    let records: Vec<Record> = kept.into_iter().map(|(_, r)| r).collect();
    let fake = records.iter().any(|r| r.source == Source::Fake);
    let oom_records = records
        .iter()
        .filter(|r| r.measurement.status == Status::Oom)
        .count();
    let memory_cases = memory_cases(&records);
    let context_mib = (
        context_overhead(
            &records,
            &[MeasuredMode::Exclusive, MeasuredMode::Timeslice],
        ),
        context_overhead(&records, &[MeasuredMode::Mps, MeasuredMode::MigEmulated]),
    );
    let mut drivers: Vec<String> = records.iter().map(|r| r.driver.clone()).collect();
    drivers.sort();
    drivers.dedup();
    let alone: Vec<&Record> = records
        .iter()
        .filter(|r| {
            r.mode == MeasuredMode::Exclusive
                && r.n_procs == 1
                && r.measurement.status == Status::Ok
        })
        .collect();
    let (classes, info, host_alone) = classes_from_alone(&alone);
    if classes.is_empty() {
        return Err(DataError::Empty { dir: dir.to_owned(), message: "no point was measured alone (mode exclusive); the fit needs each model's exclusive rate".into() });
    }
    let index: BTreeMap<ModelKey, usize> = classes
        .iter()
        .enumerate()
        .map(|(i, c)| (c.key.clone(), i))
        .collect();
    let mut left_out = BTreeMap::new();
    let mut sets = Vec::new();
    let mut grouped: BTreeMap<(String, String, usize), Vec<&Record>> = BTreeMap::new();
    for r in records.iter().filter(|r| r.mode != MeasuredMode::Exclusive) {
        grouped
            .entry((r.plan.clone(), r.group.clone(), r.set_index))
            .or_default()
            .push(r);
    }
    for ((_, group, _), members) in grouped {
        match run_set(gpu, &group, &members, &classes, &index, &host_alone) {
            Ok(set) => sets.push(set),
            Err(why) => *left_out.entry(why).or_insert(0) += 1,
        }
    }
    Ok(Dataset {
        gpu,
        classes,
        info,
        sets,
        files,
        drivers,
        left_out,
        records_left_out,
        fake,
        oom_records,
        memory_cases,
        context_mib,
    })
}

/// Set repeats whose every process is recorded as ok or out of memory; crashes and timeouts
/// say nothing about memory and leave their set repeat out.
fn memory_cases(records: &[Record]) -> Vec<MemoryCase> {
    store::set_repeats(records)
        .into_iter()
        .filter(|procs| store::ran_to_the_end(procs))
        .map(|procs| MemoryCase {
            mode: procs[0].mode,
            points: procs.iter().map(|r| key_of(r)).collect(),
            mig_profiles: procs.iter().map(|r| r.mig_profile.clone()).collect(),
            mps_memory_limit: procs[0].mode == MeasuredMode::Mps
                && procs.iter().any(|r| r.mem_limit_mib.is_some()),
            any_oom: procs.iter().any(|r| r.measurement.status == Status::Oom),
        })
        .collect()
}

/// Median of NVML's process memory minus PyTorch's peak reserved memory over `modes`' ok
/// records where it is positive (NVML samples taken before the peak give negative values).
fn context_overhead(records: &[Record], modes: &[MeasuredMode]) -> Option<f64> {
    let mut diffs: Vec<f64> = records
        .iter()
        .filter(|r| r.measurement.status == Status::Ok && modes.contains(&r.mode))
        .filter_map(|r| Some(r.measurement.gpu.proc_mem_mib? - r.measurement.peak_reserved_mib?))
        .filter(|d| *d > 0.0)
        .collect();
    (!diffs.is_empty()).then(|| median(&mut diffs))
}

/// Per model measured alone at two or more batch sizes (same image size): peak reserved memory
/// `m0 + m1 * batch` by least squares, as (model:image, m0 GiB, m1 MiB per sample, points).
pub fn memory_models(ds: &Dataset) -> Vec<(String, f64, f64, usize)> {
    memory_points(ds)
        .into_iter()
        .filter(|(_, pts)| pts.len() >= 2)
        .map(|((model, image), pts)| {
            let (m0_mib, m1) = line_through(&pts);
            (format!("{model}:{image}"), m0_mib / 1024.0, m1, pts.len())
        })
        .collect()
}

/// The memory model judged on batch sizes it did not see: for every model measured alone at
/// three or more batch sizes, each size's peak reserved memory predicted from the line through
/// the others. Returns (predictions, MAPE).
pub fn memory_model_heldout(ds: &Dataset) -> (usize, f64) {
    let mut pairs = Vec::new();
    for pts in memory_points(ds).into_values().filter(|p| p.len() >= 3) {
        for (held, &(batch, measured)) in pts.iter().enumerate() {
            let rest: Vec<(f64, f64)> = (0..pts.len())
                .filter(|&k| k != held)
                .map(|k| pts[k])
                .collect();
            let (m0_mib, m1) = line_through(&rest);
            pairs.push((m0_mib + m1 * batch, measured));
        }
    }
    (pairs.len(), super::parametric::mape(&pairs))
}

/// (batch, peak reserved MiB alone) per (model, image size).
fn memory_points(ds: &Dataset) -> BTreeMap<(String, u32), Vec<(f64, f64)>> {
    let mut groups: BTreeMap<(String, u32), Vec<(f64, f64)>> = BTreeMap::new();
    let measured = ds.classes.iter().zip(&ds.info);
    for (class, info) in
        measured.filter(|(_, i)| i.reserved_mib.is_finite() && i.reserved_mib > 0.0)
    {
        groups
            .entry((class.key.model.clone(), class.key.image))
            .or_default()
            .push((f64::from(class.key.batch), info.reserved_mib));
    }
    groups
}

/// Least-squares line y = m0 + m1 x through `pts` (flat when every x is equal).
fn line_through(pts: &[(f64, f64)]) -> (f64, f64) {
    let n = pts.len() as f64;
    let mx = pts.iter().map(|p| p.0).sum::<f64>() / n;
    let my = pts.iter().map(|p| p.1).sum::<f64>() / n;
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let m1 = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    (my - m1 * mx, m1)
}

/// Per (GPU, point): the median of its alone runs on that GPU and their relative noise.
type HostAlone = BTreeMap<(String, ModelKey), (f64, f64)>;

fn classes_from_alone(alone: &[&Record]) -> (Vec<ClassSpec>, Vec<ClassInfo>, HostAlone) {
    let mut by_point: BTreeMap<ModelKey, Vec<&Record>> = BTreeMap::new();
    let mut by_host: BTreeMap<(String, ModelKey), Vec<f64>> = BTreeMap::new();
    for r in alone {
        let Some(rate) = r.measurement.samples_per_s else {
            continue;
        };
        by_point.entry(key_of(r)).or_default().push(r);
        by_host
            .entry((r.gpu_uuid.clone(), key_of(r)))
            .or_default()
            .push(rate);
    }
    let host_alone = by_host
        .into_iter()
        .map(|(k, mut v)| {
            let noise = relative_noise(&v);
            (k, (median(&mut v), noise))
        })
        .collect();
    let mut classes = Vec::new();
    let mut info = Vec::new();
    for (key, runs) in by_point {
        let rates: Vec<f64> = runs
            .iter()
            .filter_map(|r| r.measurement.samples_per_s)
            .collect();
        let mut sorted = rates.clone();
        let solo = median(&mut sorted);
        let mut utils: Vec<f64> = runs
            .iter()
            .filter_map(|r| r.measurement.gpu.util_pct)
            .collect();
        let util = (!utils.is_empty()).then(|| median(&mut utils));
        let mut reserved: Vec<f64> = runs
            .iter()
            .filter_map(|r| r.measurement.peak_reserved_mib)
            .collect();
        let reserved_mib = median(&mut reserved);
        let mut powers: Vec<f64> = runs
            .iter()
            .filter_map(|r| r.measurement.gpu.power_w)
            .collect();
        let power_w = (!powers.is_empty()).then(|| median(&mut powers));
        let spread = (sorted[sorted.len() - 1] - sorted[0]) / solo;
        classes.push(ClassSpec {
            key,
            solo_rate: solo,
            memory_gib: reserved_mib / 1024.0,
            time_demand_start: util.map_or(0.7, |u| (u / 100.0).clamp(0.05, 0.98)),
            space_demand_start: 0.5,
            fit_solo_rate: false,
        });
        info.push(ClassInfo {
            alone_runs: rates.len(),
            spread,
            noise: relative_noise(&rates),
            util_pct: util,
            reserved_mib,
            power_w,
        });
    }
    (classes, info, host_alone)
}

/// One set's observation, or why it is left out.
fn run_set(
    gpu: &'static GpuSpec,
    group: &str,
    records: &[&Record],
    classes: &[ClassSpec],
    index: &BTreeMap<ModelKey, usize>,
    host_alone: &HostAlone,
) -> Result<RunSet, String> {
    let first = records[0];
    let n = first.n_procs;
    let mode = match first.mode {
        MeasuredMode::Timeslice => ShareMode::Timeslice,
        MeasuredMode::Mps | MeasuredMode::MigEmulated => ShareMode::Mps,
        other => return Err(format!("mode {other} (not fitted)")),
    };
    let mut by_repeat: BTreeMap<u32, Vec<&Record>> = BTreeMap::new();
    for r in records {
        by_repeat.entry(r.repeat).or_default().push(r);
    }
    let complete: Vec<Vec<&Record>> = by_repeat
        .into_values()
        .filter(|rs| {
            rs.len() == n
                && rs.iter().all(|r| {
                    r.measurement.status == Status::Ok && r.measurement.samples_per_s.is_some()
                })
        })
        .map(|mut rs| {
            rs.sort_by_key(|r| r.rank);
            rs
        })
        .collect();
    if complete.is_empty() {
        return Err("no repeat with every process ok".into());
    }
    let mut members = Vec::with_capacity(n);
    let mut member_noise = Vec::with_capacity(n);
    let mut member_samples = Vec::with_capacity(n);
    let mut alone_noise = Vec::with_capacity(n);
    let mut host_alone_rate = Vec::with_capacity(n);
    let mut reserved = Vec::with_capacity(n);
    let mut profiles = Vec::with_capacity(n);
    for rank in 0..n {
        let r0 = complete[0][rank];
        let key = key_of(r0);
        let Some(&class) = index.get(&key) else {
            return Err(format!("{key} never measured alone"));
        };
        let fractions: Vec<f64> = complete
            .iter()
            .map(|rs| {
                let r = rs[rank];
                let alone = host_alone
                    .get(&(r.gpu_uuid.clone(), key.clone()))
                    .map_or(classes[class].solo_rate, |&(rate, _)| rate);
                r.measurement.samples_per_s.unwrap_or(f64::NAN) / alone
            })
            .collect();
        let mut sorted = fractions.clone();
        let fraction = median(&mut sorted);
        // An emulated slice ran as an MPS client at the percentage recorded (12% for a
        // 16-SM 1g slice of the H200, which the driver gives as 14 SMs): that, not the slice's
        // SMs, is what ran; the slice's share only where no percentage was recorded.
        let sm_budget = match (first.mode, &r0.mig_profile, r0.sm_percent) {
            (_, _, Some(p)) => Some(f64::from(p) / 100.0),
            (MeasuredMode::MigEmulated, Some(profile), None) => {
                gpu.mig_profile(profile).ok().map(|p| gpu.sm_fraction(p))
            }
            _ => None,
        };
        members.push(Member {
            class,
            sm_budget,
            measured: fraction * classes[class].solo_rate,
        });
        member_noise.push(relative_noise(&fractions));
        let mut rates: Vec<f64> = complete
            .iter()
            .filter_map(|rs| rs[rank].measurement.samples_per_s)
            .collect();
        member_samples.push(median(&mut rates));
        host_alone_rate.push(
            host_alone
                .get(&(r0.gpu_uuid.clone(), key.clone()))
                .map(|&(rate, _)| rate),
        );
        alone_noise.push(
            host_alone
                .get(&(r0.gpu_uuid.clone(), key.clone()))
                .map_or(0.0, |&(_, noise)| noise),
        );
        let mut mem: Vec<f64> = complete
            .iter()
            .filter_map(|rs| rs[rank].measurement.peak_reserved_mib)
            .collect();
        reserved.push(median(&mut mem));
        profiles.push(r0.mig_profile.clone());
    }
    let names: Vec<String> = members
        .iter()
        .map(|m| classes[m.class].key.to_string())
        .collect();
    let budget = match (&profiles[0], members[0].sm_budget) {
        (Some(p), _) => format!(" in {p}"),
        (None, Some(b)) => format!(" at {:.0}% SMs", b * 100.0),
        _ => String::new(),
    };
    let mut repeat_powers: Vec<f64> = complete
        .iter()
        .filter_map(|rs| {
            let mut p: Vec<f64> = rs
                .iter()
                .filter_map(|r| r.measurement.gpu.power_w)
                .collect();
            (!p.is_empty()).then(|| median(&mut p))
        })
        .collect();
    let power_w = (!repeat_powers.is_empty()).then(|| median(&mut repeat_powers));
    Ok(RunSet {
        power_w,
        label: format!("{} [{group}]: {}{budget}", first.mode, names.join(" + ")),
        mode: first.mode,
        observation: Observation {
            mode,
            partition: Partition::whole(gpu),
            members,
        },
        member_noise,
        member_samples_per_s: member_samples,
        alone_noise,
        host_alone_rate,
        repeats: complete.len(),
        mig_profiles: profiles,
        reserved_mib: reserved,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zoo_sets_are_told_by_their_group() {
        assert!(zoo_set("mps [zoo-pairs-mps]: a + b"));
        assert!(zoo_set("mps [zoo2-sets3-mps]: a + b + c"));
        assert!(!zoo_set("mps [corun-mps]: zoo_like + b"));
        assert!(!zoo_set("mps: no group"));
    }

    /// The committed H200 smoke records (alone, time-sliced, MPS and emulated-MIG sets), each
    /// line passed through `edit`, written to `dir/name`.
    fn smoke_store(dir: &Path, name: &str, edit: &dyn Fn(&mut Record)) {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/h200/smoke.jsonl");
        let text = std::fs::read_to_string(path).expect("committed data");
        let lines: Vec<String> = text
            .lines()
            .map(|line| {
                let mut rec: Record = serde_json::from_str(line).expect("record");
                edit(&mut rec);
                serde_json::to_string(&rec).expect("encode")
            })
            .collect();
        std::fs::write(dir.join(name), lines.join("\n")).expect("write store");
    }

    fn fake(rec: &mut Record) {
        rec.source = Source::Fake;
        rec.gpu_name = "Fake GPU".into();
        rec.gpu_uuid = "GPU-fake".into();
    }

    fn gpu(name: &str) -> &'static GpuSpec {
        hardware::gpu(name).expect("catalog GPU")
    }

    #[test]
    fn issue_37_noise_is_the_mean_absolute_deviation_from_the_median_over_the_median() {
        // Median 12; deviations 2, 0, 2: mean 4/3, over 12.
        assert!((relative_noise(&[10.0, 12.0, 14.0]) - 1.0 / 9.0).abs() < 1e-12);
        // Median 4 of (2, 4, 9): deviations 2, 0, 5, mean 7/3, over 4.
        assert!((relative_noise(&[9.0, 2.0, 4.0]) - 7.0 / 12.0).abs() < 1e-12);
        assert_eq!(relative_noise(&[5.0]), 0.0);
    }

    #[test]
    fn issue_37_the_smoke_store_counts_its_left_out_sets_and_its_memory_cases() {
        let dir = tempfile::tempdir().expect("temp dir");
        smoke_store(dir.path(), "smoke.jsonl", &|_| {});
        let ds = load_dataset(dir.path(), gpu("h200"), Selection::default()).expect("data");
        // resnet50:64:224 never ran alone in the smoke store: its MPS pair and its emulated 1g
        // slice are left out, one count each; the time-sliced pair of resnet18s is kept.
        let left: Vec<(&str, usize)> = ds.left_out.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        assert_eq!(left, [("resnet50:64:224 never measured alone", 2)]);
        assert_eq!(ds.sets.len(), 1);
        // Every set repeat ran to the end: 9 alone, 3 MPS, 3 emulated-MIG, 3 time-sliced. None
        // is an MPS set with a memory limit (the limits are the emulated slices').
        assert_eq!(ds.memory_cases.len(), 18);
        assert!(
            ds.memory_cases
                .iter()
                .all(|c| !c.mps_memory_limit && !c.any_oom)
        );
        // A limit on an MPS client makes its set an MPS set with a memory limit.
        smoke_store(dir.path(), "smoke.jsonl", &|r| {
            if r.mode == MeasuredMode::Mps && r.rank == 1 {
                r.mem_limit_mib = Some(8192);
            }
        });
        let ds = load_dataset(dir.path(), gpu("h200"), Selection::default()).expect("data");
        let limited: Vec<MeasuredMode> = ds
            .memory_cases
            .iter()
            .filter(|c| c.mps_memory_limit)
            .map(|c| c.mode)
            .collect();
        assert_eq!(limited, [MeasuredMode::Mps; 3]);
    }

    #[test]
    fn issue_37_context_overhead_is_the_median_of_process_memory_over_reserved() {
        // The smoke store's ok records with NVML process memory above PyTorch's peak reserved
        // (by hand from smoke.jsonl): 11 plain processes, 762 MiB five times and 764 six times;
        // 6 MPS and emulated-MIG clients, 246, 246, 474, 474, 476, 476.
        let dir = tempfile::tempdir().expect("temp dir");
        smoke_store(dir.path(), "smoke.jsonl", &|_| {});
        let ds = load_dataset(dir.path(), gpu("h200"), Selection::default()).expect("data");
        assert_eq!(ds.context_mib, (Some(764.0), Some(474.0)));
    }

    #[test]
    fn issue_37_memory_is_a_line_in_the_batch_and_judged_on_sizes_it_did_not_see() {
        // resnet18's three alone runs moved to batch 32, 64 and 128 at 1,000, 1,500 and
        // 2,600 MiB reserved. Least squares: x mean 224/3, Sxx 14336/3, Sxy 80,000, so
        // m1 = 240,000 / 14,336 MiB a sample and m0 = 1,700 - m1 x 224/3 = 450 MiB.
        let dir = tempfile::tempdir().expect("temp dir");
        smoke_store(dir.path(), "smoke.jsonl", &|r| {
            if r.mode == MeasuredMode::Exclusive && r.workload.to_string() == "resnet18:128:32" {
                let (batch, mib) = [(32, 1000.0), (64, 1500.0), (128, 2600.0)][r.repeat as usize];
                r.workload = Workload::Point(ModelKey::new("resnet18", batch, 32));
                r.measurement.peak_reserved_mib = Some(mib);
                // The same iterations in the same window, of `batch` samples each.
                r.measurement.samples_per_s = r
                    .measurement
                    .samples_per_s
                    .map(|v| v * f64::from(batch) / 128.0);
                // A set of the plan is one point: each size its own set, run once.
                r.set_index += 3 + r.repeat as usize;
                r.repeat = 0;
            }
            // lm_small's runs become resnet18 at batch 256 with no reserved memory recorded
            // as 0 MiB: not a measurement, left out of the line.
            if r.workload.to_string() == "lm_small:32:256" {
                r.workload = Workload::Point(ModelKey::new("resnet18", 256, 32));
                r.measurement.peak_reserved_mib = Some(0.0);
                r.measurement.samples_per_s = r.measurement.samples_per_s.map(|v| v * 256.0 / 32.0);
            }
        });
        let ds = load_dataset(dir.path(), gpu("h200"), Selection::default()).expect("data");
        assert!(
            ds.classes
                .iter()
                .any(|c| c.key.to_string() == "resnet18:256:32")
        );
        let models = memory_models(&ds);
        assert_eq!(models.len(), 1, "{models:?}");
        let (name, m0_gib, m1_mib, points) = &models[0];
        assert_eq!((name.as_str(), *points), ("resnet18:32", 3));
        assert!((m0_gib - 450.0 / 1024.0).abs() < 1e-9, "{m0_gib}");
        assert!((m1_mib - 240_000.0 / 14_336.0).abs() < 1e-9, "{m1_mib}");
        // Each size from the line through the other two: 950 for 1,000 (5%), 1,533.3 for
        // 1,500 (2.22%), 2,500 for 2,600 (3.85%).
        let (n, mape) = memory_model_heldout(&ds);
        let by_hand = (0.05 + 100.0 / 3.0 / 1500.0 + 100.0 / 2600.0) / 3.0;
        assert_eq!(n, 3);
        assert!((mape - by_hand).abs() < 1e-12, "{mape} {by_hand}");
    }

    #[test]
    fn issue_37_a_points_alone_power_is_the_median_of_its_alone_runs() {
        // resnet18:128:32's three alone runs in smoke.jsonl: 154.1282, 154.1204, 154.1658 W.
        let dir = tempfile::tempdir().expect("temp dir");
        smoke_store(dir.path(), "smoke.jsonl", &|_| {});
        let ds = load_dataset(dir.path(), gpu("h200"), Selection::default()).expect("data");
        let i = ds
            .classes
            .iter()
            .position(|c| c.key.to_string() == "resnet18:128:32")
            .expect("measured alone");
        let power = ds.info[i].power_w.expect("NVML power");
        assert!((power - 154.1282).abs() < 1e-4, "{power}");
    }

    #[test]
    fn issue_37_a_repeat_with_a_process_out_of_memory_is_left_out_of_its_set() {
        // The time-sliced pair's repeat 1 with its rank 0 out of memory: the set keeps repeats
        // 0 and 2, and rank 0's samples/s is the median of those two, (15150.64 + 15445.36) / 2.
        let dir = tempfile::tempdir().expect("temp dir");
        smoke_store(dir.path(), "smoke.jsonl", &|r| {
            if r.mode == MeasuredMode::Timeslice && r.repeat == 1 && r.rank == 0 {
                r.measurement.status = Status::Oom;
                r.measurement.samples_per_s = None;
            }
        });
        let ds = load_dataset(dir.path(), gpu("h200"), Selection::default()).expect("data");
        let ts = ds
            .sets
            .iter()
            .find(|s| s.mode == MeasuredMode::Timeslice)
            .expect("ts pair");
        assert_eq!(ts.repeats, 2);
        let rank0 = ts.member_samples_per_s[0];
        assert!(
            (rank0 - (15150.636 + 15445.355) / 2.0).abs() < 0.01,
            "{rank0}"
        );
        assert!(
            ts.observation
                .members
                .iter()
                .all(|m| m.measured.is_finite())
        );
    }

    #[test]
    fn issue_37_a_sets_budget_comes_from_its_recorded_percentage_and_its_label_says_where_it_ran() {
        // resnet50:64:224 (never alone in the smoke store) becomes resnet26:128:32 (alone there):
        // the same iterations and windows at twice the samples, so its sets are kept.
        let dir = tempfile::tempdir().expect("temp dir");
        smoke_store(dir.path(), "smoke.jsonl", &|r| {
            if r.workload.to_string() == "resnet50:64:224" {
                r.workload = Workload::Point(ModelKey::new("resnet26", 128, 32));
                r.measurement.samples_per_s = r.measurement.samples_per_s.map(|v| v * 2.0);
            }
        });
        let ds = load_dataset(dir.path(), gpu("h200"), Selection::default()).expect("data");
        let set = |mode| ds.sets.iter().find(|s| s.mode == mode).expect("kept");
        // The MPS pair ran both clients at 50%; the emulated 1g slice as a client at 12%.
        let mps = set(MeasuredMode::Mps);
        let budgets: Vec<Option<f64>> = mps
            .observation
            .members
            .iter()
            .map(|m| m.sm_budget)
            .collect();
        assert_eq!(budgets, [Some(0.5), Some(0.5)]);
        assert!(
            mps.label
                .ends_with("resnet18:128:32 + resnet26:128:32 at 50% SMs"),
            "{}",
            mps.label
        );
        let mig = set(MeasuredMode::MigEmulated);
        assert_eq!(mig.observation.members[0].sm_budget, Some(0.12));
        assert!(
            mig.label.ends_with("resnet26:128:32 in 1g.18gb"),
            "{}",
            mig.label
        );
        let ts = set(MeasuredMode::Timeslice);
        assert!(
            ts.label.ends_with("resnet18:128:32 + resnet18:128:32"),
            "{}",
            ts.label
        );
        assert_eq!(ts.observation.members[0].sm_budget, None);
    }

    #[test]
    fn issue_37_a_store_of_user_commands_only_says_they_cannot_be_fitted() {
        let dir = tempfile::tempdir().expect("temp dir");
        smoke_store(dir.path(), "cmds.jsonl", &|r| {
            r.workload = Workload::Command("python train.py".into());
        });
        let err = load_dataset(dir.path(), gpu("h200"), Selection::default())
            .expect_err("commands are no training points");
        assert!(
            err.to_string().contains("24 records in")
                && err.to_string().contains("all of user commands"),
            "{err}"
        );
    }

    #[test]
    fn issue_37_launch_bound_means_busy_under_60_percent_alone_and_unknown_is_not() {
        let info = |util_pct| ClassInfo {
            alone_runs: 3,
            spread: 0.0,
            noise: 0.0,
            util_pct,
            reserved_mib: 1024.0,
            power_w: None,
        };
        let bound: Vec<bool> = [Some(23.9), Some(59.9), Some(60.0), Some(100.0), None]
            .into_iter()
            .map(|u| info(u).launch_bound())
            .collect();
        assert_eq!(bound, [true, true, false, false, false]);
    }

    #[test]
    fn a_fit_of_another_gpu_refuses_and_names_the_gpu_found() {
        let dir = tempfile::tempdir().expect("temp dir");
        smoke_store(dir.path(), "smoke.jsonl", &|_| {});
        let err = load_dataset(dir.path(), gpu("a100-40gb"), Selection::default())
            .expect_err("H200 records are no A100 data");
        let text = err.to_string();
        assert!(matches!(err, DataError::WrongGpu { .. }), "{text}");
        for needle in [
            "no records taken on a100-40gb",
            "h200 (NVIDIA H200)",
            "`--gpu h200`",
        ] {
            assert!(text.contains(needle), "{needle}: {text}");
        }
        // No fake record among them: neither the count nor the fix speaks of the fake runner.
        assert!(!text.contains("fake"), "{text}");
        let ds = load_dataset(dir.path(), gpu("h200"), Selection::default()).expect("h200 data");
        assert!(!ds.fake && ds.records_left_out.is_empty());
    }

    #[test]
    fn fake_runner_records_are_taken_only_when_allowed_and_then_marked() {
        let dir = tempfile::tempdir().expect("temp dir");
        smoke_store(dir.path(), "fake.jsonl", &fake);
        let err = load_dataset(dir.path(), gpu("h200"), Selection::default())
            .expect_err("fake records alone are no data");
        // The smoke store's 24 records, all fake: counted, with the flag that takes them.
        for needle in [
            "24 record(s) from the fake runner",
            "pass `--allow-fake` to fit the fake runner's records",
        ] {
            assert!(err.to_string().contains(needle), "{needle}: {err}");
        }
        let allowed = Selection { allow_fake: true };
        let ds = load_dataset(dir.path(), gpu("h200"), allowed).expect("allowed");
        assert!(ds.fake);
        assert!(!ds.sets.is_empty());
        // Beside measured records, fake ones are left out (and said so), and their file is no
        // data of the fit.
        smoke_store(dir.path(), "measured.jsonl", &|_| {});
        let ds = load_dataset(dir.path(), gpu("h200"), Selection::default()).expect("measured");
        assert!(!ds.fake);
        assert_eq!(ds.files.len(), 1, "{:?}", ds.files);
        assert!(ds.files[0].ends_with("measured.jsonl"), "{:?}", ds.files);
        let (why, n) = ds.records_left_out.iter().next().expect("a note");
        assert!(why.contains("fake runner") && *n == 24, "{n} {why}");
    }
}
