//! The study's sets that were also run on the GPU: copies of one model time-sliced or under
//! MPS, found in the calibration store (`calibrate/data/<gpu>/`), with their measured gain
//! beside the predicted one.
use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context;
use colo_calibrate::store::{self, Record, Status};
use colo_sim::study::{Outcome, Reproduction, SetMode};

/// One study set as measured: every repeat of the same copies under the same mode.
pub(crate) struct MeasuredSet {
    /// `34/13`.
    pub id: String,
    /// `7 x resnet26:32:32`.
    pub jobs: String,
    /// Naive (time-sliced) or MPS.
    pub mode: SetMode,
    /// Repeats where every process ran.
    pub repeats: usize,
    /// Median samples/s of one job over the repeats that ran (measured).
    pub samples_per_s: Option<f64>,
    /// Median over those repeats of the summed fractions of the same GPU's alone rate.
    pub gain: Option<f64>,
    /// The model's gain while all run, when it predicted the set.
    pub predicted_gain: Option<f64>,
    /// Whether the model says the set fits in memory, when it predicted the set.
    pub predicted_fits: Option<bool>,
    /// Repeats compared with alone runs on another GPU (none on theirs).
    pub other_gpu_alone: usize,
    /// Repeats where some process ran out of memory, and how many processes did in all.
    pub oom_repeats: usize,
    /// Processes that ran out of memory, over all repeats.
    pub oom_processes: usize,
}

/// Reads every store in `dir`; unreadable lines are skipped (the calibrator reports them).
pub(crate) fn load_records(dir: &Path) -> anyhow::Result<Vec<Record>> {
    let stores = store::load_dir(dir)
        .with_context(|| format!("reading the measurements in {}", dir.display()))?;
    Ok(stores
        .into_iter()
        .flat_map(|(_, loaded)| loaded.records)
        .filter(|r| r.command.is_none())
        .collect())
}

/// The study's sets of 2+ copies of one model (naive or MPS) that `records` hold.
pub(crate) fn measured_sets(rep: &Reproduction, records: &[Record]) -> Vec<MeasuredSet> {
    let alone = alone_rates(records);
    let mut out = Vec::new();
    for report in &rep.sets {
        let set = &report.set;
        let Some(key) = set.single_key() else {
            continue;
        };
        let mode = match set.mode {
            SetMode::Naive => "timeslice",
            SetMode::Mps => "mps",
            SetMode::Mig => continue,
        };
        let n = set.jobs.len();
        let point = key.to_string();
        let repeats = repeats_of(records, mode, &point, n);
        if n < 2 || repeats.is_empty() {
            continue;
        }
        let mut measured = MeasuredSet {
            id: set.id(),
            jobs: set.describe(),
            mode: set.mode,
            repeats: 0,
            samples_per_s: None,
            gain: None,
            predicted_gain: match &report.outcome {
                Outcome::Predicted(res) => Some(res.gain_while_all_run),
                _ => None,
            },
            predicted_fits: match &report.outcome {
                Outcome::Predicted(res) => Some(res.fits_memory),
                _ => None,
            },
            other_gpu_alone: 0,
            oom_repeats: 0,
            oom_processes: 0,
        };
        let (mut rates, mut gains) = (Vec::new(), Vec::new());
        for procs in repeats {
            let ooms = procs.iter().filter(|r| r.status == Status::Oom).count();
            if ooms > 0 {
                measured.oom_repeats += 1;
                measured.oom_processes += ooms;
                continue;
            }
            let same_gpu = alone.get(&(procs[0].gpu_uuid.as_str(), point.as_str()));
            let Some(solo) = same_gpu.or_else(|| alone.get(&("", point.as_str()))) else {
                continue;
            };
            measured.other_gpu_alone += usize::from(same_gpu.is_none());
            let set_rates: Vec<f64> = procs.iter().filter_map(|r| r.samples_per_s).collect();
            gains.push(set_rates.iter().sum::<f64>() / solo);
            rates.extend(set_rates);
            measured.repeats += 1;
        }
        measured.samples_per_s = median(&mut rates);
        measured.gain = median(&mut gains);
        out.push(measured);
    }
    out
}

/// Median alone (exclusive) samples/s per (GPU UUID, point), and per ("", point) over every
/// GPU: launch-bound rates depend on the host, so a set is compared with the alone runs of its
/// own GPU when there are any (GPU-bound points agree across GPUs within 0.2 %).
fn alone_rates(records: &[Record]) -> BTreeMap<(&str, &str), f64> {
    let mut runs: BTreeMap<(&str, &str), Vec<f64>> = BTreeMap::new();
    for r in records {
        if let (true, Some(rate)) = (
            r.mode == "exclusive" && r.status == Status::Ok,
            r.samples_per_s,
        ) {
            for gpu in [r.gpu_uuid.as_str(), ""] {
                runs.entry((gpu, r.point.as_str())).or_default().push(rate);
            }
        }
    }
    runs.into_iter()
        .filter_map(|(key, mut rates)| Some((key, median(&mut rates)?)))
        .collect()
}

/// Every set repeat of `n` copies of `point` under `mode` with no SM budget or memory limit,
/// whose processes all ended ok or out of memory.
fn repeats_of<'a>(
    records: &'a [Record],
    mode: &str,
    point: &str,
    n: usize,
) -> Vec<Vec<&'a Record>> {
    let mut grouped: BTreeMap<(&str, &str, usize, u32), Vec<&Record>> = BTreeMap::new();
    for r in records.iter().filter(|r| {
        r.mode == mode && r.n_procs == n && r.sm_percent.is_none() && r.mem_limit_mib.is_none()
    }) {
        let key = (r.plan.as_str(), r.group.as_str(), r.set_index, r.repeat);
        grouped.entry(key).or_default().push(r);
    }
    grouped
        .into_values()
        .filter(|procs| {
            procs.len() == n
                && procs.iter().all(|r| r.point == point)
                && procs
                    .iter()
                    .all(|r| matches!(r.status, Status::Ok | Status::Oom))
        })
        .collect()
}

fn median(values: &mut [f64]) -> Option<f64> {
    colo_calibrate::summary::median(values)
}
