//! Trace workloads: read the trace a scenario names, size the GPU groups its node list defines,
//! and turn trace jobs (arrival, duration, GPU count; no model) into engine jobs with a model
//! and an amount of work such that a job alone on the reference GPU takes its traced duration.
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;
use rand_distr::Distribution;
use rand_distr::weighted::WeightedIndex;

use super::schema::{ModelMapSpec, RuleSpec, TraceFormatSpec, TraceSpec};
use super::{Scenario, ScenarioError};
use crate::hardware::{self, GpuSpec};
use crate::metrics::{GpuSharingSummary, TraceSummary};
use crate::perf::PerfModel;
use crate::workload::stream::{Drawn, Draws, JobSource, SourceError, SourceKind};
use crate::workload::trace::{
    self, ReadOptions, SkipCounts, Trace, TraceFormat, TraceJob, TraceNode, TraceRows,
};
use crate::workload::{Job, MinSpeed, ModelKey, limits};

const FIELD: &str = "workload.Trace";

/// The reader's format for a scenario's format name.
pub(super) fn format(spec: TraceFormatSpec) -> TraceFormat {
    match spec {
        TraceFormatSpec::Philly => TraceFormat::Philly,
        TraceFormatSpec::AlibabaOpenb => TraceFormat::AlibabaOpenb,
        TraceFormatSpec::Itp => TraceFormat::Itp,
        TraceFormatSpec::Helios => TraceFormat::Helios,
        TraceFormatSpec::Colo => TraceFormat::Colo,
        TraceFormatSpec::Slurm => TraceFormat::Slurm,
        TraceFormatSpec::Kubernetes => TraceFormat::Kubernetes,
    }
}

/// Where a scenario's trace is and how it is read. `strict` (from `colo simulate --strict`)
/// turns strict mode on even where the scenario leaves it off.
pub(super) fn file(scenario: &Scenario, spec: &TraceSpec, strict: bool) -> TraceFile {
    TraceFile {
        path: scenario.resolve(&spec.path),
        format: format(spec.format),
        opts: ReadOptions {
            strict: strict || spec.strict,
            limit: spec.limit,
            all_states: spec.all_states,
        },
    }
}

/// The node list of an AlibabaOpenb trace (`None` for other formats, or without one).
pub(super) fn nodes(
    scenario: &Scenario,
    spec: &TraceSpec,
) -> Result<Option<Vec<TraceNode>>, ScenarioError> {
    let trace_error = |source| ScenarioError::Trace {
        path: scenario.path.clone(),
        source,
    };
    match format(spec.format) {
        TraceFormat::AlibabaOpenb => {
            let nodes = spec.nodes.as_ref().map(|n| scenario.resolve(n));
            trace::openb_node_list(&scenario.resolve(&spec.path), nodes.as_deref())
                .map_err(trace_error)
        }
        other if spec.nodes.is_some() => Err(ScenarioError::field(
            &scenario.path,
            format!("{FIELD}.nodes"),
            format!("a node list is read only for AlibabaOpenb traces, not {other}"),
        )),
        _ => Ok(None),
    }
}

/// GPUs per catalog GPU type defined by the trace's node list (`None` without one), each node
/// GPU model mapped by `node_gpu_map`, else `node_gpu`, else its own name in the catalog.
pub(super) fn node_gpus(
    path: &Path,
    spec: &TraceSpec,
    nodes: Option<&[TraceNode]>,
) -> Result<Option<Vec<(&'static GpuSpec, u32)>>, ScenarioError> {
    let Some(nodes) = nodes else {
        return Ok(None);
    };
    let mut counts: Vec<(&'static GpuSpec, u32)> = Vec::new();
    let mut total = 0u64;
    for node in nodes {
        let gpu = node_gpu(path, spec, &node.gpu_model)?;
        total += u64::from(node.gpus);
        if total > u64::from(limits::MAX_GPUS) {
            return Err(ScenarioError::field(
                path,
                format!("{FIELD}.nodes"),
                format!(
                    "the node list's GPUs, {total} up to node `{}`, are above the limit of {} \
                     GPUs in one cluster (see scenarios/README.md, \"Accepted ranges\")",
                    node.name,
                    limits::MAX_GPUS
                ),
            ));
        }
        match counts.iter_mut().find(|(g, _)| g.name == gpu.name) {
            Some((_, count)) => *count += node.gpus,
            None => counts.push((gpu, node.gpus)),
        }
    }
    Ok(Some(counts))
}

fn node_gpu(path: &Path, spec: &TraceSpec, model: &str) -> Result<&'static GpuSpec, ScenarioError> {
    let (name, field) = match (spec.node_gpu_map.get(model), &spec.node_gpu) {
        (Some(name), _) => (name.as_str(), "node_gpu_map"),
        (None, Some(name)) => (name.as_str(), "node_gpu"),
        (None, None) => (model, "node_gpu"),
    };
    hardware::gpu(name).map_err(|e| {
        ScenarioError::field(
            path,
            format!("{FIELD}.{field}"),
            format!(
                "node GPU model `{model}` maps to no catalog GPU ({e}); set `node_gpu` for all \
                 nodes or map it in `node_gpu_map`"
            ),
        )
    })
}

/// What a replay needs besides the trace.
pub(super) struct ReplayPlan<'a> {
    /// The scenario file (for messages).
    pub path: &'a Path,
    /// The workload's spec.
    pub spec: &'a TraceSpec,
    /// Seed of the model mix.
    pub seed: u64,
    /// GPU on which a job alone takes its traced duration.
    pub reference: &'static GpuSpec,
    /// Gives each model's exclusive rate on `reference`.
    pub perf: &'a dyn PerfModel,
}

/// A trace file and how to read it.
#[derive(Clone, Debug)]
pub(super) struct TraceFile {
    pub path: PathBuf,
    pub format: TraceFormat,
    pub opts: ReadOptions,
}

/// A trace of at most this many jobs replayed is kept as listed jobs from its first reading
/// (some 15 MiB at most) rather than read again: reading a 20k-job trace twice cost a fifth
/// of its replay.
const LIST_UP_TO: usize = if cfg!(test) { 64 } else { 1 << 17 };

/// A trace's engine jobs: listed (read once and kept), or a source that reads the trace again
/// as the clock goes.
pub(super) enum Replayed {
    /// A short trace ([`LIST_UP_TO`] jobs replayed), or one whose rows are not in submission
    /// order (which cannot be read as the clock goes): read whole, sorted by arrival.
    Listed(Vec<Job>),
    /// A long trace in submission order.
    Streamed(Box<TraceSource>),
}

/// A long trace replayed as the clock goes: it was read once when the scenario was built, to
/// check every job, count them and their kinds and make the trace's summary, and is read
/// again row by row as the engine's clock reaches each job, so that a replay holds only the
/// jobs waiting and running.
#[derive(Debug)]
pub(super) struct TraceSource {
    file: TraceFile,
    replay: Replay,
    /// The earliest submission among the jobs kept (arrivals count from it).
    first_submit_s: f64,
    /// Of the jobs kept, as the first reading took them.
    fingerprint: Fingerprint,
    jobs: u32,
    kinds: Vec<SourceKind>,
    /// Per (model, GPUs), its kind.
    kind_of: HashMap<(u32, u32), u32>,
}

/// What turns a trace job into an engine job, owned by the source.
#[derive(Debug)]
struct Replay {
    /// The scenario file (for messages).
    path: PathBuf,
    models: ModelPicker,
    seed: u64,
    /// The window, seconds since the first arrival.
    from_s: f64,
    to_s: f64,
    arrival_scale: f64,
    duration_scale: f64,
}

impl Replay {
    fn new(plan: &ReplayPlan<'_>) -> Result<Self, ScenarioError> {
        check_scales(plan.path, plan.spec)?;
        let (from_s, to_s) = window_s(plan.path, plan.spec)?;
        Ok(Replay {
            path: plan.path.to_owned(),
            models: ModelPicker::new(plan)?,
            seed: plan.seed,
            from_s,
            to_s,
            arrival_scale: plan.spec.arrival_scale,
            duration_scale: plan.spec.duration_scale,
        })
    }
}

/// One pass of a replay over the trace jobs in arrival order: the model mix's draws go in
/// that order, so every pass makes the same jobs.
struct Replayer<'r> {
    replay: &'r Replay,
    rng: Xoshiro256PlusPlus,
}

impl<'r> Replayer<'r> {
    fn new(replay: &'r Replay) -> Self {
        Replayer {
            replay,
            rng: Xoshiro256PlusPlus::seed_from_u64(replay.seed),
        }
    }

    /// The engine job of trace job `tj` with its model's index, or `None` outside the window.
    fn job(&mut self, tj: TraceJob) -> Result<Option<(u32, Job)>, ScenarioError> {
        let replay = self.replay;
        if !(tj.arrival_s >= replay.from_s && tj.arrival_s < replay.to_s) {
            return Ok(None);
        }
        let path = replay.path.as_path();
        let idx = replay.models.pick(path, &tj, &mut self.rng)?;
        let (model, solo_rate, min_speed) = &replay.models.models[idx];
        let arrival_s = (tj.arrival_s - replay.from_s) * replay.arrival_scale;
        let duration_s = tj.duration_s * replay.duration_scale;
        scaled_in_range(path, &tj, "arrival_scale", limits::arrival(arrival_s))?;
        scaled_in_range(path, &tj, "duration_scale", limits::duration(duration_s))?;
        let samples = duration_s * solo_rate * f64::from(tj.gpus);
        if !(samples.is_finite() && samples > 0.0) {
            return Err(ScenarioError::field(
                path,
                format!("{FIELD}.models"),
                format!(
                    "trace job `{}` (line {}) would do {samples} samples of work ({model} at \
                     {solo_rate} samples/s for {duration_s} s); it must be a finite number > 0",
                    tj.name, tj.line
                ),
            ));
        }
        Ok(Some((
            idx as u32,
            Job {
                name: tj.name,
                model: model.clone(),
                arrival_s,
                samples,
                gpus: tj.gpus,
                min_speed: *min_speed,
            },
        )))
    }
}

/// A digest of the trace jobs kept, in order (line, times, GPUs, share, name), so that a second
/// reading that gives other jobs is caught, not replayed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Fingerprint(u64);

impl Fingerprint {
    fn add(&mut self, tj: &TraceJob) {
        let words = [
            tj.line,
            tj.arrival_s.to_bits(),
            tj.duration_s.to_bits(),
            u64::from(tj.gpus),
            tj.gpu_milli.map_or(u64::MAX, u64::from),
        ];
        for word in words {
            self.word(word);
        }
        // The name (it names the job's rows), eight bytes at a time, then its length.
        let mut chunks = tj.name.as_bytes().chunks_exact(8);
        for chunk in &mut chunks {
            self.word(u64::from_le_bytes(chunk.try_into().unwrap_or_default()));
        }
        let mut last = [0u8; 8];
        last[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
        self.word(u64::from_le_bytes(last));
        self.word(tj.name.len() as u64);
    }

    /// FNV-1a over words: a few ns a job.
    fn word(&mut self, word: u64) {
        self.0 = (self.0 ^ word).wrapping_mul(0x0100_0000_01b3);
    }
}

/// What the first pass counts.
struct Tally {
    fingerprint: Fingerprint,
    jobs_read: u64,
    sharing_read: u64,
    sharing_replayed: u64,
    /// Jobs replayed per model, by index.
    per_model: Vec<u64>,
    jobs: u32,
    kinds: Vec<SourceKind>,
    kind_of: HashMap<(u32, u32), u32>,
}

impl Tally {
    fn new(replay: &Replay) -> Self {
        Tally {
            fingerprint: Fingerprint::default(),
            jobs_read: 0,
            sharing_read: 0,
            sharing_replayed: 0,
            per_model: vec![0; replay.models.models.len()],
            jobs: 0,
            kinds: Vec::new(),
            kind_of: HashMap::new(),
        }
    }

    /// Counts trace job `tj` (kept by the reader) and, if it is replayed, its job and kind.
    fn take(
        &mut self,
        replayer: &mut Replayer<'_>,
        tj: TraceJob,
    ) -> Result<Option<Job>, ScenarioError> {
        self.jobs_read += 1;
        self.fingerprint.add(&tj);
        let shares = u64::from(tj.shares_gpu());
        self.sharing_read += shares;
        let Some((model, job)) = replayer.job(tj)? else {
            return Ok(None);
        };
        self.sharing_replayed += shares;
        self.per_model[model as usize] += 1;
        let next_kind = self.kinds.len() as u32;
        let kind = *self.kind_of.entry((model, job.gpus)).or_insert(next_kind);
        if kind == next_kind {
            self.kinds.push(SourceKind {
                model: job.model.clone(),
                gpus: job.gpus,
                min_speed: job.min_speed,
                first: self.jobs,
                first_name: job.name.clone(),
            });
        }
        self.jobs = self.jobs.checked_add(1).ok_or_else(|| {
            ScenarioError::field(
                &replayer.replay.path,
                FIELD,
                format!(
                    "replays more than {} jobs; set `limit` or `window_hours`",
                    u32::MAX
                ),
            )
        })?;
        Ok(Some(job))
    }
}

/// Reads the trace once and gives its jobs, listed or as a source (see [`Replayed`]), with the
/// trace's summary.
pub(super) fn replay(
    plan: &ReplayPlan<'_>,
    file: TraceFile,
) -> Result<(Replayed, TraceSummary), ScenarioError> {
    let replay = Replay::new(plan)?;
    let trace_error = |source| ScenarioError::Trace {
        path: plan.path.to_owned(),
        source,
    };
    let mut rows = TraceRows::open(file.format, &file.path, &file.opts).map_err(trace_error)?;
    let mut replayer = Replayer::new(&replay);
    let mut tally = Tally::new(&replay);
    let mut first_submit_s = None;
    let mut last_submit_s = f64::NEG_INFINITY;
    // Kept while the trace is short enough to list.
    let mut listed = Some(Vec::new());
    while let Some(mut tj) = rows.next_job().map_err(trace_error)? {
        if tj.arrival_s.total_cmp(&last_submit_s).is_lt() {
            // Out of submission order: read whole and sorted instead.
            let trace = TraceRows::open(file.format, &file.path, &file.opts)
                .and_then(TraceRows::collect)
                .map_err(trace_error)?;
            return replay_listed(plan.spec, &replay, trace);
        }
        last_submit_s = tj.arrival_s;
        let first = *first_submit_s.get_or_insert(tj.arrival_s);
        if !rows.arrival_from(&mut tj, first).map_err(trace_error)? {
            continue;
        }
        if let Some(job) = tally.take(&mut replayer, tj)? {
            match &mut listed {
                Some(jobs) if jobs.len() < LIST_UP_TO => jobs.push(job),
                _ => listed = None,
            }
        }
    }
    let counts = ReaderCounts {
        rows_read: rows.rows_read(),
        skips: rows.skips().clone(),
        gpu_sharing_rows: rows.gpu_sharing_rows(),
    };
    let summary = summarize(plan.spec, &replay, &tally, counts);
    if let Some(jobs) = listed {
        return Ok((Replayed::Listed(jobs), summary));
    }
    let source = TraceSource {
        file,
        replay,
        first_submit_s: first_submit_s.unwrap_or(0.0),
        fingerprint: tally.fingerprint,
        jobs: tally.jobs,
        kinds: tally.kinds,
        kind_of: tally.kind_of,
    };
    Ok((Replayed::Streamed(Box::new(source)), summary))
}

/// The listed jobs of a trace read whole (its jobs sorted by arrival, as
/// [`TraceRows::collect`] gives them), with the trace's summary.
fn replay_listed(
    spec: &TraceSpec,
    replay: &Replay,
    trace: Trace,
) -> Result<(Replayed, TraceSummary), ScenarioError> {
    let mut replayer = Replayer::new(replay);
    let mut tally = Tally::new(replay);
    let mut jobs = Vec::with_capacity(trace.jobs.len());
    for tj in trace.jobs {
        jobs.extend(tally.take(&mut replayer, tj)?);
    }
    let counts = ReaderCounts {
        rows_read: trace.rows_read,
        skips: trace.skips,
        gpu_sharing_rows: trace.gpu_sharing_rows,
    };
    let summary = summarize(spec, replay, &tally, counts);
    Ok((Replayed::Listed(jobs), summary))
}

impl JobSource for TraceSource {
    fn len(&self) -> u32 {
        self.jobs
    }

    fn kinds(&self) -> &[SourceKind] {
        &self.kinds
    }

    fn draws(&self, _named: bool) -> Draws<'_> {
        match TraceRows::open(self.file.format, &self.file.path, &self.file.opts) {
            Ok(rows) => Box::new(TraceDraws {
                source: self,
                rows,
                replayer: Replayer::new(&self.replay),
                last_submit_s: f64::NEG_INFINITY,
                fingerprint: Fingerprint::default(),
                given: 0,
                done: false,
            }),
            Err(e) => Box::new(std::iter::once(Err(self.changed(e.to_string())))),
        }
    }
}

impl TraceSource {
    /// The error of a second reading that does not give what the first one did.
    fn changed(&self, what: String) -> SourceError {
        SourceError(format!(
            "trace {} changed or became unreadable while it was replayed ({what}); replay it \
             again",
            self.file.path.display()
        ))
    }
}

/// A replay's jobs in arrival order, read again from the file.
struct TraceDraws<'s> {
    source: &'s TraceSource,
    rows: TraceRows,
    replayer: Replayer<'s>,
    last_submit_s: f64,
    /// Of the jobs kept so far.
    fingerprint: Fingerprint,
    given: u32,
    done: bool,
}

impl TraceDraws<'_> {
    /// The next trace job kept and in range, as the first reading took it.
    fn next_trace_job(&mut self) -> Result<Option<TraceJob>, SourceError> {
        let (source, rows) = (self.source, &mut self.rows);
        let changed = |e: trace::TraceError| source.changed(e.to_string());
        while let Some(mut tj) = rows.next_job().map_err(changed)? {
            let first = self.last_submit_s == f64::NEG_INFINITY;
            if tj.arrival_s.total_cmp(&self.last_submit_s).is_lt()
                || (first && tj.arrival_s != source.first_submit_s)
            {
                return Err(source.changed(format!("line {} moved", tj.line)));
            }
            self.last_submit_s = tj.arrival_s;
            if rows
                .arrival_from(&mut tj, source.first_submit_s)
                .map_err(changed)?
            {
                self.fingerprint.add(&tj);
                return Ok(Some(tj));
            }
        }
        Ok(None)
    }

    fn next_job(&mut self) -> Result<Option<Drawn>, SourceError> {
        let source = self.source;
        while let Some(tj) = self.next_trace_job()? {
            let line = tj.line;
            let replayed = self
                .replayer
                .job(tj)
                .map_err(|e| source.changed(e.to_string()))?;
            let Some((model, job)) = replayed else {
                continue;
            };
            let kind = source.kind_of.get(&(model, job.gpus)).copied();
            let (Some(kind), true) = (kind, self.given < source.jobs) else {
                return Err(source.changed(format!("line {line} is not the job it was")));
            };
            self.given += 1;
            return Ok(Some(Drawn { kind, job }));
        }
        if self.given < source.jobs {
            let missing = source.jobs - self.given;
            return Err(source.changed(format!("{missing} job(s) fewer")));
        }
        if self.fingerprint != source.fingerprint {
            return Err(source.changed("its jobs' times or GPUs differ".into()));
        }
        Ok(None)
    }
}

impl Iterator for TraceDraws<'_> {
    type Item = Result<Drawn, SourceError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let next = self.next_job().transpose();
        self.done = !matches!(next, Some(Ok(_)));
        next
    }
}

/// A trace job's time, scaled by the scenario's `scale`, must stay in the accepted range.
fn scaled_in_range(
    path: &Path,
    job: &TraceJob,
    scale: &str,
    checked: Result<f64, limits::OutOfRange>,
) -> Result<(), ScenarioError> {
    checked.map(|_| ()).map_err(|e| {
        ScenarioError::field(
            path,
            format!("{FIELD}.{scale}"),
            format!(
                "scaled by it, trace job `{}` (line {}) is out of range: the {e}; bring `{scale}` \
                 nearer 1",
                job.name, job.line
            ),
        )
    })
}

/// What the reader counted of the file.
struct ReaderCounts {
    rows_read: u64,
    skips: SkipCounts,
    gpu_sharing_rows: Option<u64>,
}

fn summarize(
    spec: &TraceSpec,
    replay: &Replay,
    tally: &Tally,
    reader: ReaderCounts,
) -> TraceSummary {
    let jobs_replayed = u64::from(tally.jobs);
    // Counted by index and written as text once at the end: a `to_string` per job was a
    // tenth of reading a 100k-job trace.
    let mut models: BTreeMap<String, u64> = BTreeMap::new();
    for (idx, &count) in tally.per_model.iter().enumerate() {
        if count > 0 {
            *models
                .entry(replay.models.models[idx].0.to_string())
                .or_insert(0) += count;
        }
    }
    let gpu_sharing = reader.gpu_sharing_rows.map(|in_trace| GpuSharingSummary {
        pods_in_trace: in_trace,
        pods_skipped: in_trace - tally.sharing_read,
        pods_outside_window: tally.sharing_read - tally.sharing_replayed,
        pods_replayed: tally.sharing_replayed,
    });
    TraceSummary {
        format: format(spec.format).to_string(),
        file: spec.path.clone(),
        rows_read: reader.rows_read,
        rows_skipped: reader.skips.total(),
        skips: reader.skips,
        jobs_read: tally.jobs_read,
        outside_window: tally.jobs_read - jobs_replayed,
        jobs_replayed,
        models,
        gpu_sharing,
    }
}

fn check_scales(path: &Path, spec: &TraceSpec) -> Result<(), ScenarioError> {
    for (name, value) in [
        ("arrival_scale", spec.arrival_scale),
        ("duration_scale", spec.duration_scale),
    ] {
        if !(value.is_finite() && value > 0.0) {
            return Err(ScenarioError::field(
                path,
                format!("{FIELD}.{name}"),
                format!("{value} must be a number > 0 (1.0 keeps the trace's times)"),
            ));
        }
    }
    Ok(())
}

/// The window in seconds since the first arrival; everything without one.
fn window_s(path: &Path, spec: &TraceSpec) -> Result<(f64, f64), ScenarioError> {
    match spec.window_hours {
        None => Ok((0.0, f64::INFINITY)),
        // Finite in seconds too: `inf` (or 1e306 hours) would keep every later job.
        Some((from, to)) if from >= 0.0 && to > from && (to * 3600.0).is_finite() => {
            Ok((from * 3600.0, to * 3600.0))
        }
        Some((from, to)) => Err(ScenarioError::field(
            path,
            format!("{FIELD}.window_hours"),
            format!(
                "({from}, {to}) must be (from, to) hours with 0 <= from < to, both finite (leave \
                 `window_hours` out to keep every job)"
            ),
        )),
    }
}

/// Chooses each job's model: a seeded weighted draw, or the first matching rule.
#[derive(Debug)]
struct ModelPicker {
    /// Models with their exclusive rate on the reference GPU and their jobs' minimum speed.
    models: Vec<(ModelKey, f64, Option<MinSpeed>)>,
    mix: Option<WeightedIndex<f64>>,
    rules: Vec<RuleSpec>,
}

impl ModelPicker {
    fn new(plan: &ReplayPlan<'_>) -> Result<Self, ScenarioError> {
        type Entries<'s> = (Vec<(&'s str, Option<f64>)>, Vec<f64>, Vec<RuleSpec>);
        let (names, weights, rules): Entries<'_> = match &plan.spec.models {
            ModelMapSpec::Mix(mix) => (
                mix.iter()
                    .map(|m| (m.model.as_str(), m.min_speed))
                    .collect(),
                mix.iter().map(|m| m.weight).collect(),
                Vec::new(),
            ),
            ModelMapSpec::Rules(rules) => (
                rules
                    .iter()
                    .map(|r| (r.model.as_str(), r.min_speed))
                    .collect(),
                Vec::new(),
                rules.clone(),
            ),
        };
        let kind = if rules.is_empty() { "Mix" } else { "Rules" };
        if names.is_empty() {
            return Err(ScenarioError::field(
                plan.path,
                format!("{FIELD}.models.{kind}"),
                "is empty; list at least one model",
            ));
        }
        let models = names
            .iter()
            .enumerate()
            .map(|(idx, &(name, min_speed))| {
                let entry = format!("models.{kind}[{idx}]");
                let (key, rate) = resolve_model(plan, &entry, name)?;
                let field = format!("{FIELD}.{entry}.min_speed");
                let min_speed = super::build::min_speed(plan.path, field, min_speed)?;
                Ok((key, rate, min_speed))
            })
            .collect::<Result<Vec<_>, ScenarioError>>()?;
        let mix =
            if rules.is_empty() {
                Some(WeightedIndex::new(weights).map_err(|e| {
                    ScenarioError::field(plan.path, format!("{FIELD}.models.Mix"), e)
                })?)
            } else {
                None
            };
        Ok(Self { models, mix, rules })
    }

    /// The index in `models` of the model of `job`.
    fn pick(
        &self,
        path: &Path,
        job: &TraceJob,
        rng: &mut Xoshiro256PlusPlus,
    ) -> Result<usize, ScenarioError> {
        match &self.mix {
            Some(mix) => Ok(mix.sample(rng)),
            None => self
                .rules
                .iter()
                .position(|rule| rule_matches(rule, job))
                .ok_or_else(|| unmatched(path, job)),
        }
    }
}

fn resolve_model(
    plan: &ReplayPlan<'_>,
    field: &str,
    name: &str,
) -> Result<(ModelKey, f64), ScenarioError> {
    let field = format!("{FIELD}.{field}.model");
    let key: ModelKey = name
        .parse()
        .map_err(|e| ScenarioError::field(plan.path, &field, e))?;
    let class = plan
        .perf
        .class(plan.reference, &key)
        .map_err(|e| ScenarioError::field(plan.path, &field, e))?;
    Ok((key, class.solo_rate))
}

/// Whether every condition the rule sets holds for `job`.
pub(super) fn rule_matches(rule: &RuleSpec, job: &TraceJob) -> bool {
    let hours = job.duration_s / 3600.0;
    rule.max_gpus.is_none_or(|max| job.gpus <= max)
        && rule.min_gpus.is_none_or(|min| job.gpus >= min)
        && rule.max_hours.is_none_or(|max| hours <= max)
        && rule.min_hours.is_none_or(|min| hours > min)
        && rule.gpu_sharing.is_none_or(|s| s == job.shares_gpu())
}

fn unmatched(path: &Path, job: &TraceJob) -> ScenarioError {
    ScenarioError::field(
        path,
        format!("{FIELD}.models.Rules"),
        format!(
            "no rule matches trace job `{}` (line {}: {} GPU(s), {:.3} h{}); end the list with \
             a rule without conditions, e.g. (model: \"resnet50:64:224\")",
            job.name,
            job.line,
            job.gpus,
            job.duration_s / 3600.0,
            if job.shares_gpu() {
                ", GPU-sharing"
            } else {
                ""
            }
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(gpus: u32, hours: f64, milli: Option<u32>) -> TraceJob {
        TraceJob {
            name: "j".into(),
            arrival_s: 0.0,
            duration_s: hours * 3600.0,
            gpus,
            gpu_milli: milli,
            line: 2,
        }
    }

    fn rule(max_gpus: Option<u32>, max_hours: Option<f64>, sharing: Option<bool>) -> RuleSpec {
        RuleSpec {
            max_gpus,
            min_gpus: None,
            max_hours,
            min_hours: None,
            gpu_sharing: sharing,
            model: "m:1:1".into(),
            min_speed: None,
        }
    }

    fn spec(models: ModelMapSpec) -> TraceSpec {
        TraceSpec {
            format: TraceFormatSpec::Colo,
            path: "t.csv".into(),
            nodes: None,
            strict: false,
            limit: None,
            all_states: false,
            window_hours: Some((1.0, 3.0)),
            arrival_scale: 0.5,
            duration_scale: 2.0,
            models,
            reference_gpu: None,
            node_gpu: None,
            node_gpu_map: BTreeMap::new(),
        }
    }

    fn replay_with(spec: &TraceSpec, seed: u64) -> Result<(Vec<Job>, TraceSummary), ScenarioError> {
        let profile = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../calibrate/profiles/h200-provisional.ron");
        let profiles = crate::perf::ProfileSet::load(&[profile]).unwrap();
        let perf = crate::perf::Exclusive::new(std::sync::Arc::new(profiles));
        let plan = ReplayPlan {
            path: Path::new("s.ron"),
            spec,
            seed,
            reference: hardware::gpu("h200").unwrap(),
            perf: &perf,
        };
        let mut trace_jobs = Vec::new();
        for (idx, (arrival_h, hours, gpus)) in
            [(0.5, 1.0, 1), (1.0, 0.5, 1), (2.5, 2.0, 4), (3.0, 1.0, 1)]
                .into_iter()
                .enumerate()
        {
            trace_jobs.push(TraceJob {
                line: idx as u64 + 2,
                arrival_s: arrival_h * 3600.0,
                ..job(gpus, hours, None)
            });
        }
        let trace = Trace {
            jobs: trace_jobs,
            skips: Default::default(),
            nodes: None,
            rows_read: 4,
            gpu_sharing_rows: None,
        };
        match replay_listed(spec, &Replay::new(&plan)?, trace)? {
            (Replayed::Listed(jobs), summary) => Ok((jobs, summary)),
            (Replayed::Streamed(_), _) => unreachable!("a trace read whole is listed"),
        }
    }

    #[test]
    fn replay_windows_scales_and_converts_duration_to_work() {
        let rules = ModelMapSpec::Rules(vec![
            RuleSpec {
                model: "resnet18:128:32".into(),
                ..rule(Some(1), None, None)
            },
            RuleSpec {
                model: "resnet50:64:224".into(),
                ..rule(None, None, None)
            },
        ]);
        let (jobs, summary) = replay_with(&spec(rules), 1).unwrap();
        // Jobs at 1.0 h and 2.5 h are in [1, 3) h; they restart at 0, then arrive twice as fast.
        let arrivals: Vec<f64> = jobs.iter().map(|j| j.arrival_s).collect();
        assert_eq!(arrivals, [0.0, 0.75 * 3600.0]);
        // samples = duration x duration_scale x solo rate x GPUs (provisional: 19500 and 1100).
        assert_eq!(jobs[0].samples, 0.5 * 3600.0 * 2.0 * 19500.0);
        assert_eq!(jobs[1].samples, 2.0 * 3600.0 * 2.0 * 1100.0 * 4.0);
        assert_eq!((summary.jobs_read, summary.outside_window), (4, 2));
        assert_eq!(summary.models.get("resnet50:64:224"), Some(&1));
    }

    #[test]
    fn mix_is_seeded_and_unmatched_rules_name_the_job() {
        let mix = ModelMapSpec::Mix(vec![
            super::super::schema::MixSpec {
                model: "resnet18:128:32".into(),
                weight: 1.0,
                min_speed: None,
            },
            super::super::schema::MixSpec {
                model: "vit_b_16:32:224".into(),
                weight: 1.0,
                min_speed: None,
            },
        ]);
        let models = |seed| -> Vec<ModelKey> {
            let (jobs, _) = replay_with(&spec(mix.clone()), seed).unwrap();
            jobs.into_iter().map(|j| j.model).collect()
        };
        assert_eq!(models(7), models(7));
        let only_single = ModelMapSpec::Rules(vec![RuleSpec {
            model: "resnet18:128:32".into(),
            ..rule(Some(1), None, None)
        }]);
        let err = replay_with(&spec(only_single), 1).unwrap_err().to_string();
        assert!(
            err.contains("no rule matches trace job `j` (line 4: 4 GPU(s)"),
            "{err}"
        );
    }

    #[test]
    fn rules_check_every_condition_they_set() {
        let short_single = rule(Some(1), Some(1.0), None);
        assert!(rule_matches(&short_single, &job(1, 1.0, None)));
        assert!(!rule_matches(&short_single, &job(1, 1.01, None)));
        assert!(!rule_matches(&short_single, &job(2, 0.5, None)));
        let sharing = rule(None, None, Some(true));
        assert!(rule_matches(&sharing, &job(1, 9.0, Some(300))));
        assert!(!rule_matches(&sharing, &job(1, 9.0, Some(1000))));
        assert!(!rule_matches(&sharing, &job(1, 9.0, None)));
        assert!(rule_matches(&rule(None, None, None), &job(64, 900.0, None)));
    }
}
