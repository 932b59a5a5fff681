//! Queue length and GPU utilization over time, one step line per result folder.
use plotters::prelude::SeriesLabelPosition;

use crate::chart::{AxisRange, ChartText, LineChart, Series, SeriesStyle, decimate};
use crate::figures::{TimeUnit, provenance};
use crate::results::{ResultFolder, TimelinePoint};

/// Which cluster quantity a timeline chart follows.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ClusterQuantity {
    /// Jobs waiting.
    QueueLength,
    /// Busy GPUs as a percentage of all GPUs.
    Utilization,
}

impl ClusterQuantity {
    fn of(self, point: &TimelinePoint) -> f64 {
        match self {
            ClusterQuantity::QueueLength => f64::from(point.queued),
            ClusterQuantity::Utilization if point.total_gpus == 0 => 0.0,
            ClusterQuantity::Utilization => {
                100.0 * f64::from(point.busy_gpus) / f64::from(point.total_gpus)
            }
        }
    }
}

/// Most points drawn per line; longer timelines keep each bucket's extremes.
const MAX_TIMELINE_POINTS: usize = 4000;

/// The chart, or `None` when no folder has a timeline row.
pub(crate) fn timeline_chart(
    folders: &[ResultFolder],
    quantity: ClusterQuantity,
) -> Option<LineChart> {
    let end_s = folders
        .iter()
        .flat_map(|f| f.timeline.iter().map(|p| p.time_s))
        .fold(f64::NAN, f64::max);
    if end_s.is_nan() {
        return None;
    }
    let unit = TimeUnit::for_span(end_s);
    let series: Vec<Series> = folders
        .iter()
        .filter(|f| !f.timeline.is_empty())
        .map(|folder| Series {
            label: folder.label.clone(),
            points: decimate(
                &step_points(&folder.timeline, quantity, unit),
                MAX_TIMELINE_POINTS,
            ),
            style: SeriesStyle::Line,
        })
        .collect();
    let x = AxisRange {
        min: 0.0,
        max: (end_s / unit.seconds()).max(1e-9) * 1.02,
        log: false,
        integer: false,
    };
    let (title, y_label, y) = match quantity {
        ClusterQuantity::QueueLength => {
            let values = series.iter().flat_map(|s| s.points.iter().map(|p| p.1));
            let y = AxisRange {
                integer: true,
                ..AxisRange::linear(values, true)
            };
            ("Queue length over time", "queued jobs", y)
        }
        ClusterQuantity::Utilization => (
            "GPU utilization over time (busy = at least one job)",
            "busy GPUs (% of cluster)",
            // The data's range (no percentage above 100 exists): the plot area clips the
            // spikes that thick step lines draw at their corners, which a padded axis showed
            // as utilization above 100%.
            AxisRange {
                min: 0.0,
                max: 101.0,
                log: false,
                integer: false,
            },
        ),
    };
    let text = ChartText {
        title: format!("{title} ({})", provenance(folders)),
        x_label: format!("simulated time ({})", unit.symbol()),
        y_label: y_label.to_string(),
    };
    Some(LineChart {
        text,
        x,
        y,
        series,
        legend_at: SeriesLabelPosition::UpperRight,
    })
}

/// The timeline as a step function: each value holds until the next row's time.
fn step_points(
    timeline: &[TimelinePoint],
    quantity: ClusterQuantity,
    unit: TimeUnit,
) -> Vec<(f64, f64)> {
    let mut points = Vec::with_capacity(2 * timeline.len());
    let mut current: Option<(f64, f64)> = None;
    for point in timeline {
        let t = point.time_s / unit.seconds();
        let value = quantity.of(point);
        match current {
            // Rows at one time: only the last value holds, so the line does not go up and back
            // down on the spot (a thick line doubling back draws a spike).
            Some((at, _)) if at == t => {
                points.pop();
            }
            Some((_, held)) => points.push((t, held)),
            None => {}
        }
        points.push((t, value));
        current = Some((t, value));
    }
    points
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_hold_until_next_row() {
        let timeline = [
            TimelinePoint {
                time_s: 0.0,
                queued: 2,
                running: 1,
                busy_gpus: 1,
                total_gpus: 2,
                memory_used_gib: 20.0,
                memory_total_gib: 282.0,
            },
            TimelinePoint {
                time_s: 60.0,
                queued: 0,
                running: 2,
                busy_gpus: 2,
                total_gpus: 2,
                memory_used_gib: 40.0,
                memory_total_gib: 282.0,
            },
        ];
        let queue = step_points(&timeline, ClusterQuantity::QueueLength, TimeUnit::Minutes);
        assert_eq!(queue, vec![(0.0, 2.0), (1.0, 2.0), (1.0, 0.0)]);
        let util = step_points(&timeline, ClusterQuantity::Utilization, TimeUnit::Seconds);
        assert_eq!(util.last(), Some(&(60.0, 100.0)));
    }

    #[test]
    fn rows_at_one_time_keep_only_the_last_value() {
        let row = |time_s: f64, queued: u32| TimelinePoint {
            time_s,
            queued,
            running: 0,
            busy_gpus: 0,
            total_gpus: 1,
            memory_used_gib: 0.0,
            memory_total_gib: 1.0,
        };
        // Queue 3, then at t = 60 s three events: 5, 1, 4; then 2 at 120 s.
        let timeline = [
            row(0.0, 3),
            row(60.0, 5),
            row(60.0, 1),
            row(60.0, 4),
            row(120.0, 2),
        ];
        let queue = step_points(&timeline, ClusterQuantity::QueueLength, TimeUnit::Minutes);
        assert_eq!(
            queue,
            vec![(0.0, 3.0), (1.0, 3.0), (1.0, 4.0), (2.0, 4.0), (2.0, 2.0)]
        );
    }
}
