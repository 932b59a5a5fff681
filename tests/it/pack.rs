//! `colo pack` through the real binary: a 4-job mix answers with its best packing at least as
//! good as every single-mode packing it lists, JSON has the documented keys, and infeasible
//! requests say why.
use crate::common::colo;

/// The packing tests pin the provisional profile and the parametric model: which single-mode
/// packings meet the minima depends on the profile's numbers, and the shipped fitted profile
/// changes with each refit (the kernel default is tested in byo_traces.rs and below).
const PROFILE: [&str; 4] = [
    "--profile",
    "calibrate/profiles/h200-provisional.ron",
    "--model",
    "parametric",
];

const MIX: [&str; 4] = [
    "resnet50:64:224@0.5",
    "vit_b_16:32:224@0.4",
    "resnet18:128:32@0.8",
    "mobilenet_v3_large:128:224@0.4",
];

fn pack_json(extra: &[&str]) -> serde_json::Value {
    let args: Vec<&str> = [
        "pack", "--gpu", "h200", "--format", "json", PROFILE[0], PROFILE[1], PROFILE[2], PROFILE[3],
    ]
    .iter()
    .chain(extra)
    .chain(MIX.iter())
    .copied()
    .collect();
    let run = colo(&args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    serde_json::from_str(&run.stdout).unwrap()
}

#[test]
fn four_job_mix_best_packing_beats_every_single_mode_packing_listed() {
    for extra in [&[][..], &["--gpus", "2"], &["--gpus", "4"]] {
        let v = pack_json(extra);
        assert_eq!(v["exhaustive"], true);
        let best = v["best"][0]["total_fraction"].as_f64().unwrap();
        let singles = v["single_mode"].as_object().unwrap();
        assert_eq!(
            singles.len(),
            5,
            "timeslice, mps, mps+budgets, mig, mig+mps"
        );
        let mut listed = 0;
        for (mode, packing) in singles {
            if let Some(total) = packing["total_fraction"].as_f64() {
                listed += 1;
                assert!(best >= total, "{mode}: {total} > best {best}");
            }
        }
        assert!(listed >= 3, "{singles:?}");
        for job in v["best"][0]["gpus"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|g| g["jobs"].as_array().unwrap())
        {
            let got = job["fraction_of_exclusive"].as_f64().unwrap();
            assert!(got >= job["min_fraction"].as_f64().unwrap() - 1e-12);
            assert_eq!(job["origin"], "provisional");
        }
        assert_eq!(v["profile_origin"], "provisional");
        assert_eq!(v["exclusive"]["gpus_used"], 4);
    }
}

#[test]
fn without_gpus_it_reports_the_fewest_and_every_mode_in_the_table() {
    let args: Vec<&str> = ["pack", PROFILE[0], PROFILE[1], PROFILE[2], PROFILE[3]]
        .iter()
        .chain(MIX.iter())
        .copied()
        .collect();
    let run = colo(&args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let out = &run.stdout;
    assert!(
        out.contains("(the fewest that meet every minimum)"),
        "{out}"
    );
    assert!(out.contains("search: exhaustive"), "{out}");
    for mode in ["timeslice", "mps+budgets", "mig+mps", "exclusive placement"] {
        assert!(out.contains(mode), "{mode}: {out}");
    }
    assert!(out.contains("predicted, provisional"), "{out}");
}

#[test]
fn infeasible_requests_say_why() {
    let cases: [(&[&str], &str); 4] = [
        (
            &[
                "--gpus",
                "1",
                "resnet50:64:224@0.99",
                "vit_b_16:32:224@0.99",
            ],
            "cannot reach their minimum beside any other job",
        ),
        (&["resnet50:64:224@2"], "not a fraction of alone speed"),
        (&["resnet50:8:224"], "no entry for resnet50:8:224"),
        (&["--top", "0", "resnet50:64:224"], "at least 1"),
    ];
    for (args, expected) in cases {
        let full: Vec<&str> = ["pack", PROFILE[0], PROFILE[1], PROFILE[2], PROFILE[3]]
            .iter()
            .chain(args)
            .copied()
            .collect();
        let run = colo(&full);
        assert_eq!(run.code, 1, "{args:?}");
        assert!(run.stderr.contains(expected), "{args:?}: {}", run.stderr);
    }
}

#[test]
fn pack_names_the_built_in_profile_or_the_file_given() {
    let run = colo(&["pack", "resnet50:64:224", "resnet18:128:32"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let header = run.stdout.lines().next().unwrap();
    assert!(
        header.contains("perf model kernel, built-in h200 profile (fitted);"),
        "{header}"
    );
    let run = colo(&[
        "pack",
        "--model",
        "parametric",
        "resnet50:64:224",
        "resnet18:128:32",
    ]);
    let header = run.stdout.lines().next().unwrap();
    assert!(
        header.contains("perf model parametric, built-in h200 profile (fitted);"),
        "{header}"
    );
    let run = colo(&[
        "pack",
        "--format",
        "json",
        "resnet50:64:224",
        "resnet18:128:32",
    ]);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["profile"], "built-in h200 profile");
    let run = colo(&[
        "pack",
        PROFILE[0],
        PROFILE[1],
        PROFILE[2],
        PROFILE[3],
        "resnet50:64:224",
        "resnet18:128:32",
    ]);
    let header = run.stdout.lines().next().unwrap();
    assert!(
        header.contains(&format!("profile {} (provisional);", PROFILE[1])),
        "{header}"
    );
}

#[test]
fn ten_jobs_of_up_to_ten_per_gpu_return_quickly_with_the_beam_search() {
    let jobs: Vec<&str> = MIX.iter().cycle().take(10).copied().collect();
    let args: Vec<&str> = ["pack", "--max-per-gpu", "10", "--format", "json"]
        .iter()
        .chain(PROFILE.iter())
        .chain(jobs.iter())
        .copied()
        .collect();
    let started = std::time::Instant::now();
    let run = colo(&args);
    let seconds = started.elapsed().as_secs_f64();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(seconds < 60.0, "took {seconds:.1} s");
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["exhaustive"], false);
    let search = v["search"].as_str().unwrap();
    assert!(search.contains("beam search of width 64"), "{search}");
    assert!(search.contains("above its bound of 5000000"), "{search}");
    assert!(
        run.stderr.is_empty(),
        "no progress line off a terminal: {}",
        run.stderr
    );
    let table = colo(
        &args[..args.len()]
            .iter()
            .filter(|a| **a != "--format" && **a != "json")
            .copied()
            .collect::<Vec<_>>(),
    );
    assert!(
        table.stdout.contains("search: heuristic: beam search"),
        "{}",
        table.stdout
    );
}

#[test]
fn too_few_gpus_for_max_per_gpu_names_that_option() {
    let args = [
        "pack",
        PROFILE[0],
        PROFILE[1],
        "--gpus",
        "1",
        "--max-per-gpu",
        "2",
        "resnet18:128:32",
        "resnet18:128:32",
        "resnet18:128:32",
    ];
    let run = colo(&args);
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("raise --max-per-gpu"), "{}", run.stderr);
    assert!(!run.stderr.contains("lower the minimums"), "{}", run.stderr);
}

#[test]
fn the_readme_quotes_the_configurations_the_four_job_mix_scores() {
    let readme = std::fs::read_to_string(crate::common::root().join("README.md")).unwrap();
    let run = colo(&[
        "pack", "--gpu", "h200", "--format", "json", MIX[0], MIX[1], MIX[2], MIX[3],
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let configs = v["configs_evaluated"].as_u64().unwrap();
    let quoted = format!(
        "4-job mix above scores {},{:03}",
        configs / 1000,
        configs % 1000
    );
    assert!(
        readme.contains(&quoted),
        "README should say `{quoted}` (colo pack of the README's mix)"
    );
}
