//! The shared line/scatter chart: series on linear or log axes, with title, axis labels and a
//! legend, sized to read at 100% zoom (1200x800, text 20 px and up).
use plotters::coord::Shift;
use plotters::coord::ranged1d::{AsRangedCoord, DefaultFormatting, KeyPointHint, ValueFormatter};
use plotters::prelude::*;

use crate::error::DrawError;
use crate::render::{FONT, Figure};

/// Title text size, pixels.
pub(crate) const TITLE_PX: u32 = 32;
/// Axis description text size, pixels.
pub(crate) const AXIS_LABEL_PX: u32 = 26;
/// Tick label and legend text size, pixels.
pub(crate) const TICK_PX: u32 = 22;

/// Tableau 10, then ten darker or distinct others: a figure of up to 20 series never repeats a
/// colour (calibration figures draw 17).
pub(crate) const PALETTE: [RGBColor; 20] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
    RGBColor(23, 55, 94),
    RGBColor(140, 70, 0),
    RGBColor(0, 100, 0),
    RGBColor(128, 0, 0),
    RGBColor(75, 0, 130),
    RGBColor(189, 158, 57),
    RGBColor(255, 20, 147),
    RGBColor(47, 79, 79),
    RGBColor(128, 128, 0),
    RGBColor(0, 128, 128),
];

/// The colour of the `idx`-th series.
pub(crate) fn series_color(idx: usize) -> RGBColor {
    PALETTE[idx % PALETTE.len()]
}

/// Whether series `idx` is drawn dashed: past the palette's colours, which then repeat, so that
/// no two of up to twice as many line series look the same.
pub(crate) fn series_dashed(idx: usize) -> bool {
    (idx / PALETTE.len()) % 2 == 1
}

/// Titles of a chart: what it shows and its axes, with units.
#[derive(Debug, Clone)]
pub struct ChartText {
    /// Figure title; say whether the numbers are measured, fitted or emulated.
    pub title: String,
    /// X axis description with its unit, e.g. `SM budget (% of SMs)`.
    pub x_label: String,
    /// Y axis description with its unit, e.g. `throughput (samples/s, measured)`.
    pub y_label: String,
}

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SeriesStyle {
    /// A solid line.
    Line,
    /// A solid line with a dot on each point.
    LineWithMarkers,
    /// Dots only.
    Markers,
    /// A dashed black reference line (e.g. y = x).
    Reference,
    /// Open black rings around points another series draws (e.g. the answers on a curve).
    Rings,
}

/// One labelled series of (x, y) points.
#[derive(Debug, Clone)]
pub(crate) struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
    pub style: SeriesStyle,
}

/// One axis: its range and whether it is logarithmic.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AxisRange {
    pub min: f64,
    pub max: f64,
    pub log: bool,
    /// Counts (queued jobs): ticks only at whole numbers.
    pub integer: bool,
}

impl AxisRange {
    /// A linear axis covering `values`, padded by 5% (a flat range gets a unit of room).
    pub fn linear(values: impl Iterator<Item = f64>, from_zero: bool) -> AxisRange {
        let (mut min, max) = min_max(values).unwrap_or((0.0, 1.0));
        if from_zero {
            min = min.min(0.0);
        }
        let pad = if max > min { 0.05 * (max - min) } else { 1.0 };
        let min = if from_zero && min >= 0.0 {
            0.0
        } else {
            min - pad
        };
        AxisRange {
            min,
            max: max + pad,
            log: false,
            integer: false,
        }
    }

    /// A log axis when the positive `values` span more than two decades, else a linear one.
    pub fn auto(values: &[f64], from_zero: bool) -> AxisRange {
        let positive = min_max(values.iter().copied().filter(|v| *v > 0.0));
        match positive {
            Some((lo, hi)) if hi / lo > 100.0 => AxisRange {
                min: lo / 1.5,
                max: hi * 1.5,
                log: true,
                integer: false,
            },
            _ => AxisRange::linear(values.iter().copied(), from_zero),
        }
    }

    /// How many tick labels to ask plotters for: one per whole number on a short count axis.
    pub fn n_labels(&self) -> usize {
        if self.integer && !self.log && self.max <= 10.0 {
            self.max.floor().max(1.0) as usize + 1
        } else {
            10
        }
    }

    /// Where a value sits on this axis: non-positive values of a log axis go to its left edge.
    pub fn clamp(&self, value: f64) -> f64 {
        if self.log { value.max(self.min) } else { value }
    }
}

/// Smallest and largest finite value, if any.
pub(crate) fn min_max(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    values
        .filter(|v| v.is_finite())
        .fold(None, |acc, v| match acc {
            None => Some((v, v)),
            Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
        })
}

/// Short tick text: 1500 -> "1.5k", 0.25 -> "0.25", 2e6 -> "2M".
pub(crate) fn format_tick(value: f64) -> String {
    let abs = value.abs();
    let (scaled, suffix) = match abs {
        a if a >= 1e9 => (value / 1e9, "G"),
        a if a >= 1e6 => (value / 1e6, "M"),
        a if a >= 1e4 => (value / 1e3, "k"),
        _ => (value, ""),
    };
    let text = if scaled.abs() >= 100.0 || scaled.fract().abs() < 1e-9 {
        format!("{scaled:.0}")
    } else if scaled.abs() >= 1.0 {
        format!("{scaled:.1}")
    } else if scaled.abs() >= 0.01 || scaled == 0.0 {
        format!("{scaled:.2}")
    } else {
        // Small ticks (a log axis's 0.001) keep two significant digits rather than read "0".
        let decimals = (-scaled.abs().log10()).ceil() as usize + 1;
        format!("{scaled:.decimals$}")
    };
    let text = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    };
    format!("{text}{suffix}")
}

/// A chart of labelled series on two axes.
#[derive(Debug, Clone)]
pub(crate) struct LineChart {
    pub text: ChartText,
    pub x: AxisRange,
    pub y: AxisRange,
    pub series: Vec<Series>,
    pub legend_at: SeriesLabelPosition,
}

impl Figure for LineChart {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), DrawError>
    where
        DB::ErrorType: 'static,
    {
        root.fill(&WHITE)?;
        // Past a few series a legend inside would cover the data: it goes beside the plot.
        let labelled = self.series.iter().filter(|s| !s.label.is_empty()).count();
        let (plot, beside) = if labelled > LEGEND_INSIDE_MAX {
            // The title spans the whole figure; the plot and the legend share what is below.
            let below = root
                .margin(12, 0, 0, 0)
                .titled(&self.text.title, (FONT, TITLE_PX))?;
            let (w, _) = below.dim_in_pixel();
            let chars = self.series.iter().map(|s| s.label.chars().count()).max();
            let legend_w = (60 + 12 * chars.unwrap_or(0) as u32).min(w / 2);
            let (plot, legend) = below.split_horizontally(w - legend_w);
            (plot, Some(legend))
        } else {
            (root.clone(), None)
        };
        let (x, y) = (self.x, self.y);
        match (x.log, y.log) {
            (false, false) => self.draw_on(&plot, x.min..x.max, y.min..y.max, beside.is_none()),
            (true, false) => self.draw_on(
                &plot,
                (x.min..x.max).log_scale(),
                y.min..y.max,
                beside.is_none(),
            ),
            (false, true) => self.draw_on(
                &plot,
                x.min..x.max,
                (y.min..y.max).log_scale(),
                beside.is_none(),
            ),
            (true, true) => self.draw_on(
                &plot,
                (x.min..x.max).log_scale(),
                (y.min..y.max).log_scale(),
                beside.is_none(),
            ),
        }?;
        if let Some(area) = beside {
            self.draw_legend_beside(&area)?;
        }
        Ok(())
    }
}

/// Points past which a series' line is drawn 1 px wide.
pub(crate) const DENSE_POINTS: usize = 300;

/// Most labelled series whose legend goes inside the plot.
pub(crate) const LEGEND_INSIDE_MAX: usize = 8;

impl LineChart {
    /// The colour each series is drawn in, and whether dashed: the palette in order, dashed on
    /// its second round ([`series_dashed`]); black for reference lines and rings.
    fn colors(&self) -> Vec<(RGBColor, bool)> {
        let mut idx = 0;
        self.series
            .iter()
            .map(|s| match s.style {
                SeriesStyle::Reference | SeriesStyle::Rings => (BLACK, false),
                _ => {
                    idx += 1;
                    (series_color(idx - 1), series_dashed(idx - 1))
                }
            })
            .collect()
    }

    /// The legend in its own area beside the plot: a swatch and the label per series.
    fn draw_legend_beside<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
    ) -> Result<(), DrawError>
    where
        DB::ErrorType: 'static,
    {
        let step = (TICK_PX + 6) as i32;
        let top = 30;
        for (i, (series, (color, dashed))) in self.series.iter().zip(self.colors()).enumerate() {
            if series.label.is_empty() {
                continue;
            }
            let y = top + i as i32 * step;
            for (from, to) in swatch_segments(10, dashed) {
                area.draw(&PathElement::new(
                    vec![(from, y), (to, y)],
                    color.stroke_width(4),
                ))?;
            }
            area.draw(&Text::new(
                series.label.clone(),
                (42, y - (TICK_PX as i32) / 2),
                (FONT, TICK_PX),
            ))?;
        }
        Ok(())
    }

    fn draw_on<DB, X, Y>(
        &self,
        root: &DrawingArea<DB, Shift>,
        x: X,
        y: Y,
        legend_inside: bool,
    ) -> Result<(), DrawError>
    where
        DB: DrawingBackend,
        DB::ErrorType: 'static,
        X: AsRangedCoord<Value = f64>,
        Y: AsRangedCoord<Value = f64>,
        X::CoordDescType: ValueFormatter<f64>,
        Y::CoordDescType: ValueFormatter<f64>,
    {
        let mut builder = ChartBuilder::on(root);
        if legend_inside {
            builder.caption(&self.text.title, (FONT, TITLE_PX));
        }
        let mut chart = builder
            .margin(20)
            .x_label_area_size(70)
            .y_label_area_size(100)
            .build_cartesian_2d(x, y)?;
        chart
            .configure_mesh()
            .x_desc(&self.text.x_label)
            .y_desc(&self.text.y_label)
            .axis_desc_style((FONT, AXIS_LABEL_PX))
            .label_style((FONT, TICK_PX))
            .x_labels(self.x.n_labels())
            .y_labels(self.y.n_labels())
            .x_label_formatter(&|v| format_tick(*v))
            .y_label_formatter(&|v| format_tick(*v))
            .light_line_style(WHITE.mix(0.0))
            .draw()?;
        for (series, (color, dashed)) in self.series.iter().zip(self.colors()) {
            self.draw_series(&mut chart, series, color, dashed)?;
        }
        if legend_inside && self.series.iter().any(|s| !s.label.is_empty()) {
            draw_legend(&mut chart, self.legend_corner())?;
        }
        Ok(())
    }

    /// The corner the legend covers least data in: `legend_at` unless another corner holds
    /// fewer of the series' points (in the axes' own scale, a box of 45% x 35% of the plot).
    pub(crate) fn legend_corner(&self) -> SeriesLabelPosition {
        let scale = |axis: &AxisRange, v: f64| {
            let (lo, hi, v) = if axis.log {
                (
                    axis.min.max(f64::MIN_POSITIVE).ln(),
                    axis.max.ln(),
                    v.max(f64::MIN_POSITIVE).ln(),
                )
            } else {
                (axis.min, axis.max, v)
            };
            if hi > lo { (v - lo) / (hi - lo) } else { 0.5 }
        };
        let points: Vec<(f64, f64)> = self
            .series
            .iter()
            .flat_map(|s| decimate(&s.points, 400))
            .map(|(x, y)| (scale(&self.x, x), scale(&self.y, y)))
            .collect();
        let count = |left: bool, upper: bool| {
            points
                .iter()
                .filter(|&&(x, y)| {
                    (if left { x <= 0.45 } else { x >= 0.55 })
                        && (if upper { y >= 0.65 } else { y <= 0.35 })
                })
                .count()
        };
        let corners = [
            (SeriesLabelPosition::UpperLeft, count(true, true)),
            (SeriesLabelPosition::UpperRight, count(false, true)),
            (SeriesLabelPosition::LowerRight, count(false, false)),
            (SeriesLabelPosition::LowerLeft, count(true, false)),
        ];
        // SeriesLabelPosition has no PartialEq; the four corners carry no data.
        let same = |a: &SeriesLabelPosition| {
            std::mem::discriminant(a) == std::mem::discriminant(&self.legend_at)
        };
        let preferred = corners
            .iter()
            .find(|(at, _)| same(at))
            .map_or(usize::MAX, |c| c.1);
        let (best, fewest) = corners
            .iter()
            .min_by_key(|(_, n)| *n)
            .map(|(at, n)| (at.clone(), *n))
            .unwrap_or((self.legend_at.clone(), 0));
        if fewest < preferred {
            best
        } else {
            self.legend_at.clone()
        }
    }

    fn draw_series<DB, X, Y>(
        &self,
        chart: &mut ChartContext<'_, DB, Cartesian2d<X, Y>>,
        series: &Series,
        color: RGBColor,
        dashed: bool,
    ) -> Result<(), DrawError>
    where
        DB: DrawingBackend,
        DB::ErrorType: 'static,
        X: Ranged<ValueType = f64> + ValueFormatter<f64>,
        Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
    {
        let points: Vec<(f64, f64)> = series
            .points
            .iter()
            .map(|&(px, py)| (self.x.clamp(px), self.y.clamp(py)))
            .collect();
        // Dense series that go up and down (timelines) are drawn thin: a thick polyline turning
        // sharply draws its corner as a spike past the data (and past the axes). Monotone ones
        // (CDFs) never turn back and keep the full width.
        let monotone = points.windows(2).all(|w| w[1].1 >= w[0].1)
            || points.windows(2).all(|w| w[1].1 <= w[0].1);
        let width = if points.len() > DENSE_POINTS && !monotone {
            1
        } else {
            3
        };
        let line_style = color.stroke_width(width);
        let anno = match series.style {
            SeriesStyle::Line | SeriesStyle::LineWithMarkers if dashed => {
                if series.style == SeriesStyle::LineWithMarkers {
                    chart.draw_series(points.iter().map(|&p| Circle::new(p, 6, color.filled())))?;
                }
                chart.draw_series(DashedLineSeries::new(points, 10, 6, line_style))?
            }
            SeriesStyle::Line => chart.draw_series(LineSeries::new(points, line_style))?,
            SeriesStyle::LineWithMarkers => {
                chart.draw_series(LineSeries::new(points.clone(), line_style))?;
                chart.draw_series(
                    points
                        .into_iter()
                        .map(|p| Circle::new(p, 6, color.filled())),
                )?
            }
            SeriesStyle::Markers => chart.draw_series(
                points
                    .into_iter()
                    .map(|p| Circle::new(p, 7, color.mix(0.8).filled())),
            )?,
            SeriesStyle::Reference => {
                chart.draw_series(DashedLineSeries::new(points, 12, 8, BLACK.stroke_width(2)))?
            }
            SeriesStyle::Rings => chart.draw_series(
                points
                    .into_iter()
                    .map(|p| Circle::new(p, 13, BLACK.stroke_width(3))),
            )?,
        };
        if series.label.is_empty() {
            return Ok(());
        }
        let anno = anno.label(series.label.as_str());
        match series.style {
            SeriesStyle::Markers => {
                anno.legend(move |(lx, ly)| Circle::new((lx + 9, ly), 7, color.filled()));
            }
            SeriesStyle::Reference => {
                anno.legend(|(lx, ly)| {
                    PathElement::new(vec![(lx, ly), (lx + 18, ly)], BLACK.stroke_width(2))
                });
            }
            SeriesStyle::Rings => {
                anno.legend(|(lx, ly)| Circle::new((lx + 9, ly), 9, BLACK.stroke_width(3)));
            }
            SeriesStyle::Line | SeriesStyle::LineWithMarkers if dashed => {
                // Two dashes, as the line is drawn.
                anno.legend(move |(lx, ly)| {
                    plotters::element::DashedPathElement::new(
                        vec![(lx, ly), (lx + 18, ly)],
                        7,
                        4,
                        color.stroke_width(4),
                    )
                });
            }
            SeriesStyle::Line | SeriesStyle::LineWithMarkers => {
                anno.legend(move |(lx, ly)| {
                    PathElement::new(vec![(lx, ly), (lx + 18, ly)], color.stroke_width(4))
                });
            }
        }
        Ok(())
    }
}

/// The legend swatch's segments from `x` (24 px): one line, or two dashes.
fn swatch_segments(x: i32, dashed: bool) -> Vec<(i32, i32)> {
    if dashed {
        vec![(x, x + 9), (x + 15, x + 24)]
    } else {
        vec![(x, x + 24)]
    }
}

/// An axis of `n` categories (bar groups, Gantt rows) at 0, 1, .., n-1, spanning
/// -0.5..n-0.5, with a tick at every category (every k-th past the hint's limit).
/// plotters' `with_key_points` cannot format f64 labels, hence this small coordinate.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CategoryAxis {
    pub n: usize,
}

impl Ranged for CategoryAxis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let span = self.n.max(1) as f64;
        let fraction = (value + 0.5) / span;
        limit.0 + (fraction * f64::from(limit.1 - limit.0)).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        let stride = self.n.div_ceil(hint.max_num_points().max(1)).max(1);
        (0..self.n).step_by(stride).map(|idx| idx as f64).collect()
    }

    fn range(&self) -> std::ops::Range<f64> {
        -0.5..self.n as f64 - 0.5
    }
}

/// Draws the legend of `chart`'s labelled series at `at`, in the style every figure shares.
pub(crate) fn draw_legend<'a, DB, CT>(
    chart: &mut ChartContext<'a, DB, CT>,
    at: SeriesLabelPosition,
) -> Result<(), DrawError>
where
    DB: DrawingBackend + 'a,
    DB::ErrorType: 'static,
    CT: plotters::coord::CoordTranslate,
{
    chart
        .configure_series_labels()
        .position(at)
        .label_font((FONT, TICK_PX))
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK.mix(0.5))
        .margin(15)
        .draw()?;
    Ok(())
}

/// The label of category `value` (a tick position), or "" off the categories.
pub(crate) fn category_label(labels: &[String], value: f64) -> String {
    let idx = value.round();
    if (value - idx).abs() > 1e-6 || idx < 0.0 {
        return String::new();
    }
    labels.get(idx as usize).cloned().unwrap_or_default()
}

/// Keeps at most about `max_points` of a step series, keeping each bucket's first, lowest,
/// highest and last point so that peaks survive (a month-long replay has millions of rows).
pub(crate) fn decimate(points: &[(f64, f64)], max_points: usize) -> Vec<(f64, f64)> {
    let n_buckets = (max_points / 4).max(1);
    if points.len() <= max_points {
        return points.to_vec();
    }
    let bucket_len = points.len().div_ceil(n_buckets);
    let mut kept = Vec::with_capacity(n_buckets * 4);
    for bucket in points.chunks(bucket_len) {
        if bucket.is_empty() {
            continue;
        }
        let by_y = |a: &(usize, &(f64, f64)), b: &(usize, &(f64, f64))| a.1.1.total_cmp(&b.1.1);
        let low = bucket.iter().enumerate().min_by(by_y).map_or(0, |(i, _)| i);
        let high = bucket.iter().enumerate().max_by(by_y).map_or(0, |(i, _)| i);
        // In the points' own order (not sorted by x): a step's rise and fall at one time stay
        // in sequence, so the line never doubles back on itself (which draws a spike).
        let mut picks = [0, low, high, bucket.len() - 1];
        picks.sort_unstable();
        kept.extend(picks.iter().map(|&i| bucket[i]));
    }
    kept.dedup_by(|a, b| a == b);
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn past_the_palette_series_are_dashed_so_no_two_of_forty_look_alike() {
        let looks: Vec<(RGBColor, bool)> = (0..40)
            .map(|i| (series_color(i), series_dashed(i)))
            .collect();
        for (i, a) in looks.iter().enumerate() {
            for b in &looks[i + 1..] {
                assert!(a != b, "two of the first 40 series are drawn alike");
            }
        }
        assert!(!series_dashed(19) && series_dashed(20) && series_dashed(39) && !series_dashed(40));
        assert_eq!(swatch_segments(10, false), vec![(10, 34)]);
        assert_eq!(swatch_segments(10, true).len(), 2);
    }

    fn chart_of(points: Vec<(f64, f64)>, preferred: SeriesLabelPosition) -> LineChart {
        let axis = |min, max| AxisRange {
            min,
            max,
            log: false,
            integer: false,
        };
        LineChart {
            text: ChartText {
                title: String::new(),
                x_label: String::new(),
                y_label: String::new(),
            },
            x: axis(0.0, 10.0),
            y: axis(0.0, 10.0),
            series: vec![Series {
                label: "a".into(),
                points,
                style: SeriesStyle::Line,
            }],
            legend_at: preferred,
        }
    }

    #[test]
    fn the_legend_goes_to_the_emptiest_corner_unless_the_preferred_one_is_as_empty() {
        let name = |p: SeriesLabelPosition| format!("{p:?}");
        // A curve falling from the upper left to the lower right, as plan's curves do: the upper
        // right and lower left are empty; the preferred upper left is not.
        let falling: Vec<(f64, f64)> = (0..=10)
            .map(|i| (f64::from(i), 10.0 - f64::from(i)))
            .collect();
        let chart = chart_of(falling.clone(), SeriesLabelPosition::UpperLeft);
        assert_eq!(
            name(chart.legend_corner()),
            name(SeriesLabelPosition::UpperRight)
        );
        // Preferred and empty: kept.
        let chart = chart_of(falling, SeriesLabelPosition::LowerLeft);
        assert_eq!(
            name(chart.legend_corner()),
            name(SeriesLabelPosition::LowerLeft)
        );
        // Everything in the lower right: any other corner; the preferred upper left is empty.
        let cluster = vec![(9.0, 1.0), (9.5, 0.5), (8.0, 2.0)];
        let chart = chart_of(cluster, SeriesLabelPosition::LowerRight);
        assert_eq!(
            name(chart.legend_corner()),
            name(SeriesLabelPosition::UpperLeft)
        );
    }

    #[test]
    fn decimated_steps_keep_their_order_and_never_double_back() {
        // A step function alternating 100 and 95 every second for 10,000 s: rises and falls
        // at one time, in that order.
        let mut steps = Vec::new();
        for i in 0..10_000 {
            let (t, v) = (f64::from(i), if i % 2 == 0 { 100.0 } else { 95.0 });
            let before = if i % 2 == 0 { 95.0 } else { 100.0 };
            steps.push((t, before));
            steps.push((t, v));
        }
        let kept = decimate(&steps, 400);
        assert!(kept.len() <= 400 + 4, "{}", kept.len());
        // Kept in the input's order: x never decreases.
        assert!(kept.windows(2).all(|w| w[1].0 >= w[0].0));
        // Within one x, the points are the input's in its order (never a sort by y).
        let index = |p: &(f64, f64)| steps.iter().position(|q| q == p).unwrap();
        for w in kept.windows(2).filter(|w| w[0].0 == w[1].0) {
            assert!(index(&w[0]) < index(&w[1]), "{w:?}");
        }
    }

    #[test]
    fn ticks_are_short() {
        assert_eq!(format_tick(1500.0), "1500");
        assert_eq!(format_tick(15_000.0), "15k");
        assert_eq!(format_tick(2.5e6), "2.5M");
        assert_eq!(format_tick(0.25), "0.25");
        assert_eq!(format_tick(0.001), "0.001");
        assert_eq!(format_tick(0.0025), "0.0025");
        assert_eq!(format_tick(0.0), "0");
        assert_eq!(format_tick(3.0), "3");
        assert_eq!(format_tick(12.5), "12.5");
    }

    #[test]
    fn log_axis_only_past_two_decades() {
        assert!(!AxisRange::auto(&[1.0, 50.0], true).log);
        assert!(AxisRange::auto(&[0.0, 1.0, 500.0], true).log);
    }

    #[test]
    fn decimation_keeps_peaks_and_ends() {
        let mut points: Vec<(f64, f64)> = (0..10_000).map(|i| (f64::from(i), 1.0)).collect();
        points[5_000].1 = 99.0;
        let kept = decimate(&points, 400);
        assert!(kept.len() <= 400, "{}", kept.len());
        assert!(kept.iter().any(|p| p.1 == 99.0));
        assert_eq!(kept.first(), points.first());
        assert_eq!(kept.last(), points.last());
    }
}
