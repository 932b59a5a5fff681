//! The rows of the result files, one serde type per CSV file: the simulator writes them
//! (`csv::Writer::serialize`, through [`csv_bytes`]) and `colo-plots` reads them, so the two
//! cannot drift apart. `summary.json` is [`super::Summary`], serialized the same way.
//!
//! Numbers keep the fixed decimals the files have always had (times and rates to 3 decimals,
//! slowdown to 4): those fields are formatted on writing (`serialize_with`) and read back as
//! plain numbers. Empty fields are `None`.
//!
//! Each row's [`CsvRow::COLUMNS`] is the file's header, in order; a test checks it against the
//! field names serde writes and against the column lists in `scenarios/README.md`,
//! `README.md` and `plots/README.md`.
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize, Serializer};

use crate::perf::ShareMode;

/// A row of one result CSV file.
pub trait CsvRow: Serialize + DeserializeOwned {
    /// The file's name, e.g. `jobs.csv`.
    const FILE: &'static str;
    /// The header, in order: the row's field names as serde writes them.
    const COLUMNS: &'static [&'static str];
    /// Columns added after the file's first layout: a reader finding them missing reads them as
    /// empty (so older result folders still read).
    const ADDED: &'static [&'static str] = &[];
}

/// Whether a job ran to the end or could never be placed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JobStatus {
    /// The job finished; its start, end, wait and JCT are set.
    Completed,
    /// No GPU (or slice) of the cluster could ever hold it.
    Unplaceable,
}

/// One row of `jobs.csv`: one job, in input order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobRow {
    /// Dense job index (input order).
    pub job: u32,
    /// The job's name.
    pub name: String,
    /// Model name.
    pub model: String,
    /// Batch size.
    pub batch: u32,
    /// Image side or sequence length.
    pub image: u32,
    /// GPUs asked for.
    pub gpus: u32,
    /// Arrival, s.
    #[serde(serialize_with = "fixed3")]
    pub arrival_s: f64,
    /// Start, s (completed jobs only).
    #[serde(serialize_with = "opt_fixed3")]
    pub start_s: Option<f64>,
    /// End, s (completed jobs only).
    #[serde(serialize_with = "opt_fixed3")]
    pub end_s: Option<f64>,
    /// Start - arrival, s (completed jobs only).
    #[serde(serialize_with = "opt_fixed3")]
    pub wait_s: Option<f64>,
    /// End - arrival (job completion time), s (completed jobs only).
    #[serde(serialize_with = "opt_fixed3")]
    pub jct_s: Option<f64>,
    /// Cluster group index.
    pub group: Option<u32>,
    /// Global index of its first GPU.
    pub gpu: Option<u32>,
    /// MIG slice as `PROFILE@START` (e.g. `3g.71gb@4`), or empty for a whole GPU.
    pub slice: Option<String>,
    /// Sharing mode it ran under.
    pub mode: Option<ShareMode>,
    /// Work, samples.
    #[serde(serialize_with = "display")]
    pub samples: f64,
    /// Samples/s over its run (completed jobs only).
    #[serde(serialize_with = "opt_fixed3")]
    pub mean_rate: Option<f64>,
    /// Samples/s alone on a whole GPU of the type it ran on (times its GPUs).
    #[serde(serialize_with = "fixed3")]
    pub exclusive_rate: f64,
    /// exclusive_rate / mean_rate (1 = as fast as alone; completed jobs only).
    #[serde(serialize_with = "opt_fixed4")]
    pub slowdown: Option<f64>,
    /// How it ended.
    pub status: JobStatus,
    /// Its share of its GPUs' energy while it ran, J (fitted power model; see
    /// [`crate::metrics::energy`]); empty when it never ran or its power is unknown
    /// (`summary.json` `energy` says why).
    #[serde(default, serialize_with = "opt_fixed3")]
    pub energy_j: Option<f64>,
    /// Times it was preempted (Las and Srtf; 0 otherwise).
    #[serde(default)]
    pub preemptions: u32,
}

impl CsvRow for JobRow {
    const FILE: &'static str = "jobs.csv";
    const COLUMNS: &'static [&'static str] = &[
        "job",
        "name",
        "model",
        "batch",
        "image",
        "gpus",
        "arrival_s",
        "start_s",
        "end_s",
        "wait_s",
        "jct_s",
        "group",
        "gpu",
        "slice",
        "mode",
        "samples",
        "mean_rate",
        "exclusive_rate",
        "slowdown",
        "status",
        "energy_j",
        "preemptions",
    ];
    const ADDED: &'static [&'static str] = &["energy_j", "preemptions"];
}

/// One row of `placements.csv`: a job occupying one GPU (or MIG slice) for its run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlacementRow {
    /// Dense job index.
    pub job: u32,
    /// Global GPU index.
    pub gpu: u32,
    /// MIG slice such as `3g.71gb@4`, or empty for a whole GPU.
    pub slice: Option<String>,
    /// Start of the occupation, s.
    #[serde(serialize_with = "fixed3")]
    pub start_s: f64,
    /// End of the occupation, s.
    #[serde(serialize_with = "fixed3")]
    pub end_s: f64,
}

impl CsvRow for PlacementRow {
    const FILE: &'static str = "placements.csv";
    const COLUMNS: &'static [&'static str] = &["job", "gpu", "slice", "start_s", "end_s"];
}

/// One row of `timeline.csv`: the cluster state from `time_s` until the next row.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TimelineCsvRow {
    /// Simulated time, s.
    #[serde(serialize_with = "fixed3")]
    pub time_s: f64,
    /// Jobs waiting.
    pub queued: u32,
    /// Jobs running.
    pub running: u32,
    /// GPUs with at least one job.
    pub busy_gpus: u32,
    /// GPUs in the cluster.
    pub total_gpus: u32,
    /// GPU memory held by running jobs, GiB.
    #[serde(serialize_with = "fixed3")]
    pub memory_used_gib: f64,
    /// GPU memory of the cluster, GiB.
    #[serde(serialize_with = "fixed3")]
    pub memory_total_gib: f64,
}

impl CsvRow for TimelineCsvRow {
    const FILE: &'static str = "timeline.csv";
    const COLUMNS: &'static [&'static str] = &[
        "time_s",
        "queued",
        "running",
        "busy_gpus",
        "total_gpus",
        "memory_used_gib",
        "memory_total_gib",
    ];
}

/// `rows` as CSV bytes: the header ([`CsvRow::COLUMNS`], written even without rows), then one
/// line per row.
pub fn csv_bytes<R: CsvRow>(rows: impl IntoIterator<Item = R>) -> std::io::Result<Vec<u8>> {
    write_csv(Vec::new(), rows)
}

/// Writes `rows` as CSV into `out` (as [`csv_bytes`] renders them) and hands `out` back,
/// flushed.
pub fn write_csv<R: CsvRow, W: std::io::Write>(
    out: W,
    rows: impl IntoIterator<Item = R>,
) -> std::io::Result<W> {
    let mut writer = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(out);
    writer.write_record(R::COLUMNS)?;
    for row in rows {
        writer.serialize(row)?;
    }
    writer
        .into_inner()
        .map_err(|err| std::io::Error::other(err.to_string()))
}

fn fixed3<S: Serializer>(value: &f64, s: S) -> Result<S::Ok, S::Error> {
    fixed(*value, 3, s)
}

fn opt_fixed3<S: Serializer>(value: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match value {
        Some(v) => fixed(*v, 3, s),
        None => s.serialize_none(),
    }
}

fn opt_fixed4<S: Serializer>(value: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match value {
        Some(v) => fixed(*v, 4, s),
        None => s.serialize_none(),
    }
}

fn display<S: Serializer>(value: &f64, s: S) -> Result<S::Ok, S::Error> {
    let mut buf = StackText::default();
    match std::fmt::Write::write_fmt(&mut buf, format_args!("{value}")) {
        Ok(()) => s.serialize_str(buf.as_str()),
        Err(_) => s.collect_str(value),
    }
}

/// `value` with `decimals` decimals, as `format!("{value:.N}")` writes it, from a stack
/// buffer: formatting the result files' numbers through `core::fmt` (exact float formatting,
/// one `String` per field) was most of a replay's wall time.
fn fixed<S: Serializer>(value: f64, decimals: u32, s: S) -> Result<S::Ok, S::Error> {
    let mut buf = StackText::default();
    let written = match scaled_round(value, decimals) {
        Some(q) => buf.push_fixed(q, decimals),
        None => std::fmt::Write::write_fmt(
            &mut buf,
            format_args!("{value:.prec$}", prec = decimals as usize),
        )
        .is_ok(),
    };
    if written {
        s.serialize_str(buf.as_str())
    } else {
        s.collect_str(&format_args!("{value:.prec$}", prec = decimals as usize))
    }
}

/// `value * 10^decimals` rounded to the nearest integer, computed exactly from the value's
/// binary fraction, for `0 <= value < 2^53` when that is no exact tie (whose rounding is left to
/// `core::fmt`, as are negative, huge and non-finite values): then its digits are those
/// `core::fmt` writes.
fn scaled_round(value: f64, decimals: u32) -> Option<u64> {
    if value.is_sign_negative()
        || value.is_nan()
        || value >= 9_007_199_254_740_992.0
        || decimals > 9
    {
        return None;
    }
    let bits = value.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let fraction = bits & ((1 << 52) - 1);
    // value = mantissa * 2^exp exactly.
    let (mantissa, exp) = if biased == 0 {
        (fraction, -1074)
    } else {
        (fraction | (1 << 52), biased - 1075)
    };
    let scaled = u128::from(mantissa) * u128::from(10u64.pow(decimals));
    if exp >= 0 {
        return u64::try_from(scaled << exp).ok();
    }
    let shift = exp.unsigned_abs();
    if shift >= 127 {
        // scaled < 2^83: below a quarter.
        return Some(0);
    }
    let q = scaled >> shift;
    let r = scaled & ((1u128 << shift) - 1);
    let q = match r.cmp(&(1u128 << (shift - 1))) {
        std::cmp::Ordering::Less => q,
        std::cmp::Ordering::Greater => q + 1,
        std::cmp::Ordering::Equal => return None,
    };
    u64::try_from(q).ok()
}

/// A field's text, on the stack (long enough for any `f64` the standard formats write here;
/// longer text is an error and the caller falls back to an allocated `String`).
struct StackText {
    buf: [u8; 64],
    len: usize,
}

impl Default for StackText {
    fn default() -> Self {
        Self {
            buf: [0; 64],
            len: 0,
        }
    }
}

impl StackText {
    fn as_str(&self) -> &str {
        // Only whole `str`s and ASCII digits are written.
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or_default()
    }

    /// `scaled / 10^decimals` with `decimals` decimals; false if it does not fit.
    fn push_fixed(&mut self, scaled: u64, decimals: u32) -> bool {
        let mut digits = [b'0'; 32];
        let mut at = digits.len();
        let mut rest = scaled;
        let mut written = 0;
        // Digits from the last; at least one before the point.
        while rest > 0 || written <= decimals {
            if written == decimals && decimals > 0 {
                at -= 1;
                digits[at] = b'.';
            }
            at -= 1;
            digits[at] = b'0' + (rest % 10) as u8;
            rest /= 10;
            written += 1;
        }
        let text = &digits[at..];
        let Some(slot) = self.buf.get_mut(self.len..self.len + text.len()) else {
            return false;
        };
        slot.copy_from_slice(text);
        self.len += text.len();
        true
    }
}

impl std::fmt::Write for StackText {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        let slot = self.buf.get_mut(self.len..end).ok_or(std::fmt::Error)?;
        slot.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job_row() -> JobRow {
        JobRow {
            job: 3,
            name: "a, \"b\"".into(),
            model: "resnet50".into(),
            batch: 64,
            image: 224,
            gpus: 1,
            arrival_s: 1.5,
            start_s: Some(2.0),
            end_s: Some(12.25),
            wait_s: Some(0.5),
            jct_s: Some(10.75),
            group: Some(0),
            gpu: Some(2),
            slice: Some("3g.71gb@4".into()),
            mode: Some(ShareMode::Mig),
            samples: 1000.0,
            mean_rate: Some(97.56),
            exclusive_rate: 120.0,
            slowdown: Some(1.23),
            status: JobStatus::Completed,
            energy_j: Some(5400.5),
            preemptions: 2,
        }
    }

    /// The header serde would write from the field names.
    fn serde_header<R: CsvRow>(row: R) -> String {
        let mut writer = csv::Writer::from_writer(Vec::new());
        writer.serialize(row).unwrap();
        let text = String::from_utf8(writer.into_inner().unwrap()).unwrap();
        text.lines().next().unwrap().to_owned()
    }

    #[test]
    fn columns_are_the_field_names() {
        assert_eq!(serde_header(job_row()), JobRow::COLUMNS.join(","));
        let placement = PlacementRow {
            job: 0,
            gpu: 1,
            slice: None,
            start_s: 0.0,
            end_s: 1.0,
        };
        assert_eq!(serde_header(placement), PlacementRow::COLUMNS.join(","));
        let timeline = TimelineCsvRow {
            time_s: 0.0,
            queued: 0,
            running: 0,
            busy_gpus: 0,
            total_gpus: 1,
            memory_used_gib: 0.0,
            memory_total_gib: 1.0,
        };
        assert_eq!(serde_header(timeline), TimelineCsvRow::COLUMNS.join(","));
    }

    /// The fast fixed-decimal path writes what `format!` writes, ties and edges included.
    fn fixed_text(value: f64) -> String {
        let bytes = csv_bytes([PlacementRow {
            job: 0,
            gpu: 0,
            slice: None,
            start_s: value,
            end_s: 0.0,
        }])
        .unwrap();
        let text = String::from_utf8(bytes).unwrap();
        let field = text.lines().nth(1).unwrap().split(',').nth(3).unwrap();
        field.to_owned()
    }

    #[test]
    fn fixed_decimals_match_core_fmt() {
        let edges = [
            0.0,
            -0.0,
            0.0005,
            0.0015,
            0.0625,
            1.0625,
            2.5e-4,
            1e-300,
            5e-324,
            0.1,
            0.2,
            0.3,
            1234.5675,
            999.9995,
            999.9996,
            4503599627370495.5,
            9007199254740991.0,
            9007199254740992.0,
            1e20,
            -1.5,
            -0.0004,
            f64::INFINITY,
            f64::NAN,
            f64::MAX,
        ];
        for v in edges {
            assert_eq!(fixed_text(v), format!("{v:.3}"), "{v:e}");
        }
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for i in 0..200_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let unit = (x >> 11) as f64 / (1u64 << 53) as f64;
            let v = match i % 4 {
                0 => unit * 1e7,
                1 => (unit * 1e6).round() / 1e3 + (i % 7) as f64 * 5e-4,
                2 => unit * 10f64.powi((i % 30) as i32 - 10),
                _ => f64::from_bits(x >> 2),
            };
            let mut buf = StackText::default();
            let fast = match scaled_round(v, 4) {
                Some(q) => {
                    assert!(buf.push_fixed(q, 4));
                    buf.as_str().to_owned()
                }
                None => format!("{v:.4}"),
            };
            assert_eq!(fast, format!("{v:.4}"), "{v:e}");
            assert_eq!(fixed_text(v), format!("{v:.3}"), "{v:e}");
        }
    }

    #[test]
    fn numbers_keep_fixed_decimals_and_round_trip() {
        let bytes = csv_bytes([job_row()]).unwrap();
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert_eq!(
            text.lines().nth(1).unwrap(),
            "3,\"a, \"\"b\"\"\",resnet50,64,224,1,1.500,2.000,12.250,0.500,10.750,0,2,3g.71gb@4,mig,1000,97.560,120.000,1.2300,completed,5400.500,2"
        );
        let mut reader = csv::Reader::from_reader(bytes.as_slice());
        let back: Vec<JobRow> = reader.deserialize().collect::<Result<_, _>>().unwrap();
        assert_eq!(back, vec![job_row()]);
    }

    #[test]
    fn empty_fields_are_none_and_header_comes_without_rows() {
        let row = JobRow {
            start_s: None,
            end_s: None,
            wait_s: None,
            jct_s: None,
            group: None,
            gpu: None,
            slice: None,
            mode: None,
            mean_rate: None,
            slowdown: None,
            status: JobStatus::Unplaceable,
            energy_j: None,
            preemptions: 0,
            name: "x".into(),
            ..job_row()
        };
        let text = String::from_utf8(csv_bytes([row]).unwrap()).unwrap();
        assert!(
            text.ends_with("3,x,resnet50,64,224,1,1.500,,,,,,,,,1000,,120.000,,unplaceable,,0\n"),
            "{text}"
        );
        let empty = csv_bytes(std::iter::empty::<PlacementRow>()).unwrap();
        assert_eq!(empty, b"job,gpu,slice,start_s,end_s\n");
    }

    const SCENARIOS_README: &str = include_str!("../../../scenarios/README.md");
    const README: &str = include_str!("../../../README.md");
    const PLOTS_README: &str = include_str!("../../../plots/README.md");

    /// The text of `scenarios/README.md` from the heading `### `FILE`` to the next heading.
    fn readme_section(file: &str) -> &'static str {
        let heading = format!("### `{file}`");
        let start = SCENARIOS_README
            .find(&heading)
            .unwrap_or_else(|| panic!("scenarios/README.md has no section {heading}"));
        let rest = &SCENARIOS_README[start + heading.len()..];
        &rest[..rest.find("\n#").unwrap_or(rest.len())]
    }

    fn check_documented<R: CsvRow>() {
        let header = R::COLUMNS.join(",");
        let section = readme_section(R::FILE);
        assert!(
            section.contains(&format!("```text\n{header}\n```")),
            "scenarios/README.md, {}: the column list is not `{header}`",
            R::FILE
        );
        for column in R::COLUMNS {
            assert!(
                section.contains(&format!("| `{column}` |")),
                "scenarios/README.md, {}: column `{column}` has no row in the table",
                R::FILE
            );
        }
        for (doc, text) in [("README.md", README), ("plots/README.md", PLOTS_README)] {
            assert!(
                text.contains(&header),
                "{doc} does not list the columns of {} as `{header}`",
                R::FILE
            );
        }
    }

    #[test]
    fn readmes_list_the_columns_written() {
        check_documented::<JobRow>();
        check_documented::<PlacementRow>();
        check_documented::<TimelineCsvRow>();
    }

    #[test]
    fn readme_lists_every_summary_field() {
        use crate::metrics::{RunLabels, RunRecord, TraceSummary, summarize};
        let run = RunRecord {
            outcomes: vec![],
            timeline: vec![],
            events: 0,
            mig_reconfigurations: 0,
            total_gpus: 1,
            memory_total_gib: 1.0,
            energy: None,
        };
        let labels = RunLabels {
            scenario: "s".into(),
            variant: "base".into(),
            seed: 1,
            perf_model: "parametric".into(),
            profiles: vec![],
            profile_origin: "h200: fitted".into(),
            cluster: vec![],
            trace: Some(TraceSummary {
                format: "philly".into(),
                file: "f.csv".into(),
                rows_read: 0,
                rows_skipped: 0,
                skips: Default::default(),
                jobs_read: 0,
                outside_window: 0,
                jobs_replayed: 0,
                models: Default::default(),
                gpu_sharing: None,
            }),
        };
        let summary = summarize(&[], &run, labels);
        let value = serde_json::to_value(&summary).unwrap();
        let section = readme_section("summary.json");
        for key in value.as_object().unwrap().keys() {
            assert!(
                section.contains(&format!("| `{key}` |")),
                "scenarios/README.md, summary.json: field `{key}` has no row in the table"
            );
        }
        let back: crate::metrics::Summary = serde_json::from_value(value).unwrap();
        assert_eq!(back.makespan_s, summary.makespan_s);
        assert_eq!(back.labels.trace.map(|t| t.format), Some("philly".into()));
    }
}
