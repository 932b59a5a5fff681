//! Summaries of a store: one row per (point, mode, budget, co-runners) with the median and
//! spread of the measured repeats and the fraction of the same point measured alone.
use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::store::{Record, Status, Workload};
use colo_sim::perf::MeasuredMode;

/// One row of the summary.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// `MODEL:BATCH:IMAGE`.
    pub point: String,
    /// Mode label.
    pub mode: String,
    /// SM budget / MIG profile, or `-`.
    pub budget: String,
    /// Co-runner points, sorted, joined by `+`, or `-`.
    pub co_runners: String,
    /// Ok measurements.
    pub n_ok: usize,
    /// Failed process-points (oom, error, crash, timeout).
    pub n_failed: usize,
    /// Median samples/s of the ok measurements.
    pub median: Option<f64>,
    /// (max - min) / median of the ok measurements.
    pub spread: Option<f64>,
    /// Median over records of samples/s divided by the same point's median alone.
    pub frac_alone: Option<f64>,
    /// Median PyTorch peak reserved memory, MiB.
    pub reserved_mib: Option<f64>,
    /// `measured` or `fake`.
    pub source: String,
}

/// Median of `values` (sorted in place), `None` when empty.
pub fn median(values: &mut [f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    Some(if values.len() % 2 == 1 {
        values[mid]
    } else {
        (values[mid - 1] + values[mid]) / 2.0
    })
}

fn is_alone(rec: &Record) -> bool {
    rec.mode == MeasuredMode::Exclusive && rec.co_runners.is_empty()
}

fn budget_label(rec: &Record) -> String {
    match (&rec.mig_profile, rec.sm_percent) {
        (Some(profile), _) => profile.clone(),
        (None, Some(pct)) => format!("{pct}%"),
        (None, None) => "-".into(),
    }
}

/// Co-runners sorted by their text, repeats counted (`resnet18:128:32x3+resnet50:64:224`), or
/// `-`.
fn co_runner_label(co_runners: &[Workload]) -> String {
    let mut sorted: Vec<String> = co_runners.iter().map(Workload::to_string).collect();
    sorted.sort();
    let mut parts: Vec<String> = Vec::new();
    let mut idx = 0;
    while idx < sorted.len() {
        let count = sorted[idx..]
            .iter()
            .take_while(|p| **p == sorted[idx])
            .count();
        parts.push(if count == 1 {
            sorted[idx].clone()
        } else {
            format!("{}x{count}", sorted[idx])
        });
        idx += count;
    }
    if parts.is_empty() {
        "-".into()
    } else {
        parts.join("+")
    }
}

/// Sort and group key of a row: point, mode order, processes, budget, co-runners, mode, source.
type RowKey = (String, usize, usize, String, String, String, String);

fn mode_rank(mode: MeasuredMode) -> usize {
    [
        MeasuredMode::Exclusive,
        MeasuredMode::Mps,
        MeasuredMode::MigEmulated,
        MeasuredMode::Mig,
        MeasuredMode::Timeslice,
    ]
    .iter()
    .position(|m| *m == mode)
    .unwrap_or(9)
}

fn ok_rate(rec: &Record) -> Option<f64> {
    rec.measurement
        .samples_per_s
        .filter(|_| rec.measurement.status == Status::Ok)
}

/// Median samples/s of each point alone (one process, mode exclusive, ok): per GPU UUID, and
/// over all GPUs as a fallback (launch-bound rates depend on the host; GPU-bound ones agree
/// across GPUs within 0.2 % on the H200s measured).
pub struct AloneBaseline {
    per_gpu: BTreeMap<(String, Workload), f64>,
    any_gpu: BTreeMap<Workload, f64>,
}

impl AloneBaseline {
    /// Baselines from the alone records among `records`.
    pub fn new(records: &[Record]) -> AloneBaseline {
        let mut per_gpu: BTreeMap<(String, Workload), Vec<f64>> = BTreeMap::new();
        let mut any_gpu: BTreeMap<Workload, Vec<f64>> = BTreeMap::new();
        for rec in records.iter().filter(|r| is_alone(r)) {
            if let Some(rate) = ok_rate(rec).filter(|r| r.is_finite() && *r > 0.0) {
                per_gpu
                    .entry((rec.gpu_uuid.clone(), rec.workload.clone()))
                    .or_default()
                    .push(rate);
                any_gpu.entry(rec.workload.clone()).or_default().push(rate);
            }
        }
        AloneBaseline {
            per_gpu: per_gpu
                .into_iter()
                .filter_map(|(k, mut v)| median(&mut v).map(|m| (k, m)))
                .collect(),
            any_gpu: any_gpu
                .into_iter()
                .filter_map(|(k, mut v)| median(&mut v).map(|m| (k, m)))
                .collect(),
        }
    }

    /// The record's point alone on its GPU, else on any GPU.
    pub fn get(&self, rec: &Record) -> Option<&f64> {
        self.on_its_gpu(rec)
            .or_else(|| self.any_gpu.get(&rec.workload))
    }

    /// The record's point alone on its own GPU only.
    pub fn on_its_gpu(&self, rec: &Record) -> Option<&f64> {
        self.per_gpu
            .get(&(rec.gpu_uuid.clone(), rec.workload.clone()))
    }
}

/// Builds the rows, sorted by point, mode, number of co-runners, budget and co-runners.
pub fn summarize(records: &[Record]) -> Vec<Row> {
    let baseline = AloneBaseline::new(records);
    let mut groups: BTreeMap<RowKey, Vec<&Record>> = BTreeMap::new();
    for rec in records {
        let co = co_runner_label(&rec.co_runners);
        let key = (
            rec.workload.to_string(),
            mode_rank(rec.mode),
            rec.n_procs,
            budget_label(rec),
            co,
            rec.mode.label().to_owned(),
            rec.source.label().to_owned(),
        );
        groups.entry(key).or_default().push(rec);
    }
    let mut rows = Vec::with_capacity(groups.len());
    for ((point, _, _, budget, co_runners, mode, source), recs) in groups {
        let mut rates: Vec<f64> = recs.iter().filter_map(|r| ok_rate(r)).collect();
        let mut fracs: Vec<f64> = recs
            .iter()
            .filter_map(|r| {
                let base = baseline.get(r)?;
                ok_rate(r).map(|rate| rate / base)
            })
            .collect();
        let mut reserved: Vec<f64> = recs
            .iter()
            .filter(|r| r.measurement.status == Status::Ok)
            .filter_map(|r| r.measurement.peak_reserved_mib)
            .collect();
        let n_ok = recs
            .iter()
            .filter(|r| r.measurement.status == Status::Ok)
            .count();
        let (lo, hi) = rates
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
                (lo.min(v), hi.max(v))
            });
        let med = median(&mut rates);
        rows.push(Row {
            point,
            mode,
            budget,
            co_runners,
            n_ok,
            n_failed: recs.len() - n_ok,
            median: med,
            spread: med.filter(|m| *m > 0.0).map(|m| (hi - lo) / m),
            frac_alone: median(&mut fracs),
            reserved_mib: median(&mut reserved),
            source,
        });
    }
    rows
}

fn opt(value: Option<f64>, digits: usize) -> String {
    value.map_or_else(|| "-".to_string(), |v| format!("{v:.digits$}"))
}

/// Renders the rows as a text table with a header saying where the numbers come from.
pub fn render_table(rows: &[Row]) -> String {
    let mut out = String::from(
        "samples/s: median of the measured repeats; spread: (max-min)/median; frac: measured / measured alone\n",
    );
    let head = [
        "point",
        "mode",
        "budget",
        "co-runners",
        "ok",
        "fail",
        "samples/s",
        "spread%",
        "frac",
        "reserved MiB",
        "source",
    ];
    let cells: Vec<[String; 11]> = rows
        .iter()
        .map(|r| {
            [
                r.point.clone(),
                r.mode.clone(),
                r.budget.clone(),
                r.co_runners.clone(),
                r.n_ok.to_string(),
                r.n_failed.to_string(),
                opt(r.median, 1),
                opt(r.spread.map(|s| s * 100.0), 1),
                opt(r.frac_alone, 3),
                opt(r.reserved_mib, 0),
                r.source.clone(),
            ]
        })
        .collect();
    let mut width: Vec<usize> = head.iter().map(|h| h.len()).collect();
    for row in &cells {
        for (w, cell) in width.iter_mut().zip(row) {
            *w = (*w).max(cell.len());
        }
    }
    let mut line = |cols: Vec<&str>| {
        let text: Vec<String> = cols
            .iter()
            .zip(&width)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        let _ = writeln!(out, "{}", text.join("  ").trim_end());
    };
    line(head.to_vec());
    for row in &cells {
        line(row.iter().map(String::as_str).collect());
    }
    out
}

/// Renders the rows as CSV (header first).
pub fn render_csv(rows: &[Row]) -> String {
    let mut out = String::from(
        "point,mode,budget,co_runners,n_ok,n_failed,samples_per_s_median,spread,frac_alone,reserved_mib,source\n",
    );
    let num = |v: Option<f64>| v.map_or_else(String::new, |v| format!("{v:.6}"));
    for r in rows {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{}",
            r.point,
            r.mode,
            r.budget,
            r.co_runners,
            r.n_ok,
            r.n_failed,
            num(r.median),
            num(r.spread),
            num(r.frac_alone),
            num(r.reserved_mib),
            r.source
        );
    }
    out
}

/// What `colo calibrate profile` prints: one line per repeat and rank of the user commands'
/// records, with samples/s from their progress lines and their lifetime.
pub fn render_commands(records: &[Record]) -> String {
    let commands: Vec<&Record> = records
        .iter()
        .filter(|r| matches!(r.workload, Workload::Command(_)))
        .collect();
    // `fake` when any record is (`--fake-gpu`), so that no invented number reads as measured.
    let source = commands
        .iter()
        .map(|r| r.source)
        .find(|s| *s != crate::store::Source::Measured)
        .unwrap_or(crate::store::Source::Measured);
    let mut out = format!(
        "{}: samples/s from samples=<N> progress lines (\"-\" where none), lifetime in seconds\n",
        source.label()
    );
    for rec in commands {
        let rate = rec
            .measurement
            .samples_per_s
            .map_or_else(|| "-".to_string(), |v| format!("{v:.1}"));
        let lifetime = rec
            .measurement
            .lifetime_s
            .map_or_else(|| "-".to_string(), |v| format!("{v:.2}"));
        let _ = writeln!(
            out,
            "repeat {} rank {} {:?} samples/s {rate} lifetime {lifetime} s: {}",
            rec.repeat, rec.rank, rec.measurement.status, rec.workload
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn co_runners_are_sorted_and_counted() {
        let co: Vec<Workload> = ["b:1:1", "a:64:1", "b:1:1", "a:128:1"]
            .iter()
            .map(|s| Workload::Point(s.parse().expect("a point")))
            .collect();
        // By text, as the labels always sorted: `a:128:1` before `a:64:1`.
        assert_eq!(co_runner_label(&co), "a:128:1+a:64:1+b:1:1x2");
        assert_eq!(co_runner_label(&[]), "-");
    }

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&mut []), None);
    }
}
