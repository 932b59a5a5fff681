//! `colo bench` at tiny sizes: every case prints its rows, CSV parses, the sweep reports its
//! parallel efficiency, and the case and size options are obeyed.
use crate::common::colo;

fn bench(args: &[&str]) -> String {
    let args: Vec<&str> = ["bench"].iter().chain(args).copied().collect();
    let out = colo(&args);
    assert_eq!(out.code, 0, "colo {args:?} failed:\n{}", out.stderr);
    out.stdout
}

/// CSV rows as fields, header checked; quoted fields hold no commas in these rows.
fn csv_rows(text: &str) -> Vec<Vec<String>> {
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("case,jobs,gpus,threads,wall_s,engine_s,events,events_per_s,peak_mib,note")
    );
    lines
        .map(|l| {
            l.split(',')
                .map(|f| f.trim_matches('"').to_owned())
                .collect()
        })
        .collect()
}

#[test]
fn synthetic_and_sweep_cases_obey_sizes_and_report_efficiency() {
    let text = bench(&[
        "--case",
        "small,large,sweep",
        "--jobs",
        "200",
        "--gpus",
        "4",
        "--variants",
        "4",
        "--threads",
        "2",
        "--format",
        "csv",
    ]);
    let rows = csv_rows(&text);
    assert_eq!(rows.len(), 4, "{text}");
    for row in &rows {
        assert_eq!(row.len(), 10, "{row:?}");
        assert_eq!(row[2], "4", "GPUs per run: {row:?}");
        let events: u64 = row[6].parse().unwrap();
        assert!(events >= 2 * 200, "every job arrives and ends: {row:?}");
        let wall: f64 = row[4].parse().unwrap();
        assert!(wall > 0.0);
    }
    assert_eq!(rows[0][1], "200");
    assert_eq!(rows[2][1], "800", "4 variants x 200 jobs");
    assert_eq!(rows[2][3], "1");
    assert_eq!(rows[3][3], "2");
    assert!(
        rows[3][9].starts_with("parallel efficiency t1/(N*tN) = "),
        "{:?}",
        rows[3]
    );
}

#[test]
fn philly_case_times_each_mode_of_the_trace_scenario() {
    let text = bench(&["--case", "philly", "--trace-limit", "300"]);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("case"), "{text}");
    for (line, mode) in lines[1..5]
        .iter()
        .zip(["exclusive", "timeslice", "mps", "mig"])
    {
        assert!(
            line.starts_with(&format!("traces-philly/{mode} ")),
            "{line}"
        );
        assert!(line.contains(" 300 "), "300 jobs: {line}");
    }
    // The scenario's model is the default, kernel: its sharing variants report the memo's hit
    // rate; then they run again with the parametric model, the cheap baseline.
    for line in &lines[2..4] {
        assert!(
            line.contains("kernel memo: ") && line.contains("% hits)"),
            "{line}"
        );
    }
    for (line, mode) in lines[5..7].iter().zip(["timeslice", "mps"]) {
        assert!(
            line.starts_with(&format!("traces-philly/{mode} (parametric model) ")),
            "{line}"
        );
        assert!(!line.contains("kernel memo"), "{line}");
    }
    assert!(lines[7].contains("measured"), "{text}");
}

#[test]
fn kernel_case_reports_replay_times_and_the_memo_hit_rate() {
    let text = bench(&[
        "--case", "kernel", "--jobs", "300", "--gpus", "4", "--format", "csv",
    ]);
    let rows = csv_rows(&text);
    assert_eq!(rows.len(), 5, "{text}");
    for n in [2, 4, 7] {
        assert!(
            rows.iter()
                .any(|r| r[0] == format!("kernel replay: 24 sets of {n} (mps)")
                    && r[9].contains("median")),
            "{text}"
        );
    }
    let kernel = rows
        .iter()
        .find(|r| r[0].contains("Kernel)"))
        .expect("kernel replay row");
    assert_eq!(kernel[1], "300");
    assert!(kernel[9].contains("hits"), "{text}");
}

#[test]
fn zero_gpus_variants_or_threads_are_refused_with_the_range() {
    for (flag, value) in [("--gpus", "0"), ("--variants", "0"), ("--threads", "0")] {
        let out = colo(&["bench", "--case", "sweep", flag, value]);
        assert_eq!(out.code, 2, "{flag} {value}: {}", out.stderr);
        assert!(
            out.stderr.contains(flag) && out.stderr.contains("give 1 or more"),
            "{flag} {value}: {}",
            out.stderr
        );
    }
}

#[test]
fn anchors_and_scale_cases_run_the_shipped_bench_scenarios() {
    let text = bench(&[
        "--case",
        "anchors,scale",
        "--anchors",
        "s20k_fifo,philly800_sjf",
        "--trace-limit",
        "300",
        "--jobs",
        "300",
        "--reps",
        "2",
        "--format",
        "csv",
    ]);
    let rows = csv_rows(&text);
    assert_eq!(rows.len(), 3, "{text}");
    for row in &rows {
        assert!(
            row[9].contains("whole `colo simulate` process (median of 2; range "),
            "each a child process, twice: {row:?}"
        );
        if cfg!(target_os = "linux") {
            let peak: f64 = row[8].parse().unwrap();
            assert!(peak > 1.0, "the child's own peak: {row:?}");
        }
    }
    assert_eq!(rows[0][0], "anchor s20k_fifo");
    assert_eq!(rows[1][0], "anchor philly800_sjf");
    assert_eq!(
        rows[0][1], "300",
        "--trace-limit caps the trace: {:?}",
        rows[0]
    );
    assert!(rows[0][9].contains("not comparable"), "{:?}", rows[0]);
    assert_eq!(rows[2][0], "scale: synthgen 300 jobs");
    assert_eq!(rows[2][1], "300");
    let events: u64 = rows[2][6].parse().unwrap();
    assert!(events >= 600, "every job arrives and ends: {:?}", rows[2]);
}

/// A child's peak is its own, not the bench's: after a large case has grown this process, a
/// tiny anchor still reports a small peak (a child's `ru_maxrss` would count the parent's).
#[test]
fn a_child_reports_its_own_peak() {
    if !cfg!(target_os = "linux") {
        return;
    }
    let text = bench(&[
        "--case",
        "large,anchors",
        "--jobs",
        "300000",
        "--gpus",
        "3000",
        "--anchors",
        "s20k_sjf",
        "--trace-limit",
        "100",
        "--reps",
        "1",
        "--format",
        "csv",
    ]);
    let rows = csv_rows(&text);
    assert_eq!(rows.len(), 2, "{text}");
    let parent: f64 = rows[0][8].parse().unwrap();
    let child: f64 = rows[1][8].parse().unwrap();
    assert!(
        child < parent,
        "the 100-job child ({child} MiB) below the 300k-job case in the bench ({parent} MiB)"
    );
}

/// `--in-process` runs the same scenarios here, once, and says so.
#[test]
fn in_process_anchors_say_so() {
    let text = bench(&[
        "--case",
        "anchors",
        "--anchors",
        "s20k_sjf",
        "--trace-limit",
        "200",
        "--in-process",
        "--format",
        "csv",
    ]);
    let rows = csv_rows(&text);
    assert_eq!(rows.len(), 1, "{text}");
    assert_eq!(rows[0][1], "200");
    assert!(rows[0][9].contains("in this process"), "{:?}", rows[0]);
}

#[test]
fn an_unknown_anchor_is_named_with_the_ones_there_are() {
    let out = crate::common::colo(&["bench", "--case", "anchors", "--anchors", "nope"]);
    assert_ne!(out.code, 0);
    assert!(
        out.stderr.contains("no scenario `nope`") && out.stderr.contains("s20k_fifo"),
        "{}",
        out.stderr
    );
}

#[test]
fn the_answers_case_times_each_command_as_a_whole_process() {
    let text = bench(&["--case", "answers", "--reps", "1", "--format", "csv"]);
    let rows = csv_rows(&text);
    let cases: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(
        cases,
        [
            "answers/predict pair (kernel)",
            "answers/predict pair (kernel --traces)",
            "answers/predict pair (parametric)",
            "answers/pack 4 jobs (kernel)",
            "answers/pack 4 jobs (parametric)",
        ]
    );
    for r in &rows {
        let wall: f64 = r[4].parse().unwrap();
        assert!(wall > 0.0, "{r:?}");
        assert!(r[9].contains("whole `colo"), "{r:?}");
    }
    // In-process there are no child processes to time: said, not silently zero.
    let text = bench(&["--case", "answers", "--in-process", "--format", "csv"]);
    assert!(csv_rows(&text).iter().all(|r| r[9].starts_with("not run")));
}
