//! Issue 12.6: a job alone on an idle GPU has a JCT equal to its duration (within 1e-9
//! relative) and a slowdown of exactly 1, for every arrival and duration colo accepts, in the
//! engine and in the naive reference engine. The scenario builder rebases listed arrivals to the
//! first, so the job starts on the clock at 0 wherever it arrives.
use std::path::{Path, PathBuf};

use proptest::prelude::*;

use super::naive;
use crate::engine::{SimConfig, Simulation};
use crate::metrics::{JobOutcome, slowdown_of};
use crate::ronfile::parse_ron;
use crate::scenario::schema::ScenarioFile;
use crate::scenario::{Scenario, build_variant};
use crate::workload::limits::{MAX_DURATION_S, MAX_TIME_S, MIN_DURATION_S};

/// Models of the provisional H200 profile with their rates alone, samples/s. Whether the old
/// `exclusive_rate / mean_rate` lands exactly on 1 depends on the rate's bits (14000 misses for
/// about one duration in seven), so the models vary.
const MODELS: [(&str, f64); 5] = [
    ("resnet18:128:32", 19500.0),
    ("resnet26:128:32", 14000.0),
    ("resnet50:64:224", 1100.0),
    ("vit_b_16:32:224", 400.0),
    ("gpt_small:32:1024", 120.0),
];

fn profile() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../calibrate/profiles/h200-provisional.ron")
}

/// One job of `MODELS[model]` taking `duration_s` alone, arriving at `arrival_s`, on one
/// exclusive H200.
fn lone_job(model: usize, arrival_s: f64, duration_s: f64, perf: &str) -> SimConfig {
    let (name, rate) = MODELS[model];
    let text = format!(
        "(name: \"alone\", profiles: [{:?}], perf_model: {perf}, \
         cluster: [(gpu: \"h200\", count: 1, mode: Exclusive)], \
         workload: Jobs([(model: {name:?}, arrival_s: {arrival_s:?}, \
         samples: Some({:?}))]))",
        profile().display().to_string(),
        duration_s * rate
    );
    let path = Path::new("alone.ron");
    let file: ScenarioFile = parse_ron(&text, path).unwrap();
    let scenario = Scenario {
        path: path.to_owned(),
        file,
    };
    let variant = scenario.variants().remove(0);
    build_variant(&scenario, &variant, None).unwrap().0
}

fn check_alone(cfg: &SimConfig, duration_s: f64) -> Result<(), TestCaseError> {
    let job = &cfg.jobs[0];
    let run = Simulation::run(cfg, None).unwrap();
    let fast = &run.outcomes[0];
    let slow = &naive::run(cfg)[0];
    let slow = JobOutcome {
        start_s: slow.start_s,
        end_s: slow.end_s,
        ..fast.clone()
    };
    for (engine, o) in [("engine", fast), ("naive", &slow)] {
        prop_assert!(o.completed, "{engine}");
        let jct = o.end_s - job.arrival_s;
        let error = (jct - duration_s).abs() / duration_s;
        prop_assert!(
            error <= 1e-9,
            "{engine}: JCT {jct} s for a {duration_s} s job ({error:e} relative)"
        );
        prop_assert_eq!(slowdown_of(job, o), 1.0, "{}", engine);
    }
    Ok(())
}

/// Log-uniform over [lo, hi], with both ends drawn now and then.
fn log_uniform(lo: f64, hi: f64) -> impl Strategy<Value = f64> {
    prop_oneof![
        1 => Just(lo),
        1 => Just(hi),
        8 => (0.0..=1.0f64).prop_map(move |u| (lo.ln() + u * (hi.ln() - lo.ln())).exp().clamp(lo, hi)),
    ]
}

fn any_arrival() -> impl Strategy<Value = f64> {
    prop_oneof![1 => Just(0.0), 9 => log_uniform(1e-6, MAX_TIME_S)]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn a_job_alone_takes_its_duration_with_slowdown_one(
        arrival in any_arrival(),
        duration in log_uniform(MIN_DURATION_S, MAX_DURATION_S),
        model in 0..MODELS.len(),
        exclusive_model in any::<bool>(),
    ) {
        let perf = if exclusive_model { "Exclusive" } else { "Parametric" };
        check_alone(&lone_job(model, arrival, duration, perf), duration)?;
    }
}

/// The example: a 10 s job alone arriving late on the clock (1e17 s is now refused;
/// 1e10 s is the largest arrival accepted) reported a JCT of 16 s and a slowdown of 1.6.
#[test]
fn a_ten_second_job_arriving_at_the_limit_takes_ten_seconds() {
    let cfg = lone_job(0, MAX_TIME_S, 10.0, "Parametric");
    assert_eq!(cfg.jobs[0].arrival_s, 0.0);
    check_alone(&cfg, 10.0).unwrap();
}
