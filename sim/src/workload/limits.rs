//! The range of times colo accepts, and why.
//!
//! The engine holds times as `f64` seconds on one clock that starts at the first arrival (trace
//! and listed workloads are rebased to it; a synthetic workload's clock starts at 0 and its first
//! job arrives one gap later). An `f64` carries 53 bits: a time `t` is held to within
//! `t * 2^-53` (about `t * 1.1e-16`), and whole seconds are exact below `2^53` (about 9e15).
//! Values are accepted only where that precision is ample:
//!
//! - **arrivals** (on the clock, after rebasing) and the **raw times** of a trace row (Unix epoch
//!   seconds, or seconds from the trace's start) lie in `[-MAX_TIME_S, MAX_TIME_S]`, arrivals in
//!   `[0, MAX_TIME_S]`: `1e10` s is about 317 years, more than any cluster trace spans and more
//!   than every Unix time up to the year 2286, so epoch timestamps are read as they are. At
//!   `1e10` s the clock still resolves `2^-19` s (under 2 µs), and the difference of two raw times
//!   (the rebase) is exact for whole seconds and within 1 µs otherwise.
//! - **durations** (a trace's run time times `duration_scale`, or a listed or synthetic job's work
//!   over its alone rate) lie in `[MIN_DURATION_S, MAX_DURATION_S]` = `[1e-6, 1e10]` s. A
//!   microsecond is above half the clock's resolution at `1e10` s (`2^-20` s, about 0.95 µs), so
//!   no accepted duration vanishes when added to an accepted time: every job ends after it starts
//!   (a job of `1e-308` s ended when it started, with an infinite mean rate). Above `1e10` s, a
//!   job would end beyond the range of arrivals.
//!
//! What this buys: a job that arrives first (or alone) starts at clock time 0, so its end is
//! `work / rate` with no large time added to it, and its JCT equals its duration to within a few
//! `f64` roundings (far inside 1e-9 relative) for every accepted arrival and duration; a property
//! test holds the engine and the naive reference engine to that. A later job of duration `d`
//! ending at clock time `t` is resolved to the engine's instant, `1e-10 * t` (see
//! `engine::SAME_INSTANT`), so its JCT is held to about `1e-10 * t / d` relative.
use std::fmt;

/// Largest accepted time on the clock (arrivals) and largest magnitude of a raw trace time, s.
pub const MAX_TIME_S: f64 = 1e10;
/// Shortest accepted duration (a job alone), s.
pub const MIN_DURATION_S: f64 = 1e-6;
/// Longest accepted duration (a job alone), s.
pub const MAX_DURATION_S: f64 = 1e10;
/// Latest time the clock may reach (any start or end, so the makespan), s: the latest accepted
/// arrival plus the longest accepted duration, so every accepted job alone ends inside it. A run
/// whose clock passes it (jobs queued or slowed for centuries, as under
/// `FixedSlowdown(per_corunner: 1e300)`) stops with an error instead of reporting a makespan of
/// 1e304 s, a time at which no accepted duration moves the clock.
pub const MAX_CLOCK_S: f64 = MAX_TIME_S + MAX_DURATION_S;
/// Most GPUs a cluster may hold (all groups together), and so the most a job may ask for: far
/// above any real cluster, low enough that the per-GPU state of the engine fits in memory
/// (4e9 GPUs were read as written and exhausted 24 GB).
pub const MAX_GPUS: u32 = 1_000_000;

// The shortest duration still moves the clock at the latest time.
const _: () = assert!(MAX_TIME_S + MIN_DURATION_S > MAX_TIME_S);

/// A time or duration outside the accepted range: what it is, its value and the range.
#[derive(Clone, Debug, PartialEq)]
pub struct OutOfRange {
    /// `arrival`, `duration` or `trace time`.
    pub what: &'static str,
    /// The value given.
    pub value: f64,
    /// Smallest accepted value.
    pub min: f64,
    /// Largest accepted value.
    pub max: f64,
}

impl fmt::Display for OutOfRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let side = if self.value.is_nan() {
            "is not a number".to_owned()
        } else if self.value < self.min {
            format!("is below the limit of {} s", sci(self.min))
        } else {
            format!("is above the limit of {} s", sci(self.max))
        };
        write!(
            f,
            "{} of {} s {side}: colo accepts {}s in [{}, {}] s, where f64 times stay exact \
             (see scenarios/README.md, \"Accepted ranges\")",
            self.what,
            self.value,
            self.what,
            sci(self.min),
            sci(self.max)
        )
    }
}

/// A limit as written in the docs: `0`, `1e-6`, `1e10`, `-1e10`.
fn sci(limit: f64) -> String {
    if limit == 0.0 {
        "0".into()
    } else {
        format!("{limit:e}")
    }
}

fn check(what: &'static str, value: f64, min: f64, max: f64) -> Result<f64, OutOfRange> {
    if value >= min && value <= max {
        Ok(value)
    } else {
        Err(OutOfRange {
            what,
            value,
            min,
            max,
        })
    }
}

/// `value` if it is an arrival on the clock in `[0, MAX_TIME_S]`.
pub fn arrival(value: f64) -> Result<f64, OutOfRange> {
    check("arrival", value, 0.0, MAX_TIME_S)
}

/// `value` if it is a raw trace time (before rebasing) in `[-MAX_TIME_S, MAX_TIME_S]`.
pub fn trace_time(value: f64) -> Result<f64, OutOfRange> {
    check("trace time", value, -MAX_TIME_S, MAX_TIME_S)
}

/// `value` if it is a duration in `[MIN_DURATION_S, MAX_DURATION_S]`.
pub fn duration(value: f64) -> Result<f64, OutOfRange> {
    check("duration", value, MIN_DURATION_S, MAX_DURATION_S)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_inclusive_and_nan_is_refused() {
        assert_eq!(arrival(0.0), Ok(0.0));
        assert_eq!(arrival(MAX_TIME_S), Ok(MAX_TIME_S));
        assert!(arrival(-1e-300).is_err());
        assert!(arrival(f64::NAN).is_err());
        assert!(arrival(f64::INFINITY).is_err());
        assert_eq!(trace_time(-MAX_TIME_S), Ok(-MAX_TIME_S));
        assert!(trace_time(2f64.powi(64)).is_err());
        assert_eq!(duration(MIN_DURATION_S), Ok(MIN_DURATION_S));
        assert!(duration(1e-308).is_err());
        assert!(duration(MAX_DURATION_S * 1.000001).is_err());
    }

    #[test]
    fn messages_name_the_value_and_the_limit() {
        let err = arrival(1e17).unwrap_err().to_string();
        assert!(
            err.starts_with("arrival of 100000000000000000 s is above the limit of 1e10 s"),
            "{err}"
        );
        let err = duration(1e-308).unwrap_err().to_string();
        assert!(err.contains("is below the limit of 1e-6 s"), "{err}");
        let err = duration(f64::NAN).unwrap_err().to_string();
        assert!(err.contains("NaN s is not a number"), "{err}");
    }
}
