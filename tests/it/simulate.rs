//! `colo simulate` through the real binary: the default scenario, determinism across thread
//! counts, and errors that name the file, line, field or job.
use std::path::Path;

use crate::common::{colo, colo_env, listing, scenario, summary, write};

fn read_all(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    for entry in walk(dir) {
        let rel = entry
            .strip_prefix(dir)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        files.push((rel, std::fs::read(&entry).unwrap()));
    }
    files.sort();
    files
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path))
        } else {
            out.push(path)
        }
    }
    out
}

#[test]
fn default_scenario_writes_every_variant_and_prints_a_summary() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("default");
    let run = colo(&[
        "simulate",
        "scenarios/default.ron",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    for variant in ["exclusive", "timeslice", "mps", "mig"] {
        assert!(run.stdout.contains(variant), "{}", run.stdout);
        for file in ["jobs.csv", "placements.csv", "timeline.csv", "summary.json"] {
            assert!(out.join(variant).join(file).is_file(), "{variant}/{file}");
        }
        let summary = summary(&out.join(variant));
        assert_eq!(summary["completed"], 400);
        assert_eq!(summary["profile_origin"], "h200: fitted");
        let energy = &summary["energy"];
        assert!(energy["energy_kwh"].as_f64().unwrap() > 0.0, "{energy}");
        assert_eq!(energy["jobs_without_energy"], 0);
        assert!(energy["figures_are"].as_str().unwrap().contains("fitted"));
    }
    assert!(
        run.stdout.contains("energy kWh") && run.stdout.contains("held-out MAPE"),
        "{}",
        run.stdout
    );
    let sweep = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    assert_eq!(sweep.lines().count(), 5, "{sweep}");
    // Issue 35: every statistic of summary.json's top level is a sweep.csv column, equal to it.
    let mut reader = csv::Reader::from_reader(sweep.as_bytes());
    let header = reader.headers().unwrap().clone();
    for row in reader.records() {
        let row = row.unwrap();
        let summary = summary(&out.join(&row[0]));
        let cell = |name: &str| -> f64 {
            let idx = header.iter().position(|h| h == name).expect(name);
            row[idx].parse().expect(name)
        };
        let pairs = [
            ("p99_jct_s", &summary["jct_s"]["p99"]),
            ("p95_wait_s", &summary["wait_s"]["p95"]),
            ("max_wait_s", &summary["wait_s"]["max"]),
            ("p95_slowdown", &summary["slowdown"]["p95"]),
            ("gpu_hours_busy", &summary["gpu_hours_busy"]),
            ("energy_kwh", &summary["energy"]["energy_kwh"]),
            ("samples_per_joule", &summary["energy"]["samples_per_joule"]),
            ("events", &summary["events"]),
            ("preemptions", &summary["preemptions"]),
        ];
        for (column, value) in pairs {
            let value = value.as_f64().expect(column);
            assert!(
                (cell(column) - value).abs() <= 5e-3 * value.abs().max(1.0),
                "{}: {column} {} against summary.json's {value}",
                &row[0],
                cell(column)
            );
        }
    }
    assert!(
        run.stdout.contains("fitted"),
        "the table says where its numbers come from"
    );
}

#[test]
fn same_seed_same_bytes_at_one_and_two_threads_other_seed_differs() {
    let tmp = tempfile::tempdir().unwrap();
    let (one, two, other) = (
        tmp.path().join("one"),
        tmp.path().join("two"),
        tmp.path().join("other"),
    );
    for (dir, threads, seed) in [(&one, "1", "7"), (&two, "2", "7"), (&other, "2", "8")] {
        let run = colo_env(
            &[
                "simulate",
                "scenarios/default.ron",
                "--out",
                dir.to_str().unwrap(),
                "--seed",
                seed,
            ],
            &[("RAYON_NUM_THREADS", threads)],
        );
        assert_eq!(run.code, 0, "{}", run.stderr);
    }
    assert_eq!(read_all(&one), read_all(&two));
    assert_ne!(read_all(&one), read_all(&other));
}

fn simulate_text(text: &str) -> crate::common::Run {
    let tmp = tempfile::tempdir().unwrap();
    let path = write(tmp.path(), "bad.ron", text);
    colo(&[
        "simulate",
        &path,
        "--out",
        tmp.path().join("out").to_str().unwrap(),
    ])
}

#[test]
fn malformed_ron_names_file_line_and_column() {
    let text = scenario(
        "(gpu: \"h200\", count: 1, mode: Mps)",
        "(model: \"resnet18:128:32\", samples: 10.0)",
    );
    let run = simulate_text(&text.replace("count: 1,", "count: 1,,"));
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("bad.ron:5:"), "{}", run.stderr);
}

#[test]
fn unknown_field_is_rejected_with_its_name() {
    let text = scenario(
        "(gpu: \"h200\", count: 1, mode: Mps, colour: 3)",
        "(model: \"resnet18:128:32\", samples: 10.0)",
    );
    let run = simulate_text(&text);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("bad.ron:5:") && run.stderr.contains("colour"),
        "{}",
        run.stderr
    );
}

#[test]
fn invalid_mig_layout_names_the_field_and_the_slice() {
    let text = scenario(
        "(gpu: \"h200\", count: 1, mode: Mig, mig_layout: \"3g.71gb,3g.71gb,1g.18gb\")",
        "(model: \"resnet18:128:32\", samples: 10.0)",
    );
    let run = simulate_text(&text);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("cluster[0].mig_layout"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("1g.18gb #1 can start only at memory slices 0-6"),
        "{}",
        run.stderr
    );
}

#[test]
fn unknown_model_names_the_job_and_what_the_profile_has() {
    let text = scenario(
        "(gpu: \"h200\", count: 1, mode: Mps)",
        "(name: \"x\", model: \"resnet50:7:224\", samples: 10.0)",
    );
    let run = simulate_text(&text);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("job `x`") && run.stderr.contains("it has resnet50 at"),
        "{}",
        run.stderr
    );
}

#[test]
fn job_that_fits_nowhere_is_an_error_unless_skipped() {
    // 20 GiB of model memory cannot fit a 16 GiB 1g.18gb slice.
    let text = scenario(
        "(gpu: \"h200\", count: 1, mode: Mig, mig_layout: \"7x1g.18gb\")",
        "(name: \"big\", model: \"gpt_small:32:1024\", samples: 10.0), (model: \"resnet18:128:32\", samples: 10.0)",
    );
    let run = simulate_text(&text);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("job `big`") && run.stderr.contains("fits nowhere"),
        "{}",
        run.stderr
    );
    let skipping = text.replace("workload:", "on_unplaceable: Skip,\n    workload:");
    let run = simulate_text(&skipping);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("1 job(s) fit nowhere and were skipped"),
        "{}",
        run.stderr
    );
}

#[test]
fn dynamic_mig_scenario_recuts_gpus_and_counts_it() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("dyn");
    let run = colo(&[
        "simulate",
        "scenarios/planning/a100-static-vs-dynamic-mig.ron",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let summary = summary(&out);
    assert_eq!(summary["completed"], 400);
    assert!(
        summary["mig_reconfigurations"].as_u64().unwrap() > 0,
        "{summary}"
    );
    let jobs = std::fs::read_to_string(out.join("jobs.csv")).unwrap();
    assert!(
        jobs.contains("3g.20gb@") || jobs.contains("4g.20gb@"),
        "large jobs ran in re-cut slices"
    );
}

#[test]
fn settings_that_would_do_nothing_are_errors_naming_the_field_and_range() {
    let job = "(model: \"resnet18:128:32\", samples: 10.0)";
    let cases = [
        (
            scenario(
                "(gpu: \"h200\", count: 1, mode: Mig, mig_layout: \"7x1g.18gb\", jobs_per_slice: 0)",
                job,
            ),
            "cluster[0].jobs_per_slice: 0 must be at least 1",
        ),
        (
            scenario(
                "(gpu: \"h200\", count: 1, mode: Mps, jobs_per_slice: 2)",
                job,
            ),
            "cluster[0].jobs_per_slice: 2 is only for mode Mig",
        ),
        (
            scenario("(gpu: \"h200\", count: 1, mode: Mps)", job)
                .replace("workload:", "timeline_every_s: -1.0,\n    workload:"),
            "timeline_every_s: -1 must be a finite number of seconds >= 0",
        ),
        (
            scenario("(gpu: \"h200\", count: 1, mode: Mps)", job)
                .replace("workload:", "timeline_every_s: NaN,\n    workload:"),
            "timeline_every_s: NaN must be a finite number of seconds >= 0",
        ),
    ];
    for (text, expected) in cases {
        let run = simulate_text(&text);
        assert_eq!(run.code, 1, "{expected}: {}", run.stderr);
        assert!(
            run.stderr.contains("bad.ron: ") && run.stderr.contains(expected),
            "{expected}: {}",
            run.stderr
        );
    }
    // One per slice, said out loud on a MIG group, is still fine.
    let fine = scenario(
        "(gpu: \"h200\", count: 1, mode: Mig, mig_layout: \"7x1g.18gb\", jobs_per_slice: 1)",
        job,
    );
    let run = simulate_text(&fine);
    assert_eq!(run.code, 0, "{}", run.stderr);
}

#[test]
fn scenario_name_must_be_a_plain_name() {
    let text = scenario(
        "(gpu: \"h200\", count: 1, mode: Mps)",
        "(model: \"resnet18:128:32\", samples: 10.0)",
    );
    for bad in ["../../etc", "a/b", "a\\\\b", "..", ".", ""] {
        let run = simulate_text(&text.replace("name: \"t\"", &format!("name: \"{bad}\"")));
        assert_eq!(run.code, 1, "{bad:?}: {}", run.stderr);
        assert!(
            run.stderr.contains("bad.ron: name: ") && run.stderr.contains("must be a plain name"),
            "{bad:?}: {}",
            run.stderr
        );
    }
    let run = simulate_text(&text.replace("name: \"t\"", "name: \"my-run.v2\""));
    assert_eq!(run.code, 0, "{}", run.stderr);
}

#[test]
fn a_missing_file_is_reported_once_per_sentence() {
    let run = colo(&["simulate", "no-such-scenario.ron"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("cannot read no-such-scenario.ron: "),
        "{}",
        run.stderr
    );
    assert_eq!(
        run.stderr.matches("(os error 2)").count(),
        1,
        "the system's reason printed twice: {}",
        run.stderr
    );
}

#[test]
fn shards_of_a_sweep_merge_into_the_unsharded_result() {
    let tmp = tempfile::tempdir().unwrap();
    let whole = tmp.path().join("whole");
    let run = colo(&[
        "simulate",
        "scenarios/default.ron",
        "--out",
        whole.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // Three shards of four variants: 0 and 3, 1, 2.
    let mut shards = Vec::new();
    for k in 0..3 {
        let dir = tmp.path().join(format!("s{k}"));
        let shard = format!("{k}/3");
        let run = colo(&[
            "simulate",
            "scenarios/default.ron",
            "--shard",
            &shard,
            "--out",
            dir.to_str().unwrap(),
        ]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(dir.join("shard.json").is_file());
        shards.push(dir.to_str().unwrap().to_owned());
    }
    assert!(tmp.path().join("s0/mig").is_dir() && !tmp.path().join("s0/timeslice").is_dir());
    let merged = tmp.path().join("merged");
    let mut args = vec!["merge", "--out", merged.to_str().unwrap()];
    // Any order.
    args.extend(shards.iter().rev().map(String::as_str));
    let run = colo(&args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("3 shards, 4 variants"),
        "{}",
        run.stdout
    );
    assert_eq!(read_all(&merged), read_all(&whole));

    // A missing shard, a shard twice: named errors, nothing written.
    let partial = tmp.path().join("partial");
    let run = colo(&[
        "merge",
        "--out",
        partial.to_str().unwrap(),
        &shards[0],
        &shards[2],
    ]);
    assert_ne!(run.code, 0);
    assert!(run.stderr.contains("1/3 missing"), "{}", run.stderr);
    let run = colo(&[
        "merge",
        "--out",
        partial.to_str().unwrap(),
        &shards[0],
        &shards[0],
        &shards[1],
    ]);
    assert!(run.stderr.contains("given twice"), "{}", run.stderr);
    assert!(!partial.exists());
}

#[test]
fn a_shard_of_a_scenario_without_a_sweep_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let text = one_job_scenario("Exclusive");
    let path = write(tmp.path(), "one.ron", &text);
    let out = tmp.path().join("r");
    let run = colo(&[
        "simulate",
        &path,
        "--shard",
        "0/2",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_ne!(run.code, 0);
    assert!(run.stderr.contains("no sweep"), "{}", run.stderr);
    assert!(!out.exists());
    let run = colo(&["simulate", &path, "--shard", "2/2"]);
    assert_eq!(run.code, 2, "bad K/N is a usage error: {}", run.stderr);
}

#[test]
fn outputs_chooses_the_result_files_and_keeps_the_summary() {
    let tmp = tempfile::tempdir().unwrap();
    let text = one_job_scenario("Mps");
    let path = write(tmp.path(), "one.ron", &text);
    let mut summaries = Vec::new();
    for (outputs, files) in [
        ("summary", vec![".colo-result", "summary.json"]),
        ("jobs", vec![".colo-result", "jobs.csv", "summary.json"]),
        (
            "all",
            vec![
                ".colo-result",
                "jobs.csv",
                "placements.csv",
                "summary.json",
                "timeline.csv",
            ],
        ),
    ] {
        let out = tmp.path().join(outputs);
        let run = colo(&[
            "simulate",
            &path,
            "--outputs",
            outputs,
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let names = listing(&out);
        assert_eq!(names, files, "--outputs {outputs}");
        summaries.push(std::fs::read(out.join("summary.json")).unwrap());
    }
    assert!(
        summaries.windows(2).all(|w| w[0] == w[1]),
        "the summary does not depend on --outputs"
    );
}

/// `--jobs` resizes a synthetic workload and `--trace-limit` caps a trace, as the summary counts.
#[test]
fn jobs_and_trace_limit_resize_the_workloads() {
    let tmp = tempfile::tempdir().unwrap();
    let root = crate::common::root();
    for (scenario, flag, jobs) in [
        ("scenarios/bench/synthgen_1m.ron", "--jobs", 123u64),
        ("scenarios/bench/philly800_fifo.ron", "--trace-limit", 77),
    ] {
        let out = tmp.path().join(flag.trim_start_matches('-'));
        let run = colo(&[
            "simulate",
            root.join(scenario).to_str().unwrap(),
            flag,
            &jobs.to_string(),
            "--outputs",
            "summary",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let summary = summary(&out);
        assert_eq!(summary["jobs"], jobs, "{flag}");
    }
}

#[test]
fn columnar_writes_jobs_parquet_or_says_which_build_does() {
    let tmp = tempfile::tempdir().unwrap();
    let text = one_job_scenario("Mps");
    let path = write(tmp.path(), "one.ron", &text);
    let out = tmp.path().join("out");
    let run = colo(&[
        "simulate",
        &path,
        "--columnar",
        "--outputs",
        "jobs",
        "--out",
        out.to_str().unwrap(),
    ]);
    if cfg!(feature = "parquet") {
        assert_eq!(run.code, 0, "{}", run.stderr);
        let names = listing(&out);
        assert_eq!(names, [".colo-result", "jobs.parquet", "summary.json"]);
        let bytes = std::fs::read(out.join("jobs.parquet")).unwrap();
        assert!(bytes.starts_with(b"PAR1") && bytes.ends_with(b"PAR1"));
    } else {
        assert_ne!(run.code, 0);
        assert!(
            run.stderr.contains("--features parquet"),
            "says how to build it: {}",
            run.stderr
        );
        assert!(!out.exists(), "nothing written");
    }
}

/// A scenario of one short resnet18:128:32 job on one H200 shared in `mode`.
fn one_job_scenario(mode: &str) -> String {
    scenario(
        &format!(r#"(gpu: "h200", count: 1, mode: {mode})"#),
        r#"(model: "resnet18:128:32", samples: 10.0)"#,
    )
}

/// Issue 35: `--format json` prints one JSON object and nothing else on stdout, with the
/// table's figures per variant equal to the summary.json the same run wrote (seconds there,
/// hours here), each labelled with its origin.
#[test]
fn json_summary_equals_each_variants_summary_json() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("default");
    let run = colo(&[
        "simulate",
        "scenarios/default.ron",
        "--jobs",
        "40",
        "--out",
        out.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).expect("stdout is one JSON");
    assert_eq!(v["scenario"], "default");
    assert!(
        v["energy_provenance"]
            .as_str()
            .unwrap()
            .contains("held-out MAPE")
    );
    let variants = v["variants"].as_array().unwrap();
    let names: Vec<&str> = variants
        .iter()
        .map(|l| l["variant"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["exclusive", "timeslice", "mps", "mig"]);
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * b.abs().max(1.0);
    for line in variants {
        let dir = out.join(line["variant"].as_str().unwrap());
        assert_eq!(line["result_dir"], dir.to_str().unwrap());
        let s = summary(&dir);
        for key in [
            "jobs",
            "completed",
            "perf_model",
            "profile_origin",
            "figures_are",
        ] {
            assert_eq!(line[key], s[key], "{key}");
        }
        let hours = [
            ("makespan_h", &s["makespan_s"]),
            ("mean_jct_h", &s["jct_s"]["mean"]),
            ("p95_jct_h", &s["jct_s"]["p95"]),
            ("mean_wait_h", &s["wait_s"]["mean"]),
        ];
        for (key, seconds) in hours {
            let (h, sec) = (line[key].as_f64().unwrap(), seconds.as_f64().unwrap());
            assert!(close(h * 3600.0, sec), "{key}: {h} h, {sec} s");
        }
        for (key, want) in [
            ("throughput_samples_per_s", &s["throughput_samples_per_s"]),
            ("utilization", &s["utilization"]),
            ("energy_kwh", &s["energy"]["energy_kwh"]),
        ] {
            assert!(
                close(line[key].as_f64().unwrap(), want.as_f64().unwrap()),
                "{key}"
            );
        }
        assert_eq!(line["energy_figures_are"], s["energy"]["figures_are"]);
    }
    // The table of the same scenario and seed prints the same figures, rounded.
    let table = colo(
        &["simulate", "scenarios/default.ron", "--jobs", "40", "--out"]
            .into_iter()
            .chain([tmp.path().join("t").to_str().unwrap()])
            .collect::<Vec<_>>(),
    );
    assert_eq!(table.code, 0, "{}", table.stderr);
    let mps = table
        .stdout
        .lines()
        .find(|l| l.starts_with("mps "))
        .unwrap();
    let line = &variants[2];
    let want = format!(
        "{:.2} {:.2}",
        line["mean_jct_h"].as_f64().unwrap(),
        line["p95_jct_h"].as_f64().unwrap()
    );
    let cells: Vec<&str> = mps.split_whitespace().collect();
    assert_eq!(format!("{} {}", cells[4], cells[5]), want, "{mps}");
}

/// Issue 35: a variant name longer than the column (30 characters) widens it for every row
/// instead of pushing its own row's figures right.
#[test]
fn a_long_variant_name_keeps_the_summary_columns_aligned() {
    let tmp = tempfile::tempdir().unwrap();
    let long = "a-variant-name-of-30-characters";
    let long = &long[..30];
    let file = crate::common::sweep_scenario(tmp.path(), &["a", long, "mid-length-name"]);
    let out = tmp.path().join("r");
    let run = colo(&["simulate", &file, "--out", out.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let lines: Vec<&str> = run.stdout.lines().collect();
    let header = lines
        .iter()
        .position(|l| l.starts_with("variant "))
        .unwrap();
    let rows: Vec<(&str, &str)> = ["a", long, "mid-length-name"]
        .iter()
        .zip(&lines[header + 1..header + 4])
        .map(|(name, line)| (*name, *line))
        .collect();
    crate::common::assert_aligned(lines[header], &rows, 9);
}
