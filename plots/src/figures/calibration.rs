//! Plain-data charts for calibration: measured vs predicted scatter with the y = x line, and
//! curves (e.g. throughput vs SM budget per model). They take numbers, not colo-sim types.
use std::path::PathBuf;

use plotters::prelude::SeriesLabelPosition;

use crate::chart::{AxisRange, ChartText, LineChart, Series, SeriesStyle, min_max};
use crate::error::PlotError;
use crate::render::{FigureOut, write_figure};

/// One calibration sample: what was measured and what the model predicted for it.
#[derive(Debug, Clone, PartialEq)]
pub struct ScatterPoint {
    /// Legend group, e.g. the sharing mode (`mps`) or the model.
    pub label: String,
    /// Measured value, e.g. samples/s.
    pub measured: f64,
    /// Predicted value in the same unit.
    pub predicted: f64,
}

/// One labelled curve of (x, y) points, e.g. one model's throughput per SM budget.
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    /// Legend text.
    pub label: String,
    /// Points; drawn in x order.
    pub points: Vec<(f64, f64)>,
    /// How it is drawn.
    pub kind: CurveKind,
}

/// How [`plot_curves`] draws a curve.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CurveKind {
    /// A coloured line with a dot on each point.
    #[default]
    Line,
    /// A dashed black line (a target, a bound).
    Reference,
    /// Open black rings around points of other curves (answers), no line.
    Rings,
}

/// Draws measured (x) against predicted (y), one colour per label, with the y = x line; both
/// axes turn logarithmic when the values span more than two decades.
///
/// `text` gives the title and axis labels (say "measured" and "predicted (fitted)" there).
/// Fails with [`PlotError::NoData`] when no point is finite.
pub fn plot_measured_vs_predicted(
    points: &[ScatterPoint],
    text: &ChartText,
    out: &FigureOut,
) -> Result<Vec<PathBuf>, PlotError> {
    let values: Vec<f64> = points
        .iter()
        .flat_map(|p| [p.measured, p.predicted])
        .collect();
    let Some((lo, hi)) = min_max(values.iter().copied()) else {
        return Err(no_data(out, "no finite measured/predicted point"));
    };
    let axis = AxisRange::auto(&values, true);
    let mut labels: Vec<&str> = Vec::new();
    for point in points {
        if !labels.contains(&point.label.as_str()) {
            labels.push(&point.label);
        }
    }
    let mut series: Vec<Series> = labels
        .iter()
        .map(|label| Series {
            label: (*label).to_string(),
            points: points
                .iter()
                .filter(|p| p.label == *label)
                .map(|p| (p.measured, p.predicted))
                .collect(),
            style: SeriesStyle::Markers,
        })
        .collect();
    let (line_lo, line_hi) = if axis.log {
        (axis.min, axis.max)
    } else {
        (lo.min(0.0), hi * 1.05)
    };
    series.push(Series {
        label: "y = x (perfect prediction)".to_string(),
        points: vec![(line_lo, line_lo), (line_hi, line_hi)],
        style: SeriesStyle::Reference,
    });
    let chart = LineChart {
        text: text.clone(),
        x: axis,
        y: axis,
        series,
        legend_at: SeriesLabelPosition::UpperLeft,
    };
    write_figure(&chart, out)
}

/// Draws each curve as a line with a dot per point (y axis from zero).
///
/// Fails with [`PlotError::NoData`] when no curve has a point.
pub fn plot_curves(
    curves: &[Curve],
    text: &ChartText,
    out: &FigureOut,
) -> Result<Vec<PathBuf>, PlotError> {
    let xs = curves.iter().flat_map(|c| c.points.iter().map(|p| p.0));
    let ys = curves.iter().flat_map(|c| c.points.iter().map(|p| p.1));
    if min_max(xs.clone()).is_none() {
        return Err(no_data(out, "no curve has a finite point"));
    }
    let series = curves
        .iter()
        .map(|curve| {
            let mut points = curve.points.clone();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            Series {
                label: curve.label.clone(),
                points,
                style: match curve.kind {
                    CurveKind::Line => SeriesStyle::LineWithMarkers,
                    CurveKind::Reference => SeriesStyle::Reference,
                    CurveKind::Rings => SeriesStyle::Rings,
                },
            }
        })
        .collect();
    let chart = LineChart {
        text: text.clone(),
        x: AxisRange::linear(xs, true),
        y: AxisRange::linear(ys, true),
        series,
        legend_at: SeriesLabelPosition::UpperLeft,
    };
    write_figure(&chart, out)
}

fn no_data(out: &FigureOut, reason: &str) -> PlotError {
    PlotError::NoData {
        path: out.dir.join(&out.stem),
        reason: reason.to_string(),
    }
}
