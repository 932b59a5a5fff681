//! The rows of the result files, one serde type per CSV file: the simulator writes them
//! ([`csv_bytes`], [`write_csv`]: each row's [`CsvRow::write_fields`] through
//! [`super::fast`], the bytes `csv::Writer::serialize` writes, which a test checks) and
//! `colo-plots` reads them, so the two cannot drift apart. `summary.json` is [`super::Summary`], serialized the same way.
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

use super::fast::CsvOut;
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

    /// Appends the row's fields to `out` ([`super::fast`]): the bytes `csv` writes when it
    /// serializes the row, faster (a test compares the two).
    fn write_fields<W: std::io::Write>(&self, out: &mut CsvOut<W>);

    /// A field no run writes (its column and why), for readers of files edited by hand:
    /// such a row is refused, not drawn or counted wrongly.
    fn out_of_range(&self) -> Option<(&'static str, String)> {
        None
    }
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
    fn out_of_range(&self) -> Option<(&'static str, String)> {
        let times = [
            ("arrival_s", Some(self.arrival_s)),
            ("start_s", self.start_s),
            ("end_s", self.end_s),
            ("wait_s", self.wait_s),
            ("jct_s", self.jct_s),
        ];
        times.into_iter().find_map(|(column, value)| {
            let v = value?;
            (!(v.is_finite() && v >= 0.0)).then(|| {
                (
                    column,
                    format!("{v} s: a time must be finite and at least 0"),
                )
            })
        })
    }

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

    fn write_fields<W: std::io::Write>(&self, out: &mut CsvOut<W>) {
        out.uint(u64::from(self.job));
        out.text(&self.name);
        out.text(&self.model);
        out.uint(u64::from(self.batch));
        out.uint(u64::from(self.image));
        out.uint(u64::from(self.gpus));
        out.fixed(self.arrival_s, 3);
        out.opt_fixed(self.start_s, 3);
        out.opt_fixed(self.end_s, 3);
        out.opt_fixed(self.wait_s, 3);
        out.opt_fixed(self.jct_s, 3);
        out.opt_uint(self.group);
        out.opt_uint(self.gpu);
        out.opt_text(self.slice.as_deref());
        match self.mode {
            Some(mode) => out.text(mode.label()),
            None => out.empty(),
        }
        out.display(self.samples);
        out.opt_fixed(self.mean_rate, 3);
        out.fixed(self.exclusive_rate, 3);
        out.opt_fixed(self.slowdown, 4);
        out.text(match self.status {
            JobStatus::Completed => "completed",
            JobStatus::Unplaceable => "unplaceable",
        });
        out.opt_fixed(self.energy_j, 3);
        out.uint(u64::from(self.preemptions));
    }
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

    fn write_fields<W: std::io::Write>(&self, out: &mut CsvOut<W>) {
        out.uint(u64::from(self.job));
        out.uint(u64::from(self.gpu));
        out.opt_text(self.slice.as_deref());
        out.fixed(self.start_s, 3);
        out.fixed(self.end_s, 3);
    }
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

    fn write_fields<W: std::io::Write>(&self, out: &mut CsvOut<W>) {
        out.fixed(self.time_s, 3);
        out.uint(u64::from(self.queued));
        out.uint(u64::from(self.running));
        out.uint(u64::from(self.busy_gpus));
        out.uint(u64::from(self.total_gpus));
        out.fixed(self.memory_used_gib, 3);
        out.fixed(self.memory_total_gib, 3);
    }
}

/// `rows` as CSV bytes: the header ([`CsvRow::COLUMNS`], written even without rows), then one
/// line per row.
pub fn csv_bytes<R: CsvRow>(rows: impl IntoIterator<Item = R>) -> std::io::Result<Vec<u8>> {
    write_csv(Vec::new(), rows)
}

/// Writes `rows` as CSV into `out` (as [`csv_bytes`] renders them) and hands `out` back,
/// flushed. It writes through [`super::fast`] into one 256 KiB buffer, so `out` needs no buffer
/// of its own.
pub fn write_csv<R: CsvRow, W: std::io::Write>(
    out: W,
    rows: impl IntoIterator<Item = R>,
) -> std::io::Result<W> {
    let mut out = CsvOut::new(out);
    for column in R::COLUMNS {
        out.text(column);
    }
    out.end_row()?;
    for row in rows {
        row.write_fields(&mut out);
        out.end_row()?;
    }
    out.finish()
}

/// `rows` as CSV bytes the way `csv` serializes them through serde: the reference the fast
/// path is tested against.
#[cfg(test)]
pub(crate) fn serde_csv_bytes<R: CsvRow>(rows: impl IntoIterator<Item = R>) -> Vec<u8> {
    let mut writer = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(Vec::new());
    writer.write_record(R::COLUMNS).unwrap();
    for row in rows {
        writer.serialize(row).unwrap();
    }
    writer.into_inner().unwrap()
}

/// One variant's line of `colo simulate`'s summary, as its table prints it and as
/// `--format json` writes it (so the two cannot drift apart): the variant's name, then its
/// figures from [`super::Summary`] at full precision, times in hours. Not a result file: the
/// same figures are in the variant's `summary.json` (times in seconds) and `sweep.csv`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SummaryLine {
    /// Sweep variant name (`base` without a sweep).
    pub variant: String,
    /// Jobs in the workload.
    pub jobs: u64,
    /// Jobs that ran to the end.
    pub completed: u64,
    /// Time the last job ended, hours.
    pub makespan_h: f64,
    /// Mean job completion time, hours.
    pub mean_jct_h: f64,
    /// 95th percentile of job completion time, hours.
    pub p95_jct_h: f64,
    /// Mean wait before start, hours.
    pub mean_wait_h: f64,
    /// Samples trained per second of makespan.
    pub throughput_samples_per_s: f64,
    /// Busy GPU-hours / GPU-hours (0 to 1).
    pub utilization: f64,
    /// The cluster's energy over the makespan, kWh; `None` (JSON `null`, the table's
    /// `unknown`) without a power model.
    pub energy_kwh: Option<f64>,
    /// Where the energy comes from, or why it is unknown (`summary.json`'s
    /// `energy.figures_are`); `None` when the summary has no energy section.
    pub energy_figures_are: Option<String>,
    /// The performance model that gave the rates.
    pub perf_model: String,
    /// Where the profile numbers come from (`h200: fitted`, ...).
    pub profile_origin: String,
    /// Where the figures come from (`summary.json`'s `figures_are`).
    pub figures_are: String,
}

impl SummaryLine {
    /// The line of variant `variant` with summary `summary`.
    pub fn of(variant: &str, summary: &super::Summary) -> Self {
        const HOUR_S: f64 = 3600.0;
        let energy = summary.energy.as_ref();
        SummaryLine {
            variant: variant.to_owned(),
            jobs: summary.jobs,
            completed: summary.completed,
            makespan_h: summary.makespan_s / HOUR_S,
            mean_jct_h: summary.jct_s.mean / HOUR_S,
            p95_jct_h: summary.jct_s.p95 / HOUR_S,
            mean_wait_h: summary.wait_s.mean / HOUR_S,
            throughput_samples_per_s: summary.throughput_samples_per_s,
            utilization: summary.utilization,
            energy_kwh: energy.and_then(|e| e.energy_kwh),
            energy_figures_are: energy.map(|e| e.figures_are.clone()),
            perf_model: summary.labels.perf_model.clone(),
            profile_origin: summary.labels.profile_origin.clone(),
            figures_are: summary.figures_are.clone(),
        }
    }
}

fn fixed3<S: Serializer>(value: &f64, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(&format_args!("{value:.3}"))
}

fn opt_fixed3<S: Serializer>(value: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match value {
        Some(v) => fixed3(v, s),
        None => s.serialize_none(),
    }
}

fn opt_fixed4<S: Serializer>(value: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match value {
        Some(v) => s.collect_str(&format_args!("{v:.4}")),
        None => s.serialize_none(),
    }
}

fn display<S: Serializer>(value: &f64, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(value)
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

    /// A job row's times must be finite and at least 0; a row the simulator writes passes,
    /// each bad time is named by its column, and a never-started job's empty times are fine.
    #[test]
    fn a_job_rows_times_out_of_range_are_named_by_column() {
        assert_eq!(job_row().out_of_range(), None);
        let unplaced = JobRow {
            start_s: None,
            end_s: None,
            wait_s: None,
            jct_s: None,
            ..job_row()
        };
        assert_eq!(unplaced.out_of_range(), None);
        let zero = JobRow {
            arrival_s: 0.0,
            wait_s: Some(0.0),
            ..job_row()
        };
        assert_eq!(zero.out_of_range(), None);
        let cases = [
            (
                "arrival_s",
                JobRow {
                    arrival_s: -1.0,
                    ..job_row()
                },
            ),
            (
                "start_s",
                JobRow {
                    start_s: Some(f64::NAN),
                    ..job_row()
                },
            ),
            (
                "end_s",
                JobRow {
                    end_s: Some(f64::INFINITY),
                    ..job_row()
                },
            ),
            (
                "wait_s",
                JobRow {
                    wait_s: Some(-0.5),
                    ..job_row()
                },
            ),
            (
                "jct_s",
                JobRow {
                    jct_s: Some(-5.0),
                    ..job_row()
                },
            ),
        ];
        for (column, row) in cases {
            let (named, why) = row.out_of_range().expect(column);
            assert_eq!(named, column);
            assert!(
                why.ends_with("s: a time must be finite and at least 0"),
                "{why}"
            );
        }
        assert_eq!(
            JobRow {
                jct_s: Some(-5.0),
                ..job_row()
            }
            .out_of_range()
            .unwrap()
            .1,
            "-5 s: a time must be finite and at least 0"
        );
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
        // Rows with no range check of their own pass every row.
        assert_eq!(placement.out_of_range(), None);
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

    use proptest::prelude::*;

    fn float() -> impl Strategy<Value = f64> {
        prop_oneof![
            any::<f64>(),
            (0u64..10_000_000_000_000, 0u32..8)
                .prop_map(|(ms, f)| ms as f64 / 1e3 + f64::from(f) * 1.25e-4),
            (0.0..1e7f64),
            Just(f64::NAN),
            Just(-0.0),
        ]
    }

    fn text() -> impl Strategy<Value = String> {
        "[a-z0-9_,\" \r\n.@-]{0,10}"
    }

    fn job_row_strategy() -> impl Strategy<Value = JobRow> {
        let ints = (
            any::<u32>(),
            any::<u32>(),
            any::<u32>(),
            any::<u32>(),
            any::<Option<u32>>(),
            any::<Option<u32>>(),
            any::<u32>(),
        );
        let texts = (text(), text(), proptest::option::of(text()));
        let floats = (
            float(),
            proptest::option::of(float()),
            proptest::option::of(float()),
            proptest::option::of(float()),
            proptest::option::of(float()),
            float(),
            proptest::option::of(float()),
            float(),
            proptest::option::of(float()),
            proptest::option::of(float()),
        );
        let kinds = (
            proptest::option::of(proptest::sample::select(ShareMode::ALL.to_vec())),
            any::<bool>(),
        );
        (ints, texts, floats, kinds).prop_map(|(i, t, f, k)| JobRow {
            job: i.0,
            name: t.0,
            model: t.1,
            batch: i.1,
            image: i.2,
            gpus: i.3,
            arrival_s: f.0,
            start_s: f.1,
            end_s: f.2,
            wait_s: f.3,
            jct_s: f.4,
            group: i.4,
            gpu: i.5,
            slice: t.2,
            mode: k.0,
            samples: f.5,
            mean_rate: f.6,
            exclusive_rate: f.7,
            slowdown: f.8,
            status: if k.1 {
                JobStatus::Completed
            } else {
                JobStatus::Unplaceable
            },
            energy_j: f.9,
            preemptions: i.6,
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3_000))]

        /// The fast writer writes the bytes serde through `csv` writes, row for row.
        #[test]
        fn fast_rows_are_the_serde_rows(
            jobs in proptest::collection::vec(job_row_strategy(), 0..4),
            places in proptest::collection::vec((any::<u32>(), any::<u32>(), proptest::option::of(text()), float(), float()), 0..4),
            times in proptest::collection::vec((float(), any::<u32>(), any::<u32>(), any::<u32>(), any::<u32>(), float(), float()), 0..4),
        ) {
            prop_assert_eq!(csv_bytes(jobs.clone()).unwrap(), serde_csv_bytes(jobs));
            let places: Vec<PlacementRow> = places.into_iter().map(|p| PlacementRow { job: p.0, gpu: p.1, slice: p.2, start_s: p.3, end_s: p.4 }).collect();
            prop_assert_eq!(csv_bytes(places.clone()).unwrap(), serde_csv_bytes(places));
            let times: Vec<TimelineCsvRow> = times.into_iter().map(|t| TimelineCsvRow { time_s: t.0, queued: t.1, running: t.2, busy_gpus: t.3, total_gpus: t.4, memory_used_gib: t.5, memory_total_gib: t.6 }).collect();
            prop_assert_eq!(csv_bytes(times.clone()).unwrap(), serde_csv_bytes(times));
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
            busy_gpu_s: 0.0,
            events: 0,
            mig_reconfigurations: 0,
            total_gpus: 1,
            memory_total_gib: 1.0,
            energy: None,
        };
        let labels = RunLabels {
            profile_origin: "h200: fitted".into(),
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
            ..RunLabels::for_test("s")
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
