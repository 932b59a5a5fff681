//! Unit tests of the trace readers on in-memory input, and property tests that no input panics.

use std::io::{Cursor, Write};
use std::path::Path;

use flate2::Compression;
use flate2::write::GzEncoder;
use proptest::prelude::*;

use super::*;

fn read_bytes(format: TraceFormat, bytes: &[u8], opts: &ReadOptions) -> Result<Trace, TraceError> {
    let path = Path::new("mem.csv");
    let input = source::decode(Cursor::new(bytes.to_vec()), path)?;
    read_jobs(format, input, path, opts)
}

fn read_text(format: TraceFormat, text: &str) -> Trace {
    read_bytes(format, text.as_bytes(), &ReadOptions::default()).unwrap()
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = GzEncoder::new(Vec::new(), Compression::fast());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

const COLO: &str = "name,arrival_s,duration_s,gpus\nb,20,5,2\na,10,7.5,1\nc,20,1,1\n";

#[test]
fn format_names_round_trip() {
    for format in TraceFormat::ALL {
        assert_eq!(format.to_string().parse::<TraceFormat>().unwrap(), format);
        let json = serde_json::to_string(&format).unwrap();
        assert_eq!(serde_json::from_str::<TraceFormat>(&json).unwrap(), format);
    }
    let kebab: TraceFormat = serde_json::from_str("\"alibaba-openb\"").unwrap();
    assert_eq!(kebab, TraceFormat::AlibabaOpenb);
    assert_eq!("alibaba-openb".parse::<TraceFormat>().unwrap(), kebab);
    let err = "philly2".parse::<TraceFormat>().unwrap_err().to_string();
    assert!(
        err.contains("`philly2`") && err.contains("alibaba_openb"),
        "{err}"
    );
}

#[test]
fn jobs_are_relative_and_sorted_by_arrival_then_line() {
    let trace = read_text(TraceFormat::Colo, COLO);
    let got: Vec<_> = trace
        .jobs
        .iter()
        .map(|j| (j.name.as_str(), j.arrival_s, j.line))
        .collect();
    assert_eq!(got, [("a", 0.0, 3), ("b", 10.0, 2), ("c", 10.0, 4)]);
    assert_eq!(trace.rows_read, 3);
    assert_eq!(trace.nodes, None);
}

#[test]
fn gzip_input_reads_like_plain() {
    let plain = read_text(TraceFormat::Colo, COLO);
    let zipped = read_bytes(
        TraceFormat::Colo,
        &gzip(COLO.as_bytes()),
        &ReadOptions::default(),
    );
    assert_eq!(zipped.unwrap(), plain);
}

#[test]
fn limit_keeps_the_first_jobs_in_file_order() {
    let opts = ReadOptions {
        strict: false,
        limit: Some(2),
        all_states: false,
    };
    let trace = read_bytes(TraceFormat::Colo, COLO.as_bytes(), &opts).unwrap();
    let names: Vec<_> = trace.jobs.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(names, ["a", "b"]);
    assert_eq!(trace.rows_read, 2);
}

#[test]
fn line_numbers_count_quoted_newlines() {
    let text = "name,arrival_s,duration_s,gpus\n\"two\nlines\",0,1,1\nnext,0,1,0\n";
    let opts = ReadOptions {
        strict: true,
        limit: None,
        all_states: false,
    };
    let trace = read_text(TraceFormat::Colo, text);
    assert_eq!(trace.jobs[0].name, "two\nlines");
    let err = read_bytes(TraceFormat::Colo, text.as_bytes(), &opts).unwrap_err();
    assert!(
        err.to_string().starts_with("mem.csv:4: field `gpus` is 0"),
        "{err}"
    );
}

#[test]
fn header_with_bom_spaces_and_other_order_reads() {
    let text = "\u{feff}gpus , name,duration_s,arrival_s\n2,x,3,0\n";
    let job = &read_text(TraceFormat::Colo, text).jobs[0];
    assert_eq!((job.name.as_str(), job.gpus, job.duration_s), ("x", 2, 3.0));
}

#[test]
fn openb_list_without_times_is_a_missing_column() {
    // The header of upstream's openb_pod_list_multigpu50.csv.
    let text = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\nopenb-pod-0000,12000,16384,1,1000\n";
    let opts = ReadOptions::default();
    let err = read_bytes(TraceFormat::AlibabaOpenb, text.as_bytes(), &opts).unwrap_err();
    assert!(
        err.to_string()
            .contains("has no column `creation_time`, which an alibaba_openb trace needs"),
        "{err}"
    );
}

#[test]
fn missing_column_messages_take_the_right_article() {
    let opts = ReadOptions::default();
    let err = read_bytes(TraceFormat::Itp, b"nothing\n1\n", &opts).unwrap_err();
    assert!(
        err.to_string().contains("which an itp trace needs"),
        "{err}"
    );
    let err = read_bytes(TraceFormat::Philly, b"nothing\n1\n", &opts).unwrap_err();
    assert!(
        err.to_string().contains("which a philly trace needs"),
        "{err}"
    );
}

#[test]
fn strict_mode_counts_filters_but_refuses_defects() {
    let text = "job_id,gpu_num,submit_time,duration\n1,0,2020-01-01 00:00:00,5\n\
                2,1,2020-01-01 00:00:09,5\n3,1,2020-01-01 00:00:10,x\n";
    let opts = ReadOptions {
        strict: true,
        limit: Some(1),
        all_states: false,
    };
    let trace = read_bytes(TraceFormat::Helios, text.as_bytes(), &opts).unwrap();
    assert_eq!(trace.skips.get(SkipReason::NoGpu), 1);
    assert_eq!(trace.jobs.len(), 1);
    let opts = ReadOptions {
        strict: true,
        limit: None,
        all_states: false,
    };
    let err = read_bytes(TraceFormat::Helios, text.as_bytes(), &opts).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("mem.csv:4: field `duration` `x` is not"),
        "{err}"
    );
}

#[test]
fn corrupt_gzip_is_a_read_error() {
    let mut bytes = gzip(COLO.as_bytes());
    bytes.truncate(bytes.len() / 2);
    let err = read_bytes(TraceFormat::Colo, &bytes, &ReadOptions::default()).unwrap_err();
    assert!(matches!(err, TraceError::Read { .. }), "{err}");
}

/// Check what every successful read promises.
fn check_invariants(trace: &Trace) {
    assert_eq!(
        trace.rows_read,
        trace.jobs.len() as u64 + trace.skips.total()
    );
    for pair in trace.jobs.windows(2) {
        assert!((pair[0].arrival_s, pair[0].line) < (pair[1].arrival_s, pair[1].line));
    }
    for job in &trace.jobs {
        assert!(crate::workload::limits::arrival(job.arrival_s).is_ok());
        assert!(crate::workload::limits::duration(job.duration_s).is_ok());
        assert!(job.gpus >= 1);
        assert!(job.gpu_milli.is_none_or(|m| (1..=1000).contains(&m)));
        assert!(!job.shares_gpu() || job.gpus == 1);
    }
    if let Some(first) = trace.jobs.first() {
        assert_eq!(first.arrival_s, 0.0);
    }
}

/// Issue 12.6: an ITP `submission_time` of 2^64 beside ordinary ones made a 28,850 s job
/// finish in 28,672 s (2^64 s holds durations only to 4,096 s). Now the row is skipped as
/// `out_of_range`, counted; strict mode refuses it naming the line, the field and the limit.
#[test]
fn itp_submission_time_2_pow_64_is_out_of_range() {
    let text = "job_id,submission_time,duration,num_gpu\n\
                a,100,600,1\n\
                far,18446744073709551616,28850,1\n\
                b,200,700,1\n";
    let trace = read_text(TraceFormat::Itp, text);
    let names: Vec<&str> = trace.jobs.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(names, ["a", "b"]);
    assert_eq!(trace.skips.get(SkipReason::OutOfRange), 1);
    check_invariants(&trace);
    let strict = ReadOptions {
        strict: true,
        limit: None,
        all_states: false,
    };
    let err = read_bytes(TraceFormat::Itp, text.as_bytes(), &strict)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("mem.csv:3: field `submission_time`"),
        "{err}"
    );
    assert!(err.contains("above the limit of 1e10 s"), "{err}");
}

/// Raw times each within the limit, but more than 1e10 s apart: the late arrival is skipped
/// after the rebase (strict: refused, naming its line).
#[test]
fn arrivals_too_far_after_the_first_are_out_of_range() {
    let text = "job_id,submission_time,duration,num_gpu\n\
                early,-9000000000,600,1\n\
                late,9000000000,600,1\n";
    let trace = read_text(TraceFormat::Itp, text);
    assert_eq!(trace.jobs.len(), 1);
    assert_eq!(trace.skips.get(SkipReason::OutOfRange), 1);
    let strict = ReadOptions {
        strict: true,
        limit: None,
        all_states: false,
    };
    let err = read_bytes(TraceFormat::Itp, text.as_bytes(), &strict)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("mem.csv:3: field `submission_time`"),
        "{err}"
    );
    assert!(err.contains("counted from the first submission"), "{err}");
}

/// Issue 12.6: a duration of 1e-308 s gave an infinite mean rate. Durations outside
/// [1e-6, 1e10] s, and NaN or infinite times, are skipped in every format.
#[test]
fn durations_and_times_outside_the_range_are_skipped() {
    let text = "name,arrival_s,duration_s,gpus\n\
                tiny,0,1e-308,1\n\
                huge,0,1e11,1\n\
                late,1e300,5,1\n\
                nan,NaN,5,1\n\
                inf,0,inf,1\n\
                ok,3,5,1\n";
    let trace = read_text(TraceFormat::Colo, text);
    let names: Vec<&str> = trace.jobs.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(names, ["ok"]);
    assert_eq!(trace.skips.get(SkipReason::OutOfRange), 3);
    assert_eq!(trace.skips.get(SkipReason::Unparsable), 2);
    check_invariants(&trace);
    let pods = "name,num_gpu,gpu_milli,creation_time,deletion_time\n\
                p0,1,1000,0,0.0000001\n\
                p1,1,1000,0,1e12\n\
                p2,1,1000,0,60\n";
    let trace = read_text(TraceFormat::AlibabaOpenb, pods);
    assert_eq!(trace.jobs.len(), 1);
    assert_eq!(trace.skips.get(SkipReason::OutOfRange), 2);
    let philly = "timestamp,duration,num_gpus\n\
                  2017-10-09 07:01:55,1e-9,1\n\
                  9999-01-01 00:00:00,60,1\n\
                  2017-10-09 07:02:55,60,1\n";
    let trace = read_text(TraceFormat::Philly, philly);
    assert_eq!(trace.jobs.len(), 1);
    assert_eq!(trace.skips.get(SkipReason::OutOfRange), 2);
}

const HEADERS: [(TraceFormat, &str); 6] = [
    (TraceFormat::Philly, "timestamp,duration,num_gpus"),
    (
        TraceFormat::AlibabaOpenb,
        "name,num_gpu,gpu_milli,creation_time,deletion_time",
    ),
    (TraceFormat::Itp, "job_id,submission_time,duration,num_gpu"),
    (
        TraceFormat::Helios,
        "job_id,gpu_num,submit_time,start_time,end_time,duration",
    ),
    (TraceFormat::Colo, "name,arrival_s,duration_s,gpus"),
    (
        TraceFormat::Slurm,
        "JobID,Submit,Start,End,Elapsed,AllocTRES,State",
    ),
];

/// Field values, good and bad, that the readers meet.
fn field() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        (-3_i64..10).prop_map(|n| n.to_string()),
        (-1.0e6_f64..1.0e12).prop_map(|x| x.to_string()),
        Just("2017-10-09 07:01:55".to_owned()),
        Just("2020-02-30 00:00:00".to_owned()),
        Just("1000".to_owned()),
        Just("NaN".to_owned()),
        Just("inf".to_owned()),
        Just("1e400".to_owned()),
        Just("99999999999999999999".to_owned()),
        Just("\"q,\"\"x\"\"\"".to_owned()),
        "[ -~]{0,8}",
        "\\PC{0,4}",
    ]
}

/// The fixture files of the trace tests, each with the format it is read as.
const FIXTURES: [(TraceFormat, &[u8]); 7] = [
    (
        TraceFormat::Colo,
        include_bytes!("../../../tests/fixtures/traces/colo_bad_rows.csv"),
    ),
    (
        TraceFormat::Philly,
        include_bytes!("../../../tests/fixtures/traces/philly_bad_rows.csv"),
    ),
    (
        TraceFormat::Itp,
        include_bytes!("../../../tests/fixtures/traces/itp_bad_rows.csv"),
    ),
    (
        TraceFormat::Helios,
        include_bytes!("../../../tests/fixtures/traces/helios_cluster_log.csv"),
    ),
    (
        TraceFormat::AlibabaOpenb,
        include_bytes!("../../../tests/fixtures/traces/openb/openb_pod_list_fixture.csv"),
    ),
    (
        TraceFormat::Slurm,
        include_bytes!("../../../tests/fixtures/traces/slurm_sacct.txt"),
    ),
    (
        TraceFormat::Kubernetes,
        include_bytes!("../../../tests/fixtures/traces/kubernetes_pods.jsonl"),
    ),
];
const NODES_FIXTURE: &[u8] =
    include_bytes!("../../../tests/fixtures/traces/openb/openb_node_list_gpu_node.csv");

fn rows() -> impl Strategy<Value = Vec<Vec<String>>> {
    prop::collection::vec(prop::collection::vec(field(), 0..8), 0..12)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: crate::fuzzing::CASES, ..ProptestConfig::default() })]

    #[test]
    fn mutated_fixtures_never_panic(edits in crate::fuzzing::edits(), gz in any::<bool>(),
                                    strict in any::<bool>(), all_states in any::<bool>()) {
        let opts = ReadOptions { strict, limit: None, all_states };
        for (format, fixture) in FIXTURES {
            let bytes = crate::fuzzing::mutate(fixture, &edits);
            let bytes = if gz { gzip(&bytes) } else { bytes };
            if let Ok(trace) = read_trace_bytes(format, &bytes, &opts) {
                check_invariants(&trace);
            }
        }
        let nodes = crate::fuzzing::mutate(NODES_FIXTURE, &edits);
        if let Ok(input) = source::decode(Cursor::new(nodes), Path::new("nodes.csv")) {
            let _ = openb::nodes_from(input, Path::new("nodes.csv"));
        }
    }
}

proptest! {
    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..400),
                                gz in any::<bool>(), strict in any::<bool>()) {
        let bytes = if gz { gzip(&bytes) } else { bytes };
        let opts = ReadOptions { strict, limit: None, all_states: strict };
        for format in TraceFormat::ALL {
            if let Ok(trace) = read_bytes(format, &bytes, &opts) {
                check_invariants(&trace);
            }
        }
        let input = source::decode(Cursor::new(bytes.clone()), Path::new("nodes.csv"));
        if let Ok(input) = input {
            let _ = openb::nodes_from(input, Path::new("nodes.csv"));
        }
    }

    #[test]
    fn random_rows_never_panic(rows in rows(), strict in any::<bool>(),
                               limit in prop::option::of(0_usize..5), all_states in any::<bool>()) {
        let body: String = rows.iter().map(|r| r.join(",") + "\n").collect();
        let opts = ReadOptions { strict, limit, all_states };
        for (format, header) in HEADERS {
            let text = format!("{header}\n{body}");
            // sacct separates fields with `|`.
            let text = if format == TraceFormat::Slurm { text.replace(',', "|") } else { text };
            match read_bytes(format, text.as_bytes(), &opts) {
                Ok(trace) => check_invariants(&trace),
                Err(err) => prop_assert!(strict, "{format}: {err}"),
            }
        }
        let nodes = format!("sn,gpu,model\n{body}");
        let input = source::decode(Cursor::new(nodes.into_bytes()), Path::new("n.csv")).unwrap();
        let _ = openb::nodes_from(input, Path::new("n.csv"));
    }
}

/// Issue 34 item 16: CRLF lines were numbered one too low and CR-only files were all line 1
/// (the CSV reader counts `\n` only), which also shifted Philly's line-named jobs. Lines are
/// counted as a text editor counts them, whatever the line break.
#[test]
fn issue_34_lines_are_counted_for_every_line_break() {
    let strict = ReadOptions {
        strict: true,
        limit: None,
        all_states: false,
    };
    let philly = "timestamp,duration,num_gpus\n2020-01-01 00:00:00,60,1\n\
                  2020-01-01 00:01:00,60,2\n";
    for newline in ["\n", "\r\n", "\r"] {
        let text = COLO.replace('\n', newline) + &format!("d,30,1,0{newline}");
        let err = read_bytes(TraceFormat::Colo, text.as_bytes(), &strict).unwrap_err();
        assert!(
            err.to_string().starts_with("mem.csv:5: field `gpus` is 0"),
            "{newline:?}: {err}"
        );
        let trace = read_text(TraceFormat::Philly, &philly.replace('\n', newline));
        let names: Vec<_> = trace
            .jobs
            .iter()
            .map(|j| (j.name.as_str(), j.line))
            .collect();
        assert_eq!(names, [("philly-2", 2), ("philly-3", 3)], "{newline:?}");
    }
}

/// Issue 34 item 16: a column named twice in the header silently used the first; it is an
/// error naming the column.
#[test]
fn issue_34_a_repeated_column_is_an_error() {
    let text = "name,arrival_s,duration_s,gpus,arrival_s\na,0,5,1,100\n";
    let err = read_bytes(TraceFormat::Colo, text.as_bytes(), &ReadOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("mem.csv names column `arrival_s` twice in its header"),
        "{err}"
    );
}

/// Issue 34 item 19: a file with no line breaks (`/dev/zero`, a gzip bomb of one line) was
/// read into one ever-growing record until the OOM killer struck; a line over the limit is an
/// error naming the line and the limit, plain or gzip.
#[test]
fn issue_34_an_overlong_line_is_an_error() {
    let mut text = COLO.as_bytes().to_vec();
    text.extend(std::iter::repeat_n(b'7', source::MAX_LINE_BYTES + 1));
    for bytes in [text.clone(), gzip(&text)] {
        let err = read_bytes(TraceFormat::Colo, &bytes, &ReadOptions::default())
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "mem.csv:5: line is longer than 1048576 bytes; colo reads trace lines up to \
             1048576 bytes (is this a CSV trace?)"
        );
    }
    let zeros = vec![0u8; source::MAX_LINE_BYTES + 1];
    let err = read_bytes(TraceFormat::Colo, &zeros, &ReadOptions::default()).unwrap_err();
    assert!(
        matches!(err, TraceError::LineTooLong { line: 1, .. }),
        "{err}"
    );
}
