//! Plan tests: parsing, validation messages, MIG emulation.
use super::*;

fn parse(text: &str) -> Result<Plan, PlanError> {
    Plan::parse(text, Path::new("p.ron"))
}

fn error_of(text: &str) -> String {
    parse(text)
        .map(|_| ())
        .expect_err("plan must be refused")
        .to_string()
}

#[test]
fn the_documented_example_parses() {
    let doc = include_str!("../plan.rs");
    let start = doc.find("//! ```ron").expect("example") + "//! ```ron".len();
    let end = start + doc[start..].find("//! ```").expect("end");
    let text: String = doc[start..end]
        .lines()
        .map(|l| l.trim_start_matches("//!"))
        .collect::<Vec<_>>()
        .join("\n");
    let plan = parse(&text).expect("example parses");
    assert_eq!(plan.groups.len(), 4);
    assert_eq!(plan.n_process_points(), 3 * (1 + 1 + 1 + 1 + 2));
    assert_eq!(plan.groups[2].procs[0].sm_percent, Some(45));
    let traced: Vec<bool> = plan.groups.iter().map(|g| g.trace).collect();
    assert_eq!(traced, vec![true, false, false, false]);
}

#[test]
fn syntax_errors_name_file_line_and_column() {
    let err = error_of(
        "(\n  name: \"x\",\n  groups: [(id: \"a\", mode: Exclusive, sets: [[\"r:1:1\"]], colour: 3)],\n)",
    );
    assert!(err.starts_with("p.ron:3:"), "{err}");
    assert!(err.contains("colour"), "{err}");
}

#[test]
fn unknown_mode_is_refused_with_position() {
    let err = error_of("(name: \"x\", groups: [(id: \"a\", mode: Shared, sets: [[\"r:1:1\"]])])");
    assert!(err.starts_with("p.ron:1:"), "{err}");
}

#[test]
fn fewer_than_three_repeats_is_refused() {
    let err = error_of(
        "(name: \"x\", repeats: 2, groups: [(id: \"a\", mode: Exclusive, sets: [[\"r:1:1\"]])])",
    );
    assert!(
        err.contains("repeats") && err.contains("at least 3"),
        "{err}"
    );
}

#[test]
fn sets_of_a_group_must_have_one_point_per_process() {
    let err = error_of(
        "(name: \"x\", groups: [(id: \"a\", mode: Mps, sets: [[\"r:1:1\", \"r:1:1\"], [\"r:1:1\"]])])",
    );
    assert!(err.contains("groups[0].sets[1]"), "{err}");
}

#[test]
fn exclusive_runs_one_process() {
    let err = error_of(
        "(name: \"x\", groups: [(id: \"a\", mode: Exclusive, sets: [[\"r:1:1\", \"r:1:1\"]])])",
    );
    assert!(err.contains("Exclusive runs one process"), "{err}");
}

#[test]
fn budgets_only_under_mps() {
    let err = error_of(
        "(name: \"x\", groups: [(id: \"a\", mode: Timeslice, sm_percent: [50], sets: [[\"r:1:1\"]])])",
    );
    assert!(err.contains("only in mode Mps"), "{err}");
    let err = error_of(
        "(name: \"x\", groups: [(id: \"a\", mode: Mps, sm_percent: [0], sets: [[\"r:1:1\"]])])",
    );
    assert!(err.contains("not a percentage"), "{err}");
}

#[test]
fn mig_needs_distinct_instances_and_emulation_known_profiles() {
    let err = error_of("(name: \"x\", groups: [(id: \"a\", mode: Mig, sets: [[\"r:1:1\"]])])");
    assert!(
        err.contains("mig_uuids") && err.contains("--allow-mig-reconfigure"),
        "{err}"
    );
    let err = error_of(
        "(name: \"x\", groups: [(id: \"a\", mode: Mig, mig_uuids: [\"MIG-1\"], sets: [[\"r:1:1\", \"r:1:1\"]])])",
    );
    assert!(err.contains("must differ"), "{err}");
    let err = error_of(
        "(name: \"x\", groups: [(id: \"a\", mode: MigEmulated, mig_profiles: [\"5g.99gb\"], sets: [[\"r:1:1\"]])])",
    );
    assert!(
        err.contains("unknown profile `5g.99gb`") && err.contains("3g.71gb"),
        "{err}"
    );
}

#[test]
fn per_process_lists_spread_or_match() {
    let plan = parse("(name: \"x\", groups: [(id: \"a\", mode: MigEmulated, mig_profiles: [\"3g.71gb\", \"4g.71gb\"], sets: [[\"r:1:1\", \"r:2:1\"]])])").expect("valid");
    let budgets: Vec<Option<u32>> = plan.groups[0].procs.iter().map(|p| p.sm_percent).collect();
    assert_eq!(budgets, vec![Some(45), Some(48)]);
    let err = error_of(
        "(name: \"x\", groups: [(id: \"a\", mode: Mps, sm_percent: [50, 25, 12], sets: [[\"r:1:1\", \"r:2:1\"]])])",
    );
    assert!(err.contains("3 values for 2 processes"), "{err}");
}

#[test]
fn points_parse_or_say_what_is_expected() {
    assert_eq!(
        parse_point("resnet50:64:224").map(|p| p.to_string()),
        Ok("resnet50:64:224".to_string())
    );
    assert!(
        parse_point("resnet50:64")
            .unwrap_err()
            .contains("MODEL:BATCH:IMAGE")
    );
    assert!(
        parse_point("resnet50:0:224")
            .unwrap_err()
            .contains("positive integer")
    );
    assert!(
        parse_point("res net:1:1")
            .unwrap_err()
            .contains("model name")
    );
}

#[test]
fn duplicate_group_ids_are_refused() {
    let err = error_of(
        "(name: \"x\", groups: [(id: \"a\", mode: Exclusive, sets: [[\"r:1:1\"]]), (id: \"a\", mode: Exclusive, sets: [[\"r:1:1\"]])])",
    );
    assert!(err.contains("groups[1].id"), "{err}");
}

#[test]
fn mig_takes_profiles_of_instances_to_create() {
    let plan = parse("(name: \"x\", groups: [(id: \"a\", mode: Mig, mig_profiles: [\"3g.71gb\", \"MIG 4g.71gb\"], sets: [[\"r:1:1\", \"r:2:1\"]])])").expect("valid");
    let group = &plan.groups[0];
    assert!(group.creates_mig_instances());
    let profiles: Vec<Option<&str>> = group
        .procs
        .iter()
        .map(|p| p.mig_profile.as_deref())
        .collect();
    assert_eq!(profiles, vec![Some("3g.71gb"), Some("4g.71gb")]);
    assert!(
        group.procs.iter().all(|p| p.sm_percent.is_none()),
        "real MIG sets no MPS budget"
    );
    // One profile for all: every process gets its own instance of it.
    let plan = parse("(name: \"x\", groups: [(id: \"a\", mode: Mig, mig_profiles: [\"1g.18gb\"], sets: [[\"r:1:1\", \"r:2:1\"]])])").expect("valid");
    assert_eq!(plan.groups[0].n_procs(), 2);
    let err = error_of(
        "(name: \"x\", groups: [(id: \"a\", mode: Mig, mig_profiles: [\"5g.99gb\"], sets: [[\"r:1:1\"]])])",
    );
    assert!(
        err.contains("groups[0].mig_profiles") && err.contains("unknown profile"),
        "{err}"
    );
}

#[test]
fn mig_with_uuids_creates_nothing() {
    let plan = parse("(name: \"x\", groups: [(id: \"a\", mode: Mig, mig_uuids: [\"MIG-1\", \"MIG-2\"], mig_profiles: [\"3g.71gb\"], sets: [[\"r:1:1\", \"r:2:1\"]])])").expect("valid");
    assert!(!plan.groups[0].creates_mig_instances());
}

#[test]
fn trace_defaults_to_off_and_parses_on_exclusive_groups() {
    let plan = parse(
        "(name: \"x\", groups: [(id: \"a\", mode: Exclusive, sets: [[\"r:1:1\"]]), \
         (id: \"b\", mode: Exclusive, trace: true, sets: [[\"r:1:1\"], [\"s:2:1\"], [\"r:1:1\"]])])",
    )
    .expect("valid");
    assert!(!plan.groups[0].trace);
    assert!(plan.groups[1].trace);
    let distinct: Vec<String> = plan.groups[1]
        .distinct_points()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(distinct, vec!["r:1:1", "s:2:1"]);
    // Tracing adds start-up and one traced run per distinct point to the estimate.
    let untraced = parse(
        "(name: \"x\", groups: [(id: \"a\", mode: Exclusive, sets: [[\"r:1:1\"]]), \
         (id: \"b\", mode: Exclusive, sets: [[\"r:1:1\"], [\"s:2:1\"], [\"r:1:1\"]])])",
    )
    .expect("valid");
    let extra = plan.estimated_gpu_s() - untraced.estimated_gpu_s();
    assert!(
        (extra - (15.0 + 2.0 * (1.5 + 3.0 + 10.0))).abs() < 1e-9,
        "{extra}"
    );
}

#[test]
fn trace_is_refused_outside_exclusive_groups_naming_file_and_group() {
    let err = error_of(
        "(name: \"x\", groups: [(id: \"alone\", mode: Exclusive, sets: [[\"r:1:1\"]]), \
         (id: \"pairs\", mode: Timeslice, trace: true, sets: [[\"r:1:1\", \"s:1:1\"]])])",
    );
    assert!(err.starts_with("p.ron: groups[1].trace:"), "{err}");
    assert!(
        err.contains("group `pairs`") && err.contains("Timeslice") && err.contains("Exclusive"),
        "{err}"
    );
    let err = error_of(
        "(name: \"x\", groups: [(id: \"m\", mode: MigEmulated, mig_profiles: [\"3g.71gb\"], trace: true, sets: [[\"r:1:1\"]])])",
    );
    assert!(
        err.contains("group `m`") && err.contains("MigEmulated"),
        "{err}"
    );
}

#[test]
fn trace_must_be_a_bool() {
    let err = error_of(
        "(name: \"x\", groups: [(id: \"a\", mode: Exclusive, trace: \"yes\", sets: [[\"r:1:1\"]])])",
    );
    assert!(err.starts_with("p.ron:1:"), "{err}");
}

#[test]
fn dry_run_describes_each_group_and_the_estimate() {
    let plan = parse(
        r#"(name: "d", groups: [
            (id: "alone", mode: Exclusive, sets: [["resnet18:128:32"]]),
            (id: "budgets", mode: Mps, sm_percent: [45, 48], sets: [["resnet18:128:32", "resnet50:64:224"]]),
        ])"#,
    )
    .expect("plan");
    let text = plan.describe();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("plan d: 3 repeats"), "{text}");
    assert!(
        lines[1].starts_with("  alone [exclusive] 1 processes, 1 sets"),
        "{text}"
    );
    assert_eq!(lines[2], "    resnet18:128:32");
    assert!(
        lines[3].ends_with("per process: 45% SMs / 48% SMs"),
        "{text}"
    );
    assert_eq!(lines[4], "    resnet18:128:32 + resnet50:64:224");
    assert!(
        lines[5].starts_with("9 process-points; estimated GPU time"),
        "{text}"
    );
}

#[test]
fn emulated_budgets_follow_the_catalogs_sm_counts_and_memory() {
    let h200 = hardware::gpu("h200").expect("h200");
    let pct: Vec<u32> = h200
        .mig_profiles
        .iter()
        .map(|p| h200.emulated_sm_percent(p))
        .collect();
    assert_eq!(pct, vec![12, 12, 20, 24, 45, 48, 100]);
    let mib: Vec<u64> = h200.mig_profiles.iter().map(emulated_memory_mib).collect();
    assert_eq!(
        mib,
        vec![16_384, 16_384, 33_280, 33_280, 71_424, 71_424, 143_360]
    );
}

#[test]
fn mig_profiles_are_the_plans_gpus() {
    let group = r#"groups: [(id: "m", mode: MigEmulated, mig_profiles: ["MIG 3g.71gb"], sets: [["r:1:1"]])]"#;
    let plan = parse(&format!("(name: \"x\", {group})")).expect("h200 by default");
    assert_eq!(plan.gpu.name, "h200");
    let proc = &plan.groups[0].procs[0];
    assert_eq!(proc.mig_profile.as_deref(), Some("3g.71gb"));
    assert_eq!(
        (proc.sm_percent, proc.mem_limit_mib),
        (Some(45), Some(71_424))
    );
    let err = error_of(&format!("(name: \"x\", gpu: \"a100-40gb\", {group})"));
    assert!(
        err.contains("unknown profile `MIG 3g.71gb`; a100-40gb profiles: 1g.5gb,"),
        "{err}"
    );
    let a100 =
        r#"groups: [(id: "m", mode: MigEmulated, mig_profiles: ["3g.20gb"], sets: [["r:1:1"]])]"#;
    let plan = parse(&format!("(name: \"x\", gpu: \"a100-40gb\", {a100})")).expect("a100");
    let proc = &plan.groups[0].procs[0];
    assert_eq!(
        (proc.sm_percent, proc.mem_limit_mib),
        (Some(39), Some(19_968))
    );
    let err = error_of(&format!("(name: \"x\", gpu: \"v100\", {a100})"));
    assert!(err.starts_with("p.ron: gpu: "), "{err}");
}
