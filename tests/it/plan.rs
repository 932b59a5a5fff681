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

/// The shipped prices scenario, its output folder in `dir`, with `extra` arguments.
fn plan_prices(dir: &Path, scenario: &str, extra: &[&str]) -> crate::common::Run {
    let out = dir.join("plan");
    let mut args = vec![
        "plan",
        scenario,
        "--target",
        "p95_wait <= 1h",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend(extra);
    let run = colo(&args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    run
}

const PRICES: &str = "scenarios/planning/a100-vs-h200-prices.ron";

/// Issue 35: `--format json` is one JSON object whose answers are the numbers the table
/// prints, under keys that name the metric and its unit.
#[test]
fn json_answer_equals_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let text = plan_prices(dir.path(), PRICES, &[]).stdout;
    let run = plan_prices(dir.path(), PRICES, &["--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).expect("stdout is one JSON");
    assert_eq!(v["value_key"], "p95_wait_h");
    assert_eq!(v["target"]["p95_wait_h"], 1.0);
    assert_eq!(v["profile_origin"], "h200: fitted");
    let candidates = v["candidates"].as_array().unwrap();
    assert_eq!(candidates.len(), 3);
    for c in candidates {
        let label = c["candidate"].as_str().unwrap();
        let row = text
            .lines()
            .find(|l| l.starts_with(label) && l[label.len()..].starts_with("  "))
            .unwrap_or_else(|| panic!("{label} in\n{text}"));
        let cells: Vec<&str> = row[label.len()..].split_whitespace().collect();
        let gpus = c["smallest_gpus"].as_u64().unwrap();
        assert_eq!(cells[0], gpus.to_string(), "{row}");
        let value = format!("{:.2}", c["p95_wait_h"].as_f64().unwrap());
        let fewer = format!("{:.2}", c["one_fewer_p95_wait_h"].as_f64().unwrap());
        let cost = format!("{:.2}", c["cost_per_hour"].as_f64().unwrap());
        assert_eq!(
            [cells[1], cells[3], cells[5]],
            [&value, &fewer, &cost],
            "{row}"
        );
    }
    let cheapest = &v["cheapest"];
    let line = format!(
        "cheapest: {} with {} GPUs at {:.2}/hour",
        cheapest["candidate"].as_str().unwrap(),
        cheapest["gpus"],
        cheapest["cost_per_hour"].as_f64().unwrap()
    );
    assert!(text.contains(&line), "{line}\n{text}");
}

/// Issue 35: plan says how it breaks a tie for cheapest, in its output and its help, and the
/// tie it reports is one plan.csv shows: the shipped prices scenario has two candidates at
/// the same cost per hour, and the one listed first is named.
#[test]
fn the_tie_break_is_stated_and_followed() {
    let dir = tempfile::tempdir().unwrap();
    let run = plan_prices(dir.path(), PRICES, &[]);
    let mut reader = csv::Reader::from_path(dir.path().join("plan/plan.csv")).unwrap();
    let header = reader.headers().unwrap().clone();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let (name, smallest, cost) = (col("candidate"), col("smallest"), col("cost_per_hour"));
    let answers: Vec<(String, f64)> = reader
        .records()
        .map(Result::unwrap)
        .filter(|row| &row[smallest] == "true")
        .map(|row| (row[name].to_owned(), row[cost].parse().unwrap()))
        .collect();
    let least = answers.iter().map(|a| a.1).fold(f64::INFINITY, f64::min);
    let tied: Vec<&str> = answers
        .iter()
        .filter(|a| a.1 == least)
        .map(|a| a.0.as_str())
        .collect();
    assert!(
        tied.len() > 1,
        "the scenario no longer has a tie: {answers:?}"
    );
    let first = format!("cheapest: {} with", tied[0]);
    assert!(run.stdout.contains(&first), "{first}\n{}", run.stdout);
    let ties = format!(
        "ties: candidates whose answers cost the same per hour: the one listed first in the scenario's plan.candidates is named cheapest (tied here: {})",
        tied.join(", ")
    );
    assert!(
        run.stdout.lines().any(|l| l == ties),
        "{ties}\n{}",
        run.stdout
    );
    let help = colo(&["plan", "--help"]).stdout;
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        help.contains("Ties: candidates whose answers cost the same per hour: the one listed first in the scenario's plan.candidates is named cheapest."),
        "{help}"
    );
    assert!(help.contains("--format json"), "{help}");
}

/// Issue 35: a candidate name longer than the column (30 characters) widens it.
#[test]
fn a_long_candidate_name_keeps_the_table_aligned() {
    let dir = tempfile::tempdir().unwrap();
    let long = "h200 mps with a 30-char name..";
    assert_eq!(long.len(), 30);
    let shipped = std::fs::read_to_string(root().join(PRICES)).unwrap();
    let profile = root().join("calibrate/profiles/h200.ron");
    let text = shipped
        .replace("name: \"h200 mps\"", &format!("name: \"{long}\""))
        .replace(
            "\"../../calibrate/profiles/h200.ron\"",
            &format!("\"{}\"", profile.display()),
        );
    let file = write(dir.path(), "long.ron", &text);
    let run = plan_prices(dir.path(), &file, &[]);
    let lines: Vec<&str> = run.stdout.lines().collect();
    let header = lines
        .iter()
        .position(|l| l.starts_with("candidate "))
        .unwrap();
    let rows: Vec<(&str, &str)> = ["h200 exclusive", long, "h200 mig 3g+4g"]
        .iter()
        .zip(&lines[header + 1..header + 4])
        .map(|(name, line)| (*name, *line))
        .collect();
    // GPUs, the metric, one fewer and $/hour.
    crate::common::assert_aligned(lines[header], &rows, 4);
}

/// Issue 35: plan's figure rings each candidate's answer (one ring per candidate that met the
/// target), draws sizes up to twice the largest answer and says so on the axis; the cost
/// figure's axis has its unit.
#[test]
fn the_target_figure_rings_the_answers() {
    let dir = tempfile::tempdir().unwrap();
    let run = plan_prices(dir.path(), PRICES, &["--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let answers: Vec<u64> = v["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["smallest_gpus"].as_u64())
        .collect();
    assert!(!answers.is_empty());
    let svg = std::fs::read_to_string(dir.path().join("plan/plan_target.svg")).unwrap();
    let rings = svg
        .matches(r##"r="13" opacity="1" fill="none" stroke="#000000""##)
        .count();
    assert_eq!(rings, answers.len(), "one ring per answer");
    let largest = answers.iter().max().unwrap();
    let drawn = (largest * 2).max(largest + 4);
    assert!(
        svg.contains(&format!("up to {drawn} drawn")),
        "x axis says sizes up to {drawn} are drawn"
    );
    let cost = std::fs::read_to_string(dir.path().join("plan/plan_cost.svg")).unwrap();
    assert!(cost.contains("$/hour"), "cost axis has its unit");
}
