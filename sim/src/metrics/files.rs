//! Result files rendered to bytes, and their writing into a result folder. The rows are the
//! serde types of [`super::rows`].
use std::collections::VecDeque;
use std::path::Path;

use super::fast::{CsvOut, render_field};
use super::row_codec;
use super::row_spill::RowSpill;
use super::rows::{CsvRow, JobRow, JobStatus, PlacementRow, TimelineCsvRow, csv_bytes, write_csv};
use super::{JobOutcome, RunLabels, RunRecord, Summary, SummaryParts, TimelineRow, slowdown_of};
use crate::fsutil::create_result_dir;
use crate::hardware::MigSlice;
use crate::workload::Job;

/// The `jobs.csv` rows: one per job, in input order.
pub fn job_rows<'a>(jobs: &'a [Job], run: &'a RunRecord) -> impl Iterator<Item = JobRow> + 'a {
    jobs.iter()
        .zip(&run.outcomes)
        .enumerate()
        .map(|(idx, (job, o))| job_row(idx as u32, job, o))
}

/// The `jobs.csv` row of job `idx`.
pub fn job_row(idx: u32, job: &Job, o: &JobOutcome) -> JobRow {
    let mut row = JobRow {
        job: 0,
        name: String::new(),
        model: String::new(),
        batch: 0,
        image: 0,
        gpus: 0,
        arrival_s: 0.0,
        start_s: None,
        end_s: None,
        wait_s: None,
        jct_s: None,
        group: None,
        gpu: None,
        slice: None,
        mode: None,
        samples: 0.0,
        mean_rate: None,
        exclusive_rate: 0.0,
        slowdown: None,
        status: JobStatus::Completed,
        energy_j: None,
        preemptions: 0,
    };
    fill_job_row(&mut row, idx, job, None, o);
    row
}

/// Makes `row` the `jobs.csv` row of job `idx` (named `name`, else the job's name), reusing
/// its text buffers.
fn fill_job_row(row: &mut JobRow, idx: u32, job: &Job, name: Option<&str>, o: &JobOutcome) {
    let k = &job.model;
    let done = o.completed;
    let when = |v: f64| Some(v).filter(|_| done);
    let refill = |buf: &mut String, text: &str| {
        buf.clear();
        buf.push_str(text);
    };
    refill(&mut row.name, name.unwrap_or(&job.name));
    refill(&mut row.model, &k.model);
    let mut slice = row.slice.take().unwrap_or_default();
    let slice = write_slice_label(&mut slice, o.slice.filter(|_| done)).then_some(slice);
    *row = JobRow {
        job: idx,
        name: std::mem::take(&mut row.name),
        model: std::mem::take(&mut row.model),
        batch: k.batch,
        image: k.image,
        gpus: job.gpus,
        arrival_s: job.arrival_s,
        start_s: when(o.start_s),
        end_s: when(o.end_s),
        wait_s: when(o.start_s - job.arrival_s),
        jct_s: when(o.end_s - job.arrival_s),
        group: o.group.filter(|_| done),
        gpu: o.gpus.first().copied().filter(|_| done),
        slice,
        mode: o.mode.filter(|_| done),
        samples: job.samples,
        mean_rate: when(job.samples / o.held_s()),
        exclusive_rate: o.exclusive_rate,
        slowdown: when(slowdown_of(job, o)),
        status: if done {
            JobStatus::Completed
        } else {
            JobStatus::Unplaceable
        },
        energy_j: o.energy_j.filter(|_| done),
        preemptions: o.preemptions(),
    };
}

/// `jobs.csv`: one row per job, in input order.
pub fn jobs_csv(jobs: &[Job], run: &RunRecord) -> std::io::Result<Vec<u8>> {
    csv_bytes(job_rows(jobs, run))
}

/// The `placements.csv` rows: one per (job, run, GPU) it occupied; a job never preempted has
/// one run, from its start to its end.
pub fn placement_rows(run: &RunRecord) -> impl Iterator<Item = PlacementRow> + '_ {
    run.outcomes
        .iter()
        .enumerate()
        .flat_map(|(idx, o)| placement_rows_of(idx as u32, o))
}

/// The `placements.csv` rows of job `idx`.
pub fn placement_rows_of(idx: u32, o: &JobOutcome) -> impl Iterator<Item = PlacementRow> + '_ {
    o.runs().flat_map(move |r| {
        r.gpus.iter().map(move |&gpu| PlacementRow {
            job: idx,
            gpu,
            slice: slice_label(r.slice),
            start_s: r.start_s,
            end_s: r.end_s,
        })
    })
}

/// `placements.csv`: one row per (job, run, GPU) it occupied.
pub fn placements_csv(run: &RunRecord) -> std::io::Result<Vec<u8>> {
    csv_bytes(placement_rows(run))
}

/// The `timeline.csv` rows: cluster state after each change.
pub fn timeline_rows(run: &RunRecord) -> impl Iterator<Item = TimelineCsvRow> + '_ {
    run.timeline.iter().map(|row| TimelineCsvRow {
        time_s: row.time_s,
        queued: row.queued,
        running: row.running,
        busy_gpus: row.busy_gpus,
        total_gpus: run.total_gpus,
        memory_used_gib: row.memory_used_gib,
        memory_total_gib: run.memory_total_gib,
    })
}

/// `timeline.csv`: cluster state after each change.
pub fn timeline_csv(run: &RunRecord) -> std::io::Result<Vec<u8>> {
    csv_bytes(timeline_rows(run))
}

fn slice_label(slice: Option<MigSlice>) -> Option<String> {
    let mut label = String::new();
    write_slice_label(&mut label, slice).then_some(label)
}

/// Writes `PROFILE@START` into `buf` (cleared first); whether there is a slice.
fn write_slice_label(buf: &mut String, slice: Option<MigSlice>) -> bool {
    buf.clear();
    let Some(s) = slice else { return false };
    buf.push_str(s.profile.name);
    buf.push('@');
    buf.push_str(itoa::Buffer::new().format(s.start));
    true
}

/// Writes `rows` as the CSV file `R::FILE` in `dir` (made by [`create_result_dir`]), streamed
/// through one 256 KiB buffer ([`super::fast`]) rather than rendered whole first: a million jobs'
/// files are hundreds of MiB.
pub fn write_csv_file<R: CsvRow>(
    dir: &Path,
    rows: impl IntoIterator<Item = R>,
) -> std::io::Result<()> {
    let file = std::fs::File::create(dir.join(R::FILE))?;
    write_csv(file, rows)?;
    Ok(())
}

/// `timeline.csv` written row by row as a run hands its timeline over
/// ([`crate::engine::Simulation::run_streaming`]): the bytes [`write_csv_file`] writes from
/// [`timeline_rows`], without the rows kept in between. The first write error is kept (the
/// rest of the rows are dropped) and returned by [`TimelineFile::finish`].
pub struct TimelineFile {
    out: CsvOut<std::fs::File>,
    /// The `total_gpus` and `memory_total_gib` fields, the same on every row, rendered once.
    total_gpus: Vec<u8>,
    memory_total_gib: Vec<u8>,
    error: Option<std::io::Error>,
}

impl TimelineFile {
    /// Creates `timeline.csv` in `dir` (made by [`create_result_dir`]) and writes its header;
    /// every row gets the cluster's `total_gpus` and `memory_total_gib`.
    pub fn create(dir: &Path, total_gpus: u32, memory_total_gib: f64) -> std::io::Result<Self> {
        let file = std::fs::File::create(dir.join(TimelineCsvRow::FILE))?;
        let mut out = CsvOut::new(file);
        for column in TimelineCsvRow::COLUMNS {
            out.text(column);
        }
        out.end_row()?;
        Ok(Self {
            out,
            total_gpus: render_field(|out| out.uint(u64::from(total_gpus))),
            memory_total_gib: render_field(|out| out.fixed(memory_total_gib, 3)),
            error: None,
        })
    }

    /// Appends one row: the fields of [`TimelineCsvRow::write_fields`], with the two constant
    /// ones as rendered.
    pub fn push(&mut self, row: &TimelineRow) {
        if self.error.is_some() {
            return;
        }
        let out = &mut self.out;
        out.fixed(row.time_s, 3);
        out.uint(u64::from(row.queued));
        out.uint(u64::from(row.running));
        out.uint(u64::from(row.busy_gpus));
        out.rendered(&self.total_gpus);
        out.fixed(row.memory_used_gib, 3);
        out.rendered(&self.memory_total_gib);
        if let Err(e) = self.out.end_row() {
            self.error = Some(e);
        }
    }

    /// Writes what is buffered; the first error met, if any.
    pub fn finish(self) -> std::io::Result<()> {
        if let Some(e) = self.error {
            return Err(e);
        }
        self.out.finish()?;
        Ok(())
    }
}

/// Which per-job file a [`JobStream`] writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobsFile {
    /// None (`--outputs summary`).
    None,
    /// `jobs.csv`.
    Csv,
    /// `jobs.parquet` instead (`colo simulate --columnar`; cargo feature `parquet`).
    Parquet,
}

/// `jobs.parquet` being written; without the `parquet` feature there is none to write.
#[cfg(feature = "parquet")]
type ParquetOut = super::parquet::JobsParquet<std::fs::File>;
#[cfg(not(feature = "parquet"))]
type ParquetOut = std::convert::Infallible;

/// The message when `jobs.parquet` is asked of a build without the `parquet` feature.
pub const NO_PARQUET: &str = "jobs.parquet needs colo built with the parquet feature: \
     cargo build --release --features parquet (or leave out --columnar for jobs.csv)";

#[cfg(feature = "parquet")]
fn open_parquet(dir: &Path) -> std::io::Result<ParquetOut> {
    let file = std::fs::File::create(dir.join("jobs.parquet"))?;
    super::parquet::JobsParquet::new(file).map_err(std::io::Error::other)
}

#[cfg(not(feature = "parquet"))]
fn open_parquet(_dir: &Path) -> std::io::Result<ParquetOut> {
    Err(std::io::Error::other(NO_PARQUET))
}

#[cfg(feature = "parquet")]
fn push_parquet(out: &mut ParquetOut, row: &JobRow) -> std::io::Result<()> {
    out.push(row).map_err(std::io::Error::other)
}

#[cfg(not(feature = "parquet"))]
fn push_parquet(out: &mut ParquetOut, _row: &JobRow) -> std::io::Result<()> {
    match *out {}
}

#[cfg(feature = "parquet")]
fn finish_parquet(out: ParquetOut) -> std::io::Result<()> {
    out.finish().map_err(std::io::Error::other)?.sync_data()
}

#[cfg(not(feature = "parquet"))]
fn finish_parquet(out: ParquetOut) -> std::io::Result<()> {
    match out {}
}

/// A run's outcomes taken as the engine hands them over
/// ([`crate::engine::Simulation::run_streaming`], in the order jobs finish) and written out in
/// input order: `jobs.csv` and `placements.csv` (each when asked for) get the bytes
/// [`write_csv_file`] writes from [`job_rows`] and [`placement_rows`], and the summary's figures
/// are gathered ([`SummaryParts`]). An outcome (with the job, when the engine drew it) is held
/// only until every job before it in input order has been written, then dropped (its CSV rows,
/// rendered as it comes, held in a temporary file past 64 MiB of them); with neither file
/// asked for, only the two figures the summary sums in input order (work and energy) are
/// held, 24 bytes a job. A drawn job may come without its name: it is then `j` and its index
/// ([`crate::workload::stream::index_name`]). The first write error is kept and
/// returned by [`JobStream::finish`].
pub struct JobStream<'j> {
    /// The listed jobs (empty when the engine draws them and hands each over).
    jobs: &'j [Job],
    total: usize,
    next: u32,
    /// Jobs `next..`, at `job - next`.
    held: VecDeque<Held>,
    jobs_csv: Option<CsvOut<std::fs::File>>,
    jobs_parquet: Option<ParquetOut>,
    placements_csv: Option<CsvOut<std::fs::File>>,
    parts: SummaryParts,
    /// Row buffers, reused from row to row.
    rows: RowBuffers,
    /// Where the CSV rows of a job held back are rendered before they are kept.
    scratch: CsvOut<std::io::Sink>,
    /// Bytes of rendered rows held in memory.
    held_bytes: usize,
    /// Rendered rows held past [`HELD_IN_MEMORY`] bytes (made at the first), and a buffer
    /// they are read back into.
    spill: Option<RowSpill>,
    unspilled: Vec<u8>,
    error: Option<std::io::Error>,
    /// Outcomes written, kept instead of dropped when set (by [`write_beside`], which hands
    /// them back to the engine's thread to be freed where they were made).
    // Boxes, as they came: each goes back whole, to be freed where it was made.
    #[allow(clippy::vec_box)]
    spent: Option<Vec<Box<Finished>>>,
}

/// The buffers a job's rows are filled into, reused from job to job.
struct RowBuffers {
    job: JobRow,
    placement: PlacementRow,
    name: String,
    /// A held job's bytes after its CSV rows: its `jobs.parquet` row ([`row_codec`]), then
    /// its figures ([`push_sums`]).
    encoded: Vec<u8>,
}

/// Bytes of rendered rows held in memory before more go to a temporary file
/// ([`super::row_spill`]): some 256k jobs' rows, more than a long replay holds back.
const HELD_IN_MEMORY: usize = if cfg!(test) { 600 } else { 64 << 20 };

/// What is held of a job until every job before it is written: 24 bytes, one for each job
/// of the window a job running long holds back (a million in a long replay).
enum Held {
    /// Not final yet.
    Pending,
    /// Its rows rendered (its `jobs.csv` row, or its `jobs.parquet` row as
    /// [`row_codec::encode`] writes it, then its `placements.csv` rows from `split`), then its
    /// work and energy as [`SummaryParts::add_unordered`] gave them ([`push_sums`]):
    /// rendered as the outcome comes, beside the engine, rather than in the burst when every
    /// job before it is done.
    Rendered { bytes: Box<[u8]>, split: u32 },
    /// As `Rendered`, its bytes (`len` of them) at `at` in the spill file: rows held past
    /// [`HELD_IN_MEMORY`] bytes.
    Spilled { at: u64, len: u32, split: u32 },
    /// Without files, a job that did not complete.
    NoWork,
    /// Without files, a completed job's work, its energy unknown.
    Work(f64),
    /// Without files, a completed job's work and energy.
    WorkEnergy(f64, f64),
}

impl Held {
    /// `Held` without files, of [`SummaryParts::add_unordered`]'s figures.
    fn sums(sums: Figures) -> Self {
        match sums {
            None => Held::NoWork,
            Some((work, None)) => Held::Work(work),
            Some((work, Some(energy))) => Held::WorkEnergy(work, energy),
        }
    }

    /// The figures of a `Held` without files ([`Held::sums`]'s); `None` for the other kinds.
    fn figures(&self) -> Option<Figures> {
        match *self {
            Held::NoWork => Some(None),
            Held::Work(work) => Some(Some((work, None))),
            Held::WorkEnergy(work, energy) => Some(Some((work, Some(energy)))),
            _ => None,
        }
    }
}

/// A job's work and energy as [`SummaryParts::add_unordered`] gives them (`None`: it did not
/// complete).
type Figures = Option<(f64, Option<f64>)>;

/// Bytes of a job's figures after its rendered rows.
const SUMS_BYTES: usize = 17;

/// Appends `sums` (a job's work and energy, as [`SummaryParts::add_unordered`] gave them) in
/// [`SUMS_BYTES`]: a byte saying which are there, then both as their bits.
fn push_sums(bytes: &mut Vec<u8>, sums: Figures) {
    let (flag, work, energy) = match sums {
        None => (0, 0.0, 0.0),
        Some((work, None)) => (1, work, 0.0),
        Some((work, Some(energy))) => (2, work, energy),
    };
    bytes.push(flag);
    bytes.extend_from_slice(&work.to_bits().to_le_bytes());
    bytes.extend_from_slice(&energy.to_bits().to_le_bytes());
}

/// The rows and figures of bytes [`push_sums`] ended; `None` if they do not end so.
fn split_sums(bytes: &[u8]) -> Option<(&[u8], Figures)> {
    let (rows, tail) = bytes.split_at_checked(bytes.len().checked_sub(SUMS_BYTES)?)?;
    let (&flag, numbers) = tail.split_first()?;
    let (work, energy) = numbers.split_at(8);
    let bits = |b: &[u8]| f64::from_bits(u64::from_le_bytes(b.try_into().unwrap_or_default()));
    let sums = match flag {
        0 => None,
        1 => Some((bits(work), None)),
        2 => Some((bits(work), Some(bits(energy)))),
        _ => return None,
    };
    Some((rows, sums))
}

impl<'j> JobStream<'j> {
    /// A stream over `total` jobs (`jobs`, or when that is empty jobs handed over with their
    /// outcomes), creating `jobs.csv` and `placements.csv` in `dir` (made by
    /// [`create_result_dir`]) when asked for and writing their headers.
    pub fn create(
        jobs: &'j [Job],
        total: usize,
        dir: &Path,
        jobs_file: JobsFile,
        placements_csv: bool,
    ) -> std::io::Result<Self> {
        fn open<R: CsvRow>(dir: &Path) -> std::io::Result<CsvOut<std::fs::File>> {
            let mut out = CsvOut::new(std::fs::File::create(dir.join(R::FILE))?);
            for column in R::COLUMNS {
                out.text(column);
            }
            out.end_row()?;
            Ok(out)
        }
        let empty = JobOutcome {
            completed: false,
            start_s: f64::NAN,
            end_s: f64::NAN,
            group: None,
            gpus: Vec::new(),
            slice: None,
            mode: None,
            exclusive_rate: f64::NAN,
            energy_j: None,
            preempted: Vec::new(),
            resumed_s: f64::NAN,
        };
        let no_job = Job {
            name: String::new(),
            model: crate::workload::ModelKey::new("", 1, 1),
            arrival_s: 0.0,
            samples: 0.0,
            gpus: 1,
            min_speed: None,
        };
        Ok(JobStream {
            jobs,
            total,
            next: 0,
            held: VecDeque::new(),
            jobs_csv: (jobs_file == JobsFile::Csv)
                .then(|| open::<JobRow>(dir))
                .transpose()?,
            jobs_parquet: (jobs_file == JobsFile::Parquet)
                .then(|| open_parquet(dir))
                .transpose()?,
            placements_csv: placements_csv
                .then(|| open::<PlacementRow>(dir))
                .transpose()?,
            parts: SummaryParts::new(total, super::values::SPILL_AT),
            rows: RowBuffers {
                job: job_row(0, &no_job, &empty),
                placement: PlacementRow {
                    job: 0,
                    gpu: 0,
                    slice: None,
                    start_s: 0.0,
                    end_s: 0.0,
                },
                name: String::new(),
                encoded: Vec::new(),
            },
            scratch: CsvOut::new_small(std::io::sink()),
            held_bytes: 0,
            spill: None,
            unspilled: Vec::new(),
            error: None,
            spent: None,
        })
    }

    /// Whether it writes a file (else it only gathers the summary's figures).
    fn writes_files(&self) -> bool {
        self.jobs_csv.is_some() || self.jobs_parquet.is_some() || self.placements_csv.is_some()
    }

    /// Takes job `job`'s final outcome, and the job itself when the engine drew it (`None`:
    /// a listed job).
    pub fn push(&mut self, job: u32, drawn: Option<Job>, outcome: JobOutcome) {
        if self.writes_files() {
            self.push_finished(Box::new(Finished {
                job,
                drawn,
                outcome,
            }));
            return;
        }
        debug_assert!(job >= self.next, "job {job} handed over twice");
        let j = match &drawn {
            Some(j) => j,
            None => &self.jobs[job as usize],
        };
        let sums = self.parts.add_unordered(j, &outcome);
        if job == self.next && self.held.is_empty() {
            self.parts.add_ordered(sums);
            self.next += 1;
            return;
        }
        self.hold(job, Held::sums(sums));
    }

    /// [`Self::push`] of a boxed outcome, as the writer thread takes them ([`write_beside`]),
    /// when a file is written.
    fn push_finished(&mut self, finished: Box<Finished>) {
        let job = finished.job;
        debug_assert!(job >= self.next, "job {job} handed over twice");
        if job == self.next && self.held.is_empty() {
            self.write(job, finished.drawn.as_ref(), &finished.outcome);
            self.next += 1;
            self.spend(finished);
            return;
        }
        let held = self.render(job, finished.drawn.as_ref(), &finished.outcome);
        self.spend(finished);
        self.hold(job, held);
    }

    /// Keeps what `job` left until every job before it is written, then writes every job
    /// that is no longer waiting for one before it.
    fn hold(&mut self, job: u32, held: Held) {
        let at = (job - self.next) as usize;
        if at >= self.held.len() {
            self.held.resize_with(at + 1, || Held::Pending);
        }
        self.held[at] = held;
        while self
            .held
            .front()
            .is_some_and(|h| !matches!(h, Held::Pending))
        {
            match self.held.pop_front() {
                Some(Held::Rendered { bytes, split }) => {
                    self.held_bytes -= bytes.len();
                    self.write_held(&bytes, split);
                }
                Some(Held::Spilled { at, len, split }) => {
                    let mut bytes = std::mem::take(&mut self.unspilled);
                    bytes.clear();
                    let read = match &mut self.spill {
                        Some(spill) => spill.read(at, len as usize, &mut bytes),
                        None => Err(std::io::Error::other("held rows lost their spill file")),
                    };
                    match read {
                        Ok(()) => self.write_held(&bytes, split),
                        Err(e) => self.keep_error(e),
                    }
                    self.unspilled = bytes;
                }
                Some(held) => {
                    if let Some(figures) = held.figures() {
                        self.parts.add_ordered(figures);
                    }
                }
                None => {}
            }
            self.next += 1;
        }
    }

    /// Drops a written outcome, or keeps it when asked to ([`Self::spent`]).
    fn spend(&mut self, finished: Box<Finished>) {
        if let Some(spent) = &mut self.spent {
            spent.push(finished);
        }
    }

    fn write(&mut self, idx: u32, drawn: Option<&Job>, o: &JobOutcome) {
        let job = match drawn {
            Some(job) => job,
            None => &self.jobs[idx as usize],
        };
        self.parts.add(job, o);
        if self.error.is_some() {
            return;
        }
        let jobs = self.jobs_csv.as_mut();
        let parquet = self.jobs_parquet.as_mut();
        let placements = self.placements_csv.as_mut();
        let (rows, drawn) = (&mut self.rows, drawn.is_some());
        if let Err(e) = write_rows(rows, idx, job, drawn, o, jobs, parquet, placements) {
            self.error = Some(e);
        }
    }

    /// Renders the rows of job `idx`, held until every job before it is written.
    fn render(&mut self, idx: u32, drawn: Option<&Job>, o: &JobOutcome) -> Held {
        let job = match drawn {
            Some(job) => job,
            None => &self.jobs[idx as usize],
        };
        let sums = self.parts.add_unordered(job, o);
        let (rows, out, d) = (&mut self.rows, &mut self.scratch, drawn.is_some());
        // Writing into a sink cannot fail.
        let jobs = self.jobs_csv.is_some().then_some(&mut *out);
        let _ = write_rows(rows, idx, job, d, o, jobs, None, None);
        if self.jobs_parquet.is_some() {
            fill_named_row(rows, idx, job, d, o);
            row_codec::encode(&rows.job, &mut rows.encoded);
            let _ = out.rows(&rows.encoded);
            rows.encoded.clear();
        }
        // A job's rows are far below 4 GiB (a run per preemption).
        let split = out.buffered().len() as u32;
        let placements = self.placements_csv.is_some().then_some(&mut *out);
        let _ = write_rows(rows, idx, job, d, o, None, None, placements);
        push_sums(&mut rows.encoded, sums);
        let _ = out.rows(&rows.encoded);
        rows.encoded.clear();
        let bytes = out.take_buffered();
        if self.held_bytes + bytes.len() <= HELD_IN_MEMORY {
            self.held_bytes += bytes.len();
            return Held::Rendered {
                bytes: bytes.into_boxed_slice(),
                split,
            };
        }
        let spill = match self.spill.take() {
            Some(spill) => Ok(spill),
            None => RowSpill::new(),
        };
        let pushed = spill.and_then(|mut spill| {
            let at = spill.push(&bytes)?;
            self.spill = Some(spill);
            Ok(at)
        });
        match pushed {
            Ok(at) => Held::Spilled {
                at,
                len: bytes.len() as u32,
                split,
            },
            Err(e) => {
                self.keep_error(e);
                Held::sums(sums)
            }
        }
    }

    /// Keeps the first write error.
    fn keep_error(&mut self, e: std::io::Error) {
        if self.error.is_none() {
            self.error = Some(e);
        }
    }

    /// Takes the figures and writes the rows of a held job's `bytes` ([`Self::render`]'s),
    /// its placements from `split`.
    fn write_held(&mut self, bytes: &[u8], split: u32) {
        let Some((rows, sums)) = split_sums(bytes) else {
            return self.keep_error(std::io::Error::other("held rows came back damaged"));
        };
        self.parts.add_ordered(sums);
        let split = (split as usize).min(rows.len());
        self.write_rendered(&rows[..split], &rows[split..]);
    }

    /// Writes rows [`Self::render`] rendered.
    fn write_rendered(&mut self, jobs: &[u8], placements: &[u8]) {
        if self.error.is_some() {
            return;
        }
        let mut result = Ok(());
        if let Some(out) = &mut self.jobs_csv {
            result = out.rows(jobs);
        }
        if let Some(out) = &mut self.jobs_parquet {
            result = match row_codec::decode(jobs) {
                Some(row) => push_parquet(out, &row),
                None => Err(std::io::Error::other(
                    "a held jobs.parquet row came back damaged",
                )),
            };
        }
        if let Some(out) = self.placements_csv.as_mut().filter(|_| result.is_ok()) {
            result = out.rows(placements);
        }
        if let Err(e) = result {
            self.error = Some(e);
        }
    }

    /// Writes what is buffered and makes the summary of `run` (whose outcomes were streamed
    /// here); the first write error met, if any.
    pub fn finish(self, run: &RunRecord, labels: RunLabels) -> std::io::Result<Summary> {
        if let Some(e) = self.error {
            return Err(e);
        }
        assert!(
            self.held.is_empty() && self.next as usize == self.total,
            "every job's outcome was handed over"
        );
        for out in [self.jobs_csv, self.placements_csv].into_iter().flatten() {
            out.finish()?;
        }
        if let Some(out) = self.jobs_parquet {
            finish_parquet(out)?;
        }
        self.parts.finish(run, labels)
    }
}

/// Writes job `idx`'s rows (`drawn`: a job the engine drew, named from its index when it
/// comes without a name): its
/// `jobs.csv` row into `jobs` and its `jobs.parquet` row into `parquet`, its `placements.csv`
/// rows into `placements`, each when given.
#[allow(clippy::too_many_arguments)]
fn write_rows<W: std::io::Write>(
    rows: &mut RowBuffers,
    idx: u32,
    job: &Job,
    drawn: bool,
    o: &JobOutcome,
    jobs: Option<&mut CsvOut<W>>,
    parquet: Option<&mut ParquetOut>,
    placements: Option<&mut CsvOut<W>>,
) -> std::io::Result<()> {
    let mut result = Ok(());
    if jobs.is_some() || parquet.is_some() {
        fill_named_row(rows, idx, job, drawn, o);
        if let Some(out) = jobs {
            rows.job.write_fields(out);
            result = out.end_row();
        }
        if let Some(out) = parquet {
            result = push_parquet(out, &rows.job);
        }
    }
    if let Some(out) = placements.filter(|_| result.is_ok()) {
        let row = &mut rows.placement;
        row.job = idx;
        for r in o.runs() {
            let mut slice = row.slice.take().unwrap_or_default();
            row.slice = write_slice_label(&mut slice, r.slice).then_some(slice);
            row.start_s = r.start_s;
            row.end_s = r.end_s;
            for &gpu in r.gpus {
                row.gpu = gpu;
                row.write_fields(out);
                result = result.and(out.end_row());
            }
        }
    }
    result
}

/// Fills `rows.job` with job `idx`'s row (named as [`write_rows`] says).
fn fill_named_row(rows: &mut RowBuffers, idx: u32, job: &Job, drawn: bool, o: &JobOutcome) {
    // A drawn job without a name is named by its index (`JobSource::draws`).
    let name = (drawn && job.name.is_empty()).then(|| {
        rows.name.clear();
        rows.name.push('j');
        rows.name.push_str(itoa::Buffer::new().format(idx));
        rows.name.as_str()
    });
    fill_job_row(&mut rows.job, idx, job, name, o);
}

/// Writes each `(file name, bytes)` into `dir`, creating `dir` as [`create_result_dir`] does.
pub fn write_result_dir(dir: &Path, files: &[(&str, Vec<u8>)]) -> std::io::Result<()> {
    create_result_dir(dir)?;
    for (name, bytes) in files {
        std::fs::write(dir.join(name), bytes)?;
    }
    Ok(())
}

/// A job's final outcome, and the job itself when the engine drew it, as one allocation: the
/// engine's thread makes it and frees it once the writer is done with it, and between the two
/// it moves as a pointer (moved whole, its 250 bytes were copied five times on the way).
struct Finished {
    job: u32,
    drawn: Option<Job>,
    outcome: JobOutcome,
}

/// What the engine hands the writer thread ([`write_beside`]).
enum Handed {
    Outcome(Box<Finished>),
    Timeline(TimelineRow),
}

/// Items handed over in one message: a channel message per item would cost about as much as
/// writing its row.
const HAND_BATCH: usize = 256;

/// Batches in flight at most: the engine waits once the writer is this far behind, so what is
/// held stays bounded (about 16 MiB) however much faster the engine is. The writer's work
/// comes in bursts (a long job's end releases every later job's row held behind it), which
/// a shallow channel turned into the engine waiting: at 16 batches a million-job replay ran
/// its two threads mostly in turn.
const HAND_DEPTH: usize = 256;

/// The engine's end of the channel: items gathered into batches, the writer's emptied batches
/// taken back for reuse.
struct Hand {
    batch: Vec<Handed>,
    to_writer: std::sync::mpsc::SyncSender<Vec<Handed>>,
    emptied: std::sync::mpsc::Receiver<Vec<Handed>>,
    /// The writer has stopped (it panicked): the rest is dropped and the panic re-raised.
    gone: bool,
}

impl Hand {
    fn put(&mut self, item: Handed) {
        self.batch.push(item);
        if self.batch.len() >= HAND_BATCH {
            self.send();
        }
    }

    fn send(&mut self) {
        // A batch comes back holding the outcomes written from it, freed here.
        let next = match self.emptied.try_recv() {
            Ok(mut spent) => {
                spent.clear();
                // Kept at a batch's size: a burst's outcomes would otherwise leave every batch
                // in circulation as large as the largest burst.
                spent.shrink_to(HAND_BATCH);
                spent
            }
            Err(_) => Vec::with_capacity(HAND_BATCH),
        };
        let full = std::mem::replace(&mut self.batch, next);
        if self.gone || self.to_writer.send(full).is_err() {
            self.gone = true;
            self.batch.clear();
        }
    }
}

/// Runs `engine` on this thread while another writes what it hands over into `jobs` and
/// `timeline` (in the order handed over, so the files' bytes are those written on one
/// thread): a run writing every file spends about as long formatting rows as simulating.
/// `engine` gets the outcome sink and, with a timeline file, the timeline sink
/// ([`crate::engine::Simulation::run_streaming`]). Gives back what `engine` returned, and
/// `jobs` and `timeline` with everything handed over written (or their first error kept).
/// With no file to write (the summary's figures only), all runs on this thread.
pub fn write_beside<'j, R>(
    mut jobs: JobStream<'j>,
    mut timeline: Option<TimelineFile>,
    engine: impl FnOnce(
        &mut dyn FnMut(u32, Option<Job>, JobOutcome),
        Option<&mut dyn FnMut(&TimelineRow)>,
    ) -> R,
) -> (R, JobStream<'j>, Option<TimelineFile>) {
    if timeline.is_none() && !jobs.writes_files() {
        // Only the summary's figures to gather: a second thread would cost about what it
        // saves (each outcome's allocations freed on another thread than made them).
        let result = engine(&mut |job, drawn, o| jobs.push(job, drawn, o), None);
        return (result, jobs, timeline);
    }
    let (to_writer, from_engine) = std::sync::mpsc::sync_channel::<Vec<Handed>>(HAND_DEPTH);
    let (give_back, emptied) = std::sync::mpsc::channel::<Vec<Handed>>();
    let with_timeline = timeline.is_some();
    std::thread::scope(|scope| {
        let writer = scope.spawn(move || {
            jobs.spent = Some(Vec::new());
            for mut batch in from_engine {
                for item in batch.drain(..) {
                    match item {
                        Handed::Outcome(finished) => jobs.push_finished(finished),
                        Handed::Timeline(row) => {
                            if let Some(file) = timeline.as_mut() {
                                file.push(&row);
                            }
                        }
                    }
                }
                // Written outcomes go back with the batch, to be freed on the engine's thread:
                // freed here, every allocation the engine made would cross between the two
                // threads' heaps.
                if let Some(spent) = &mut jobs.spent {
                    batch.extend(spent.drain(..).map(Handed::Outcome));
                }
                // The engine may have finished and stopped taking batches back.
                let _ = give_back.send(batch);
            }
            jobs.spent = None;
            (jobs, timeline)
        });
        let hand = std::cell::RefCell::new(Hand {
            batch: Vec::with_capacity(HAND_BATCH),
            to_writer,
            emptied,
            gone: false,
        });
        let mut outcome = |job, drawn, outcome| {
            let finished = Box::new(Finished {
                job,
                drawn,
                outcome,
            });
            hand.borrow_mut().put(Handed::Outcome(finished))
        };
        let mut row = |row: &TimelineRow| hand.borrow_mut().put(Handed::Timeline(*row));
        let result = engine(
            &mut outcome,
            with_timeline.then_some(&mut row as &mut dyn FnMut(&TimelineRow)),
        );
        let mut hand = hand.into_inner();
        hand.send();
        // Hanging up ends the writer's loop.
        drop(hand);
        match writer.join() {
            Ok((jobs, timeline)) => (result, jobs, timeline),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_job_takes_24_bytes() {
        assert_eq!(std::mem::size_of::<Held>(), 24);
    }

    #[test]
    fn held_figures_come_back_after_the_rows() {
        for sums in [
            None,
            Some((3.5, None)),
            Some((-0.0, Some(f64::NAN))),
            Some((f64::MAX, Some(1e-300))),
        ] {
            let mut bytes = b"1,2\n".to_vec();
            push_sums(&mut bytes, sums);
            assert_eq!(bytes.len(), 4 + SUMS_BYTES);
            let (rows, back) = split_sums(&bytes).unwrap();
            assert_eq!(rows, b"1,2\n");
            assert_eq!(format!("{back:?}"), format!("{sums:?}"));
            assert!(split_sums(&bytes[1..]).is_some_and(|(r, _)| r == b",2\n"));
            let held = Held::sums(sums).figures().unwrap();
            assert_eq!(format!("{held:?}"), format!("{sums:?}"));
        }
        assert!(split_sums(&[0; SUMS_BYTES - 1]).is_none());
        assert!(split_sums(&[3; SUMS_BYTES]).is_none(), "no such flag");
    }
}
