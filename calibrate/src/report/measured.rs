//! The study's sets that were also run on the GPU: copies of one model time-sliced or under
//! MPS, found in the calibration store (`calibrate/data/<gpu>/`), with their measured gain
//! beside the predicted one.
use std::path::Path;

use colo_sim::perf::ShareMode;
use colo_sim::study::{Outcome, Reproduction};

use super::ReportError;
use crate::store::{self, Record, Status};
use crate::summary::{AloneBaseline, median};
use colo_sim::perf::MeasuredMode;
use colo_sim::workload::ModelKey;

/// Where the measured numbers come from.
pub(crate) struct Source<'a> {
    /// The calibration store folder.
    pub dir: &'a Path,
    /// Records left out: fake-runner records and other GPUs'.
    pub left_out: usize,
}

/// One study set as measured: every repeat of the same copies under the same mode.
pub(crate) struct MeasuredSet {
    /// `34/13`.
    pub id: String,
    /// `7 x resnet26:32:32`.
    pub jobs: String,
    /// Naive (time-sliced) or MPS.
    pub mode: ShareMode,
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
    /// Repeats with no alone run of the point on any GPU (no gain).
    pub no_alone: usize,
    /// Shortest and longest measured window of the repeats that ran, seconds.
    pub window_s: (f64, f64),
    /// Repeats where some process ran out of memory.
    pub oom_repeats: usize,
    /// Processes that ran out of memory, over all repeats.
    pub oom_processes: usize,
}

/// Reads the training records measured on `gpu_name` from every store in `dir` (fake-runner
/// records and other GPUs' are left out, and counted); unreadable lines are skipped (the
/// calibrator reports them).
pub(crate) fn load_records(
    dir: &Path,
    gpu_name: &str,
) -> Result<(Vec<Record>, usize), ReportError> {
    let stores = store::load_dir(dir).map_err(|source| ReportError::Measurements {
        dir: dir.to_path_buf(),
        source,
    })?;
    let all: Vec<Record> = stores
        .into_iter()
        .flat_map(|(_, loaded)| loaded.records)
        .filter(|r| r.workload.point().is_some())
        .collect();
    let total = all.len();
    let kept: Vec<Record> = all
        .into_iter()
        .filter(|r| r.source == store::Source::Measured && r.gpu_name == gpu_name)
        .collect();
    let left_out = total - kept.len();
    Ok((kept, left_out))
}

/// The study's sets of 2+ copies of one model (naive or MPS) that `records` hold.
pub(crate) fn measured_sets(rep: &Reproduction, records: &[Record]) -> Vec<MeasuredSet> {
    let alone = AloneBaseline::new(records);
    let repeats = store::set_repeats(records);
    let mut out = Vec::new();
    for report in &rep.sets {
        let set = &report.set;
        let Some(key) = set.single_key() else {
            continue;
        };
        // MIG sets ran on real slices the store does not hold.
        if set.mode == ShareMode::Mig {
            continue;
        }
        let mode = set.mode.measured_as();
        let n = set.jobs.len();
        let of_set: Vec<&Vec<&Record>> = repeats
            .iter()
            .filter(|procs| is_copies(procs, mode, key, n))
            .collect();
        if n < 2 || of_set.is_empty() {
            continue;
        }
        let predicted = match &report.outcome {
            Outcome::Predicted(res) => Some(res),
            _ => None,
        };
        let mut measured = MeasuredSet {
            id: set.id(),
            jobs: set.describe(),
            mode: set.mode,
            repeats: 0,
            samples_per_s: None,
            gain: None,
            predicted_gain: predicted.map(|res| res.gain_while_all_run),
            predicted_fits: predicted.map(|res| res.fits_memory),
            other_gpu_alone: 0,
            no_alone: 0,
            oom_repeats: 0,
            oom_processes: 0,
            window_s: (f64::INFINITY, 0.0),
        };
        let (mut rates, mut gains) = (Vec::new(), Vec::new());
        for procs in of_set {
            let ooms = procs
                .iter()
                .filter(|r| r.measurement.status == Status::Oom)
                .count();
            if ooms > 0 {
                measured.oom_repeats += 1;
                measured.oom_processes += ooms;
                continue;
            }
            // Every process must have its rate, or the set's sum would be short.
            let Some(set_rates) = procs
                .iter()
                .map(|r| r.measurement.samples_per_s)
                .collect::<Option<Vec<f64>>>()
            else {
                continue;
            };
            for w in procs.iter().filter_map(|r| r.measurement.window_s) {
                let (lo, hi) = measured.window_s;
                measured.window_s = (lo.min(w), hi.max(w));
            }
            measured.repeats += 1;
            rates.extend(&set_rates);
            let Some(solo) = alone.get(procs[0]) else {
                measured.no_alone += 1;
                continue;
            };
            measured.other_gpu_alone += usize::from(alone.on_its_gpu(procs[0]).is_none());
            gains.push(set_rates.iter().sum::<f64>() / solo);
        }
        measured.samples_per_s = median(&mut rates);
        measured.gain = median(&mut gains);
        out.push(measured);
    }
    out
}

/// Whether a set repeat is `n` copies of `point` under `mode`, with no SM budget or memory
/// limit, every process ended ok or out of memory.
fn is_copies(procs: &[&Record], mode: MeasuredMode, point: &ModelKey, n: usize) -> bool {
    store::ran_to_the_end(procs)
        && procs.len() == n
        && procs.iter().all(|r| {
            r.mode == mode
                && r.workload.point() == Some(point)
                && r.sm_percent.is_none()
                && r.mem_limit_mib.is_none()
        })
}
