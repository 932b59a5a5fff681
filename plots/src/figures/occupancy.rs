//! Per-GPU occupancy over time (a Gantt chart): one row per GPU, or per MIG slice of a GPU,
//! and one coloured bar per job from `placements.csv`. Jobs that share a row at the same time
//! (time-slicing, MPS) are stacked in lanes within the row.
use std::collections::BTreeMap;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::chart::{
    AXIS_LABEL_PX, CategoryAxis, TICK_PX, TITLE_PX, category_label, format_tick, series_color,
};
use crate::error::DrawError;
use crate::figures::{TimeUnit, provenance};
use crate::render::{FONT, Figure};
use crate::results::ResultFolder;

/// Most rows drawn; past it whole GPUs are dropped from the end and the title says so.
pub(crate) const MAX_ROWS: usize = 64;
/// Pixels per row, so that a 20 px label fits.
const ROW_PX: u32 = 34;

/// One job's bar: which job, from when to when (in the axis unit), and its lane in the row.
#[derive(Debug, Clone, Copy)]
struct Bar {
    job: u32,
    start: f64,
    end: f64,
    lane: usize,
}

/// One row: a GPU or a MIG slice of it.
#[derive(Debug, Clone)]
struct Row {
    label: String,
    bars: Vec<Bar>,
    n_lanes: usize,
}

/// The Gantt chart of one result folder.
#[derive(Debug, Clone)]
pub(crate) struct Occupancy {
    title: String,
    x_label: String,
    end: f64,
    rows: Vec<Row>,
}

/// Row key: GPU, then whole-GPU row before slices, slices by their start index.
type RowKey = (u32, Option<(u32, String)>);

fn row_key(gpu: u32, slice: Option<&str>) -> RowKey {
    let slice_key = slice.map(|name| {
        let start = name
            .rsplit_once('@')
            .and_then(|(_, idx)| idx.parse().ok())
            .unwrap_or(0);
        (start, name.to_string())
    });
    (gpu, slice_key)
}

/// The occupancy chart of `folder`.
pub(crate) fn occupancy_chart(folder: &ResultFolder) -> Occupancy {
    let end_s = folder
        .placements
        .iter()
        .map(|p| p.end_s)
        .fold(0.0, f64::max);
    let unit = TimeUnit::for_span(end_s);
    let mut spans: BTreeMap<RowKey, Vec<(u32, f64, f64)>> = BTreeMap::new();
    let total_gpus = folder
        .timeline
        .iter()
        .map(|p| p.total_gpus)
        .max()
        .unwrap_or(0);
    for gpu in 0..total_gpus {
        spans.entry(row_key(gpu, None)).or_default();
    }
    for placement in &folder.placements {
        let (start, end) = (
            placement.start_s / unit.seconds(),
            placement.end_s / unit.seconds(),
        );
        spans
            .entry(row_key(placement.gpu, placement.slice.as_deref()))
            .or_default()
            .push((placement.job, start, end));
    }
    // A GPU split into slices has no whole-GPU row unless a job used the whole GPU.
    let sliced: Vec<u32> = spans
        .keys()
        .filter(|k| k.1.is_some())
        .map(|k| k.0)
        .collect();
    spans.retain(|key, jobs| key.1.is_some() || !jobs.is_empty() || !sliced.contains(&key.0));
    let n_gpus = spans
        .keys()
        .map(|k| k.0)
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    let rows = cap_rows(
        spans
            .into_iter()
            .map(|(key, jobs)| lay_out_row(&key, jobs))
            .collect(),
    );
    let shown_gpus = rows
        .iter()
        .map(|r| r.0)
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    let truncated = if shown_gpus < n_gpus {
        format!(", first {shown_gpus} of {n_gpus} GPUs")
    } else {
        String::new()
    };
    Occupancy {
        title: format!(
            "GPU occupancy: {} ({}{truncated})",
            folder.label,
            provenance(std::slice::from_ref(folder))
        ),
        x_label: format!(
            "simulated time ({}); one colour per job, co-located jobs stacked",
            unit.symbol()
        ),
        end: (end_s / unit.seconds()).max(1e-9),
        rows: rows.into_iter().map(|(_, row)| row).collect(),
    }
}

/// Keeps whole GPUs while the row count stays within [`MAX_ROWS`] (at least one GPU).
fn cap_rows(rows: Vec<(u32, Row)>) -> Vec<(u32, Row)> {
    let mut kept: Vec<(u32, Row)> = Vec::new();
    let mut idx = 0;
    while idx < rows.len() {
        let gpu = rows[idx].0;
        let n_same = rows[idx..].iter().take_while(|r| r.0 == gpu).count();
        if !kept.is_empty() && kept.len() + n_same > MAX_ROWS {
            break;
        }
        kept.extend(rows[idx..idx + n_same].iter().cloned());
        idx += n_same;
    }
    kept
}

/// Places each job of a row in the first lane free at its start (greedy interval colouring).
fn lay_out_row(key: &RowKey, mut jobs: Vec<(u32, f64, f64)>) -> (u32, Row) {
    jobs.sort_by(|a, b| a.1.total_cmp(&b.1));
    let mut lane_ends: Vec<f64> = Vec::new();
    let mut bars = Vec::with_capacity(jobs.len());
    for (job, start, end) in jobs {
        let free = lane_ends
            .iter()
            .position(|lane_end| *lane_end <= start + 1e-12);
        let lane = free.unwrap_or(lane_ends.len());
        if lane == lane_ends.len() {
            lane_ends.push(end);
        } else {
            lane_ends[lane] = end;
        }
        bars.push(Bar {
            job,
            start,
            end,
            lane,
        });
    }
    let label = match &key.1 {
        None => format!("GPU {}", key.0),
        Some((_, slice)) => format!("GPU {} {slice}", key.0),
    };
    (
        key.0,
        Row {
            label,
            bars,
            n_lanes: lane_ends.len().max(1),
        },
    )
}

impl Figure for Occupancy {
    fn size(&self) -> (u32, u32) {
        (1200, 800.max(220 + ROW_PX * self.rows.len() as u32))
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), DrawError>
    where
        DB::ErrorType: 'static,
    {
        root.fill(&WHITE)?;
        let n_rows = self.rows.len();
        let longest = self
            .rows
            .iter()
            .map(|r| r.label.chars().count())
            .max()
            .unwrap_or(4);
        let mut chart = ChartBuilder::on(root)
            .caption(&self.title, (FONT, TITLE_PX))
            .margin(20)
            .x_label_area_size(70)
            .y_label_area_size(60 + 12 * longest as u32)
            .build_cartesian_2d(0.0..self.end * 1.02, CategoryAxis { n: n_rows })?;
        // The first row is drawn at the top, i.e. at the highest category.
        let bottom_up_labels: Vec<String> =
            self.rows.iter().rev().map(|r| r.label.clone()).collect();
        let row_label = |v: &f64| category_label(&bottom_up_labels, *v);
        chart
            .configure_mesh()
            .disable_y_mesh()
            .light_line_style(WHITE.mix(0.0))
            .y_labels(n_rows)
            .x_desc(&self.x_label)
            .y_desc("GPU (MIG slice)")
            .axis_desc_style((FONT, AXIS_LABEL_PX))
            .label_style((FONT, TICK_PX))
            .x_label_formatter(&|v| format_tick(*v))
            .y_label_formatter(&row_label)
            .draw()?;
        for (row_idx, row) in self.rows.iter().enumerate() {
            draw_row(&mut chart, (n_rows - 1 - row_idx) as f64, row)?;
        }
        Ok(())
    }
}

/// Draws one row's bars, each with its job number when the bar is wide and tall enough.
fn draw_row<DB, Y>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<plotters::coord::types::RangedCoordf64, Y>>,
    center_y: f64,
    row: &Row,
) -> Result<(), DrawError>
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
    Y: Ranged<ValueType = f64> + plotters::coord::ranged1d::ValueFormatter<f64>,
{
    let lane_height = 0.8 / row.n_lanes as f64;
    let label_style = TextStyle::from((FONT, TICK_PX))
        .pos(Pos::new(HPos::Center, VPos::Center))
        .color(&WHITE);
    for bar in &row.bars {
        let bottom = center_y - 0.4 + bar.lane as f64 * lane_height;
        let corners = [(bar.start, bottom), (bar.end, bottom + lane_height)];
        let color = series_color(bar.job as usize);
        chart.draw_series([
            Rectangle::new(corners, color.filled()),
            Rectangle::new(corners, WHITE.stroke_width(1)),
        ])?;
        let (left, top) = chart.backend_coord(&(bar.start, bottom + lane_height));
        let (right, low) = chart.backend_coord(&(bar.end, bottom));
        let text = format!("j{}", bar.job);
        let fits = right - left >= 13 * text.len() as i32 + 6 && (low - top).abs() >= 22;
        if fits {
            let mid = ((bar.start + bar.end) / 2.0, bottom + lane_height / 2.0);
            chart.draw_series([Text::new(text, mid, label_style.clone())])?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_jobs_get_separate_lanes() {
        let jobs = vec![(0, 0.0, 10.0), (1, 5.0, 15.0), (2, 10.0, 20.0)];
        let (_, row) = lay_out_row(&row_key(0, None), jobs);
        let lanes: Vec<usize> = row.bars.iter().map(|b| b.lane).collect();
        assert_eq!(lanes, vec![0, 1, 0]);
        assert_eq!(row.n_lanes, 2);
    }

    #[test]
    fn slices_sort_by_start_index() {
        assert!(row_key(0, Some("4g.71gb@0")) < row_key(0, Some("3g.71gb@4")));
        assert!(row_key(0, None) < row_key(0, Some("1g.18gb@0")));
    }

    #[test]
    fn rows_are_capped_by_whole_gpus() {
        let row = |gpu| {
            (
                gpu,
                Row {
                    label: String::new(),
                    bars: Vec::new(),
                    n_lanes: 1,
                },
            )
        };
        let rows: Vec<(u32, Row)> = (0..100).map(row).collect();
        assert_eq!(cap_rows(rows).len(), MAX_ROWS);
    }
}
