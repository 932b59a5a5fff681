//! `colo hardware`'s text: the catalog in one table, and one GPU with its MIG profiles and
//! every valid MIG layout; and the same as JSON (`--format json`).
use std::fmt::Write as _;

use serde_json::{Value, json};

use super::{GpuSpec, catalog};

/// One line per GPU of the catalog: name, SMs, memory, bandwidth and MIG profiles.
pub fn catalog_table() -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<12} {:<26} {:>5} {:>9} {:>10}  MIG profiles",
        "gpu", "name", "SMs", "mem GiB", "GB/s"
    );
    for gpu in catalog() {
        let _ = writeln!(
            out,
            "{:<12} {:<26} {:>5} {:>9.1} {:>10.0}  {}",
            gpu.name,
            gpu.display_name,
            gpu.sms,
            gpu.memory_gib,
            gpu.memory_bandwidth_gbs,
            gpu.profile_names().join(" ")
        );
    }
    let _ = writeln!(
        out,
        "numbers: vendor datasheets and nvidia-smi MIG listings (published; the H200's \
         measured); `colo hardware --gpu GPU` names each GPU's source"
    );
    out
}

/// `gpu` in detail: its numbers and their source, its MIG profiles, every valid MIG layout.
pub fn describe(gpu: &GpuSpec) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} ({}): {} SMs, {:.1} GiB, {:.0} GB/s",
        gpu.name, gpu.display_name, gpu.sms, gpu.memory_gib, gpu.memory_bandwidth_gbs
    );
    let _ = writeln!(out, "source: {}", gpu.source);
    let c = &gpu.compute;
    let peak = |v: Option<f64>| v.map_or_else(|| "none (FP32 rate)".to_owned(), |v| format!("{v}"));
    let _ = writeln!(
        out,
        "compute (dense TFLOPS, for transferred traces): FP32 {}, TF32 {}, FP16 {}, BF16 {}; \
         boost {:.0} MHz, L2 {} MiB; source: {}",
        c.fp32_tflops,
        peak(c.tf32_tflops),
        peak(c.fp16_tflops),
        peak(c.bf16_tflops),
        c.boost_mhz,
        c.l2_mib,
        c.source
    );
    let _ = writeln!(
        out,
        "{:<12} {:>8} {:>8} {:>5} {:>8} {:>9}  starts",
        "profile", "compute", "memory", "SMs", "mem GiB", "instances"
    );
    for p in gpu.mig_profiles {
        let starts: Vec<String> = p.starts.iter().map(u8::to_string).collect();
        let _ = writeln!(
            out,
            "{:<12} {:>8} {:>8} {:>5} {:>8.2} {:>9}  {}",
            p.name,
            p.compute_slices,
            p.memory_slices,
            p.sms,
            p.memory_gib,
            p.max_instances,
            starts.join(",")
        );
    }
    let layouts = gpu.enumerate_mig_layouts();
    let _ = writeln!(
        out,
        "{} valid MIG layouts (slice@start memory slice):",
        layouts.len()
    );
    for layout in layouts {
        let _ = writeln!(out, "  {layout}");
    }
    out
}

/// The catalog as JSON: every GPU with all its numbers (units in the key names), its MIG
/// profiles and where the numbers come from (`source`).
///
/// # Errors
/// None in practice: a catalog record is names and numbers (serde_json's error type kept).
pub fn catalog_json() -> serde_json::Result<Value> {
    let gpus = catalog()
        .iter()
        .map(serde_json::to_value)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(json!({ "gpus": gpus }))
}

/// `gpu` in detail as JSON, as [`describe`] prints it: its numbers, source and MIG profiles,
/// and every valid MIG layout written as [`describe`] writes it (`slice@start`).
///
/// # Errors
/// As [`catalog_json`].
pub fn describe_json(gpu: &GpuSpec) -> serde_json::Result<Value> {
    let layouts: Vec<String> = gpu
        .enumerate_mig_layouts()
        .iter()
        .map(ToString::to_string)
        .collect();
    Ok(json!({ "gpu": serde_json::to_value(gpu)?, "mig_layouts": layouts }))
}
