//! `colo calibrate` under the failures of issue 34: Ctrl-C and SIGTERM during `run` and
//! `profile`, two runs into one store, outputs that would overwrite the input store, a bad byte
//! in a store, and `profile --fake-gpu` records (labelled, never fitted).
//! A kill cut short the last line of a traces index: the next `trace` reports it by line.
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{colo, write};

/// `colo args...` started in the background, its output captured.
fn start(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_colo"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("colo starts")
}

/// Waits (up to 20 s) until `ready` holds, the child still running.
fn wait_until(child: &mut Child, what: &str, ready: impl Fn() -> bool) {
    let started = Instant::now();
    while !ready() {
        assert!(
            child.try_wait().expect("wait").is_none(),
            "ended before {what}"
        );
        assert!(started.elapsed() < Duration::from_secs(20), "no {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Sends SIGINT to the child and returns its exit code and stderr, checking it exits soon.
fn interrupt(child: Child) -> (Option<i32>, String) {
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(sent.success());
    let started = Instant::now();
    let out = child.wait_with_output().expect("exits");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "took {:?} to stop",
        started.elapsed()
    );
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn line_count(path: &Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |t| t.lines().count())
}

/// A plan whose second group takes 30 s of real time on the fake GPU (model `slow`).
const SLOW_PLAN: &str = r#"(name: "slow", window_s: 30.0, groups: [
    (id: "alone", mode: Exclusive, sets: [["resnet18:128:32"]]),
    (id: "slow", mode: Exclusive, sets: [["slow:1:1"]]),
])"#;

#[test]
fn issue_34_a_second_run_is_refused_and_ctrl_c_stops_the_first_with_130() {
    let dir = tempfile::tempdir().expect("temp dir");
    let plan = write(dir.path(), "plan.ron", SLOW_PLAN);
    let out = dir.path().join("out");
    let out_arg = out.to_str().expect("utf8");
    let args = ["calibrate", "run", &plan, "--out", out_arg, "--fake-gpu"];
    let mut first = start(&args);
    let store = out.join("slow.jsonl");
    wait_until(&mut first, "the alone group's 3 records", || {
        line_count(&store) == 3
    });
    let second = colo(&args);
    assert_eq!(second.code, 1, "{}", second.stderr);
    assert!(
        second
            .stderr
            .contains("slow.jsonl: another colo process holds this store"),
        "{}",
        second.stderr
    );
    let (code, stderr) = interrupt(first);
    assert_eq!(code, Some(130), "{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    assert!(stderr.contains("3 records written"), "{stderr}");
    assert_eq!(
        line_count(&store),
        3,
        "what was recorded stays, nothing more"
    );
}

/// Whether process `pid` still runs (a zombie waiting for its parent does not).
fn alive(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit(')')
            .next()
            .is_some_and(|s| !s.trim().starts_with('Z'))
    })
}

#[test]
fn issue_34_ctrl_c_stops_profiled_commands_and_what_they_started_with_130() {
    let dir = tempfile::tempdir().expect("temp dir");
    let pid_file = dir.path().join("pid");
    let out = dir.path().join("out");
    let command = format!("sleep 30 & echo $! > {}; wait", pid_file.display());
    // Mode mps on the fake GPU: no MPS daemon is started (there is none to start).
    let mut child = start(&[
        "calibrate",
        "profile",
        "--fake-gpu",
        "--mode",
        "mps",
        "--cmd",
        &command,
        "--out",
        out.to_str().expect("utf8"),
    ]);
    wait_until(&mut child, "the command's pid file", || {
        std::fs::read_to_string(&pid_file).is_ok_and(|t| t.ends_with('\n'))
    });
    let pid = std::fs::read_to_string(&pid_file).expect("pid");
    let pid = pid.trim();
    assert!(alive(pid));
    let (code, stderr) = interrupt(child);
    assert_eq!(code, Some(130), "{stderr}");
    let started = Instant::now();
    while alive(pid) && started.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        !alive(pid),
        "the command's child {pid} outlived the interrupt"
    );
}

#[test]
fn issue_34_profile_on_the_fake_gpu_is_labelled_fake_and_fit_says_why_it_cannot_fit() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("out");
    let out_arg = out.to_str().expect("utf8");
    let run = colo(&[
        "calibrate",
        "profile",
        "--fake-gpu",
        "--cmd",
        "true",
        "--out",
        out_arg,
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let text = std::fs::read_to_string(out.join("profile.jsonl")).expect("store");
    assert_eq!(text.lines().count(), 3);
    assert!(
        text.lines().all(|l| l.starts_with(r#"{"source":"fake","#)),
        "{text}"
    );
    let profile = dir.path().join("p.ron");
    let fit = colo(&[
        "calibrate",
        "fit",
        out_arg,
        "--out",
        profile.to_str().expect("utf8"),
        "--allow-fake",
    ]);
    assert_eq!(fit.code, 1, "{}", fit.stderr);
    assert!(
        fit.stderr.contains("3 records in")
            && fit.stderr.contains("profile.jsonl")
            && fit.stderr.contains("no training point"),
        "{}",
        fit.stderr
    );
}

const PLAN: &str = r#"(name: "cli", groups: [
    (id: "alone", mode: Exclusive, sets: [["resnet18:128:32"], ["resnet50:64:224"]]),
])"#;

#[test]
fn issue_34_outputs_that_would_overwrite_the_input_store_are_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let plan = write(dir.path(), "plan.ron", PLAN);
    let data = dir.path().join("data");
    let data_arg = data.to_str().expect("utf8");
    let run = colo(&["calibrate", "run", &plan, "--out", data_arg, "--fake-gpu"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let store = data.join("cli.jsonl");
    let before = std::fs::read(&store).expect("store");
    let store_arg = store.to_str().expect("utf8");
    let new_store = data.join("new.jsonl");
    let new_arg = new_store.to_str().expect("utf8");
    for args in [
        vec!["calibrate", "summary", data_arg, "--csv", store_arg],
        vec![
            "calibrate",
            "fit",
            data_arg,
            "--out",
            store_arg,
            "--allow-fake",
        ],
        vec![
            "calibrate",
            "validate",
            data_arg,
            "--csv",
            store_arg,
            "--allow-fake",
        ],
        vec!["calibrate", "summary", data_arg, "--csv", new_arg],
    ] {
        let out = colo(&args);
        assert_eq!(out.code, 1, "{args:?}: {}", out.stderr);
        assert!(
            out.stderr.contains("refusing to write") && out.stderr.contains(data_arg),
            "{args:?}: {}",
            out.stderr
        );
    }
    assert_eq!(std::fs::read(&store).expect("store"), before, "input kept");
    assert!(!new_store.exists());
}

#[test]
fn issue_34_a_bad_byte_in_a_store_is_one_skipped_line_named_by_number() {
    let dir = tempfile::tempdir().expect("temp dir");
    let plan = write(dir.path(), "plan.ron", PLAN);
    let data = dir.path().join("data");
    let data_arg = data.to_str().expect("utf8");
    let run = colo(&["calibrate", "run", &plan, "--out", data_arg, "--fake-gpu"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let store = data.join("cli.jsonl");
    let mut bytes = std::fs::read(&store).expect("store");
    let second_line = bytes.iter().position(|b| *b == b'\n').expect("a line") + 1;
    bytes[second_line + 5] = 0xff;
    std::fs::write(&store, &bytes).expect("write");
    let summary = colo(&["calibrate", "summary", data_arg]);
    assert_eq!(summary.code, 0, "{}", summary.stderr);
    assert!(
        summary
            .stderr
            .contains("cli.jsonl:2: unreadable record skipped: not UTF-8"),
        "{}",
        summary.stderr
    );
    // The resumed run measures the lost record again.
    let again = colo(&["calibrate", "run", &plan, "--out", data_arg, "--fake-gpu"]);
    assert!(
        again.stderr.contains("1 records written"),
        "{}",
        again.stderr
    );
}

#[test]
fn a_torn_trace_index_line_is_reported_by_line_and_the_next_point_is_indexed() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("traces");
    let out_arg = out.to_str().expect("utf8");
    let first = colo(&[
        "calibrate",
        "trace",
        "--fake-gpu",
        "--out",
        out_arg,
        "resnet18:128:32",
    ]);
    assert_eq!(first.code, 0, "{}", first.stderr);
    let index = out.join("index.jsonl");
    let whole = std::fs::read_to_string(&index).expect("index");
    std::fs::write(&index, format!("{whole}{}", &whole[..40])).expect("tear");
    let args = ["calibrate", "trace", "--fake-gpu", "--out", out_arg];
    let second = colo(&[&args[..], &["resnet18:128:32", "resnet50:64:224"]].concat());
    assert_eq!(second.code, 0, "{}", second.stderr);
    assert!(
        second
            .stderr
            .contains("index.jsonl:2: unreadable index line skipped"),
        "{}",
        second.stderr
    );
    let text = std::fs::read_to_string(&index).expect("index");
    let last = text.lines().last().expect("a line");
    assert!(last.starts_with(r#"{"point":"resnet50:64:224""#), "{text}");
}
