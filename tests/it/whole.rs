//! Result folders are written whole (issue 12.8): a new run leaves nothing of an earlier one in
//! its folder, the next run removes what dead runs left beside it, and Ctrl-C leaves the
//! previous results as they were.
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{colo, listing, root, scenario, write};

/// A PID no process has (Linux's largest is 4194304).
const DEAD_PID: u32 = 4_194_303;

fn small_scenario(dir: &Path) -> String {
    let text = scenario(
        "(gpu: \"h200\", count: 1, mode: Mps)",
        "(model: \"resnet18:128:32\", samples: 10.0)",
    );
    write(dir, "small.ron", &text)
}

/// A folder as an earlier run (a sweep, then something else) left it.
fn earlier_run(out: &Path) {
    std::fs::create_dir_all(out.join("oldvariant")).unwrap();
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
    earlier_run(&out);
    let run = colo(&["simulate", &file, "--out", out.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        listing(&out),
        ["jobs.csv", "placements.csv", "summary.json", "timeline.csv"]
    );
    assert_eq!(listing(tmp.path()), ["out/", "small.ron"]);
}

#[test]
fn plot_leaves_nothing_of_an_earlier_run_in_its_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let results = root().join("plots/tests/fixtures/two_gpus");
    let out = tmp.path().join("figures");
    earlier_run(&out);
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
    assert!(names.iter().all(|n| n.ends_with(".svg")), "{names:?}");
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
    earlier_run(&out);
    // A dead run's temporary folder beside the target, and a per-file temporary that runs
    // before whole folders left inside it.
    let dead = tmp.path().join(format!(".out.tmp-{DEAD_PID}.0"));
    std::fs::create_dir_all(dead.join("mps")).unwrap();
    std::fs::write(dead.join("mps/jobs.csv"), "half written").unwrap();
    std::fs::write(out.join(format!(".jobs.csv.tmp{DEAD_PID}")), "half").unwrap();
    let run = colo(&["simulate", &file, "--out", out.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(listing(tmp.path()), ["out/", "small.ron"]);
    assert_eq!(listing(&out).len(), 4, "{:?}", listing(&out));
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
    assert_eq!(listing(&out), ["summary.json"]);
    assert_eq!(
        std::fs::read_to_string(out.join("summary.json")).unwrap(),
        "previous"
    );
}
