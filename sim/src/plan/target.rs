//! Planning targets such as `p95_jct <= 2h`, `throughput >= 5000` or `energy_kwh <= 40`: read,
//! shown, checked against a run's summary.
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
    /// Energy of the whole cluster (busy and idle GPUs) over the makespan, kWh (fitted power
    /// model; unknown without one).
    EnergyKwh,
    /// Samples trained per joule of that energy.
    SamplesPerJoule,
}

impl Metric {
    const ALL: [(Metric, &'static str); 8] = [
        (Metric::MeanJct, "mean_jct"),
        (Metric::P95Jct, "p95_jct"),
        (Metric::MeanWait, "mean_wait"),
        (Metric::P95Wait, "p95_wait"),
        (Metric::Makespan, "makespan"),
        (Metric::Throughput, "throughput"),
        (Metric::EnergyKwh, "energy_kwh"),
        (Metric::SamplesPerJoule, "samples_per_joule"),
    ];

    /// The name targets use.
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(m, _)| *m == self)
            .map_or("?", |(_, name)| name)
    }

    /// Whether the metric is a time (seconds).
    pub fn is_time(self) -> bool {
        !matches!(
            self,
            Metric::Throughput | Metric::EnergyKwh | Metric::SamplesPerJoule
        )
    }

    /// Whether targets bound it from above (times, energy) rather than from below (rates).
    pub fn is_upper_bound(self) -> bool {
        !matches!(self, Metric::Throughput | Metric::SamplesPerJoule)
    }

    /// Its value in `summary`: seconds, samples/s, kWh or samples/J; NaN when the summary does
    /// not know it (energy without a power model: [`Metric::unknown_because`] says why).
    pub fn of(self, summary: &Summary) -> f64 {
        let energy = summary.energy.as_ref();
        match self {
            Metric::EnergyKwh => energy.and_then(|e| e.energy_kwh).unwrap_or(f64::NAN),
            Metric::SamplesPerJoule => energy.and_then(|e| e.samples_per_joule).unwrap_or(f64::NAN),
            Metric::MeanJct => summary.jct_s.mean,
            Metric::P95Jct => summary.jct_s.p95,
            Metric::MeanWait => summary.wait_s.mean,
            Metric::P95Wait => summary.wait_s.p95,
            Metric::Makespan => summary.makespan_s,
            Metric::Throughput => summary.throughput_samples_per_s,
        }
    }

    /// Why `summary` does not know the metric, when it does not.
    pub fn unknown_because(self, summary: &Summary) -> Option<String> {
        if !self.of(summary).is_nan() {
            return None;
        }
        let why = summary.energy.as_ref().map_or_else(
            || "the summary has no energy figures".to_owned(),
            |e| {
                e.unknown_because
                    .clone()
                    .unwrap_or_else(|| e.figures_are.clone())
            },
        );
        Some(format!("{} unknown: {why}", self.name()))
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
    /// Kilowatt-hours (energy).
    KilowattHours,
    /// Samples per joule.
    SamplesPerJoule,
}

impl Unit {
    /// One of the unit in the metric's base unit (seconds for times).
    fn factor(self) -> f64 {
        match self {
            Unit::Minutes => 60.0,
            Unit::Hours => 3600.0,
            Unit::Seconds
            | Unit::SamplesPerSecond
            | Unit::KilowattHours
            | Unit::SamplesPerJoule => 1.0,
        }
    }

    /// Short suffix: `s`, `m`, `h`, `samples/s`, `kWh` or `samples/J`.
    pub fn suffix(self) -> &'static str {
        match self {
            Unit::Seconds => "s",
            Unit::Minutes => "m",
            Unit::Hours => "h",
            Unit::SamplesPerSecond => "samples/s",
            Unit::KilowattHours => "kWh",
            Unit::SamplesPerJoule => "samples/J",
        }
    }
}

/// A bound on one metric.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Target {
    /// What is bounded.
    pub metric: Metric,
    /// The bound, in the metric's base unit (seconds, samples/s, kWh, samples/J).
    pub bound: f64,
    /// Whether equality meets the target (`<=`, `>=`) or not (`<`, `>`).
    pub inclusive: bool,
    /// Unit the target was written in.
    pub unit: Unit,
}

impl Target {
    /// Whether `value` (in the metric's base unit) meets the target; NaN (unknown) never does.
    pub fn met_by(&self, value: f64) -> bool {
        match (self.metric.is_upper_bound(), self.inclusive) {
            (true, true) => value <= self.bound,
            (true, false) => value < self.bound,
            (false, true) => value >= self.bound,
            (false, false) => value > self.bound,
        }
    }

    /// `value` in the target's unit.
    pub fn in_unit(&self, value: f64) -> f64 {
        value / self.unit.factor()
    }

    /// `value` in the target's unit with its suffix, e.g. `1.84 h`.
    pub fn show(&self, value: f64) -> String {
        format!("{:.2} {}", self.in_unit(value), self.unit.suffix())
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let op = match (self.metric.is_upper_bound(), self.inclusive) {
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
    "target `{text}`: {why}; write METRIC OP VALUE, e.g. \"p95_jct <= 2h\", \"throughput >= 5000\" or \"energy_kwh <= 40\" (metrics: mean_jct, p95_jct, mean_wait, p95_wait, makespan (<=, units s, m, h), throughput (>=, samples/s), energy_kwh (<=, kWh), samples_per_joule (>=, samples/J))"
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
        if metric.is_upper_bound() != upper {
            let want = if metric.is_upper_bound() {
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
            bound: value * unit.factor(),
            inclusive,
            unit,
        })
    }
}

/// Splits `2h` into (`2`, hours); a number without unit is in the metric's base unit.
fn split_unit(value: &str, metric: Metric) -> Result<(&str, Unit), String> {
    let digits_end = value
        .find(|c: char| {
            !(c.is_ascii_digit() || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-')
        })
        .unwrap_or(value.len());
    let (number, suffix) = value.split_at(digits_end);
    let unit = match (metric, suffix.trim()) {
        (Metric::Throughput, "" | "/s" | "samples/s") => Unit::SamplesPerSecond,
        (Metric::EnergyKwh, "" | "kWh" | "kwh") => Unit::KilowattHours,
        (Metric::SamplesPerJoule, "" | "/J" | "samples/J") => Unit::SamplesPerJoule,
        (m, "" | "s") if m.is_time() => Unit::Seconds,
        (m, "m" | "min") if m.is_time() => Unit::Minutes,
        (m, "h") if m.is_time() => Unit::Hours,
        (_, other) => return Err(format!("unknown unit `{other}`")),
    };
    Ok((number.trim(), unit))
}
