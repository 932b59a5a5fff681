//! Profiles shipped inside the binary (`calibrate/profiles/`, compiled in), so `colo predict`
//! works from any folder on a fresh clone. A fitted profile is preferred to a provisional one
//! for the same GPU.
use std::path::{Path, PathBuf};
use std::sync::Arc;

use colo_sim::perf::answer::ProfileName;
use colo_sim::perf::kernel::{KernelTables, TablesError};
use colo_sim::perf::{KernelModel, Profile, ProfileError, ProfileSet};
use colo_sim::ronfile::{RonFileError, parse_ron};
use thiserror::Error;

/// The profiles or their kernel tables could not be loaded.
#[derive(Debug, Error)]
pub enum ShippedError {
    /// A profile file given could not be loaded, or a shipped one is invalid.
    #[error(transparent)]
    Profile(#[from] ProfileError),
    /// A shipped profile does not parse.
    #[error("shipped profile {name}: {source}")]
    Parse {
        /// Its file name under `calibrate/profiles/`.
        name: &'static str,
        /// What the parser said.
        source: RonFileError,
    },
    /// A shipped profile names kernel tables that are not shipped.
    #[error("the shipped {gpu} profile names kernel tables {tables} that this build does not ship")]
    NoTables {
        /// The profile's GPU.
        gpu: String,
        /// The tables file it names.
        tables: String,
    },
    /// Kernel tables could not be read.
    #[error(transparent)]
    Tables(#[from] TablesError),
}

/// (file name under calibrate/profiles/, contents), best first for each GPU.
const SHIPPED: &[(&str, &str)] = &[
    ("h200.ron", include_str!("../profiles/h200.ron")),
    ("a100-40gb.ron", include_str!("../profiles/a100-40gb.ron")),
    (
        "h200-provisional.ron",
        include_str!("../profiles/h200-provisional.ron"),
    ),
];

/// Kernel tables shipped beside the profiles (file name under calibrate/profiles/, bytes).
const SHIPPED_TABLES: &[(&str, &[u8])] = &[(
    "h200-kernels.json.gz",
    include_bytes!("../profiles/h200-kernels.json.gz"),
)];

/// Kernel tables carried from the H200's traces to a GPU whose shipped profile has none (GPU,
/// file name under calibrate/profiles/, bytes): written by `colo calibrate transfer
/// calibrate/data/h200/traces --to GPU --out calibrate/profiles/GPU-kernels-transferred.json.gz`,
/// labelled transferred wherever they answer.
const TRANSFERRED_TABLES: &[(&str, &str, &[u8])] = &[(
    "a100-40gb",
    "a100-40gb-kernels-transferred.json.gz",
    include_bytes!("../profiles/a100-40gb-kernels-transferred.json.gz"),
)];

/// The kernel model over `profiles`: a profile's kernel tables read from disk beside it when
/// its file is one of `paths` (the user's), else the shipped tables it names. A GPU of
/// `profiles` with no kernel tables gets the shipped transferred ones, if any; the profile of
/// the GPU they were carried from is then added (shipped) where `profiles` lacks it, for its
/// globals (labelled transferred).
pub fn kernel_model(
    profiles: Arc<ProfileSet>,
    paths: &[PathBuf],
) -> Result<KernelModel, ShippedError> {
    let mut tables = Vec::new();
    for (profile, path) in profiles.profiles() {
        let Some(kernel) = &profile.kernel else {
            continue;
        };
        if kernel.tables.is_empty() {
            // A profile carried to a GPU without one (ProfileSet::carried_to): its tables are
            // the user's traces, transferred.
            continue;
        }
        if paths.iter().any(|p| p == path) {
            let dir = path.parent().unwrap_or(Path::new("."));
            tables.push(KernelTables::load(&dir.join(&kernel.tables))?);
            continue;
        }
        let (name, bytes) = SHIPPED_TABLES
            .iter()
            .find(|(name, _)| *name == kernel.tables)
            .ok_or_else(|| ShippedError::NoTables {
                gpu: profile.gpu.clone(),
                tables: kernel.tables.clone(),
            })?;
        let path = Path::new("calibrate/profiles").join(name);
        tables.push(KernelTables::from_bytes(bytes, &path)?);
    }
    let mut sources: Vec<String> = Vec::new();
    for (gpu, name, bytes) in TRANSFERRED_TABLES {
        let has_profile = profiles
            .profiles()
            .any(|(p, _)| p.gpu.eq_ignore_ascii_case(gpu));
        if has_profile && !tables.iter().any(|t| t.gpu.eq_ignore_ascii_case(gpu)) {
            let path = Path::new("calibrate/profiles").join(name);
            let carried = KernelTables::from_bytes(bytes, &path)?;
            sources.extend(carried.transferred_from.clone());
            tables.push(carried);
        }
    }
    let missing = |gpu: &String| {
        !profiles
            .profiles()
            .any(|(p, _)| p.gpu.eq_ignore_ascii_case(gpu))
    };
    if sources.iter().any(missing) {
        let mut extended = (*profiles).clone();
        for (profile, path) in load(&[])?.profiles() {
            if sources.iter().any(|s| s.eq_ignore_ascii_case(&profile.gpu)) && missing(&profile.gpu)
            {
                extended.insert(profile.clone(), path.to_owned());
            }
        }
        return Ok(KernelModel::with_tables(Arc::new(extended), tables));
    }
    Ok(KernelModel::with_tables(profiles, tables))
}

/// How output names the profile `path` of `gpu` that [`load`] gave for `paths`: the file
/// (read from disk) when the user named one, else `built-in GPU profile` (a copy compiled into
/// this binary: editing or refitting calibrate/profiles/ does not change it; pass --profile).
pub fn name(paths: &[PathBuf], path: &Path, gpu: &str) -> ProfileName {
    if paths.is_empty() {
        ProfileName::BuiltIn(format!("built-in {gpu} profile"))
    } else {
        ProfileName::Named(path.display().to_string())
    }
}

/// The profiles to use: the given files, or else every shipped one (best per GPU).
pub fn load(paths: &[PathBuf]) -> Result<ProfileSet, ShippedError> {
    if !paths.is_empty() {
        return Ok(ProfileSet::load(paths)?);
    }
    let mut set = ProfileSet::default();
    for (name, text) in SHIPPED.iter().rev() {
        // Messages name it by this path: say it is the copy inside the binary, not a file
        // the user can open or edit next to them.
        let path = Path::new("built-in copy of calibrate/profiles").join(name);
        let profile: Profile =
            parse_ron(text, &path).map_err(|source| ShippedError::Parse { name, source })?;
        profile.validate(&path)?;
        set.insert(profile, path);
    }
    Ok(set)
}
