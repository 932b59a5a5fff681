//! `colo hardware`: the GPU catalog, each GPU's MIG profiles and its valid MIG layouts.
use std::fmt::Write as _;
use std::process::ExitCode;

use colo_sim::hardware::{self, GpuSpec};

/// Arguments of `colo hardware`.
#[derive(clap::Args)]
pub struct HardwareArgs {
    /// Show one GPU in detail, with every valid MIG layout (default: list all GPUs).
    #[arg(long)]
    pub gpu: Option<String>,
}

/// Runs `colo hardware`.
pub fn run(args: HardwareArgs) -> anyhow::Result<ExitCode> {
    let mut out = String::new();
    match args.gpu {
        None => {
            let _ = writeln!(
                out,
                "{:<12} {:<26} {:>5} {:>9} {:>10}  MIG profiles",
                "gpu", "name", "SMs", "mem GiB", "GB/s"
            );
            for gpu in hardware::catalog() {
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
        }
        Some(name) => describe(&mut out, hardware::gpu(&name)?),
    }
    super::print(&out)?;
    Ok(ExitCode::SUCCESS)
}

fn describe(out: &mut String, gpu: &GpuSpec) {
    let _ = writeln!(
        out,
        "{} ({}): {} SMs, {:.1} GiB, {:.0} GB/s",
        gpu.name, gpu.display_name, gpu.sms, gpu.memory_gib, gpu.memory_bandwidth_gbs
    );
    let _ = writeln!(out, "source: {}", gpu.source);
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
}
