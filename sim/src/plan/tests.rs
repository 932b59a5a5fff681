//! Unit tests of planning: targets, and the search's promise (the answer meets the target, one
//! GPU fewer does not).
use std::path::Path;

use super::*;

#[test]
fn targets_read_with_units_and_show_in_them() {
    let t: Target = "p95_jct <= 2h".parse().unwrap();
    assert_eq!(
        (t.metric, t.bound, t.unit),
        (Metric::P95Jct, 7200.0, Unit::Hours)
    );
    assert!(t.met_by(7200.0) && !t.met_by(7200.1));
    assert_eq!(t.to_string(), "p95_jct <= 2h");
    assert_eq!(t.show(5400.0), "1.50 h");
    let t: Target = "mean_wait<30m".parse().unwrap();
    assert_eq!((t.bound, t.inclusive), (1800.0, false));
    assert!(!t.met_by(1800.0));
    let t: Target = "throughput >= 5000".parse().unwrap();
    assert!(t.met_by(5000.0) && !t.met_by(4999.0));
    let t: Target = "makespan <= 90".parse().unwrap();
    assert_eq!((t.bound, t.unit), (90.0, Unit::Seconds));
}

#[test]
fn bad_targets_say_what_is_wrong() {
    let cases = [
        ("p95_jct 2h", "no comparison"),
        ("p99_jct <= 2h", "unknown metric `p99_jct`"),
        ("p95_jct >= 2h", "p95_jct takes <= or <"),
        ("throughput <= 5", "throughput takes >= or >"),
        ("mean_jct <= 2d", "unknown unit `d`"),
        ("mean_jct <= -2h", "not a positive number"),
    ];
    for (text, expected) in cases {
        let err = text.parse::<Target>().unwrap_err().to_string();
        assert!(err.contains(expected), "{text}: {err}");
        assert!(err.contains("METRIC OP VALUE"), "{err}");
    }
}

fn scenario(dir: &Path, plan: &str) -> Scenario {
    let profile = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../calibrate/profiles/h200-provisional.ron"
    );
    let text = format!(
        r#"#![enable(implicit_some)]
(
    name: "p",
    profiles: ["{profile}"],
    cluster: [(gpu: "h200", count: 1, mode: Exclusive)],
    workload: Synthetic((jobs: 60, arrivals_per_hour: 30.0, median_minutes: 20.0, sigma: 0.5,
        mix: [(model: "resnet50:64:224"), (model: "resnet18:128:32")])),
    {plan}
)
"#
    );
    let path = dir.join("p.ron");
    std::fs::write(&path, text).unwrap();
    Scenario::load(&path).unwrap()
}

#[test]
fn the_answer_meets_the_target_and_one_gpu_fewer_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let plan_section = r#"plan: (candidates: [(gpu: "h200", mode: Exclusive), (gpu: "h200", mode: Mps)],
        max_gpus: 40, price_per_gpu_hour: {"H200": 3.0})"#;
    let scenario = scenario(dir.path(), plan_section);
    let target: Target = "p95_jct <= 3h".parse().unwrap();
    let report = plan(&scenario, &target, &|_| {}).unwrap();
    assert_eq!(report.candidates.len(), 2);
    for c in &report.candidates {
        let n = c.smallest.unwrap_or_else(|| panic!("{c:#?}"));
        assert!(c.point(n).unwrap().meets, "{}", c.label);
        assert!(n > 1, "the test needs a queue at one GPU: {c:#?}");
        if n > 1 {
            assert!(!c.point(n - 1).unwrap().meets, "{}", c.label);
        }
        assert_eq!(c.cost_per_hour(n), Some(3.0 * f64::from(n)));
        let sizes: Vec<u32> = c.points.iter().map(|p| p.gpus).collect();
        assert!(sizes.windows(2).all(|w| w[0] < w[1]), "{sizes:?}");
    }
    let cheapest = report.cheapest.unwrap();
    let cost = |i: usize| {
        let c = &report.candidates[i];
        c.cost_per_hour(c.smallest.unwrap()).unwrap()
    };
    assert!((0..2).all(|i| cost(cheapest) <= cost(i)));
    assert!(report.simulations as usize >= report.candidates[0].points.len());
}

#[test]
fn unreachable_targets_and_missing_sections_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let scenario_without = scenario(dir.path(), "");
    let target: Target = "mean_wait <= 1s".parse().unwrap();
    let err = plan(&scenario_without, &target, &|_| {}).unwrap_err();
    assert!(err.to_string().contains("no `plan` section"), "{err}");
    let scenario = scenario(
        dir.path(),
        r#"plan: (candidates: [(gpu: "h200", mode: Exclusive)], max_gpus: 3)"#,
    );
    let target: Target = "makespan <= 1s".parse().unwrap();
    let report = plan(&scenario, &target, &|_| {}).unwrap();
    assert_eq!(report.candidates[0].smallest, None);
    let bad = scenario_with_price(dir.path());
    let err = plan(&bad, &target, &|_| {}).unwrap_err();
    assert!(err.to_string().contains("plan.price_per_gpu_hour"), "{err}");
}

fn scenario_with_price(dir: &Path) -> Scenario {
    scenario(
        dir,
        r#"plan: (candidates: [(gpu: "h200", mode: Mps)], max_gpus: 2, price_per_gpu_hour: {"v100": 1.0})"#,
    )
}

#[test]
fn plan_csv_is_the_same_at_any_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = scenario(
        dir.path(),
        r#"plan: (candidates: [(gpu: "h200", mode: Exclusive), (gpu: "h200", mode: Timeslice)], max_gpus: 40)"#,
    );
    let target: Target = "mean_wait <= 10m".parse().unwrap();
    let csv_with = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| plan_csv(&plan(&scenario, &target, &|_| {}).unwrap()))
    };
    let one = csv_with(1);
    assert!(one.len() > PLAN_CSV_HEADER.len() + 100);
    assert_eq!(one, csv_with(4));
}
