//! `colo calibrate` CLI tests: plans run on the fake GPU (`--fake-gpu`), user commands with a
//! fake GPU identity, kernel traces on the fake GPU (`calibrate trace`, plans with `trace:
//! true`), the no-GPU error, plan errors, and the summary of the committed H200 data.
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

/// `colo args...`, which must succeed: its stdout and stderr.
fn ok(args: &[&str]) -> (String, String) {
    let out = colo(args);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    (stdout, stderr)
}

/// `args` run again write nothing new (stderr: `0 records written` and `also`); `file` keeps
/// its `n` lines.
fn assert_rerun_writes_nothing(args: &[&str], also: &str, file: &Path, n: usize) {
    let (_, stderr) = text(&colo(args));
    assert!(
        stderr.contains("0 records written") && stderr.contains(also),
        "{stderr}"
    );
    assert_eq!(lines(file).len(), n);
}

/// `colo calibrate run PLAN --out OUT EXTRA...`.
fn run_plan(plan: &Path, out: &str, extra: &[&str]) -> Output {
    let head = [
        "calibrate",
        "run",
        plan.to_str().expect("utf8"),
        "--out",
        out,
    ];
    colo(&[&head[..], extra].concat())
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
    let (stdout, stderr) = ok(&args);
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
    let repeats = "12 set repeats already recorded";
    assert_rerun_writes_nothing(&args, repeats, &out_dir.join("cli.jsonl"), 15);
}

#[test]
fn dry_run_prints_the_plan_and_its_estimated_gpu_time() {
    let dir = tempfile::tempdir().expect("temp dir");
    let plan = write_plan(dir.path(), PLAN);
    let out = run_plan(&plan, "unused", &["--dry-run"]);
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
    let out = run_plan(&plan, dir.path().to_str().expect("utf8"), &["--gpu", "999"]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("GPU"), "{stderr}");
    if stderr.contains("no NVIDIA GPU found") {
        assert!(stderr.contains("--dry-run lists the plan"), "{stderr}");
    }
}

#[test]
fn without_a_gpu_profile_does_not_suggest_the_dry_run_it_lacks() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = colo(&[
        "calibrate",
        "profile",
        "--cmd",
        "true",
        "--out",
        dir.path().to_str().expect("utf8"),
        "--gpu",
        "999",
    ]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(!stderr.contains("dry-run"), "{stderr}");
}

#[test]
fn fake_gpu_is_in_the_help_the_readme_points_to() {
    for command in ["run", "profile", "trace"] {
        let out = colo(&["calibrate", command, "--help"]);
        let (stdout, _) = text(&out);
        assert!(
            stdout.contains("--fake-gpu"),
            "calibrate {command}: {stdout}"
        );
    }
}

#[test]
fn plan_errors_name_file_line_and_column() {
    let dir = tempfile::tempdir().expect("temp dir");
    let plan = write_plan(
        dir.path(),
        "(name: \"x\",\n groups: [(id: \"a\", mode: Exclusive, sets: [[\"r:1:1\"]], window: 3)])",
    );
    let out = run_plan(&plan, "x", &["--fake-gpu"]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr.contains("plan.ron:2:"), "{stderr}");
}

#[test]
fn profile_measures_commands_by_progress_or_lifetime() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out_dir = dir.path().join("out");
    let progress = "for i in 1 2 3 4 5 6; do echo samples=$((i*100)); sleep 0.05; done";
    let (stdout, _) = ok(&[
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
    assert!(stdout.contains("fake"), "{stdout}");
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
    let (stdout, _) = ok(&[
        "calibrate",
        "summary",
        "calibrate/data/h200",
        "--csv",
        csv.to_str().expect("utf8"),
    ]);
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
    let out = run_plan(&plan, out_dir.to_str().expect("utf8"), &["--gpu", "999"]);
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
    ok(&[&args[..], &["--allow-mig-reconfigure"]].concat());
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

/// Points of the kernel tables sim reads from a traces folder (every file must be readable).
fn traced_points(dir: &Path) -> Vec<String> {
    let h200 = colo_sim::hardware::gpu("h200").expect("h200");
    let folder = colo_calibrate::trace::read_folder(dir, h200).expect("traces folder");
    assert!(folder.skipped.is_empty(), "{:?}", folder.skipped);
    folder.tables.traces.into_iter().map(|t| t.point).collect()
}

#[test]
fn trace_on_the_fake_gpu_writes_traces_sim_reads_then_skips_them() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out_dir = dir.path().join("traces");
    let out_arg = out_dir.to_str().expect("utf8");
    let args = [
        "calibrate",
        "trace",
        "resnet18:128:32",
        "oom:8:32",
        "resnet50:64:224",
        "resnet18:128:32",
        "--out",
        out_arg,
        "--fake-gpu",
    ];
    let (stdout, stderr) = ok(&args);
    assert!(
        stderr.contains("2 traced, 0 skipped (trace file exists), 1 failed"),
        "{stderr}"
    );
    assert!(
        stderr.contains("oom:8:32 oom: OutOfMemoryError"),
        "{stderr}"
    );
    let rows: Vec<Vec<&str>> = stdout
        .lines()
        .skip(2)
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows.len(), 3, "{stdout}");
    assert_eq!(&rows[0][..3], ["resnet18:128:32", "ok", "12"], "{stdout}");
    assert_eq!(&rows[1][..3], ["oom:8:32", "oom", "-"], "{stdout}");
    assert!(
        stdout
            .lines()
            .nth(1)
            .is_some_and(|h| h.contains("samples/s"))
    );
    assert!(out_dir.join("resnet50_64_224.trace.json.gz").is_file());
    assert_eq!(
        traced_points(&out_dir),
        ["resnet18:128:32", "resnet50:64:224"]
    );
    let index = lines(&out_dir.join("index.jsonl"));
    assert_eq!(index.len(), 3);
    assert_eq!(index[0]["file"], "resnet18_128_32.trace.json.gz");
    assert_eq!(
        (&index[0]["source"], &index[0]["torch"]),
        (&"fake".into(), &"fake".into())
    );
    assert_eq!(index[1]["status"], "oom");
    // Again: the traced points are skipped, the failed one is tried again.
    let (stdout, stderr) = ok(&args);
    assert!(
        stderr.contains("0 traced, 2 skipped (trace file exists), 1 failed"),
        "{stderr}"
    );
    assert!(stdout.contains("resnet50:64:224 skipped"), "{stdout}");
    assert_eq!(lines(&out_dir.join("index.jsonl")).len(), 4);
}

#[test]
fn trace_fails_only_when_every_point_fails_or_there_is_no_gpu() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out_arg = dir.path().to_str().expect("utf8");
    let all_failed = colo(&[
        "calibrate",
        "trace",
        "oom:1:1",
        "crash:1:1",
        "--out",
        out_arg,
        "--fake-gpu",
    ]);
    let (stdout, stderr) = text(&all_failed);
    assert_eq!(all_failed.status.code(), Some(1), "{stderr}");
    assert!(
        stdout.contains("crash:1:1") && stdout.contains("crash"),
        "{stdout}"
    );
    let bad_point = colo(&["calibrate", "trace", "resnet50:64", "--out", out_arg]);
    let (_, stderr) = text(&bad_point);
    assert_eq!(bad_point.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("MODEL:BATCH:IMAGE"), "{stderr}");
    // GPU index 999 exists nowhere, so this holds on machines with a GPU too.
    let no_gpu = colo(&[
        "calibrate",
        "trace",
        "resnet50:64:224",
        "--out",
        out_arg,
        "--gpu",
        "999",
    ]);
    let (_, stderr) = text(&no_gpu);
    assert_eq!(no_gpu.status.code(), Some(2), "{stderr}");
    assert!(!dir.path().join("resnet50_64_224.trace.json.gz").exists());
}

const TRACE_PLAN: &str = r#"(name: "traced", groups: [
    (id: "alone", mode: Exclusive, trace: true,
     sets: [["resnet18:128:32"], ["resnet50:64:224"], ["resnet18:128:32"]]),
    (id: "pair", mode: Timeslice, sets: [["resnet18:128:32", "resnet26:32:32"]]),
])"#;

#[test]
fn a_plan_with_trace_true_traces_its_alone_points_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let plan = write_plan(dir.path(), TRACE_PLAN);
    let plan_arg = plan.to_str().expect("utf8");
    let dry = colo(&["calibrate", "run", plan_arg, "--out", "unused", "--dry-run"]);
    let (stdout, _) = text(&dry);
    assert!(stdout.contains("3 sets, then 2 points traced"), "{stdout}");
    let out_dir = dir.path().join("out");
    let out_arg = out_dir.to_str().expect("utf8");
    let args = ["calibrate", "run", plan_arg, "--out", out_arg, "--fake-gpu"];
    let (_, stderr) = ok(&args);
    assert!(
        stderr.contains("15 records written (0 failed)")
            && stderr.contains("2 kernel traces written (0 failed)"),
        "{stderr}"
    );
    let traces = out_dir.join("traces");
    assert_eq!(
        traced_points(&traces),
        ["resnet18:128:32", "resnet50:64:224"]
    );
    let index = lines(&traces.join("index.jsonl"));
    assert_eq!(index.len(), 2);
    assert!(
        index
            .iter()
            .all(|e| e["plan"] == "traced" && e["group"] == "alone")
    );
    // The store records link to their traces by point and GPU UUID; their own lines are as
    // before (no trace field).
    let records = lines(&out_dir.join("traced.jsonl"));
    let alone = records
        .iter()
        .find(|r| r["point"] == "resnet50:64:224")
        .expect("record");
    assert!(alone.get("trace").is_none());
    let linked = index
        .iter()
        .find(|e| e["point"] == alone["point"] && e["gpu_uuid"] == alone["gpu_uuid"])
        .expect("linked trace");
    assert!(
        traces
            .join(linked["file"].as_str().expect("file"))
            .is_file()
    );
    let index = traces.join("index.jsonl");
    assert_rerun_writes_nothing(&args, "0 kernel traces written", &index, 2);
}

#[test]
fn trace_outside_an_exclusive_group_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let plan = write_plan(
        dir.path(),
        r#"(name: "x", groups: [(id: "pairs", mode: Mps, trace: true, sets: [["a:1:1", "b:1:1"]])])"#,
    );
    let out = run_plan(
        &plan,
        dir.path().join("out").to_str().expect("utf8"),
        &["--fake-gpu"],
    );
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("plan.ron: groups[0].trace")
            && stderr.contains("group `pairs`")
            && stderr.contains("Exclusive"),
        "{stderr}"
    );
    assert!(!dir.path().join("out").exists());
}

#[test]
fn summary_of_one_store_file() {
    // One alone run of bert_mlm, 731.49 samples/s (the file's samples_per_s field).
    let (stdout, _) = ok(&[
        "calibrate",
        "summary",
        "calibrate/data/h200/byo/store/a_bert_mlm.jsonl",
    ]);
    let row = stdout.lines().nth(2).expect("a row");
    assert!(
        row.contains("bert_mlm.py") && row.contains(" 731.5 "),
        "{stdout}"
    );
}
