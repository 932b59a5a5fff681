//! Why a trace row was skipped, and how many rows each reason skipped.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// Why a row of a trace did not become a job. Serialized in snake_case (`negative_duration`).
///
/// Two kinds: *defects* (holes and nonsense: [`SkipReason::is_defect`] is true) are refused by
/// strict mode; *filters* (well-formed rows that are not a GPU job to replay) are only counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    /// A required field is empty or the row is too short to have it.
    MissingField,
    /// A field is not a number, an integer, or a `YYYY-MM-DD HH:MM:SS` time as its column needs.
    Unparsable,
    /// A time or duration is a number outside the range colo accepts (`workload::limits`): a raw
    /// time beyond 1e10 s either side of 0, an arrival more than 1e10 s after the first, or a
    /// duration outside [1e-6, 1e10] s.
    OutOfRange,
    /// colo CSV: `arrival_s` is below zero.
    NegativeArrival,
    /// The duration column is below zero.
    NegativeDuration,
    /// The end (or deletion) time is before the start (or creation) time.
    EndBeforeStart,
    /// The GPU count is below zero.
    NegativeGpus,
    /// A GPU-only trace (Philly, ITP, colo) gives a job zero GPUs.
    ZeroGpus,
    /// Alibaba: `gpu_milli` is 0 or above 1000, or below 1000 on a pod with more than one GPU.
    BadGpuShare,
    /// Filter: the job ran for zero seconds (at the trace's one-second resolution).
    ZeroDuration,
    /// Filter, Alibaba: the pod has no deletion time (still alive when the trace was cut).
    NoEndTime,
    /// Filter, Alibaba, Helios, Slurm and Kubernetes: a CPU-only job (zero GPUs), which colo
    /// does not simulate.
    NoGpu,
    /// Filter, Slurm: a job step (`123.batch`, `123.0`), part of a job whose own row is read.
    JobStep,
    /// Filter, Slurm and Kubernetes: the job ended in a state other than `COMPLETED` (a pod in
    /// phase `Failed`), and the read keeps completed jobs only (`ReadOptions::all_states`).
    NotCompleted,
}

impl SkipReason {
    /// Every reason, in display order.
    pub const ALL: [SkipReason; 14] = [
        Self::MissingField,
        Self::Unparsable,
        Self::OutOfRange,
        Self::NegativeArrival,
        Self::NegativeDuration,
        Self::EndBeforeStart,
        Self::NegativeGpus,
        Self::ZeroGpus,
        Self::BadGpuShare,
        Self::ZeroDuration,
        Self::NoEndTime,
        Self::NoGpu,
        Self::JobStep,
        Self::NotCompleted,
    ];

    /// The snake_case name, as serialized.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::MissingField => "missing_field",
            Self::Unparsable => "unparsable",
            Self::OutOfRange => "out_of_range",
            Self::NegativeArrival => "negative_arrival",
            Self::NegativeDuration => "negative_duration",
            Self::EndBeforeStart => "end_before_start",
            Self::NegativeGpus => "negative_gpus",
            Self::ZeroGpus => "zero_gpus",
            Self::BadGpuShare => "bad_gpu_share",
            Self::ZeroDuration => "zero_duration",
            Self::NoEndTime => "no_end_time",
            Self::NoGpu => "no_gpu",
            Self::JobStep => "job_step",
            Self::NotCompleted => "not_completed",
        }
    }

    /// True for holes and nonsense, which strict mode turns into an error; false for filters
    /// (`zero_duration`, `no_end_time`, `no_gpu`, `job_step`, `not_completed`), which are
    /// counted even in strict mode.
    pub fn is_defect(self) -> bool {
        !matches!(
            self,
            Self::ZeroDuration | Self::NoEndTime | Self::NoGpu | Self::JobStep | Self::NotCompleted
        )
    }
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Rows skipped per reason. Displays as `12 rows skipped: 5 negative_duration, 7 zero_gpus`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SkipCounts(pub BTreeMap<SkipReason, u64>);

impl SkipCounts {
    /// Count one more row skipped for `reason`.
    pub fn add(&mut self, reason: SkipReason) {
        *self.0.entry(reason).or_insert(0) += 1;
    }

    /// Rows skipped for `reason` (0 when none).
    pub fn get(&self, reason: SkipReason) -> u64 {
        self.0.get(&reason).copied().unwrap_or(0)
    }

    /// Rows skipped for any reason.
    pub fn total(&self) -> u64 {
        self.0.values().sum()
    }

    /// Rows skipped as defects (see [`SkipReason::is_defect`]).
    pub fn defects(&self) -> u64 {
        self.0
            .iter()
            .filter(|(reason, _)| reason.is_defect())
            .map(|(_, n)| n)
            .sum()
    }
}

impl fmt::Display for SkipCounts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let total = self.total();
        let noun = if total == 1 { "row" } else { "rows" };
        write!(f, "{total} {noun} skipped")?;
        let mut sep = ": ";
        for (reason, n) in self.0.iter().filter(|(_, n)| **n > 0) {
            write!(f, "{sep}{n} {reason}")?;
            sep = ", ";
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_lists_reasons_in_order() {
        let mut counts = SkipCounts::default();
        for _ in 0..7 {
            counts.add(SkipReason::ZeroGpus);
        }
        for _ in 0..5 {
            counts.add(SkipReason::NegativeDuration);
        }
        assert_eq!(
            counts.to_string(),
            "12 rows skipped: 5 negative_duration, 7 zero_gpus"
        );
        assert_eq!(SkipCounts::default().to_string(), "0 rows skipped");
    }

    #[test]
    fn names_match_serde() {
        for reason in SkipReason::ALL {
            let json = serde_json::to_string(&reason).unwrap();
            assert_eq!(json, format!("\"{}\"", reason.as_str()));
        }
    }

    #[test]
    fn only_filters_pass_strict_mode() {
        let filters: Vec<_> = SkipReason::ALL
            .into_iter()
            .filter(|r| !r.is_defect())
            .collect();
        assert_eq!(
            filters,
            [
                SkipReason::ZeroDuration,
                SkipReason::NoEndTime,
                SkipReason::NoGpu,
                SkipReason::JobStep,
                SkipReason::NotCompleted
            ]
        );
    }
}
