//! Issue 34's wrong numbers and misleading messages, through the real binary: each case was
//! accepted (or misreported) before its fix.
use crate::common::{colo, root, summary, write};

/// Issue 34 item 20: an A100 profile passed with --profile, asked about the default H200, said
/// "pass --profile" although --profile was passed.
#[test]
fn issue_34_predict_names_the_profiles_given_for_another_gpu() {
    let profile = root().join("calibrate/profiles/a100-40gb.ron");
    let run = colo(&[
        "predict",
        "--profile",
        profile.to_str().unwrap(),
        "--model",
        "parametric",
        "resnet18:128:32",
    ]);
    assert_ne!(run.code, 0, "{}", run.stdout);
    assert!(
        run.stderr
            .contains("--profile gives profiles for a100-40gb only, not for --gpu h200"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("or pass --profile"), "{}", run.stderr);
}

/// `n` copies of `job`.
fn copies(job: &str, n: usize) -> Vec<&str> {
    vec![job; n]
}

/// Issue 34 item 13: above 48 jobs the kernel model gave way to the parametric model, still
/// labelled `kernel` (48 -> 49 copies jumped from 5.6x to 22.2x total fraction). The label
/// says which model answered and why.
#[test]
fn issue_34_predict_says_when_the_kernel_model_gives_way() {
    let mut args = vec!["predict", "--mode", "timeslice", "--format", "json"];
    args.extend(copies("resnet18:128:32", 49));
    let run = colo(&args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let answer: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let model = answer["perf_model"].as_str().unwrap();
    assert!(
        model.starts_with("parametric (kernel model fallback: 49 jobs, more than the 48"),
        "{model}"
    );
    args.truncate(5);
    args.extend(copies("resnet18:128:32", 48));
    let answer: serde_json::Value = serde_json::from_str(&colo(&args).stdout).unwrap();
    assert_eq!(answer["perf_model"], "kernel");
}

/// Issue 34 item 13: 49 copies of resnet18:128:32 under MPS were predicted to draw 880 W on a
/// 700 W card, with exit 0; a power above the card's limit is an error naming the set and the
/// limit.
#[test]
fn issue_34_predict_refuses_a_power_above_the_card_limit() {
    let mut args = vec!["predict", "--mode", "mps"];
    args.extend(copies("resnet18:128:32", 49));
    let run = colo(&args);
    assert_ne!(run.code, 0, "{}", run.stdout);
    assert!(
        run.stderr
            .contains("W for the set resnet18:128:32+resnet18:128:32+")
            && run
                .stderr
                .contains("on h200, above the card's 700 W power limit"),
        "{}",
        run.stderr
    );
}

/// Issue 34 item 13: a GPU metered above its board's power limit (49 co-runners under MPS: the
/// fit said 880 W on a 700 W card) counted that power in the energy; it is capped at the limit.
#[test]
fn issue_34_simulated_power_stays_within_the_card_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let profile = root().join("calibrate/profiles/h200.ron");
    let jobs = vec!["(model: \"resnet18:128:32\", samples: 2e6)"; 49].join(", ");
    let text = format!(
        "#![enable(implicit_some)]\n(name: \"t\", profiles: [\"{}\"], perf_model: Parametric, \
         cluster: [(gpu: \"h200\", count: 1, mode: Mps)], policy: (max_jobs_per_gpu: 49), \
         workload: Jobs([{jobs}]))\n",
        profile.display()
    );
    let path = write(tmp.path(), "t.ron", &text);
    let out = tmp.path().join("out");
    let run = colo(&["simulate", &path, "--out", out.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let summary = summary(&out);
    let joules = summary["energy"]["energy_kwh"].as_f64().unwrap() * 3.6e6;
    let mean_w = joules / summary["makespan_s"].as_f64().unwrap();
    assert!(mean_w <= 700.0 + 1e-6, "mean power {mean_w} W");
    assert!(mean_w > 600.0, "mean power {mean_w} W");
}
