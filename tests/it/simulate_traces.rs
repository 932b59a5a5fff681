//! `colo simulate` on trace workloads: every shipped trace scenario runs (with a small `limit`),
//! skip counts of fixtures with planted bad rows reach summary.json and stderr, `--strict`
//! names the bad line, and the openb replay accounts for every GPU-sharing pod.
use std::path::{Path, PathBuf};

use crate::common::{Run, colo, colo_ok, root, summary};

/// `colo simulate SCENARIO EXTRA... --out OUT_DIR`.
fn simulate(scenario: &Path, extra: &[&str], out_dir: &Path) -> Run {
    let mut args = vec!["simulate", scenario.to_str().unwrap()];
    args.extend(extra);
    args.extend(["--out", out_dir.to_str().unwrap()]);
    colo(&args)
}

/// A shipped trace scenario copied into `dir` with absolute paths and `limit` jobs.
fn limited_copy(name: &str, dir: &Path, limit: usize) -> PathBuf {
    let traces = root().join("scenarios/traces");
    let text = std::fs::read_to_string(traces.join(name)).expect("scenario shipped");
    let text = text
        .replace("\"../../", &format!("\"{}/", root().display()))
        .replace("\"data/", &format!("\"{}/data/", traces.display()))
        .replace(
            "workload: Trace((",
            &format!("workload: Trace((\n        limit: {limit},"),
        );
    let path = dir.join(name);
    std::fs::write(&path, text).expect("temp scenario written");
    path
}

fn run_limited(name: &str, limit: usize) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("temp dir");
    let scenario = limited_copy(name, tmp.path(), limit);
    let out = tmp.path().join("out");
    colo_ok(&[
        "simulate",
        scenario.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    (tmp, out)
}

#[test]
fn each_trace_scenario_runs_every_mode_with_a_limit() {
    for name in [
        "philly.ron",
        "openb.ron",
        "itp.ron",
        "slurm.ron",
        "kubernetes.ron",
    ] {
        let (_tmp, out) = run_limited(name, 300);
        for variant in ["exclusive", "timeslice", "mps", "mig"] {
            let s = summary(&out.join(variant));
            let trace = &s["trace"];
            assert!(
                trace["jobs_read"].as_u64().unwrap() <= 300,
                "{name} {variant}"
            );
            assert_eq!(trace["jobs_replayed"], s["jobs"], "{name} {variant}");
            let skipped = s["skipped"]["trace_rows"].as_object().unwrap();
            let skipped_total: u64 = skipped.values().map(|v| v.as_u64().unwrap()).sum();
            assert_eq!(trace["rows_skipped"].as_u64().unwrap(), skipped_total);
            assert_eq!(
                trace["rows_read"].as_u64().unwrap(),
                trace["jobs_read"].as_u64().unwrap() + skipped_total,
                "{name} {variant}"
            );
            let done =
                s["completed"].as_u64().unwrap() + s["skipped"]["unplaceable"].as_u64().unwrap();
            assert_eq!(done, s["jobs"].as_u64().unwrap(), "{name} {variant}");
        }
        assert!(out.join("sweep.csv").is_file());
    }
}

/// A one-variant scenario replaying a fixture of sim/tests/fixtures/traces.
fn fixture_scenario(dir: &Path, format: &str, fixture: &str, extra: &str) -> PathBuf {
    let fixtures = root().join("sim/tests/fixtures/traces");
    let text = format!(
        r#"#![enable(implicit_some)]
(
    name: "fixture",
    profiles: ["{profile}"],
    cluster: [(gpu: "h200", count: 8, mode: Mps)],
    workload: Trace((
        format: {format},
        path: "{path}",
        models: Mix([(model: "resnet18:128:32", weight: 1.0), (model: "resnet50:64:224", weight: 1.0)]),
        {extra}
    )),
    on_unplaceable: Skip,
)
"#,
        profile = root()
            .join("calibrate/profiles/h200-provisional.ron")
            .display(),
        path = fixtures.join(fixture).display(),
    );
    let path = dir.join("fixture.ron");
    std::fs::write(&path, text).expect("fixture scenario written");
    path
}

#[test]
fn philly_fixture_skips_reach_summary_and_stderr() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = fixture_scenario(tmp.path(), "Philly", "philly_bad_rows.csv", "");
    let out_dir = tmp.path().join("out");
    let out = simulate(&scenario, &[], &out_dir);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let s = summary(&out_dir);
    let expected = serde_json::json!({
        "missing_field": 1, "unparsable": 2, "negative_duration": 1, "negative_gpus": 1,
        "zero_gpus": 1, "zero_duration": 1
    });
    assert_eq!(s["skipped"]["trace_rows"], expected);
    assert_eq!(s["skipped"]["unplaceable"], 0);
    assert_eq!(s["jobs"], 3);
    assert_eq!(s["trace"]["rows_read"], 10);
    let stderr = &out.stderr;
    assert!(
        stderr.contains(
            "10 rows read, 7 rows skipped: 1 missing_field, 2 unparsable, 1 negative_duration, \
             1 negative_gpus, 1 zero_gpus, 1 zero_duration; 3 jobs replayed"
        ),
        "{stderr}"
    );
}

#[test]
fn strict_flag_and_field_make_a_bad_row_an_error_with_its_line() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = fixture_scenario(tmp.path(), "Philly", "philly_bad_rows.csv", "");
    let out_dir = tmp.path().join("out");
    let out = simulate(&scenario, &["--strict"], &out_dir);
    assert_ne!(out.code, 0);
    let stderr = &out.stderr;
    assert!(
        stderr.contains("philly_bad_rows.csv:4: field `duration` `-5` is negative"),
        "{stderr}"
    );
    assert!(!out_dir.join("summary.json").exists());

    let scenario = fixture_scenario(tmp.path(), "Colo", "colo_bad_rows.csv", "strict: true,");
    let out = simulate(&scenario, &[], &out_dir);
    assert_ne!(out.code, 0);
    let stderr = &out.stderr;
    assert!(
        stderr.contains("colo_bad_rows.csv:3: field `gpus` is 0"),
        "{stderr}"
    );
}

#[test]
fn openb_fixture_defines_the_cluster_and_counts_sharing_pods() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let text = std::fs::read_to_string(fixture_scenario(
        dir,
        "AlibabaOpenb",
        "openb/openb_pod_list_fixture.csv",
        "node_gpu: \"h200\",",
    ))
    .unwrap()
    .replace(
        "[(gpu: \"h200\", count: 8, mode: Mps)]",
        "[(gpu: \"h200\", from_trace: true, mode: Mps)]",
    );
    std::fs::write(dir.join("fixture.ron"), text).unwrap();
    let out_dir = dir.join("out");
    colo_ok(&[
        "simulate",
        dir.join("fixture.ron").to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    let s = summary(&out_dir);
    assert_eq!(s["cluster"][0]["count"], 10, "2 P100 + 8 V100M32 node GPUs");
    let sharing = &s["trace"]["gpu_sharing"];
    assert_eq!(sharing["pods_in_trace"], 2);
    assert_eq!(sharing["pods_skipped"], 1, "p8 lived 0 s");
    assert_eq!(sharing["pods_replayed"], 1);
    assert_eq!(s["skipped"]["trace_rows"]["zero_duration"], 1);
    assert_eq!(s["jobs"], 3);
}

#[test]
fn issue_5_openb_replay_reports_3078_gpu_sharing_pods() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = limited_copy("openb.ron", tmp.path(), usize::MAX);
    let text = std::fs::read_to_string(&scenario)
        .unwrap()
        .replace(&format!("limit: {},", usize::MAX), "");
    std::fs::write(&scenario, text).unwrap();
    let out_dir = tmp.path().join("out");
    let out = simulate(&scenario, &[], &out_dir);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let s = summary(&out_dir.join("mps"));
    let sharing = &s["trace"]["gpu_sharing"];
    assert_eq!(sharing["pods_in_trace"], 3078);
    assert_eq!(sharing["pods_skipped"], 1);
    assert_eq!(sharing["pods_replayed"], 3077);
    assert_eq!(s["cluster"][0]["count"], 6212);
    assert_eq!(s["skipped"]["trace_rows"]["no_gpu"], 1088);
    let stderr = &out.stderr;
    assert!(
        stderr.contains("3077 of the 3078 GPU-sharing pods read; 1 skipped by the reader"),
        "{stderr}"
    );
}
