//! The figure kinds drawn from result folders, plus the plain-data charts for calibration.
pub mod bars;
pub mod calibration;
pub(crate) mod cdf;
pub(crate) mod occupancy;
pub(crate) mod timeline;
pub(crate) mod variants;

use crate::results::ResultFolder;

/// The unit a time axis is shown in, picked from the span it covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TimeUnit {
    Seconds,
    Minutes,
    Hours,
}

impl TimeUnit {
    /// Hours past 2 h, minutes past 2 min, else seconds.
    pub fn for_span(max_s: f64) -> TimeUnit {
        if max_s > 7200.0 {
            TimeUnit::Hours
        } else if max_s > 120.0 {
            TimeUnit::Minutes
        } else {
            TimeUnit::Seconds
        }
    }

    /// Seconds in one unit.
    pub fn seconds(self) -> f64 {
        match self {
            TimeUnit::Seconds => 1.0,
            TimeUnit::Minutes => 60.0,
            TimeUnit::Hours => 3600.0,
        }
    }

    /// Unit symbol for axis labels.
    pub fn symbol(self) -> &'static str {
        match self {
            TimeUnit::Seconds => "s",
            TimeUnit::Minutes => "min",
            TimeUnit::Hours => "h",
        }
    }
}

/// "emulated; profile: fitted" — where every number of a results figure comes from.
pub(crate) fn provenance(folders: &[ResultFolder]) -> String {
    let mut origins: Vec<&str> = folders
        .iter()
        .map(|f| f.summary.labels.profile_origin.as_str())
        .collect();
    origins.sort_unstable();
    origins.dedup();
    format!("emulated; profile: {}", origins.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_unit_follows_span() {
        assert_eq!(TimeUnit::for_span(90.0), TimeUnit::Seconds);
        assert_eq!(TimeUnit::for_span(3600.0), TimeUnit::Minutes);
        assert_eq!(TimeUnit::for_span(3.0 * 3600.0), TimeUnit::Hours);
    }
}
