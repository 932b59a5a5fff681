//! Kernel tables: each job's alone kernel trace, reduced to what the replay needs, as shipped
//! beside a profile (`<gpu>-kernels.json.gz`). Written by `colo calibrate trace`/`fit` from the
//! raw torch.profiler traces in the calibration data; read here.
use std::io::Read as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::workload::ModelKey;

/// Format name written into every kernel-table file.
pub const TABLES_FORMAT: &str = "colo-kernel-tables";
/// Version of the kernel-table format this build reads and writes.
pub const TABLES_VERSION: u32 = 1;

/// A kernel-table file could not be read. Fatal for the model that needs it.
#[derive(Debug, Error)]
pub enum TablesError {
    /// The file could not be read or unzipped.
    #[error("{}: cannot read kernel tables: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The JSON is not a kernel-table file.
    #[error("{}: not a colo kernel-table file: {message}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// What serde said.
        message: String,
    },
    /// Wrong format or version, or inconsistent columns.
    #[error("{}: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong and what to do.
        message: String,
    },
}

/// Every traced point of one GPU type.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelTables {
    /// Always [`TABLES_FORMAT`].
    pub format: String,
    /// [`TABLES_VERSION`].
    pub version: u32,
    /// GPU catalog name, e.g. `h200`.
    pub gpu: String,
    /// SMs of the GPU the traces were taken on.
    pub sm_count: u32,
    /// How the traces were taken (tool, GPU, driver, framework).
    pub source: String,
    /// The GPU the traces were taken on when they were carried to `gpu` by
    /// [`crate::perf::kernel::transfer`] (their speeds are then predictions, not measurements).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transferred_from: Option<String>,
    /// One per traced point.
    pub traces: Vec<KernelTrace>,
}

/// One point's alone trace: a cycle of `iterations` steady training iterations, kernel by kernel,
/// in launch order on its one stream. Columns of equal length.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelTrace {
    /// `MODEL:BATCH:IMAGE`.
    pub point: String,
    /// Training iterations the cycle holds.
    pub iterations: u32,
    /// Samples per iteration (the batch size).
    pub samples_per_iteration: u32,
    /// Samples/s alone without the profiler, measured in the tracing process (measured).
    pub unprofiled_samples_per_s: f64,
    /// Samples/s alone over the profiled iterations (measured; the host runs slower under the
    /// profiler).
    pub profiled_samples_per_s: f64,
    /// Samples/s alone that the host time is scaled to reproduce, when a steadier measurement
    /// than the tracing process's own window exists: the median of the point's alone runs in the
    /// calibration store on the same GPU (measured). `None`: the unprofiled speed is used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anchor_samples_per_s: Option<f64>,
    /// PyTorch's peak reserved memory in the tracing process, MiB (measured).
    pub peak_reserved_mib: f64,
    /// Host-time scale that makes the alone replay reproduce the unprofiled speed (derived).
    pub host_scale: f64,
    /// Kernel-time scale, below 1 only when the profiled kernels alone were slower than the
    /// unprofiled run (derived).
    pub dur_scale: f64,
    /// Each GPU activity's duration alone on the whole GPU, ns (measured).
    pub dur_ns: Vec<u32>,
    /// Host time from the previous launch to this one, ns (measured under the profiler).
    pub host_ns: Vec<u32>,
    /// Thread blocks of the grid (0 for copies and memsets).
    pub blocks: Vec<u32>,
    /// Blocks of this kernel one SM holds at once (from threads, registers and shared memory).
    pub resident: Vec<u16>,
    /// 1 where the kernel is bandwidth-bound (elementwise, normalisation, reduction, copy), 0
    /// where it is compute-bound (GEMM, convolution, attention): classified by kernel name.
    pub memory_bound: Vec<u8>,
    /// DRAM bytes (read and written) per launch of each kernel, measured with Nsight Compute
    /// and matched by the kernel's base name (see [`super::dram`]); 0 where its name had no
    /// measurement. Empty when the point has no traffic file: the replay's bandwidth stage then
    /// leaves its kernels alone (they neither draw nor are throttled).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dram_bytes: Vec<f32>,
}

impl KernelTrace {
    /// The traced point as a key; `None` when `point` is not MODEL:BATCH:IMAGE.
    pub fn key(&self) -> Option<ModelKey> {
        self.point.parse().ok()
    }

    /// The alone speed the replay reproduces: the anchor when there is one, else the unprofiled
    /// speed of the tracing process.
    pub fn alone_samples_per_s(&self) -> f64 {
        self.anchor_samples_per_s
            .unwrap_or(self.unprofiled_samples_per_s)
    }

    /// Kernels in the cycle.
    pub fn len(&self) -> usize {
        self.dur_ns.len()
    }

    /// Whether its kernels' DRAM traffic was measured.
    pub fn has_traffic(&self) -> bool {
        !self.dram_bytes.is_empty()
    }

    /// Whether the cycle holds no kernel.
    pub fn is_empty(&self) -> bool {
        self.dur_ns.is_empty()
    }
}

impl KernelTables {
    /// Reads a gzip'd (or plain) JSON kernel-table file.
    pub fn load(path: &Path) -> Result<Self, TablesError> {
        let bytes = std::fs::read(path).map_err(|source| TablesError::Io {
            path: path.to_owned(),
            source,
        })?;
        Self::from_bytes(&bytes, path)
    }

    /// Parses the bytes of a kernel-table file (gzip'd or plain JSON); `path` names it in errors.
    pub fn from_bytes(bytes: &[u8], path: &Path) -> Result<Self, TablesError> {
        let text = if bytes.starts_with(&[0x1f, 0x8b]) {
            let mut text = String::new();
            flate2::read::GzDecoder::new(bytes)
                .read_to_string(&mut text)
                .map_err(|source| TablesError::Io {
                    path: path.to_owned(),
                    source,
                })?;
            text
        } else {
            String::from_utf8_lossy(bytes).into_owned()
        };
        let tables: KernelTables =
            serde_json::from_str(&text).map_err(|err| TablesError::Parse {
                path: path.to_owned(),
                message: err.to_string(),
            })?;
        tables.validate(path)?;
        Ok(tables)
    }

    /// Checks format, version and column lengths.
    pub fn validate(&self, path: &Path) -> Result<(), TablesError> {
        let invalid = |message: String| TablesError::Invalid {
            path: path.to_owned(),
            message,
        };
        if self.format != TABLES_FORMAT {
            return Err(invalid(format!(
                "format `{}` is not `{TABLES_FORMAT}`",
                self.format
            )));
        }
        if self.version != TABLES_VERSION {
            return Err(invalid(format!(
                "kernel-table version {} is not supported; this colo reads version {TABLES_VERSION}",
                self.version
            )));
        }
        if self.sm_count == 0 {
            return Err(invalid("sm_count is 0".into()));
        }
        for (i, t) in self.traces.iter().enumerate() {
            let n = t.dur_ns.len();
            let lengths = [
                t.host_ns.len(),
                t.blocks.len(),
                t.resident.len(),
                t.memory_bound.len(),
            ];
            if n == 0 || lengths.iter().any(|&l| l != n) {
                return Err(invalid(format!(
                    "traces[{i}] ({}): columns must be non-empty and of equal length",
                    t.point
                )));
            }
            if t.key().is_none() {
                return Err(invalid(format!(
                    "traces[{i}].point `{}` is not MODEL:BATCH:IMAGE",
                    t.point
                )));
            }
            let positive = |v: f64| v.is_finite() && v > 0.0;
            let valid = t.iterations > 0
                && t.samples_per_iteration > 0
                && positive(t.unprofiled_samples_per_s)
                && positive(t.profiled_samples_per_s)
                && t.anchor_samples_per_s.is_none_or(positive)
                && t.host_scale.is_finite()
                && t.host_scale >= 0.0
                && positive(t.dur_scale);
            if !valid {
                return Err(invalid(format!(
                    "traces[{i}] ({}): iterations, samples_per_iteration, the speeds (and the anchor, if any) and dur_scale must be positive, host_scale at least 0",
                    t.point
                )));
            }
            if !t.dram_bytes.is_empty()
                && (t.dram_bytes.len() != n
                    || t.dram_bytes.iter().any(|b| !b.is_finite() || *b < 0.0))
            {
                return Err(invalid(format!(
                    "traces[{i}] ({}): dram_bytes must hold one finite, non-negative value per kernel (or be absent)",
                    t.point
                )));
            }
            if t.dur_ns.iter().all(|&d| d == 0) {
                return Err(invalid(format!(
                    "traces[{i}] ({}): every kernel lasts 0 ns",
                    t.point
                )));
            }
        }
        Ok(())
    }

    /// The trace of `key`, if traced.
    pub fn trace(&self, key: &ModelKey) -> Option<&KernelTrace> {
        let name = key.to_string();
        self.traces.iter().find(|t| t.point == name)
    }
}
