//! Kernel traces of calibration points: runs a runner's tracer over points and keeps the
//! traces folder's index, the link from store records to their traces.
//!
//! A traces folder (`colo calibrate trace --out DIR`, or `OUT/traces/` of a plan run) holds one
//! `<model>_<batch>_<image>.trace.json.gz` per point ([`crate::trace`] reads them) and
//! `index.jsonl`: one JSON line ([`IndexEntry`]) per point the tracer was run on, appended and
//! synced to the disk as each point finishes, never rewritten. A store record is linked to its
//! trace by its point and GPU UUID ([`trace_for`]). Points whose file exists are skipped and add
//! no line, unless the index has no ok line for the file (a run stopped between writing the file
//! and its line): that line is then written from the file, its `error` saying so.
use std::fmt::Write as _;
use std::fs::OpenOptions;
use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::runner::{RunError, Runner, TraceJob, TraceReport, TraceStatus, trace_file_name};
use colo_sim::workload::ModelKey;

/// Folder of a plan run's traces, under the store folder.
pub const TRACES_DIR: &str = "traces";

/// Name of the index in a traces folder.
pub const INDEX_FILE: &str = "index.jsonl";

/// One line of a traces folder's `index.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexEntry {
    /// `MODEL:BATCH:IMAGE`.
    pub point: String,
    /// Outcome (never `skipped`: skipped points add no line).
    pub status: TraceStatus,
    /// Trace file name, relative to the index's folder (status ok).
    #[serde(default)]
    pub file: Option<String>,
    /// `measured` (GPU) or `fake` (`--fake-gpu`), as in store records.
    pub source: String,
    /// GPU product name, as in store records.
    pub gpu_name: String,
    /// Driver version, as in store records.
    pub driver: String,
    /// GPU UUID, as in store records (the link key with the point).
    pub gpu_uuid: String,
    /// PyTorch version, from the trace file.
    #[serde(default)]
    pub torch: Option<String>,
    /// Samples/s over the unprofiled window.
    #[serde(default)]
    pub unprofiled_samples_per_s: Option<f64>,
    /// Samples/s over the profiled iterations.
    #[serde(default)]
    pub profiled_samples_per_s: Option<f64>,
    /// GPU activities in the trace.
    #[serde(default)]
    pub n_kernels: Option<u64>,
    /// Seconds the tracer spent on the point.
    #[serde(default)]
    pub trace_s: Option<f64>,
    /// Plan that asked for the trace (`colo calibrate run`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<String>,
    /// Group that asked for the trace, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// What went wrong, or why the written file could not be read back.
    #[serde(default)]
    pub error: Option<String>,
    /// Unix time the line was written, seconds.
    pub t: f64,
}

/// The plan and group a trace step belongs to (written into the index).
#[derive(Debug, Clone, Copy)]
pub struct Origin<'a> {
    /// Plan name.
    pub plan: &'a str,
    /// Group id.
    pub group: &'a str,
}

/// What a trace step did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Traced {
    /// One report per point reached, in order (distinct points; skipped ones included).
    pub reports: Vec<TraceReport>,
    /// Distinct points not reached before the deadline (no report, no file).
    pub unfinished: usize,
    /// The index file.
    pub index: PathBuf,
    /// `(line number, message)` of the index's unreadable lines (skipped), e.g. a line cut
    /// short by a kill or a full disk.
    pub skipped_index_lines: Vec<(usize, String)>,
}

impl Traced {
    /// One warning per unreadable index line: `INDEX:LINE: ...`.
    pub fn warnings(&self) -> Vec<String> {
        self.skipped_index_lines
            .iter()
            .map(|(line, why)| {
                format!(
                    "{}:{line}: unreadable index line skipped: {why}",
                    self.index.display()
                )
            })
            .collect()
    }

    /// Reports of this status.
    pub fn count(&self, status: TraceStatus) -> usize {
        self.reports.iter().filter(|r| r.status == status).count()
    }

    /// Reports of points left without a trace file.
    pub fn failed(&self) -> usize {
        self.reports.iter().filter(|r| r.status.failed()).count()
    }
}

/// Points, each once, in first-seen order.
pub fn distinct(points: &[ModelKey]) -> Vec<ModelKey> {
    let mut out: Vec<ModelKey> = Vec::with_capacity(points.len());
    for point in points {
        if !out.contains(point) {
            out.push(point.clone());
        }
    }
    out
}

/// Traces the job's points (made distinct) with the runner into `job.out_dir`: points whose file
/// exists are reported `skipped` without starting the tracer; the others run in one tracer
/// process, and each outcome is appended to `out_dir/index.jsonl` as it arrives. `on_report` sees
/// every report, in order.
pub fn trace_points(
    runner: &mut dyn Runner,
    job: &TraceJob<'_>,
    origin: Option<Origin<'_>>,
    on_report: &mut dyn FnMut(&TraceReport),
) -> Result<Traced, RunError> {
    let points = distinct(job.points);
    let index_path = job.out_dir.join(INDEX_FILE);
    let mut traced = Traced {
        index: index_path.clone(),
        ..Traced::default()
    };
    let mut to_trace = Vec::new();
    let mut unindexed = Vec::new();
    let loaded = load_index(job.out_dir)?;
    traced.skipped_index_lines = loaded.skipped;
    let indexed: std::collections::BTreeSet<String> = loaded
        .entries
        .into_iter()
        .filter(|e| e.status == TraceStatus::Ok)
        .filter_map(|e| e.file)
        .collect();
    for point in &points {
        let file = job.out_dir.join(trace_file_name(point));
        if file.is_file() {
            if !indexed.contains(&trace_file_name(point)) {
                unindexed.push((point.clone(), file.clone()));
            }
            let report = TraceReport::skipped(point, file);
            on_report(&report);
            traced.reports.push(report);
        } else {
            to_trace.push(point.clone());
        }
    }
    if !unindexed.is_empty() {
        let mut index = Index::open(&index_path)?;
        let gpu = runner.gpu().clone();
        for (point, file) in &unindexed {
            index.append(&resumed_entry(
                point,
                file,
                origin,
                &gpu,
                runner.source().label(),
            ))?;
        }
    }
    if !to_trace.is_empty() {
        std::fs::create_dir_all(job.out_dir).map_err(|source| RunError::Io {
            path: job.out_dir.to_path_buf(),
            source,
        })?;
        let mut index = Index::open(&index_path)?;
        let gpu = runner.gpu().clone();
        let source = runner.source().label();
        let sub_job = TraceJob {
            points: &to_trace,
            ..job.clone()
        };
        runner.trace(&sub_job, &mut |report| {
            if report.status != TraceStatus::Skipped {
                let mut entry = index_entry(&report, origin, &gpu, source);
                entry.t = crate::gpu::unix_now();
                index.append(&entry)?;
            }
            on_report(&report);
            traced.reports.push(report);
            Ok(())
        })?;
    }
    traced.unfinished = points.len() - traced.reports.len();
    // Back in the points' order (skipped points were reported first).
    traced
        .reports
        .sort_by_key(|r| points.iter().position(|p| *p == r.point));
    Ok(traced)
}

/// What an index line takes from a trace file beyond [`crate::trace::RawTrace`].
#[derive(Deserialize)]
struct TraceIdentity {
    #[serde(default)]
    gpu_uuid: Option<String>,
}

/// The index line of a trace file that has none, read from the file: its GPU (this runner's
/// where the file does not say), torch and speeds; `error` says it was indexed on resume (and
/// why the file cannot be read, if it cannot).
fn resumed_entry(
    point: &ModelKey,
    file: &Path,
    origin: Option<Origin<'_>>,
    gpu: &crate::gpu::GpuInfo,
    source: &str,
) -> IndexEntry {
    let note = "indexed on resume: the trace file had no index line (a run stopped between \
                writing the file and its line); this line is read from the file";
    let report = TraceReport::skipped(point, file.to_path_buf());
    let mut entry = index_entry(&report, origin, gpu, source);
    entry.status = TraceStatus::Ok;
    entry.t = crate::gpu::unix_now();
    let bytes = std::fs::read(file);
    let raw = bytes
        .as_ref()
        .map_err(ToString::to_string)
        .and_then(|b| crate::trace::parse_raw(b, file).map_err(|e| e.to_string()));
    match raw {
        Ok(raw) => {
            let identity = bytes.ok().and_then(|b| {
                let mut text = Vec::new();
                std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&b[..]), &mut text)
                    .ok()?;
                serde_json::from_slice::<TraceIdentity>(&text).ok()
            });
            if let Some(uuid) = identity.and_then(|i| i.gpu_uuid) {
                entry.gpu_uuid = uuid;
            }
            entry.gpu_name = raw.gpu_name;
            entry.driver = raw.driver.unwrap_or(entry.driver);
            entry.source = raw.source.unwrap_or(entry.source);
            entry.unprofiled_samples_per_s = Some(raw.unprofiled.samples_per_s);
            entry.profiled_samples_per_s = Some(raw.profiled.samples_per_s);
            entry.n_kernels = Some(raw.kernels.name.len() as u64);
            entry.error = Some(note.to_string());
        }
        Err(why) => entry.error = Some(format!("{note}; trace written but unreadable: {why}")),
    }
    entry
}

/// The index line of one report; an ok trace that colo cannot read back says why in `error`.
fn index_entry(
    report: &TraceReport,
    origin: Option<Origin<'_>>,
    gpu: &crate::gpu::GpuInfo,
    source: &str,
) -> IndexEntry {
    let read_back = report.file.as_deref().map(crate::trace::read_raw);
    let (torch, read_error) = match read_back {
        Some(Ok(raw)) => (Some(raw.torch), None),
        Some(Err(err)) => (None, Some(format!("trace written but unreadable: {err}"))),
        None => (None, None),
    };
    IndexEntry {
        point: report.point.to_string(),
        status: report.status,
        file: report
            .file
            .as_deref()
            .and_then(Path::file_name)
            .map(|n| n.to_string_lossy().into_owned()),
        source: source.to_string(),
        gpu_name: gpu.name.clone(),
        driver: gpu.driver.clone(),
        gpu_uuid: gpu.uuid.clone(),
        torch,
        unprofiled_samples_per_s: report.unprofiled_samples_per_s,
        profiled_samples_per_s: report.profiled_samples_per_s,
        n_kernels: report.n_kernels,
        trace_s: report.trace_s,
        plan: origin.map(|o| o.plan.to_string()),
        group: origin.map(|o| o.group.to_string()),
        error: report.error.clone().or(read_error),
        t: 0.0,
    }
}

/// Appends index lines, one write, flush and sync each. An index whose last line was cut short
/// (a kill or a full disk mid-write) gets a newline first, so the next line starts on its own and
/// the torn line stays one unreadable line, reported ([`Traced::warnings`]).
pub(crate) struct Index {
    path: PathBuf,
    file: std::fs::File,
}

impl Index {
    pub(crate) fn open(path: &Path) -> Result<Index, RunError> {
        let io = |source| RunError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut file = OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .open(path)
            .map_err(io)?;
        if !crate::store::ends_with_newline(&mut file).map_err(io)? {
            file.write_all(b"\n").map_err(io)?;
        }
        Ok(Index {
            path: path.to_path_buf(),
            file,
        })
    }

    pub(crate) fn append(&mut self, entry: &IndexEntry) -> Result<(), RunError> {
        let io = |source| RunError::Io {
            path: self.path.clone(),
            source,
        };
        let mut line = serde_json::to_vec(entry)
            .map_err(std::io::Error::from)
            .map_err(io)?;
        line.push(b'\n');
        self.file
            .write_all(&line)
            .and_then(|()| self.file.flush())
            .and_then(|()| self.file.sync_data())
            .map_err(io)
    }
}

/// Lines of a traces folder's index.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoadedIndex {
    /// Lines in file order.
    pub entries: Vec<IndexEntry>,
    /// `(line number, message)` of unreadable lines (skipped).
    pub skipped: Vec<(usize, String)>,
}

/// Reads a traces folder's `index.jsonl`; a missing index is empty.
pub fn load_index(dir: &Path) -> Result<LoadedIndex, RunError> {
    let path = dir.join(INDEX_FILE);
    let io = |source| RunError::Io {
        path: path.clone(),
        source,
    };
    let file = match std::fs::File::open(&path) {
        Ok(file) => file,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Default::default()),
        Err(err) => return Err(io(err)),
    };
    let mut loaded = LoadedIndex::default();
    for (idx, line) in BufReader::new(file).split(b'\n').enumerate() {
        let line = line.map_err(io)?;
        let Ok(line) = String::from_utf8(line) else {
            loaded.skipped.push((idx + 1, "not UTF-8".into()));
            continue;
        };
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<IndexEntry>(&line) {
            Ok(entry) => loaded.entries.push(entry),
            Err(err) => loaded.skipped.push((idx + 1, err.to_string())),
        }
    }
    Ok(loaded)
}

/// The trace of a store record's point: the latest ok index line of that point taken on the
/// GPU with this UUID, else the latest ok one on any GPU.
pub fn trace_for<'a>(
    entries: &'a [IndexEntry],
    point: &str,
    gpu_uuid: &str,
) -> Option<&'a IndexEntry> {
    let ok = || {
        entries
            .iter()
            .rev()
            .filter(move |e| e.status == TraceStatus::Ok && e.point == point && e.file.is_some())
    };
    ok().find(|e| e.gpu_uuid == gpu_uuid)
        .or_else(|| ok().next())
}

/// The table `colo calibrate trace` prints: point, status, kernels, unprofiled samples/s,
/// seconds ("-" where the tracer said nothing).
pub fn outcome_table(reports: &[TraceReport], source: &str) -> String {
    let width = reports
        .iter()
        .map(|r| r.point.to_string().len())
        .max()
        .unwrap_or(5)
        .max(5);
    let mut out = format!(
        "{source}: kernel traces alone (unprofiled samples/s over the tracer's window)\n{:<width$} {:<8} {:>8} {:>12} {:>8}\n",
        "point", "status", "kernels", "samples/s", "seconds"
    );
    let or_dash = |v: Option<String>| v.unwrap_or_else(|| "-".into());
    for r in reports {
        let _ = writeln!(
            out,
            "{:<width$} {:<8} {:>8} {:>12} {:>8}",
            r.point.to_string(),
            r.status.label(),
            or_dash(r.n_kernels.map(|n| n.to_string())),
            or_dash(r.unprofiled_samples_per_s.map(|v| format!("{v:.1}"))),
            or_dash(r.trace_s.map(|v| format!("{v:.1}"))),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::{FakeRunner, TraceSettings};

    fn points(texts: &[&str]) -> Vec<ModelKey> {
        texts
            .iter()
            .map(|t| crate::plan::parse_point(t).expect("point"))
            .collect()
    }

    fn trace(dir: &Path, texts: &[&str]) -> Traced {
        let points = points(texts);
        let job = TraceJob {
            points: &points,
            out_dir: dir,
            settings: TraceSettings::default(),
            deadline: None,
        };
        let origin = Origin {
            plan: "p",
            group: "alone",
        };
        trace_points(&mut FakeRunner::new(), &job, Some(origin), &mut |_| {}).expect("fake traces")
    }

    #[test]
    fn outcomes_read_as_one_line_each_and_a_table() {
        let point = &points(&["resnet18:128:32"])[0];
        let failed = TraceReport::failure(point, TraceStatus::Oom, "CUDA out of memory");
        assert_eq!(failed.line(), "resnet18:128:32 oom: CUDA out of memory");
        let traced = TraceReport {
            status: TraceStatus::Ok,
            error: None,
            n_kernels: Some(1200),
            unprofiled_samples_per_s: Some(5000.04),
            trace_s: Some(12.34),
            ..failed.clone()
        };
        assert_eq!(
            traced.line(),
            "resnet18:128:32 ok, 1200 kernels, 5000.0 samples/s unprofiled, 12.3 s"
        );
        let table = outcome_table(&[traced, failed], "fake");
        let lines: Vec<&str> = table.lines().collect();
        assert!(lines[0].starts_with("fake: kernel traces alone"));
        assert_eq!(lines.len(), 4);
        assert!(
            lines[3].ends_with("oom             -            -        -"),
            "{table}"
        );
    }

    #[test]
    fn fake_traces_are_written_indexed_and_read_back() {
        let dir = tempfile::tempdir().expect("temp dir");
        let traced = trace(
            dir.path(),
            &[
                "resnet18:128:32",
                "oom:8:32",
                "resnet50:64:224",
                "resnet18:128:32",
            ],
        );
        let status: Vec<(String, TraceStatus)> = traced
            .reports
            .iter()
            .map(|r| (r.point.to_string(), r.status))
            .collect();
        assert_eq!(
            status,
            vec![
                ("resnet18:128:32".into(), TraceStatus::Ok),
                ("oom:8:32".into(), TraceStatus::Oom),
                ("resnet50:64:224".into(), TraceStatus::Ok),
            ]
        );
        assert_eq!((traced.failed(), traced.unfinished), (1, 0));
        let raw = crate::trace::read_raw(&dir.path().join("resnet50_64_224.trace.json.gz"))
            .expect("valid trace");
        assert_eq!(
            (raw.point.as_str(), raw.batch, raw.torch.as_str()),
            ("resnet50:64:224", 64, "fake")
        );
        let h200 = colo_sim::hardware::gpu("h200").expect("h200");
        let folder = crate::trace::read_folder(dir.path(), h200).expect("folder");
        assert!(folder.skipped.is_empty(), "{:?}", folder.skipped);
        let traced_points: Vec<&str> = folder
            .tables
            .traces
            .iter()
            .map(|t| t.point.as_str())
            .collect();
        assert_eq!(traced_points, vec!["resnet18:128:32", "resnet50:64:224"]);
        let LoadedIndex { entries, skipped } = load_index(dir.path()).expect("index");
        assert!(skipped.is_empty());
        assert_eq!(entries.len(), 3);
        let ok = &entries[0];
        assert_eq!(ok.file.as_deref(), Some("resnet18_128_32.trace.json.gz"));
        assert_eq!(
            (ok.source.as_str(), ok.gpu_uuid.as_str()),
            ("fake", "GPU-fake")
        );
        assert_eq!(
            (ok.plan.as_deref(), ok.group.as_deref()),
            (Some("p"), Some("alone"))
        );
        assert_eq!(ok.torch.as_deref(), Some("fake"));
        assert!(ok.error.is_none() && ok.unprofiled_samples_per_s.is_some_and(|v| v > 0.0));
        assert_eq!(
            (entries[1].status, entries[1].file.as_deref()),
            (TraceStatus::Oom, None)
        );
    }

    #[test]
    fn existing_traces_are_skipped_without_a_new_index_line() {
        let dir = tempfile::tempdir().expect("temp dir");
        trace(dir.path(), &["resnet18:128:32", "oom:8:32"]);
        let again = trace(
            dir.path(),
            &["resnet18:128:32", "oom:8:32", "resnet26:32:32"],
        );
        let status: Vec<TraceStatus> = again.reports.iter().map(|r| r.status).collect();
        assert_eq!(
            status,
            vec![TraceStatus::Skipped, TraceStatus::Oom, TraceStatus::Ok]
        );
        let entries = load_index(dir.path()).expect("index").entries;
        // 2 lines of the first run, then the oom retried and the new point.
        assert_eq!(entries.len(), 4);
    }

    #[test]
    fn issue_34_a_trace_file_without_its_index_line_is_indexed_on_resume() {
        let dir = tempfile::tempdir().expect("temp dir");
        trace(dir.path(), &["resnet18:128:32", "resnet50:64:224"]);
        // A kill between the second file and its line: the index holds the first line only.
        let index = dir.path().join(INDEX_FILE);
        let text = std::fs::read_to_string(&index).expect("index");
        std::fs::write(
            &index,
            format!("{}\n", text.lines().next().expect("a line")),
        )
        .expect("write");
        let again = trace(dir.path(), &["resnet18:128:32", "resnet50:64:224"]);
        assert!(
            again
                .reports
                .iter()
                .all(|r| r.status == TraceStatus::Skipped)
        );
        let entries = load_index(dir.path()).expect("index").entries;
        assert_eq!(entries.len(), 2, "{entries:?}");
        let resumed = &entries[1];
        assert_eq!(
            (
                resumed.point.as_str(),
                resumed.status,
                resumed.file.as_deref()
            ),
            (
                "resnet50:64:224",
                TraceStatus::Ok,
                Some("resnet50_64_224.trace.json.gz")
            )
        );
        assert!(
            resumed
                .error
                .as_deref()
                .is_some_and(|e| e.starts_with("indexed on resume")),
            "{resumed:?}"
        );
        assert_eq!(
            (resumed.gpu_uuid.as_str(), resumed.torch.as_deref()),
            ("GPU-fake", Some("fake"))
        );
        assert!(trace_for(&entries, "resnet50:64:224", "GPU-fake").is_some());
        // Once indexed, a third run adds nothing.
        trace(dir.path(), &["resnet18:128:32", "resnet50:64:224"]);
        assert_eq!(load_index(dir.path()).expect("index").entries.len(), 2);
    }

    #[test]
    fn a_torn_last_index_line_is_reported_and_the_next_line_starts_a_new_line() {
        // A kill or a full disk cut the index's last line short (found by docs/trust's kill
        // pass review): the next point's line must not be glued onto it, and lost.
        let dir = tempfile::tempdir().expect("temp dir");
        trace(dir.path(), &["resnet18:128:32"]);
        let index = dir.path().join(INDEX_FILE);
        let whole = std::fs::read_to_string(&index).expect("index");
        std::fs::write(&index, format!("{whole}{}", &whole[..40])).expect("tear");
        let traced = trace(dir.path(), &["resnet18:128:32", "resnet50:64:224"]);
        let LoadedIndex { entries, skipped } = load_index(dir.path()).expect("index");
        let points: Vec<&str> = entries.iter().map(|e| e.point.as_str()).collect();
        assert_eq!(points, vec!["resnet18:128:32", "resnet50:64:224"]);
        assert_eq!(skipped.len(), 1, "{skipped:?}");
        assert_eq!(skipped[0].0, 2, "the torn line, by its number");
        let warnings = traced.warnings();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        let at = format!("{}:2: unreadable index line skipped", index.display());
        assert!(warnings[0].starts_with(&at), "{warnings:?}");
        // The command tracer's index lines start on a line of their own too.
        std::fs::write(&index, &whole[..40]).expect("tear");
        crate::trace_cmd::append_index(dir.path(), &entries[0]).expect("append");
        let LoadedIndex { entries, skipped } = load_index(dir.path()).expect("index");
        assert_eq!((entries.len(), skipped.len()), (1, 1));
    }

    #[test]
    fn records_find_their_trace_by_point_and_gpu() {
        let dir = tempfile::tempdir().expect("temp dir");
        trace(dir.path(), &["resnet18:128:32", "oom:8:32"]);
        let mut entries = load_index(dir.path()).expect("index").entries;
        let found = trace_for(&entries, "resnet18:128:32", "GPU-fake").expect("linked");
        assert_eq!(found.file.as_deref(), Some("resnet18_128_32.trace.json.gz"));
        assert!(
            trace_for(&entries, "oom:8:32", "GPU-fake").is_none(),
            "no file, no link"
        );
        // Another GPU's trace of the point is used only when this GPU has none.
        let mut other = entries[0].clone();
        (other.gpu_uuid, other.file) = ("GPU-other".into(), Some("other.trace.json.gz".into()));
        entries.push(other);
        let mine = trace_for(&entries, "resnet18:128:32", "GPU-fake").expect("linked");
        assert_eq!(mine.gpu_uuid, "GPU-fake");
        let theirs = trace_for(&entries, "resnet18:128:32", "GPU-new").expect("linked");
        assert_eq!(theirs.gpu_uuid, "GPU-other");
    }

    #[test]
    fn a_passed_deadline_traces_nothing() {
        let dir = tempfile::tempdir().expect("temp dir");
        let points = points(&["resnet18:128:32"]);
        let job = TraceJob {
            points: &points,
            out_dir: dir.path(),
            settings: TraceSettings::default(),
            deadline: Some(std::time::Instant::now()),
        };
        let traced = trace_points(&mut FakeRunner::new(), &job, None, &mut |_| {}).expect("runs");
        assert_eq!((traced.reports.len(), traced.unfinished), (0, 1));
        assert!(!dir.path().join("resnet18_128_32.trace.json.gz").exists());
    }
}
