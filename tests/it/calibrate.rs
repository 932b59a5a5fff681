//! `colo calibrate` CLI tests: plans run on the fake GPU (`--fake-gpu`), user commands with a
//! fake GPU identity, the no-GPU error, plan errors, and the summary of the committed H200 data.
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn colo(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_colo"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("colo runs")
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn write_plan(dir: &Path, body: &str) -> PathBuf {
    let path = dir.join("plan.ron");
    std::fs::write(&path, body).expect("write plan");
    path
}

const PLAN: &str = r#"(name: "cli", groups: [
    (id: "alone", mode: Exclusive, sets: [["resnet18:128:32"], ["resnet50:64:224"]]),
    (id: "pair", mode: Mps, sets: [["resnet18:128:32", "resnet50:64:224"]]),
    (id: "slice", mode: MigEmulated, mig_profiles: ["1g.18gb"], sets: [["resnet50:64:224"]]),
])"#;

fn lines(path: &Path) -> Vec<serde_json::Value> {
    let body = std::fs::read_to_string(path).expect("store exists");
    body.lines()
        .map(|l| serde_json::from_str(l).expect("valid JSON line"))
        .collect()
}

#[test]
fn run_on_the_fake_gpu_records_every_process_point_then_resumes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let plan = write_plan(dir.path(), PLAN);
    let out_dir = dir.path().join("out");
    let args = [
        "calibrate",
        "run",
        plan.to_str().expect("utf8"),
        "--out",
        out_dir.to_str().expect("utf8"),
        "--fake-gpu",
    ];
    let first = colo(&args);
    let (stdout, stderr) = text(&first);
    assert!(first.status.success(), "{stderr}");
    assert!(stderr.contains("15 records written (0 failed)"), "{stderr}");
    assert!(
        stdout.contains("resnet50:64:224")
            && stdout.contains("mig-emulated")
            && stdout.contains("1g.18gb"),
        "{stdout}"
    );
    let records = lines(&out_dir.join("cli.jsonl"));
    assert_eq!(records.len(), 15);
    assert!(records.iter().all(|r| r["source"] == "fake"));
    let slice = records
        .iter()
        .find(|r| r["group"] == "slice")
        .expect("slice record");
    assert_eq!(slice["mode"], "mig-emulated");
    assert_eq!(slice["env"]["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"], "12");
    assert_eq!(slice["env"]["CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"], "0=16384M");
    let again = colo(&args);
    let (_, stderr) = text(&again);
    assert!(
        stderr.contains("0 records written") && stderr.contains("12 set repeats already recorded"),
        "{stderr}"
    );
    assert_eq!(lines(&out_dir.join("cli.jsonl")).len(), 15);
}

#[test]
fn dry_run_prints_the_plan_and_its_estimated_gpu_time() {
    let dir = tempfile::tempdir().expect("temp dir");
    let plan = write_plan(dir.path(), PLAN);
    let out = colo(&[
        "calibrate",
        "run",
        plan.to_str().expect("utf8"),
        "--out",
        "unused",
        "--dry-run",
    ]);
    let (stdout, _) = text(&out);
    assert!(out.status.success());
    assert!(stdout.contains("1g.18gb (12% SMs, 16384 MiB)"), "{stdout}");
    assert!(
        stdout.contains("15 process-points; estimated GPU time"),
        "{stdout}"
    );
    assert!(!dir.path().join("unused").exists());
}

#[test]
fn without_a_gpu_run_exits_2_with_a_clear_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let plan = write_plan(dir.path(), PLAN);
    // GPU index 999 exists nowhere, so this holds on machines with a GPU too.
    let out = colo(&[
        "calibrate",
        "run",
        plan.to_str().expect("utf8"),
        "--out",
        dir.path().to_str().expect("utf8"),
        "--gpu",
        "999",
    ]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("GPU"), "{stderr}");
}

#[test]
fn plan_errors_name_file_line_and_column() {
    let dir = tempfile::tempdir().expect("temp dir");
    let plan = write_plan(
        dir.path(),
        "(name: \"x\",\n groups: [(id: \"a\", mode: Exclusive, sets: [[\"r:1:1\"]], window: 3)])",
    );
    let out = colo(&[
        "calibrate",
        "run",
        plan.to_str().expect("utf8"),
        "--out",
        "x",
        "--fake-gpu",
    ]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr.contains("plan.ron:2:"), "{stderr}");
}

#[test]
fn profile_measures_commands_by_progress_or_lifetime() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out_dir = dir.path().join("out");
    let progress = "for i in 1 2 3 4 5 6; do echo samples=$((i*100)); sleep 0.05; done";
    let out = colo(&[
        "calibrate",
        "profile",
        "--fake-gpu",
        "--cmd",
        progress,
        "--cmd",
        "sleep 0.1",
        "--warmup-s",
        "0.01",
        "--out",
        out_dir.to_str().expect("utf8"),
        "--mode",
        "timeslice",
    ]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.contains("measured"), "{stdout}");
    let records = lines(&out_dir.join("profile.jsonl"));
    assert_eq!(records.len(), 6);
    let rate = records[0]["samples_per_s"].as_f64().expect("progress rate");
    assert!(rate > 500.0 && rate < 2100.0, "rate {rate}");
    assert!(records[1]["samples_per_s"].is_null());
    assert!(records[1]["lifetime_s"].as_f64().expect("lifetime") >= 0.1);
}

#[test]
fn summary_of_the_committed_h200_data() {
    let dir = tempfile::tempdir().expect("temp dir");
    let csv = dir.path().join("summary.csv");
    let out = colo(&[
        "calibrate",
        "summary",
        "calibrate/data/h200",
        "--csv",
        csv.to_str().expect("utf8"),
    ]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    for needle in [
        "resnet50:64:224",
        "timeslice",
        "mps",
        "mig-emulated",
        "4g.71gb",
        "measured",
    ] {
        assert!(stdout.contains(needle), "missing {needle}");
    }
    let csv_text = std::fs::read_to_string(&csv).expect("csv written");
    assert!(csv_text.starts_with("point,mode,budget,co_runners,"));
    assert_eq!(
        csv_text.lines().count(),
        stdout.lines().count() - 1,
        "one CSV row per table row"
    );
}

const MIG_PLAN: &str = r#"(name: "mig", groups: [
    (id: "alone", mode: Exclusive, sets: [["resnet50:64:224"]]),
    (id: "slices", mode: Mig, mig_profiles: ["3g.71gb", "4g.71gb"], sets: [["resnet50:64:224", "resnet18:128:32"]]),
])"#;

#[test]
fn mig_profiles_without_the_flag_are_refused_before_anything_runs() {
    let dir = tempfile::tempdir().expect("temp dir");
    let plan = write_plan(dir.path(), MIG_PLAN);
    let out_dir = dir.path().join("out");
    // GPU 999 exists nowhere: the refusal comes before the GPU is probed (which would exit 2).
    let out = colo(&[
        "calibrate",
        "run",
        plan.to_str().expect("utf8"),
        "--out",
        out_dir.to_str().expect("utf8"),
        "--gpu",
        "999",
    ]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("group `slices`")
            && stderr.contains("mig_uuids")
            && stderr.contains("--allow-mig-reconfigure"),
        "{stderr}"
    );
    assert!(!out_dir.exists(), "nothing ran, no store made");
}

#[test]
fn mig_profiles_with_the_flag_run_on_new_instances() {
    let dir = tempfile::tempdir().expect("temp dir");
    let plan = write_plan(dir.path(), MIG_PLAN);
    let out_dir = dir.path().join("out");
    let plan_arg = plan.to_str().expect("utf8");
    let dry = colo(&["calibrate", "run", plan_arg, "--out", "unused", "--dry-run"]);
    let (stdout, _) = text(&dry);
    assert!(
        stdout.contains("new 3g.71gb instance (created with --allow-mig-reconfigure)"),
        "{stdout}"
    );
    let out_arg = out_dir.to_str().expect("utf8");
    let args = ["calibrate", "run", plan_arg, "--out", out_arg, "--fake-gpu"];
    let out = colo(&[&args[..], &["--allow-mig-reconfigure"]].concat());
    let (_, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    let records = lines(&out_dir.join("mig.jsonl"));
    let slice = records
        .iter()
        .find(|r| r["group"] == "slices" && r["rank"] == 1)
        .expect("slice record");
    assert_eq!(slice["mode"], "mig");
    assert_eq!(slice["mig_profile"], "4g.71gb");
    assert_eq!(slice["mig_uuid"], "MIG-fake-r1");
    assert!(slice["sm_percent"].is_null());
}

#[test]
fn profile_never_creates_mig_instances() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = colo(&[
        "calibrate",
        "profile",
        "--fake-gpu",
        "--cmd",
        "true",
        "--mode",
        "mig",
        "--mig-profile",
        "3g.71gb",
        "--out",
        dir.path().to_str().expect("utf8"),
    ]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("--mig-uuid"), "{stderr}");
}
