//! Grouped bars: throughput per result folder (one bar per sharing mode in the folder, from
//! `jobs.csv`, plus the folder's total from `summary.json` when it mixes modes), and the same
//! chart from plain numbers ([`plot_bars`]).
use std::path::PathBuf;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::chart::{
    AXIS_LABEL_PX, CategoryAxis, ChartText, TICK_PX, TITLE_PX, category_label, draw_legend,
    format_tick, series_color,
};
use crate::error::{DrawError, PlotError};
use crate::figures::provenance;
use crate::render::{FONT, Figure, FigureOut, write_figure};
use crate::results::{JobStatus, ResultFolder};

/// Name of the bar holding a folder's total throughput.
const TOTAL: &str = "all modes";

/// One group of bars, e.g. a result folder or a job set.
#[derive(Debug, Clone, PartialEq)]
pub struct BarGroup {
    /// Text under the group.
    pub label: String,
    /// (series name, value), in legend order; a series may be absent from a group.
    pub bars: Vec<(String, f64)>,
}

/// The grouped bar chart.
#[derive(Debug, Clone)]
pub(crate) struct ThroughputBars {
    title: String,
    x_desc: String,
    y_desc: String,
    groups: Vec<BarGroup>,
    /// Series names in legend (and colour) order.
    series: Vec<String>,
}

/// Draws `groups` as grouped bars, one colour per series name (in first-seen order), each bar
/// with its value on top; the y axis starts at zero.
///
/// Fails with [`PlotError::NoData`] when there is no group.
pub fn plot_bars(
    groups: &[BarGroup],
    text: &ChartText,
    out: &FigureOut,
) -> Result<Vec<PathBuf>, PlotError> {
    if groups.is_empty() {
        return Err(PlotError::NoData {
            path: out.dir.join(&out.stem),
            reason: "no bar group".to_string(),
        });
    }
    let mut series: Vec<String> = Vec::new();
    for (name, _) in groups.iter().flat_map(|g| g.bars.iter()) {
        if !series.contains(name) {
            series.push(name.clone());
        }
    }
    let chart = ThroughputBars {
        title: text.title.clone(),
        x_desc: text.x_label.clone(),
        y_desc: text.y_label.clone(),
        groups: groups.to_vec(),
        series,
    };
    write_figure(&chart, out)
}

/// Samples/s of each mode's completed jobs over the folder's makespan, plus the total when
/// the folder mixes modes.
fn group_of(folder: &ResultFolder) -> BarGroup {
    let mut per_mode: Vec<(String, f64)> = Vec::new();
    for job in folder
        .jobs
        .iter()
        .filter(|job| job.status == JobStatus::Completed)
    {
        let mode = job.mode.map_or_else(String::new, |m| m.to_string());
        match per_mode.iter_mut().find(|(m, _)| *m == mode) {
            Some((_, samples)) => *samples += job.samples,
            None => per_mode.push((mode, job.samples)),
        }
    }
    per_mode.sort_by(|a, b| a.0.cmp(&b.0));
    let makespan_s = folder.summary.makespan_s;
    let mut bars: Vec<(String, f64)> = per_mode
        .into_iter()
        .map(|(mode, samples)| {
            (
                mode,
                if makespan_s > 0.0 {
                    samples / makespan_s
                } else {
                    0.0
                },
            )
        })
        .collect();
    if bars.len() != 1 {
        bars.push((TOTAL.to_string(), folder.summary.throughput_samples_per_s));
    }
    BarGroup {
        label: folder.label.clone(),
        bars,
    }
}

/// The throughput chart of `folders` (one group each).
pub(crate) fn throughput_bars(folders: &[ResultFolder]) -> ThroughputBars {
    let groups: Vec<BarGroup> = folders.iter().map(group_of).collect();
    let mut series: Vec<String> = Vec::new();
    for (name, _) in groups.iter().flat_map(|g| g.bars.iter()) {
        if !series.contains(name) {
            series.push(name.clone());
        }
    }
    if let Some(idx) = series.iter().position(|s| s == TOTAL) {
        let total = series.remove(idx);
        series.push(total);
    }
    let title = format!(
        "Cluster throughput by sharing mode ({})",
        provenance(folders)
    );
    ThroughputBars {
        title,
        x_desc: "result folder (variant)".to_string(),
        y_desc: "throughput (samples/s, emulated)".to_string(),
        groups,
        series,
    }
}

impl Figure for ThroughputBars {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), DrawError>
    where
        DB::ErrorType: 'static,
    {
        root.fill(&WHITE)?;
        let n_groups = self.groups.len();
        let max_value = self
            .groups
            .iter()
            .flat_map(|g| g.bars.iter().map(|b| b.1))
            .fold(0.0, f64::max);
        // Headroom above the tallest bar for its value and the legend box (about 6% per entry).
        let headroom = 1.15 + 0.07 * self.series.len() as f64;
        let y_max = if max_value > 0.0 {
            max_value * headroom
        } else {
            1.0
        };
        let mut chart = ChartBuilder::on(root)
            .caption(&self.title, (FONT, TITLE_PX))
            .margin(20)
            .x_label_area_size(70)
            .y_label_area_size(100)
            .build_cartesian_2d(CategoryAxis { n: n_groups }, 0.0..y_max)?;
        let group_labels: Vec<String> = self.groups.iter().map(|g| g.label.clone()).collect();
        let group_label = |v: &f64| category_label(&group_labels, *v);
        chart
            .configure_mesh()
            .disable_x_mesh()
            .light_line_style(WHITE.mix(0.0))
            .x_labels(n_groups)
            .x_desc(&self.x_desc)
            .y_desc(&self.y_desc)
            .axis_desc_style((FONT, AXIS_LABEL_PX))
            .label_style((FONT, TICK_PX))
            .x_label_formatter(&group_label)
            .y_label_formatter(&|v| format_tick(*v))
            .draw()?;
        for (series_idx, name) in self.series.iter().enumerate() {
            self.draw_bar_series(&mut chart, series_idx, name)?;
        }
        draw_legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        Ok(())
    }
}

impl ThroughputBars {
    /// Left and right x of series `name`'s bar in group `group_idx`, and its value. A group's
    /// bars sit side by side, centred on the group, each as wide as in the fullest group.
    fn bar_span(&self, group_idx: usize, group: &BarGroup, name: &str) -> Option<(f64, f64, f64)> {
        let slot = group.bars.iter().position(|(s, _)| s == name)?;
        let widest = self
            .groups
            .iter()
            .map(|g| g.bars.len())
            .max()
            .unwrap_or(1)
            .max(1);
        let slot_width = 0.8 / widest as f64;
        let left = group_idx as f64 - slot_width * group.bars.len() as f64 / 2.0
            + slot as f64 * slot_width;
        Some((
            left + 0.04 * slot_width,
            left + 0.96 * slot_width,
            group.bars[slot].1,
        ))
    }

    /// Draws the bars of one series across all groups, with its value on top.
    fn draw_bar_series<DB, X>(
        &self,
        chart: &mut ChartContext<'_, DB, Cartesian2d<X, plotters::coord::types::RangedCoordf64>>,
        series_idx: usize,
        name: &str,
    ) -> Result<(), DrawError>
    where
        DB: DrawingBackend,
        DB::ErrorType: 'static,
        X: Ranged<ValueType = f64> + plotters::coord::ranged1d::ValueFormatter<f64>,
    {
        let color = series_color(series_idx);
        let mut rects = Vec::new();
        let mut labels = Vec::new();
        for (group_idx, group) in self.groups.iter().enumerate() {
            let Some((left, right, value)) = self.bar_span(group_idx, group, name) else {
                continue;
            };
            rects.push(Rectangle::new(
                [(left, 0.0), (right, value)],
                color.filled(),
            ));
            labels.push(((left + right) / 2.0, value));
        }
        chart
            .draw_series(rects)?
            .label(name)
            .legend(move |(x, y)| Rectangle::new([(x, y - 9), (x + 18, y + 9)], color.filled()));
        let value_style =
            TextStyle::from((FONT, TICK_PX)).pos(Pos::new(HPos::Center, VPos::Bottom));
        chart.draw_series(
            labels
                .into_iter()
                .map(|(x, v)| Text::new(format_tick(v), (x, v), value_style.clone())),
        )?;
        Ok(())
    }
}
