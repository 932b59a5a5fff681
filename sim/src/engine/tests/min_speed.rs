//! Minimum speeds under the least-slowdown rule: a job waits rather than slow a tenant (or
//! itself) below its minimum, and one no partition can run fast enough even alone is refused
//! up front, naming it.
use super::*;
use crate::workload::MinSpeed;

fn big(name: &str, arrival_s: f64, min_speed: Option<f64>) -> Job {
    Job {
        min_speed: min_speed.and_then(MinSpeed::new),
        ..job(name, "big", arrival_s, 1000.0, 1)
    }
}

fn run(groups: Vec<GpuGroup>, jobs: Vec<Job>) -> Result<RunRecord, EngineError> {
    let cfg = config(groups, jobs, PlacementRule::LeastSlowdown);
    Simulation::run(&cfg, None)
}

#[test]
fn a_job_waits_rather_than_slow_a_tenant_below_its_minimum() {
    let mps = || vec![group("h200", 1, ShareMode::Mps, None)];
    // Two "big" jobs under MPS keep well under 0.9 of their alone speed each.
    let shared = run(mps(), vec![big("a", 0.0, None), big("b", 1.0, None)]).unwrap();
    assert_eq!(
        shared.outcomes[1].start_s, 1.0,
        "without a minimum it shares"
    );
    let kept = run(mps(), vec![big("a", 0.0, Some(0.9)), big("b", 1.0, None)]).unwrap();
    let (a, b) = (&kept.outcomes[0], &kept.outcomes[1]);
    assert!((a.end_s - 100.0).abs() < 1e-9, "a runs alone: {a:?}");
    assert_eq!(b.start_s, a.end_s, "b waits for a");
    let own = run(mps(), vec![big("a", 0.0, None), big("b", 1.0, Some(0.9))]).unwrap();
    assert_eq!(
        own.outcomes[1].start_s, own.outcomes[0].end_s,
        "b's own minimum"
    );
}

#[test]
fn a_minimum_no_partition_meets_alone_is_refused_naming_the_job() {
    let small_slices = vec![group("h200", 1, ShareMode::Mig, Some("7x1g.18gb"))];
    let err = run(
        small_slices.clone(),
        vec![Job {
            min_speed: MinSpeed::new(0.9),
            ..job("tight", "small", 0.0, 100.0, 1)
        }],
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("job `tight`"), "{err}");
    assert!(err.contains("below its min_speed 0.9"), "{err}");
    assert!(err.contains("Lower its min_speed"), "{err}");
    let ok = run(
        small_slices,
        vec![Job {
            min_speed: MinSpeed::new(0.1),
            ..job("loose", "small", 0.0, 100.0, 1)
        }],
    );
    assert!(ok.unwrap().outcomes[0].completed);
}

#[test]
fn minimum_speeds_with_dynamic_mig_are_an_error() {
    let g = dynamic("h200", "7x1g.18gb", &["3g.71gb,4g.71gb"], 30.0);
    let err = run(vec![g], vec![big("x", 0.0, Some(0.5))])
        .unwrap_err()
        .to_string();
    assert!(err.contains("dynamic MIG"), "{err}");
}
