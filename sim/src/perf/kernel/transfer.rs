//! A kernel trace taken on one GPU, carried to another: each kernel's time on the target from
//! its time on the source, its waves on each GPU's SMs and the two GPUs' datasheet rates (a
//! roofline by kernel class, as Habitat does for compute-bound kernels); host time between
//! launches kept, or scaled by a stated CPU factor. No parameter is fitted to the target: what
//! it gets wrong is measured against traces taken there (`colo calibrate transfer --check`).
//!
//! Per kernel of duration `d` on the source:
//! - a fixed part `min(d, 2 µs)` (launch and drain), scaled by the clock ratio;
//! - the rest, for a compute-bound kernel (GEMM, convolution, attention; number format read
//!   from its name) scaled by its waves on the target over its waves on the source, times the
//!   source's peak per SM over the target's in that format; for a bandwidth-bound kernel
//!   (elementwise, normalisation, reduction, memset) by the source's memory bandwidth over the
//!   target's, or, where the source's DRAM bytes per launch were measured (a traffic file beside
//!   the trace, `dram.rs`), only the share its bytes take at the source's peak bandwidth, the
//!   rest by the clocks ([`Transfer::kernel_ns_with_bytes`]); host-device copies kept (the host
//!   link, not the GPU, sets their time).
//!
//! A kernel in a format the target lacks (TF32 on a V100) is scaled to the target's FP32 peak;
//! the transfer's note warns, because real kernels reach less of a tensor-core peak than of an
//! FP32 one (see [`Transfer::format_warning`]).
//!
//! Not modelled: L2 size (the source's bytes are taken as the target's), achieved against peak
//! bandwidth of small kernels without measured bytes, different kernel
//! choices on the target (cuDNN and cuBLAS pick per GPU), clock throttling under power.
use std::collections::BTreeMap;

use crate::hardware::GpuSpec;

use super::KernelTrace;
use super::raw::{RawTrace, is_memory_bound, reduce_with};
use super::replay::{alone_cycle_s, host_scale};

/// The part of a kernel's time that does not scale with its work: launch and drain, ns.
pub const FIXED_NS: f64 = 2_000.0;

/// What sets a kernel's time, read from its name and activity kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelClass {
    /// Host-device copy (memcpy): the host link sets its time.
    Copy,
    /// Elementwise, normalisation, reduction, memset: memory bandwidth.
    Memory,
    /// FP32 on the CUDA cores (SIMT GEMM, `sgemm`, `ffma`).
    Fp32,
    /// TF32 on tensor cores (cuDNN convolutions in fp32 training by default).
    Tf32,
    /// FP16 on tensor cores.
    Fp16,
    /// BF16 on tensor cores.
    Bf16,
}

impl KernelClass {
    /// The number format's name (`TF32`), or the class's for copies and memory-bound kernels.
    pub fn format_name(self) -> &'static str {
        match self {
            KernelClass::Copy => "copy",
            KernelClass::Memory => "memory-bound",
            KernelClass::Fp32 => "FP32",
            KernelClass::Tf32 => "TF32",
            KernelClass::Fp16 => "FP16",
            KernelClass::Bf16 => "BF16",
        }
    }
}

/// The class of a GPU activity: `kind` 2 (memcpy) is a copy, 1 (memset) and bandwidth-bound
/// names are memory; a compute-bound name's number format from its fragments (`bf16`; `f16`,
/// `fp16`, `h884`, `h1688`, `hmma`; `tf32` or a `tensorop_s1688`-style TF32 tile; `sgemm`, `simt`,
/// `ffma`, `f32`); cuBLASLt's `nvjet` and flash attention (half types only) as BF16; any other
/// compute-bound kernel as FP32, the slowest assumption.
pub fn classify(name: &str, kind: u8) -> KernelClass {
    if kind == 2 {
        return KernelClass::Copy;
    }
    if kind == 1 || is_memory_bound(name) {
        return KernelClass::Memory;
    }
    let lower = name.to_ascii_lowercase();
    let has = |frags: &[&str]| frags.iter().any(|f| lower.contains(f));
    if has(&["bf16"]) {
        KernelClass::Bf16
    } else if has(&["f16", "fp16", "half", "h884", "h1688", "h16816", "hmma"]) {
        KernelClass::Fp16
    } else if has(&["tf32"]) || (lower.contains("tensorop") && has(&["s1688", "s16816", "s884"])) {
        KernelClass::Tf32
    } else if has(&["sgemm", "simt", "ffma", "f32", "float"]) {
        KernelClass::Fp32
    } else if lower.contains("nvjet") || lower.contains("flash") {
        KernelClass::Bf16
    } else {
        KernelClass::Fp32
    }
}

/// Peak TFLOPS of `gpu` for a compute class; formats it lacks run at its FP32 rate.
fn peak_tflops(gpu: &GpuSpec, class: KernelClass) -> f64 {
    let c = &gpu.compute;
    match class {
        KernelClass::Tf32 => c.tf32_tflops,
        KernelClass::Fp16 => c.fp16_tflops,
        KernelClass::Bf16 => c.bf16_tflops,
        _ => None,
    }
    .unwrap_or(c.fp32_tflops)
}

/// Carries traces of `from` to `to`.
#[derive(Clone, Copy, Debug)]
pub struct Transfer {
    /// The GPU the trace was taken on.
    pub from: &'static GpuSpec,
    /// The GPU to predict.
    pub to: &'static GpuSpec,
    /// Host time on the target's host over the source's (1: the same CPU speed).
    pub cpu_factor: f64,
}

impl Transfer {
    /// Duration on the target, ns, of an activity of `kind` named `name` that took `dur_ns` on
    /// the source with `blocks` thread blocks and (source, target) blocks per SM `resident`.
    pub fn kernel_ns(
        &self,
        name: &str,
        kind: u8,
        dur_ns: f64,
        blocks: u64,
        resident: (u16, u16),
    ) -> f64 {
        self.kernel_ns_with_bytes(name, kind, dur_ns, blocks, resident, None)
    }

    /// [`Self::kernel_ns`] of a kernel that moved `dram_bytes` per launch on the source
    /// (Nsight Compute's DRAM bytes read and written). A bandwidth-bound kernel's work then
    /// splits into the time those bytes take at the source's peak bandwidth, which scales with
    /// the bandwidths, and the rest (latency, a grid too small to fill the memory system), which
    /// scales with the clocks: a small elementwise kernel far below the peak keeps its time
    /// where the bandwidth ratio alone would stretch it. Without bytes, all of it scales with the
    /// bandwidths. Compute-bound kernels are unchanged.
    pub fn kernel_ns_with_bytes(
        &self,
        name: &str,
        kind: u8,
        dur_ns: f64,
        blocks: u64,
        resident: (u16, u16),
        dram_bytes: Option<f64>,
    ) -> f64 {
        let class = classify(name, kind);
        if class == KernelClass::Copy {
            return dur_ns;
        }
        let (from, to) = (self.from, self.to);
        let fixed = dur_ns.min(FIXED_NS);
        let work = dur_ns - fixed;
        let clock = from.compute.boost_mhz / to.compute.boost_mhz;
        let fixed_to = fixed * clock;
        let bandwidth = from.memory_bandwidth_gbs / to.memory_bandwidth_gbs;
        let work_to = match class {
            KernelClass::Memory => match dram_bytes {
                // 1 GB/s moves 1 byte a nanosecond.
                Some(bytes) if work > 0.0 && bytes.is_finite() && bytes >= 0.0 => {
                    let at_peak = (bytes / from.memory_bandwidth_gbs / work).min(1.0);
                    work * (at_peak * bandwidth + (1.0 - at_peak) * clock)
                }
                _ => work * bandwidth,
            },
            _ => {
                let waves = |sms: u32, per_sm: u16| {
                    let slots = u64::from(sms.max(1)) * u64::from(per_sm.max(1));
                    blocks.max(1).div_ceil(slots) as f64
                };
                let per_sm = |gpu: &GpuSpec| peak_tflops(gpu, class) / f64::from(gpu.sms.max(1));
                work * (waves(to.sms, resident.1) / waves(from.sms, resident.0))
                    * (per_sm(from) / per_sm(to))
            }
        };
        fixed_to + work_to
    }

    /// A warning when part of `raw`'s kernel time ran in a number format the target lacks (TF32,
    /// FP16 or BF16 on a V100 or older): those kernels are scaled from the source's peak in that
    /// format to the target's FP32 peak, and real kernels reach a smaller share of a tensor-core
    /// peak than of an FP32 one, so their time on the target comes out too long (Gavel's
    /// ResNet-50 on a V100, traced with TF32 on an H100: 2.6x too slow;
    /// `calibrate/data/h100/external/`). `None` when every format carries over.
    pub fn format_warning(&self, raw: &RawTrace) -> Option<String> {
        let lacks = |class: KernelClass| {
            let c = &self.to.compute;
            match class {
                KernelClass::Tf32 => c.tf32_tflops.is_none(),
                KernelClass::Fp16 => c.fp16_tflops.is_none(),
                KernelClass::Bf16 => c.bf16_tflops.is_none(),
                _ => false,
            }
        };
        let (mut total, mut lacking) = (0.0, BTreeMap::<&str, f64>::new());
        for ((&name, &kind), &dur) in raw
            .kernels
            .name
            .iter()
            .zip(&raw.kernels.kind)
            .zip(&raw.kernels.dur_ns)
        {
            let dur = dur.max(0) as f64;
            total += dur;
            let text = raw.names.get(name as usize).map_or("", String::as_str);
            let class = classify(text, kind);
            if lacks(class) {
                *lacking.entry(class.format_name()).or_default() += dur;
            }
        }
        if lacking.is_empty() || total <= 0.0 {
            return None;
        }
        let shares: Vec<String> = lacking
            .iter()
            .map(|(format, ns)| format!("{:.0}% as {format}", 100.0 * ns / total))
            .collect();
        Some(format!(
            "of its kernel time on {}, {} ran in a format {} lacks; those kernels are scaled to its FP32 peak and come out too long (tensor-core kernels reach less of their peak); trace with TF32 off (trace.py --no-tf32) or in a format {} has",
            self.from.name,
            shares.join(" and "),
            self.to.name,
            self.to.name
        ))
    }

    /// The trace `raw` (taken on `self.from`) as the replay's table on `self.to`: kernel times
    /// carried over, the host and kernel scales that reproduce the measured alone speed on the
    /// source kept (host time times the CPU factor), and the alone speeds replaced by the
    /// replay's alone speed on the target (a prediction, labelled transferred by the caller).
    pub fn trace(&self, raw: &RawTrace) -> KernelTrace {
        let source = reduce_with(raw, self.from, None);
        let (host, dur) = host_scale(&source, raw.sm_count.max(1));
        let mut trace = reduce_with(raw, self.from, Some(self));
        trace.host_scale = host * self.cpu_factor;
        trace.dur_scale = dur;
        let samples = f64::from(trace.iterations) * f64::from(trace.samples_per_iteration);
        let cycle = alone_cycle_s(&trace, trace.host_scale, dur, self.to.sms);
        let speed = samples / cycle.max(f64::MIN_POSITIVE);
        let ratio = speed / trace.unprofiled_samples_per_s;
        trace.unprofiled_samples_per_s = speed;
        trace.profiled_samples_per_s *= ratio;
        trace
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::hardware::{gavel_gpu, gpu};

    fn transfer(from: &str, to: &str) -> Transfer {
        let find = |n: &str| gpu(n).ok().or_else(|| gavel_gpu(n)).unwrap();
        Transfer {
            from: find(from),
            to: find(to),
            cpu_factor: 1.0,
        }
    }

    #[test]
    fn classes_from_real_kernel_names() {
        // Names copied from the H200 traces in calibrate/data/h200.
        let cases = [
            (
                "sm90_xmma_wgrad_indexed_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc",
                KernelClass::Tf32,
            ),
            (
                "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_32x3_tn_align4>",
                KernelClass::Tf32,
            ),
            (
                "void cutlass::Kernel2<cutlass_80_simt_sgemm_256x128_8x4_nn_align1>",
                KernelClass::Fp32,
            ),
            (
                "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x8_stage3_warpsize2x2x1_ffma",
                KernelClass::Fp32,
            ),
            (
                "fmha_cutlassB_f32_aligned_64x64_k64_sm80(PyTorchMemEffAttention::AttentionBackwardKernel",
                KernelClass::Fp32,
            ),
            (
                "void cutlass::Kernel2<cutlass_75_tensorop_bf16_s1688gemm_bf16_128x128_tn_align1>",
                KernelClass::Bf16,
            ),
            (
                "nvjet_sm90_tst_192x128_64x5_1x2_h_bz_coopB_TNT",
                KernelClass::Bf16,
            ),
            (
                "void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 128, true, 1>",
                KernelClass::Memory,
            ),
            (
                "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>",
                KernelClass::Memory,
            ),
            (
                "ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_tn",
                KernelClass::Fp16,
            ),
        ];
        for (name, want) in cases {
            assert_eq!(classify(name, 0), want, "{name}");
        }
        assert_eq!(classify("Memcpy HtoD", 2), KernelClass::Copy);
        assert_eq!(classify("Memset", 1), KernelClass::Memory);
    }

    #[test]
    fn measured_bytes_scale_only_their_share_of_a_bandwidth_bound_kernel_by_the_bandwidths() {
        // An elementwise kernel of 50 us (2 us fixed, 48 us of work) moving `bytes` a launch.
        let elementwise = |t: &Transfer, bytes: Option<f64>| {
            t.kernel_ns_with_bytes("elementwise_kernel", 0, 50_000.0, 500, (8, 8), bytes)
        };
        let t = transfer("h200", "h100");
        // 115.2 MB take 24 us at the H200's 4,800 GB/s: half the work scales by 4,800 / 3,350,
        // the other half by the clocks (1,980 / 1,980 MHz).
        let half = elementwise(&t, Some(115.2e6));
        let want = 2_000.0 + 24_000.0 * 4_800.0 / 3_350.0 + 24_000.0;
        assert!((half - want).abs() < 1e-6, "{half} vs {want}");
        // Bytes at or past the peak: all of it by the bandwidths, as without bytes.
        let (full, without) = (elementwise(&t, Some(1e9)), elementwise(&t, None));
        assert!((full - without).abs() < 1e-6, "{full} vs {without}");
        assert!((without - (2_000.0 + 48_000.0 * 4_800.0 / 3_350.0)).abs() < 1e-6);
        // No bytes moved: the clocks only (here the same), so the time is kept.
        let none = elementwise(&t, Some(0.0));
        assert!((none - 50_000.0).abs() < 1e-6, "{none}");
        // A V100 (1,530 MHz, 900 GB/s): a quarter at the peak. 48 us x (0.25 x 4,800 / 900 +
        // 0.75 x 1,980 / 1,530), plus 2 us x 1,980 / 1,530.
        let quarter = elementwise(&transfer("h200", "v100"), Some(57.6e6));
        let clock = 1_980.0 / 1_530.0;
        let want = 2_000.0 * clock + 48_000.0 * (0.25 * 4_800.0 / 900.0 + 0.75 * clock);
        assert!((quarter - want).abs() < 1e-6, "{quarter} vs {want}");
        // Compute-bound kernels ignore bytes.
        let gemm =
            t.kernel_ns_with_bytes("cutlass_80_simt_sgemm", 0, 50_000.0, 500, (1, 1), Some(1e9));
        assert!((gemm - 50_000.0).abs() < 1e-6, "{gemm}");
    }

    #[test]
    fn h200_to_h100_scales_only_bandwidth_bound_time() {
        let t = transfer("h200", "h100");
        // Same SMs, clocks and peaks: a GEMM keeps its time.
        let gemm = t.kernel_ns("cutlass_80_simt_sgemm", 0, 50_000.0, 500, (1, 1));
        assert!((gemm - 50_000.0).abs() < 1e-6, "{gemm}");
        // An elementwise kernel: 2 µs fixed, 48 µs at 4,800 / 3,350 GB/s.
        let add = t.kernel_ns("elementwise_kernel", 0, 50_000.0, 500, (8, 8));
        let want = 2_000.0 + 48_000.0 * 4_800.0 / 3_350.0;
        assert!((add - want).abs() < 1e-6, "{add} vs {want}");
        // A copy is the host link's.
        assert_eq!(t.kernel_ns("Memcpy HtoD", 2, 9_000.0, 0, (1, 1)), 9_000.0);
        // A kernel within the fixed part only moves with the clock (the same here).
        assert_eq!(
            t.kernel_ns("elementwise_kernel", 0, 1_500.0, 4, (8, 8)),
            1_500.0
        );
    }

    #[test]
    fn h200_to_a100_by_waves_and_peak_per_sm() {
        let t = transfer("h200", "a100-40gb");
        // A TF32 convolution of 1,320 blocks, one per SM: 10 waves on 132 SMs, 13 on 108
        // (1,320 / 108 = 12.2). Per SM: 494.5 / 132 on the H200, 156 / 108 on the A100.
        let conv = t.kernel_ns(
            "xmma_fprop_implicit_gemm_tf32f32",
            0,
            102_000.0,
            1_320,
            (1, 1),
        );
        let want = 2_000.0 * 1980.0 / 1410.0
            + 100_000.0 * (13.0 / 10.0) * ((494.5 / 132.0) / (156.0 / 108.0));
        assert!((conv - want).abs() < 1e-6, "{conv} vs {want}");
        // BF16 on a V100 runs at its FP32 rate (no BF16 hardware): 80 SMs, 15.7 TFLOPS.
        let v = transfer("h200", "v100");
        let bf = v.kernel_ns("tensorop_bf16_gemm", 0, 12_000.0, 80, (1, 1));
        let want = 2_000.0 * 1980.0 / 1530.0 + 10_000.0 * ((989.5 / 132.0) / (15.7 / 80.0));
        assert!((bf - want).abs() < 1e-6, "{bf} vs {want}");
    }

    /// A raw trace as `trace.py` writes it, gzip'd and read back: `kernels` as (name, kind,
    /// duration ns, grid x, host launch ns), 128-thread blocks of 32 registers, 2 iterations of
    /// batch 8 at `speeds` (unprofiled, profiled) samples/s.
    /// A trace of an H200 (`m:8:224`, 2 profiled iterations) with `names` and kernels
    /// (name index, kind, duration ns, blocks, launch ns), alone speeds (unprofiled, profiled).
    pub(in crate::perf::kernel) fn raw(
        names: &[&str],
        kernels: &[(u32, u8, i64, u32, i64)],
        speeds: (f64, f64),
    ) -> RawTrace {
        let json = serde_json::json!({
            "format": "colo-kernel-trace", "version": 1, "point": "m:8:224", "batch": 8,
            "status": "ok", "gpu_name": "NVIDIA H200", "sm_count": 132, "torch": "2",
            "unprofiled": {"samples_per_s": speeds.0},
            "profiled": {"samples_per_s": speeds.1, "n_iterations": 2},
            "peak_reserved_mib": 100.0,
            "names": names,
            "kernels": {
                "name": kernels.iter().map(|k| k.0).collect::<Vec<_>>(),
                "kind": kernels.iter().map(|k| k.1).collect::<Vec<_>>(),
                "dur_ns": kernels.iter().map(|k| k.2).collect::<Vec<_>>(),
                "grid": kernels.iter().map(|k| [k.3, 1, 1]).collect::<Vec<_>>(),
                "block": vec![[128, 1, 1]; kernels.len()],
                "regs": vec![32; kernels.len()],
                "smem": vec![0; kernels.len()],
                "launch_ns": kernels.iter().map(|k| k.4).collect::<Vec<_>>(),
            }
        });
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, json.to_string().as_bytes()).unwrap();
        super::super::raw::parse_raw(
            &gz.finish().unwrap(),
            std::path::Path::new("t.trace.json.gz"),
        )
        .unwrap()
    }

    #[test]
    fn a_format_the_target_lacks_is_warned_with_its_share_of_kernel_time() {
        // 300 ns of TF32 and 100 ns of BF16 out of 1,000 ns of kernels (kind 0: kernel).
        let trace = raw(
            &[
                "sm90_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc",
                "ampere_bf16_s16816gemm_bf16_128x128",
                "vectorized_elementwise_kernel",
            ],
            &[(0, 0, 300, 8, 0), (1, 0, 100, 8, 0), (2, 0, 600, 8, 0)],
            (100.0, 90.0),
        );
        let warning = transfer("h200", "v100")
            .format_warning(&trace)
            .expect("V100: no TF32, no BF16");
        assert!(
            warning.starts_with("of its kernel time on h200, 10% as BF16 and 30% as TF32 ran"),
            "{warning}"
        );
        assert!(warning.contains("--no-tf32"), "{warning}");
        // The A100 has both formats, and an FP32-only trace carries to the V100 unwarned.
        assert_eq!(transfer("h200", "a100-40gb").format_warning(&trace), None);
        let fp32 = raw(&["sgemm_128x64_nn"], &[(0, 0, 500, 8, 0)], (100.0, 90.0));
        assert_eq!(transfer("h200", "v100").format_warning(&fp32), None);
    }

    #[test]
    fn issue_37_a_tensor_core_kernel_without_a_tf32_tile_is_not_tf32() {
        // FP64 on tensor cores (`d884`): no format fragment colo knows, so FP32.
        assert_eq!(
            classify(
                "void cutlass::Kernel2<cutlass_80_tensorop_d884gemm_64x32_16x4_nn_align1>",
                0
            ),
            KernelClass::Fp32
        );
    }

    #[test]
    fn issue_37_fp16_and_several_blocks_per_sm_carry_by_their_own_rates_and_waves() {
        let t = transfer("h200", "a100-40gb");
        // An FP16 GEMM of 1,320 blocks, one per SM: 10 waves on 132 SMs, 13 on 108; per SM
        // 989.5 / 132 FP16 TFLOPS on the H200, 312 / 108 on the A100.
        let gemm = t.kernel_ns(
            "ampere_fp16_s16816gemm_fp16_128x128_ldg8",
            0,
            102_000.0,
            1_320,
            (1, 1),
        );
        let want = 2_000.0 * 1980.0 / 1410.0
            + 100_000.0 * (13.0 / 10.0) * ((989.5 / 132.0) / (312.0 / 108.0));
        assert!((gemm - want).abs() < 1e-6, "{gemm} vs {want}");
        // A TF32 convolution of 1,320 blocks, two per SM: 264 at a time on the H200 (5 waves),
        // 216 on the A100 (1,320 / 216 = 6.1: 7 waves).
        let conv = t.kernel_ns(
            "xmma_fprop_implicit_gemm_tf32f32",
            0,
            102_000.0,
            1_320,
            (2, 2),
        );
        let want = 2_000.0 * 1980.0 / 1410.0
            + 100_000.0 * (7.0 / 5.0) * ((494.5 / 132.0) / (156.0 / 108.0));
        assert!((conv - want).abs() < 1e-6, "{conv} vs {want}");
    }

    #[test]
    fn issue_37_a_host_bound_trace_keeps_its_host_time_times_the_cpu_factor() {
        // Two 10 us elementwise kernels launched 100 us apart (the first launch gets the
        // median gap, 100 us): 200 us of host time a cycle under the profiler. Unprofiled,
        // 2 iterations of 8 samples at 160,000/s take 100 us: a host scale of 0.5.
        let trace = raw(
            &["elementwise_kernel"],
            &[(0, 0, 10_000, 4, 0), (0, 0, 10_000, 4, 100_000)],
            (160_000.0, 120_000.0),
        );
        let t = Transfer {
            cpu_factor: 2.0,
            ..transfer("h200", "h100")
        };
        let out = t.trace(&trace);
        // Each kernel: 2 us fixed, 8 us at 4,800 / 3,350 GB/s: 13,462.7 ns.
        assert_eq!(out.dur_ns, vec![13_463, 13_463]);
        assert_eq!(out.host_ns, vec![100_000, 100_000]);
        // A host twice as slow: scale 1, 200 us a cycle (the kernels fit in the gaps), 16
        // samples in 200 us; the profiled speed falls by the same half.
        assert!((out.host_scale - 1.0).abs() < 1e-9, "{}", out.host_scale);
        assert_eq!(out.dur_scale, 1.0);
        let close = |a: f64, b: f64| (a - b).abs() < 1e-6 * b;
        assert!(
            close(out.unprofiled_samples_per_s, 80_000.0),
            "{}",
            out.unprofiled_samples_per_s
        );
        assert!(
            close(out.profiled_samples_per_s, 60_000.0),
            "{}",
            out.profiled_samples_per_s
        );
        assert_eq!((out.iterations, out.samples_per_iteration), (2, 8));
    }

    #[test]
    fn issue_37_a_gpu_bound_trace_runs_at_its_carried_kernel_time() {
        // Two 50 us elementwise kernels 1 us apart: 100 us of kernels a cycle, but 16 samples
        // at 200,000/s take 80 us unprofiled, so the kernels are scaled by 0.8 (no host time).
        let trace = raw(
            &["elementwise_kernel"],
            &[(0, 0, 50_000, 4, 0), (0, 0, 50_000, 4, 1_000)],
            (200_000.0, 180_000.0),
        );
        let out = transfer("h200", "h100").trace(&trace);
        // Each kernel: 2 us fixed, 48 us at 4,800 / 3,350 GB/s: 70,776.1 ns.
        assert_eq!(out.dur_ns, vec![70_776, 70_776]);
        assert_eq!(out.host_scale, 0.0);
        assert!((out.dur_scale - 0.8).abs() < 1e-12, "{}", out.dur_scale);
        let speed = 16.0 / (0.8 * 2.0 * 70_776e-9);
        let close = |a: f64, b: f64| (a - b).abs() < 1e-6 * b;
        assert!(
            close(out.unprofiled_samples_per_s, speed),
            "{} vs {speed}",
            out.unprofiled_samples_per_s
        );
        assert!(
            close(out.profiled_samples_per_s, 180_000.0 * speed / 200_000.0),
            "{}",
            out.profiled_samples_per_s
        );
    }
}
