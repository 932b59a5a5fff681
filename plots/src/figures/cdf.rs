//! JCT and wait-time CDFs, one line per result folder.
use plotters::prelude::SeriesLabelPosition;

use crate::chart::{AxisRange, ChartText, LineChart, Series, SeriesStyle};
use crate::figures::{TimeUnit, provenance};
use crate::results::{JobRecord, ResultFolder};

/// Which per-job time a CDF shows.
#[derive(Debug, Clone, Copy)]
pub(crate) enum JobTime {
    /// Arrival to end.
    Completion,
    /// Arrival to start.
    Wait,
}

impl JobTime {
    fn of(self, job: &JobRecord) -> Option<f64> {
        match self {
            JobTime::Completion => job.jct_s,
            JobTime::Wait => job.wait_s,
        }
    }

    fn words(self) -> (&'static str, &'static str) {
        match self {
            JobTime::Completion => ("Job completion time", "arrival to end"),
            JobTime::Wait => ("Wait time", "arrival to start"),
        }
    }
}

/// Most points drawn per CDF line; more jobs are sampled at evenly spaced ranks.
const MAX_CDF_POINTS: usize = 2000;

/// The CDF chart, or `None` when no folder has a completed job.
pub(crate) fn cdf_chart(folders: &[ResultFolder], time: JobTime) -> Option<LineChart> {
    let per_folder: Vec<Vec<f64>> = folders
        .iter()
        .map(|f| sorted_times(&f.jobs, time))
        .collect();
    let all: Vec<f64> = per_folder.iter().flatten().copied().collect();
    let max_s = all.iter().copied().fold(f64::NAN, f64::max);
    if all.is_empty() {
        return None;
    }
    let unit = TimeUnit::for_span(max_s);
    let scaled: Vec<f64> = all.iter().map(|v| v / unit.seconds()).collect();
    let x = AxisRange::auto(&scaled, true);
    let series = folders
        .iter()
        .zip(&per_folder)
        .filter(|(_, times)| !times.is_empty())
        .map(|(folder, times)| Series {
            label: format!("{} ({} jobs)", folder.label, times.len()),
            points: cdf_points(times, unit.seconds()),
            style: SeriesStyle::Line,
        })
        .collect();
    let (name, span) = time.words();
    let log_note = if x.log { ", log scale" } else { "" };
    let text = ChartText {
        title: format!("{name} CDF ({})", provenance(folders)),
        x_label: format!(
            "{} ({}, {span}{log_note})",
            name.to_lowercase(),
            unit.symbol()
        ),
        y_label: "fraction of completed jobs".to_string(),
    };
    let y = AxisRange {
        min: 0.0,
        max: 1.02,
        log: false,
        integer: false,
    };
    Some(LineChart {
        text,
        x,
        y,
        series,
        legend_at: SeriesLabelPosition::LowerRight,
    })
}

fn sorted_times(jobs: &[JobRecord], time: JobTime) -> Vec<f64> {
    let mut times: Vec<f64> = jobs
        .iter()
        .filter_map(|job| time.of(job))
        .filter(|v| v.is_finite())
        .collect();
    times.sort_by(f64::total_cmp);
    times
}

/// Step CDF through sorted `times` (divided by `unit_s`), sampled to at most [`MAX_CDF_POINTS`].
fn cdf_points(times: &[f64], unit_s: f64) -> Vec<(f64, f64)> {
    let n = times.len();
    let stride = n.div_ceil(MAX_CDF_POINTS).max(1);
    let mut points = vec![(times[0] / unit_s, 0.0)];
    let mut ranks: Vec<usize> = (0..n).step_by(stride).collect();
    if ranks.last() != Some(&(n - 1)) {
        ranks.push(n - 1);
    }
    let mut below = 0.0;
    for rank in ranks {
        let x = times[rank] / unit_s;
        let fraction = (rank + 1) as f64 / n as f64;
        points.push((x, below));
        points.push((x, fraction));
        below = fraction;
    }
    points
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cdf_steps_end_at_one() {
        let points = cdf_points(&[1.0, 2.0, 4.0], 1.0);
        assert_eq!(points.first(), Some(&(1.0, 0.0)));
        assert_eq!(points.last(), Some(&(4.0, 1.0)));
        assert!(
            points
                .windows(2)
                .all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1)
        );
    }

    #[test]
    fn big_cdf_is_sampled() {
        let times: Vec<f64> = (0..100_000).map(f64::from).collect();
        let points = cdf_points(&times, 1.0);
        assert!(points.len() <= 2 * MAX_CDF_POINTS + 3, "{}", points.len());
        assert_eq!(points.last(), Some(&(99_999.0, 1.0)));
    }
}
