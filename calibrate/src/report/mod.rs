//! Generated reports: the collocation study reproduced, as one Markdown page with figures
//! (`colo report paper`), the study's sets found in the calibration store measured beside it.
mod figures;
mod markdown;
mod measured;

use std::path::{Path, PathBuf};

use colo_sim::perf::{Origin, ShareMode};
use colo_sim::study::{Outcome, Reproduction, SetReport, SetResult, study_label};
use colo_sim::workload::ModelKey;
use thiserror::Error;

use crate::store::StoreError;

/// Why the report could not be written. Fatal: the folder is left as it was.
#[derive(Debug, Error)]
pub enum ReportError {
    /// The folder or a file in it could not be written.
    #[error("writing {}: {source}", path.display())]
    Write {
        /// The report folder.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// A figure could not be drawn.
    #[error("drawing {stem}: {source}")]
    Draw {
        /// The figure's file stem.
        stem: String,
        /// What the plotting library said.
        source: colo_plots::PlotError,
    },
    /// The calibration store could not be read.
    #[error("reading the measurements in {}: {source}", dir.display())]
    Measurements {
        /// The store folder.
        dir: PathBuf,
        /// What the store said.
        source: StoreError,
    },
}

/// What `write_paper_report` wrote.
pub struct Written {
    /// The Markdown page.
    pub report: PathBuf,
    /// Figure files, in drawing order.
    pub figures: Vec<PathBuf>,
    /// Sets the model predicted.
    pub predicted: usize,
    /// Sets also found measured in the calibration store.
    pub measured: usize,
}

/// Writes the folder `out` whole ([`colo_sim::fsutil::WholeDir`]): `report.md` and its figures
/// under `figures/`, nothing of an earlier report left beside them.
/// `data`, when given, is the GPU's calibration store: the study's sets found there get a
/// section of measured numbers.
pub fn write_paper_report(
    rep: &Reproduction,
    data: Option<&Path>,
    out: &Path,
    format: colo_plots::Format,
) -> Result<Written, ReportError> {
    let writing = |source| ReportError::Write {
        path: out.to_path_buf(),
        source,
    };
    let whole = colo_sim::fsutil::WholeDir::begin_result(out, "report", rep.gpu.display_name)
        .map_err(writing)?;
    let series = series(rep);
    let mut figures = figures::draw(rep, &series, &whole.path().join("figures"), format)?;
    for f in &mut figures {
        f.files = f.files.iter().map(|p| whole.final_path(p)).collect();
    }
    let (measured, source) = match data {
        Some(dir) => {
            let (records, left_out) = measured::load_records(dir, rep.gpu.display_name)?;
            let sets = measured::measured_sets(rep, &records);
            (sets, Some(measured::Source { dir, left_out }))
        }
        None => (Vec::new(), None),
    };
    let text = markdown::render(rep, &series, &figures, &measured, source.as_ref(), out);
    std::fs::write(whole.path().join("report.md"), text).map_err(writing)?;
    whole.commit().map_err(writing)?;
    let report = out.join("report.md");
    let predicted = rep
        .sets
        .iter()
        .filter(|r| matches!(r.outcome, Outcome::Predicted(_)))
        .count();
    Ok(Written {
        report,
        figures: figures.into_iter().flat_map(|f| f.files).collect(),
        predicted,
        measured: measured.len(),
    })
}

/// Copies of one model in one experiment (alone, 2, 3, 7 copies under each mode): what the
/// figures plot against the number of copies.
pub(crate) struct Series<'a> {
    pub experiment: u32,
    pub key: ModelKey,
    pub dataset: String,
    pub sets: Vec<&'a SetReport>,
}

impl Series<'_> {
    /// File-name stem, e.g. `e33_resnet26_128_32`.
    pub fn stem(&self) -> String {
        let k = &self.key;
        format!("e{}_{}_{}_{}", self.experiment, k.model, k.batch, k.image)
    }

    /// `resnet26:128:32 (cifar10), experiment 33`.
    pub fn title(&self) -> String {
        format!(
            "{} ({}), experiment {}",
            self.key, self.dataset, self.experiment
        )
    }

    /// (copies, result) of `mode`'s predicted sets, one per count; one MIG job takes the
    /// largest slice the series has (7g), as the study's MIG curve does.
    pub fn points(&self, mode: ShareMode) -> Vec<(usize, &SetResult)> {
        let mut points: Vec<(usize, &SetResult)> = Vec::new();
        for report in self.sets.iter().filter(|r| r.set.mode == mode) {
            let Outcome::Predicted(res) = &report.outcome else {
                continue;
            };
            let n = report.set.jobs.len();
            if !points.iter().any(|(m, _)| *m == n) {
                points.push((n, res));
            }
        }
        points.sort_by_key(|(n, _)| *n);
        points
    }

    /// Whether any set of the series was predicted.
    pub fn covered(&self) -> bool {
        self.sets
            .iter()
            .any(|r| matches!(r.outcome, Outcome::Predicted(_)))
    }
}

/// The series of `rep`: sets of copies of one model, grouped by experiment and model key.
fn series(rep: &Reproduction) -> Vec<Series<'_>> {
    let mut all: Vec<Series<'_>> = Vec::new();
    for report in &rep.sets {
        let Some(key) = report.set.single_key() else {
            continue;
        };
        let found = all
            .iter_mut()
            .find(|s| s.experiment == report.set.experiment && s.key == *key);
        match found {
            Some(series) => series.sets.push(report),
            None => all.push(Series {
                experiment: report.set.experiment,
                key: key.clone(),
                dataset: report.set.jobs[0].dataset.clone(),
                sets: vec![report],
            }),
        }
    }
    all.retain(|s| s.sets.iter().any(|r| r.set.jobs.len() > 1));
    all
}

/// `fitted`, or `fitted; MIG emulated` when a mode's sharing parameters come from elsewhere:
/// the origin the report's numbers rest on.
pub(crate) fn origin_label(rep: &Reproduction) -> String {
    let Some((_, origin)) = &rep.profile else {
        return "no profile".to_owned();
    };
    // Modes of one origin are named together (`naive, MPS, MIG transferred`): the label goes
    // on figure axes, where every character counts.
    let mut label = origin.to_string();
    let mut groups: Vec<(Origin, Vec<&str>)> = Vec::new();
    for (mode, mode_origin) in rep.mode_origins.iter().filter(|(_, o)| o != origin) {
        match groups.iter_mut().find(|(o, _)| o == mode_origin) {
            Some((_, modes)) => modes.push(study_label(*mode)),
            None => groups.push((*mode_origin, vec![study_label(*mode)])),
        }
    }
    for (mode_origin, modes) in groups {
        label.push_str(&format!("; {} {mode_origin}", modes.join(", ")));
    }
    label
}
