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
    let t: Target = "energy_kwh <= 40kWh".parse().unwrap();
    assert_eq!(
        (t.metric, t.bound, t.unit),
        (Metric::EnergyKwh, 40.0, Unit::KilowattHours)
    );
    assert!(t.met_by(40.0) && !t.met_by(40.1) && !t.met_by(f64::NAN));
    assert_eq!(t.show(12.345), "12.35 kWh");
    let t: Target = "samples_per_joule > 2.5".parse().unwrap();
    assert_eq!(
        (t.metric, t.unit),
        (Metric::SamplesPerJoule, Unit::SamplesPerJoule)
    );
    assert!(t.met_by(2.6) && !t.met_by(2.5) && !t.met_by(f64::NAN));
    assert_eq!(t.to_string(), "samples_per_joule > 2.5samples/J");
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
        ("energy_kwh >= 3", "energy_kwh takes <= or <"),
        ("samples_per_joule <= 3", "samples_per_joule takes >= or >"),
        ("energy_kwh <= 3h", "unknown unit `h`"),
    ];
    for (text, expected) in cases {
        let err = text.parse::<Target>().unwrap_err().to_string();
        assert!(err.contains(expected), "{text}: {err}");
        assert!(err.contains("METRIC OP VALUE"), "{err}");
    }
}

fn scenario(dir: &Path, plan: &str) -> Scenario {
    scenario_on(dir, plan, "h200-provisional.ron")
}

/// The planning scenario over the shipped profile `profile` (a file in calibrate/profiles).
fn scenario_on(dir: &Path, plan: &str, profile: &str) -> Scenario {
    let profile = format!(
        "{}/../calibrate/profiles/{profile}",
        env!("CARGO_MANIFEST_DIR")
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

#[test]
fn energy_targets_plan_on_the_fitted_power_model_and_say_when_it_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let plan_section = r#"plan: (candidates: [(gpu: "h200", mode: Mps)], max_gpus: 8)"#;
    let fitted = scenario_on(dir.path(), plan_section, "h200.ron");
    // Whatever the sizes' energies, a bound between two of them splits them.
    let loose: Target = "energy_kwh <= 1000000".parse().unwrap();
    let report = plan(&fitted, &loose, &|_| {}).unwrap();
    let c = &report.candidates[0];
    assert_eq!(c.smallest, Some(1), "{c:#?}");
    let energies: Vec<(u32, f64)> = c.points.iter().map(|p| (p.gpus, p.value)).collect();
    for p in &c.points {
        let e = p.summary.as_ref().unwrap().energy.as_ref().unwrap();
        assert_eq!(
            Some(p.value),
            e.energy_kwh,
            "the target reads the summary's energy"
        );
        assert!(p.value > 0.0 && p.note.is_none(), "{p:?}");
    }
    let least = energies.iter().map(|e| e.1).fold(f64::INFINITY, f64::min);
    let tight: Target = format!("energy_kwh <= {}", least * 0.999).parse().unwrap();
    let report = plan(&fitted, &tight, &|_| {}).unwrap();
    assert_eq!(report.candidates[0].smallest, None, "{energies:?}");
    let spj: Target = "samples_per_joule >= 0.000001".parse().unwrap();
    let report = plan(&fitted, &spj, &|_| {}).unwrap();
    let c = &report.candidates[0];
    let n = c.smallest.unwrap();
    assert!(c.point(n).unwrap().meets);
    // The provisional profile has no power section: every size misses, saying why.
    let provisional = scenario(dir.path(), plan_section);
    let report = plan(&provisional, &loose, &|_| {}).unwrap();
    let c = &report.candidates[0];
    assert_eq!(c.smallest, None);
    let note = c.points[0].note.as_deref().unwrap_or("");
    assert!(
        note.contains("energy_kwh unknown") && note.contains("no power section"),
        "{note}"
    );
}
