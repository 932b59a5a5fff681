//! What a run produced: per-job outcomes, the cluster timeline, and the summary; and the
//! result files (`jobs.csv`, `placements.csv`, `timeline.csv`, `summary.json`) rendered to
//! bytes, or streamed into a result folder ([`write_csv_file`], [`write_result_dir`], and, as a
//! run hands its results over, [`JobStream`] and [`TimelineFile`]; a folder written whole
//! through [`crate::fsutil::WholeDir`]). Each file's rows are one serde type ([`rows`] for the
//! CSV files, [`Summary`] for `summary.json`), which `colo-plots` reads back.
pub mod energy;
pub mod fast;
mod files;
#[cfg(feature = "parquet")]
pub mod parquet;
mod row_codec;
mod row_spill;
pub mod rows;
mod values;

use serde::{Deserialize, Serialize};

use crate::hardware::MigSlice;
use crate::perf::ShareMode;
use crate::workload::Job;
use crate::workload::trace::SkipCounts;
use energy::{EnergySummary, RunEnergy};
pub use files::{
    JobStream, JobsFile, NO_PARQUET, TimelineFile, job_rows, jobs_csv, placement_rows,
    placements_csv, timeline_csv, timeline_rows, write_beside, write_csv_file, write_result_dir,
};

/// Cluster state after a change.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimelineRow {
    /// Seconds since the start.
    pub time_s: f64,
    /// Jobs waiting.
    pub queued: u32,
    /// Jobs running.
    pub running: u32,
    /// GPUs with at least one job.
    pub busy_gpus: u32,
    /// GPU memory held by running jobs, GiB.
    pub memory_used_gib: f64,
}

/// How one job ended.
#[derive(Clone, Debug, PartialEq)]
pub struct JobOutcome {
    /// Whether it ran to the end (false: skipped as unplaceable).
    pub completed: bool,
    /// Start time, s (NaN if it never started).
    pub start_s: f64,
    /// End time, s (NaN if it never ended).
    pub end_s: f64,
    /// Group it ran in.
    pub group: Option<u32>,
    /// GPUs it ran on (global indices).
    pub gpus: Vec<u32>,
    /// MIG slice, if it ran in one.
    pub slice: Option<MigSlice>,
    /// Sharing mode of its group.
    pub mode: Option<ShareMode>,
    /// Samples/s alone on the GPU type it ran on (times its GPUs).
    pub exclusive_rate: f64,
    /// Its share of its GPUs' energy while it ran, J ([`energy`] gives the rule); `None` when
    /// it never ran or its power is unknown.
    pub energy_j: Option<f64>,
    /// Runs cut short by a preemption, in order (empty for a job never preempted); `group`,
    /// `gpus`, `slice` and `mode` are those of the run it finished in.
    pub preempted: Vec<RunSpan>,
    /// Start of the run it finished in, s (`start_s` for a job never preempted).
    pub resumed_s: f64,
}

/// One run of a preempted job: from its (re)start to the moment its checkpoint was written and
/// it gave its GPUs back.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSpan {
    /// When it (re)started, s.
    pub start_s: f64,
    /// When it gave its GPUs back, s.
    pub end_s: f64,
    /// GPUs it held (global indices).
    pub gpus: Vec<u32>,
    /// MIG slice, if it ran in one.
    pub slice: Option<MigSlice>,
}

/// One run of a job, borrowed from its [`JobOutcome`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Run<'a> {
    /// When it (re)started, s.
    pub start_s: f64,
    /// When it ended or gave its GPUs back, s.
    pub end_s: f64,
    /// GPUs it held.
    pub gpus: &'a [u32],
    /// MIG slice, if it ran in one.
    pub slice: Option<MigSlice>,
}

impl JobOutcome {
    /// Times it was preempted.
    pub fn preemptions(&self) -> u32 {
        self.preempted.len() as u32
    }

    /// Every run of a completed job, in order: the preempted ones, then the one it finished in
    /// (`start_s` to `end_s` for a job never preempted). Empty for a job that never ran.
    pub fn runs(&self) -> impl Iterator<Item = Run<'_>> {
        let last = self.completed.then_some(Run {
            start_s: self.resumed_s,
            end_s: self.end_s,
            gpus: &self.gpus,
            slice: self.slice,
        });
        self.preempted
            .iter()
            .map(|r| Run {
                start_s: r.start_s,
                end_s: r.end_s,
                gpus: &r.gpus,
                slice: r.slice,
            })
            .chain(last)
    }

    /// Seconds it held GPUs: `end_s - start_s` for a job never preempted; for a preempted one
    /// the sum over its runs (checkpoints and restores included, waits between runs not).
    pub fn held_s(&self) -> f64 {
        if self.preempted.is_empty() {
            return self.end_s - self.start_s;
        }
        self.runs().map(|r| r.end_s - r.start_s).sum()
    }
}

/// Everything one run produced.
#[derive(Clone, Debug, PartialEq)]
pub struct RunRecord {
    /// One outcome per job, in input order.
    pub outcomes: Vec<JobOutcome>,
    /// Cluster state over time.
    pub timeline: Vec<TimelineRow>,
    /// Seconds each GPU had at least one job, summed over GPUs: the union of the job runs'
    /// intervals on each GPU (see [`busy_gpu_seconds`], which gives the same bits from the
    /// outcomes).
    pub busy_gpu_s: f64,
    /// Events handled (arrivals, live completions, MIG re-cuts).
    pub events: u64,
    /// Dynamic-MIG re-cuts done.
    pub mig_reconfigurations: u64,
    /// GPUs in the cluster.
    pub total_gpus: u32,
    /// GPU memory in the cluster, GiB.
    pub memory_total_gib: f64,
    /// Each GPU's energy; `None` when the engine was given no profiles to read power from.
    pub energy: Option<RunEnergy>,
}

/// Mean and percentiles of a quantity (linear interpolation between order statistics).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    /// Mean.
    pub mean: f64,
    /// Median.
    pub p50: f64,
    /// 95th percentile.
    pub p95: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Maximum.
    pub max: f64,
}

impl Stats {
    /// Statistics of `values` (all zero when empty).
    pub fn of(values: &mut [f64]) -> Self {
        // Values equal under `total_cmp` are the same bits, so any sort in that order gives the
        // same sequence (and the same mean, summed in that order).
        sort_total(values);
        Self::of_sorted(values.len(), values.iter().copied())
    }

    /// Statistics of the `n` values `sorted` gives, in `f64::total_cmp` order (all zero when
    /// none): the mean is their sum in that order over `n`, each percentile interpolates
    /// linearly between the two order statistics around it.
    pub fn of_sorted(n: usize, sorted: impl Iterator<Item = f64>) -> Self {
        if n == 0 {
            return Stats {
                mean: 0.0,
                p50: 0.0,
                p95: 0.0,
                p99: 0.0,
                max: 0.0,
            };
        }
        let quantiles = [0.50, 0.95, 0.99].map(|q| {
            let pos = q * (n - 1) as f64;
            (pos, pos.floor() as usize, pos.ceil() as usize)
        });
        // Each quantile's two order statistics, caught as the values pass.
        let mut around = [(0.0, 0.0); 3];
        // `Iterator::sum` of `f64` starts from -0.0.
        let mut sum = -0.0;
        let mut max = 0.0;
        for (i, v) in sorted.enumerate() {
            sum += v;
            max = v;
            for (&(_, lo, hi), at) in quantiles.iter().zip(&mut around) {
                if i == lo {
                    at.0 = v;
                }
                if i == hi {
                    at.1 = v;
                }
            }
        }
        let [p50, p95, p99] = std::array::from_fn(|q| {
            let ((pos, lo, _), (low, high)) = (quantiles[q], around[q]);
            low + (high - low) * (pos - lo as f64)
        });
        Stats {
            mean: sum / n as f64,
            p50,
            p95,
            p99,
            max,
        }
    }
}

/// `f64::total_cmp`'s order as unsigned keys: negative values' bits all flipped, positive
/// ones' sign bit set.
fn total_key(v: f64) -> u64 {
    let bits = v.to_bits();
    bits ^ ((((bits as i64) >> 63) as u64) | (1 << 63))
}

/// The value of a [`total_key`].
fn total_unkey(k: u64) -> f64 {
    f64::from_bits(if k >> 63 == 1 { k ^ (1 << 63) } else { !k })
}

/// Below this many values a comparison sort is as fast as the radix sort's passes.
const RADIX_MIN: usize = 4096;

/// Sorts `values` in `f64::total_cmp` order, as `sort_unstable_by(f64::total_cmp)` does (values
/// equal under it are the same bits, so the result is the same): a large one by LSD radix sort,
/// a byte at a time, on keys whose unsigned order is that order (a million values in about a
/// quarter of pdqsort's time; a summary sorts three lists of one value per job). Passes whose
/// byte is the same in every key are skipped. Takes a scratch list the size of `values`.
fn sort_total(values: &mut [f64]) {
    if values.len() < RADIX_MIN {
        values.sort_unstable_by(f64::total_cmp);
        return;
    }
    // Keys are kept as floats' bits in place (moves keep a float's bits, NaN payloads too).
    let mut counts = vec![[0usize; 256]; 8];
    for v in values.iter_mut() {
        let k = total_key(*v);
        for (byte, count) in counts.iter_mut().enumerate() {
            count[(k >> (8 * byte)) as u8 as usize] += 1;
        }
        *v = f64::from_bits(k);
    }
    let n = values.len();
    let mut scratch = vec![0.0f64; n];
    let mut in_scratch = false;
    for (byte, count) in counts.iter().enumerate() {
        if count.contains(&n) {
            continue;
        }
        let mut next = [0usize; 256];
        let mut sum = 0;
        for (at, &c) in next.iter_mut().zip(count) {
            *at = sum;
            sum += c;
        }
        let (from, to) = if in_scratch {
            (&scratch[..], &mut values[..])
        } else {
            (&values[..], &mut scratch[..])
        };
        for &v in from {
            let digit = (v.to_bits() >> (8 * byte)) as u8 as usize;
            to[next[digit]] = v;
            next[digit] += 1;
        }
        in_scratch = !in_scratch;
    }
    if in_scratch {
        values.copy_from_slice(&scratch);
    }
    for v in values.iter_mut() {
        *v = total_unkey(v.to_bits());
    }
}

/// One GPU group as the summary describes it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GroupSummary {
    /// GPU catalog name.
    pub gpu: String,
    /// Number of GPUs.
    pub count: u32,
    /// Sharing mode.
    pub mode: String,
    /// MIG layout, when in MIG mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mig_layout: Option<String>,
}

/// Labels of a run, copied into its summary.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunLabels {
    /// Scenario name.
    pub scenario: String,
    /// Sweep variant name (`base` without a sweep).
    pub variant: String,
    /// Seed of the run's generator.
    pub seed: u64,
    /// Performance model name.
    pub perf_model: String,
    /// Profile files used.
    pub profiles: Vec<String>,
    /// Origin of the profile numbers (provisional, fitted, ...).
    pub profile_origin: String,
    /// The cluster.
    pub cluster: Vec<GroupSummary>,
    /// Where a trace workload came from and what became of its rows (trace workloads only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceSummary>,
    /// The scenario's `traces`: per point added, where and when it was measured; then each
    /// file skipped, with why (absent without `traces`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub user_traces: Vec<String>,
}

#[cfg(test)]
impl RunLabels {
    /// Labels of a test run of `scenario`: variant base, seed 1, parametric, no profiles or
    /// cluster, origin "test".
    pub(crate) fn for_test(scenario: &str) -> Self {
        RunLabels {
            scenario: scenario.into(),
            variant: "base".into(),
            seed: 1,
            perf_model: "parametric".into(),
            profiles: vec![],
            profile_origin: "test".into(),
            cluster: vec![],
            trace: None,
            user_traces: vec![],
        }
    }
}

/// A replayed trace: rows read, jobs kept, and the models they were given.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TraceSummary {
    /// Trace format (philly, alibaba_openb, itp, helios, colo).
    pub format: String,
    /// The file, as the scenario names it.
    pub file: String,
    /// Data rows read (header excluded); with `limit`, only the rows read before stopping.
    pub rows_read: u64,
    /// Rows skipped by the reader (the reasons are in `skipped.trace_rows`).
    pub rows_skipped: u64,
    /// The reader's skips by reason (written once, as `skipped.trace_rows`; empty when read
    /// back from a file).
    #[serde(skip)]
    pub skips: SkipCounts,
    /// Jobs the reader kept.
    pub jobs_read: u64,
    /// Jobs left out because they arrived outside `window_hours`.
    pub outside_window: u64,
    /// Jobs replayed (`jobs_read - outside_window`); `jobs` of the summary.
    pub jobs_replayed: u64,
    /// Replayed jobs per model (MODEL:BATCH:IMAGE).
    pub models: std::collections::BTreeMap<String, u64>,
    /// Alibaba openb: GPU-sharing pods (`gpu_milli` < 1000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_sharing: Option<GpuSharingSummary>,
}

/// Alibaba openb GPU-sharing pods, from the file to the replay.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GpuSharingSummary {
    /// Rows of the file read that are GPU-sharing pods (kept or skipped).
    pub pods_in_trace: u64,
    /// Of those, rows the reader skipped (for example `zero_duration`).
    pub pods_skipped: u64,
    /// Of those, pods outside `window_hours`.
    pub pods_outside_window: u64,
    /// Of those, pods replayed, each as a one-GPU job that packing may share.
    pub pods_replayed: u64,
}

/// Skip counts by reason.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Skips {
    /// Jobs that fit on no GPU group.
    pub unplaceable: u64,
    /// Trace rows the reader skipped, by reason (empty unless the workload is a trace).
    #[serde(default)]
    pub trace_rows: SkipCounts,
}

/// summary.json: the run's headline numbers. All are simulated ("emulated") from a profile
/// whose origin is `profile_origin`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Labels.
    #[serde(flatten)]
    pub labels: RunLabels,
    /// Where the figures come from.
    pub figures_are: String,
    /// Jobs in the workload.
    pub jobs: u64,
    /// Jobs that ran to the end.
    pub completed: u64,
    /// Jobs skipped, by reason.
    pub skipped: Skips,
    /// Time the last job ended, s.
    pub makespan_s: f64,
    /// Job completion time (end - arrival), s.
    pub jct_s: Stats,
    /// Wait before start, s.
    pub wait_s: Stats,
    /// Exclusive rate / mean rate (1 = as fast as alone).
    pub slowdown: Stats,
    /// Samples trained per second of makespan.
    pub throughput_samples_per_s: f64,
    /// GPU-hours the cluster existed for (GPUs x makespan).
    pub gpu_hours_total: f64,
    /// GPU-hours with at least one job on the GPU.
    pub gpu_hours_busy: f64,
    /// gpu_hours_busy / gpu_hours_total.
    pub utilization: f64,
    /// The cluster's and the jobs' energy, and where it comes from (absent in summaries
    /// written before it existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy: Option<EnergySummary>,
    /// Events the engine handled.
    pub events: u64,
    /// Dynamic-MIG re-cuts done.
    #[serde(default)]
    pub mig_reconfigurations: u64,
    /// Preemptions (Las and Srtf; 0 under the other orders), all jobs together.
    #[serde(default)]
    pub preemptions: u64,
}

/// Computes the summary of `run` over `jobs`.
pub fn summarize(jobs: &[Job], run: &RunRecord, labels: RunLabels) -> Summary {
    let mut parts = SummaryParts::new(jobs.len(), usize::MAX);
    for (j, o) in jobs.iter().zip(&run.outcomes) {
        parts.add(j, o);
    }
    match parts.finish(run, labels) {
        Ok(summary) => summary,
        Err(e) => unreachable!("values kept in memory are not read back: {e}"),
    }
}

/// The summary's figures gathered job by job, in input order, without the outcomes kept:
/// [`summarize`] over a record's outcomes, or a run whose outcomes were streamed
/// ([`JobStream`]). Quantiles stay exact: each completed job's JCT, wait and slowdown are
/// kept (24 bytes a job, in sorted runs in temporary files past a bound: `values::Values`).
/// The busy GPU-hours are the record's (`busy_gpu_s`).
#[derive(Debug)]
pub struct SummaryParts {
    jobs: usize,
    completed: u64,
    makespan_s: f64,
    jct: values::Values,
    wait: values::Values,
    slowdown: values::Values,
    /// Completed jobs whose energy is unknown, and the sum of the others' in input order
    /// (`None` once one is unknown, as `Iterator::sum` of `Option`s gives it).
    without_energy: u64,
    jobs_energy_j: Option<f64>,
    samples: f64,
    preemptions: u64,
}

impl SummaryParts {
    /// Nothing gathered yet, for a workload of `jobs` jobs; each figure's values past
    /// `spill_at` go to temporary files in sorted runs (`usize::MAX`: never;
    /// `values::SPILL_AT`: a streamed run's bound).
    pub fn new(jobs: usize, spill_at: usize) -> Self {
        SummaryParts {
            jobs: 0,
            completed: 0,
            makespan_s: 0.0,
            jct: values::Values::spilling_at(jobs, spill_at),
            wait: values::Values::spilling_at(jobs, spill_at),
            slowdown: values::Values::spilling_at(jobs, spill_at),
            without_energy: 0,
            // `Iterator::sum` of `f64` starts from -0.0.
            jobs_energy_j: Some(-0.0),
            samples: -0.0,
            preemptions: 0,
        }
    }

    /// Adds the next job (in input order) and its outcome.
    pub fn add(&mut self, j: &Job, o: &JobOutcome) {
        let sums = self.add_unordered(j, o);
        self.add_ordered(sums);
    }

    /// Adds what of a job's figures does not depend on the order jobs are added in (counts,
    /// the latest end, and the values whose statistics are taken sorted); returns what does,
    /// for [`Self::add_ordered`] in input order: its work and energy if it completed.
    pub fn add_unordered(&mut self, j: &Job, o: &JobOutcome) -> Option<(f64, Option<f64>)> {
        self.jobs += 1;
        self.preemptions += u64::from(o.preemptions());
        if !o.completed {
            return None;
        }
        self.completed += 1;
        self.makespan_s = f64::max(self.makespan_s, o.end_s);
        self.jct.push(o.end_s - j.arrival_s);
        self.wait.push(o.start_s - j.arrival_s);
        self.slowdown.push(slowdown_of(j, o));
        Some((j.samples, o.energy_j))
    }

    /// Adds the work and energy [`Self::add_unordered`] returned for the next job in input
    /// order: they are summed in that order.
    pub fn add_ordered(&mut self, sums: Option<(f64, Option<f64>)>) {
        let Some((samples, energy_j)) = sums else {
            return;
        };
        self.samples += samples;
        match energy_j {
            Some(e) => self.jobs_energy_j = self.jobs_energy_j.map(|sum| sum + e),
            None => {
                self.without_energy += 1;
                self.jobs_energy_j = None;
            }
        }
    }

    /// The summary of the jobs added, with `run`'s other figures (its outcomes are not read);
    /// the first error writing or reading the values' temporary files.
    pub fn finish(self, run: &RunRecord, labels: RunLabels) -> std::io::Result<Summary> {
        let trace_rows = labels.trace.as_ref().map(|t| t.skips.clone());
        let makespan_s = self.makespan_s;
        let samples = self.samples;
        let gpu_hours_total = f64::from(run.total_gpus) * makespan_s / 3600.0;
        let gpu_hours_busy = run.busy_gpu_s / 3600.0;
        let energy = EnergySummary::of_totals(
            run.energy.as_ref(),
            self.completed,
            self.without_energy,
            self.jobs_energy_j,
            samples,
            makespan_s,
        );
        let [jct_s, wait_s, slowdown] = values::stats_of([self.jct, self.wait, self.slowdown])?;
        Ok(Summary {
            labels,
            figures_are: "emulated: simulated from the profile (see profile_origin)".to_owned(),
            jobs: self.jobs as u64,
            completed: self.completed,
            skipped: Skips {
                unplaceable: self.jobs as u64 - self.completed,
                trace_rows: trace_rows.unwrap_or_default(),
            },
            makespan_s,
            jct_s,
            wait_s,
            slowdown,
            throughput_samples_per_s: if makespan_s > 0.0 {
                samples / makespan_s
            } else {
                0.0
            },
            gpu_hours_total,
            gpu_hours_busy,
            utilization: if gpu_hours_total > 0.0 {
                gpu_hours_busy / gpu_hours_total
            } else {
                0.0
            },
            energy: Some(energy),
            events: run.events,
            mig_reconfigurations: run.mig_reconfigurations,
            preemptions: self.preemptions,
        })
    }
}

/// Exclusive rate over the job's mean rate (samples over the seconds it held GPUs,
/// [`JobOutcome::held_s`]); exactly 1 for a job that ran exactly as long as alone
/// (`samples / exclusive_rate`, the division the engine makes for a job alone), where the two
/// roundings of the ratio could otherwise land one bit off 1.
pub fn slowdown_of(job: &Job, outcome: &JobOutcome) -> f64 {
    let run_s = outcome.held_s();
    if run_s == job.samples / outcome.exclusive_rate {
        return 1.0;
    }
    let mean_rate = job.samples / run_s;
    outcome.exclusive_rate / mean_rate
}

/// Seconds each GPU had at least one job, summed over GPUs: the union of the intervals of
/// the outcomes' runs on each GPU, each GPU's sorted by start and merged (a run starting no
/// later than the span's latest end joins it), each GPU's spans' lengths summed in time order
/// and those sums added GPU by GPU (so that the engine needs one sum a GPU, not every span). The
/// engine keeps the same spans as the runs start and end ([`RunRecord::busy_gpu_s`], the same
/// bits; a test compares them). Intervals equal in start merge to the same span in any order,
/// so an unstable sort is exact.
pub fn busy_gpu_seconds(outcomes: &[JobOutcome]) -> f64 {
    let mut per_gpu: Vec<Vec<(f64, f64)>> = Vec::new();
    for r in outcomes.iter().flat_map(JobOutcome::runs) {
        for &g in r.gpus {
            let g = g as usize;
            if g >= per_gpu.len() {
                per_gpu.resize(g + 1, Vec::new());
            }
            per_gpu[g].push((r.start_s, r.end_s));
        }
    }
    let mut total = 0.0;
    for spans in &mut per_gpu {
        spans.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
        let Some((&first, rest)) = spans.split_first() else {
            continue;
        };
        let (mut s, mut e) = first;
        let mut gpu_s = 0.0;
        for &(start, end) in rest {
            if start <= e {
                e = e.max(end);
            } else {
                gpu_s += e - s;
                (s, e) = (start, end);
            }
        }
        total += gpu_s + (e - s);
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_interpolate() {
        let mut values = vec![4.0, 1.0, 3.0, 2.0, 5.0];
        let stats = Stats::of(&mut values);
        assert_eq!(stats.p50, 3.0);
        assert_eq!(stats.mean, 3.0);
        assert!((stats.p95 - 4.8).abs() < 1e-12);
        assert_eq!(stats.max, 5.0);
    }

    /// The radix sort gives the bits `sort_unstable_by(f64::total_cmp)` gives, around its
    /// threshold, with duplicates, both zeros, infinities, subnormals and NaNs of both signs.
    #[test]
    fn radix_sort_matches_total_cmp_sort() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let specials = [
            0.0,
            -0.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            -f64::NAN,
            f64::from_bits(0x7ff0_0000_0000_0001),
            f64::from_bits(0xfff8_0000_0000_0123),
            5e-324,
            -5e-324,
            f64::MAX,
            f64::MIN,
        ];
        for (round, len) in [0, 1, RADIX_MIN - 1, RADIX_MIN, RADIX_MIN + 1, 50_000]
            .into_iter()
            .enumerate()
        {
            let values: Vec<f64> = (0..len)
                .map(|i| {
                    let r = next();
                    match (i + round) % 6 {
                        0 => f64::from_bits(r),
                        1 => specials[(r % specials.len() as u64) as usize],
                        2 => (r % 1000) as f64,
                        3 => -((r >> 11) as f64 / (1u64 << 53) as f64) * 1e6,
                        _ => (r >> 11) as f64 / (1u64 << 53) as f64 * 3600.0,
                    }
                })
                .collect();
            let mut want = values.clone();
            want.sort_unstable_by(f64::total_cmp);
            let mut got = values;
            sort_total(&mut got);
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&got), bits(&want), "length {len}");
        }
        // Every key byte alike but one: the skipped passes.
        let mut same: Vec<f64> = (0..10_000u64).map(|i| (i % 256) as f64 + 1e9).collect();
        let mut want = same.clone();
        want.sort_unstable_by(f64::total_cmp);
        sort_total(&mut same);
        assert_eq!(same, want);
    }

    #[test]
    fn busy_time_merges_overlapping_jobs_per_gpu() {
        let outcome = |gpu: u32, start: f64, end: f64| JobOutcome {
            completed: true,
            start_s: start,
            end_s: end,
            group: Some(0),
            gpus: vec![gpu],
            slice: None,
            mode: Some(ShareMode::Mps),
            exclusive_rate: 1.0,
            energy_j: None,
            preempted: Vec::new(),
            resumed_s: start,
        };
        let run = RunRecord {
            outcomes: vec![
                outcome(0, 0.0, 10.0),
                outcome(0, 5.0, 12.0),
                outcome(1, 20.0, 30.0),
            ],
            timeline: vec![],
            busy_gpu_s: 0.0,
            events: 0,
            mig_reconfigurations: 0,
            total_gpus: 2,
            memory_total_gib: 1.0,
            energy: None,
        };
        assert_eq!(busy_gpu_seconds(&run.outcomes), 22.0);
    }
}
