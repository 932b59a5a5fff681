//! The GPU catalog: four data-centre GPUs and their MIG profile tables, and the three GPUs of
//! Gavel's throughput table.
//!
//! Placement starts (`nvidia-smi mig -lgipp`) are the same shape on all four GPUs: 1g at
//! {0..6}, the 1g profile with two memory slices at {0,2,4,6}, 2g at {0,2,4}, 3g at {0,4},
//! 4g and 7g at {0}. Source: NVIDIA MIG user guide, "Getting Started with MIG" (A100
//! `-lgipp` listing) and "Supported MIG Profiles" (same placement diagram for H100/H200).

use super::{ComputeRates, GpuSpec, MigProfile};

const STARTS_1_SLICE: &[u8] = &[0, 1, 2, 3, 4, 5, 6];
const STARTS_2_SLICES: &[u8] = &[0, 2, 4, 6];
const STARTS_2G: &[u8] = &[0, 2, 4];
const STARTS_3G: &[u8] = &[0, 4];
const STARTS_FIRST: &[u8] = &[0];

/// `nvidia-smi` reports memory in MiB; the catalog keeps GiB.
const fn mib_to_gib(mib: f64) -> f64 {
    mib / 1024.0
}

/// One profile row; the table order below is `nvidia-smi mig -lgip` order.
const fn profile(
    name: &'static str,
    (compute_slices, memory_slices): (u8, u8),
    sms: u32,
    memory_gib: f64,
    starts: &'static [u8],
    max_instances: u8,
) -> MigProfile {
    MigProfile {
        name,
        compute_slices,
        memory_slices,
        sms,
        memory_gib,
        starts,
        max_instances,
    }
}

/// A100-SXM4-40GB: `nvidia-smi mig -lgip` as printed in NVIDIA's MIG user guide, section
/// "Getting Started with MIG / List GPU Instance Profiles" (R470+ driver). The 7g profile has
/// 98 SMs, not the card's 108: MIG leaves some SMs unused on A100.
static A100_40GB_PROFILES: [MigProfile; 7] = [
    profile("1g.5gb", (1, 1), 14, 4.75, STARTS_1_SLICE, 7),
    profile("1g.5gb+me", (1, 1), 14, 4.75, STARTS_1_SLICE, 1),
    profile("1g.10gb", (1, 2), 14, 9.62, STARTS_2_SLICES, 4),
    profile("2g.10gb", (2, 2), 28, 9.62, STARTS_2G, 3),
    profile("3g.20gb", (3, 4), 42, 19.50, STARTS_3G, 2),
    profile("4g.20gb", (4, 4), 56, 19.50, STARTS_FIRST, 1),
    profile("7g.40gb", (7, 8), 98, 39.25, STARTS_FIRST, 1),
];

/// A100-SXM4-80GB: `nvidia-smi mig -lgip` on an A100-SXM4-80GB as published in public setup
/// notes; profile names and instance counts match the MIG user guide's "Supported MIG
/// Profiles" A100 table ("for A100-SXM4-80GB the profile names change ... 1g.10gb, ...").
static A100_80GB_PROFILES: [MigProfile; 7] = [
    profile("1g.10gb", (1, 1), 14, 9.50, STARTS_1_SLICE, 7),
    profile("1g.10gb+me", (1, 1), 14, 9.50, STARTS_1_SLICE, 1),
    profile("1g.20gb", (1, 2), 14, 19.50, STARTS_2_SLICES, 4),
    profile("2g.20gb", (2, 2), 28, 19.50, STARTS_2G, 3),
    profile("3g.40gb", (3, 4), 42, 39.25, STARTS_3G, 2),
    profile("4g.40gb", (4, 4), 56, 39.25, STARTS_FIRST, 1),
    profile("7g.80gb", (7, 8), 98, 79.00, STARTS_FIRST, 1),
];

/// H100-SXM5-80GB: `nvidia-smi mig -lgip` on an H100 80GB HBM3 as published in public field
/// notes (jbarrow.ai, "Nvidia MIG"); names, fractions and instance counts agree with the MIG
/// user guide's "Supported MIG Profiles" H100 table.
static H100_80GB_PROFILES: [MigProfile; 7] = [
    profile("1g.10gb", (1, 1), 16, 9.75, STARTS_1_SLICE, 7),
    profile("1g.10gb+me", (1, 1), 16, 9.75, STARTS_1_SLICE, 1),
    profile("1g.20gb", (1, 2), 26, 19.62, STARTS_2_SLICES, 4),
    profile("2g.20gb", (2, 2), 32, 19.62, STARTS_2G, 3),
    profile("3g.40gb", (3, 4), 60, 39.50, STARTS_3G, 2),
    profile("4g.40gb", (4, 4), 64, 39.50, STARTS_FIRST, 1),
    profile("7g.80gb", (7, 8), 132, 79.25, STARTS_FIRST, 1),
];

/// H200: measured. Numbers copied verbatim from `nvidia-smi mig -lgip` on a real H200
/// (driver 580.159.04), kept beside this file as `h200_mig_profiles.txt` (from
/// `../shared/data/hw/h200_mig_profiles.txt`); a unit test checks this table against it.
static H200_PROFILES: [MigProfile; 7] = [
    profile("1g.18gb", (1, 1), 16, 16.00, STARTS_1_SLICE, 7),
    profile("1g.18gb+me", (1, 1), 16, 16.00, STARTS_1_SLICE, 1),
    profile("1g.35gb", (1, 2), 26, 32.50, STARTS_2_SLICES, 4),
    profile("2g.35gb", (2, 2), 32, 32.50, STARTS_2G, 3),
    profile("3g.71gb", (3, 4), 60, 69.75, STARTS_3G, 2),
    profile("4g.71gb", (4, 4), 64, 69.75, STARTS_FIRST, 1),
    profile("7g.141gb", (7, 8), 132, 140.00, STARTS_FIRST, 1),
];

/// A100 (40 and 80 GB): NVIDIA A100 datasheet, dense figures (FP32 19.5, TF32 156, FP16 and
/// BF16 312 TFLOPS); boost clock 1410 MHz and L2 40 MB from the NVIDIA A100 Tensor Core GPU
/// Architecture whitepaper.
const AMPERE_A100: ComputeRates = ComputeRates {
    boost_mhz: 1410.0,
    l2_mib: 40.0,
    fp32_tflops: 19.5,
    tf32_tflops: Some(156.0),
    fp16_tflops: Some(312.0),
    bf16_tflops: Some(312.0),
    source: "NVIDIA A100 datasheet (dense) and A100 architecture whitepaper",
};

/// H100 SXM5 and H200 (the same GH100 compute): NVIDIA H100 and H200 datasheets, dense figures
/// (FP32 67, TF32 494.5, FP16 and BF16 989.5 TFLOPS: half the with-sparsity numbers printed);
/// L2 50 MB (H100 whitepaper); SM clock 1980 MHz as `nvidia-smi` read it on the H200 while
/// training (calibrate/data/h200 store, `sm_clock_mhz`).
const HOPPER_SXM: ComputeRates = ComputeRates {
    boost_mhz: 1980.0,
    l2_mib: 50.0,
    fp32_tflops: 67.0,
    tf32_tflops: Some(494.5),
    fp16_tflops: Some(989.5),
    bf16_tflops: Some(989.5),
    source: "NVIDIA H100/H200 datasheets (dense), H100 whitepaper; SM clock read on the H200",
};

/// The catalog. Memory is the total `nvidia-smi` reports (MiB / 1024); bandwidth and the power
/// limit (the SXM boards' default TDP: A100 400 W, H100 and H200 700 W) are NVIDIA's datasheet
/// figures.
pub(super) static CATALOG: [GpuSpec; 4] = [
    GpuSpec {
        name: "a100-40gb",
        display_name: "NVIDIA A100-SXM4-40GB",
        aliases: &["a100", "a100-sxm4", "a100-40g"],
        sms: 108,
        memory_gib: mib_to_gib(40_960.0),
        memory_bandwidth_gbs: 1555.0,
        mig_profiles: &A100_40GB_PROFILES,
        mig_memory_slices: 8,
        mig_compute_slices: 7,
        source: "NVIDIA MIG user guide (nvidia-smi mig -lgip/-lgipp listing); NVIDIA A100 datasheet",
        power_limit_w: 400.0,
        compute: AMPERE_A100,
    },
    GpuSpec {
        name: "a100-80gb",
        display_name: "NVIDIA A100-SXM4-80GB",
        aliases: &["a100-sxm4-80gb", "a100-80g"],
        sms: 108,
        memory_gib: mib_to_gib(81_920.0),
        memory_bandwidth_gbs: 2039.0,
        mig_profiles: &A100_80GB_PROFILES,
        mig_memory_slices: 8,
        mig_compute_slices: 7,
        source: "published nvidia-smi mig -lgip output; NVIDIA MIG user guide; NVIDIA A100 datasheet",
        power_limit_w: 400.0,
        compute: AMPERE_A100,
    },
    GpuSpec {
        name: "h100-80gb",
        display_name: "NVIDIA H100 80GB HBM3",
        aliases: &[
            "h100",
            "h100-sxm5-80gb",
            "h100-sxm5",
            "h100-sxm",
            "h100-80g",
        ],
        sms: 132,
        memory_gib: mib_to_gib(81_559.0),
        memory_bandwidth_gbs: 3350.0,
        mig_profiles: &H100_80GB_PROFILES,
        mig_memory_slices: 8,
        mig_compute_slices: 7,
        source: "published nvidia-smi mig -lgip output; NVIDIA MIG user guide; NVIDIA H100 datasheet",
        power_limit_w: 700.0,
        compute: HOPPER_SXM,
    },
    GpuSpec {
        name: "h200",
        display_name: "NVIDIA H200",
        aliases: &[
            "h200-141gb",
            "h200-sxm5-141gb",
            "h200-sxm5",
            "h200-sxm",
            "h200-141g",
        ],
        sms: 132,
        memory_gib: mib_to_gib(143_771.0),
        memory_bandwidth_gbs: 4800.0,
        mig_profiles: &H200_PROFILES,
        mig_memory_slices: 8,
        mig_compute_slices: 7,
        source: "measured: nvidia-smi mig -lgip on an H200 (h200_mig_profiles.txt); NVIDIA H200 datasheet",
        power_limit_w: 700.0,
        compute: HOPPER_SXM,
    },
];

/// Gavel's GPUs (no MIG), known only through Gavel's measured throughput table
/// (stanford-futuredata/gavel, MIT). Gavel does not state the board variant: the common 16 GB
/// SXM2 V100, the 16 GB PCIe P100, and one GK210 die of a K80. Only `name` matters to the
/// model fitted to the table (no memory data). Power limits: V100 SXM2 300 W, P100 PCIe 250 W,
/// half a K80's 300 W.
pub(super) static GAVEL: [GpuSpec; 3] = [
    gavel_gpu(
        "v100",
        "NVIDIA Tesla V100-SXM2-16GB (Gavel)",
        80,
        16.0,
        900.0,
        300.0,
        // V100 SXM2 datasheet: FP32 15.7, FP16 tensor 125 TFLOPS, boost 1530 MHz, L2 6 MB; no
        // TF32 or BF16 hardware.
        ComputeRates {
            boost_mhz: 1530.0,
            l2_mib: 6.0,
            fp32_tflops: 15.7,
            tf32_tflops: None,
            fp16_tflops: Some(125.0),
            bf16_tflops: None,
            source: "NVIDIA V100 datasheet (SXM2)",
        },
    ),
    gavel_gpu(
        "p100",
        "NVIDIA Tesla P100-PCIE-16GB (Gavel)",
        56,
        16.0,
        732.0,
        250.0,
        // P100 PCIe datasheet: FP32 9.3, FP16 18.7 TFLOPS (no tensor cores), boost 1303 MHz,
        // L2 4 MB.
        ComputeRates {
            boost_mhz: 1303.0,
            l2_mib: 4.0,
            fp32_tflops: 9.3,
            tf32_tflops: None,
            fp16_tflops: Some(18.7),
            bf16_tflops: None,
            source: "NVIDIA P100 datasheet (PCIe)",
        },
    ),
    gavel_gpu(
        "k80",
        "NVIDIA Tesla K80, one GK210 (Gavel)",
        13,
        12.0,
        240.0,
        150.0,
        // K80 datasheet: 8.73 TFLOPS FP32 at boost for the board's two GK210s, so half each;
        // boost 875 MHz; L2 1.5 MB per GK210 (Kepler GK210 documentation).
        ComputeRates {
            boost_mhz: 875.0,
            l2_mib: 1.5,
            fp32_tflops: 4.365,
            tf32_tflops: None,
            fp16_tflops: None,
            bf16_tflops: None,
            source: "NVIDIA K80 datasheet (one of two GK210)",
        },
    ),
];

const fn gavel_gpu(
    name: &'static str,
    display_name: &'static str,
    sms: u32,
    memory_gib: f64,
    bandwidth: f64,
    power_limit_w: f64,
    compute: ComputeRates,
) -> GpuSpec {
    GpuSpec {
        name,
        display_name,
        aliases: &[],
        sms,
        memory_gib,
        memory_bandwidth_gbs: bandwidth,
        mig_profiles: &[],
        mig_memory_slices: 0,
        mig_compute_slices: 0,
        source: "vendor datasheet; throughput from Gavel's measured table (stanford-futuredata/gavel, MIT)",
        power_limit_w,
        compute,
    }
}
