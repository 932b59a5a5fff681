//! Issue 31, bring your own training job: `colo calibrate trace --cmd` on a stand-in torch
//! (`calibrate/tests/fixtures/fake_torch`, no GPU), `calibrate profile --step-hook`, and
//! `colo predict --traces` / `--alone-rate` on the real traces committed in
//! `calibrate/data/h200/byo/traces/`.
use std::io::Read as _;
use std::path::Path;

use crate::common::{colo, root};

const FIXTURES: &str = "calibrate/tests/fixtures";
const BYO_TRACES: &str = "calibrate/data/h200/byo/traces";

/// The fixture training loop over the stand-in torch, in `mode` (dataloader, kwargs,
/// no-optimizer), as a shell command.
fn fake_job(mode: &str) -> String {
    let fixtures = root().join(FIXTURES);
    format!(
        "PYTHONPATH={}:$PYTHONPATH python3 {} {mode}",
        fixtures.join("fake_torch").display(),
        fixtures.join("fake_user_train.py").display()
    )
}

/// A gzip'd JSON file, parsed.
fn read_gz_json(path: &Path) -> serde_json::Value {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut text = String::new();
    flate2::read::GzDecoder::new(&bytes[..])
        .read_to_string(&mut text)
        .expect("gzip");
    serde_json::from_str(&text).expect("JSON")
}

fn trace_cmd(cmd: &str, out: &Path, extra: &[&str]) -> crate::common::Run {
    let out = out.to_string_lossy().into_owned();
    let mut args = vec![
        "calibrate",
        "trace",
        "--fake-gpu",
        "--cmd",
        cmd,
        "--name",
        "fake",
        "--out",
        &out,
        "--warmup-s",
        "0.2",
        "--window-s",
        "0.3",
    ];
    args.extend_from_slice(extra);
    if !extra.contains(&"--step-timeout-s") {
        args.extend(["--step-timeout-s", "20"]);
    }
    colo(&args)
}

fn index_lines(dir: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(dir.join("index.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("index line is JSON"))
        .collect()
}

#[test]
fn issue_31_an_unmodified_command_is_traced_by_its_optimizer_steps() {
    let dir = tempfile::tempdir().expect("temp dir");
    let run = trace_cmd(&fake_job("dataloader"), dir.path(), &[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let trace = read_gz_json(&dir.path().join("cmd_fake.trace.json.gz"));
    // Two micro-batches of 8 from the DataLoader per optimizer step (the fixture's loop).
    assert_eq!(trace["point"], "fake:16:1");
    assert_eq!(trace["recipe"]["samples_per_step_source"], "dataloader");
    assert_eq!(trace["recipe"]["optimizer"], "SGD");
    assert_eq!(trace["source"], "fake", "no GPU: labelled fake");
    assert_eq!(
        trace["recipe"]["autocast"], "off",
        "the fixture's loop uses no autocast"
    );
    // Each micro-batch sleeps 10 ms: 16 samples take at least 20 ms, so at most 800 samples/s.
    let rate = trace["unprofiled"]["samples_per_s"].as_f64().expect("rate");
    assert!(rate > 50.0 && rate <= 800.0, "{rate}");
    assert_eq!(trace["profiled"]["n_iterations"], 4);
    assert!(
        !run.stdout.contains("finished all steps") && run.stdout.contains("fake:16:1"),
        "the command is ended once traced: {}",
        run.stdout
    );
    let index = index_lines(dir.path());
    assert_eq!(index.len(), 1);
    assert_eq!(index[0]["status"], "ok");
    assert_eq!(index[0]["file"], "cmd_fake.trace.json.gz");

    // Traced again: the file exists, nothing runs.
    let again = trace_cmd("exit 7", dir.path(), &[]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert!(again.stdout.contains("skipped"), "{}", again.stdout);
}

#[test]
fn issue_31_samples_per_step_from_keyword_arguments_or_the_user() {
    let dir = tempfile::tempdir().expect("temp dir");
    let run = trace_cmd(&fake_job("kwargs"), dir.path(), &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let trace = read_gz_json(&dir.path().join("cmd_fake.trace.json.gz"));
    // No DataLoader: two forwards of model(x=tensor of 8) before the first step.
    assert_eq!(trace["point"], "fake:16:1");
    assert_eq!(trace["recipe"]["samples_per_step_source"], "forward");

    let given = tempfile::tempdir().expect("temp dir");
    let run = trace_cmd(
        &fake_job("kwargs"),
        given.path(),
        &["--samples-per-step", "24"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let trace = read_gz_json(&given.path().join("cmd_fake.trace.json.gz"));
    assert_eq!(trace["point"], "fake:24:1");
    assert_eq!(trace["recipe"]["samples_per_step_source"], "user");
}

#[test]
fn issue_31_no_optimizer_step_is_a_timeout_naming_the_hook() {
    let dir = tempfile::tempdir().expect("temp dir");
    let run = trace_cmd(
        &fake_job("no-optimizer"),
        dir.path(),
        &["--step-timeout-s", "2"],
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("torch.optim.optimizer.register_optimizer_step_post_hook")
            && run.stderr.contains("colo_trace.step()")
            && run.stderr.contains("no optimizer step within 2 s"),
        "{}",
        run.stderr
    );
    assert!(!dir.path().join("cmd_fake.trace.json.gz").exists());
    assert_eq!(index_lines(dir.path())[0]["status"], "timeout");
}

#[test]
fn issue_31_a_command_that_ends_first_or_runs_out_of_memory_says_so() {
    let dir = tempfile::tempdir().expect("temp dir");
    let run = trace_cmd("echo boom >&2; exit 3", dir.path(), &[]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("exit status: 3")
            && run.stderr.contains("boom")
            && run.stderr.contains("never imported torch"),
        "{}",
        run.stderr
    );
    assert_eq!(index_lines(dir.path())[0]["status"], "crash");

    let oom = tempfile::tempdir().expect("temp dir");
    let run = trace_cmd(
        "echo 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB' >&2; exit 1",
        oom.path(),
        &[],
    );
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("smaller batch"), "{}", run.stderr);
    assert_eq!(index_lines(oom.path())[0]["status"], "oom");
    assert!(std::fs::read_dir(oom.path()).unwrap().all(|e| {
        !e.unwrap()
            .file_name()
            .to_string_lossy()
            .ends_with(".trace.json.gz")
    }));
}

#[test]
fn issue_31_profile_step_hook_measures_an_unmodified_command() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().to_string_lossy().into_owned();
    let cmd = fake_job("dataloader");
    let run = colo(&[
        "calibrate",
        "profile",
        "--fake-gpu",
        "--step-hook",
        "--run-s",
        "1.5",
        "--once",
        "--warmup-s",
        "0.5",
        "--cmd",
        &cmd,
        "--out",
        &out,
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let store = std::fs::read_to_string(dir.path().join("profile.jsonl")).expect("store");
    let records: Vec<serde_json::Value> = store
        .lines()
        .map(|l| serde_json::from_str(l).expect("record"))
        .collect();
    assert_eq!(records.len(), 1, "--once: one repeat");
    assert_eq!(records[0]["status"], "ok", "ended cleanly at --run-s");
    // 16 samples per step of at least 20 ms: at most 800 samples/s.
    let rate = records[0]["samples_per_s"].as_f64().expect("measured");
    assert!(rate > 50.0 && rate <= 800.0, "{rate}");
}

/// `colo predict ARGS --format json`, which must succeed, parsed, with its stderr.
fn predict(args: &[&str]) -> (serde_json::Value, String) {
    let mut all = vec!["predict", "--traces", BYO_TRACES, "--format", "json"];
    all.extend_from_slice(args);
    let run = colo(&all);
    assert_eq!(run.code, 0, "{all:?}: {}", run.stderr);
    (serde_json::from_str(&run.stdout).expect("JSON"), run.stderr)
}

#[test]
fn issue_31_a_traced_command_is_predicted_from_its_trace_without_a_refit() {
    let trace = read_gz_json(&root().join(BYO_TRACES).join("cmd_bert_mlm.trace.json.gz"));
    let unprofiled = trace["unprofiled"]["samples_per_s"].as_f64().unwrap();
    let peak_gib = trace["peak_reserved_mib"].as_f64().unwrap() / 1024.0;
    let (alone, stderr) = predict(&["--mode", "exclusive", "bert_mlm:32:1"]);
    let job = &alone["jobs"][0];
    assert_eq!(job["origin"], "measured");
    assert!(
        (job["exclusive_samples_per_s"].as_f64().unwrap() - unprofiled).abs() < 1e-6,
        "alone rate is the trace's unprofiled window: {job}"
    );
    assert!(job["memory_gib"].as_f64().unwrap() >= peak_gib, "{job}");
    assert!(
        stderr.contains("measured alone on NVIDIA H200") && stderr.contains("2026-12-04"),
        "{stderr}"
    );

    let (pair, _) = predict(&["--mode", "mps", "bert_mlm:32:1", "lightning_r50:64:1"]);
    assert_eq!(
        pair["perf_model"], "kernel",
        "never the parametric fallback"
    );
    for job in pair["jobs"].as_array().unwrap() {
        let f = job["fraction_of_exclusive"].as_f64().unwrap();
        assert!(f > 0.0 && f <= 1.0, "{job}");
    }
}

#[test]
fn issue_31_an_alone_rate_measured_on_the_gpu_anchors_the_trace() {
    let (anchored, stderr) = predict(&[
        "--mode",
        "mps",
        "bert_mlm:32:1",
        "lightning_r50:64:1",
        "--alone-rate",
        "lightning_r50:64:1=1809",
    ]);
    assert!(stderr.contains("anchored to 1809"), "{stderr}");
    assert!(
        (anchored["jobs"][1]["exclusive_samples_per_s"]
            .as_f64()
            .unwrap()
            - 1809.0)
            .abs()
            < 1e-9
    );
    let run = colo(&[
        "predict",
        "bert_mlm:32:1",
        "--alone-rate",
        "bert_mlm:32:1=700",
    ]);
    assert_ne!(run.code, 0);
    assert!(run.stderr.contains("--traces"), "{}", run.stderr);
}

#[test]
fn issue_31_an_unknown_job_says_how_to_trace_it() {
    let run = colo(&["predict", "my_train:64:1"]);
    assert_ne!(run.code, 0);
    assert!(
        run.stderr.contains("colo calibrate trace --cmd")
            && run.stderr.contains("--name my_train")
            && run.stderr.contains("--traces DIR"),
        "{}",
        run.stderr
    );
    let empty = tempfile::tempdir().expect("temp dir");
    let dir = empty.path().to_string_lossy().into_owned();
    let run = colo(&["predict", "--traces", &dir, "bert_mlm:32:1"]);
    assert_ne!(run.code, 0);
    assert!(
        run.stderr.contains("no usable kernel trace"),
        "{}",
        run.stderr
    );
}

#[test]
fn issue_37_a_lone_client_under_an_sm_budget_is_never_faster_than_alone() {
    let run = colo(&[
        "predict",
        "--mode",
        "mps",
        "--sm-pct",
        "50",
        "resnet18:128:32",
        "--format",
        "json",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let answer: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let f = answer["jobs"][0]["fraction_of_exclusive"].as_f64().unwrap();
    // Today's code predicted 1.067: faster on half the SMs than on all of them.
    assert!(f <= 1.0, "{f}");
}

/// The blind co-runs of a blind test's folder: per job (set, mode, its SM budgets or slices,
/// program, point, predicted fraction, equal share, measured fraction against the same
/// session's alone run, and for emulated slices the isolated-slice MIG path's fraction).
struct Scored {
    set: String,
    mode: String,
    sm_pct: String,
    program: String,
    point: String,
    predicted: f64,
    equal_share: f64,
    measured: f64,
    mig_path: Option<f64>,
}

/// The first blind test (traced on one H200, co-run on another).
const BYO_FIRST: &str = "calibrate/data/h200/byo";
/// The second (traced, predicted and co-run on one GPU in one session).
const BYO_SECOND: &str = "calibrate/data/byo-v2";

fn byo_path(name: &str) -> std::path::PathBuf {
    root().join(BYO_FIRST).join(name)
}

/// Program of a store record's command, as score.py names it.
fn program_of(command: &str) -> String {
    let cmd = command.rsplit("; ").next().unwrap_or(command);
    if cmd.contains("zoo_point.py") {
        return format!("zoo:{}", cmd.split_whitespace().last().unwrap_or(""));
    }
    let script = cmd.split_whitespace().nth(1).unwrap_or("");
    let file = Path::new(script).file_stem().unwrap().to_string_lossy();
    match file.as_ref() {
        "bert_mlm" => "bert_mlm",
        "hf_trainer_gpt2" => "hf_gpt2",
        "lora_peft" => "lora_llama",
        "lm_grad_accum" => "lm_accum",
        "timm_amp_channels_last" => "timm_amp_cl",
        "lightning_resnet50" => "lightning_r50",
        "dataloader_bound" => "data_bound",
        other => panic!("unknown program {other}"),
    }
    .to_string()
}

fn scored() -> Vec<Scored> {
    scored_from(BYO_FIRST, "predictions.csv")
}

/// The jobs of `folder`'s predictions `file`, each with its fraction of alone measured in
/// `folder/store` (columns read by name: the two tests' files differ).
fn scored_from(folder: &str, file: &str) -> Vec<Scored> {
    let folder = root().join(folder);
    let mut rates = std::collections::HashMap::new();
    for entry in std::fs::read_dir(folder.join("store")).expect("store") {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        for line in text.lines() {
            let r: serde_json::Value = serde_json::from_str(line).unwrap();
            let key = (
                r["plan"].as_str().unwrap().to_string(),
                r["rank"].as_u64().unwrap(),
            );
            let rate = r["samples_per_s"].as_f64().expect("every process measured");
            rates.insert(key, (program_of(r["command"].as_str().unwrap()), rate));
        }
    }
    let alone: std::collections::HashMap<String, f64> = rates
        .iter()
        .filter(|((plan, _), _)| plan.starts_with("a_"))
        .map(|(_, (program, rate))| (program.clone(), *rate))
        .collect();
    let mut reader = csv::Reader::from_path(folder.join(file)).expect("predictions");
    let header = reader.headers().unwrap().clone();
    let column = |name: &str| header.iter().position(|h| h == name);
    let at = |name: &str| column(name).unwrap_or_else(|| panic!("no column {name}"));
    let place = column("sm_pct")
        .or(column("slices"))
        .expect("sm_pct or slices");
    reader
        .records()
        .map(|row| {
            let row = row.unwrap();
            let set = row[at("set")].to_string();
            let rank = row[at("rank")].parse::<u64>().unwrap();
            let (program, rate) = rates[&(set.clone(), rank)].clone();
            // The second test names the zoo point's program zoo_r50.
            let planned = match &row[at("program")] {
                "zoo_r50" => "zoo:resnet50:64:224",
                other => other,
            };
            assert_eq!(program, planned, "set {set} rank {rank}");
            let mig_path = column("mig_path_fraction").and_then(|c| row[c].parse().ok());
            Scored {
                set,
                mode: row[at("mode")].to_string(),
                sm_pct: row[place].to_string(),
                measured: rate / alone[&program],
                program,
                point: row[at("point")].to_string(),
                predicted: row[at("predicted_fraction")].parse().unwrap(),
                equal_share: row[at("equal_share")].parse().unwrap(),
                mig_path,
            }
        })
        .collect()
}

/// Which jobs a class of the blind table holds.
type ClassFilter<'a> = &'a dyn Fn(&Scored) -> bool;

fn mape(rows: &[&Scored], predicted: &dyn Fn(&Scored) -> f64) -> f64 {
    100.0
        * rows
            .iter()
            .map(|r| (predicted(r) - r.measured).abs() / r.measured)
            .sum::<f64>()
        / rows.len() as f64
}

/// The README's blind figures of issue 31 are what the committed predictions and measurements
/// give, and today's model still predicts what was committed before the runs.
#[test]
fn issue_31_readme_blind_figures_come_from_the_committed_runs() {
    let rows = scored();
    assert_eq!(rows.len(), 28);
    let classes: [ClassFilter; 3] = [
        &|r| r.mode == "mps" && r.sm_pct == "-",
        &|r| r.mode == "timeslice",
        &|r| r.sm_pct != "-",
    ];
    let mut blind = Vec::new();
    let mut equal = Vec::new();
    for keep in classes {
        let sel: Vec<&Scored> = rows.iter().filter(|r| keep(r)).collect();
        blind.push(format!("{:.1}%", mape(&sel, &|r| r.predicted)));
        equal.push(format!("{:.1}%", mape(&sel, &|r| r.equal_share)));
    }
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let sentence = format!(
        "MPS pairs and sets of 3, {} ({}); time-sliced pairs,\n{} ({}); MPS SM budgets, {} ({}).",
        blind[0], equal[0], blind[1], equal[1], blind[2], equal[2]
    );
    assert!(readme.contains(&sentence), "README should say: {sentence}");

    // Today's model, asked as predict_plan.py asked, gives the newest committed predictions:
    // the blind ones, or those of a later model (post hoc, scored in posthoc.md).
    let posthoc = byo_path("predictions-posthoc.csv").is_file();
    let rows = if posthoc {
        let later = scored_from(BYO_FIRST, "predictions-posthoc.csv");
        let page = std::fs::read_to_string(byo_path("posthoc.md")).unwrap();
        for (name, keep) in classes.iter().enumerate() {
            let sel: Vec<&Scored> = later.iter().filter(|r| keep(r)).collect();
            let figure = format!("{:.1}%", mape(&sel, &|r| r.predicted));
            assert!(
                page.contains(&figure),
                "posthoc.md lacks class {name}'s {figure}"
            );
        }
        later
    } else {
        rows
    };
    let mut by_set: Vec<(&str, Vec<&Scored>)> = Vec::new();
    for r in &rows {
        match by_set.iter_mut().find(|(s, _)| *s == r.set) {
            Some((_, v)) => v.push(r),
            None => by_set.push((&r.set, vec![r])),
        }
    }
    for (set, jobs) in by_set {
        let mut args = vec!["--mode", jobs[0].mode.as_str()];
        if jobs[0].sm_pct != "-" {
            args.extend(["--sm-pct", jobs[0].sm_pct.as_str()]);
        }
        args.extend(jobs.iter().map(|j| j.point.as_str()));
        let (answer, _) = predict(&args);
        for (job, predicted) in jobs.iter().zip(answer["jobs"].as_array().unwrap()) {
            let now = predicted["fraction_of_exclusive"].as_f64().unwrap();
            assert!(
                (now - job.predicted).abs() < 1e-9,
                "{set} {}: predicted {now} today, {} committed before the runs",
                job.program,
                job.predicted
            );
        }
    }
}

/// The H100 page's tables (calibrate/data/h100/README.md) are what the committed data give:
/// the alone-rate check as compare.py prints it, the recipe speeds from the trace index.
#[test]
fn issue_31_h100_page_quotes_the_committed_checks() {
    let page = std::fs::read_to_string(root().join("calibrate/data/h100/README.md")).unwrap();
    let printed = crate::common::python_ok("calibrate/data/h100/byo-alone-check/compare.py", &[]);
    let mut rows = 0;
    for line in printed.lines().skip(1) {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() != 5 || f[0].starts_with('|') {
            continue;
        }
        let row = format!("| {} | {} | {} | {} |", f[0], f[1], f[3], f[4]);
        assert!(page.contains(&row), "page lacks `{row}`");
        rows += 1;
    }
    assert_eq!(rows, 10);
    let summary = printed.lines().last().unwrap();
    assert!(
        summary.contains("mean 5.7%, median 5.2%, max 14.7%, within 3%: 4 of 10")
            && page.contains("Within 3%: 4 of 10 (mean 5.7%, median 5.2%, max 14.7%)"),
        "{summary}"
    );
    let index =
        std::fs::read_to_string(root().join("calibrate/data/h100/recipes/traces/index.jsonl"))
            .unwrap();
    let rate = |point: &str| -> f64 {
        index
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .find(|v| v["point"] == point)
            .and_then(|v| v["unprofiled_samples_per_s"].as_f64())
            .unwrap_or_else(|| panic!("{point} not in the index"))
    };
    for point in [
        "resnet50:64:224",
        "vit_b_16:32:224",
        "lm_medium:16:512",
        "convnext_tiny:64:224",
    ] {
        let (model, rest) = point.split_once(':').unwrap();
        let row = format!(
            "| {point} | {:.0} | {:.0} | {:.0} |",
            rate(point),
            rate(&format!("{model}+bf16-adamw:{rest}")),
            rate(&format!("{model}+fp16-amp-adamw:{rest}"))
        );
        assert!(page.contains(&row), "page lacks `{row}`");
    }
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let vit = rate("vit_b_16+bf16-adamw:32:224") / rate("vit_b_16:32:224");
    let lm = rate("lm_medium+bf16-adamw:16:512") / rate("lm_medium:16:512");
    let quoted = format!("vit_b_16:32:224 at {vit:.1}x and lm_medium:16:512 at {lm:.1}x");
    assert!(readme.contains(&quoted), "README lacks `{quoted}`");
}

/// Autocast entered inside the model's forward (as Accelerate wraps it) is the recipe's: the
/// top-level module call sees it off, the tracer's hook on autocast's entry sees bfloat16.
#[test]
fn issue_31_autocast_inside_forward_is_in_the_recipe() {
    let dir = tempfile::tempdir().expect("temp dir");
    let run = trace_cmd(&fake_job("autocast-inside"), dir.path(), &[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let trace = read_gz_json(&dir.path().join("cmd_fake.trace.json.gz"));
    assert_eq!(
        trace["recipe"]["autocast"], "bfloat16",
        "{}",
        trace["recipe"]
    );
    assert_eq!(trace["recipe"]["autocast_inside_forward"], true);
}

/// A page's words, with every run of whitespace one space (sentences wrap anywhere).
fn words(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The second blind test (calibrate/data/byo-v2/, traced, predicted and co-run on one H100 in
/// one session): the README's figures are what its committed predictions and measurements give,
/// the traces' alone rates against the same programs run alone, and today's model still
/// predicts what was committed before each set ran, an emulated layout asked as
/// `--mode mps --layout` giving what `--sm-pct 45,48` gave then.
#[test]
fn issue_31_second_blind_test_figures_come_from_the_committed_runs() {
    let rows = scored_from(BYO_SECOND, "predictions.csv");
    assert_eq!(rows.len(), 16, "8 co-run sets of 2 ran");
    let classes: [(&str, ClassFilter); 3] = [
        ("MPS pairs", &|r| r.mode == "mps"),
        ("time-sliced pairs", &|r| r.mode == "timeslice"),
        ("emulated 3g+4g layouts (MPS SM budgets)", &|r| {
            r.mode == "mig-emulated"
        }),
    ];
    let mut parts = Vec::new();
    for (label, keep) in classes {
        let sel: Vec<&Scored> = rows.iter().filter(|r| keep(r)).collect();
        let blind = mape(&sel, &|r| r.predicted);
        let equal = mape(&sel, &|r| r.equal_share);
        let mut part = format!("{label}, {blind:.1}% ({equal:.1}%");
        if sel.iter().all(|r| r.mig_path.is_some()) {
            let mig = mape(&sel, &|r| r.mig_path.unwrap());
            part += &format!("; isolated-slice MIG path {mig:.1}%");
        }
        parts.push(part + ")");
    }
    let sentence = format!("{}.", parts.join("; "));
    for page in ["README.md", "calibrate/data/byo-v2/README.md"] {
        let text = words(&std::fs::read_to_string(root().join(page)).unwrap());
        assert!(text.contains(&sentence), "{page} should say: {sentence}");
    }

    // Each trace's unprofiled window against the same program's alone run after it.
    let mut gaps = Vec::new();
    for entry in std::fs::read_dir(root().join(BYO_SECOND).join("store")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let Some(program) = name.strip_prefix("a_") else {
            continue;
        };
        let record: serde_json::Value =
            serde_json::from_str(std::fs::read_to_string(&path).unwrap().trim()).unwrap();
        let alone = record["samples_per_s"].as_f64().unwrap();
        let trace = read_gz_json(
            &root()
                .join(BYO_SECOND)
                .join(format!("traces/cmd_{program}.trace.json.gz")),
        );
        let traced = trace["unprofiled"]["samples_per_s"].as_f64().unwrap();
        gaps.push(100.0 * (traced - alone).abs() / alone);
    }
    assert_eq!(gaps.len(), 8);
    let within = gaps.iter().filter(|g| **g <= 3.0).count();
    let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
    let sentence = format!("within 3% for {within} of 8 programs (mean {mean:.1}%");
    for page in ["README.md", "calibrate/data/byo-v2/README.md"] {
        let text = words(&std::fs::read_to_string(root().join(page)).unwrap());
        assert!(text.contains(&sentence), "{page} should say: {sentence}");
    }

    // Today's model gives the newest committed predictions: the blind ones, or those of a later
    // model (post hoc, not blind: scored in posthoc.md).
    let posthoc = root()
        .join(BYO_SECOND)
        .join("predictions-posthoc.csv")
        .is_file();
    let rows = if posthoc {
        let later = scored_from(BYO_SECOND, "predictions-posthoc.csv");
        let page = std::fs::read_to_string(root().join(BYO_SECOND).join("posthoc.md")).unwrap();
        for (label, keep) in classes {
            let sel: Vec<&Scored> = later.iter().filter(|r| keep(r)).collect();
            let figure = format!("{label} {:.1}%", mape(&sel, &|r| r.predicted));
            assert!(words(&page).contains(&figure), "posthoc.md lacks {figure}");
        }
        later
    } else {
        rows
    };
    let traces = root().join(BYO_SECOND).join("traces");
    let traces = traces.to_str().unwrap();
    let ask = |mode: &str, layout: Option<&str>, points: &[&str]| -> Vec<f64> {
        let mut args = vec!["predict", "--gpu", "h100-80gb", "--traces", traces];
        args.extend(["--format", "json", "--mode", mode]);
        if let Some(layout) = layout {
            args.extend(["--layout", layout]);
        }
        args.extend(points);
        let run = colo(&args);
        assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
        let answer: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        let jobs = answer["jobs"].as_array().unwrap();
        jobs.iter()
            .map(|j| j["fraction_of_exclusive"].as_f64().unwrap())
            .collect()
    };
    let mut sets: Vec<&str> = rows.iter().map(|r| r.set.as_str()).collect();
    sets.dedup();
    for set in sets {
        let jobs: Vec<&Scored> = rows.iter().filter(|r| r.set == set).collect();
        let points: Vec<&str> = jobs.iter().map(|j| j.point.as_str()).collect();
        let emulated = jobs[0].mode == "mig-emulated";
        let now = match emulated {
            true => ask("mps", Some(jobs[0].sm_pct.as_str()), &points),
            false => ask(&jobs[0].mode, None, &points),
        };
        let mig = emulated.then(|| ask("mig", Some(jobs[0].sm_pct.as_str()), &points));
        for (i, job) in jobs.iter().enumerate() {
            assert!(
                (now[i] - job.predicted).abs() < 1e-9,
                "{set} {}: {} today, {} committed",
                job.program,
                now[i],
                job.predicted
            );
            if let Some(mig) = &mig {
                assert!((mig[i] - job.mig_path.unwrap()).abs() < 1e-9, "{set}");
            }
        }
    }
}
