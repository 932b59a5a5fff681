//! GPU hardware catalog with MIG geometry (module docs: README.md beside this file).
#![doc = include_str!("README.md")]

mod catalog;
mod error;
mod mig;
#[cfg(test)]
mod tests;
pub mod text;

pub use error::{HardwareError, MigConflict};
pub use mig::{MigLayout, MigSlice};

/// One GPU model: its size and its MIG profile table. Serialized as `colo hardware --format
/// json` prints it (a catalog record, read by no one: there is no `Deserialize`).
#[derive(Debug, serde::Serialize)]
pub struct GpuSpec {
    /// Canonical short id, e.g. `"h200"`; what scenarios and the CLI print.
    pub name: &'static str,
    /// The name `nvidia-smi` prints, e.g. `"NVIDIA A100-SXM4-40GB"`.
    pub display_name: &'static str,
    /// Other names [`gpu`] accepts (compared case-insensitively, spaces and `_` as `-`).
    pub aliases: &'static [&'static str],
    /// Streaming multiprocessors of the whole GPU.
    pub sms: u32,
    /// Usable memory as `nvidia-smi` reports it, in GiB.
    pub memory_gib: f64,
    /// Peak memory bandwidth, GB/s (datasheet).
    pub memory_bandwidth_gbs: f64,
    /// MIG GPU-instance profiles, in `nvidia-smi mig -lgip` order (smallest first).
    pub mig_profiles: &'static [MigProfile],
    /// Memory slices a MIG layout divides (8 on all catalog GPUs).
    pub mig_memory_slices: u8,
    /// Compute slices a MIG layout divides (7 on all catalog GPUs).
    pub mig_compute_slices: u8,
    /// Where the numbers come from (measured on a card, or NVIDIA documentation).
    pub source: &'static str,
    /// The board's default power limit (TDP), W, from the datasheet of the variant named in
    /// `display_name`: no set can draw more for long, so a predicted power above it is a fault
    /// of the power model.
    pub power_limit_w: f64,
    /// Clocks and peak throughput, for transferring a kernel trace taken on another GPU.
    pub compute: ComputeRates,
}

/// A GPU's clock and dense peak throughput per number format (datasheet figures, without
/// structured sparsity), as a kernel trace's transfer to this GPU needs them.
#[derive(Debug, PartialEq, serde::Serialize)]
pub struct ComputeRates {
    /// Boost SM clock, MHz.
    pub boost_mhz: f64,
    /// L2 cache, MiB.
    pub l2_mib: f64,
    /// FP32 on the CUDA cores (SIMT), TFLOPS.
    pub fp32_tflops: f64,
    /// TF32 on tensor cores, TFLOPS; `None` where the GPU has none (FP32 kernels run instead).
    pub tf32_tflops: Option<f64>,
    /// FP16 (tensor cores where it has them), TFLOPS; `None`: runs at the FP32 rate.
    pub fp16_tflops: Option<f64>,
    /// BF16 on tensor cores, TFLOPS; `None`: no BF16 hardware (emulated at about the FP32 rate).
    pub bf16_tflops: Option<f64>,
    /// Where these numbers come from.
    pub source: &'static str,
}

/// One MIG GPU-instance profile, e.g. `3g.71gb` on H200.
#[derive(Debug, PartialEq, serde::Serialize)]
pub struct MigProfile {
    /// Profile name as `nvidia-smi` prints it without the `MIG ` prefix, e.g. `"3g.71gb"`.
    pub name: &'static str,
    /// Compute slices (GPCs) the instance takes.
    pub compute_slices: u8,
    /// Contiguous memory slices the instance takes.
    pub memory_slices: u8,
    /// SMs the instance gets.
    pub sms: u32,
    /// Memory the instance gets, GiB (`nvidia-smi mig -lgip`).
    pub memory_gib: f64,
    /// Memory-slice indices where an instance may start (`nvidia-smi mig -lgipp`).
    pub starts: &'static [u8],
    /// Most instances of this profile on one GPU.
    pub max_instances: u8,
}

/// Every GPU in the catalog (`colo hardware` lists them), in name order.
pub fn catalog() -> &'static [GpuSpec] {
    &catalog::CATALOG
}

/// The catalog's short ids, comma-separated (`a100-40gb, a100-80gb, h100-80gb, h200`), as help
/// texts list them.
pub fn names() -> String {
    let names: Vec<&str> = catalog().iter().map(|g| g.name).collect();
    names.join(", ")
}

/// The GPUs of Gavel's measured throughput table (V100, P100, K80): no MIG and no memory data,
/// so nothing is simulated on them and [`gpu`] does not find them; `colo predict --profile
/// gavel:NAME` predicts with the table.
pub fn gavel_gpus() -> &'static [GpuSpec] {
    &catalog::GAVEL
}

/// The GPU of Gavel's table named `name` (`v100`, `p100`, `k80`, any case).
pub fn gavel_gpu(name: &str) -> Option<&'static GpuSpec> {
    gavel_gpus()
        .iter()
        .find(|g| g.name.eq_ignore_ascii_case(name))
}

/// A GPU of the catalog ([`gpu`]) or of Gavel's table ([`gavel_gpu`]): where a kernel trace
/// can be carried to (their datasheet rates are in the catalog) although nothing was measured
/// on Gavel's GPUs.
///
/// # Errors
/// [`HardwareError::UnknownGpu`], listing both.
pub fn any_gpu(name: &str) -> Result<&'static GpuSpec, HardwareError> {
    gpu(name).or_else(|err| {
        let wanted = normalize_gpu_name(name);
        gavel_gpus()
            .iter()
            .find(|g| normalize_gpu_name(g.name) == wanted)
            .ok_or(match err {
                HardwareError::UnknownGpu { name, known } => HardwareError::UnknownGpu {
                    name,
                    known: format!(
                        "{known}; to carry traces to: {}",
                        gavel_gpus()
                            .iter()
                            .map(|g| g.name)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                },
                other => other,
            })
    })
}

/// Looks a GPU up by short id, `nvidia-smi` name or alias, ignoring case, an `NVIDIA` prefix,
/// and spaces vs `-` vs `_` (`"H200"`, `"h200-141gb"`, `"A100-SXM4-40GB"`, `"a100"`).
///
/// # Errors
/// [`HardwareError::UnknownGpu`], listing the known GPUs.
pub fn gpu(name: &str) -> Result<&'static GpuSpec, HardwareError> {
    let wanted = normalize_gpu_name(name);
    catalog()
        .iter()
        .find(|spec| {
            spec.names()
                .any(|known| normalize_gpu_name(known) == wanted)
        })
        .ok_or_else(|| HardwareError::UnknownGpu {
            name: name.to_string(),
            known: known_gpus(),
        })
}

/// Lower case, no `nvidia` prefix, runs of spaces/`_`/`-` become one `-`.
fn normalize_gpu_name(name: &str) -> String {
    let lower = name.trim().to_lowercase();
    let without_vendor = lower.strip_prefix("nvidia").unwrap_or(&lower);
    without_vendor
        .split(|c: char| c.is_whitespace() || c == '_' || c == '-')
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join("-")
}

fn known_gpus() -> String {
    let names: Vec<String> = catalog()
        .iter()
        .map(|spec| format!("{} ({})", spec.name, spec.display_name))
        .collect();
    names.join(", ")
}

impl GpuSpec {
    /// The short id, the `nvidia-smi` name and the aliases.
    fn names(&self) -> impl Iterator<Item = &'static str> {
        [self.name, self.display_name]
            .into_iter()
            .chain(self.aliases.iter().copied())
    }

    /// Looks a MIG profile up by name, ignoring case and a `MIG ` prefix (`"MIG 3g.71gb"`).
    ///
    /// # Errors
    /// [`HardwareError::UnknownMigProfile`], listing this GPU's profiles.
    pub fn mig_profile(&self, name: &str) -> Result<&'static MigProfile, HardwareError> {
        let lower = name.trim().to_lowercase();
        let wanted = lower.strip_prefix("mig ").unwrap_or(&lower).trim();
        self.mig_profiles
            .iter()
            .find(|profile| profile.name == wanted)
            .ok_or_else(|| HardwareError::UnknownMigProfile {
                gpu: self.name,
                name: name.trim().to_string(),
                known: self.profile_names().join(", "),
            })
    }

    /// Names of this GPU's MIG profiles, in table order.
    pub fn profile_names(&self) -> Vec<&'static str> {
        self.mig_profiles
            .iter()
            .map(|profile| profile.name)
            .collect()
    }

    /// The share of this GPU's SMs that `profile` gets: `profile.sms / self.sms`. Below
    /// `compute_slices / 7` on A100, whose 7g profile has 98 of 108 SMs.
    pub fn sm_fraction(&self, profile: &MigProfile) -> f64 {
        f64::from(profile.sms) / f64::from(self.sms)
    }

    /// The MPS active-thread percentage that emulates `profile` on this GPU: its share of the
    /// SMs, rounded to the nearest percent (3g.71gb and 4g.71gb of the H200: 45 and 48).
    ///
    /// Emulated MIG (calibrate's mode MigEmulated, predict's `--mode mps --layout`) sets this SM
    /// budget and a pinned memory limit of the slice's memory; it shares memory bandwidth and L2
    /// with the other clients, which real MIG does not.
    pub fn emulated_sm_percent(&self, profile: &MigProfile) -> u32 {
        (profile.sms * 100 + self.sms / 2) / self.sms
    }

    /// SMs an MPS client limited to `fraction` of the GPU's threads
    /// (`CUDA_MPS_ACTIVE_THREAD_PERCENTAGE` / 100) runs on: whole TPCs of two SMs, rounded
    /// down, at least one TPC. Measured on the H200 (132 SMs; the SM count PyTorch reports in
    /// the client, calibrate/data/h200/logs/budget-traces-call1.txt): 12% gives 14 SMs, 24% 30,
    /// 50% 66. Two SMs per TPC holds for every GPU of the catalog (Volta to Hopper).
    pub fn mps_client_sms(&self, fraction: f64) -> u32 {
        let tpcs = f64::from(self.sms / 2);
        // Percentages are whole numbers: the epsilon keeps 50% of 66 TPCs at 33, not 32.999.
        let held = (fraction.clamp(0.0, 1.0) * tpcs + 1e-9).floor().max(1.0);
        // Cast: held is in 1..=tpcs.
        2 * held as u32
    }
}
