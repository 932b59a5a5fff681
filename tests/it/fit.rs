//! `colo calibrate fit | validate | gavel | miso` through the real binary, on data the fake GPU
//! writes, on the committed H200 data, and on empty folders.
use crate::common::{colo, listing, write};

const PLAN: &str = r#"(name: "fitdata", groups: [
    (id: "alone", mode: Exclusive, sets: [["resnet18:128:32"], ["resnet50:64:224"], ["vit_b_16:32:224"]]),
    (id: "pairs-ts", mode: Timeslice, sets: [["resnet18:128:32", "resnet50:64:224"], ["resnet50:64:224", "vit_b_16:32:224"]]),
    (id: "pairs-mps", mode: Mps, sets: [["resnet18:128:32", "vit_b_16:32:224"]]),
    (id: "three-ts", mode: Timeslice, sets: [["resnet18:128:32", "resnet50:64:224", "vit_b_16:32:224"]]),
    (id: "slice", mode: MigEmulated, mig_profiles: ["2g.35gb"], sets: [["resnet50:64:224"]]),
])"#;

/// Runs `PLAN`'s text on the fake GPU into `dir/data`; returns the data folder.
fn fake_data(dir: &std::path::Path, plan: &str) -> String {
    let plan = write(dir, "plan.ron", plan);
    let data = dir.join("data");
    let data = data.to_str().unwrap();
    let run = colo(&["calibrate", "run", &plan, "--out", data, "--fake-gpu"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    data.to_owned()
}

#[test]
fn fit_on_fake_gpu_data_writes_a_profile_predict_can_use() {
    let tmp = tempfile::tempdir().unwrap();
    let plan = write(tmp.path(), "plan.ron", PLAN);
    let data = tmp.path().join("data");
    let run = colo(&[
        "calibrate",
        "run",
        &plan,
        "--out",
        data.to_str().unwrap(),
        "--fake-gpu",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let profile = tmp.path().join("fake.ron");
    let mut args = vec![
        "calibrate",
        "fit",
        data.to_str().unwrap(),
        "--out",
        profile.to_str().unwrap(),
        "--date",
        "2026-12-01",
    ];
    // The fake runner's invented numbers are no measurements: refused unless allowed.
    let run = colo(&args);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(run.stderr.contains("--allow-fake"), "{}", run.stderr);
    assert!(!profile.exists(), "no profile is written from fake data");
    args.push("--allow-fake");
    let run = colo(&args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("\nFAKE DATA: "), "{}", run.stdout);
    let text = std::fs::read_to_string(&profile).unwrap();
    assert!(text.contains("    origin: fake,"), "{text}");
    assert!(!text.contains("Some(fitted)"), "{text}");
    assert!(text.contains("source: \"FAKE: "), "{text}");
    for needle in [
        "3 classes measured alone",
        "train",
        "3+ jobs",
        "equal share",
        "memory:",
    ] {
        assert!(run.stdout.contains(needle), "{needle}: {}", run.stdout);
    }
    assert!(tmp.path().join("fake-fit-report.txt").is_file());
    let csv = std::fs::read_to_string(tmp.path().join("fake-fit-predictions.csv")).unwrap();
    assert!(csv.starts_with("split,mode,n_jobs,job"), "{csv}");
    let first = std::fs::read(&profile).unwrap();
    assert_eq!(colo(&args).code, 0);
    assert_eq!(
        first,
        std::fs::read(&profile).unwrap(),
        "the same data fits to the same bytes"
    );
    let run = colo(&[
        "predict",
        "--profile",
        profile.to_str().unwrap(),
        "--mode",
        "timeslice",
        "resnet18:128:32",
        "vit_b_16:32:224",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("(fake)"), "{}", run.stdout);
    assert!(!run.stdout.contains("fitted"), "{}", run.stdout);
}

#[test]
fn fit_and_validate_take_only_records_of_the_gpu_they_fit() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("a100.ron");
    let out = out.to_str().unwrap();
    for args in [
        &[
            "calibrate",
            "fit",
            "calibrate/data/h200",
            "--gpu",
            "a100-40gb",
            "--out",
            out,
        ][..],
        &[
            "calibrate",
            "validate",
            "calibrate/data/h200",
            "--gpu",
            "a100-40gb",
        ],
    ] {
        let run = colo(args);
        assert_eq!(run.code, 1, "{args:?}: {}", run.stdout);
        for needle in [
            "no records taken on a100-40gb",
            "record(s) of h200 (NVIDIA H200)",
            "pass `--gpu h200`",
        ] {
            assert!(run.stderr.contains(needle), "{needle}: {}", run.stderr);
        }
    }
    assert!(
        !std::path::Path::new(out).exists(),
        "no A100 profile from H200 data"
    );
}

#[test]
fn a_fit_without_co_runs_labels_its_sharing_parameters_default() {
    let tmp = tempfile::tempdir().unwrap();
    let data = fake_data(
        tmp.path(),
        r#"(name: "alone", groups: [(id: "alone", mode: Exclusive, sets: [["resnet18:128:32"], ["resnet50:64:224"]])])"#,
    );
    let profile = tmp.path().join("alone.ron");
    let profile = profile.to_str().unwrap();
    let run = colo(&["calibrate", "fit", &data, "--out", profile, "--allow-fake"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("default (start values, no set constrained them): switch overhead 0.100, MPS interference 0.600, MPS launch queueing 0.500;"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("fitted: switch"), "{}", run.stdout);
    let report = std::fs::read_to_string(tmp.path().join("alone-fit-report.txt")).unwrap();
    assert!(report.contains("sharing parameters: default"), "{report}");
    let text = std::fs::read_to_string(profile).unwrap();
    assert_eq!(text.matches("origin: Some(default)").count(), 2, "{text}");
    for mode in ["timeslice", "mps"] {
        let run = colo(&[
            "predict",
            "--profile",
            profile,
            "--mode",
            mode,
            "resnet18:128:32",
            "resnet50:64:224",
        ]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let header = run.stdout.lines().next().unwrap();
        assert!(
            header.ends_with(&format!("{mode} sharing parameters: default")),
            "{header}"
        );
    }
}

#[test]
fn fit_without_data_names_what_is_missing() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("p.ron");
    let run = colo(&[
        "calibrate",
        "fit",
        tmp.path().to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("no calibration records"),
        "{}",
        run.stderr
    );
    assert!(!out.exists(), "no profile is written from no data");
}

#[test]
fn validate_on_the_committed_h200_data_prints_every_test_beside_baselines() {
    let run = colo(&["calibrate", "validate", "calibrate/data/h200"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    for needle in [
        "3+ jobs",
        "slice held out",
        "model held out",
        "launch-bound",
        "GPU-bound",
        "fixed slowdown",
        "noise",
    ] {
        assert!(run.stdout.contains(needle), "{needle}: {}", run.stdout);
    }
    // Every set that ran out of memory on the H200 must be one the simulator refuses.
    let verdicts = run
        .stdout
        .lines()
        .find(|l| l.starts_with("memory verdicts"))
        .expect("memory verdict line");
    let counts: Vec<&str> = verdicts
        .split_whitespace()
        .filter(|w| w.contains('/') && w.chars().all(|c| c.is_ascii_digit() || c == '/'))
        .collect();
    let (oom_predicted, oom_sets) = counts[0].split_once('/').expect("a/b");
    assert_eq!(oom_predicted, oom_sets, "{verdicts}");
    assert!(oom_sets.parse::<u32>().expect("count") > 0, "{verdicts}");
}

#[test]
fn shipped_fitted_profile_matches_a_fresh_fit_of_the_committed_data() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("h200.ron");
    let run = colo(&[
        "calibrate",
        "fit",
        "calibrate/data/h200",
        "--gpu",
        "h200",
        "--out",
        out.to_str().unwrap(),
        "--date",
        "2026-12-06",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let fresh = std::fs::read_to_string(&out).unwrap();
    let shipped =
        std::fs::read_to_string(crate::common::root().join("calibrate/profiles/h200.ron")).unwrap();
    let body = |t: &str| {
        t.lines()
            .skip_while(|l| l.starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(
        body(&fresh),
        body(&shipped),
        "re-run `colo calibrate fit calibrate/data/h200 --out calibrate/profiles/h200.ron`"
    );
}

#[test]
fn calibration_figures_render_from_the_committed_data_outside_it() {
    // Issue 12.5: by default the figures go under results/, never into the data folder.
    let root = crate::common::root();
    // Four of the committed store files (alone, SM budgets, time-sliced and emulated-MIG, MPS):
    // every figure, in a second instead of the two minutes a fit of all 18 takes.
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("h200");
    std::fs::create_dir(&data).unwrap();
    for file in ["h200-solo", "h200-budgets", "h200-corun", "h200-mps"] {
        let name = format!("{file}.jsonl");
        std::fs::copy(
            root.join("calibrate/data/h200").join(&name),
            data.join(&name),
        )
        .unwrap();
    }
    let before = listing(&data);
    // Run from a temporary folder: the default output is relative to it, and a test writes
    // nothing into the checkout.
    let cwd = tmp.path().join("cwd");
    std::fs::create_dir(&cwd).unwrap();
    let run = crate::common::colo_in(&cwd, &["calibrate", "plot", data.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(listing(&data), before, "plot wrote into the data folder");
    let out = cwd.join("results/calibrate-figures");
    for stem in [
        "measured_vs_predicted_timeslice",
        "measured_vs_predicted_mps",
        "sm_budget_measured",
        "sm_budget_fitted",
    ] {
        let png = std::fs::read(out.join(format!("{stem}.png"))).unwrap();
        assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000, "{stem}");
        // Every figure is drawn 1200x800 (plots' chart size).
        assert_eq!(crate::common::png_size(&png), Some((1200, 800)), "{stem}");
    }
}

#[test]
fn miso_by_default_leaves_the_shipped_a100_profile_alone() {
    // Issue 12.5: the README's tour command writes under results/.
    let root = crate::common::root();
    let shipped = root.join("calibrate/profiles/a100-40gb.ron");
    let before = std::fs::read(&shipped).unwrap();
    // From a temporary folder, inputs named: the default output lands under its results/.
    let tmp = tempfile::tempdir().unwrap();
    let (data, transfer) = (
        root.join("calibrate/data/external/miso_a100_mig"),
        root.join("calibrate/profiles/h200.ron"),
    );
    let run = crate::common::colo_in(
        tmp.path(),
        &[
            "calibrate",
            "miso",
            "--data",
            data.to_str().unwrap(),
            "--transfer-from",
            transfer.to_str().unwrap(),
            "--date",
            "2026-12-01",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(std::fs::read(&shipped).unwrap(), before);
    let written = std::fs::read_to_string(tmp.path().join("results/a100-40gb.ron")).unwrap();
    assert!(written.contains("gpu: \"a100-40gb\""), "{written}");
}

/// The cells after `jobs` of the fit report's kernel-table row of `mode`, `sets` and `jobs`:
/// `n  alone-only  fitted  signed  saw  param.  equal  noise  alone-noise  rate  fitted±95
/// signed±95` (the first three columns are 13, 17 and 13 wide, each with a space after it).
fn kernel_table_cells(report: &str, mode: &str, sets: &str, jobs: &str) -> Vec<String> {
    let line = report
        .lines()
        .find(|l| {
            l.starts_with(mode)
                && l[14..].starts_with(sets)
                && l[14 + 18..].starts_with(&format!("{jobs} "))
        })
        .unwrap_or_else(|| panic!("no {mode} {sets} {jobs} row in the fit report"));
    line[14 + 18 + 13..]
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

/// The README's kernel-model figures on the H200 (alone-only / fitted, held out) are the
/// committed fit report's rows, so a refit that moves them makes this fail until the README
/// says the new figures.
#[test]
fn issue_32_readme_kernel_figures_are_the_fit_reports() {
    let root = crate::common::root();
    let report =
        std::fs::read_to_string(root.join("calibrate/profiles/h200-fit-report.txt")).unwrap();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let row = |mode: &str, sets: &str| -> (String, String, String) {
        let cells = kernel_table_cells(&report, mode, sets, "all");
        (cells[1].clone(), cells[2].clone(), cells[9].clone())
    };
    for (mode, sets, words) in [
        ("mps", "sets of 3+", "MPS sets of 3+"),
        ("timeslice", "sets of 3+", "time-slicing sets of 3+"),
        ("timeslice", "zoo co-runs", "time-sliced zoo co-runs"),
        ("mig-emulated", "slice layouts", "emulated-MIG layouts"),
    ] {
        let (alone_only, fitted, _) = row(mode, sets);
        let figure = format!("{words} {alone_only} / {fitted}");
        assert!(readme.contains(&figure), "README should say: {figure}");
    }
    let (_, _, rate) = row("timeslice", "sets of 3+");
    let figure = format!("time-slicing 3+ {rate}");
    assert!(readme.contains(&figure), "README should say: {figure}");
}

/// The perf README's 95% intervals of the rows that miss the issue-32 targets are the committed
/// fit report's cells, so a refit that moves them makes this fail until the README follows.
#[test]
fn issue_32_perf_readme_intervals_are_the_fit_reports() {
    let root = crate::common::root();
    let report =
        std::fs::read_to_string(root.join("calibrate/profiles/h200-fit-report.txt")).unwrap();
    let readme = std::fs::read_to_string(root.join("sim/src/perf/README.md")).unwrap();
    let readme = readme.split_whitespace().collect::<Vec<_>>().join(" ");
    let cells = |mode: &str, sets: &str, jobs: &str| kernel_table_cells(&report, mode, sets, jobs);
    for (mode, sets, jobs, words) in [
        ("mps", "sets of 3+", "all", "MPS sets of 3+"),
        ("mps", "zoo co-runs", "all", "MPS zoo co-runs"),
        ("mps", "sets of 3+", "steady", "MPS steady sets of 3+"),
        ("mps", "zoo co-runs", "steady", "MPS steady zoo co-runs"),
        (
            "timeslice",
            "sets of 3+",
            "steady",
            "time-sliced steady sets of 3+",
        ),
        (
            "mig-emulated",
            "slice layouts",
            "steady",
            "emulated-MIG steady layouts",
        ),
        (
            "mps",
            "zoo SM budgets",
            "steady",
            "MPS steady zoo SM budgets",
        ),
    ] {
        let c = cells(mode, sets, jobs);
        let figure = format!("{words} {} {}", c[2], c[10]);
        assert!(readme.contains(&figure), "perf README should say: {figure}");
        // The README's claim: the MPS target of 5% is met on steady jobs.
        if mode == "mps" && jobs == "steady" && sets != "zoo SM budgets" {
            let fitted: f64 = c[2].trim_end_matches('%').parse().unwrap();
            assert!(fitted <= 5.0, "{words}: {fitted}%");
        }
    }
    for (mode, sets, jobs, words) in [
        (
            "mps",
            "pairs",
            "launch-bound",
            "MPS launch-bound training pairs",
        ),
        (
            "timeslice",
            "pairs",
            "launch-bound",
            "time-sliced launch-bound pairs",
        ),
        (
            "mig-emulated",
            "slices alone",
            "launch-bound",
            "emulated-MIG launch-bound slices alone",
        ),
        ("mps", "zoo SM budgets", "all", "MPS zoo SM budgets"),
    ] {
        let c = cells(mode, sets, jobs);
        let figure = format!("{words} {} {}", c[3], c[11]);
        assert!(readme.contains(&figure), "perf README should say: {figure}");
        // The README's claim: none of these is told apart from zero.
        let signed: f64 = c[3].trim_end_matches('%').parse().unwrap();
        let half: f64 = c[11]
            .trim_start_matches('±')
            .trim_end_matches('%')
            .parse()
            .unwrap();
        assert!(signed.abs() < half, "{words}: {signed} vs ±{half}");
    }
}
