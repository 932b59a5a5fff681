//! The study's reproduction spec (`scenarios/paper/<gpu>.report.ron`): which GPU, which matrix,
//! which profiles to try and how large each dataset is.
use std::path::{Component, Path, PathBuf};

use serde::Deserialize;

use super::StudyError;
use crate::ronfile::read_ron;

/// One dataset of the matrix: the folder its `--data-dir` ends in, its image side and size.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Dataset {
    /// Last folder of the matrix's `--data-dir`, e.g. `cifar10`.
    pub dir: String,
    /// Image side in pixels (the third part of the model key).
    pub image: u32,
    /// Training samples in one epoch.
    pub samples_per_epoch: u64,
}

/// A reproduction spec as written in the file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SpecFile {
    gpu: String,
    matrix: PathBuf,
    matrix_gpu: String,
    profiles: Vec<PathBuf>,
    epochs: u32,
    datasets: Vec<Dataset>,
}

/// A loaded spec, its paths resolved against the spec file's folder.
#[derive(Clone, Debug)]
pub struct StudySpec {
    /// The spec file.
    pub path: PathBuf,
    /// GPU catalog name to reproduce the study on.
    pub gpu: String,
    /// The experiment matrix (CSV).
    pub matrix: PathBuf,
    /// GPU whose MIG profile names the matrix uses.
    pub matrix_gpu: String,
    /// Profile files, best first; the first that exists is used.
    pub profiles: Vec<PathBuf>,
    /// Epochs each process trains.
    pub epochs: u32,
    /// Datasets by folder name.
    pub datasets: Vec<Dataset>,
}

impl StudySpec {
    /// Reads and checks `path`.
    ///
    /// # Errors
    /// [`StudyError::Spec`] for a file that cannot be read or parsed, [`StudyError::Field`]
    /// for zero epochs or an empty dataset.
    pub fn load(path: &Path) -> Result<Self, StudyError> {
        let file: SpecFile = read_ron(path)?;
        let base = path.parent().unwrap_or(Path::new(""));
        let field = |field: &str, message: &str| StudyError::Field {
            path: path.to_owned(),
            field: field.to_owned(),
            message: message.to_owned(),
        };
        if file.epochs == 0 {
            return Err(field("epochs", "must be at least 1"));
        }
        if let Some(bad) = file
            .datasets
            .iter()
            .position(|d| d.samples_per_epoch == 0 || d.image == 0)
        {
            return Err(field(
                &format!("datasets[{bad}]"),
                "image and samples_per_epoch must be positive",
            ));
        }
        Ok(Self {
            path: path.to_owned(),
            gpu: file.gpu,
            matrix: lexical_join(base, &file.matrix),
            matrix_gpu: file.matrix_gpu,
            profiles: file
                .profiles
                .iter()
                .map(|p| lexical_join(base, p))
                .collect(),
            epochs: file.epochs,
            datasets: file.datasets,
        })
    }

    /// The dataset whose folder is `dir`.
    pub fn dataset(&self, dir: &str) -> Option<&Dataset> {
        self.datasets.iter().find(|d| d.dir == dir)
    }

    /// The first profile file of the list that exists.
    pub fn existing_profile(&self) -> Option<&Path> {
        self.profiles
            .iter()
            .map(PathBuf::as_path)
            .find(|p| p.is_file())
    }
}

/// `base/rel` with `..` folded into the folder before it (`a/b/../c` -> `a/c`), so reports
/// show short paths; `..` past the start is kept.
fn lexical_join(base: &Path, rel: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in base.join(rel).components() {
        match part {
            Component::ParentDir
                if matches!(out.components().next_back(), Some(Component::Normal(_))) =>
            {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parent_folders_fold_lexically() {
        let joined = lexical_join(Path::new("scenarios/paper"), Path::new("../../a/b.ron"));
        assert_eq!(joined, PathBuf::from("a/b.ron"));
        let kept = lexical_join(Path::new(""), Path::new("../x.csv"));
        assert_eq!(kept, PathBuf::from("../x.csv"));
    }
}
