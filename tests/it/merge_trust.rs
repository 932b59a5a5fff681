//! `colo merge` trusts nothing in a shard's folder (issue 34): variant names that would leave
//! `--out`, an `--out` among its inputs, missing or cut files are refused before anything is
//! written; empty shards and sweep names that need quoting.
use std::path::{Path, PathBuf};

use crate::common::{colo, sweep_scenario};

/// Runs every shard of `count` of the sweep `file` into `dir/sK`; returns the folders.
fn shards(file: &str, dir: &Path, count: u32) -> Vec<PathBuf> {
    some_shards(file, dir, 0..count, count)
}

/// Runs shards `ks` of `count` of the sweep `file` into `dir/sK`; returns the folders.
fn some_shards(file: &str, dir: &Path, ks: std::ops::Range<u32>, count: u32) -> Vec<PathBuf> {
    ks.map(|k| {
        let out = dir.join(format!("s{k}"));
        let shard = format!("{k}/{count}");
        let run = colo(&[
            "simulate",
            file,
            "--shard",
            &shard,
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        out
    })
    .collect()
}

fn merge(out: &Path, shards: &[PathBuf]) -> crate::common::Run {
    let mut args = vec!["merge", "--out", out.to_str().unwrap()];
    args.extend(shards.iter().map(|s| s.to_str().unwrap()));
    colo(&args)
}

/// Every file under `dir` with its bytes.
fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(tree(&path));
        } else {
            out.push((path.clone(), std::fs::read(&path).unwrap()));
        }
    }
    out.sort();
    out
}

/// Replaces `from` with `to` in shard `dir`'s shard.json and sweep.csv.
fn forge(dir: &Path, from: &str, to: &str) {
    for file in ["shard.json", "sweep.csv"] {
        let path = dir.join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        let forged = if file == "shard.json" {
            let json = |s: &str| serde_json::to_string(s).unwrap();
            text.replace(&json(from), &json(to))
        } else {
            text.replace(&format!("\n{from},"), &format!("\n{to},"))
        };
        assert_ne!(text, forged);
        std::fs::write(&path, forged).unwrap();
    }
}

/// Issue 34.1: a variant name in shard.json that is an absolute path or holds `..` is refused,
/// and the files it names are left alone.
#[test]
fn issue_34_merge_refuses_variant_names_that_leave_out() {
    let tmp = tempfile::tempdir().unwrap();
    let file = sweep_scenario(tmp.path(), &["a", "b"]);
    let dirs = shards(&file, tmp.path(), 2);
    let victim = tmp.path().join("victim");
    std::fs::create_dir(&victim).unwrap();
    std::fs::write(victim.join("summary.json"), "keep me").unwrap();
    let outside = victim.to_str().unwrap().to_owned();
    let mut name = "a".to_owned();
    for forged in [outside.as_str(), "../victim", ".colo-result"] {
        forge(&dirs[0], &name, forged);
        name = forged.to_owned();
        let before = tree(tmp.path());
        let out = tmp.path().join("merged");
        let run = merge(&out, &dirs);
        assert_eq!(run.code, 1, "{forged}: {}", run.stderr);
        assert!(
            run.stderr.contains(&format!("variant name `{forged}`"))
                && run.stderr.contains("shard.json"),
            "{}",
            run.stderr
        );
        assert_eq!(tree(tmp.path()), before, "{forged}: something was written");
        assert!(!out.exists());
    }
    assert_eq!(
        std::fs::read_to_string(victim.join("summary.json")).unwrap(),
        "keep me"
    );
}

/// Issue 34.2: `--out` one of the shards, their parent, or a folder inside one: refused,
/// the shards left whole.
#[test]
fn issue_34_merge_out_among_its_inputs_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let file = sweep_scenario(tmp.path(), &["a", "b"]);
    let dirs = shards(&file, tmp.path(), 2);
    let before = tree(tmp.path());
    for out in [
        dirs[0].clone(),
        tmp.path().to_owned(),
        dirs[1].join("inner"),
    ] {
        let run = merge(&out, &dirs);
        assert_eq!(run.code, 1, "{}: {}", out.display(), run.stderr);
        assert!(
            run.stderr.contains("an input of this run"),
            "{}",
            run.stderr
        );
        assert_eq!(tree(tmp.path()), before, "--out {}", out.display());
    }
}

/// Issue 34.3: a variant's jobs.csv missing, its summary.json cut short: named (shard folder
/// and file) before anything is written.
#[test]
fn issue_34_merge_checks_every_variants_files_first() {
    let tmp = tempfile::tempdir().unwrap();
    let file = sweep_scenario(tmp.path(), &["a", "b", "c"]);
    let dirs = shards(&file, tmp.path(), 2);
    let out = tmp.path().join("merged");
    // s1 holds b; s0 holds a and c.
    let jobs = dirs[1].join("b/jobs.csv");
    let saved = std::fs::read(&jobs).unwrap();
    std::fs::remove_file(&jobs).unwrap();
    let run = merge(&out, &dirs);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains(jobs.to_str().unwrap())
            && run.stderr.contains(&format!("shard {}", dirs[1].display())),
        "{}",
        run.stderr
    );
    assert!(!out.exists());
    std::fs::write(&jobs, saved).unwrap();

    let summary = dirs[0].join("c/summary.json");
    let text = std::fs::read(&summary).unwrap();
    std::fs::write(&summary, &text[..text.len() / 2]).unwrap();
    let run = merge(&out, &dirs);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains(summary.to_str().unwrap()) && run.stderr.contains("not a whole"),
        "{}",
        run.stderr
    );
    assert!(!out.exists());
    std::fs::write(&summary, &text).unwrap();
    let run = merge(&out, &dirs);
    assert_eq!(run.code, 0, "{}", run.stderr);
}

/// Issue 34.18: a shard past the sweep's last variant is an error before running, and merge
/// does not need it: the shards that hold variants merge into the unsharded result.
#[test]
fn issue_34_an_empty_shard_is_refused_and_not_needed() {
    let tmp = tempfile::tempdir().unwrap();
    let file = sweep_scenario(tmp.path(), &["a", "b"]);
    let empty = tmp.path().join("s2");
    let run = colo(&[
        "simulate",
        &file,
        "--shard",
        "2/3",
        "--out",
        empty.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("shard 2/3 of a sweep of 2 variants is empty; use N <= 2"),
        "{}",
        run.stderr
    );
    assert!(!empty.exists());
    let dirs = some_shards(&file, tmp.path(), 0..2, 3);
    let whole = tmp.path().join("whole");
    let run = colo(&["simulate", &file, "--out", whole.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let merged = tmp.path().join("merged");
    let run = merge(&merged, &dirs);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let relative = |dir: &Path| -> Vec<(PathBuf, Vec<u8>)> {
        tree(dir)
            .into_iter()
            .map(|(p, b)| (p.strip_prefix(dir).unwrap().to_owned(), b))
            .collect()
    };
    assert_eq!(relative(&merged), relative(&whole));
}

/// Issue 34.15: variant names with a comma, a quote or a line break are quoted in sweep.csv,
/// `colo plot` reads the folder back and a merge gives the same bytes; names colo writes beside
/// the variants are refused before the run.
#[test]
fn issue_34_sweep_csv_quotes_names_and_reserved_names_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let names = ["a,b", "say \"hi\"", "two\nlines"];
    let file = sweep_scenario(tmp.path(), &names);
    let whole = tmp.path().join("whole");
    let run = colo(&["simulate", &file, "--out", whole.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let sweep = std::fs::read_to_string(whole.join("sweep.csv")).unwrap();
    assert!(
        sweep.contains("\n\"a,b\",")
            && sweep.contains("\n\"say \"\"hi\"\"\",")
            && sweep.contains("\n\"two\nlines\","),
        "{sweep}"
    );
    let figures = tmp.path().join("figures");
    let run = colo(&[
        "plot",
        whole.to_str().unwrap(),
        "--out",
        figures.to_str().unwrap(),
        "--format",
        "svg",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let dirs = shards(&file, tmp.path(), 2);
    let merged = tmp.path().join("merged");
    let run = merge(&merged, &dirs);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        std::fs::read(merged.join("sweep.csv")).unwrap(),
        sweep.as_bytes()
    );

    for reserved in ["sweep.csv", "shard.json", ".colo-result"] {
        let file = sweep_scenario(tmp.path(), &["a", reserved]);
        let out = tmp.path().join("reserved");
        let run = colo(&["simulate", &file, "--out", out.to_str().unwrap()]);
        assert_eq!(run.code, 1, "{reserved}: {}", run.stderr);
        assert!(
            run.stderr
                .contains(&format!("variant name `{reserved}` is taken")),
            "{}",
            run.stderr
        );
        assert!(!out.exists());
    }
}
