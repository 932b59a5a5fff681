//! Result folders are written whole (issue 12.8): a new run leaves nothing of an earlier one in
//! its folder, the next run removes what dead runs left beside it, and Ctrl-C leaves the
//! previous results as they were.
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{colo, listing, root, scenario, write};

/// The marker of a result folder colo wrote.
const MARKER: &str = ".colo-result";

/// What that marker holds in a folder of `colo simulate`'s results.
const RESULTS_MARKER: &str = r#"{"tool": "colo", "kind": "results", "name": "t"}"#;

/// A PID no process has (Linux's largest is 4194304).
const DEAD_PID: u32 = 4_194_303;

fn small_scenario(dir: &Path) -> String {
    let text = scenario(
        "(gpu: \"h200\", count: 1, mode: Mps)",
        "(model: \"resnet18:128:32\", samples: 10.0)",
    );
    write(dir, "small.ron", &text)
}

/// A folder as an earlier run (a sweep, then something else) left it, with colo's marker
/// saying it holds `kind` (results, figures).
fn earlier_run(out: &Path, kind: &str) {
    std::fs::create_dir_all(out.join("oldvariant")).unwrap();
    let marker = format!(r#"{{"tool": "colo", "kind": "{kind}", "name": "t"}}"#);
    std::fs::write(out.join(MARKER), marker).unwrap();
    std::fs::write(out.join("oldvariant/jobs.csv"), "old").unwrap();
    std::fs::write(out.join("sweep.csv"), "old sweep").unwrap();
    std::fs::write(out.join("stale.txt"), "stale").unwrap();
    std::fs::write(out.join("summary.json"), "{}").unwrap();
}

#[test]
fn simulate_leaves_nothing_of_an_earlier_run_in_its_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let file = small_scenario(tmp.path());
    let out = tmp.path().join("out");
    earlier_run(&out, "results");
    let run = colo(&["simulate", &file, "--out", out.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        listing(&out),
        [
            MARKER,
            "jobs.csv",
            "placements.csv",
            "summary.json",
            "timeline.csv"
        ]
    );
    assert_eq!(listing(tmp.path()), ["out/", "small.ron"]);
}

#[test]
fn plot_leaves_nothing_of_an_earlier_run_in_its_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let results = root().join("plots/tests/fixtures/two_gpus");
    let out = tmp.path().join("figures");
    earlier_run(&out, "figures");
    let run = colo(&[
        "plot",
        results.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--format",
        "svg",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let names = listing(&out);
    assert_eq!(names[0], MARKER);
    assert!(names[1..].iter().all(|n| n.ends_with(".svg")), "{names:?}");
    assert!(
        run.stdout.contains(&format!("{}/", out.display())),
        "{}",
        run.stdout
    );
    assert_eq!(listing(tmp.path()), ["figures/"]);
}

#[test]
fn a_folder_holding_the_inputs_is_not_replaced() {
    let tmp = tempfile::tempdir().unwrap();
    let file = small_scenario(tmp.path());
    let run = colo(&["simulate", &file, "--out", tmp.path().to_str().unwrap()]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("an input of this run"),
        "{}",
        run.stderr
    );
    assert_eq!(listing(tmp.path()), ["small.ron"]);
}

#[test]
fn the_next_run_removes_what_dead_runs_left() {
    let tmp = tempfile::tempdir().unwrap();
    let file = small_scenario(tmp.path());
    let out = tmp.path().join("out");
    earlier_run(&out, "results");
    // A dead run's temporary folder beside the target, and a per-file temporary that runs
    // before whole folders left inside it.
    let dead = tmp.path().join(format!(".out.tmp-{DEAD_PID}.0"));
    std::fs::create_dir_all(dead.join("mps")).unwrap();
    std::fs::write(dead.join("mps/jobs.csv"), "half written").unwrap();
    std::fs::write(out.join(format!(".jobs.csv.tmp{DEAD_PID}")), "half").unwrap();
    let run = colo(&["simulate", &file, "--out", out.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(listing(tmp.path()), ["out/", "small.ron"]);
    assert_eq!(listing(&out).len(), 5, "{:?}", listing(&out));
}

/// A scenario that runs for seconds: 200,000 synthetic jobs.
fn long_scenario(dir: &Path) -> String {
    let profile = root().join("calibrate/profiles/h200.ron");
    let text = format!(
        "#![enable(implicit_some)]\n(\n    name: \"long\",\n    profiles: [\"{}\"],\n    cluster: [(gpu: \"h200\", count: 400, mode: Exclusive)],\n    workload: Synthetic((\n        jobs: 200000,\n        arrivals_per_hour: 600.0,\n        median_minutes: 30.0,\n        sigma: 1.0,\n        mix: [(model: \"resnet18:128:32\", weight: 1.0)],\n    )),\n)\n",
        profile.display()
    );
    write(dir, "long.ron", &text)
}

/// The temporary folders beside `out`.
fn temporaries(parent: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(parent)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(".out.")
        })
        .collect()
}

#[test]
fn ctrl_c_exits_130_removes_its_temporary_and_keeps_the_previous_results() {
    let tmp = tempfile::tempdir().unwrap();
    let file = long_scenario(tmp.path());
    let out = tmp.path().join("out");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join(MARKER), RESULTS_MARKER).unwrap();
    std::fs::write(out.join("summary.json"), "previous").unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_colo"))
        .args(["simulate", &file, "--out", out.to_str().unwrap()])
        .current_dir(root())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The temporary folder appears once the handler is installed and the run has begun.
    let started = Instant::now();
    while temporaries(tmp.path()).is_empty() {
        assert!(child.try_wait().unwrap().is_none(), "the run ended early");
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "no temporary folder"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{status:?}");
    assert!(
        temporaries(tmp.path()).is_empty(),
        "{:?}",
        temporaries(tmp.path())
    );
    assert_eq!(listing(&out), [MARKER, "summary.json"]);
    assert_eq!(
        std::fs::read_to_string(out.join("summary.json")).unwrap(),
        "previous"
    );
}

/// Issue 34.4: a folder colo never wrote (no marker) is not replaced, by `simulate` (`--out`
/// or the scenario's `output`), `plot` or `merge`; one an earlier colo wrote is named as such;
/// an empty folder or a marked one is replaced.
#[test]
fn issue_34_a_folder_colo_did_not_write_is_not_replaced() {
    let tmp = tempfile::tempdir().unwrap();
    let file = small_scenario(tmp.path());
    let notes = tmp.path().join("notes");
    std::fs::create_dir(&notes).unwrap();
    std::fs::write(notes.join("thesis.tex"), "years of work").unwrap();
    let run = colo(&["simulate", &file, "--out", notes.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("notes") && run.stderr.contains("colo did not write"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("another output folder"),
        "{}",
        run.stderr
    );
    // The scenario's own `output`, relative to the working directory.
    let text = std::fs::read_to_string(&file).unwrap().replacen(
        "name: \"t\",",
        &format!("name: \"t\", output: {:?},", notes.to_str().unwrap()),
        1,
    );
    let with_output = write(tmp.path(), "out.ron", &text);
    let run = colo(&["simulate", &with_output]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("colo did not write"), "{}", run.stderr);
    let results = root().join("plots/tests/fixtures/two_gpus");
    let run = colo(&[
        "plot",
        results.to_str().unwrap(),
        "--out",
        notes.to_str().unwrap(),
        "--format",
        "svg",
    ]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("colo did not write"), "{}", run.stderr);
    assert_eq!(listing(&notes), ["thesis.tex"]);
    assert_eq!(
        std::fs::read_to_string(notes.join("thesis.tex")).unwrap(),
        "years of work"
    );

    // Results of an earlier colo (no marker): said so, with how to fix it.
    let earlier = tmp.path().join("earlier");
    std::fs::create_dir(&earlier).unwrap();
    std::fs::write(earlier.join("summary.json"), "{}").unwrap();
    let run = colo(&["simulate", &file, "--out", earlier.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("earlier colo") && run.stderr.contains("rm -r"),
        "{}",
        run.stderr
    );
    assert_eq!(listing(&earlier), ["summary.json"]);

    // Empty, or marked: replaced.
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let run = colo(&["simulate", &file, "--out", empty.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let marker = std::fs::read_to_string(empty.join(MARKER)).unwrap();
    let marker: serde_json::Value = serde_json::from_str(&marker).unwrap();
    assert_eq!(marker["tool"], "colo");
    assert_eq!(marker["name"], "t");
    let run = colo(&["simulate", &file, "--out", empty.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
}

/// `plan`, `report paper` and `calibrate plot` refuse a folder of the user's own files as
/// `simulate` does (they used to replace it, files and all); and a marked folder is replaced
/// only by a result of its own kind: figures drawn from a results folder must not take its
/// place.
#[test]
fn every_folder_writer_keeps_the_users_files_and_other_kinds_of_results() {
    let tmp = tempfile::tempdir().unwrap();
    let notes = tmp.path().join("notes");
    std::fs::create_dir(&notes).unwrap();
    std::fs::write(notes.join("thesis.tex"), "years of work").unwrap();
    let notes_arg = notes.to_str().unwrap();
    let plan = root().join("scenarios/planning/mps-vs-exclusive.ron");
    let data = root().join("calibrate/data/h200");
    let writers: [Vec<&str>; 3] = [
        vec!["plan", plan.to_str().unwrap(), "--target", "p95_wait <= 2h"],
        vec!["report", "paper"],
        vec!["calibrate", "plot", data.to_str().unwrap()],
    ];
    for args in &writers {
        let mut args = args.clone();
        args.extend(["--out", notes_arg]);
        let run = colo(&args);
        assert_eq!(run.code, 1, "{args:?}: {}", run.stderr);
        assert!(
            run.stderr.contains("colo did not write"),
            "{args:?}: {}",
            run.stderr
        );
        assert_eq!(listing(&notes), ["thesis.tex"], "{args:?}");
    }

    let file = small_scenario(tmp.path());
    let results = tmp.path().join("results");
    let run = colo(&["simulate", &file, "--out", results.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let before = listing(&results);
    let run = colo(&[
        "plot",
        results.to_str().unwrap(),
        "--out",
        results.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let run = colo(&["report", "paper", "--out", results.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("it holds colo results, not report"),
        "{}",
        run.stderr
    );
    assert_eq!(listing(&results), before);
}

/// A second of removing: the previous results, 20,000 small files beside colo's marker.
fn large_previous(out: &Path) {
    for dir in 0..20 {
        let sub = out.join(format!("v{dir}"));
        std::fs::create_dir_all(&sub).unwrap();
        for file in 0..1000 {
            std::fs::write(sub.join(format!("f{file}")), "x").unwrap();
        }
    }
    std::fs::write(out.join(MARKER), RESULTS_MARKER).unwrap();
}

/// Issue 34.12: Ctrl-C while the previous folder is being removed, after the new one took its
/// place: the removal finishes, the run exits 0 (saying its results are complete, if the
/// handler gets to speak before the run ends), and no half-removed `.old-` folder stays.
#[test]
fn issue_34_ctrl_c_while_the_previous_folder_is_removed_finishes_it() {
    let tmp = tempfile::tempdir().unwrap();
    let file = small_scenario(tmp.path());
    let out = tmp.path().join("out");
    large_previous(&out);
    let mut child = Command::new(env!("CARGO_BIN_EXE_colo"))
        .args(["simulate", &file, "--out", out.to_str().unwrap()])
        .current_dir(root())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let is_old = |p: &PathBuf| p.to_string_lossy().contains(".out.old-");
    while !temporaries(tmp.path()).iter().any(is_old) {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before its swap was seen"
        );
        assert!(started.elapsed() < Duration::from_secs(60), "no swap");
        std::thread::sleep(Duration::from_micros(200));
    }
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    // The handler waits for the removal; the run may then end before it says anything.
    assert!(
        stderr.trim().is_empty() || stderr.contains("is complete"),
        "{stderr}"
    );
    assert_eq!(temporaries(tmp.path()), Vec::<PathBuf>::new());
    assert_eq!(
        listing(&out),
        [
            MARKER,
            "jobs.csv",
            "placements.csv",
            "summary.json",
            "timeline.csv"
        ]
    );
}

/// Issue 34.12: a half-removed `.old-` folder of a dead run beside a whole result folder is
/// removed by the next run (this held before the issue too).
#[test]
fn issue_34_the_next_run_removes_a_half_removed_old_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let file = small_scenario(tmp.path());
    let out = tmp.path().join("out");
    earlier_run(&out, "results");
    let old = tmp.path().join(format!(".out.old-{DEAD_PID}.7"));
    std::fs::create_dir_all(old.join("oldvariant")).unwrap();
    std::fs::write(old.join("oldvariant/jobs.csv"), "half removed").unwrap();
    let run = colo(&["simulate", &file, "--out", out.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(listing(tmp.path()), ["out/", "small.ron"]);
}
