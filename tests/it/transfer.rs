//! `colo calibrate transfer` and `colo predict --gpu OTHER --traces`: H200 traces carried to
//! other GPUs, checked against the H100 traces committed in calibrate/data/h100.
use crate::common::{colo, colo_ok, root};

/// (point, unprofiled samples/s) of each line of a traces folder's index.jsonl: the tracer's
/// own record, read independently of the trace files colo parses.
fn indexed_speeds(dir: &str) -> Vec<(String, f64)> {
    let text = std::fs::read_to_string(root().join(dir).join("index.jsonl")).expect("index");
    text.lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("json line"))
        .filter(|v| v["status"] == "ok")
        .map(|v| {
            (
                v["point"].as_str().unwrap().to_owned(),
                v["unprofiled_samples_per_s"].as_f64().unwrap(),
            )
        })
        .collect()
}

fn csv_rows(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .skip(1)
        .map(|l| l.split(',').map(str::to_owned).collect())
        .collect()
}

#[test]
fn h100_check_reads_both_gpus_measured_speeds_and_scores_against_them() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("check.csv");
    let run = colo_ok(&[
        "calibrate",
        "transfer",
        "calibrate/data/h200/byo/traces",
        "--to",
        "h100",
        "--check",
        "calibrate/data/h100/byo-alone-check/traces",
        "--csv",
        csv.to_str().unwrap(),
    ]);
    let rows = csv_rows(&std::fs::read_to_string(&csv).unwrap());
    let (h200, h100) = (
        indexed_speeds("calibrate/data/h200/byo/traces"),
        indexed_speeds("calibrate/data/h100/byo-alone-check/traces"),
    );
    assert_eq!(rows.len(), 10, "{rows:?}");
    let mut errors = Vec::new();
    for row in &rows {
        let num = |i: usize| row[i].parse::<f64>().unwrap();
        let point = &row[0];
        let want_src = h200.iter().find(|(p, _)| p == point).unwrap().1;
        let want_meas = h100.iter().find(|(p, _)| p == point).unwrap().1;
        assert!(
            (num(1) - want_src).abs() < 1e-3,
            "{point}: source {}",
            num(1)
        );
        assert!(
            (num(3) - want_meas).abs() < 1e-3,
            "{point}: measured {}",
            num(3)
        );
        let error = 100.0 * (num(2) - want_meas) / want_meas;
        assert!((num(4) - error).abs() < 1e-3, "{point}: error {}", num(4));
        assert!((num(5) - 100.0 * (want_src - want_meas) / want_meas).abs() < 1e-3);
        errors.push(error.abs());
    }
    // The summary line quotes the mean of those errors, as the data README does.
    let mean = errors.iter().sum::<f64>() / errors.len() as f64;
    assert!(
        run.stdout.contains(&format!("mean |error| {mean:.1}%")),
        "{}",
        run.stdout
    );
    let readme =
        std::fs::read_to_string(root().join("calibrate/data/h100/transfer/README.md")).unwrap();
    assert!(
        readme.contains(&format!("mean {mean:.1}%")),
        "README quotes {mean:.1}%"
    );
}

#[test]
fn the_committed_comparison_tables_are_what_the_command_prints() {
    for (sources, measured, name) in [
        (
            "calibrate/data/h200/byo/traces",
            "calibrate/data/h100/byo-alone-check/traces",
            "byo",
        ),
        (
            "calibrate/data/h200/traces",
            "calibrate/data/h100/recipes/traces",
            "zoo",
        ),
    ] {
        let run = committed_transfer(&[sources, "--to", "h100", "--check", measured], name);
        // The README quotes each check's mean error of alone speed and of GPU time.
        let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
        for prefix in ["alone speed on h100-80gb", "GPU time per iteration"] {
            let line = run.stdout.lines().find(|l| l.starts_with(prefix)).unwrap();
            let mean = line
                .split("mean |error| ")
                .nth(1)
                .unwrap()
                .split('%')
                .next()
                .unwrap();
            assert!(
                readme.contains(&format!("{mean}%")),
                "README lacks {name}'s {mean}%"
            );
        }
    }
}

/// The shipped A100 tables are the transfer of every committed H200 trace, byte for byte (they
/// once lagged three bf16 traces behind, so those points had no A100 answer), and the README
/// counts them.
#[test]
fn the_shipped_a100_tables_are_the_transfer_of_every_committed_h200_trace() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("a100.json.gz");
    colo_ok(&[
        "calibrate",
        "transfer",
        root().join("calibrate/data/h200/traces").to_str().unwrap(),
        "--to",
        "a100-40gb",
        "--out",
        out.to_str().unwrap(),
    ]);
    let shipped = root().join("calibrate/profiles/a100-40gb-kernels-transferred.json.gz");
    assert!(
        std::fs::read(&out).unwrap() == std::fs::read(&shipped).unwrap(),
        "{} is stale: re-run `colo calibrate transfer calibrate/data/h200/traces --to a100-40gb \
         --out calibrate/profiles/a100-40gb-kernels-transferred.json.gz`",
        shipped.display()
    );
    let traced = std::fs::read_dir(root().join("calibrate/data/h200/traces"))
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            name.to_string_lossy().ends_with(".trace.json.gz")
        })
        .count();
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let quoted = format!("the {traced} H200 traces **transferred**");
    assert!(readme.contains(&quoted), "README should say `{quoted}`");
}

/// `colo calibrate transfer ARGS`, checked to print what calibrate/data/h100/transfer/NAME.txt
/// holds.
fn committed_transfer(args: &[&str], name: &str) -> crate::common::Run {
    let run = colo_ok(&[&["calibrate", "transfer"], args].concat());
    let committed =
        std::fs::read_to_string(root().join(format!("calibrate/data/h100/transfer/{name}.txt")))
            .unwrap();
    assert_eq!(
        run.stdout, committed,
        "{name}.txt is stale: regenerate (its README)"
    );
    run
}

/// The comparisons with measured DRAM bytes are what the command prints, and each GPU-time
/// mean is recomputed here from the rows (transferred against measured ms per iteration) and
/// quoted by the data README.
#[test]
fn the_committed_comparisons_with_dram_bytes_are_what_the_command_prints() {
    let readme =
        std::fs::read_to_string(root().join("calibrate/data/h100/transfer/README.md")).unwrap();
    for (sources, to, measured, traffic, name) in [
        (
            "calibrate/data/h200/traces",
            "h100",
            "calibrate/data/h100/recipes/traces",
            Some("calibrate/data/h200/dram/traffic"),
            "zoo-bytes",
        ),
        (
            "calibrate/data/h100/recipes/traces",
            "h200",
            "calibrate/data/h200/traces",
            None,
            "to-h200",
        ),
        (
            "calibrate/data/h100/recipes/traces",
            "h200",
            "calibrate/data/h200/traces",
            Some("calibrate/data/h100/dram/traffic"),
            "to-h200-bytes",
        ),
    ] {
        let mut args = vec![sources, "--to", to, "--check", measured];
        if let Some(traffic) = traffic {
            args.extend(["--traffic", traffic]);
        }
        let run = committed_transfer(&args, name);
        // "GPU ms/it src/tr./meas." holds source/transferred/measured; the error is tr./meas.
        let errors: Vec<f64> = run
            .stdout
            .lines()
            .filter_map(|l| l.split_whitespace().rev().nth(1))
            .filter_map(|ms| {
                let parts: Vec<f64> = ms.split('/').filter_map(|v| v.parse().ok()).collect();
                (parts.len() == 3).then(|| 100.0 * (parts[1] - parts[2]).abs() / parts[2])
            })
            .collect();
        assert_eq!(errors.len(), 7, "{name}: {errors:?}");
        let mean = errors.iter().sum::<f64>() / 7.0;
        assert!(
            run.stdout
                .contains(&format!("mean |error| {mean:.1}%, median")),
            "{name}: {mean:.1}% not printed"
        );
        assert!(
            readme.contains(&format!("{mean:.1}%")),
            "README lacks {name}'s {mean:.1}%"
        );
    }
}

#[test]
fn a_folder_of_the_target_gpu_has_nothing_to_transfer() {
    let run = colo(&[
        "calibrate",
        "transfer",
        "calibrate/data/h200/byo/traces",
        "--to",
        "h200",
    ]);
    assert_ne!(run.code, 0);
    assert!(
        run.stderr.contains("no trace of another GPU"),
        "{}",
        run.stderr
    );
    let run = colo(&[
        "calibrate",
        "transfer",
        "calibrate/data/h200/byo/traces",
        "--to",
        "h100",
        "--cpu-factor",
        "0",
    ]);
    assert_ne!(run.code, 0);
    assert!(run.stderr.contains("--cpu-factor"), "{}", run.stderr);
}

#[test]
fn a_slower_host_slows_a_host_bound_job() {
    // bert_mlm is host-bound in its H200 trace (the transfer keeps its speed): a CPU factor of
    // 2 slows it by more than a quarter and at most by half.
    let speed = |dir: &str, point: &str, factor: &str| -> f64 {
        let dir_tmp = tempfile::tempdir().unwrap();
        let csv = dir_tmp.path().join("t.csv");
        colo_ok(&[
            "calibrate",
            "transfer",
            dir,
            "--to",
            "h100",
            "--cpu-factor",
            factor,
            "--csv",
            csv.to_str().unwrap(),
        ]);
        let rows = csv_rows(&std::fs::read_to_string(&csv).unwrap());
        let row = rows.iter().find(|r| r[0] == point).unwrap();
        row[2].parse().unwrap()
    };
    let byo = "calibrate/data/h200/byo/traces";
    let (one, two) = (
        speed(byo, "bert_mlm:32:1", "1"),
        speed(byo, "bert_mlm:32:1", "2"),
    );
    assert!(
        two < 0.75 * one && two >= 0.5 * one - 1e-9,
        "bert_mlm {one} -> {two}"
    );
}

#[test]
fn predict_on_an_a100_answers_from_transferred_h200_traces_and_says_so() {
    let run = colo_ok(&[
        "predict",
        "--gpu",
        "a100-40gb",
        "--traces",
        "calibrate/data/h200/byo/traces",
        "--mode",
        "mps",
        "hf_gpt2:8:1",
        "bert_mlm:32:1",
    ]);
    assert!(
        run.stderr.contains("transferred to a100-40gb"),
        "{}",
        run.stderr
    );
    let rows: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.starts_with("hf_gpt2"))
        .collect();
    assert_eq!(rows.len(), 1, "{}", run.stdout);
    assert!(rows[0].trim_end().ends_with("transferred"), "{}", rows[0]);
    assert!(
        run.stdout.contains("sharing parameters transferred"),
        "{}",
        run.stdout
    );
}

#[test]
fn the_bands_transfer_error_is_the_committed_checks_mean_error() {
    let mut errors = Vec::new();
    for name in ["byo", "zoo"] {
        let path = root().join(format!("calibrate/data/h100/transfer/{name}.csv"));
        for row in csv_rows(&std::fs::read_to_string(path).unwrap()) {
            if let Ok(e) = row[4].parse::<f64>() {
                errors.push(e.abs());
            }
        }
    }
    assert_eq!(errors.len(), 17);
    let mean = errors.iter().sum::<f64>() / errors.len() as f64;
    let shipped = colo_sim::perf::answer::transfer_check("h100-80gb")
        .expect("a check")
        .0
        .error_pct;
    assert!(
        (mean - shipped).abs() < 0.05,
        "checks' mean {mean:.2}% vs shipped {shipped}%"
    );
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let quoted = format!("H100 {mean:.1}%");
    assert!(readme.contains(&quoted), "README should say `{quoted}`");
}

#[test]
fn predict_a100_mig_answers_from_the_shipped_transferred_tables() {
    let run = colo_ok(&[
        "predict",
        "--gpu",
        "a100-40gb",
        "--mode",
        "mig",
        "--layout",
        "3g.20gb,4g.20gb",
        "resnet50:64:224",
        "vit_b_16:32:224",
    ]);
    // The shipped tables are what `calibrate transfer` makes of the committed H200 traces now.
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("a100.csv");
    colo_ok(&[
        "calibrate",
        "transfer",
        "calibrate/data/h200/traces",
        "--to",
        "a100-40gb",
        "--csv",
        csv.to_str().unwrap(),
    ]);
    let rows = csv_rows(&std::fs::read_to_string(&csv).unwrap());
    for point in ["resnet50:64:224", "vit_b_16:32:224"] {
        let line = run
            .stdout
            .lines()
            .find(|l| l.starts_with(point))
            .expect(point);
        let cells: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(cells.last(), Some(&"transferred"), "{line}");
        let alone: f64 = cells[3].parse().unwrap();
        let want: f64 = rows.iter().find(|r| r[0] == point).unwrap()[2]
            .parse()
            .unwrap();
        assert!(
            (alone - want).abs() < 0.051,
            "{point}: shipped {alone} vs fresh {want}"
        );
        assert!(line.contains("g.20gb@"), "{line}");
    }
}

#[test]
fn predict_on_a_gpu_nothing_was_calibrated_on_carries_traces_and_the_h200s_sharing() {
    // The V100 has no profile: the H200's sharing parameters come with the transferred traces.
    let shared = colo_ok(&[
        "predict",
        "--gpu",
        "v100",
        "--traces",
        "calibrate/data/h200/traces",
        "--mode",
        "timeslice",
        "--format",
        "json",
        "resnet18:128:32",
        "resnet50:64:224",
    ]);
    let answer: serde_json::Value = serde_json::from_str(&shared.stdout).expect("json");
    assert_eq!(answer["sharing_parameters_origin"], "transferred");
    assert!(answer["power_w"].is_null(), "no power model is carried");
    let jobs = answer["jobs"].as_array().expect("jobs");
    assert_eq!(jobs.len(), 2);
    let mut fractions = 0.0;
    for job in jobs {
        assert_eq!(job["origin"], "transferred", "{job}");
        let (rate, alone) = (
            job["samples_per_s"].as_f64().unwrap(),
            job["exclusive_samples_per_s"].as_f64().unwrap(),
        );
        let fraction = rate / alone;
        assert!(fraction > 0.2 && fraction < 1.0, "{fraction}");
        fractions += fraction;
    }
    // Two GPU-bound jobs time-sliced share one GPU, less the switching.
    assert!(fractions > 0.7 && fractions <= 1.0 + 1e-9, "{fractions}");
    assert!(
        shared.stderr.contains("transferred to v100"),
        "{}",
        shared.stderr
    );
}

#[test]
fn a_stated_cpu_factor_slows_a_host_bound_transferred_job_in_predict() {
    // Gavel's Transformer at batch 16, traced in FP32 on an H100: host-bound on the V100 too,
    // so its speed follows the stated host time.
    let rate = |factor: &str| -> (f64, String) {
        let run = colo_ok(&[
            "predict",
            "--gpu",
            "v100",
            "--mode",
            "exclusive",
            "--traces",
            "calibrate/data/h100/external/no-tf32",
            "--cpu-factor",
            factor,
            "--format",
            "json",
            "py.gavel_transformer:16:30",
        ]);
        let v: serde_json::Value = serde_json::from_str(&run.stdout).expect("json");
        (v["jobs"][0]["samples_per_s"].as_f64().unwrap(), run.stderr)
    };
    let ((same, _), (slower, note)) = (rate("1"), rate("2.5"));
    assert!(slower < same * 0.6, "{slower} vs {same}");
    assert!(note.contains("host time x 2.5 (stated)"), "{note}");
    let bad = crate::common::colo(&["predict", "--cpu-factor=-1", "resnet50:64:224"]);
    assert_ne!(bad.code, 0);
    assert!(
        bad.stderr.contains("not a positive number"),
        "{}",
        bad.stderr
    );
}
