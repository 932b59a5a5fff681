//! colo-plots: figures drawn from colo's result files.
#![doc = include_str!("../README.md")]
#![warn(clippy::print_stdout)]

mod chart;
mod error;
mod figures;
mod render;
mod results;

use std::path::{Path, PathBuf};

pub use chart::ChartText;
pub use error::{DrawError, PlotError};
pub use figures::bars::{BarGroup, plot_bars};
pub use figures::calibration::{
    Curve, CurveKind, ScatterPoint, plot_curves, plot_measured_vs_predicted,
};
pub use render::{FigureOut, Format};
pub use results::{
    JobRecord, JobStatus, Placement, ResultFolder, Summary, TimelinePoint, load_results,
    read_result_folder,
};

use figures::cdf::{JobTime, cdf_chart};
use figures::timeline::{ClusterQuantity, timeline_chart};
use render::write_figure;

/// What `colo plot` wrote, and which figures it skipped for lack of data.
#[derive(Debug, Default, Clone)]
pub struct PlotReport {
    /// Files written, in drawing order.
    pub written: Vec<PathBuf>,
    /// One line per figure not drawn, saying why.
    pub skipped: Vec<String>,
}

/// Draws every results figure of `folders` into `out_dir`: `jct_cdf`, `wait_cdf`,
/// `queue_length`, `utilization`, `throughput` (all folders overlaid or grouped); with several
/// folders `variants_mean_jct`, `variants_p95_jct`, `variants_makespan` and `variants_energy`
/// (one bar per folder; energy only when every summary has it); and `occupancy` per folder
/// (`occupancy_<label>` when there are several folders).
pub fn plot_results(
    folders: &[ResultFolder],
    out_dir: &Path,
    format: Format,
) -> Result<PlotReport, PlotError> {
    let out = |stem: &str| FigureOut {
        dir: out_dir.to_path_buf(),
        stem: stem.to_string(),
        format,
    };
    let mut report = PlotReport::default();
    let (no_job, no_timeline) = ("no completed job", "empty timeline.csv");
    let line_charts = [
        ("jct_cdf", cdf_chart(folders, JobTime::Completion), no_job),
        ("wait_cdf", cdf_chart(folders, JobTime::Wait), no_job),
        (
            "queue_length",
            timeline_chart(folders, ClusterQuantity::QueueLength),
            no_timeline,
        ),
        (
            "utilization",
            timeline_chart(folders, ClusterQuantity::Utilization),
            no_timeline,
        ),
    ];
    for (stem, chart, why_empty) in line_charts {
        match chart {
            Some(chart) => report.written.extend(write_figure(&chart, &out(stem))?),
            None => report
                .skipped
                .push(format!("{stem}: {why_empty} in any folder")),
        }
    }
    let bars = figures::bars::throughput_bars(folders);
    report
        .written
        .extend(write_figure(&bars, &out("throughput"))?);
    if folders.len() > 1 {
        for figure in figures::variants::SummaryFigure::ALL {
            match figures::variants::variant_bars(folders, figure) {
                Ok(chart) => report
                    .written
                    .extend(write_figure(&chart, &out(figure.stem()))?),
                Err(why) => report.skipped.push(why),
            }
        }
    }
    for folder in folders {
        let stem = match folders.len() {
            1 => "occupancy".to_string(),
            _ => format!("occupancy_{}", file_safe(&folder.label)),
        };
        let chart = figures::occupancy::occupancy_chart(folder);
        report.written.extend(write_figure(&chart, &out(&stem))?);
    }
    Ok(report)
}

/// A label made safe for a file name: anything but letters, digits, `-`, `_`, `.` becomes `_`.
fn file_safe(label: &str) -> String {
    label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;
