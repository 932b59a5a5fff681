//! A sweep split over machines: `colo simulate SCENARIO --shard K/N` runs every N-th variant
//! starting at K into its own folder (with a `shard.json` saying which), and `colo merge`
//! joins the shards' folders into one result equal to the unsharded run's.
//!
//! The assignment is by the variant's position in the sweep, so it needs no coordination
//! between the shards (a Slurm job array: `--shard $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT`).
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::fsutil::{WholeDir, create_result_dir};

/// The share of a sweep one run takes: every `count`-th variant from `index` (0-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// Which shard, `0..count`.
    pub index: u32,
    /// How many shards the sweep is split into (at least 1).
    pub count: u32,
}

impl Shard {
    /// Whether the variant at position `variant` of the sweep is this shard's.
    pub fn takes(self, variant: usize) -> bool {
        variant % self.count as usize == self.index as usize
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = String;

    /// `K/N` with `0 <= K < N`.
    fn from_str(text: &str) -> Result<Self, String> {
        let bad = || format!("`{text}` is not a shard; write K/N with 0 <= K < N, e.g. 0/4");
        let (k, n) = text.split_once('/').ok_or_else(bad)?;
        let index: u32 = k.trim().parse().map_err(|_| bad())?;
        let count: u32 = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Self { index, count })
    }
}

/// File name of a shard's manifest.
pub const MANIFEST: &str = "shard.json";

/// What a shard's folder holds (`shard.json`): enough for `colo merge` to check that the
/// shards belong together and that none is missing.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardManifest {
    /// Manifest layout version (1).
    pub format: u32,
    /// The scenario's `name`.
    pub scenario: String,
    /// FNV-1a 64 of the parsed scenario (its `Debug` form), hex: shards of different
    /// scenarios do not merge, while comments and layout may differ.
    pub scenario_fingerprint: String,
    /// The `--seed` override, if any.
    pub seed: Option<u64>,
    /// Whether traces were read strictly (`--strict`).
    pub strict: bool,
    /// This shard, `0..count`.
    pub index: u32,
    /// Shards of the sweep.
    pub count: u32,
    /// Variants in the whole sweep.
    pub total_variants: usize,
    /// This shard's variants: position in the sweep and name, in sweep order (the rows of its
    /// `sweep.csv`, in the same order).
    pub variants: Vec<ShardVariant>,
}

/// One variant a shard ran.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardVariant {
    /// Position in the sweep.
    pub index: usize,
    /// Name (its folder).
    pub name: String,
}

/// The manifest's layout version.
pub const MANIFEST_FORMAT: u32 = 1;

/// FNV-1a 64 of `bytes`, as 16 hex digits.
pub fn fingerprint(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// Shards could not be merged.
#[derive(Debug, Error)]
pub enum MergeError {
    /// A folder or file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A `shard.json` is missing or not a manifest.
    #[error("{path}: {why}")]
    Manifest {
        /// The manifest.
        path: PathBuf,
        /// What was wrong, and how to fix it.
        why: String,
    },
    /// The shards do not belong together, or some are missing.
    #[error("{0}")]
    Mismatch(String),
}

/// What a merge joined.
#[derive(Clone, Debug, PartialEq)]
pub struct MergeReport {
    /// The scenario's name.
    pub scenario: String,
    /// Shards joined.
    pub shards: u32,
    /// Variants in the result.
    pub variants: usize,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> MergeError + '_ {
    move |source| MergeError::Io {
        path: path.to_owned(),
        source,
    }
}

/// Reads the manifest of the shard folder `dir`.
pub fn read_manifest(dir: &Path) -> Result<ShardManifest, MergeError> {
    let path = dir.join(MANIFEST);
    let text = std::fs::read_to_string(&path).map_err(|e| MergeError::Manifest {
        path: path.clone(),
        why: format!("{e}; is this the folder of a `colo simulate --shard K/N` run?"),
    })?;
    let manifest: ShardManifest =
        serde_json::from_str(&text).map_err(|e| MergeError::Manifest {
            path: path.clone(),
            why: format!("not a shard manifest: {e}"),
        })?;
    if manifest.format != MANIFEST_FORMAT {
        return Err(MergeError::Manifest {
            path,
            why: format!(
                "manifest format {} (this colo reads {MANIFEST_FORMAT}); merge with the colo that wrote it",
                manifest.format
            ),
        });
    }
    Ok(manifest)
}

/// Joins the shard folders `dirs` into `out` (written whole or not at all): every variant's
/// folder, and `sweep.csv` with its rows in sweep order, as the unsharded run writes them.
pub fn merge(dirs: &[PathBuf], out: &Path) -> Result<MergeReport, MergeError> {
    let mut shards = Vec::with_capacity(dirs.len());
    for dir in dirs {
        shards.push((dir.clone(), read_manifest(dir)?));
    }
    let Some((_, first)) = shards.first() else {
        return Err(MergeError::Mismatch("no shard folders given".into()));
    };
    let first = first.clone();
    for (dir, m) in &shards {
        let differs = |what: &str| {
            MergeError::Mismatch(format!(
                "{} is a shard of a different run than {} ({what} differs); merge the shards of one `colo simulate` sweep",
                dir.display(),
                shards[0].0.display()
            ))
        };
        if m.scenario != first.scenario || m.scenario_fingerprint != first.scenario_fingerprint {
            return Err(differs("scenario file"));
        }
        if m.seed != first.seed {
            return Err(differs("--seed"));
        }
        if m.strict != first.strict {
            return Err(differs("--strict"));
        }
        if m.count != first.count || m.total_variants != first.total_variants {
            return Err(differs("shard count"));
        }
    }
    let mut seen = vec![None::<&Path>; first.count as usize];
    for (dir, m) in &shards {
        let slot = seen.get_mut(m.index as usize).ok_or_else(|| {
            MergeError::Mismatch(format!(
                "{}: shard {} of {}",
                dir.display(),
                m.index,
                m.count
            ))
        })?;
        if let Some(other) = slot {
            return Err(MergeError::Mismatch(format!(
                "shard {}/{} given twice: {} and {}",
                m.index,
                m.count,
                other.display(),
                dir.display()
            )));
        }
        *slot = Some(dir);
    }
    let missing: Vec<String> = seen
        .iter()
        .enumerate()
        .filter(|(_, d)| d.is_none())
        .map(|(k, _)| format!("{k}/{}", first.count))
        .collect();
    if !missing.is_empty() {
        return Err(MergeError::Mismatch(format!(
            "shard(s) {} missing; run them (colo simulate --shard K/N) and pass every shard's folder",
            missing.join(", ")
        )));
    }
    let whole = WholeDir::begin_result(out, "results", &first.scenario).map_err(io(out))?;
    let mut header: Option<String> = None;
    let mut rows: Vec<(usize, String)> = Vec::with_capacity(first.total_variants);
    for (dir, m) in &shards {
        let sweep = dir.join("sweep.csv");
        let text = std::fs::read_to_string(&sweep).map_err(io(&sweep))?;
        let mut lines = text.lines();
        let head = lines.next().unwrap_or_default().to_owned();
        match &header {
            None => header = Some(head),
            Some(h) if *h == head => {}
            Some(_) => {
                return Err(MergeError::Mismatch(format!(
                    "{}: its header differs from the other shards'",
                    sweep.display()
                )));
            }
        }
        let lines: Vec<&str> = lines.collect();
        if lines.len() != m.variants.len() {
            return Err(MergeError::Mismatch(format!(
                "{}: {} rows for the {} variants its shard.json lists; re-run that shard",
                sweep.display(),
                lines.len(),
                m.variants.len()
            )));
        }
        for (v, line) in m.variants.iter().zip(lines) {
            if !m.takes_index(v.index) || v.index >= m.total_variants {
                return Err(MergeError::Manifest {
                    path: dir.join(MANIFEST),
                    why: format!(
                        "variant {} at position {} is not this shard's",
                        v.name, v.index
                    ),
                });
            }
            copy_tree(&dir.join(&v.name), &whole.path().join(&v.name))?;
            rows.push((v.index, line.to_owned()));
        }
    }
    rows.sort_by_key(|r| r.0);
    if rows.len() != first.total_variants {
        return Err(MergeError::Mismatch(format!(
            "the shards hold {} variants of {}; re-run the shards",
            rows.len(),
            first.total_variants
        )));
    }
    let mut csv = header.unwrap_or_default();
    csv.push('\n');
    for (_, line) in &rows {
        csv.push_str(line);
        csv.push('\n');
    }
    let sweep = whole.path().join("sweep.csv");
    std::fs::write(&sweep, csv).map_err(io(&sweep))?;
    whole.commit().map_err(io(out))?;
    Ok(MergeReport {
        scenario: first.scenario,
        shards: first.count,
        variants: rows.len(),
    })
}

impl ShardManifest {
    /// Whether position `variant` belongs to this manifest's shard.
    fn takes_index(&self, variant: usize) -> bool {
        Shard {
            index: self.index,
            count: self.count.max(1),
        }
        .takes(variant)
    }
}

/// Copies the folder `from` into `to`, a folder inside the result being written whole (files
/// and subfolders; links are not followed).
fn copy_tree(from: &Path, to: &Path) -> Result<(), MergeError> {
    create_result_dir(to).map_err(io(to))?;
    for entry in std::fs::read_dir(from).map_err(io(from))? {
        let entry = entry.map_err(io(from))?;
        let kind = entry.file_type().map_err(io(from))?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target).map_err(io(&target))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_parse_and_split_the_variants_between_them() {
        let s: Shard = "1/3".parse().unwrap();
        assert_eq!(s, Shard { index: 1, count: 3 });
        let taken: Vec<usize> = (0..8).filter(|&v| s.takes(v)).collect();
        assert_eq!(taken, vec![1, 4, 7]);
        for bad in ["3/3", "1", "a/2", "0/0", "-1/2", ""] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
        // Every variant goes to exactly one shard.
        for v in 0..20 {
            let owners = (0..4)
                .filter(|&k| Shard { index: k, count: 4 }.takes(v))
                .count();
            assert_eq!(owners, 1);
        }
    }

    #[test]
    fn fingerprint_is_fnv1a() {
        assert_eq!(fingerprint(b""), "cbf29ce484222325");
        assert_eq!(fingerprint(b"a"), "af63dc4c8601ec8c");
        assert_ne!(fingerprint(b"ab"), fingerprint(b"ba"));
    }
}
