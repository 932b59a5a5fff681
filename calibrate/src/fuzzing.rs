//! Property tests that the readers of calibrate answer every input with a result or an error,
//! never a panic: random bytes and mutated fixtures for the calibration store (JSON lines),
//! plans (RON), raw kernel traces (gzip'd JSON), Gavel's pair table and MISO's slice runs and
//! memory table. The `fuzz/` folder holds cargo-fuzz targets for the same readers (run on
//! demand, not in CI).
//!
//! The cases are few and the inputs small, so the whole set takes about a second.
use std::io::Write as _;
use std::path::Path;

use colo_sim::fuzz_edit::{Edit, mutate};
use proptest::prelude::*;

use crate::fit::{gavel, miso};
use crate::plan::{self, Plan};
use crate::runner::{FakeRunner, Runner as _};
use crate::{store, trace};

/// Cases per reader.
const CASES: u32 = 96;

fn edits() -> impl Strategy<Value = Vec<Edit>> {
    prop::collection::vec((any::<usize>(), 0u8..4, any::<u8>()), 1..10)
}

fn bytes() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..256)
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

fn gunzip(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(bytes), &mut out).unwrap();
    out
}

/// The first records of the smoke run's store.
fn store_fixture() -> String {
    include_str!("../data/h200/smoke.jsonl")
        .lines()
        .take(4)
        .map(|l| format!("{l}\n"))
        .collect()
}

const PLAN: &str = include_str!("../plans/smoke.ron");

/// A small Gavel table in the shipped layout: two job types and their pair.
const GAVEL: &str = r#"{"v100": {
  "('ResNet-18 (batch size 16)', 1)": {"null": 10.0, "('A3C', 1)": [6.0, 2.0]},
  "('A3C', 1)": {"null": 3.0, "('ResNet-18 (batch size 16)', 1)": [2.0, 6.0]}
}}"#;

/// The first epochs of one of MISO's slice runs.
fn miso_run_fixture() -> Vec<u8> {
    let full = gunzip(include_bytes!(
        "../data/external/miso_a100_mig/1g.5gb_resnet_train64.json.gz"
    ));
    let value: serde_json::Value = serde_json::from_slice(&full).unwrap();
    let short: serde_json::Map<String, serde_json::Value> = value
        .as_object()
        .unwrap()
        .iter()
        .take(2)
        .map(|(k, v)| {
            let head: Vec<serde_json::Value> =
                v.as_array().unwrap().iter().take(12).cloned().collect();
            (k.clone(), serde_json::Value::from(head))
        })
        .collect();
    serde_json::to_vec(&short).unwrap()
}

fn miso_memory_fixture() -> Vec<u8> {
    gunzip(include_bytes!(
        "../data/external/miso_a100_mig/memory.json.gz"
    ))
}

/// A raw trace as the fake runner writes it, uncompressed.
fn trace_fixture() -> Vec<u8> {
    let point = plan::parse_point("resnet50:64:224").unwrap();
    let value = crate::runner::synthetic_trace(&point, FakeRunner::new().gpu());
    serde_json::to_vec(&value).unwrap()
}

fn read_all(
    store_text: &[u8],
    plan: &[u8],
    raw_trace: &[u8],
    gavel_text: &[u8],
    run: &[u8],
    memory: &[u8],
) {
    let _ = store::parse(
        &String::from_utf8_lossy(store_text),
        Path::new("fuzz.jsonl"),
    );
    let _ = Plan::parse(&String::from_utf8_lossy(plan), Path::new("fuzz.ron"));
    let _ = trace::parse_raw(raw_trace, Path::new("fuzz.trace.json.gz"));
    let _ = trace::parse_raw(&gzip(raw_trace), Path::new("fuzz.trace.json.gz"));
    for gpu in ["v100", "k80"] {
        let _ = gavel::parse_table(
            &String::from_utf8_lossy(gavel_text),
            Path::new("g.json"),
            gpu,
        );
    }
    let run = String::from_utf8_lossy(run);
    let _ = miso::parse_run(
        &run,
        Path::new("1g.5gb_resnet_train64.json"),
        "1g.5gb",
        "resnet",
        64,
    );
    let _ = miso::parse_memory(&String::from_utf8_lossy(memory), Path::new("memory.json"));
}

#[test]
fn the_fixtures_read_unmutated() {
    let loaded = store::parse(&store_fixture(), Path::new("fixture.jsonl")).unwrap();
    assert_eq!((loaded.records.len(), loaded.skipped.len()), (4, 0));
    Plan::parse(PLAN, Path::new("smoke.ron")).unwrap();
    trace::parse_raw(&gzip(&trace_fixture()), Path::new("t.trace.json.gz")).unwrap();
    let table = gavel::parse_table(GAVEL, Path::new("g.json"), "v100").unwrap();
    assert_eq!((table.jobs.len(), table.pairs.len()), (2, 1));
    let run = String::from_utf8(miso_run_fixture()).unwrap();
    miso::parse_run(&run, Path::new("r.json"), "1g.5gb", "resnet", 64).unwrap();
    let memory = String::from_utf8(miso_memory_fixture()).unwrap();
    assert!(
        !miso::parse_memory(&memory, Path::new("m.json"))
            .unwrap()
            .is_empty()
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: CASES, ..ProptestConfig::default() })]

    #[test]
    fn readers_never_panic_on_random_bytes(bytes in bytes()) {
        read_all(&bytes, &bytes, &bytes, &bytes, &bytes, &bytes);
    }

    #[test]
    fn readers_never_panic_on_mutated_fixtures(edits in edits()) {
        read_all(
            &mutate(store_fixture().as_bytes(), &edits),
            &mutate(PLAN.as_bytes(), &edits),
            &mutate(&trace_fixture(), &edits),
            &mutate(GAVEL.as_bytes(), &edits),
            &mutate(&miso_run_fixture(), &edits),
            &mutate(&miso_memory_fixture(), &edits),
        );
    }
}
