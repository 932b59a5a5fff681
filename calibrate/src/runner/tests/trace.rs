//! The real runner's kernel tracing, against the fake tracer in
//! calibrate/tests/fixtures/fake_tracer.sh: one process for all points, its environment and
//! arguments, ok / oom / skipped / lying reports, a crash and a hang.
use super::*;
use colo_sim::workload::ModelKey;

fn trace(runner: &mut ProcessRunner, out: &Path, texts: &[&str]) -> Vec<TraceReport> {
    let points: Vec<ModelKey> = texts
        .iter()
        .map(|t| crate::plan::parse_point(t).expect("point"))
        .collect();
    let job = TraceJob {
        points: &points,
        out_dir: out,
        settings: TraceSettings {
            warmup_s: 0.1,
            window_s: 0.2,
            iterations: 3,
        },
        deadline: None,
    };
    let mut reports = Vec::new();
    runner
        .trace(&job, &mut |r| {
            reports.push(r);
            Ok(())
        })
        .expect("tracer runs");
    reports
}

fn statuses(reports: &[TraceReport]) -> Vec<(String, TraceStatus)> {
    reports
        .iter()
        .map(|r| (r.point.to_string(), r.status))
        .collect()
}

#[test]
fn one_tracer_process_reports_every_point_alone_on_the_gpu() {
    let s = setup();
    let out = s.dir.path().join("traces");
    let reports = trace(
        &mut s.runner(60.0),
        &out,
        &["a:1:1", "oom:2:1", "liar:1:1", "b:4:8"],
    );
    assert_eq!(
        statuses(&reports),
        vec![
            ("a:1:1".into(), TraceStatus::Ok),
            ("oom:2:1".into(), TraceStatus::Oom),
            ("liar:1:1".into(), TraceStatus::Error),
            ("b:4:8".into(), TraceStatus::Ok),
        ]
    );
    let a = &reports[0];
    assert_eq!(
        a.file.as_deref(),
        Some(out.join("a_1_1.trace.json.gz").as_path())
    );
    assert_eq!(
        (
            a.unprofiled_samples_per_s,
            a.profiled_samples_per_s,
            a.n_kernels,
            a.trace_s
        ),
        (Some(100.0), Some(90.0), Some(12), Some(0.2))
    );
    assert_eq!(reports[1].error.as_deref(), Some("OutOfMemoryError: fake"));
    let liar = reports[2].error.as_deref().unwrap_or("");
    assert!(
        liar.contains("there is no") && liar.contains("liar_1_1"),
        "{liar}"
    );
    let seen = std::fs::read_to_string(out.join("seen")).expect("tracer ran");
    assert!(
        seen.contains("--points a:1:1,oom:2:1,liar:1:1,b:4:8 --out")
            && seen.contains("--warmup-s 0.1 --window-s 0.2 --iterations 3")
            && seen.contains("visible:GPU-test mps:\n"),
        "{seen}"
    );
    // Run again: the files exist and are skipped by the tracer.
    let again = trace(&mut s.runner(60.0), &out, &["a:1:1", "b:4:8"]);
    assert!(
        again
            .iter()
            .all(|r| r.status == TraceStatus::Skipped && r.file.is_some())
    );
}

#[test]
fn points_after_a_tracer_crash_are_recorded_as_crashes() {
    let s = setup();
    let out = s.dir.path().join("traces");
    let reports = trace(&mut s.runner(60.0), &out, &["a:1:1", "crash:1:1", "b:1:1"]);
    assert_eq!(
        statuses(&reports),
        vec![
            ("a:1:1".into(), TraceStatus::Ok),
            ("crash:1:1".into(), TraceStatus::Crash),
            ("b:1:1".into(), TraceStatus::Crash),
        ]
    );
    let error = reports[1].error.as_deref().unwrap_or("");
    assert!(
        error.contains("exit status: 3") && error.contains("fake tracer crash"),
        "{error}"
    );
}

#[test]
fn a_hung_tracer_is_killed_and_its_points_recorded_as_timeouts() {
    let s = setup();
    let out = s.dir.path().join("traces");
    let started = std::time::Instant::now();
    let reports = trace(&mut s.runner(0.5), &out, &["a:1:1", "hang:1:1", "b:1:1"]);
    assert!(
        started.elapsed().as_secs_f64() < 10.0,
        "hung tracer was not killed"
    );
    let status: Vec<TraceStatus> = reports.iter().map(|r| r.status).collect();
    assert_eq!(
        status,
        vec![TraceStatus::Ok, TraceStatus::Timeout, TraceStatus::Timeout]
    );
}

#[test]
fn a_tracer_that_cannot_start_is_a_spawn_error() {
    let s = setup();
    let mut runner = s.runner(60.0);
    runner.cfg.tracer = vec![s.dir.path().join("no-such-tracer").display().to_string()];
    let points = vec![crate::plan::parse_point("a:1:1").expect("point")];
    let job = TraceJob {
        points: &points,
        out_dir: &s.dir.path().join("traces"),
        settings: TraceSettings::default(),
        deadline: None,
    };
    let err = runner
        .trace(&job, &mut |_| Ok(()))
        .expect_err("spawn fails");
    assert!(matches!(err, RunError::Spawn { .. }), "{err}");
}
