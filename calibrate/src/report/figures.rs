//! The report's figures, per series: total throughput and epoch time against the number of
//! copies (one curve per mode), and each set's memory against its GPU's or slice's memory.
use std::path::{Path, PathBuf};

use colo_plots::{BarGroup, ChartText, Curve, FigureOut, Format, plot_bars, plot_curves};
use colo_sim::perf::ShareMode;
use colo_sim::study::{Reproduction, SetResult, study_label};

use super::{ReportError, Series, origin_label};

/// The figures of one series, for the page to link.
pub struct SeriesFigures {
    /// The series' stem (`e33_resnet26_128_32`).
    pub stem: String,
    /// File each figure kind was written to, relative to the report folder, for linking.
    pub links: Vec<(Kind, String)>,
    /// All files written.
    pub files: Vec<PathBuf>,
}

/// A figure kind of a series.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Throughput,
    EpochTime,
    Memory,
}

impl Kind {
    pub const ALL: [Kind; 3] = [Kind::Throughput, Kind::EpochTime, Kind::Memory];

    fn suffix(self) -> &'static str {
        match self {
            Kind::Throughput => "throughput",
            Kind::EpochTime => "epoch_time",
            Kind::Memory => "memory",
        }
    }

    /// Alt text and caption.
    pub fn caption(self) -> &'static str {
        match self {
            Kind::Throughput => "total throughput / one job alone",
            Kind::EpochTime => "epoch time / alone",
            Kind::Memory => "memory needed vs available",
        }
    }
}

const MODES: [ShareMode; 3] = [ShareMode::Timeslice, ShareMode::Mps, ShareMode::Mig];

/// Draws every covered series' figures into `dir`.
pub fn draw(
    rep: &Reproduction,
    series: &[Series<'_>],
    dir: &Path,
    format: Format,
) -> Result<Vec<SeriesFigures>, ReportError> {
    let mut all = Vec::new();
    for s in series.iter().filter(|s| s.covered()) {
        let mut figures = SeriesFigures {
            stem: s.stem(),
            links: Vec::new(),
            files: Vec::new(),
        };
        for kind in Kind::ALL {
            let out = FigureOut {
                dir: dir.to_path_buf(),
                stem: format!("{}_{}", s.stem(), kind.suffix()),
                format,
            };
            let files = draw_one(rep, s, kind, &out).map_err(|source| ReportError::Draw {
                stem: out.stem.clone(),
                source,
            })?;
            let link_ext = if format == Format::Svg { "svg" } else { "png" };
            figures
                .links
                .push((kind, format!("figures/{}.{link_ext}", out.stem)));
            figures.files.extend(files);
        }
        all.push(figures);
    }
    Ok(all)
}

fn draw_one(
    rep: &Reproduction,
    s: &Series<'_>,
    kind: Kind,
    out: &FigureOut,
) -> Result<Vec<PathBuf>, colo_plots::PlotError> {
    let origin = origin_label(rep);
    let gpu = rep.gpu.name;
    let copies = "copies of the job on one GPU".to_owned();
    // The model that drew it, in the title: `kernel model`, `parametric model`.
    let model = rep.model.split(" (").next().unwrap_or(&rep.model);
    let series = format!("{} ({}), e{}", s.key, s.dataset, s.experiment);
    match kind {
        Kind::Throughput => {
            let text = ChartText {
                title: format!("{series} on {gpu}: throughput, {model}"),
                x_label: copies,
                y_label: format!("throughput / one job alone (emulated, {origin})"),
            };
            plot_curves(&curves(s, |r| r.gain), &text, out)
        }
        Kind::EpochTime => {
            let text = ChartText {
                title: format!("{series} on {gpu}: epoch time, {model}"),
                x_label: copies,
                y_label: format!("epoch time / alone (emulated, {origin})"),
            };
            plot_curves(&curves(s, epoch_stretch), &text, out)
        }
        Kind::Memory => {
            let text = ChartText {
                title: format!("{series} on {gpu}: memory per set"),
                x_label: "copies of the job on one GPU (MIG: one slice each)".to_owned(),
                y_label: format!("GPU memory (GiB, {origin})"),
            };
            plot_bars(&memory_groups(s), &text, out)
        }
    }
}

/// One curve per mode of `value` against the number of copies; sets that do not fit in
/// memory are left out (they cannot run).
fn curves(s: &Series<'_>, value: impl Fn(&SetResult) -> f64) -> Vec<Curve> {
    MODES
        .iter()
        .map(|&mode| Curve {
            kind: colo_plots::CurveKind::Line,
            label: mode_label(mode),
            points: s
                .points(mode)
                .into_iter()
                .filter(|(_, r)| r.fits_memory)
                .map(|(n, r)| (n as f64, value(r)))
                .collect(),
        })
        .filter(|c| !c.points.is_empty())
        .collect()
}

fn mode_label(mode: ShareMode) -> String {
    match mode {
        ShareMode::Timeslice => "naive (time-sliced)".to_owned(),
        ShareMode::Mig => "MIG (one slice each)".to_owned(),
        ShareMode::Exclusive | ShareMode::Mps => study_label(mode).to_owned(),
    }
}

/// Mean epoch time over alone, averaged over the set's jobs.
fn epoch_stretch(r: &SetResult) -> f64 {
    let sum: f64 = r
        .jobs
        .iter()
        .map(|j| j.mean_epoch_s / j.alone_epoch_s)
        .sum();
    sum / r.jobs.len().max(1) as f64
}

/// Per number of copies: memory each mode's set needs (MIG: the fullest slice's job) and
/// what the GPU and the MIG slice hold.
fn memory_groups(s: &Series<'_>) -> Vec<BarGroup> {
    let mut copies: Vec<usize> = s.sets.iter().map(|r| r.set.jobs.len()).collect();
    copies.sort_unstable();
    copies.dedup();
    let mut groups = Vec::new();
    for n in copies {
        let mut bars = Vec::new();
        let mut capacity = Vec::new();
        for mode in MODES {
            let Some((_, res)) = s.points(mode).into_iter().find(|(m, _)| *m == n) else {
                continue;
            };
            let (need, have, label) = match mode {
                ShareMode::Mig => {
                    let (need, have) = fullest_slice(res);
                    (need, have, "MIG slice memory")
                }
                _ => (res.memory_gib, res.capacity_gib, "GPU memory"),
            };
            let needed = match mode {
                ShareMode::Mig => "MIG: needed per slice".to_owned(),
                _ => format!("{}: needed", study_label(mode)),
            };
            bars.push((needed, need));
            if !capacity.iter().any(|(l, _)| *l == label) {
                capacity.push((label, have));
            }
        }
        capacity.sort_by_key(|(label, _)| *label);
        bars.extend(capacity.into_iter().map(|(l, v)| (l.to_owned(), v)));
        let label = if n == 1 {
            "1 copy".to_owned()
        } else {
            format!("{n} copies")
        };
        groups.push(BarGroup { label, bars });
    }
    groups
}

/// (needed, available) GiB of the job that fills its slice most.
fn fullest_slice(res: &SetResult) -> (f64, f64) {
    res.jobs
        .iter()
        .max_by(|a, b| {
            (a.memory_gib / a.partition_gib).total_cmp(&(b.memory_gib / b.partition_gib))
        })
        .map_or((0.0, 0.0), |j| (j.memory_gib, j.partition_gib))
}
