//! Profiles shipped inside the binary, so `colo predict` works from any folder on a fresh clone.
//! A fitted profile is preferred to a provisional one for the same GPU.
use std::path::{Path, PathBuf};

use anyhow::Context;
use colo_sim::perf::{Profile, ProfileSet};
use colo_sim::ronfile::parse_ron;

/// (file name under calibrate/profiles/, contents), best first for each GPU.
const SHIPPED: &[(&str, &str)] = &[
    ("h200.ron", include_str!("../calibrate/profiles/h200.ron")),
    (
        "a100-40gb.ron",
        include_str!("../calibrate/profiles/a100-40gb.ron"),
    ),
    (
        "h200-provisional.ron",
        include_str!("../calibrate/profiles/h200-provisional.ron"),
    ),
];

/// The profiles to use: the given files, or else every shipped one (best per GPU).
pub fn load(paths: &[PathBuf]) -> anyhow::Result<ProfileSet> {
    if !paths.is_empty() {
        return Ok(ProfileSet::load(paths)?);
    }
    let mut set = ProfileSet::default();
    for (name, text) in SHIPPED.iter().rev() {
        let path = Path::new("calibrate/profiles").join(name);
        let profile: Profile =
            parse_ron(text, &path).with_context(|| format!("shipped profile {name}"))?;
        profile.validate(&path)?;
        set.insert(profile, path);
    }
    Ok(set)
}
