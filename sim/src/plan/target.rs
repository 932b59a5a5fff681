//! Planning targets such as `p95_jct <= 2h` or `throughput >= 5000`: read, shown, checked
//! against a run's summary.
use std::fmt;
use std::str::FromStr;

use thiserror::Error;

use crate::metrics::Summary;

/// A summary figure a target bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    /// Mean job completion time (end - arrival).
    MeanJct,
    /// 95th percentile of job completion time.
    P95Jct,
    /// Mean wait before start.
    MeanWait,
    /// 95th percentile of wait.
    P95Wait,
    /// Time the last job ends.
    Makespan,
    /// Samples trained per second of makespan.
    Throughput,
}

impl Metric {
    const ALL: [(Metric, &'static str); 6] = [
        (Metric::MeanJct, "mean_jct"),
        (Metric::P95Jct, "p95_jct"),
        (Metric::MeanWait, "mean_wait"),
        (Metric::P95Wait, "p95_wait"),
        (Metric::Makespan, "makespan"),
        (Metric::Throughput, "throughput"),
    ];

    /// The name targets use.
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(m, _)| *m == self)
            .map_or("?", |(_, name)| name)
    }

    /// Whether the metric is a time (bounded from above) rather than a rate (from below).
    pub fn is_time(self) -> bool {
        self != Metric::Throughput
    }

    /// Its value in `summary`: seconds, or samples/s for throughput.
    pub fn of(self, summary: &Summary) -> f64 {
        match self {
            Metric::MeanJct => summary.jct_s.mean,
            Metric::P95Jct => summary.jct_s.p95,
            Metric::MeanWait => summary.wait_s.mean,
            Metric::P95Wait => summary.wait_s.p95,
            Metric::Makespan => summary.makespan_s,
            Metric::Throughput => summary.throughput_samples_per_s,
        }
    }
}

/// The unit a time target was written in; values are shown in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Seconds.
    Seconds,
    /// Minutes.
    Minutes,
    /// Hours.
    Hours,
    /// Samples per second (throughput).
    SamplesPerSecond,
}

impl Unit {
    fn seconds(self) -> f64 {
        match self {
            Unit::Minutes => 60.0,
            Unit::Hours => 3600.0,
            Unit::Seconds | Unit::SamplesPerSecond => 1.0,
        }
    }

    /// Short suffix: `s`, `m`, `h` or `samples/s`.
    pub fn suffix(self) -> &'static str {
        match self {
            Unit::Seconds => "s",
            Unit::Minutes => "m",
            Unit::Hours => "h",
            Unit::SamplesPerSecond => "samples/s",
        }
    }
}

/// A bound on one metric.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Target {
    /// What is bounded.
    pub metric: Metric,
    /// The bound, in seconds or samples/s.
    pub bound: f64,
    /// Whether equality meets the target (`<=`, `>=`) or not (`<`, `>`).
    pub inclusive: bool,
    /// Unit the target was written in.
    pub unit: Unit,
}

impl Target {
    /// Whether `value` (seconds or samples/s) meets the target.
    pub fn met_by(&self, value: f64) -> bool {
        match (self.metric.is_time(), self.inclusive) {
            (true, true) => value <= self.bound,
            (true, false) => value < self.bound,
            (false, true) => value >= self.bound,
            (false, false) => value > self.bound,
        }
    }

    /// `value` in the target's unit.
    pub fn in_unit(&self, value: f64) -> f64 {
        value / self.unit.seconds()
    }

    /// `value` in the target's unit with its suffix, e.g. `1.84 h`.
    pub fn show(&self, value: f64) -> String {
        format!("{:.2} {}", self.in_unit(value), self.unit.suffix())
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let op = match (self.metric.is_time(), self.inclusive) {
            (true, true) => "<=",
            (true, false) => "<",
            (false, true) => ">=",
            (false, false) => ">",
        };
        let value = self.in_unit(self.bound);
        write!(
            f,
            "{} {op} {value}{}",
            self.metric.name(),
            self.unit.suffix()
        )
    }
}

/// A target that cannot be read. Fatal; the message shows the accepted form.
#[derive(Debug, Error, PartialEq)]
#[error(
    "target `{text}`: {why}; write METRIC OP VALUE, e.g. \"p95_jct <= 2h\" or \"throughput >= 5000\" (metrics: mean_jct, p95_jct, mean_wait, p95_wait, makespan (<=, units s, m, h), throughput (>=, samples/s))"
)]
pub struct TargetError {
    /// The target as given.
    pub text: String,
    /// What is wrong.
    pub why: String,
}

impl FromStr for Target {
    type Err = TargetError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let fail = |why: &str| TargetError {
            text: text.to_owned(),
            why: why.to_owned(),
        };
        let op_at = text
            .find(['<', '>'])
            .ok_or_else(|| fail("no comparison (<=, <, >=, >)"))?;
        let name = text[..op_at].trim();
        let rest = &text[op_at..];
        let (upper, inclusive, value_text) = match rest.as_bytes() {
            [b'<', b'=', ..] => (true, true, &rest[2..]),
            [b'>', b'=', ..] => (false, true, &rest[2..]),
            [b'<', ..] => (true, false, &rest[1..]),
            _ => (false, false, &rest[1..]),
        };
        let metric = Metric::ALL
            .iter()
            .find(|(_, n)| n.eq_ignore_ascii_case(name))
            .map(|(m, _)| *m)
            .ok_or_else(|| fail(&format!("unknown metric `{name}`")))?;
        if metric.is_time() != upper {
            let want = if metric.is_time() {
                "<= or <"
            } else {
                ">= or >"
            };
            return Err(fail(&format!("{name} takes {want}")));
        }
        let (number, unit) = split_unit(value_text.trim(), metric).map_err(|why| fail(&why))?;
        let value: f64 = number
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite() && *v > 0.0)
            .ok_or_else(|| fail(&format!("`{number}` is not a positive number")))?;
        Ok(Target {
            metric,
            bound: value * unit.seconds(),
            inclusive,
            unit,
        })
    }
}

/// Splits `2h` into (`2`, hours); a number without unit is seconds (or samples/s).
fn split_unit(value: &str, metric: Metric) -> Result<(&str, Unit), String> {
    let digits_end = value
        .find(|c: char| {
            !(c.is_ascii_digit() || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-')
        })
        .unwrap_or(value.len());
    let (number, suffix) = value.split_at(digits_end);
    let unit = match (metric.is_time(), suffix.trim()) {
        (true, "" | "s") => Unit::Seconds,
        (true, "m" | "min") => Unit::Minutes,
        (true, "h") => Unit::Hours,
        (false, "" | "/s" | "samples/s") => Unit::SamplesPerSecond,
        (_, other) => return Err(format!("unknown unit `{other}`")),
    };
    Ok((number.trim(), unit))
}
