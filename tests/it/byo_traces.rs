//! Issue 31 item 3, a trace used without a refit everywhere: a scenario's `traces` field and
//! `colo pack --traces`, on the real traces committed in `calibrate/data/h200/byo/traces/`.
use std::io::Read as _;
use std::path::Path;

use crate::common::{colo, colo_ok, root, summary};

const BYO_TRACES: &str = "calibrate/data/h200/byo/traces";

/// The unprofiled samples/s a committed trace file records, read from the file itself.
fn measured_speed(file: &str) -> f64 {
    let bytes = std::fs::read(root().join(BYO_TRACES).join(file)).expect("trace file");
    let mut text = String::new();
    flate2::read::GzDecoder::new(&bytes[..])
        .read_to_string(&mut text)
        .expect("gzip");
    let trace: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    trace["unprofiled"]["samples_per_s"]
        .as_f64()
        .expect("unprofiled speed")
}

/// A scenario on one H200 in `mode` with the given `traces` folders and jobs, kernel model
/// unless `perf_model` says otherwise.
fn scenario(dir: &Path, mode: &str, perf_model: &str, traces: &[&Path], jobs: &str) -> String {
    let profile = root().join("calibrate/profiles/h200.ron");
    let traces: Vec<String> = traces
        .iter()
        .map(|t| format!("{:?}", t.display().to_string()))
        .collect();
    let text = format!(
        "#![enable(implicit_some)]\n(\n    name: \"t\",\n    profiles: [{:?}],\n    \
         perf_model: {perf_model},\n    traces: [{}],\n    cluster: [(gpu: \"h200\", count: 1, \
         mode: {mode})],\n    workload: Jobs([{jobs}]),\n    policy: (max_jobs_per_gpu: 4),\n)\n",
        profile.display().to_string(),
        traces.join(", ")
    );
    crate::common::write(dir, "s.ron", &text)
}

/// `jobs.csv` of a result folder: per job name, (model, mean_rate).
fn job_rates(dir: &Path) -> Vec<(String, String, f64)> {
    let mut reader = csv::Reader::from_path(dir.join("jobs.csv")).expect("jobs.csv");
    let headers = reader.headers().expect("header").clone();
    let col = |name: &str| headers.iter().position(|h| h == name).expect(name);
    let (name, model, batch, image, rate) = (
        col("name"),
        col("model"),
        col("batch"),
        col("image"),
        col("mean_rate"),
    );
    reader
        .records()
        .map(|r| {
            let r = r.expect("row");
            (
                r[name].to_owned(),
                format!("{}:{}:{}", &r[model], &r[batch], &r[image]),
                r[rate].parse().expect("rate"),
            )
        })
        .collect()
}

#[test]
fn issue_31_a_scenario_runs_traced_jobs_alone_at_their_measured_speed() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let traces = root().join(BYO_TRACES);
    // One job after the other: each runs alone, at its trace's unprofiled speed.
    let file = scenario(
        tmp.path(),
        "Exclusive",
        "Kernel",
        &[&traces],
        "(model: \"hf_gpt2:8:1\", samples: 1000.0), \
         (model: \"data_bound:256:1\", samples: 50000.0, arrival_s: 100.0)",
    );
    let out = tmp.path().join("out");
    let out_arg = out.to_string_lossy().into_owned();
    let run = colo_ok(&["simulate", &file, "--out", &out_arg]);
    let rates = job_rates(&out);
    for (job, file) in [
        ("hf_gpt2:8:1", "cmd_hf_gpt2.trace.json.gz"),
        ("data_bound:256:1", "cmd_data_bound.trace.json.gz"),
    ] {
        let measured = measured_speed(file);
        let (_, _, rate) = rates.iter().find(|r| r.1 == job).expect(job);
        assert!(
            (rate / measured - 1.0).abs() < 0.002,
            "{job}: replayed alone at {rate}, its trace measured {measured}"
        );
        assert!(
            run.stdout
                .contains(&format!("traces: {job}: measured alone on NVIDIA H200")),
            "{}",
            run.stdout
        );
    }
    let labels = summary(&out);
    assert_eq!(labels["perf_model"], "kernel");
    let user = labels["user_traces"].as_array().expect("user_traces");
    // Ten programs in the folder, every one read; no file skipped.
    assert_eq!(user.len(), 10, "{user:?}");
    assert!(
        user.iter()
            .all(|l| !l.as_str().unwrap().starts_with("skipped"))
    );
}

#[test]
fn issue_31_a_scenario_and_predict_give_a_traced_pair_the_same_rates() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let traces = root().join(BYO_TRACES);
    let file = scenario(
        tmp.path(),
        "Mps",
        "Kernel",
        &[&traces],
        "(model: \"bert_mlm:32:1\", samples: 100000000.0), \
         (model: \"timm_amp_cl:64:1\", samples: 100000000.0)",
    );
    let out = tmp.path().join("out");
    let out_arg = out.to_string_lossy().into_owned();
    colo_ok(&["simulate", &file, "--out", &out_arg]);
    let predicted = colo_ok(&[
        "predict",
        "--traces",
        BYO_TRACES,
        "--format",
        "json",
        "bert_mlm:32:1",
        "timm_amp_cl:64:1",
    ]);
    let predicted: serde_json::Value = serde_json::from_str(&predicted.stdout).expect("JSON");
    // Both start at 0 and share the GPU throughout (the smaller finishes later than any
    // change), so the first to finish ran at the pair's rate the whole time.
    let rates = job_rates(&out);
    let first = rates
        .iter()
        .map(|r| (r, 1e8 / r.2))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .expect("a job")
        .0;
    let job = predicted["jobs"]
        .as_array()
        .expect("jobs")
        .iter()
        .find(|j| {
            format!(
                "{}:{}:{}",
                j["model"].as_str().unwrap(),
                j["batch"],
                j["image"]
            ) == first.1
        })
        .expect("predicted job");
    let pair_rate = job["samples_per_s"].as_f64().expect("rate");
    assert!(
        (first.2 / pair_rate - 1.0).abs() < 1e-3,
        "simulate ran {} at {}, predict says {pair_rate}",
        first.1,
        first.2
    );
}

#[test]
fn issue_31_scenario_traces_are_refused_outside_the_kernel_model_and_when_empty() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let traces = root().join(BYO_TRACES);
    let jobs = "(model: \"hf_gpt2:8:1\", samples: 1000.0)";
    let file = scenario(tmp.path(), "Mps", "Parametric", &[&traces], jobs);
    let run = colo(&[
        "simulate",
        &file,
        "--out",
        &tmp.path().join("o").to_string_lossy(),
    ]);
    assert_ne!(run.code, 0);
    assert!(
        run.stderr.contains("traces") && run.stderr.contains("perf_model: Kernel"),
        "{}",
        run.stderr
    );
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).expect("mkdir");
    let file = scenario(tmp.path(), "Mps", "Kernel", &[&empty], jobs);
    let run = colo(&[
        "simulate",
        &file,
        "--out",
        &tmp.path().join("o").to_string_lossy(),
    ]);
    assert_ne!(run.code, 0);
    assert!(
        run.stderr.contains("no usable kernel trace")
            && run.stderr.contains(&empty.display().to_string())
            && run.stderr.contains("colo calibrate trace --cmd"),
        "{}",
        run.stderr
    );
    assert!(!tmp.path().join("o").exists());
}

#[test]
fn issue_31_a_bad_file_in_a_scenario_traces_folder_is_a_reported_skip() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let traces = tmp.path().join("traces");
    std::fs::create_dir(&traces).expect("mkdir");
    std::fs::copy(
        root().join(BYO_TRACES).join("cmd_hf_gpt2.trace.json.gz"),
        traces.join("cmd_hf_gpt2.trace.json.gz"),
    )
    .expect("copy");
    std::fs::write(traces.join("junk.trace.json.gz"), b"not gzip").expect("junk");
    let file = scenario(
        tmp.path(),
        "Mps",
        "Kernel",
        &[&traces],
        "(model: \"hf_gpt2:8:1\", samples: 1000.0)",
    );
    let out = tmp.path().join("out");
    let run = colo_ok(&["simulate", &file, "--out", &out.to_string_lossy()]);
    let user = summary(&out)["user_traces"].clone();
    let user: Vec<&str> = user
        .as_array()
        .expect("user_traces")
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert_eq!(user.len(), 2, "{user:?}");
    assert!(user[0].starts_with("hf_gpt2:8:1: measured"), "{user:?}");
    assert!(
        user[1].starts_with("skipped ") && user[1].contains("junk.trace.json.gz"),
        "{user:?}"
    );
    assert!(run.stdout.contains("junk.trace.json.gz"), "{}", run.stdout);
}

#[test]
fn issue_31_pack_uses_traces_and_agrees_with_predict() {
    let pack = colo_ok(&[
        "pack",
        "--traces",
        BYO_TRACES,
        "--format",
        "json",
        "lora_llama:8:1",
        "resnet50:64:224",
    ]);
    let pack: serde_json::Value = serde_json::from_str(&pack.stdout).expect("JSON");
    assert_eq!(pack["perf_model"], "kernel");
    let mps = &pack["single_mode"]["mps"];
    let predicted = colo_ok(&[
        "predict",
        "--traces",
        BYO_TRACES,
        "--format",
        "json",
        "lora_llama:8:1",
        "resnet50:64:224",
    ]);
    let predicted: serde_json::Value = serde_json::from_str(&predicted.stdout).expect("JSON");
    let predicted_total: f64 = predicted["jobs"]
        .as_array()
        .expect("jobs")
        .iter()
        .map(|j| j["fraction_of_exclusive"].as_f64().expect("fraction"))
        .sum();
    let packed_total = mps["total_fraction"].as_f64().expect("total");
    assert!(
        (packed_total - predicted_total).abs() < 1e-6,
        "pack mps {packed_total}, predict {predicted_total}"
    );
    // The traced job's memory is its trace's peak (9408 MiB reserved, cmd_lora_llama's note).
    let lora = mps["gpus"][0]["jobs"]
        .as_array()
        .expect("jobs")
        .iter()
        .find(|j| j["model"] == "lora_llama:8:1")
        .expect("lora job");
    let gib = lora["memory_gib"].as_f64().expect("memory");
    assert!(gib >= 9408.0 / 1024.0, "{gib} GiB");
    let refused = colo(&[
        "pack",
        "--model",
        "parametric",
        "--traces",
        BYO_TRACES,
        "lora_llama:8:1",
        "resnet50:64:224",
    ]);
    assert_ne!(refused.code, 0);
    assert!(
        refused.stderr.contains("kernel model only"),
        "{}",
        refused.stderr
    );
}

#[test]
fn issue_31_the_shipped_byo_scenario_completes_every_job_in_every_variant() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let out = tmp.path().join("out");
    colo_ok(&[
        "simulate",
        "scenarios/byo-traces.ron",
        "--out",
        &out.to_string_lossy(),
    ]);
    for variant in ["exclusive", "timeslice", "mps"] {
        let s = summary(&out.join(variant));
        assert_eq!(s["jobs"], 300, "{variant}");
        assert_eq!(s["completed"], 300, "{variant}");
        assert_eq!(s["user_traces"].as_array().map(Vec::len), Some(10));
    }
}
