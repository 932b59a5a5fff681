//! Runner tests: the real process runner driven by a fake worker, a fake MPS control program,
//! a fake nvidia-smi that keeps MIG instances in a state file and a fake tracer (POSIX sh
//! scripts in calibrate/tests/fixtures), and the worker environment per mode.
use std::path::{Path, PathBuf};

use super::*;
use crate::plan::Plan;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

struct Setup {
    dir: tempfile::TempDir,
    control: PathBuf,
    nvidia_smi: PathBuf,
}

fn setup() -> Setup {
    let dir = tempfile::tempdir().expect("temp dir");
    let control = dir.path().join("fake_mps_control.sh");
    std::fs::copy(fixture("fake_mps_control.sh"), &control).expect("copy fake control");
    let nvidia_smi = dir.path().join("fake_nvidia_smi.sh");
    std::fs::copy(fixture("fake_nvidia_smi.sh"), &nvidia_smi).expect("copy fake nvidia-smi");
    Setup {
        dir,
        control,
        nvidia_smi,
    }
}

impl Setup {
    fn runner(&self, launch_grace_s: f64) -> ProcessRunner {
        let cfg = ProcessRunnerConfig {
            worker: vec!["sh".into(), fixture("fake_worker.sh").display().to_string()],
            tracer: vec!["sh".into(), fixture("fake_tracer.sh").display().to_string()],
            mps_control: self.control.clone(),
            nvidia_smi: self.nvidia_smi.clone(),
            gpu_index: 3,
            tmp_root: self.dir.path().join("tmp"),
            sample_interval: std::time::Duration::from_millis(50),
            barrier_timeout_s: 30.0,
            step_grace_s: 0.0,
            launch_grace_s,
        };
        let gpu = GpuInfo {
            name: "Test GPU".into(),
            driver: "1".into(),
            uuid: "GPU-test".into(),
            index: 3,
            memory_total_mib: 1000,
        };
        ProcessRunner::without_sampling(cfg, gpu)
    }

    fn calls(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("calls.log")).unwrap_or_default()
    }
}

fn plan(groups: &str) -> Plan {
    let text = format!("(name: \"t\", warmup_s: 0.1, window_s: 0.1, groups: [{groups}])");
    Plan::parse(&text, Path::new("t.ron")).expect("test plan parses")
}

fn run(runner: &mut ProcessRunner, plan: &Plan, repeats: u32) -> Result<Vec<Report>, RunError> {
    run_with(runner, plan, repeats, false)
}

fn run_with(
    runner: &mut ProcessRunner,
    plan: &Plan,
    repeats: u32,
    allow_mig_reconfigure: bool,
) -> Result<Vec<Report>, RunError> {
    let group = &plan.groups[0];
    let steps = (0..repeats)
        .flat_map(|repeat| (0..group.sets.len()).map(move |set_index| Step { set_index, repeat }))
        .collect();
    let launch = Launch {
        group,
        steps,
        warmup_s: 0.1,
        window_s: 0.1,
        deadline: None,
        allow_mig_reconfigure,
    };
    let mut reports = Vec::new();
    runner.run(&launch, &mut |r| {
        reports.push(r);
        Ok(())
    })?;
    reports.sort_by_key(|r| (r.step, r.rank));
    Ok(reports)
}

/// Runs the plan's first group with MIG reconfiguration allowed.
fn run_mig(runner: &mut ProcessRunner, plan: &Plan) -> Result<Vec<Report>, RunError> {
    run_with(runner, plan, 1, true)
}

/// Each report's MPS budget: (active thread percentage, pinned memory limit) as the worker saw
/// them.
fn mps_budgets(reports: &[Report]) -> Vec<(&str, &str)> {
    reports
        .iter()
        .map(|r| {
            (
                env_of(r, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"),
                env_of(r, "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"),
            )
        })
        .collect()
}

fn env_of<'a>(report: &'a Report, key: &str) -> &'a str {
    report
        .measurement
        .env
        .get(key)
        .and_then(|v| v.as_str())
        .unwrap_or("<unset>")
}

#[test]
fn barrier_starts_every_window_together() {
    let s = setup();
    let plan = plan(
        r#"(id: "g", mode: Timeslice, sets: [["fast:1:1", "slow:1:1"], ["fast:1:1", "fast:2:1"]])"#,
    );
    let started = crate::gpu::unix_now();
    let reports = run(&mut s.runner(60.0), &plan, 1).expect("runs");
    assert_eq!(reports.len(), 4);
    assert!(
        reports
            .iter()
            .all(|r| r.measurement.status == crate::store::Status::Ok)
    );
    // The fast rank waited for the slow one: both windows start >= 0.4 s after launch, together.
    let (fast, slow) = (&reports[0], &reports[1]);
    assert!(
        fast.measurement.t_start - started >= 0.4,
        "fast rank did not wait: {}",
        fast.measurement.t_start - started
    );
    assert!((fast.measurement.t_start - slow.measurement.t_start).abs() < 0.2);
    assert_eq!(env_of(fast, "CUDA_VISIBLE_DEVICES"), "GPU-test");
    assert_eq!(
        fast.measurement.framework.as_deref(),
        Some("torch fake, tf32 matmul=? cudnn=?")
    );
    assert_eq!(
        env_of(fast, "CUDA_MPS_PIPE_DIRECTORY"),
        "",
        "no MPS variables outside MPS modes"
    );
    assert_eq!(s.calls(), "", "no MPS daemon for time-slicing");
}

#[test]
fn crash_is_recorded_for_every_remaining_point_and_co_runners_go_on() {
    let s = setup();
    let plan = plan(
        r#"(id: "g", mode: Timeslice, sets: [["crash:1:1", "fast:1:1"], ["fast:1:1", "fast:1:1"]])"#,
    );
    let reports = run(&mut s.runner(60.0), &plan, 1).expect("runs");
    let status: Vec<(usize, usize, Status)> = reports
        .iter()
        .map(|r| (r.step, r.rank, r.measurement.status))
        .collect();
    assert_eq!(
        status,
        vec![
            (0, 0, Status::Crash),
            (0, 1, Status::Ok),
            (1, 0, Status::Crash),
            (1, 1, Status::Ok)
        ]
    );
    let error = reports[0].measurement.error.as_deref().unwrap_or("");
    assert!(
        error.contains("exit status: 3") && error.contains("fake crash"),
        "{error}"
    );
}

#[test]
fn oom_is_recorded_and_the_worker_goes_on() {
    let s = setup();
    let plan = plan(r#"(id: "g", mode: Exclusive, sets: [["oom:1:1"], ["fast:1:1"]])"#);
    let reports = run(&mut s.runner(60.0), &plan, 1).expect("runs");
    let status: Vec<Status> = reports.iter().map(|r| r.measurement.status).collect();
    assert_eq!(status, vec![Status::Oom, Status::Ok]);
}

#[test]
fn mps_mode_sets_budgets_and_shuts_the_daemon_down() {
    let s = setup();
    let plan = plan(
        r#"(id: "g", mode: Mps, sm_percent: [50, 25], mem_limit_mib: [2048], sets: [["a:1:1", "b:1:1"]])"#,
    );
    let reports = run(&mut s.runner(60.0), &plan, 1).expect("runs");
    let budgets = mps_budgets(&reports);
    assert_eq!(
        (budgets[0].0, budgets[1].0, budgets[1].1),
        ("50", "25", "0=2048M")
    );
    assert_eq!(
        env_of(&reports[0], "CUDA_VISIBLE_DEVICES"),
        "0",
        "MPS clients see the server's device 0"
    );
    assert!(env_of(&reports[0], "CUDA_MPS_PIPE_DIRECTORY").ends_with("mps-pipe"));
    assert_eq!(s.calls(), "start visible=3 order=PCI_BUS_ID\nquit\n");
}

#[test]
fn mig_emulated_takes_budget_and_memory_from_the_profile() {
    let s = setup();
    let plan = plan(
        r#"(id: "g", mode: MigEmulated, mig_profiles: ["1g.18gb", "3g.71gb"], sets: [["a:1:1", "b:1:1"]])"#,
    );
    let reports = run(&mut s.runner(60.0), &plan, 1).expect("runs");
    assert_eq!(
        mps_budgets(&reports),
        [("12", "0=16384M"), ("45", "0=71424M")]
    );
    assert!(s.calls().ends_with("quit\n"));
}

#[test]
fn daemon_is_shut_down_when_workers_cannot_start() {
    let s = setup();
    let mut runner = s.runner(60.0);
    runner.cfg.worker = vec![s.dir.path().join("no-such-worker").display().to_string()];
    let plan = plan(r#"(id: "g", mode: Mps, sets: [["a:1:1"]])"#);
    let err = run(&mut runner, &plan, 1).expect_err("spawn fails");
    assert!(matches!(err, RunError::Spawn { .. }), "{err}");
    assert_eq!(s.calls(), "start visible=3 order=PCI_BUS_ID\nquit\n");
}

#[test]
fn hung_launch_is_recorded_as_timeout_and_the_daemon_shut_down() {
    let s = setup();
    let plan = plan(r#"(id: "g", mode: Mps, sets: [["hang:1:1"]])"#);
    let started = std::time::Instant::now();
    let reports = run(&mut s.runner(0.5), &plan, 1).expect("runs");
    assert!(
        started.elapsed().as_secs_f64() < 10.0,
        "hung worker was not killed"
    );
    assert_eq!(reports.len(), 1);
    assert_eq!(reports[0].measurement.status, Status::Timeout);
    assert!(s.calls().ends_with("quit\n"));
}

#[test]
fn daemon_guard_quits_on_drop() {
    let s = setup();
    let dirs = MpsDirs::under(&s.dir.path().join("guard"));
    let daemon = MpsDaemon::start(&s.control, &dirs, "0").expect("fake daemon starts");
    assert!(dirs.pipe.join("control").exists());
    drop(daemon);
    assert!(!dirs.pipe.join("control").exists());
    assert_eq!(s.calls(), "start visible=0 order=PCI_BUS_ID\nquit\n");
}

#[test]
fn worker_env_per_mode() {
    let plain = ProcSettings::default();
    let env = worker_env(MeasuredMode::Exclusive, &plain, "GPU-x", None);
    assert_eq!(
        env.get("CUDA_VISIBLE_DEVICES").map(String::as_str),
        Some("GPU-x")
    );
    assert_eq!(env.len(), 1);
    let mig = ProcSettings {
        mig_uuid: Some("MIG-abc".into()),
        ..ProcSettings::default()
    };
    let env = worker_env(MeasuredMode::Mig, &mig, "GPU-x", None);
    assert_eq!(
        env.get("CUDA_VISIBLE_DEVICES").map(String::as_str),
        Some("MIG-abc")
    );
}

use crate::store::Status;

mod mig;
mod trace;
