//! The bodies of the fuzz targets: each feeds arbitrary bytes to one of colo's readers, which
//! must answer with a result or an error; a panic is a bug. The same readers take random bytes
//! and mutated fixtures in the property tests of `cargo test` (`sim/src/fuzzing.rs`,
//! `calibrate/src/fuzzing.rs`, `sim/src/workload/trace/tests.rs`, `sim/src/perf/kernel/tests.rs`).
use std::path::Path;

use colo_calibrate::fit::{gavel, miso};
use colo_calibrate::plan::Plan;
use colo_calibrate::{store, trace};
use colo_sim::perf::Profile;
use colo_sim::perf::kernel::KernelTables;
use colo_sim::scenario::Scenario;
use colo_sim::workload::trace::{ReadOptions, TraceFormat, read_trace_bytes};

/// Workload traces: the first byte picks the format (and strict mode), the rest is the file,
/// plain or gzip'd.
pub fn workload_trace(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let format = TraceFormat::ALL[usize::from(pick) % TraceFormat::ALL.len()];
    let opts = ReadOptions {
        strict: pick & 0x80 != 0,
        limit: None,
        all_states: false,
    };
    let _ = read_trace_bytes(format, rest, &opts);
}

/// Scenario files (RON).
pub fn scenario(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Ok(scenario) = Scenario::parse(&text, Path::new("scenarios/fuzz.ron")) {
        let _ = scenario.variants();
    }
}

/// Profiles (RON).
pub fn profile(data: &[u8]) {
    let _ = Profile::parse(&String::from_utf8_lossy(data), Path::new("fuzz.ron"));
}

/// Kernel tables (JSON, plain or gzip'd).
pub fn kernel_tables(data: &[u8]) {
    let _ = KernelTables::from_bytes(data, Path::new("fuzz-kernels.json.gz"));
}

/// The calibration store (JSON lines).
pub fn calibration_store(data: &[u8]) {
    let _ = store::parse(&String::from_utf8_lossy(data), Path::new("fuzz.jsonl"));
}

/// Calibration plans (RON).
pub fn plan(data: &[u8]) {
    let _ = Plan::parse(&String::from_utf8_lossy(data), Path::new("fuzz.ron"));
}

/// Raw kernel traces of `calibrate trace` (gzip'd JSON).
pub fn raw_trace(data: &[u8]) {
    let _ = trace::parse_raw(data, Path::new("fuzz.trace.json.gz"));
}

/// Gavel's pair table (JSON), for each GPU it names.
pub fn gavel_table(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    for gpu in ["k80", "p100", "v100"] {
        let _ = gavel::parse_table(&text, Path::new("fuzz.json"), gpu);
    }
}

/// MISO's slice runs and memory table (JSON).
pub fn miso_tables(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let _ = miso::parse_run(
        &text,
        Path::new("1g.5gb_resnet_train64.json"),
        "1g.5gb",
        "resnet",
        64,
    );
    let _ = miso::parse_memory(&text, Path::new("memory.json"));
}
