//! Measured DRAM traffic per kernel (issue 32, item 1): what `calibrate/workloads/dram_traffic.py`
//! writes from one training iteration under Nsight Compute (`<point>.dram.json.gz`: per kernel
//! name, launches, DRAM bytes read and written, and ncu's kernel time), matched to a kernel
//! trace by the kernel's base name, so each traced kernel gets its achieved bandwidth alone.
//!
//! Names are matched by their base (`vectorized_elementwise_kernel`, `bn_bw_1C11_kernel_new`,
//! `sm90_xmma_fprop_...`): Nsight Compute prints `at::vectorized_elementwise_kernel<...>` where
//! the profiler prints `at::native::vectorized_elementwise_kernel<...>`, and the traffic may be
//! measured on another GPU of the same architecture (an H100 for H200 traces: the same sm_90
//! kernels). Kernels of one base name share its bandwidth (bytes over time of all its launches).
//! A traffic file beside a trace (`NAME.dram.json.gz` beside `NAME.trace.json.gz`) gives the
//! trace's kernels their bytes per launch (`KernelTrace::dram_bytes`), which the replay's
//! bandwidth stage uses; `colo calibrate dram` reports the traffic against the name rule that
//! decides which kernels are bandwidth-bound ([`super::raw::is_memory_bound`]).
use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::raw::{RawTrace, TraceError, files_ending, is_memory_bound};

/// File name ending of a traffic file.
pub const DRAM_SUFFIX: &str = ".dram.json.gz";

/// One kernel name's traffic over the profiled iteration.
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct KernelTraffic {
    /// Launches.
    pub count: u64,
    /// DRAM bytes read, summed over its launches.
    pub read_bytes: f64,
    /// DRAM bytes written.
    pub write_bytes: f64,
    /// Kernel time under Nsight Compute, ns.
    pub ncu_ns: f64,
}

/// One point's traffic file.
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct DramTraffic {
    /// `colo-dram-traffic`.
    pub format: String,
    /// 1.
    pub version: u32,
    /// `MODEL:BATCH:IMAGE`.
    pub point: String,
    /// GPU it was measured on, as `nvidia-smi` names it.
    pub gpu: String,
    /// Per kernel name (as Nsight Compute prints it).
    pub kernels: BTreeMap<String, KernelTraffic>,
}

impl DramTraffic {
    /// (bytes, ns, launches) summed per base name.
    pub fn by_base(&self) -> BTreeMap<&str, (f64, f64, u64)> {
        let mut out: BTreeMap<&str, (f64, f64, u64)> = BTreeMap::new();
        for (name, k) in &self.kernels {
            let entry = out.entry(base_name(name)).or_default();
            entry.0 += k.read_bytes + k.write_bytes;
            entry.1 += k.ncu_ns;
            entry.2 += k.count;
        }
        out
    }
}

impl DramTraffic {
    /// DRAM bytes (read and written) per launch, averaged over the launches of each base name.
    pub fn bytes_per_launch(&self) -> BTreeMap<&str, f64> {
        self.by_base()
            .into_iter()
            .map(|(base, (bytes, _, launches))| (base, bytes / launches.max(1) as f64))
            .collect()
    }
}

/// A kernel's base name: no `void `, no template arguments or parameters, no namespaces.
pub fn base_name(name: &str) -> &str {
    let name = name.trim();
    let name = name.strip_prefix("void ").unwrap_or(name);
    let end = name.find(['<', '(']).unwrap_or(name.len());
    let head = name[..end].trim();
    head.rsplit("::").next().unwrap_or(head).trim()
}

/// Parses a traffic file's bytes (gzip'd JSON); `path` names it in errors.
///
/// # Errors
/// [`TraceError`]: not gzip, not JSON of this format, or a negative or non-finite number.
pub fn parse_traffic(bytes: &[u8], path: &Path) -> Result<DramTraffic, TraceError> {
    let invalid = |message: String| TraceError::Invalid {
        path: path.to_owned(),
        message,
    };
    let mut text = String::new();
    flate2::read::GzDecoder::new(bytes)
        .read_to_string(&mut text)
        .map_err(|source| TraceError::Io {
            path: path.to_owned(),
            source,
        })?;
    let traffic: DramTraffic = serde_json::from_str(&text)
        .map_err(|e| invalid(format!("not a colo DRAM traffic file: {e}")))?;
    if traffic.format != "colo-dram-traffic" || traffic.version != 1 {
        return Err(invalid(format!(
            "format {} version {} is not colo-dram-traffic version 1",
            traffic.format, traffic.version
        )));
    }
    for (name, k) in &traffic.kernels {
        let values = [k.read_bytes, k.write_bytes, k.ncu_ns];
        if values.iter().any(|v| !v.is_finite() || *v < 0.0) {
            return Err(invalid(format!(
                "kernel `{name}`: bytes and time must be finite and not negative"
            )));
        }
    }
    Ok(traffic)
}

/// The traffic files of a folder.
#[derive(Debug, Default)]
pub struct TrafficFolder {
    /// Each point's traffic.
    pub by_point: BTreeMap<String, DramTraffic>,
    /// Files that could not be read, with why.
    pub skipped: Vec<(PathBuf, String)>,
}

/// Every traffic file of `dir`, by point, and the files that could not be read with why.
///
/// # Errors
/// The folder cannot be listed.
pub fn read_traffic_folder(dir: &Path) -> Result<TrafficFolder, TraceError> {
    let paths = files_ending(dir, DRAM_SUFFIX)?;
    let mut folder = TrafficFolder::default();
    for path in paths {
        let read = std::fs::read(&path).map_err(|source| TraceError::Io {
            path: path.clone(),
            source,
        });
        match read.and_then(|bytes| parse_traffic(&bytes, &path)) {
            Ok(t) => {
                folder.by_point.insert(t.point.clone(), t);
            }
            Err(e) => folder.skipped.push((path, e.to_string())),
        }
    }
    Ok(folder)
}

/// A traced point's kernels against their measured traffic.
#[derive(Clone, Debug, PartialEq)]
pub struct PointBandwidth {
    /// `MODEL:BATCH:IMAGE`.
    pub point: String,
    /// Share of the trace's kernel time whose base name has a measurement.
    pub matched_share: f64,
    /// DRAM GB per iteration of the matched kernels (measured bytes per launch times the
    /// trace's launches).
    pub gb_per_iteration: f64,
    /// Share of the matched kernel time that the name rule calls bandwidth-bound.
    pub memory_by_name: f64,
    /// Share of the matched kernel time whose achieved bandwidth alone is at least
    /// `threshold` of the GPU's peak.
    pub memory_by_measure: f64,
    /// Share of the matched kernel time on which the two agree.
    pub agreement: f64,
}

/// Compares `raw`'s kernels with `traffic`: a kernel is bandwidth-bound by measure when its base
/// name's bytes over its ncu time reach `threshold` of `peak_gbs`.
pub fn point_bandwidth(
    raw: &RawTrace,
    traffic: &DramTraffic,
    peak_gbs: f64,
    threshold: f64,
) -> PointBandwidth {
    let by_base = traffic.by_base();
    let (mut total, mut matched, mut bytes) = (0.0, 0.0, 0.0);
    let (mut by_name, mut by_measure, mut agree) = (0.0, 0.0, 0.0);
    let k = &raw.kernels;
    for ((&name, &kind), &dur) in k.name.iter().zip(&k.kind).zip(&k.dur_ns) {
        if kind != 0 {
            continue; // memsets and copies: not kernels Nsight Compute profiles
        }
        let dur = dur.max(0) as f64;
        total += dur;
        let full = raw.names.get(name as usize).map_or("", String::as_str);
        let Some(&(base_bytes, base_ns, launches)) = by_base.get(base_name(full)) else {
            continue;
        };
        matched += dur;
        let per_launch = base_bytes / launches.max(1) as f64;
        bytes += per_launch;
        let achieved_gbs = if base_ns > 0.0 {
            base_bytes / base_ns
        } else {
            0.0
        };
        let measured = achieved_gbs >= threshold * peak_gbs;
        let named = is_memory_bound(full);
        by_name += if named { dur } else { 0.0 };
        by_measure += if measured { dur } else { 0.0 };
        agree += if named == measured { dur } else { 0.0 };
    }
    let iterations = f64::from(raw.profiled.n_iterations.max(1));
    let share = |x: f64, of: f64| if of > 0.0 { x / of } else { 0.0 };
    PointBandwidth {
        point: raw.point.clone(),
        matched_share: share(matched, total),
        gb_per_iteration: bytes / iterations / 1e9,
        memory_by_name: share(by_name, matched),
        memory_by_measure: share(by_measure, matched),
        agreement: share(agree, matched),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_names_drop_namespaces_templates_and_parameters() {
        assert_eq!(
            base_name(
                "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>(int, T2)"
            ),
            "vectorized_elementwise_kernel"
        );
        assert_eq!(
            base_name(
                "void at::vectorized_elementwise_kernel<4, at::CUDAFunctor_add<float>, std::array<char *, 3>>(int, T2"
            ),
            "vectorized_elementwise_kernel"
        );
        assert_eq!(
            base_name("sm90_xmma_fprop_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nchw"),
            "sm90_xmma_fprop_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nchw"
        );
        assert_eq!(base_name("  "), "");
    }

    fn gz(text: &str) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut e, text.as_bytes()).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn bad_traffic_files_are_errors_naming_the_file() {
        let path = Path::new("x.dram.json.gz");
        let err = parse_traffic(b"not gzip", path).unwrap_err().to_string();
        assert!(err.starts_with("x.dram.json.gz"), "{err}");
        let wrong = gz(r#"{"format":"other","version":1,"point":"a:1:1","gpu":"g","kernels":{}}"#);
        assert!(
            parse_traffic(&wrong, path)
                .unwrap_err()
                .to_string()
                .contains("colo-dram-traffic")
        );
        let negative = gz(
            r#"{"format":"colo-dram-traffic","version":1,"point":"a:1:1","gpu":"g","kernels":{"k":{"count":1,"read_bytes":-1,"write_bytes":0,"ncu_ns":5}}}"#,
        );
        assert!(
            parse_traffic(&negative, path)
                .unwrap_err()
                .to_string()
                .contains("kernel `k`")
        );
    }

    #[test]
    fn a_point_is_compared_with_the_name_rule_by_kernel_time() {
        // Per iteration (2 profiled): an elementwise kernel of 300 ns, a GEMM of 600 ns and a
        // layer norm of 100 ns, which has no measurement.
        let trace = super::super::transfer::tests::raw(
            &[
                "void at::native::vectorized_elementwise_kernel<4, F>(int, T)",
                "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n",
                "void at::native::layer_norm_kernel<float>(int)",
            ],
            &[
                (0, 0, 300, 8, 0),
                (1, 0, 600, 8, 0),
                (2, 0, 100, 8, 0),
                (0, 0, 300, 8, 0),
                (1, 0, 600, 8, 0),
                (2, 0, 100, 8, 0),
                (0, 1, 50, 8, 0), // a memset: not a kernel
            ],
            (100.0, 90.0),
        );
        // Measured: the elementwise kernel moves 3 MB in 1,000 ns (3,000 GB/s) over two
        // launches; the GEMM 6 MB in 4,000 ns (1,500 GB/s) in one launch.
        let text = r#"{"format":"colo-dram-traffic","version":1,"point":"m:8:224","gpu":"H100","kernels":{
            "void at::vectorized_elementwise_kernel<4, G>(int, T)":{"count":2,"read_bytes":2000000,"write_bytes":1000000,"ncu_ns":1000},
            "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n":{"count":1,"read_bytes":5000000,"write_bytes":1000000,"ncu_ns":4000}}}"#;
        let traffic = parse_traffic(&gz(text), Path::new("t")).unwrap();
        // Peak 4,000 GB/s, threshold half of it: the elementwise kernel is bandwidth-bound by
        // measure (3,000 >= 2,000), the GEMM not (1,500).
        let b = point_bandwidth(&trace, &traffic, 4_000.0, 0.5);
        assert!((b.matched_share - 1_800.0 / 2_000.0).abs() < 1e-12, "{b:?}");
        // Per iteration: elementwise 1.5 MB a launch, GEMM 6 MB: 7.5 MB.
        assert!((b.gb_per_iteration - 7.5e6 / 1e9).abs() < 1e-15, "{b:?}");
        assert!((b.memory_by_name - 600.0 / 1_800.0).abs() < 1e-12);
        assert!((b.memory_by_measure - 600.0 / 1_800.0).abs() < 1e-12);
        assert!((b.agreement - 1.0).abs() < 1e-12);
        // With a threshold above both, the name rule and the measure disagree on the
        // elementwise kernel's time.
        let strict = point_bandwidth(&trace, &traffic, 4_000.0, 0.9);
        assert!(
            (strict.agreement - 1_200.0 / 1_800.0).abs() < 1e-12,
            "{strict:?}"
        );
    }

    proptest::proptest! {
        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..200)) {
            let _ = parse_traffic(&bytes, Path::new("r"));
            let _ = parse_traffic(&gz(&String::from_utf8_lossy(&bytes)), Path::new("r"));
        }
    }
}
