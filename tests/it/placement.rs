//! Placement rules through the real binary: the fixture `fixtures/placement.ron` places the same
//! four jobs best-fit, spread and least-slowdown (once with a minimum speed on job `a`), and a
//! minimum speed the rule would not honour, or out of range, is an error naming the field.
use std::path::Path;

use crate::common::{colo, scenario, write};

/// (gpu, slowdown) per job of one variant's jobs.csv.
fn jobs(dir: &Path, variant: &str) -> Vec<(u32, f64)> {
    let text = std::fs::read_to_string(dir.join(variant).join("jobs.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (gpu, slowdown, status) = (col("gpu"), col("slowdown"), col("status"));
    lines
        .map(|line| {
            let cells: Vec<&str> = line.split(',').collect();
            assert_eq!(cells[status], "completed", "{line}");
            (
                cells[gpu].parse().unwrap(),
                cells[slowdown].parse().unwrap(),
            )
        })
        .collect()
}

#[test]
fn the_fixture_runs_under_every_rule_and_each_places_as_documented() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("placement");
    let run = colo(&[
        "simulate",
        "tests/it/fixtures/placement.ron",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let best_fit = jobs(&out, "best-fit");
    assert!(
        best_fit.iter().all(|&(gpu, _)| gpu == 0),
        "best-fit packs: {best_fit:?}"
    );
    let spread = jobs(&out, "spread");
    let gpus: Vec<u32> = spread.iter().map(|&(gpu, _)| gpu).collect();
    assert_eq!(gpus, [0, 1, 0, 1], "spread alternates");
    let least = jobs(&out, "least-slowdown");
    assert_ne!(least[0].0, least[1].0, "an idle GPU costs least");
    // Job a keeps 0.95 of its alone speed at every instant, so on average too; without the
    // minimum it is slowed more.
    let kept = jobs(&out, "least-slowdown-min");
    assert!(kept[0].1 <= 1.0 / 0.95, "{kept:?}");
    assert!(least[0].1 > 1.0 / 0.95, "{least:?}");
}

#[test]
fn a_minimum_speed_needs_least_slowdown_and_a_fraction() {
    let tmp = tempfile::tempdir().unwrap();
    let cluster = "(gpu: \"h200\", count: 1, mode: Mps)";
    let job = |min: &str| format!("(model: \"resnet50:64:224\", samples: 1e6, min_speed: {min})");
    let out = tmp.path().join("o");
    let simulate = |path: &str| colo(&["simulate", path, "--out", out.to_str().unwrap()]);
    let path = write(tmp.path(), "bf.ron", &scenario(cluster, &job("0.5")));
    let run = simulate(&path);
    assert_ne!(run.code, 0);
    assert!(run.stderr.contains("bf.ron"), "{}", run.stderr);
    assert!(run.stderr.contains("policy.placement"), "{}", run.stderr);
    assert!(
        run.stderr.contains("placement: LeastSlowdown"),
        "{}",
        run.stderr
    );
    let least = scenario(cluster, &job("1.5")).replace(
        "workload:",
        "policy: (placement: LeastSlowdown),\n    workload:",
    );
    let path = write(tmp.path(), "range.ron", &least);
    let run = simulate(&path);
    assert_ne!(run.code, 0);
    assert!(
        run.stderr.contains("workload.Jobs[0].min_speed"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("(0, 1]"), "{}", run.stderr);
}
