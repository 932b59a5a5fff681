//! Kernel traces: the raw files calibrate's `workloads/trace.py` and `colo calibrate trace --cmd`
//! write (one gzip'd JSON per point, format `colo-kernel-trace`), read and reduced to the kernel
//! tables the kernel model replays; and a user's trace folders added to a model without a refit
//! (`colo predict --traces`, `colo pack --traces`, a scenario's `traces`).
use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use crate::hardware::GpuSpec;
use crate::perf::kernel::transfer::Transfer;
use crate::perf::kernel::{
    KernelModel, KernelTables, KernelTrace, TABLES_FORMAT, TABLES_VERSION, host_scale,
};
use serde::Deserialize;
use thiserror::Error;

/// File name ending of a raw trace.
pub const RAW_SUFFIX: &str = ".trace.json.gz";

/// A raw trace could not be read. Each is reported with its file; a folder read skips and
/// counts the bad ones.
#[derive(Debug, Error)]
pub enum TraceError {
    /// The file could not be read or unzipped.
    #[error("{}: cannot read trace: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Not a trace file, or a column is malformed.
    #[error("{}: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

/// One raw trace as `trace.py` writes it (the fields colo reads).
#[derive(Debug, Deserialize)]
pub struct RawTrace {
    /// `colo-kernel-trace`.
    pub format: String,
    /// 1.
    pub version: u32,
    /// `MODEL:BATCH:IMAGE`.
    pub point: String,
    /// Batch size.
    pub batch: u32,
    /// `ok`, `oom` or `error` (only ok traces are written).
    pub status: String,
    /// GPU name as CUDA reports it.
    pub gpu_name: String,
    /// SMs of that GPU.
    pub sm_count: u32,
    /// NVIDIA driver.
    pub driver: Option<String>,
    /// PyTorch version.
    pub torch: String,
    /// CUDA version PyTorch was built with.
    pub cuda: Option<String>,
    /// `fake` from the fake runner (`--fake-gpu`); absent in traces measured by trace.py.
    #[serde(default)]
    pub source: Option<String>,
    /// Unix time the trace was taken (traces of commands, `calibrate trace --cmd`).
    #[serde(default)]
    pub traced_at: Option<f64>,
    /// The recipe the injected tracer saw (traces of commands).
    #[serde(default)]
    pub recipe: Option<serde_json::Value>,
    /// The unprofiled window.
    pub unprofiled: Speed,
    /// The profiled iterations.
    pub profiled: ProfiledSpeed,
    /// PyTorch peak reserved memory, MiB.
    pub peak_reserved_mib: f64,
    /// Kernel names, deduplicated.
    pub names: Vec<String>,
    /// GPU activities, columns.
    pub kernels: RawKernels,
    /// The point's DRAM traffic, when a traffic file sits beside the trace
    /// (`<name>.dram.json.gz` beside `<name>.trace.json.gz`; read by [`read_folder_for`]).
    #[serde(skip)]
    pub traffic: Option<super::dram::DramTraffic>,
}

/// Samples/s over a timed window.
#[derive(Debug, Deserialize)]
pub struct Speed {
    /// Samples per second.
    pub samples_per_s: f64,
}

/// Samples/s over the profiled iterations.
#[derive(Debug, Deserialize)]
pub struct ProfiledSpeed {
    /// Samples per second.
    pub samples_per_s: f64,
    /// Iterations profiled.
    pub n_iterations: u32,
}

/// GPU activities in GPU start order, one entry per column.
#[derive(Clone, Debug, Deserialize)]
pub struct RawKernels {
    /// Index into the names.
    pub name: Vec<u32>,
    /// 0 kernel, 1 memset, 2 memcpy.
    pub kind: Vec<u8>,
    /// GPU start, ns from the trace's first activity (empty in traces without it: no
    /// concurrent kernels are merged).
    #[serde(default)]
    pub start_ns: Vec<i64>,
    /// Duration, ns.
    pub dur_ns: Vec<i64>,
    /// Grid (x, y, z).
    pub grid: Vec<[u32; 3]>,
    /// Block (x, y, z).
    pub block: Vec<[u32; 3]>,
    /// Registers per thread.
    pub regs: Vec<u32>,
    /// Static + dynamic shared memory per block, bytes.
    pub smem: Vec<u32>,
    /// Host launch call start, ns (-1: none correlated).
    pub launch_ns: Vec<i64>,
    /// CUDA stream (empty in traces without it: no concurrent kernels are merged).
    #[serde(default)]
    pub stream: Vec<u32>,
}

impl RawKernels {
    /// The activities with every run of time-overlapping ones (in GPU start order) merged into
    /// one: the replay issues a job's kernels one after another on one stream, but cuDNN runs
    /// some algorithms on side streams (convnext_tiny:128:224's FFT depthwise convolutions: 3,168
    /// kernels an iteration on eight streams, 18% of its GPU time), which replayed one by one
    /// queued behind every co-runner's kernel and made the job far too slow beside others. A
    /// merged entry spans the run on the GPU, holds its members' blocks averaged over that span
    /// (each member's blocks, at most `saturating_blocks(member)`, the grid that fills the GPU,
    /// times its duration, over the span: the SMs they hold on average, since side-stream kernels
    /// leave gaps that co-runners use), is launched with the last member's launch (the host time
    /// of all its launches precedes it) and is named, for its class, after its longest member.
    /// Summing the members' blocks instead (holding the SMs for the whole span) left
    /// launch-bound jobs beside convnext_tiny:128:224 predicted 19-34% too slow; the average took
    /// validate's MPS zoo co-runs from 8.0% to 7.6% (fitted, 129 jobs; launch-bound 16.8% to
    /// 14.7%) and moved no other row by more than 0.1 points.
    /// Only overlaps across streams merge: on one stream Hopper's programmatic dependent launch
    /// lets a kernel start a few microseconds before the one before it ends (seen in every H200
    /// trace), which is the stream's order, not concurrency. One-stream traces come out unchanged.
    pub fn merge_concurrent(&self, saturating_blocks: &dyn Fn(usize) -> u64) -> RawKernels {
        let n = self.dur_ns.len();
        let mut out = RawKernels {
            name: Vec::with_capacity(n),
            kind: Vec::with_capacity(n),
            start_ns: Vec::with_capacity(n),
            dur_ns: Vec::with_capacity(n),
            grid: Vec::with_capacity(n),
            block: Vec::with_capacity(n),
            regs: Vec::with_capacity(n),
            smem: Vec::with_capacity(n),
            launch_ns: Vec::with_capacity(n),
            stream: Vec::with_capacity(n),
        };
        if self.start_ns.len() != n || self.stream.len() != n {
            return self.clone();
        }
        let blocks =
            |i: usize| -> u64 { self.grid[i].iter().map(|&d| u64::from(d.max(1))).product() };
        let mut i = 0;
        while i < n {
            let (start, mut end) = (self.start_ns[i], self.start_ns[i] + self.dur_ns[i].max(0));
            // Block-time of the run: each kernel's blocks (at most what fills the GPU) times its
            // duration, so that the merged entry holds the SMs its members hold on average.
            let held = |j: usize| {
                (blocks(j).min(saturating_blocks(j)) as f64) * self.dur_ns[j].max(0) as f64
            };
            let (mut longest, mut block_time, mut last_launch) = (
                i,
                if self.kind[i] == 0 { held(i) } else { 0.0 },
                self.launch_ns[i],
            );
            let mut kernel_member = self.kind[i] == 0;
            let mut streams_in_run = false;
            let mut j = i + 1;
            while j < n && self.start_ns[j] < end {
                streams_in_run |= self.stream[j] != self.stream[i];
                if !streams_in_run {
                    break;
                }
                end = end.max(self.start_ns[j] + self.dur_ns[j].max(0));
                if self.dur_ns[j] > self.dur_ns[longest] {
                    longest = j;
                }
                if self.kind[j] == 0 {
                    block_time += held(j);
                    kernel_member = true;
                }
                last_launch = last_launch.max(self.launch_ns[j]);
                j += 1;
            }
            let merged = j > i + 1;
            out.name.push(self.name[longest]);
            out.kind.push(if merged && kernel_member {
                0
            } else {
                self.kind[i]
            });
            out.start_ns.push(start);
            out.dur_ns
                .push(if merged { end - start } else { self.dur_ns[i] });
            out.grid.push(if merged {
                let span = (end - start).max(1) as f64;
                [((block_time / span).ceil() as u32).max(1), 1, 1]
            } else {
                self.grid[i]
            });
            out.block.push(self.block[longest]);
            out.regs.push(self.regs[longest]);
            out.smem.push(self.smem[longest]);
            out.launch_ns.push(last_launch);
            out.stream.push(self.stream[i]);
            i = j;
        }
        out
    }
}

/// What one SM holds at once (CUDA occupancy limits of a GPU generation).
#[derive(Clone, Copy, Debug)]
struct SmLimits {
    warps: u32,
    blocks: u32,
    registers: u32,
    shared_bytes: u32,
}

/// Per-SM limits of the GPU's generation (CUDA programming guide, "Compute Capabilities"):
/// Hopper (H100, H200) 228 KiB of shared memory, Ampere A100 164 KiB, Volta V100 96 KiB,
/// Pascal P100 64 KiB, Kepler GK210 112 KiB and 16 blocks.
fn sm_limits(gpu: &GpuSpec) -> SmLimits {
    let (blocks, shared_kib) = match gpu.name {
        n if n.starts_with("a100") => (32, 164),
        "v100" => (32, 96),
        "p100" => (32, 64),
        "k80" => (16, 112),
        _ => (32, 228),
    };
    SmLimits {
        warps: 64,
        blocks,
        registers: 65_536,
        shared_bytes: shared_kib * 1024,
    }
}

/// Blocks of a kernel one SM holds at once, at least 1.
fn resident_blocks(block: [u32; 3], regs: u32, smem: u32, lim: SmLimits) -> u16 {
    let threads = block.iter().map(|&d| d.max(1)).product::<u32>();
    let warps = threads.div_ceil(32).max(1);
    let mut fit = lim.blocks.min(lim.warps / warps);
    if regs > 0 {
        let per_warp = (regs * 32).div_ceil(256) * 256;
        fit = fit.min(lim.registers / (per_warp * warps));
    }
    if smem > 0 {
        fit = fit.min(lim.shared_bytes / (smem + 1024));
    }
    fit.clamp(1, u32::from(u16::MAX)) as u16
}

/// Name fragments of compute-bound kernels (matrix products, convolutions, attention); every
/// other kernel (elementwise, normalisation, reduction, pooling, layout changes, optimizer
/// steps, copies) is taken as bandwidth-bound.
const COMPUTE_BOUND: &[&str] = &[
    "gemm",
    "conv",
    "xmma",
    "fmha",
    "attention",
    "wgrad",
    "dgrad",
    "fprop",
    "winograd",
    "cutlass",
    "nvjet",
    "flash",
    "triton_tem",
];

/// Whether a kernel of this name is bandwidth-bound: its name holds none of the fragments of
/// compute-bound kernels (gemm, conv, xmma, fmha, attention, wgrad, dgrad, fprop, winograd,
/// cutlass; cuBLASLt's Hopper GEMMs `nvjet_*`, flash attention, Inductor's matmul templates
/// `triton_tem_*`).
pub fn is_memory_bound(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    !COMPUTE_BOUND.iter().any(|frag| lower.contains(frag))
}

/// Reads one raw trace file.
pub fn read_raw(path: &Path) -> Result<RawTrace, TraceError> {
    let io = |source| TraceError::Io {
        path: path.to_owned(),
        source,
    };
    let bytes = std::fs::read(path).map_err(io)?;
    parse_raw(&bytes, path)
}

/// Reads one raw trace from the bytes of its `.trace.json.gz` file; `path` names it in errors.
pub fn parse_raw(bytes: &[u8], path: &Path) -> Result<RawTrace, TraceError> {
    let io = |source| TraceError::Io {
        path: path.to_owned(),
        source,
    };
    let mut text = String::new();
    flate2::read::GzDecoder::new(bytes)
        .read_to_string(&mut text)
        .map_err(io)?;
    let raw: RawTrace = serde_json::from_str(&text).map_err(|e| TraceError::Invalid {
        path: path.to_owned(),
        message: format!("not a colo kernel trace: {e}"),
    })?;
    if raw.format != "colo-kernel-trace" || raw.version != 1 {
        return Err(TraceError::Invalid {
            path: path.to_owned(),
            message: format!(
                "format {} version {} is not colo-kernel-trace version 1",
                raw.format, raw.version
            ),
        });
    }
    let k = &raw.kernels;
    let n = k.dur_ns.len();
    let lengths = [
        k.kind.len(),
        k.name.len(),
        k.grid.len(),
        k.block.len(),
        k.regs.len(),
        k.smem.len(),
        k.launch_ns.len(),
    ];
    let names_ok = k.name.iter().all(|&i| (i as usize) < raw.names.len());
    let starts_ok = (k.start_ns.is_empty() || k.start_ns.len() == n)
        && (k.stream.is_empty() || k.stream.len() == n);
    if n == 0 || lengths.iter().any(|&l| l != n) || !names_ok || !starts_ok || raw.status != "ok" {
        return Err(TraceError::Invalid {
            path: path.to_owned(),
            message: "kernel columns must be non-empty, of equal length, from an ok trace".into(),
        });
    }
    Ok(raw)
}

/// Reduces a raw trace to the replay's table: durations, host time between launches (the cycle's
/// first launch gets the median), grid size and blocks per SM. Activities that ran at the same
/// time on the GPU (a job's side streams) become one entry ([`RawKernels::merge_concurrent`]).
pub fn reduce(raw: &RawTrace, gpu: &GpuSpec) -> KernelTrace {
    let mut trace = reduce_with(raw, gpu, None);
    (trace.host_scale, trace.dur_scale) = host_scale(&trace, raw.sm_count.max(1));
    trace
}

/// [`reduce`] of a trace taken on `gpu`; with `transfer`, each entry's duration and blocks per
/// SM are those on the transfer's target GPU, and the host and kernel scales are left at 1.
pub(super) fn reduce_with(
    raw: &RawTrace,
    gpu: &GpuSpec,
    transfer: Option<&super::transfer::Transfer>,
) -> KernelTrace {
    let lim = sm_limits(gpu);
    let sms = u64::from(raw.sm_count.max(1));
    let rk = &raw.kernels;
    let saturating = |i: usize| {
        let name = rk.name.get(i).and_then(|&n| raw.names.get(n as usize));
        if name.is_some_and(|n| is_memory_bound(n)) {
            sms * u64::from(resident_blocks(rk.block[i], rk.regs[i], rk.smem[i], lim))
        } else {
            sms
        }
    };
    let k = &rk.merge_concurrent(&saturating);
    let clamp = |v: i64| v.clamp(0, i64::from(u32::MAX)) as u32;
    let mut host_ns = Vec::with_capacity(k.dur_ns.len());
    let mut last_launch: Option<i64> = None;
    for &launch in &k.launch_ns {
        let delta = match (last_launch, launch >= 0) {
            (Some(prev), true) => clamp(launch - prev),
            _ => 0,
        };
        if launch >= 0 {
            last_launch = Some(last_launch.map_or(launch, |p| p.max(launch)));
        }
        host_ns.push(delta);
    }
    let mut sorted: Vec<u32> = host_ns[1..].to_vec();
    sorted.sort_unstable();
    host_ns[0] = sorted.get(sorted.len() / 2).copied().unwrap_or(0);
    let blocks: Vec<u32> = k
        .grid
        .iter()
        .zip(&k.kind)
        .map(|(g, &kind)| {
            if kind == 0 {
                g.iter().map(|&d| d.max(1)).product()
            } else {
                0
            }
        })
        .collect();
    let resident_on = |lim: SmLimits| -> Vec<u16> {
        (0..k.dur_ns.len())
            .map(|i| resident_blocks(k.block[i], k.regs[i], k.smem[i], lim))
            .collect()
    };
    let resident = resident_on(lim);
    let name_of = |i: usize| raw.names[k.name[i] as usize].as_str();
    let (dur_ns, resident) = match transfer {
        None => (k.dur_ns.iter().map(|&d| clamp(d)).collect(), resident),
        Some(t) => {
            let target = resident_on(sm_limits(t.to));
            let per_launch = raw.traffic.as_ref().map(|t| t.bytes_per_launch());
            let dur = (0..k.dur_ns.len())
                .map(|i| {
                    let bytes = per_launch
                        .as_ref()
                        .and_then(|b| b.get(super::dram::base_name(name_of(i))).copied());
                    let ns = t.kernel_ns_with_bytes(
                        name_of(i),
                        k.kind[i],
                        k.dur_ns[i].max(0) as f64,
                        u64::from(blocks[i]),
                        (resident[i], target[i]),
                        bytes,
                    );
                    ns.round().clamp(0.0, f64::from(u32::MAX)) as u32
                })
                .collect();
            (dur, target)
        }
    };
    KernelTrace {
        point: raw.point.clone(),
        iterations: raw.profiled.n_iterations,
        samples_per_iteration: raw.batch,
        unprofiled_samples_per_s: raw.unprofiled.samples_per_s,
        anchor_samples_per_s: None,
        profiled_samples_per_s: raw.profiled.samples_per_s,
        peak_reserved_mib: raw.peak_reserved_mib,
        host_scale: 1.0,
        dur_scale: 1.0,
        dur_ns,
        host_ns,
        blocks,
        resident,
        memory_bound: (0..k.dur_ns.len())
            .map(|i| u8::from(is_memory_bound(name_of(i))))
            .collect(),
        // Bytes carry to another GPU only where its L2 is the same; a transferred trace has none.
        dram_bytes: match (&raw.traffic, transfer) {
            (Some(traffic), None) => {
                let per_launch = traffic.bytes_per_launch();
                (0..k.dur_ns.len())
                    .map(|i| {
                        let base = super::dram::base_name(name_of(i));
                        per_launch.get(base).copied().unwrap_or(0.0) as f32
                    })
                    .collect()
            }
            _ => Vec::new(),
        },
    }
}

/// Kernel tables of one folder of raw traces, and the files skipped with why.
#[derive(Debug)]
pub struct TracedFolder {
    /// Traces of `gpu`, sorted by point.
    pub tables: KernelTables,
    /// Files that could not be read or are of another GPU, with the reason.
    pub skipped: Vec<(PathBuf, String)>,
    /// Whether any trace read comes from the fake runner (`source: "fake"`).
    pub fake: bool,
    /// Per point read: where and when it was measured, in words.
    pub notes: Vec<(String, String)>,
    /// The files read into `tables`.
    pub used: Vec<PathBuf>,
    /// Files not read: of points not asked about ([`read_folder_wanted`]).
    pub not_read: usize,
    /// Traces of other GPUs carried to `gpu` ([`read_folder_for`] with a CPU factor), for points
    /// with no trace of `gpu` in the folder; `None` when there are none.
    pub transferred: Option<KernelTables>,
}

/// Reads every `*.trace.json.gz` under `dir` whose GPU is `gpu`, the fake runner's included.
/// The last trace of a point (by file name) wins.
pub fn read_folder(dir: &Path, gpu: &'static GpuSpec) -> Result<TracedFolder, TraceError> {
    read_folder_of(dir, gpu, true)
}

/// Like [`read_folder`], but the fake runner's traces are skipped (with why) unless
/// `allow_fake`.
pub fn read_folder_of(
    dir: &Path,
    gpu: &'static GpuSpec,
    allow_fake: bool,
) -> Result<TracedFolder, TraceError> {
    read_folder_wanted(dir, gpu, allow_fake, None)
}

/// The point a trace file is of, read from the first few KiB of its JSON (the writers put
/// `point` among the first fields), without parsing the kernels; `None` when it is not there
/// or the file cannot be read (then the file is read whole, and any error reported).
pub fn peek_point(path: &Path) -> Option<String> {
    const KEY: &str = "\"point\":\"";
    let file = std::fs::File::open(path).ok()?;
    let mut head = Vec::with_capacity(16 << 10);
    flate2::read::GzDecoder::new(file)
        .take(16 << 10)
        .read_to_end(&mut head)
        .ok()?;
    let text = String::from_utf8_lossy(&head);
    let start = text.find(KEY)? + KEY.len();
    let point = &text[start..start + text[start..].find('"')?];
    (!point.contains('\\')).then(|| point.to_owned())
}

/// Like [`read_folder_of`], but with `wanted` only the files of those points (by
/// [`peek_point`]) are read; the others are counted in [`TracedFolder::not_read`]. A user's
/// question about two jobs need not parse every trace in the folder.
pub fn read_folder_wanted(
    dir: &Path,
    gpu: &'static GpuSpec,
    allow_fake: bool,
    wanted: Option<&[String]>,
) -> Result<TracedFolder, TraceError> {
    read_folder_for(dir, gpu, allow_fake, wanted, None)
}

/// The files of `dir` whose names end in `suffix` (`.trace.json.gz`), in name order.
///
/// # Errors
/// The folder cannot be listed.
pub fn files_ending(dir: &Path, suffix: &str) -> Result<Vec<PathBuf>, TraceError> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|source| TraceError::Io {
            path: dir.to_owned(),
            source,
        })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect();
    paths.sort();
    Ok(paths)
}

/// How traces of other GPUs are carried to the one read for ([`read_folder_for`]).
#[derive(Clone, Copy, Debug)]
pub struct Carry<'p> {
    /// Host time on the target's host over the source's.
    pub cpu_factor: f64,
    /// Folder of the traces' DRAM traffic files measured on the source GPU, where not beside
    /// the traces (`None`: beside them).
    pub traffic: Option<&'p Path>,
}

impl Carry<'_> {
    /// Host time times `cpu_factor`; traffic files beside the traces.
    pub fn with_cpu_factor(cpu_factor: f64) -> Self {
        Carry {
            cpu_factor,
            traffic: None,
        }
    }
}

/// Like [`read_folder_wanted`]; with `carry`, a trace taken on another catalog GPU is not
/// skipped but carried to `gpu` ([`Transfer`], host time times its CPU factor, bandwidth-bound
/// kernels by their DRAM bytes where a traffic file was measured) into
/// [`TracedFolder::transferred`], unless the folder also has a trace of its point on `gpu`.
pub fn read_folder_for(
    dir: &Path,
    gpu: &'static GpuSpec,
    allow_fake: bool,
    wanted: Option<&[String]>,
    carry: Option<Carry<'_>>,
) -> Result<TracedFolder, TraceError> {
    let paths = files_ending(dir, RAW_SUFFIX)?;
    let mut by_point: BTreeMap<String, KernelTrace> = BTreeMap::new();
    let mut skipped = Vec::new();
    let mut sources: BTreeMap<String, ()> = BTreeMap::new();
    let mut sm_count = gpu.sms;
    let mut fake = false;
    let mut notes = BTreeMap::new();
    let mut used = Vec::new();
    let mut not_read = 0;
    // Point -> (trace carried to `gpu`, note, file, source GPU).
    let mut carried: BTreeMap<String, (KernelTrace, String, PathBuf, &'static str)> =
        BTreeMap::new();
    for path in paths {
        if let (Some(wanted), Some(point)) = (wanted, peek_point(&path))
            && !wanted.contains(&point)
        {
            not_read += 1;
            continue;
        }
        match read_raw(&path) {
            Ok(raw) if !allow_fake && raw.source.as_deref() == Some("fake") => skipped.push((
                path,
                "from the fake runner (`--fake-gpu`: invented numbers, not measurements); predictions read measured traces only (`colo calibrate fit --allow-fake` alone reads these, to test the pipeline): trace the job on a GPU without --fake-gpu".into(),
            )),
            Ok(mut raw) if crate::hardware::gpu(&raw.gpu_name).map(|g| g.name) != Ok(gpu.name) => {
                match (carry, crate::hardware::gpu(&raw.gpu_name)) {
                    (Some(carry), Ok(from)) => {
                        let cpu_factor = carry.cpu_factor;
                        let traffic = read_traffic_beside(&path, &raw.point, carry.traffic);
                        if let Err(why) = &traffic {
                            skipped.push(why.clone());
                        }
                        raw.traffic = traffic.ok().flatten();
                        let t = Transfer {
                            from,
                            to: gpu,
                            cpu_factor,
                        };
                        let trace = t.trace(&raw);
                        let host = if cpu_factor == 1.0 {
                            String::new()
                        } else {
                            format!(", host time x {cpu_factor} (stated)")
                        };
                        let bytes = if raw.traffic.is_some() {
                            ", bandwidth-bound kernels by their measured DRAM bytes"
                        } else {
                            ""
                        };
                        let mut note = format!(
                            "transferred to {} (datasheet roofline{bytes}{host}, not measured \
                             there: {:.1} samples/s predicted) from a trace {}",
                            gpu.name,
                            trace.unprofiled_samples_per_s,
                            trace_note(&raw, &path)
                        );
                        if let Some(warning) = t.format_warning(&raw) {
                            note.push_str("; warning: ");
                            note.push_str(&warning);
                        }
                        carried.insert(raw.point.clone(), (trace, note, path, from.name));
                    }
                    _ => skipped.push((
                        path,
                        format!("taken on `{}`, not {}", raw.gpu_name, gpu.name),
                    )),
                }
            }
            Ok(mut raw) => {
                let traffic = read_traffic_beside(&path, &raw.point, None);
                if let Err(why) = &traffic {
                    skipped.push(why.clone());
                }
                raw.traffic = traffic.ok().flatten();
                sm_count = raw.sm_count;
                fake |= raw.source.as_deref() == Some("fake");
                sources.insert(
                    format!(
                        "{} (driver {}, torch {}, CUDA {})",
                        raw.gpu_name,
                        raw.driver.as_deref().unwrap_or("?"),
                        raw.torch,
                        raw.cuda.as_deref().unwrap_or("?")
                    ),
                    (),
                );
                let mut note = trace_note(&raw, &path);
                note.push_str(&match &raw.traffic {
                    Some(t) => format!(
                        "; DRAM bytes per kernel measured with Nsight Compute on {}",
                        t.gpu
                    ),
                    None => "; no DRAM traffic measured: the bandwidth stage leaves it out".into(),
                });
                notes.insert(raw.point.clone(), note);
                by_point.insert(raw.point.clone(), reduce(&raw, gpu));
                used.push(path);
            }
            Err(err) => skipped.push((path, err.to_string())),
        }
    }
    carried.retain(|point, _| !by_point.contains_key(point));
    let transferred = (!carried.is_empty()).then(|| {
        let mut from: Vec<&str> = carried.values().map(|c| c.3).collect();
        from.sort_unstable();
        from.dedup();
        let mut traces = Vec::new();
        for (point, (trace, note, path, _)) in std::mem::take(&mut carried) {
            notes.insert(point, note);
            used.push(path);
            traces.push(trace);
        }
        KernelTables {
            format: TABLES_FORMAT.into(),
            version: TABLES_VERSION,
            gpu: gpu.name.to_owned(),
            sm_count: gpu.sms,
            source: format!(
                "transferred: kernel traces taken on {} carried to {} by datasheet roofline \
                 (colo_sim::perf::kernel::transfer; host time x {})",
                from.join(", "),
                gpu.name,
                carry.map_or(1.0, |c| c.cpu_factor)
            ),
            transferred_from: Some(from.join(", ")),
            traces,
        }
    });
    let on = sources.into_keys().collect::<Vec<_>>().join("; ");
    let source = if fake {
        format!(
            "fake: synthetic traces of the fake runner (`--fake-gpu`, invented numbers, not measurements; read with --allow-fake) on {on}"
        )
    } else {
        format!(
            "measured: torch.profiler CUDA-activity traces alone (calibrate/workloads/trace.py) on {on}"
        )
    };
    Ok(TracedFolder {
        tables: KernelTables {
            transferred_from: None,
            format: TABLES_FORMAT.into(),
            version: TABLES_VERSION,
            gpu: gpu.name.to_owned(),
            sm_count,
            source,
            traces: by_point.into_values().collect(),
        },
        skipped,
        fake,
        notes: notes.into_iter().collect(),
        used,
        not_read,
        transferred,
    })
}

/// The DRAM traffic file of the trace at `trace_path` (`NAME.dram.json.gz` beside
/// `NAME.trace.json.gz`, or in `folder`): `Ok(None)` when there is none; an unreadable file, or
/// one of another point, is an error naming the file (reported as a skip: the trace is used
/// without it).
fn read_traffic_beside(
    trace_path: &Path,
    point: &str,
    folder: Option<&Path>,
) -> Result<Option<super::dram::DramTraffic>, (PathBuf, String)> {
    let Some(stem) = trace_path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_suffix(RAW_SUFFIX))
    else {
        return Ok(None);
    };
    let file = format!("{stem}{}", super::dram::DRAM_SUFFIX);
    let path = match folder {
        Some(folder) => folder.join(file),
        None => trace_path.with_file_name(file),
    };
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err((path, format!("cannot read DRAM traffic: {e}"))),
    };
    match super::dram::parse_traffic(&bytes, &path) {
        Ok(t) if t.point == point => Ok(Some(t)),
        Ok(t) => Err((
            path,
            format!(
                "DRAM traffic of `{}` beside the trace of `{point}`: not used (rename it or \
                 measure this point)",
                t.point
            ),
        )),
        Err(e) => Err((path, format!("{e}; the trace is used without DRAM traffic"))),
    }
}

/// A user's trace folder gave nothing to predict with.
#[derive(Debug, Error)]
pub enum TracesError {
    /// The folder could not be read.
    #[error(transparent)]
    Read(#[from] TraceError),
    /// No usable trace of the GPUs asked about in the folder.
    #[error(
        "traces folder {dir}: no usable kernel trace of the {gpus} in it{why}; trace a job there \
         with `colo calibrate trace --cmd \"python train.py ...\" --name NAME --out {dir}` on \
         that GPU"
    )]
    Empty {
        /// The folder.
        dir: String,
        /// The GPUs asked about (`h200`, or `h200 or a100-40gb`).
        gpus: String,
        /// The files skipped, with why.
        why: String,
    },
}

/// Per point added, where and when it was measured; and the files skipped, with why.
pub type AddedTraces = (Vec<(String, String)>, Vec<(PathBuf, String)>);

/// Adds the traces in `dirs` (each a folder of `*.trace.json.gz`, as `colo calibrate trace`
/// writes) of `gpu` to `model`, predicted with the shipped globals; a trace taken on another
/// catalog GPU is carried to `gpu` ([`Transfer`], labelled transferred) unless the folder has
/// one of its point taken on `gpu`. Returns, per point added,
/// where and when it was measured; and the files skipped, with why (to be reported). The
/// fake runner's traces are skipped. With `wanted`, only the files of those points are read
/// (a folder holding only other points is no error: an unknown job's error says how to trace
/// it).
pub fn add_user_traces(
    model: &mut KernelModel,
    dirs: &[PathBuf],
    gpu: &'static GpuSpec,
    wanted: Option<&[String]>,
    cpu_factor: f64,
) -> Result<AddedTraces, TracesError> {
    add_traces_carried(model, dirs, &[gpu], wanted, cpu_factor)
}

/// As [`add_user_traces`], for a model of several GPU types (a scenario's profiles): each
/// folder's traces of any of `gpus` are added, and it must hold at least one. A file is
/// reported skipped only when no GPU of `gpus` could use it.
pub fn add_user_traces_of(
    model: &mut KernelModel,
    dirs: &[PathBuf],
    gpus: &[&'static GpuSpec],
    wanted: Option<&[String]>,
) -> Result<AddedTraces, TracesError> {
    add_traces_carried(model, dirs, gpus, wanted, 1.0)
}

/// As [`add_user_traces_of`], with the host time of traces carried from another GPU times
/// `cpu_factor` (the target host's time over the tracing host's).
fn add_traces_carried(
    model: &mut KernelModel,
    dirs: &[PathBuf],
    gpus: &[&'static GpuSpec],
    wanted: Option<&[String]>,
    cpu_factor: f64,
) -> Result<AddedTraces, TracesError> {
    let (mut notes, mut skipped) = (Vec::new(), Vec::new());
    for dir in dirs {
        let mut used: Vec<PathBuf> = Vec::new();
        let mut skipped_here: BTreeMap<PathBuf, String> = BTreeMap::new();
        let mut not_read = 0;
        for gpu in gpus {
            let folder = read_folder_for(
                dir,
                gpu,
                false,
                wanted,
                Some(Carry::with_cpu_factor(cpu_factor)),
            )?;
            not_read = not_read.max(folder.not_read);
            used.extend(folder.used);
            for (path, why) in folder.skipped {
                skipped_here.entry(path).or_insert(why);
            }
            if !folder.tables.traces.is_empty() {
                model.add_traces(folder.tables);
            }
            if let Some(carried) = folder.transferred {
                model.add_traces(carried);
            }
            notes.extend(folder.notes);
        }
        skipped_here.retain(|path, _| !used.contains(path));
        if used.is_empty() && not_read == 0 {
            let why = skipped_here
                .iter()
                .map(|(p, w)| format!("{}: {w}", p.display()))
                .collect::<Vec<_>>()
                .join("; ");
            return Err(TracesError::Empty {
                dir: dir.display().to_string(),
                gpus: gpus.iter().map(|g| g.name).collect::<Vec<_>>().join(" or "),
                why: if why.is_empty() {
                    String::new()
                } else {
                    format!(" ({why})")
                },
            });
        }
        skipped.extend(skipped_here);
    }
    Ok((notes, skipped))
}

/// Where and when a trace was measured, in words: `measured alone on GPU (uuid) on DATE,
/// unprofiled N samples/s; recipe` (the date where the trace has one).
fn trace_note(raw: &RawTrace, path: &Path) -> String {
    let date = raw
        .traced_at
        .map(|t| format!(" on {}", utc_date(t)))
        .unwrap_or_default();
    let recipe = raw
        .recipe
        .as_ref()
        .map(|r| format!("; recipe: {}", recipe_words(r)))
        .unwrap_or_default();
    let label = if raw.source.as_deref() == Some("fake") {
        "fake (invented, not measured)"
    } else {
        "measured"
    };
    format!(
        "{label} alone on {} (driver {}, torch {}){date}: {:.1} samples/s unprofiled, peak {:.0} \
         MiB reserved{recipe} ({})",
        raw.gpu_name,
        raw.driver.as_deref().unwrap_or("?"),
        raw.torch,
        raw.unprofiled.samples_per_s,
        raw.peak_reserved_mib,
        path.display()
    )
}

/// The recipe in a few words: optimizer, precision, compile, data loader.
pub fn recipe_words(recipe: &serde_json::Value) -> String {
    let text = |key: &str| recipe.get(key).and_then(|v| v.as_str()).map(str::to_owned);
    let mut words = Vec::new();
    if let Some(opt) = text("optimizer") {
        let fused = recipe.get("fused").and_then(|v| v.as_bool()) == Some(true);
        words.push(if fused { format!("{opt}(fused)") } else { opt });
    }
    if let Some(dtype) = text("param_dtype") {
        words.push(format!("params {dtype}"));
    }
    match text("autocast").as_deref() {
        Some("off") | None => {}
        Some(dtype)
            if recipe
                .get("autocast_inside_forward")
                .and_then(|v| v.as_bool())
                == Some(true) =>
        {
            words.push(format!("autocast {dtype} (entered inside forward)"))
        }
        Some(dtype) => words.push(format!("autocast {dtype}")),
    }
    if recipe.get("grad_scaler").and_then(|v| v.as_bool()) == Some(true) {
        words.push("GradScaler".into());
    }
    if recipe.get("compiled").and_then(|v| v.as_bool()) == Some(true) {
        words.push("compiled".into());
    }
    if recipe
        .get("cuda_graph_launches")
        .and_then(|v| v.as_u64())
        .is_some_and(|n| n > 0)
    {
        words.push("CUDA graphs".into());
    }
    if let Some(n) = recipe.get("dataloader_workers").and_then(|v| v.as_u64()) {
        words.push(format!("{n} loader workers"));
    }
    if let Some(cpu) = recipe.get("host_cpu_s_per_step").and_then(|v| v.as_f64()) {
        words.push(format!("{:.0} ms CPU/step", cpu * 1e3));
    }
    if words.is_empty() {
        "-".into()
    } else {
        words.join(", ")
    }
}

/// `YYYY-MM-DD HH:MM UTC` of a unix time (no calendar crate).
pub fn utc_date(unix_s: f64) -> String {
    let secs = unix_s.max(0.0) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (year, month, day) = crate::workload::trace::civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_civil_dates_in_utc() {
        // 2026-12-04 17:38 UTC, as `date -u -d @1796405880` prints it.
        assert_eq!(utc_date(1_796_405_880.0), "2026-12-04 17:38 UTC");
        assert_eq!(utc_date(0.0), "1970-01-01 00:00 UTC");
        // A leap day: 2024-02-29 12:00 UTC.
        assert_eq!(utc_date(1_709_208_000.0), "2024-02-29 12:00 UTC");
    }

    #[test]
    fn hopper_gemms_and_flash_attention_are_compute_bound() {
        // Names from calibrate/data/h200/byo/traces (bf16 programs): 17-34% of their GPU time
        // was taken for bandwidth-bound before these fragments were listed.
        for name in [
            "nvjet_sm90_tst_192x128_64x5_1x2_h_bz_coopB_TNT",
            "nvjet_sm90_hsh_128x192_64x5_2x1_v_bz_coopB_NNN",
            "cudnn_generated_fort_native_sdpa_sm90_flash_bprop_wgmma_f16_knob_3",
            "triton_tem_fused_mm_0",
        ] {
            assert!(!is_memory_bound(name), "{name}");
        }
        for name in [
            "triton_poi_fused__to_copy_20",
            "void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernelTemplate<float>",
            "void cublasLt::splitKreduce_kernel<32, 16, int, float, float>",
        ] {
            assert!(is_memory_bound(name), "{name}");
        }
    }

    #[test]
    fn resident_blocks_follow_the_tightest_limit() {
        let hopper = SmLimits {
            warps: 64,
            blocks: 32,
            registers: 65_536,
            shared_bytes: 233_472,
        };
        // 256 threads, 32 regs: threads allow 8, registers 8.
        assert_eq!(resident_blocks([256, 1, 1], 32, 0, hopper), 8);
        // 128 threads, 128 regs: registers allow 65536 / (4096 * 4) = 4.
        assert_eq!(resident_blocks([128, 1, 1], 128, 0, hopper), 4);
        // 100 KB of shared memory: 2.
        assert_eq!(resident_blocks([128, 1, 1], 32, 100_000, hopper), 2);
        // One thread: the 32-block limit.
        assert_eq!(resident_blocks([1, 1, 1], 16, 0, hopper), 32);
    }

    /// Kernels of 4 blocks each, one per (start, duration, stream).
    fn kernels(spans: &[(i64, i64, u32)]) -> RawKernels {
        let n = spans.len();
        RawKernels {
            name: (0..n as u32).collect(),
            kind: vec![0; n],
            start_ns: spans.iter().map(|s| s.0).collect(),
            dur_ns: spans.iter().map(|s| s.1).collect(),
            grid: vec![[4, 1, 1]; n],
            block: vec![[128, 1, 1]; n],
            regs: vec![32; n],
            smem: vec![0; n],
            launch_ns: (0..n as i64).map(|i| 10 * i).collect(),
            stream: spans.iter().map(|s| s.2).collect(),
        }
    }

    #[test]
    fn kernels_running_together_on_side_streams_become_one() {
        // A main-stream kernel, then a fork onto two side streams (three kernels overlapping),
        // then the main stream again.
        let raw = kernels(&[
            (0, 100, 7),
            (100, 50, 30),
            (110, 80, 31),
            (160, 20, 30),
            (200, 10, 7),
        ]);
        let merged = raw.merge_concurrent(&|_| u64::MAX);
        assert_eq!(merged.dur_ns, vec![100, 90, 10], "the fork spans 100..190");
        assert_eq!(merged.start_ns, vec![0, 100, 200]);
        // 4 blocks for 50 + 80 + 20 ns over a 90 ns span: 6.7 blocks on average.
        assert_eq!(
            merged.grid[1],
            [7, 1, 1],
            "it holds its members' blocks averaged over its span"
        );
        // A member holds at most the blocks that fill the GPU: 2 x 150 ns over 90 ns.
        assert_eq!(raw.merge_concurrent(&|_| 2).grid[1], [4, 1, 1]);
        assert_eq!(merged.name, vec![0, 2, 4], "named after its longest member");
        assert_eq!(
            merged.launch_ns,
            vec![0, 30, 40],
            "launched with its last member"
        );
    }

    #[test]
    fn issue_37_a_merged_run_is_a_kernel_if_any_member_is_and_a_copy_otherwise() {
        // Two entries overlapping on two streams merge into one; kind 0 is a kernel, 1 a copy.
        let with_kinds = |kind: Vec<u8>| {
            let raw = RawKernels {
                kind,
                ..kernels(&[(0, 100, 7), (50, 100, 30)])
            };
            raw.merge_concurrent(&|_| u64::MAX).kind
        };
        assert_eq!(with_kinds(vec![1, 1]), vec![1]);
        assert_eq!(with_kinds(vec![1, 0]), vec![0]);
        assert_eq!(with_kinds(vec![0, 1]), vec![0]);
        assert_eq!(with_kinds(vec![0, 0]), vec![0]);
    }

    #[test]
    fn an_early_start_on_the_same_stream_is_not_concurrency() {
        // Programmatic dependent launch: the next kernel starts 3 ns before this one ends.
        let raw = kernels(&[(0, 100, 7), (97, 50, 7), (150, 10, 7)]);
        assert_eq!(raw.merge_concurrent(&|_| u64::MAX).dur_ns, raw.dur_ns);
        let unknown_streams = RawKernels {
            stream: Vec::new(),
            ..kernels(&[(0, 100, 7), (50, 50, 30)])
        };
        assert_eq!(
            unknown_streams.merge_concurrent(&|_| u64::MAX).dur_ns,
            vec![100, 50]
        );
    }

    /// A `colo-kernel-trace` file's bytes: `point` on `gpu_name` (`source` "fake" or none), two
    /// elementwise kernels of 1 and 3 ms launched 5 ms apart, 2 iterations of batch 8, and the
    /// `kernels` columns given (when not `None`) in place of those.
    fn trace_file(
        point: &str,
        gpu_name: &str,
        source: Option<&str>,
        names: &[&str],
        kernels: Option<serde_json::Value>,
    ) -> Vec<u8> {
        let kernels = kernels.unwrap_or_else(|| {
            serde_json::json!({
                "name": [0, 0], "kind": [0, 0], "dur_ns": [1_000_000, 3_000_000],
                "grid": [[4, 1, 1], [4, 1, 1]], "block": [[128, 1, 1], [128, 1, 1]],
                "regs": [32, 32], "smem": [0, 0], "launch_ns": [0, 5_000_000]
            })
        });
        let mut json = serde_json::json!({
            "format": "colo-kernel-trace", "version": 1, "point": point, "batch": 8,
            "status": "ok", "gpu_name": gpu_name, "sm_count": 4, "torch": "2",
            "unprofiled": {"samples_per_s": 800.0},
            "profiled": {"samples_per_s": 700.0, "n_iterations": 2},
            "peak_reserved_mib": 100.0,
            "names": names,
            "kernels": kernels,
        });
        if let Some(source) = source {
            json["source"] = source.into();
        }
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, json.to_string().as_bytes()).unwrap();
        gz.finish().unwrap()
    }

    fn parse(bytes: &[u8]) -> RawTrace {
        parse_raw(bytes, Path::new("t.trace.json.gz")).unwrap()
    }

    #[test]
    fn issue_37_a_kernel_naming_a_name_past_the_table_is_an_invalid_trace() {
        // Two names (0 and 1): a kernel naming 1 is fine, one naming 2 is past the table.
        let with_names = |first: u32| {
            let kernels = serde_json::json!({
                "name": [first, 0], "kind": [0, 0], "dur_ns": [1_000_000, 3_000_000],
                "grid": [[4, 1, 1], [4, 1, 1]], "block": [[128, 1, 1], [128, 1, 1]],
                "regs": [32, 32], "smem": [0, 0], "launch_ns": [0, 5_000_000]
            });
            let bytes = trace_file(
                "resnet18:8:32",
                "NVIDIA H200",
                None,
                &["a", "b"],
                Some(kernels),
            );
            parse_raw(&bytes, Path::new("t.trace.json.gz"))
        };
        assert!(with_names(1).is_ok());
        let err = with_names(2).unwrap_err();
        assert!(matches!(err, TraceError::Invalid { .. }), "{err}");
    }

    #[test]
    fn issue_37_each_generation_holds_its_own_blocks_and_shared_memory_per_sm() {
        use crate::hardware::{gavel_gpu, gpu};
        let on = |spec: &GpuSpec| {
            let lim = sm_limits(spec);
            // One-thread blocks: the block limit. 40 KiB blocks (41 KiB with the 1 KiB CUDA
            // reserves per block): the shared memory.
            (
                resident_blocks([1, 1, 1], 0, 0, lim),
                resident_blocks([32, 1, 1], 0, 40 * 1024, lim),
            )
        };
        // 228 KiB / 41 KiB = 5.6 on Hopper, 164 / 41 = 4 on the A100s, 96 / 41 = 2.3 on the
        // V100, 64 / 41 = 1.6 on the P100, 112 / 41 = 2.7 and at most 16 blocks on Kepler.
        assert_eq!(on(gpu("h200").unwrap()), (32, 5));
        assert_eq!(on(gpu("h100").unwrap()), (32, 5));
        assert_eq!(on(gpu("a100-40gb").unwrap()), (32, 4));
        assert_eq!(on(gpu("a100-80gb").unwrap()), (32, 4));
        assert_eq!(on(gavel_gpu("v100").unwrap()), (32, 2));
        assert_eq!(on(gavel_gpu("p100").unwrap()), (32, 1));
        assert_eq!(on(gavel_gpu("k80").unwrap()), (16, 2));
    }

    #[test]
    fn issue_37_host_time_is_measured_from_the_last_correlated_launch() {
        // Launches at 0, 1, (none), 6 and 10 us: gaps 1, 0, 5 and 4 us; the first launch gets
        // the median of those four (sorted 0, 1, 4, 5: the upper middle, 4 us).
        let kernels = serde_json::json!({
            "name": [0, 1, 0, 2, 0], "kind": [0, 2, 0, 0, 1],
            "dur_ns": [1_000, 2_000, 3_000, 4_000, 5_000],
            "grid": [[4, 2, 1], [1, 1, 1], [3, 1, 1], [2, 2, 2], [1, 1, 1]],
            "block": vec![[128, 1, 1]; 5], "regs": vec![32; 5], "smem": vec![0; 5],
            "launch_ns": [0, 1_000, -1, 6_000, 10_000]
        });
        let names = ["elementwise_kernel", "Memcpy HtoD", "sm90_xmma_gemm_f32f32"];
        let raw = parse(&trace_file(
            "m:8:224",
            "NVIDIA H200",
            None,
            &names,
            Some(kernels),
        ));
        let t = reduce_with(&raw, crate::hardware::gpu("h200").unwrap(), None);
        assert_eq!(t.host_ns, vec![4_000, 1_000, 0, 5_000, 4_000]);
        assert_eq!(t.dur_ns, vec![1_000, 2_000, 3_000, 4_000, 5_000]);
        // Blocks of kernels only (a copy and a memset hold none).
        assert_eq!(t.blocks, vec![8, 0, 3, 8, 0]);
        assert_eq!(t.memory_bound, vec![1, 1, 1, 0, 1]);
        assert_eq!((t.iterations, t.samples_per_iteration), (2, 8));
    }

    #[test]
    fn issue_37_side_stream_kernels_hold_at_most_the_blocks_that_fill_the_gpu() {
        // On 4 SMs: two elementwise kernels of 100 blocks side by side for 100 ns, then two
        // GEMMs of 100 blocks. A 256-thread, 32-register block: 8 a Hopper SM (64 warps / 8,
        // 65,536 registers / 8,192), so an elementwise kernel holds at most 4 x 8 = 32 blocks,
        // a GEMM (one block fills an SM) 4: the merged entries hold 2 x 32 and 2 x 4.
        let kernels = serde_json::json!({
            "name": [0, 0, 1, 1], "kind": [0, 0, 0, 0],
            "start_ns": [0, 0, 200, 200], "stream": [7, 8, 7, 8],
            "dur_ns": [100, 100, 100, 100],
            "grid": vec![[100, 1, 1]; 4], "block": vec![[256, 1, 1]; 4], "regs": vec![32; 4],
            "smem": vec![0; 4], "launch_ns": [0, 10, 20, 30]
        });
        let names = ["elementwise_kernel", "sm90_xmma_gemm_f32f32"];
        let raw = parse(&trace_file(
            "m:8:224",
            "NVIDIA H200",
            None,
            &names,
            Some(kernels),
        ));
        let t = reduce_with(&raw, crate::hardware::gpu("h200").unwrap(), None);
        assert_eq!(t.blocks, vec![64, 8]);
        assert_eq!(t.dur_ns, vec![100, 100]);
        assert_eq!(t.resident, vec![8, 8]);
    }

    /// A fresh folder under the system's temporary one.
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("colo-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn issue_37_a_folder_read_for_a_gpu_carries_the_points_it_lacks_from_other_gpus() {
        let dir = scratch("read-folder-for");
        let kernel = ["elementwise_kernel"];
        let files = [
            ("a", "m:8:224", "NVIDIA H200", None),
            ("b", "m:8:224", "NVIDIA H100 80GB HBM3", None),
            ("c", "n:8:224", "NVIDIA H100 80GB HBM3", None),
            ("d", "f:8:224", "NVIDIA H200", Some("fake")),
            ("e", "u:8:224", "Unknown GPU 9000", None),
        ];
        for (file, point, gpu_name, source) in files {
            let bytes = trace_file(point, gpu_name, source, &kernel, None);
            std::fs::write(dir.join(format!("{file}{RAW_SUFFIX}")), bytes).unwrap();
        }
        let path = |file: &str| dir.join(format!("{file}{RAW_SUFFIX}"));
        let points =
            |t: &KernelTables| t.traces.iter().map(|t| t.point.clone()).collect::<Vec<_>>();
        let h200 = crate::hardware::gpu("h200").unwrap();

        // The H200's own trace of m; n carried from the H100 (m's H100 trace is not needed);
        // the fake trace and the unknown GPU's skipped.
        let f =
            read_folder_for(&dir, h200, false, None, Some(Carry::with_cpu_factor(1.0))).unwrap();
        assert_eq!(points(&f.tables), ["m:8:224"]);
        assert!(!f.fake);
        assert_eq!(f.not_read, 0);
        assert_eq!(f.used, [path("a"), path("c")]);
        let skipped: Vec<_> = f.skipped.iter().map(|s| s.0.clone()).collect();
        assert_eq!(skipped, [path("d"), path("e")]);
        assert!(f.skipped[0].1.contains("fake runner"), "{}", f.skipped[0].1);
        // The advice names a flag of a command that has it (predict and pack have none).
        assert!(
            f.skipped[0].1.contains("`colo calibrate fit --allow-fake`"),
            "{}",
            f.skipped[0].1
        );
        assert!(
            f.skipped[1].1.contains("taken on `Unknown GPU 9000`"),
            "{}",
            f.skipped[1].1
        );
        let carried = f.transferred.expect("n carried");
        assert_eq!(points(&carried), ["n:8:224"]);
        assert_eq!(carried.transferred_from.as_deref(), Some("h100-80gb"));
        assert_eq!(carried.gpu, "h200");
        // 2 us fixed, the rest at 3,350 / 4,800 GB/s: 698,520.8 and 2,094,354.2 ns.
        assert_eq!(carried.traces[0].dur_ns, vec![698_521, 2_094_354]);

        // Fakes allowed, no transfer: the fake trace read, the other GPUs' skipped.
        let f = read_folder_for(&dir, h200, true, None, None).unwrap();
        assert_eq!(points(&f.tables), ["f:8:224", "m:8:224"]);
        assert!(f.fake);
        assert!(f.transferred.is_none());
        let skipped: Vec<_> = f.skipped.iter().map(|s| s.0.clone()).collect();
        assert_eq!(skipped, [path("b"), path("c"), path("e")]);

        // Only n wanted: the other four files are not read.
        let wanted = ["n:8:224".to_owned()];
        let f = read_folder_for(
            &dir,
            h200,
            false,
            Some(&wanted),
            Some(Carry::with_cpu_factor(1.0)),
        )
        .unwrap();
        assert_eq!(f.not_read, 4);
        assert_eq!(f.used, [path("c")]);
        assert!(f.tables.traces.is_empty());
        assert_eq!(points(&f.transferred.expect("n carried")), ["n:8:224"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn traffic_file(point: &str, kernels: serde_json::Value) -> Vec<u8> {
        let json = serde_json::json!({
            "format": "colo-dram-traffic", "version": 1, "point": point, "gpu": "NVIDIA H200",
            "kernels": kernels,
        });
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, json.to_string().as_bytes()).unwrap();
        gz.finish().unwrap()
    }

    #[test]
    fn issue_32_a_traffic_file_beside_a_trace_gives_its_kernels_bytes_per_launch() {
        let dir = scratch("traffic-beside");
        let names = [
            "void at::native::vectorized_elementwise_kernel<4, F>(int, F)",
            "sm90_xmma_gemm_bf16",
        ];
        let kernels = serde_json::json!({
            "name": [0, 1, 0], "kind": [0, 0, 0], "dur_ns": [1_000, 3_000, 1_000],
            "grid": [[4, 1, 1], [4, 1, 1], [4, 1, 1]],
            "block": [[128, 1, 1], [128, 1, 1], [128, 1, 1]],
            "regs": [32, 32, 32], "smem": [0, 0, 0], "launch_ns": [0, 5_000, 10_000]
        });
        for (file, point) in [("a", "m:8:224"), ("b", "n:8:224"), ("c", "o:8:224")] {
            let trace = trace_file(point, "NVIDIA H200", None, &names, Some(kernels.clone()));
            std::fs::write(dir.join(format!("{file}{RAW_SUFFIX}")), trace).unwrap();
        }
        // Nsight Compute's name differs in namespace; two launches moved 3 + 1 MB: 2 MB each.
        // The GEMM has no measurement: 0.
        let measured = serde_json::json!({
            "void at::vectorized_elementwise_kernel<4, F>(int, F)":
                {"count": 2, "read_bytes": 3e6, "write_bytes": 1e6, "ncu_ns": 900.0}
        });
        std::fs::write(
            dir.join("a.dram.json.gz"),
            traffic_file("m:8:224", measured.clone()),
        )
        .unwrap();
        // b's traffic file is of another point: reported, and b is used without bytes.
        std::fs::write(dir.join("b.dram.json.gz"), traffic_file("z:1:1", measured)).unwrap();
        let h200 = crate::hardware::gpu("h200").unwrap();
        let f = read_folder(&dir, h200).unwrap();
        let by_point = |p: &str| f.tables.traces.iter().find(|t| t.point == p).unwrap();
        assert_eq!(by_point("m:8:224").dram_bytes, [2e6, 0.0, 2e6]);
        assert!(by_point("n:8:224").dram_bytes.is_empty());
        assert!(by_point("o:8:224").dram_bytes.is_empty());
        assert_eq!(f.skipped.len(), 1);
        assert_eq!(f.skipped[0].0, dir.join("b.dram.json.gz"));
        assert!(
            f.skipped[0]
                .1
                .contains("`z:1:1` beside the trace of `n:8:224`")
        );
        let note = &f.notes.iter().find(|n| n.0 == "m:8:224").unwrap().1;
        assert!(note.contains("DRAM bytes per kernel measured"), "{note}");
        let note = &f.notes.iter().find(|n| n.0 == "o:8:224").unwrap().1;
        assert!(note.contains("no DRAM traffic measured"), "{note}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
