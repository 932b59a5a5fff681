//! One figure per summary figure (mean and p95 JCT, makespan, energy) comparing result folders,
//! e.g. a policy sweep's variants: a horizontal bar per folder, coloured by its sharing mode,
//! with the value at the bar's end. Read from each folder's `summary.json`.
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::chart::{
    AXIS_LABEL_PX, CategoryAxis, TICK_PX, TITLE_PX, category_label, draw_legend, format_tick,
    series_color,
};
use crate::error::DrawError;
use crate::figures::provenance;
use crate::render::{FONT, Figure};
use crate::results::ResultFolder;

/// A figure of `summary.json` that the comparison draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SummaryFigure {
    MeanJct,
    P95Jct,
    Makespan,
    Energy,
}

impl SummaryFigure {
    pub(crate) const ALL: [SummaryFigure; 4] = [
        SummaryFigure::MeanJct,
        SummaryFigure::P95Jct,
        SummaryFigure::Makespan,
        SummaryFigure::Energy,
    ];

    /// File stem of its figure.
    pub(crate) fn stem(self) -> &'static str {
        match self {
            SummaryFigure::MeanJct => "variants_mean_jct",
            SummaryFigure::P95Jct => "variants_p95_jct",
            SummaryFigure::Makespan => "variants_makespan",
            SummaryFigure::Energy => "variants_energy",
        }
    }

    fn title(self) -> &'static str {
        match self {
            SummaryFigure::MeanJct => "Mean job completion time",
            SummaryFigure::P95Jct => "95th-percentile job completion time",
            SummaryFigure::Makespan => "Makespan",
            SummaryFigure::Energy => "Cluster energy",
        }
    }

    fn axis(self) -> &'static str {
        match self {
            SummaryFigure::MeanJct => "mean JCT (hours, emulated)",
            SummaryFigure::P95Jct => "p95 JCT (hours, emulated)",
            SummaryFigure::Makespan => "makespan (hours, emulated)",
            SummaryFigure::Energy => {
                "energy (MWh: every GPU, busy or idle, to the makespan; fitted power model)"
            }
        }
    }

    /// Its value for `folder` in the axis's unit, or `None` when the summary lacks it (energy
    /// unknown, or written before energy existed).
    fn value(self, folder: &ResultFolder) -> Option<f64> {
        let s = &folder.summary;
        let hours = |seconds: f64| Some(seconds / 3600.0).filter(|v| v.is_finite());
        match self {
            SummaryFigure::MeanJct => hours(s.jct_s.mean),
            SummaryFigure::P95Jct => hours(s.jct_s.p95),
            SummaryFigure::Makespan => hours(s.makespan_s),
            SummaryFigure::Energy => s
                .energy
                .as_ref()
                .and_then(|e| e.energy_kwh)
                .map(|kwh| kwh / 1000.0),
        }
    }
}

/// The chart: one bar per folder, top to bottom in folder order.
#[derive(Debug, Clone)]
pub(crate) struct VariantBars {
    title: String,
    x_desc: String,
    /// (folder label, value, sharing mode).
    rows: Vec<(String, f64, String)>,
    /// Sharing modes in legend (and colour) order.
    modes: Vec<String>,
}

/// The chart of `figure` over `folders`, or why it cannot be drawn (a folder lacks the value).
pub(crate) fn variant_bars(
    folders: &[ResultFolder],
    figure: SummaryFigure,
) -> Result<VariantBars, String> {
    let mut rows = Vec::with_capacity(folders.len());
    let mut modes: Vec<String> = Vec::new();
    for folder in folders {
        let Some(value) = figure.value(folder) else {
            return Err(format!(
                "{}: `{}` has no such figure in summary.json",
                figure.stem(),
                folder.label
            ));
        };
        let mut folder_modes: Vec<&str> = folder
            .summary
            .labels
            .cluster
            .iter()
            .map(|g| g.mode.as_str())
            .collect();
        folder_modes.dedup();
        let mode = folder_modes.join("+");
        if !modes.contains(&mode) {
            modes.push(mode.clone());
        }
        rows.push((folder.label.clone(), value, mode));
    }
    Ok(VariantBars {
        title: format!("{} per variant ({})", figure.title(), provenance(folders)),
        x_desc: figure.axis().to_string(),
        rows,
        modes,
    })
}

impl Figure for VariantBars {
    fn size(&self) -> (u32, u32) {
        // About 34 px per bar so that the labels (22 px) never overlap.
        (1200, (200 + 34 * self.rows.len() as u32).max(800))
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), DrawError>
    where
        DB::ErrorType: 'static,
    {
        root.fill(&WHITE)?;
        let n = self.rows.len();
        let max_value = self.rows.iter().map(|r| r.1).fold(0.0, f64::max);
        // Room right of the longest bar for its value.
        let x_max = if max_value > 0.0 {
            max_value * 1.18
        } else {
            1.0
        };
        let label_px = self
            .rows
            .iter()
            .map(|r| r.0.chars().count())
            .max()
            .unwrap_or(0) as u32
            * 13
            + 20;
        let mut chart = ChartBuilder::on(root)
            .caption(&self.title, (FONT, TITLE_PX))
            .margin(20)
            .x_label_area_size(70)
            .y_label_area_size(label_px.clamp(120, 420))
            .build_cartesian_2d(0.0..x_max, CategoryAxis { n })?;
        // Row 0 at the top: the category axis counts upwards, so rows are drawn reversed.
        let labels: Vec<String> = self.rows.iter().rev().map(|r| r.0.clone()).collect();
        let row_label = |v: &f64| category_label(&labels, *v);
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(n)
            .x_desc(&self.x_desc)
            .axis_desc_style((FONT, AXIS_LABEL_PX))
            .label_style((FONT, TICK_PX))
            .y_label_formatter(&row_label)
            .x_label_formatter(&|v| format_tick(*v))
            .draw()?;
        let value_style = TextStyle::from((FONT, TICK_PX)).pos(Pos::new(HPos::Left, VPos::Center));
        for (mode_idx, mode) in self.modes.iter().enumerate() {
            let color = series_color(mode_idx);
            let bars: Vec<(f64, f64)> = self
                .rows
                .iter()
                .enumerate()
                .filter(|(_, r)| &r.2 == mode)
                .map(|(idx, r)| ((n - 1 - idx) as f64, r.1))
                .collect();
            chart
                .draw_series(bars.iter().map(|&(y, v)| {
                    Rectangle::new([(0.0, y - 0.38), (v, y + 0.38)], color.filled())
                }))?
                .label(mode.as_str())
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 9), (x + 18, y + 9)], color.filled())
                });
            chart.draw_series(bars.iter().map(|&(y, v)| {
                Text::new(format!(" {}", format_tick(v)), (v, y), value_style.clone())
            }))?;
        }
        draw_legend(&mut chart, SeriesLabelPosition::LowerRight)?;
        Ok(())
    }
}
