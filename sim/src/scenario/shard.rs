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

use super::{SWEEP_CSV, check_variant_name, write_sweep_csv};
use crate::fsutil::{self, WholeDir, create_result_dir};
use crate::metrics::Summary;

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
    /// The files each variant's folder holds (`--outputs`, `--columnar`); empty in manifests
    /// of an earlier colo, whose variants are checked for `summary.json` only.
    #[serde(default)]
    pub files: Vec<String>,
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
    /// The shards do not belong together, some are missing, or `--out` is among them.
    #[error("{0}")]
    Mismatch(String),
    /// A file of a shard's variant is missing or unreadable (checked before anything is
    /// written).
    #[error("{}: {why}", path.display())]
    Variant {
        /// The file.
        path: PathBuf,
        /// What is wrong, with the shard's folder, and how to fix it.
        why: String,
    },
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
/// Everything is checked before anything is written: that the shards belong together and none
/// is missing, that `out` is apart from them, the variants' names (as a scenario's) and that
/// every variant's files are there and its `summary.json` whole.
pub fn merge(dirs: &[PathBuf], out: &Path) -> Result<MergeReport, MergeError> {
    let mut shards = Vec::with_capacity(dirs.len());
    for dir in dirs {
        shards.push((dir.clone(), read_manifest(dir)?));
    }
    check_together(&shards)?;
    let first = shards[0].1.clone();
    let inputs: Vec<&Path> = dirs.iter().map(PathBuf::as_path).collect();
    fsutil::check_apart(out, &inputs).map_err(|e| MergeError::Mismatch(e.to_string()))?;
    let mut header: Option<csv::StringRecord> = None;
    let mut rows: Vec<(usize, csv::StringRecord)> = Vec::with_capacity(first.total_variants);
    let mut names = std::collections::BTreeSet::new();
    for (dir, m) in &shards {
        let (head, records) = read_sweep(dir, m)?;
        match &header {
            None => header = Some(head),
            Some(h) if *h == head => {}
            Some(_) => {
                return Err(MergeError::Mismatch(format!(
                    "{}: its header differs from the other shards'",
                    dir.join(SWEEP_CSV).display()
                )));
            }
        }
        for (v, record) in m.variants.iter().zip(records) {
            check_variant(dir, m, v, &record)?;
            if !names.insert(v.name.as_str()) {
                return Err(MergeError::Mismatch(format!(
                    "variant `{}` is in two shards ({} is one); merge the shards of one sweep",
                    v.name,
                    dir.display()
                )));
            }
            rows.push((v.index, record));
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
    let whole = WholeDir::begin_result(out, "results", &first.scenario).map_err(io(out))?;
    for (dir, m) in &shards {
        for v in &m.variants {
            copy_tree(&dir.join(&v.name), &whole.path().join(&v.name))?;
        }
    }
    let sweep = whole.path().join(SWEEP_CSV);
    let header = header.unwrap_or_default();
    let csv = write_sweep_csv(&header, rows.iter().map(|(_, r)| r)).map_err(io(&sweep))?;
    std::fs::write(&sweep, csv).map_err(io(&sweep))?;
    whole.commit().map_err(io(out))?;
    Ok(MergeReport {
        scenario: first.scenario,
        shards: first.count,
        variants: rows.len(),
    })
}

/// Checks that the `shards` (folder, manifest) are of one sweep and that none is missing or
/// given twice. A shard past the sweep's last variant (K >= variants) holds nothing and is not
/// needed (`colo simulate` refuses to run it).
fn check_together(shards: &[(PathBuf, ShardManifest)]) -> Result<(), MergeError> {
    let Some((_, first)) = shards.first() else {
        return Err(MergeError::Mismatch("no shard folders given".into()));
    };
    for (dir, m) in shards {
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
        if m.files != first.files {
            return Err(differs("--outputs or --columnar"));
        }
    }
    let mut seen = vec![None::<&Path>; first.count as usize];
    for (dir, m) in shards {
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
        .take(first.total_variants)
        .filter(|(_, d)| d.is_none())
        .map(|(k, _)| format!("{k}/{}", first.count))
        .collect();
    if !missing.is_empty() {
        return Err(MergeError::Mismatch(format!(
            "shard(s) {} missing; run them (colo simulate --shard K/N) and pass every shard's folder",
            missing.join(", ")
        )));
    }
    Ok(())
}

/// The header and rows of shard folder `dir`'s `sweep.csv`, one row for each variant its
/// manifest `m` lists.
fn read_sweep(
    dir: &Path,
    m: &ShardManifest,
) -> Result<(csv::StringRecord, Vec<csv::StringRecord>), MergeError> {
    let sweep = dir.join(SWEEP_CSV);
    let bad = |e: csv::Error| MergeError::Variant {
        path: sweep.clone(),
        why: format!(
            "not a sweep table ({e}); the shard {} is damaged: re-run it",
            dir.display()
        ),
    };
    let file = std::fs::File::open(&sweep).map_err(io(&sweep))?;
    let mut reader = csv::Reader::from_reader(std::io::BufReader::new(file));
    let head = reader.headers().map_err(bad)?.clone();
    let records = reader
        .records()
        .collect::<Result<Vec<_>, _>>()
        .map_err(bad)?;
    if records.len() != m.variants.len() {
        return Err(MergeError::Mismatch(format!(
            "{}: {} rows for the {} variants its shard.json lists; re-run that shard",
            sweep.display(),
            records.len(),
            m.variants.len()
        )));
    }
    Ok((head, records))
}

/// Checks variant `v` of shard folder `dir` (manifest `m`, row `record` of its `sweep.csv`):
/// its position and name, and its files.
fn check_variant(
    dir: &Path,
    m: &ShardManifest,
    v: &ShardVariant,
    record: &csv::StringRecord,
) -> Result<(), MergeError> {
    let manifest = |why: String| MergeError::Manifest {
        path: dir.join(MANIFEST),
        why,
    };
    if !m.takes_index(v.index) || v.index >= m.total_variants {
        return Err(manifest(format!(
            "variant {} at position {} is not this shard's",
            v.name, v.index
        )));
    }
    check_variant_name(&v.name).map_err(|why| manifest(format!("{why}; re-run the shard")))?;
    if record.get(0) != Some(v.name.as_str()) {
        return Err(MergeError::Mismatch(format!(
            "{}: the row of variant `{}` names `{}`; re-run that shard",
            dir.join(SWEEP_CSV).display(),
            v.name,
            record.get(0).unwrap_or_default()
        )));
    }
    let folder = dir.join(&v.name);
    let damaged = |path: PathBuf, what: String| MergeError::Variant {
        path,
        why: format!(
            "{what}: shard {} is incomplete or damaged; re-run it (colo simulate --shard {}/{})",
            dir.display(),
            m.index,
            m.count
        ),
    };
    let summary_json = [String::from("summary.json")];
    let files = if m.files.is_empty() {
        &summary_json[..]
    } else {
        &m.files[..]
    };
    for name in files {
        let path = folder.join(name);
        if !path.is_file() {
            return Err(damaged(path, format!("variant `{}` has no {name}", v.name)));
        }
    }
    let path = folder.join("summary.json");
    let text = std::fs::read(&path).map_err(io(&path))?;
    if let Err(e) = serde_json::from_slice::<Summary>(&text) {
        return Err(damaged(path, format!("not a whole summary ({e})")));
    }
    Ok(())
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

    fn manifest(index: u32, count: u32) -> (PathBuf, ShardManifest) {
        let m = ShardManifest {
            format: MANIFEST_FORMAT,
            scenario: "s".into(),
            scenario_fingerprint: "0123456789abcdef".into(),
            seed: Some(7),
            strict: false,
            index,
            count,
            total_variants: 4,
            files: vec!["summary.json".into(), "jobs.csv".into()],
            variants: Vec::new(),
        };
        (PathBuf::from(format!("shard{index}")), m)
    }

    fn refused(shards: &[(PathBuf, ShardManifest)]) -> String {
        check_together(shards).expect_err("refused").to_string()
    }

    #[test]
    fn issue_37_shards_of_different_runs_are_refused_naming_what_differs() {
        let both = || vec![manifest(0, 2), manifest(1, 2)];
        check_together(&both()).expect("one sweep");
        type Edit = fn(&mut ShardManifest);
        let cases: [(Edit, &str); 8] = [
            (|m| m.seed = Some(8), "--seed"),
            (|m| m.seed = None, "--seed"),
            (|m| m.strict = true, "--strict"),
            (
                |m| m.scenario_fingerprint = "fedcba9876543210".into(),
                "scenario file",
            ),
            (|m| m.scenario = "t".into(), "scenario file"),
            (|m| m.total_variants = 5, "shard count"),
            (
                |m| m.files = vec!["summary.json".into()],
                "--outputs or --columnar",
            ),
            (|m| m.files.reverse(), "--outputs or --columnar"),
        ];
        for (edit, what) in cases {
            let mut shards = both();
            edit(&mut shards[1].1);
            let err = refused(&shards);
            assert!(err.contains(&format!("({what} differs)")), "{err}");
            assert!(err.contains("shard1") && err.contains("shard0"), "{err}");
        }
        // A different shard count: shard 1 of 3 beside shard 0 of 2.
        let err = refused(&[manifest(0, 2), manifest(1, 3)]);
        assert!(err.contains("(shard count differs)"), "{err}");
    }

    #[test]
    fn issue_37_a_missing_doubled_or_out_of_range_shard_is_refused() {
        assert!(refused(&[]).contains("no shard folders"));
        let err = refused(&[manifest(0, 3), manifest(2, 3)]);
        assert!(err.contains("shard(s) 1/3 missing"), "{err}");
        let err = refused(&[manifest(0, 2), manifest(0, 2), manifest(1, 2)]);
        assert!(err.contains("shard 0/2 given twice"), "{err}");
        let err = refused(&[manifest(0, 2), manifest(2, 2)]);
        assert!(err.contains("shard2: shard 2 of 2"), "{err}");
        // Shards past the last variant hold nothing and are not needed: 4 variants in 6 shards.
        let shards: Vec<_> = (0..4).map(|k| manifest(k, 6)).collect();
        check_together(&shards).expect("shards 4/6 and 5/6 are empty");
        let err = refused(&shards[..3]);
        assert!(err.contains("shard(s) 3/6 missing"), "{err}");
    }

    #[test]
    fn fingerprint_is_fnv1a() {
        assert_eq!(fingerprint(b""), "cbf29ce484222325");
        assert_eq!(fingerprint(b"a"), "af63dc4c8601ec8c");
        assert_ne!(fingerprint(b"ab"), fingerprint(b"ba"));
    }

    /// A summary.json any variant may hold: the summary of a run of no jobs.
    fn summary_json() -> Vec<u8> {
        let record = crate::metrics::RunRecord {
            outcomes: vec![],
            timeline: vec![],
            busy_gpu_s: 0.0,
            events: 0,
            mig_reconfigurations: 0,
            total_gpus: 1,
            memory_total_gib: 80.0,
            energy: None,
        };
        let labels = crate::metrics::RunLabels::for_test("s");
        serde_json::to_vec(&crate::metrics::summarize(&[], &record, labels)).unwrap()
    }

    /// Writes shard `index` of `count` of a sweep of `total` variants into `root/sINDEX`, as
    /// `colo simulate --shard --outputs summary` does: its manifest, its `sweep.csv` (a row per
    /// variant, `name,INDEX`) and each variant's folder with a `summary.json`.
    fn write_shard(
        root: &Path,
        (index, count): (u32, u32),
        total: usize,
        variants: &[(usize, &str)],
    ) -> PathBuf {
        let dir = root.join(format!("s{index}"));
        std::fs::create_dir(&dir).unwrap();
        let manifest = ShardManifest {
            variants: variants
                .iter()
                .map(|&(index, name)| ShardVariant {
                    index,
                    name: name.into(),
                })
                .collect(),
            files: vec!["summary.json".into()],
            total_variants: total,
            ..manifest(index, count).1
        };
        std::fs::write(dir.join(MANIFEST), serde_json::to_vec(&manifest).unwrap()).unwrap();
        let rows: Vec<[String; 2]> = variants
            .iter()
            .map(|&(index, name)| [name.to_owned(), index.to_string()])
            .collect();
        let csv = write_sweep_csv(["variant", "position"], rows).unwrap();
        std::fs::write(dir.join(SWEEP_CSV), csv).unwrap();
        for &(_, name) in variants {
            std::fs::create_dir(dir.join(name)).unwrap();
            std::fs::write(dir.join(name).join("summary.json"), summary_json()).unwrap();
        }
        dir
    }

    /// Three variants a, b, c in two shards: s0 holds a and c, s1 holds b.
    fn two_shards(root: &Path) -> Vec<PathBuf> {
        vec![
            write_shard(root, (0, 2), 3, &[(0, "a"), (2, "c")]),
            write_shard(root, (1, 2), 3, &[(1, "b")]),
        ]
    }

    fn merge_err(dirs: &[PathBuf], out: &Path) -> String {
        merge(dirs, out).expect_err("refused").to_string()
    }

    #[test]
    fn issue_37_merge_joins_the_shards_rows_in_sweep_order_and_copies_every_variant() {
        let root = tempfile::tempdir().unwrap();
        let dirs = two_shards(root.path());
        let out = root.path().join("merged");
        let report = merge(&dirs, &out).unwrap();
        assert_eq!(
            report,
            MergeReport {
                scenario: "s".into(),
                shards: 2,
                variants: 3
            }
        );
        assert_eq!(
            std::fs::read_to_string(out.join(SWEEP_CSV)).unwrap(),
            "variant,position\na,0\nb,1\nc,2\n"
        );
        for name in ["a", "b", "c"] {
            assert_eq!(
                std::fs::read(out.join(name).join("summary.json")).unwrap(),
                summary_json()
            );
        }
    }

    #[test]
    fn issue_37_a_shard_prints_as_k_slash_n() {
        assert_eq!(Shard { index: 1, count: 3 }.to_string(), "1/3");
    }

    #[test]
    fn issue_37_a_manifest_of_another_format_is_refused_naming_it() {
        let root = tempfile::tempdir().unwrap();
        let dir = write_shard(root.path(), (0, 1), 1, &[(0, "a")]);
        assert_eq!(read_manifest(&dir).unwrap().variants[0].name, "a");
        let mut later = read_manifest(&dir).unwrap();
        later.format = 2;
        std::fs::write(dir.join(MANIFEST), serde_json::to_vec(&later).unwrap()).unwrap();
        let err = read_manifest(&dir).unwrap_err().to_string();
        assert!(
            err.contains("manifest format 2 (this colo reads 1)"),
            "{err}"
        );
    }

    #[test]
    fn issue_37_shards_whose_sweep_tables_differ_in_header_are_refused() {
        let root = tempfile::tempdir().unwrap();
        let dirs = two_shards(root.path());
        let csv = write_sweep_csv(["variant", "seed"], [["b", "1"]]).unwrap();
        std::fs::write(dirs[1].join(SWEEP_CSV), csv).unwrap();
        let err = merge_err(&dirs, &root.path().join("merged"));
        assert!(err.contains("s1/sweep.csv: its header differs"), "{err}");
    }

    #[test]
    fn issue_37_a_variant_listed_by_two_shards_is_refused() {
        // 2 variants in 2 shards; s1 names its variant `a` as s0 does.
        let root = tempfile::tempdir().unwrap();
        let dirs = vec![
            write_shard(root.path(), (0, 2), 2, &[(0, "a")]),
            write_shard(root.path(), (1, 2), 2, &[(1, "a")]),
        ];
        let err = merge_err(&dirs, &root.path().join("merged"));
        assert!(err.contains("variant `a` is in two shards"), "{err}");
    }

    #[test]
    fn issue_37_shards_holding_fewer_variants_than_the_sweep_are_refused() {
        // s0 of 2 should hold positions 0 and 2 of 3, and lists only 0.
        let root = tempfile::tempdir().unwrap();
        let dirs = vec![
            write_shard(root.path(), (0, 2), 3, &[(0, "a")]),
            write_shard(root.path(), (1, 2), 3, &[(1, "b")]),
        ];
        let err = merge_err(&dirs, &root.path().join("merged"));
        assert!(err.contains("the shards hold 2 variants of 3"), "{err}");
    }

    #[test]
    fn issue_37_a_sweep_table_with_a_row_too_many_is_refused() {
        let root = tempfile::tempdir().unwrap();
        let dirs = two_shards(root.path());
        let csv = write_sweep_csv(["variant", "position"], [["b", "1"], ["d", "3"]]).unwrap();
        std::fs::write(dirs[1].join(SWEEP_CSV), csv).unwrap();
        let err = merge_err(&dirs, &root.path().join("merged"));
        assert!(err.contains("2 rows for the 1 variants"), "{err}");
    }

    #[test]
    fn issue_37_a_variant_at_a_position_not_the_shards_is_refused() {
        let root = tempfile::tempdir().unwrap();
        // Position 2 is shard 0's of 2, not shard 1's.
        let dirs = vec![
            write_shard(root.path(), (0, 2), 3, &[(0, "a")]),
            write_shard(root.path(), (1, 2), 3, &[(1, "b"), (2, "c")]),
        ];
        let err = merge_err(&dirs, &root.path().join("merged"));
        assert!(
            err.contains("variant c at position 2 is not this shard's"),
            "{err}"
        );
        // Position 4 would be shard 0's, but the sweep has 3.
        let root = tempfile::tempdir().unwrap();
        let dirs = vec![
            write_shard(root.path(), (0, 2), 3, &[(0, "a"), (4, "e")]),
            write_shard(root.path(), (1, 2), 3, &[(1, "b")]),
        ];
        let err = merge_err(&dirs, &root.path().join("merged"));
        assert!(
            err.contains("variant e at position 4 is not this shard's"),
            "{err}"
        );
    }

    #[test]
    fn issue_37_a_variant_named_as_a_file_colo_writes_is_refused() {
        let root = tempfile::tempdir().unwrap();
        let dirs = vec![write_shard(
            root.path(),
            (0, 1),
            1,
            &[(0, crate::fsutil::MARKER)],
        )];
        let err = merge_err(&dirs, &root.path().join("merged"));
        assert!(
            err.contains("variant name `.colo-result` is taken"),
            "{err}"
        );
    }

    #[test]
    fn issue_37_a_sweep_row_naming_another_variant_is_refused() {
        let root = tempfile::tempdir().unwrap();
        let dirs = two_shards(root.path());
        let csv = write_sweep_csv(["variant", "position"], [["x", "1"]]).unwrap();
        std::fs::write(dirs[1].join(SWEEP_CSV), csv).unwrap();
        let err = merge_err(&dirs, &root.path().join("merged"));
        assert!(err.contains("the row of variant `b` names `x`"), "{err}");
    }

    #[test]
    fn issue_37_a_variant_missing_a_listed_file_or_with_a_cut_summary_is_refused() {
        let root = tempfile::tempdir().unwrap();
        let dirs = two_shards(root.path());
        let out = root.path().join("merged");
        let summary = dirs[1].join("b/summary.json");
        std::fs::remove_file(&summary).unwrap();
        let err = merge_err(&dirs, &out);
        assert!(err.contains("variant `b` has no summary.json"), "{err}");
        let whole = summary_json();
        std::fs::write(&summary, &whole[..whole.len() / 2]).unwrap();
        let err = merge_err(&dirs, &out);
        assert!(err.contains("b/summary.json: not a whole summary"), "{err}");
        assert!(!out.exists(), "nothing written");
    }
}
