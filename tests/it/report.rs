//! `colo report paper`: the study reproduced on the provisional H200 profile and on an A100
//! with no ResNet profile; files, conclusions table, uncovered sets, run time.
use std::path::Path;
use std::time::{Duration, Instant};

use crate::common::{colo, root};

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn paper_report_on_the_provisional_profile() {
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().to_string_lossy().into_owned();
    let started = Instant::now();
    let run = colo(&[
        "report",
        "paper",
        "--profile",
        "calibrate/profiles/h200-provisional.ron",
        "--out",
        &dir,
    ]);
    let took = started.elapsed();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(took < Duration::from_secs(60), "took {took:?}");
    assert!(run.stdout.contains("(provisional)"), "{}", run.stdout);
    let page = read(&out.path().join("report.md"));
    assert!(page.contains("## The study's conclusions against the simulation"));
    let rows = page
        .lines()
        .filter(|l| l.starts_with("| 1 |") || l.starts_with("| 6 |"));
    assert_eq!(rows.count(), 2, "conclusions table has six rows");
    assert!(page.contains("**provisional**"));
    assert!(page.contains("largest gain"));
    assert!(page.contains("not covered: needs calibration of resnet152:128:224 on h200"));
    assert!(page.contains("| cait_xxs24_224:128:224 | h200 |"));
    let figure = out
        .path()
        .join("figures/e33_resnet26_128_32_throughput.png");
    assert!(page.contains("](figures/e33_resnet26_128_32_throughput.png)"));
    let size = std::fs::metadata(&figure).unwrap().len();
    assert!((10_000..300_000).contains(&size), "{size} bytes");
    for link in page.lines().filter_map(|l| l.split("](").nth(1)) {
        let file = link.trim_end_matches(')');
        assert!(out.path().join(file).is_file(), "{file} linked but missing");
    }
}

#[test]
fn paper_report_without_a_resnet_profile_lists_every_set_as_not_covered() {
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().to_string_lossy().into_owned();
    // The parametric model over MISO's A100 profile (the kernel model, the default, answers
    // from transferred H200 traces instead).
    let run = colo(&[
        "report",
        "paper",
        "--gpu",
        "a100-40gb",
        "--model",
        "parametric",
        "--out",
        &dir,
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let page = read(&out.path().join("report.md"));
    assert!(page.contains("Coverage: 0 sets predicted"), "{page}");
    assert!(page.contains("not covered: needs calibration of resnet26:128:32 on a100-40gb"));
    assert!(page.contains("not tested (no covered set)"));
    assert!(!out.path().join("figures").exists());
}

#[test]
fn paper_report_names_a_missing_spec() {
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().to_string_lossy().into_owned();
    let run = colo(&["report", "paper", "--gpu", "h100-80gb", "--out", &dir]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .contains("no reproduction spec scenarios/paper/h100-80gb.report.ron"),
        "{}",
        run.stderr
    );
    assert!(root().join("scenarios/paper/h200.report.ron").is_file());
}

/// The shipped pages and figures under docs/ are exactly what the README's commands write now:
/// generated, never hand-edited, and not stale.
#[test]
fn shipped_example_reports_are_regenerated_not_edited() {
    for (gpu, page, model) in [
        ("h200", "paper-h200", "kernel"),
        ("a100-40gb", "paper-a100-40gb", "parametric"),
        ("a100-40gb", "paper-a100-40gb-transferred", "kernel"),
    ] {
        let shipped = root().join(format!("docs/{page}"));
        let out = tempfile::tempdir().unwrap();
        let dir = out.path().to_string_lossy().into_owned();
        let run = colo(&[
            "report", "paper", "--gpu", gpu, "--model", model, "--out", &dir,
        ]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let fresh = read(&out.path().join("report.md")).replace(&dir, &format!("docs/{page}"));
        let stale = format!(
            "docs/{page} is stale: run `cargo run --release -- report paper --gpu {gpu} --model {model} --out docs/{page}` and commit it"
        );
        assert!(fresh == read(&shipped.join("report.md")), "{stale}");
        let figures = out.path().join("figures");
        let count = |dir: &Path| std::fs::read_dir(dir).map_or(0, |d| d.count());
        assert_eq!(count(&figures), count(&shipped.join("figures")), "{stale}");
        for entry in std::fs::read_dir(&figures).into_iter().flatten().flatten() {
            let name = entry.file_name();
            let shipped_figure = std::fs::read(shipped.join("figures").join(&name)).ok();
            let size = entry.metadata().unwrap().len();
            assert!(size < 300_000, "{name:?} is {size} bytes");
            assert!(
                shipped_figure == Some(std::fs::read(entry.path()).unwrap()),
                "{stale} ({name:?})"
            );
        }
    }
}

/// The measured section compares each set with the alone runs of its own GPU: two copies at
/// 700 samples/s each against 1000 alone is a gain of 1.40; a set with an out-of-memory process
/// gets no gain and says so.
#[test]
fn measured_sets_are_compared_with_alone_on_the_same_gpu() {
    let committed =
        std::fs::read_to_string(root().join("calibrate/data/h200/h200-paper-ts.jsonl")).unwrap();
    let mut lines = Vec::new();
    for line in committed.lines() {
        let mut rec: serde_json::Value = serde_json::from_str(line).unwrap();
        let point = rec["point"].as_str().unwrap().to_owned();
        let group = rec["group"].as_str().unwrap().to_owned();
        // A forged rate keeps its record consistent: the window its iterations take at it.
        let set_rate = |rec: &mut serde_json::Value, rate: f64| {
            let samples = rec["iterations"].as_f64().unwrap() * rec["batch"].as_f64().unwrap();
            rec["samples_per_s"] = rate.into();
            rec["window_s"] = (samples / rate).into();
        };
        match (point.as_str(), group.as_str()) {
            ("resnet50:32:64", "alone-launchbound") => set_rate(&mut rec, 1000.0),
            ("resnet50:32:64", "copies2-ts") => set_rate(&mut rec, 700.0),
            ("resnet26:32:32", "copies2-ts") if rec["rank"] == 1 && rec["repeat"] == 0 => {
                rec["status"] = "oom".into();
                rec["samples_per_s"] = serde_json::Value::Null;
            }
            _ => {}
        }
        lines.push(rec.to_string());
    }
    let data = tempfile::tempdir().unwrap();
    std::fs::write(data.path().join("paper.jsonl"), lines.join("\n") + "\n").unwrap();
    let out = tempfile::tempdir().unwrap();
    let run = colo(&[
        "report",
        "paper",
        "--data",
        &data.path().to_string_lossy(),
        "--out",
        &out.path().to_string_lossy(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let page = read(&out.path().join("report.md"));
    assert!(page.contains("## Measured on this GPU"), "{page}");
    assert!(
        page.contains("| 34/18 | 2 x resnet50:32:64 | naive | 700 | 1.40 |"),
        "{page}"
    );
    assert!(
        page.contains("out of memory in 1 repeat(s): 1 processes"),
        "{page}"
    );
    let missing = colo(&[
        "report",
        "paper",
        "--data",
        "no/such/dir",
        "--out",
        &out.path().to_string_lossy(),
    ]);
    assert_eq!(missing.code, 1);
    assert!(missing.stderr.contains("no/such/dir"), "{}", missing.stderr);
}

/// docs/policies/README.md's table is what docs/policies/table.py prints from the committed
/// summaries of the run it describes (issue 35: numbers in documents come from commands).
#[test]
fn the_policies_page_table_comes_from_its_committed_summaries() {
    let table = crate::common::python_ok("docs/policies/table.py", &[]);
    assert_eq!(table.lines().count(), 26, "{table}");
    let page = std::fs::read_to_string(root().join("docs/policies/README.md")).unwrap();
    for row in table.lines() {
        assert!(page.contains(row), "docs/policies/README.md lacks `{row}`");
    }
}

/// On the A100 the kernel model covers exactly the study's series whose point has an H200
/// trace in calibrate/data/h200/traces (carried over by the transfer), and says so.
#[test]
fn a100_kernel_page_covers_the_series_with_h200_traces() {
    let page = read(&root().join("docs/paper-a100-40gb-transferred/report.md"));
    assert!(
        page.contains("kernel model (traces transferred"),
        "model not named"
    );
    assert!(
        page.contains("naive, MPS, MIG transferred"),
        "sharing origins not named"
    );
    let lines: Vec<&str> = page.lines().collect();
    let mut series = 0;
    for (i, line) in lines.iter().enumerate() {
        let Some(rest) = line.strip_prefix("### ") else {
            continue;
        };
        let point = rest.split_whitespace().next().unwrap();
        let file = format!("{}.trace.json.gz", point.replace(':', "_"));
        let traced = root()
            .join("calibrate/data/h200/traces")
            .join(&file)
            .is_file();
        let not_covered = lines[i + 1..]
            .iter()
            .take_while(|l| !l.starts_with("### "))
            .any(|l| l.starts_with("Not covered"));
        assert_eq!(
            traced, !not_covered,
            "{point}: traced {traced}, covered {}",
            !not_covered
        );
        series += 1;
    }
    assert!(series >= 6, "{series} series");
}
