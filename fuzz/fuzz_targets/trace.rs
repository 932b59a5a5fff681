#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| colo_fuzz::workload_trace(data));
