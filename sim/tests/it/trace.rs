//! Trace readers on fixtures with planted bad rows, and on every trace shipped in
//! `scenarios/traces/data/`, counted against an independent line count.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::time::Instant;

use colo_sim::workload::trace::{
    ReadOptions, SkipReason, Trace, TraceFormat, read_openb, read_openb_nodes, read_trace,
};
use flate2::read::MultiGzDecoder;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/traces")
        .join(name)
}

fn shipped(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios/traces/data")
        .join(name)
}

const LENIENT: ReadOptions = ReadOptions {
    strict: false,
    limit: None,
    all_states: false,
};
const STRICT: ReadOptions = ReadOptions {
    strict: true,
    limit: None,
    all_states: false,
};

fn skips(trace: &Trace) -> Vec<(SkipReason, u64)> {
    trace.skips.0.iter().map(|(r, n)| (*r, *n)).collect()
}

/// The strict-mode message for `file`, from its `path:line: field ...` start.
fn strict_error(format: TraceFormat, file: &str) -> String {
    let err = read_trace(format, &fixture(file), &STRICT).unwrap_err();
    let text = err.to_string();
    let file_name = file.rsplit('/').next().unwrap_or(file);
    let start = text.find(file_name).expect("the error names the file");
    text[start..].to_owned()
}

fn assert_prefix(text: String, prefix: &str) {
    assert!(
        text.starts_with(prefix),
        "{text}\ndoes not start with\n{prefix}"
    );
}

/// Reads the fixture `file` leniently; its jobs (name, arrival, duration, GPUs) and skips per
/// reason must be `jobs` and `skipped`.
fn assert_fixture(
    format: TraceFormat,
    file: &str,
    jobs: &[(&str, f64, f64, u32)],
    skipped: &[(SkipReason, u64)],
) {
    let trace = read_trace(format, &fixture(file), &LENIENT).unwrap();
    let got: Vec<_> = trace
        .jobs
        .iter()
        .map(|j| (j.name.as_str(), j.arrival_s, j.duration_s, j.gpus))
        .collect();
    assert_eq!(got, jobs);
    assert_eq!(skips(&trace), skipped);
}

fn names(trace: &Trace) -> Vec<&str> {
    trace.jobs.iter().map(|j| j.name.as_str()).collect()
}

#[test]
fn colo_fixture_skips_per_reason() {
    let trace = read_trace(TraceFormat::Colo, &fixture("colo_bad_rows.csv"), &LENIENT).unwrap();
    assert_eq!(names(&trace), ["a", "g", "i", "j,1"]);
    assert_eq!(trace.jobs[3].duration_s, 10.5);
    use SkipReason::*;
    let expected = [
        (MissingField, 2),
        (Unparsable, 1),
        (NegativeArrival, 1),
        (NegativeDuration, 1),
        (ZeroGpus, 1),
        (ZeroDuration, 1),
    ];
    assert_eq!(skips(&trace), expected);
    assert_eq!(trace.rows_read, 11);
    assert_eq!(
        strict_error(TraceFormat::Colo, "colo_bad_rows.csv"),
        "colo_bad_rows.csv:3: field `gpus` is 0 (zero_gpus); fix the row, or read without \
         strict mode to skip and count such rows"
    );
}

#[test]
fn philly_fixture_skips_per_reason() {
    use SkipReason::*;
    assert_fixture(
        TraceFormat::Philly,
        "philly_bad_rows.csv",
        &[
            ("philly-3", 0.0, 2951.0, 2),
            ("philly-2", 2932.0, 66.0, 1),
            ("philly-11", 6417.0, 120.0, 8),
        ],
        &[
            (MissingField, 1),
            (Unparsable, 2),
            (NegativeDuration, 1),
            (NegativeGpus, 1),
            (ZeroGpus, 1),
            (ZeroDuration, 1),
        ],
    );
    assert_eq!(
        strict_error(TraceFormat::Philly, "philly_bad_rows.csv"),
        "philly_bad_rows.csv:4: field `duration` `-5` is negative (negative_duration); fix the \
         row, or read without strict mode to skip and count such rows"
    );
}

#[test]
fn itp_fixture_skips_per_reason() {
    let trace = read_trace(TraceFormat::Itp, &fixture("itp_bad_rows.csv"), &LENIENT).unwrap();
    assert_eq!(names(&trace), ["j2", "j1", "j9"]);
    assert_eq!(trace.jobs[2].gpus, 2);
    assert_eq!(trace.jobs[2].arrival_s, 70.0);
    use SkipReason::*;
    let expected = [
        (MissingField, 2),
        (Unparsable, 2),
        (NegativeDuration, 1),
        (ZeroGpus, 1),
        (ZeroDuration, 1),
    ];
    assert_eq!(skips(&trace), expected);
    assert_prefix(
        strict_error(TraceFormat::Itp, "itp_bad_rows.csv"),
        "itp_bad_rows.csv:4: field `duration` `-1` is negative",
    );
}

#[test]
fn helios_fixture_skips_per_reason() {
    use SkipReason::*;
    assert_fixture(
        TraceFormat::Helios,
        "helios_cluster_log.csv",
        &[
            ("1425519", 0.0, 3600.0, 8),
            ("1425511", 61.0, 36848.0, 1),
            ("1425512", 87.0, 249.0, 4),
        ],
        &[
            (MissingField, 1),
            (Unparsable, 1),
            (NegativeDuration, 1),
            (EndBeforeStart, 1),
            (ZeroDuration, 1),
            (NoGpu, 1),
        ],
    );
    assert_prefix(
        strict_error(TraceFormat::Helios, "helios_cluster_log.csv"),
        "helios_cluster_log.csv:6: field `end_time` is 300 s before `start_time` \
             (end_before_start)",
    );
}

#[test]
fn openb_fixture_skips_per_reason_and_finds_nodes() {
    let path = fixture("openb/openb_pod_list_fixture.csv");
    let trace = read_trace(TraceFormat::AlibabaOpenb, &path, &LENIENT).unwrap();
    let got: Vec<_> = trace
        .jobs
        .iter()
        .map(|j| {
            (
                j.name.as_str(),
                j.arrival_s,
                j.duration_s,
                j.gpus,
                j.gpu_milli,
            )
        })
        .collect();
    let expected = [
        ("p1", 0.0, 450.0, 1, Some(460)),
        ("p0", 50.0, 1000.0, 1, Some(1000)),
        ("p9", 450.0, 400.0, 8, Some(1000)),
    ];
    assert_eq!(got, expected);
    assert_eq!(trace.jobs.iter().filter(|j| j.shares_gpu()).count(), 1);
    use SkipReason::*;
    let expected = [
        (MissingField, 1),
        (Unparsable, 1),
        (EndBeforeStart, 1),
        (BadGpuShare, 3),
        (ZeroDuration, 1),
        (NoEndTime, 1),
        (NoGpu, 1),
    ];
    assert_eq!(skips(&trace), expected);
    let nodes = trace.nodes.as_ref().expect("node list beside the pods");
    let got: Vec<_> = nodes
        .iter()
        .map(|n| (n.name.as_str(), n.gpus, n.gpu_model.as_str()))
        .collect();
    assert_eq!(got, [("n0", 2, "P100"), ("n2", 8, "V100M32")]);
    assert_prefix(
        strict_error(
            TraceFormat::AlibabaOpenb,
            "openb/openb_pod_list_fixture.csv",
        ),
        "openb_pod_list_fixture.csv:5: field `gpu_milli` `0` is not a share in 1..=1000 \
             for a 1-GPU pod (bad_gpu_share)",
    );
}

#[test]
fn openb_node_list_errors_and_absence() {
    let err = read_openb_nodes(&fixture("openb_nodes_bad.csv")).unwrap_err();
    assert!(
        err.to_string().ends_with(
            "openb_nodes_bad.csv:3: node list field `gpu` `two` is not a whole \
                        number; every node row must be valid, as the node list defines the cluster"
        ),
        "{err}"
    );
    let pods = fixture("colo_bad_rows.csv");
    let missing = fixture("no_such_nodes.csv");
    assert!(read_openb(&pods, Some(&missing), &LENIENT).is_err());
    // No node list beside it: the trace still reads, without a cluster.
    let text = "name,num_gpu,gpu_milli,creation_time,deletion_time\np,1,500,0,10\n";
    let dir = tempfile::tempdir().unwrap();
    let pods = dir.path().join("pods.csv");
    std::fs::write(&pods, text).unwrap();
    let trace = read_openb(&pods, None, &LENIENT).unwrap();
    assert_eq!((trace.jobs.len(), trace.nodes), (1, None));
}

#[test]
fn missing_file_is_an_open_error() {
    let err = read_trace(TraceFormat::Itp, &fixture("nope.csv"), &LENIENT).unwrap_err();
    assert!(
        err.to_string().contains("nope.csv; check the path"),
        "{err}"
    );
}

/// Lines of a file (gunzipped when it ends in `.gz`), read with no CSV parsing.
fn plain_lines(path: &Path) -> Vec<String> {
    let file = std::fs::File::open(path).unwrap();
    let input: Box<dyn Read> = if path.extension().is_some_and(|e| e == "gz") {
        Box::new(MultiGzDecoder::new(file))
    } else {
        Box::new(file)
    };
    BufReader::new(input).lines().map(Result::unwrap).collect()
}

/// Non-empty data lines (header excluded): the independent row count.
fn data_rows(path: &Path) -> u64 {
    plain_lines(path)
        .iter()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .count() as u64
}

/// Read a shipped trace, check its rows against the line count, and report its figures.
fn read_shipped(format: TraceFormat, name: &str) -> Trace {
    let path = shipped(name);
    let started = Instant::now();
    let trace = read_trace(format, &path, &LENIENT).unwrap();
    let elapsed = started.elapsed();
    assert_eq!(trace.rows_read, data_rows(&path), "{name}");
    assert_eq!(
        trace.rows_read,
        trace.jobs.len() as u64 + trace.skips.total()
    );
    eprintln!(
        "{name}: {} rows read, {} jobs, {}; read in {:.1} ms (measured, this build)",
        trace.rows_read,
        trace.jobs.len(),
        trace.skips,
        elapsed.as_secs_f64() * 1e3
    );
    trace
}

#[test]
fn shipped_philly_reads_every_row() {
    let trace = read_shipped(TraceFormat::Philly, "philly/philly_pollux.csv.gz");
    assert_eq!(trace.skips.total(), 0);
    let strict = read_trace(
        TraceFormat::Philly,
        &shipped("philly/philly_pollux.csv.gz"),
        &STRICT,
    );
    assert_eq!(strict.unwrap(), trace);
}

#[test]
fn shipped_itp_clusters_read_every_row() {
    let mut total = 0;
    for cluster in 1..=10 {
        let name = format!("itp/cluster{cluster:02}.csv.gz");
        let trace = read_shipped(TraceFormat::Itp, &name);
        assert_eq!(trace.skips.total(), 0, "{name}");
        total += trace.jobs.len();
    }
    // The upstream README (microsoft/elasticflow-traces) says 69,351 jobs in 10 clusters.
    assert_eq!(total, 69_351);
}

/// Pods of a shipped openb pod list as (num_gpu, gpu_milli, creation, deletion), split by hand.
fn openb_pods(name: &str) -> Vec<(u32, u32, String, String)> {
    let lines = plain_lines(&shipped(name));
    let header: Vec<&str> = lines[0].split(',').collect();
    let col = |n: &str| header.iter().position(|h| *h == n).unwrap();
    let (gpu, milli) = (col("num_gpu"), col("gpu_milli"));
    let (created, deleted) = (col("creation_time"), col("deletion_time"));
    lines[1..]
        .iter()
        .map(|line| {
            let f: Vec<&str> = line.split(',').collect();
            let (g, m) = (f[gpu].parse().unwrap(), f[milli].parse().unwrap());
            (g, m, f[created].to_owned(), f[deleted].to_owned())
        })
        .collect()
}

#[test]
fn issue_5_openb_default_holds_3078_gpu_sharing_pods() {
    let name = "alibaba_openb/openb_pod_list_default.csv.gz";
    let pods = openb_pods(name);
    let sharing: Vec<_> = pods.iter().filter(|p| p.0 >= 1 && p.1 < 1000).collect();
    // The count given by upstream's README.
    assert_eq!(sharing.len(), 3_078);
    let cpu_only = pods.iter().filter(|p| p.0 == 0).count() as u64;
    let sharing_zero_length = sharing.iter().filter(|p| p.2 == p.3).count();

    let trace = read_shipped(TraceFormat::AlibabaOpenb, name);
    let shared_jobs = trace.jobs.iter().filter(|j| j.shares_gpu()).count();
    assert_eq!(shared_jobs + sharing_zero_length, 3_078);
    assert_eq!(trace.gpu_sharing_rows, Some(3_078));
    assert_eq!(trace.skips.get(SkipReason::NoGpu), cpu_only);
    assert_eq!(trace.skips.defects(), 0);
    let nodes = trace
        .nodes
        .as_ref()
        .expect("node list shipped beside the pods");
    let node_rows = data_rows(&shipped("alibaba_openb/openb_node_list_gpu_node.csv"));
    assert_eq!(nodes.len() as u64, node_rows);
    eprintln!(
        "openb default: {shared_jobs} GPU-sharing jobs of {} sharing pods; {} nodes, {} GPUs",
        sharing.len(),
        nodes.len(),
        nodes.iter().map(|n| u64::from(n.gpus)).sum::<u64>()
    );
}

#[test]
fn shipped_openb_gpushare100_reads_every_row() {
    let name = "alibaba_openb/openb_pod_list_gpushare100.csv.gz";
    let pods = openb_pods(name);
    let trace = read_shipped(TraceFormat::AlibabaOpenb, name);
    let sharing = pods.iter().filter(|p| p.0 >= 1 && p.1 < 1000).count();
    let zero_length = pods.iter().filter(|p| p.0 >= 1 && p.2 == p.3).count() as u64;
    let shared_jobs = trace.jobs.iter().filter(|j| j.shares_gpu()).count();
    assert_eq!(trace.skips.get(SkipReason::ZeroDuration), zero_length);
    assert!(shared_jobs <= sharing && shared_jobs as u64 + zero_length >= sharing as u64);
    assert_eq!(trace.skips.defects(), 0);
}
