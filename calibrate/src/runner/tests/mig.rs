//! MIG instances the runner creates (`--allow-mig-reconfigure`), against the fake nvidia-smi in
//! calibrate/tests/fixtures/fake_nvidia_smi.sh, whose state file `mig_state` holds one line per
//! GPU instance: `GPU GI CI PROFILE UUID`.
use super::*;
use crate::execute::{RunOptions, run_plan};

impl Setup {
    fn mig_state(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("mig_state")).unwrap_or_default()
    }

    /// Writes a file beside the fake nvidia-smi (its state, or a switch such as `mig_disabled`).
    fn write(&self, name: &str, text: &str) {
        std::fs::write(self.dir.path().join(name), text).expect("write fake nvidia-smi file");
    }

    /// Calls to the fake nvidia-smi that change something (creation and destruction).
    fn mig_changes(&self) -> Vec<String> {
        self.calls()
            .lines()
            .filter(|l| l.contains("-cgi") || l.contains("-dci") || l.contains("-dgi"))
            .map(str::to_string)
            .collect()
    }
}

const TWO_SLICES: &str =
    r#"(id: "g", mode: Mig, mig_profiles: ["3g.71gb", "4g.71gb"], sets: [["a:1:1", "b:1:1"]])"#;

#[test]
fn instances_are_created_before_the_group_and_destroyed_after() {
    let s = setup();
    let reports = run_mig(&mut s.runner(60.0), &plan(TWO_SLICES)).expect("runs");
    assert_eq!(reports.len(), 2);
    assert!(reports.iter().all(|r| r.measurement.status == Status::Ok));
    let visible: Vec<&str> = reports
        .iter()
        .map(|r| env_of(r, "CUDA_VISIBLE_DEVICES"))
        .collect();
    assert!(
        visible.iter().all(|v| v.starts_with("MIG-fake-3-")) && visible[0] != visible[1],
        "each process on its own new instance: {visible:?}"
    );
    let tagged: Vec<Option<&str>> = reports.iter().map(|r| r.mig_uuid.as_deref()).collect();
    assert_eq!(tagged, vec![Some(visible[0]), Some(visible[1])]);
    assert_eq!(
        s.mig_changes(),
        vec![
            "mig -i 3 -cgi 3g.71gb,4g.71gb -C",
            "mig -i 3 -gi 1 -ci 0 -dci",
            "mig -i 3 -gi 2 -ci 0 -dci",
            "mig -i 3 -gi 1 -dgi",
            "mig -i 3 -gi 2 -dgi",
        ]
    );
    assert_eq!(s.mig_state(), "", "every created instance destroyed");
    assert!(
        s.calls().starts_with("--query-gpu=mig.mode.current"),
        "MIG mode checked first"
    );
}

#[test]
fn instances_are_destroyed_when_a_worker_crashes() {
    let s = setup();
    let plan =
        plan(r#"(id: "g", mode: Mig, mig_profiles: ["1g.18gb"], sets: [["crash:1:1", "a:1:1"]])"#);
    let reports = run_mig(&mut s.runner(60.0), &plan).expect("runs");
    assert_eq!(reports[0].measurement.status, Status::Crash);
    assert_eq!(s.mig_state(), "");
    assert_eq!(s.mig_changes().len(), 1 + 2 + 2);
}

#[test]
fn instances_are_destroyed_when_the_group_errors() {
    let s = setup();
    let mut runner = s.runner(60.0);
    runner.cfg.worker = vec![s.dir.path().join("no-such-worker").display().to_string()];
    let err = run_mig(&mut runner, &plan(TWO_SLICES)).expect_err("spawn fails");
    assert!(matches!(err, RunError::Spawn { .. }), "{err}");
    assert_eq!(s.mig_state(), "");
}

#[test]
fn instances_are_destroyed_after_a_timeout() {
    let s = setup();
    let plan = plan(r#"(id: "g", mode: Mig, mig_profiles: ["1g.18gb"], sets: [["hang:1:1"]])"#);
    let reports = run_mig(&mut s.runner(0.5), &plan).expect("runs");
    assert_eq!(reports[0].measurement.status, Status::Timeout);
    assert_eq!(s.mig_state(), "");
}

#[test]
fn instances_made_by_others_are_never_destroyed() {
    let s = setup();
    let others = "3 1 0 3g.71gb MIG-admin-3\n0 1 0 7g.141gb MIG-admin-0\n";
    s.write("mig_state", others);
    let plan = plan(r#"(id: "g", mode: Mig, mig_profiles: ["3g.71gb"], sets: [["a:1:1"]])"#);
    let reports = run_mig(&mut s.runner(60.0), &plan).expect("runs");
    let visible = env_of(&reports[0], "CUDA_VISIBLE_DEVICES");
    assert!(
        visible.starts_with("MIG-fake-3-2-"),
        "the new instance, not the administrator's one of the same profile: {visible}"
    );
    assert_eq!(s.mig_state(), others);
    assert!(s.mig_changes().iter().all(|c| !c.contains("-gi 1 ")));
}

#[test]
fn given_uuids_run_without_any_nvidia_smi_call() {
    let s = setup();
    s.write("mig_state", "3 1 0 3g.71gb MIG-admin-3\n");
    let plan = plan(r#"(id: "g", mode: Mig, mig_uuids: ["MIG-admin-3"], sets: [["a:1:1"]])"#);
    let reports = run_mig(&mut s.runner(60.0), &plan).expect("runs");
    assert_eq!(env_of(&reports[0], "CUDA_VISIBLE_DEVICES"), "MIG-admin-3");
    assert_eq!(
        reports[0].mig_uuid, None,
        "the plan's UUID, not a created one"
    );
    assert_eq!(s.calls(), "");
}

#[test]
fn mig_mode_off_is_an_error_and_creates_nothing() {
    let s = setup();
    s.write("mig_disabled", "");
    let err = run_mig(&mut s.runner(60.0), &plan(TWO_SLICES)).expect_err("refused");
    assert!(matches!(err, RunError::MigDisabled { gpu: 3 }), "{err}");
    let message = err.to_string();
    assert!(
        message.contains("MIG mode is off on GPU 3")
            && message.contains("administrator")
            && message.contains("MigEmulated"),
        "{message}"
    );
    assert_eq!(
        s.calls(),
        "--query-gpu=mig.mode.current --format=csv,noheader -i 3\n"
    );
    assert_eq!(s.mig_state(), "");
}

#[test]
fn a_half_finished_creation_is_undone() {
    let s = setup();
    s.write("fail_create", "1");
    let err = run_mig(&mut s.runner(60.0), &plan(TWO_SLICES)).expect_err("creation fails");
    let message = err.to_string();
    assert!(
        matches!(err, RunError::Mig { gpu: 3, .. }) && message.contains("Insufficient Resources"),
        "{message}"
    );
    assert_eq!(
        s.mig_changes(),
        vec![
            "mig -i 3 -cgi 3g.71gb,4g.71gb -C",
            "mig -i 3 -gi 1 -ci 0 -dci",
            "mig -i 3 -gi 1 -dgi",
        ]
    );
    assert_eq!(s.mig_state(), "");
}

#[test]
fn a_group_without_uuids_is_refused_without_the_flag() {
    let s = setup();
    let err = run(&mut s.runner(60.0), &plan(TWO_SLICES), 1).expect_err("refused");
    let message = err.to_string();
    assert!(
        message.contains("group `g`")
            && message.contains("mig_uuids")
            && message.contains("--allow-mig-reconfigure"),
        "{message}"
    );
    assert_eq!(s.calls(), "", "no nvidia-smi call, no worker");
}

#[test]
fn a_plan_with_such_a_group_runs_nothing_at_all() {
    let s = setup();
    let text = format!(
        r#"(name: "t", warmup_s: 0.1, window_s: 0.1, groups: [(id: "alone", mode: Exclusive, sets: [["a:1:1"]]), {TWO_SLICES}])"#
    );
    let plan = Plan::parse(&text, Path::new("t.ron")).expect("plan parses");
    let out = s.dir.path().join("out");
    let res = run_plan(
        &plan,
        &mut s.runner(60.0),
        &out,
        &RunOptions::default(),
        &mut |_| {},
    );
    assert!(
        matches!(res, Err(RunError::MigReconfigureNotAllowed { ref group }) if group == "g"),
        "{res:?}"
    );
    assert!(!out.exists(), "not even the alone group ran");
}

#[test]
fn records_carry_mode_mig_the_profile_and_the_instance() {
    let s = setup();
    let text = format!(r#"(name: "t", warmup_s: 0.1, window_s: 0.1, groups: [{TWO_SLICES}])"#);
    let plan = Plan::parse(&text, Path::new("t.ron")).expect("plan parses");
    let opts = RunOptions {
        allow_mig_reconfigure: true,
        ..RunOptions::default()
    };
    let out = s.dir.path().join("out");
    let outcome =
        run_plan(&plan, &mut s.runner(60.0), &out, &opts, &mut |_| {}).expect("plan runs");
    let records = crate::store::load(&outcome.store).expect("store").records;
    assert_eq!(records.len(), 3 * 2);
    for rec in &records {
        let profile = ["3g.71gb", "4g.71gb"][rec.rank];
        assert_eq!(
            (rec.mode, rec.mig_profile.as_deref()),
            (MeasuredMode::Mig, Some(profile))
        );
        let uuid = rec.mig_uuid.as_deref().unwrap_or("");
        assert!(uuid.starts_with("MIG-fake-3-"), "{uuid}");
        assert_eq!(
            rec.measurement.env.get("CUDA_VISIBLE_DEVICES"),
            Some(&uuid.into())
        );
        assert_eq!(rec.sm_percent, None, "no MPS budget on real MIG");
    }
    assert_eq!(s.mig_state(), "");
}
