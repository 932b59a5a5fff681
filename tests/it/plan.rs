//! `colo plan` through the real binary: on a shipped planning scenario, the size it returns
//! meets the target in a separate `colo simulate`, and one GPU fewer does not.
use std::path::Path;

use crate::common::{colo, root, write};

const SCENARIO: &str = "scenarios/planning/mps-vs-exclusive.ron";
const TARGET: &str = "p95_wait <= 2h";
const BOUND_S: f64 = 7200.0;

/// (mode column, GPUs) of each row plan.csv marks as a candidate's answer.
fn answers(csv: &str) -> Vec<(String, u32)> {
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (mode, gpus, smallest) = (col("mode"), col("gpus"), col("smallest"));
    lines
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|row| row[smallest] == "true")
        .map(|row| (row[mode].to_owned(), row[gpus].parse().unwrap()))
        .collect()
}

/// The shipped scenario with its cluster set to `count` GPUs in `mode`, simulated apart; the
/// 95th percentile of wait from its summary.json.
fn simulated_p95_wait(dir: &Path, mode: &str, count: u32) -> f64 {
    let shipped = std::fs::read_to_string(root().join(SCENARIO)).unwrap();
    let profile = root().join("calibrate/profiles/h200.ron");
    let mode_spec = match mode {
        "exclusive" => "Exclusive",
        "mps" => "Mps",
        other => panic!("unexpected mode {other}"),
    };
    let text = shipped
        .replace(
            "cluster: [(gpu: \"h200\", count: 8, mode: Exclusive)]",
            &format!("cluster: [(gpu: \"h200\", count: {count}, mode: {mode_spec})]"),
        )
        .replace(
            "\"../../calibrate/profiles/h200.ron\"",
            &format!("\"{}\"", profile.display()),
        );
    assert!(text.contains(&format!("count: {count}, mode: {mode_spec}")));
    let file = write(dir, &format!("{mode}-{count}.ron"), &text);
    let out = dir.join(format!("sim-{mode}-{count}"));
    let run = colo(&["simulate", &file, "--out", out.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["completed"], summary["jobs"]);
    summary["wait_s"]["p95"].as_f64().unwrap()
}

#[test]
fn plan_size_meets_the_target_in_a_separate_simulate_and_one_fewer_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("plan");
    let run = colo(&[
        "plan",
        SCENARIO,
        "--target",
        TARGET,
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("fitted"), "{}", run.stdout);
    for figure in ["plan_target.png", "plan_target.svg"] {
        assert!(out.join(figure).is_file(), "{figure}");
    }
    let found = answers(&std::fs::read_to_string(out.join("plan.csv")).unwrap());
    assert_eq!(found.len(), 2, "both candidates meet the target: {found:?}");
    for (mode, gpus) in found {
        assert!(
            gpus > 1,
            "{mode}: a one-GPU answer would not test the size below"
        );
        let at = simulated_p95_wait(dir.path(), &mode, gpus);
        assert!(at <= BOUND_S, "{mode} at {gpus} GPUs: p95 wait {at} s");
        let below = simulated_p95_wait(dir.path(), &mode, gpus - 1);
        assert!(
            below > BOUND_S,
            "{mode} at {} GPUs: p95 wait {below} s",
            gpus - 1
        );
    }
}

#[test]
fn prices_name_the_cheapest_and_draw_the_cost_curve() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("plan");
    let run = colo(&[
        "plan",
        "scenarios/planning/a100-vs-h200-prices.ron",
        "--target",
        "p95_wait <= 1h",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // Each candidate's answer (the rows marked smallest) costs its GPUs x the scenario's H200
    // price, 3.50 per GPU-hour; the cheapest is the least cost, ties to the earlier candidate
    // (plan.csv lists them in the scenario's order).
    let mut reader = csv::Reader::from_path(out.join("plan.csv")).unwrap();
    let header = reader.headers().unwrap().clone();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let (name, gpus, smallest, cost) = (
        col("candidate"),
        col("gpus"),
        col("smallest"),
        col("cost_per_hour"),
    );
    let answers: Vec<(String, u32, f64)> = reader
        .records()
        .map(Result::unwrap)
        .filter(|row| &row[smallest] == "true")
        .map(|row| {
            let n: u32 = row[gpus].parse().unwrap();
            let c: f64 = row[cost].parse().unwrap();
            assert!((c - 3.5 * f64::from(n)).abs() < 1e-9, "{row:?}");
            (row[name].to_owned(), n, c)
        })
        .collect();
    assert_eq!(answers.len(), 3, "every H200 candidate meets the target");
    let mut best = &answers[0];
    for a in &answers[1..] {
        if a.2 < best.2 {
            best = a;
        }
    }
    let line = format!(
        "cheapest: {} with {} GPUs at {:.2}/hour",
        best.0, best.1, best.2
    );
    assert!(run.stdout.contains(&line), "{line}\n{}", run.stdout);
    let png = std::fs::read(out.join("plan_cost.png")).unwrap();
    assert_eq!(crate::common::png_size(&png), Some((1200, 800)));
}

#[test]
fn bad_requests_say_what_is_wrong() {
    let cases: [(&[&str], &str); 3] = [
        (
            &["scenarios/default.ron", "--target", "p95_jct <= 2h"],
            "no `plan` section",
        ),
        (
            &[SCENARIO, "--target", "p95_jct >= 2h"],
            "p95_jct takes <= or <",
        ),
        (&[SCENARIO, "--target", "jct <= 2h"], "unknown metric `jct`"),
    ];
    for (args, expected) in cases {
        let full: Vec<&str> = ["plan"].iter().chain(args).copied().collect();
        let run = colo(&full);
        assert_eq!(run.code, 1, "{args:?}");
        assert!(run.stderr.contains(expected), "{args:?}: {}", run.stderr);
    }
}

/// The README's planning answers are what `colo plan` says now (issue 35: they had gone stale).
#[test]
fn the_readme_quotes_the_planning_answers_colo_gives() {
    let readme = std::fs::read_to_string(crate::common::root().join("README.md")).unwrap();
    let readme = readme.split_whitespace().collect::<Vec<_>>().join(" ");
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().to_string_lossy().into_owned();
    let answers = |scenario: &str, target: &str| -> Vec<(String, u32)> {
        let run = colo(&["plan", scenario, "--target", target, "--out", &out]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        run.stdout
            .lines()
            .filter_map(|l| {
                let (name, rest) = l.split_at_checked(34)?;
                let gpus = rest.split_whitespace().next()?.parse().ok()?;
                Some((name.trim().to_owned(), gpus))
            })
            .collect()
    };
    let gpus = |list: &[(String, u32)], name: &str| {
        list.iter()
            .find(|(n, _)| n == name)
            .map(|(_, g)| *g)
            .unwrap()
    };
    let wait = answers(SCENARIO, "p95_wait <= 2h");
    let jct = answers(SCENARIO, "p95_jct <= 15h");
    let quoted = format!(
        "`--target \"p95_wait <= 2h\"`, exclusive needs {} GPUs and MPS {}; with `--target \"p95_jct <= 15h\"`, exclusive needs {} and MPS {}",
        gpus(&wait, "h200 exclusive"),
        gpus(&wait, "h200 mps"),
        gpus(&jct, "h200 exclusive"),
        gpus(&jct, "h200 mps")
    );
    assert!(readme.contains(&quoted), "README lacks: {quoted}");
    let mig = answers(
        "scenarios/planning/a100-static-vs-dynamic-mig.ron",
        "p95_wait <= 1h",
    );
    let quoted = format!(
        "With `--target \"p95_wait <= 1h\"`: MPS {} GPUs, static 3g+4g {}, static 2g+2g+3g {}, dynamic {}",
        gpus(&mig, "a100 mps"),
        gpus(&mig, "a100 mig 3g+4g"),
        gpus(&mig, "a100 mig 2g+2g+3g"),
        gpus(&mig, "a100 mig dynamic")
    );
    assert!(readme.contains(&quoted), "README lacks: {quoted}");
}
