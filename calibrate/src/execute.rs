//! Executes a plan with a runner: skips what the store already holds, runs the rest group by
//! group, and appends one record per process-point as it arrives.
use std::path::{Path, PathBuf};
use std::time::Instant;

use colo_sim::hardware::GpuSpec;

use crate::plan::{self, Group, Plan, PlanError, ProcSettings, SettingLists};
use crate::runner::{
    CommandResult, CommandSet, Launch, ProcessRunner, Report, RunError, Runner, Step, TraceJob,
    TraceSettings, trace_file_name,
};
use crate::store::{
    self, Appender, Measurement, RECORD_FORMAT_VERSION, Record, RecordKey, Source, Status, Workload,
};
use crate::tracing::{self, Origin, TRACES_DIR};
use colo_sim::perf::MeasuredMode;

/// Options of a plan run.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Start no new work after this instant; unfinished points stay unrecorded (resumable).
    pub deadline: Option<Instant>,
    /// Let the runner create MIG instances for Mig groups that give `mig_profiles` instead of
    /// `mig_uuids`, and destroy them after each group (`--allow-mig-reconfigure`).
    pub allow_mig_reconfigure: bool,
}

/// What a plan run did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunOutcome {
    /// Store file.
    pub store: PathBuf,
    /// Records written by this run.
    pub written: usize,
    /// Of those, records with a status other than ok.
    pub failed: usize,
    /// Set repeats skipped because the store already had them.
    pub already_done: usize,
    /// Whether the deadline stopped the run before the plan's end.
    pub stopped_early: bool,
    /// Unreadable store lines `(line, message)`, skipped.
    pub bad_lines: Vec<(usize, String)>,
    /// Store records dropped as written twice (the latest of each process of a set repeat
    /// is kept).
    pub duplicates: usize,
    /// Whether Ctrl-C or SIGTERM stopped the run: no work was started after it, the workers
    /// were stopped, and what was recorded before it stays (a re-run resumes).
    pub interrupted: bool,
    /// Kernel traces written by this run (groups with `trace: true`, into `OUT/traces/`).
    pub traced: usize,
    /// Points of such groups the tracer failed on (no trace file; a re-run tries again).
    pub trace_failed: usize,
}

/// Steps of a group not yet in the store, repeat-major (repeat r of every set before r + 1).
pub fn pending_steps(
    plan: &Plan,
    group: &Group,
    done: &std::collections::BTreeSet<RecordKey>,
) -> (Vec<Step>, usize) {
    let mut steps = Vec::new();
    let mut already = 0;
    for repeat in 0..plan.repeats {
        for set_index in 0..group.sets.len() {
            let finished = (0..group.n_procs())
                .all(|rank| done.contains(&(group.id.clone(), set_index, repeat, rank)));
            if finished {
                already += 1;
            } else {
                steps.push(Step { set_index, repeat });
            }
        }
    }
    (steps, already)
}

/// Opens `out_dir/<name>.jsonl` for appending: the records it already holds, the appender, and
/// an outcome that reports its unreadable lines. The appender locks the store before it is
/// read, so no other run appends between the reading and the end of this run.
fn open_store(out_dir: &Path, name: &str) -> Result<(Vec<Record>, Appender, RunOutcome), RunError> {
    let path = store::store_path(out_dir, name);
    let appender = Appender::open(&path)?;
    let loaded = store::load(&path)?;
    let outcome = RunOutcome {
        store: path,
        bad_lines: loaded.skipped,
        duplicates: loaded.duplicates,
        ..RunOutcome::default()
    };
    Ok((loaded.records, appender, outcome))
}

/// Runs the plan, appending to `out_dir/<plan>.jsonl`; `progress` receives one line per group.
pub fn run_plan(
    plan: &Plan,
    runner: &mut dyn Runner,
    out_dir: &Path,
    opts: &RunOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<RunOutcome, RunError> {
    refuse_unallowed_mig_groups(plan, opts)?;
    refuse_another_gpu_type(plan, &runner.gpu().name)?;
    let (records, mut appender, mut outcome) = open_store(out_dir, &plan.name)?;
    let done_anywhere = store::done_keys(&records);
    let done_on_this_gpu = store::done_keys_on(&records, &runner.gpu().uuid);
    // One pass over the groups with every repeat, or one pass per repeat.
    let passes: Vec<Option<u32>> = if plan.interleave_groups {
        (0..plan.repeats).map(Some).collect()
    } else {
        vec![None]
    };
    let last_pass = passes.last().copied().flatten();
    'passes: for pass in passes {
        for group in &plan.groups {
            let done = if group.per_gpu {
                &done_on_this_gpu
            } else {
                &done_anywhere
            };
            if opts.deadline.is_some_and(|d| Instant::now() > d) {
                outcome.stopped_early = true;
                break 'passes;
            }
            if crate::runner::interrupted() {
                outcome.interrupted = true;
                break 'passes;
            }
            let (mut steps, mut already) = pending_steps(plan, group, done);
            if let Some(repeat) = pass {
                steps.retain(|s| s.repeat == repeat);
                already = group.sets.len() - steps.len();
            }
            outcome.already_done += already;
            if !steps.is_empty() {
                progress(&format!(
                    "group {} ({}, {} processes): {} set repeats to run, {already} already done",
                    group.id,
                    group.mode.label(),
                    group.n_procs(),
                    steps.len()
                ));
                let launch = Launch {
                    group,
                    steps,
                    warmup_s: plan.warmup_s,
                    window_s: plan.window_s,
                    deadline: opts.deadline,
                    allow_mig_reconfigure: opts.allow_mig_reconfigure,
                };
                let res = run_launch(plan, &launch, runner, &mut appender, &mut outcome, progress);
                if stopped_by_interrupt(res, &mut outcome)? {
                    break 'passes;
                }
            }
            // A group's points are traced once, after its last repeat.
            if group.trace
                && pass == last_pass
                && opts.deadline.is_none_or(|d| Instant::now() <= d)
                && !crate::runner::interrupted()
            {
                let res = trace_group(plan, group, runner, out_dir, opts, &mut outcome, progress);
                if stopped_by_interrupt(res, &mut outcome)? {
                    break 'passes;
                }
            }
        }
    }
    if opts.deadline.is_some_and(|d| Instant::now() > d) {
        outcome.stopped_early = true;
    }
    Ok(outcome)
}

/// Whether `res` is the runner's [`RunError::Interrupted`] (then marked in `outcome`); other
/// errors are returned.
fn stopped_by_interrupt(
    res: Result<(), RunError>,
    outcome: &mut RunOutcome,
) -> Result<bool, RunError> {
    match res {
        Ok(()) => Ok(false),
        Err(RunError::Interrupted) => {
            outcome.interrupted = true;
            Ok(true)
        }
        Err(err) => Err(err),
    }
}

/// Traces every distinct point of a `trace: true` group once into `out_dir/traces/` (points
/// whose file exists are skipped without starting the tracer), with the plan's warm-up and
/// window, appending each outcome to `traces/index.jsonl`.
fn trace_group(
    plan: &Plan,
    group: &Group,
    runner: &mut dyn Runner,
    out_dir: &Path,
    opts: &RunOptions,
    outcome: &mut RunOutcome,
    progress: &mut dyn FnMut(&str),
) -> Result<(), RunError> {
    let points = group.distinct_points();
    let dir = out_dir.join(TRACES_DIR);
    let missing = points
        .iter()
        .filter(|p| !dir.join(trace_file_name(p)).is_file())
        .count();
    if missing == 0 {
        return Ok(());
    }
    progress(&format!(
        "group {}: tracing {missing} points alone into {} ({} already traced)",
        group.id,
        dir.display(),
        points.len() - missing
    ));
    let job = TraceJob {
        points: &points,
        out_dir: &dir,
        settings: TraceSettings {
            warmup_s: plan.warmup_s,
            window_s: plan.window_s,
            ..TraceSettings::default()
        },
        deadline: opts.deadline,
    };
    let origin = Origin {
        plan: &plan.name,
        group: &group.id,
    };
    let traced = tracing::trace_points(runner, &job, Some(origin), &mut |report| {
        if report.status.failed() {
            let error = report.error.as_deref().unwrap_or("");
            progress(&format!(
                "  {} trace {}: {} {error}",
                group.id,
                report.point,
                report.status.label()
            ));
        }
    })?;
    for warning in traced.warnings() {
        progress(&format!("warning: {warning}"));
    }
    outcome.traced += traced.count(crate::runner::TraceStatus::Ok);
    outcome.trace_failed += traced.failed();
    Ok(())
}

/// Refuses, before anything starts, a plan with a group whose MIG instances would have to be
/// created when creating them is not allowed.
pub fn refuse_unallowed_mig_groups(plan: &Plan, opts: &RunOptions) -> Result<(), RunError> {
    let refused = plan.groups.iter().find(|g| g.creates_mig_instances());
    match (refused, opts.allow_mig_reconfigure) {
        (Some(group), false) => Err(RunError::MigReconfigureNotAllowed {
            group: group.id.clone(),
        }),
        _ => Ok(()),
    }
}

/// Refuses a plan whose groups emulate or create MIG slices of its `gpu` on a GPU of another
/// type of the catalog (`gpu_name` as the runner names it); a GPU the catalog does not know
/// (the fake runner's) is taken for the plan's.
fn refuse_another_gpu_type(plan: &Plan, gpu_name: &str) -> Result<(), RunError> {
    let uses_profiles = plan
        .groups
        .iter()
        .any(|g| g.mode == MeasuredMode::MigEmulated || g.creates_mig_instances());
    match colo_sim::hardware::gpu(gpu_name) {
        Ok(found) if uses_profiles && found.name != plan.gpu.name => Err(RunError::OtherGpu {
            plan: plan.name.clone(),
            wants: plan.gpu.name,
            found: gpu_name.to_owned(),
        }),
        _ => Ok(()),
    }
}

/// Runs one launch, appending each record as it arrives, and syncing the store to the disk
/// when a set repeat has all its records (and at the launch's end).
fn run_launch(
    plan: &Plan,
    launch: &Launch<'_>,
    runner: &mut dyn Runner,
    appender: &mut Appender,
    outcome: &mut RunOutcome,
    progress: &mut dyn FnMut(&str),
) -> Result<(), RunError> {
    let gpu = runner.gpu().clone();
    let source = runner.source();
    let n_procs = launch.group.n_procs();
    let mut arrived = vec![0usize; launch.steps.len()];
    let mut unsynced = false;
    let mut on_report = |report: Report| -> Result<(), RunError> {
        let rec = make_record(plan, launch, &report, &gpu, source);
        let measured = &rec.measurement;
        if measured.status != Status::Ok {
            outcome.failed += 1;
            let error = measured.error.as_deref().unwrap_or("");
            progress(&format!(
                "  {} rank {} {}: {:?} {error}",
                rec.group, rec.rank, rec.workload, measured.status
            ));
        }
        outcome.written += 1;
        appender.append(&rec)?;
        unsynced = true;
        if let Some(count) = arrived.get_mut(report.step) {
            *count += 1;
            if *count == n_procs {
                appender.sync()?;
                unsynced = false;
            }
        }
        Ok(())
    };
    let res = runner.run(launch, &mut on_report);
    if unsynced {
        appender.sync()?;
    }
    res
}

fn make_record(
    plan: &Plan,
    launch: &Launch<'_>,
    report: &Report,
    gpu: &crate::gpu::GpuInfo,
    source: Source,
) -> Record {
    let group = launch.group;
    let step = launch.steps[report.step];
    let set = &group.sets[step.set_index];
    let point = &set[report.rank];
    let proc = &group.procs[report.rank];
    let co_runners = set
        .iter()
        .enumerate()
        .filter(|(r, _)| *r != report.rank)
        .map(|(_, p)| Workload::Point(p.clone()))
        .collect();
    Record {
        format_version: RECORD_FORMAT_VERSION,
        source,
        plan: plan.name.clone(),
        group: group.id.clone(),
        set_index: step.set_index,
        repeat: step.repeat,
        rank: report.rank,
        workload: Workload::Point(point.clone()),
        mode: group.mode,
        n_procs: group.n_procs(),
        co_runners,
        sm_percent: proc.sm_percent,
        mem_limit_mib: proc.mem_limit_mib,
        mig_profile: proc.mig_profile.clone(),
        mig_uuid: report.mig_uuid.clone().or_else(|| proc.mig_uuid.clone()),
        gpu_name: gpu.name.clone(),
        driver: gpu.driver.clone(),
        gpu_uuid: gpu.uuid.clone(),
        measurement: report.measurement.clone(),
    }
}

/// A set of user commands to profile together (`colo calibrate profile`).
#[derive(Debug, Clone)]
pub struct CommandPlan {
    /// Store name: records go to `<name>.jsonl`, group `cmd`.
    pub name: String,
    /// Sharing mode.
    pub mode: MeasuredMode,
    /// Per-command settings.
    pub procs: Vec<ProcSettings>,
    /// Shell commands, started together.
    pub commands: Vec<String>,
    /// Times the set runs (one after the other).
    pub repeats: u32,
    /// Progress reports in the first seconds are ignored.
    pub warmup_s: f64,
    /// A command still running after this many seconds is killed (status timeout).
    pub timeout_s: f64,
}

impl CommandPlan {
    /// Checks a plan given on the command line (`colo calibrate profile`): one command in mode
    /// Exclusive, at least [`MIN_REPEATS`](crate::plan::MIN_REPEATS) repeats, and per-command
    /// settings from `lists` (checked as a plan group's, named by their flags; MIG profiles are
    /// `gpu`'s), which replace `procs`.
    ///
    /// # Errors
    /// [`PlanError`] naming the flag at fault.
    pub fn with_flags(
        self,
        lists: &SettingLists<'_>,
        gpu: &'static GpuSpec,
    ) -> Result<CommandPlan, PlanError> {
        let (mode, n_procs) = (self.mode, self.commands.len());
        if mode == MeasuredMode::Exclusive && n_procs != 1 {
            return Err(PlanError::Flag(format!(
                "--mode exclusive runs one command; use timeslice or mps for {n_procs}"
            )));
        }
        if self.repeats < plan::MIN_REPEATS {
            let min = plan::MIN_REPEATS;
            return Err(PlanError::Flag(format!(
                "--repeats {}: at least {min} (noise must be measured)",
                self.repeats
            )));
        }
        let flag = |field: &str| format!("--{}", field.replace('_', "-"));
        let procs = plan::settings(mode, n_procs, lists, gpu, &flag, Path::new("command line"))?;
        Ok(CommandPlan { procs, ..self })
    }
}

/// Profiles the commands `repeats` times, skipping repeats the store already holds.
pub fn profile_commands(
    plan: &CommandPlan,
    runner: &mut ProcessRunner,
    out_dir: &Path,
    progress: &mut dyn FnMut(&str),
) -> Result<RunOutcome, RunError> {
    crate::runner::require_existing_mig_instances(plan.mode, &plan.procs)?;
    let (records, mut appender, mut outcome) = open_store(out_dir, &plan.name)?;
    let done = store::done_keys(&records);
    for repeat in 0..plan.repeats {
        if (0..plan.commands.len()).all(|rank| done.contains(&("cmd".to_string(), 0, repeat, rank)))
        {
            outcome.already_done += 1;
            continue;
        }
        if crate::runner::interrupted() {
            outcome.interrupted = true;
            break;
        }
        progress(&format!(
            "repeat {repeat}: {} commands ({})",
            plan.commands.len(),
            plan.mode.label()
        ));
        let set = CommandSet {
            mode: plan.mode,
            procs: &plan.procs,
            commands: &plan.commands,
            warmup_s: plan.warmup_s,
            timeout_s: plan.timeout_s,
        };
        let results = match runner.profile_commands(&set) {
            Ok(results) => results,
            Err(RunError::Interrupted) => {
                outcome.interrupted = true;
                break;
            }
            Err(err) => return Err(err),
        };
        let source = runner.source();
        for result in results {
            let rec = command_record(plan, repeat, &result, runner.gpu(), source);
            outcome.written += 1;
            outcome.failed += usize::from(rec.measurement.status != Status::Ok);
            appender.append(&rec)?;
        }
        appender.sync()?;
    }
    Ok(outcome)
}

fn command_record(
    plan: &CommandPlan,
    repeat: u32,
    res: &CommandResult,
    gpu: &crate::gpu::GpuInfo,
    source: Source,
) -> Record {
    let proc = &plan.procs[res.rank];
    Record {
        format_version: RECORD_FORMAT_VERSION,
        source,
        plan: plan.name.clone(),
        group: "cmd".into(),
        set_index: 0,
        repeat,
        rank: res.rank,
        workload: Workload::Command(plan.commands[res.rank].clone()),
        mode: plan.mode,
        n_procs: plan.commands.len(),
        co_runners: plan
            .commands
            .iter()
            .enumerate()
            .filter(|(r, _)| *r != res.rank)
            .map(|(_, c)| Workload::Command(c.clone()))
            .collect(),
        sm_percent: proc.sm_percent,
        mem_limit_mib: proc.mem_limit_mib,
        mig_profile: proc.mig_profile.clone(),
        mig_uuid: proc.mig_uuid.clone(),
        gpu_name: gpu.name.clone(),
        driver: gpu.driver.clone(),
        gpu_uuid: gpu.uuid.clone(),
        measurement: Measurement {
            t_start: res.t_start,
            t_end: res.t_end,
            status: res.status,
            samples_per_s: res.samples_per_s,
            iterations: None,
            window_s: Some(res.lifetime_s - plan.warmup_s)
                .filter(|w| *w > 0.0 && res.samples_per_s.is_some()),
            warmup_s: Some(plan.warmup_s),
            cpu_time_s: None,
            peak_allocated_mib: None,
            peak_reserved_mib: None,
            gpu: res.gpu.clone(),
            co_failed: Vec::new(),
            error: res.error.clone(),
            env: res.env.clone(),
            framework: None,
            lifetime_s: Some(res.lifetime_s),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::FakeRunner;
    use colo_sim::workload::ModelKey;

    const PLAN: &str = r#"(name: "t", groups: [
        (id: "alone", mode: Exclusive, sets: [["resnet18:128:32"], ["resnet50:64:224"]]),
        (id: "pairs", mode: Timeslice, sets: [["resnet18:128:32", "oom:1:1"], ["crash:1:1", "resnet50:64:224"]]),
    ])"#;

    fn plan() -> Plan {
        Plan::parse(PLAN, Path::new("t.ron")).expect("test plan")
    }

    fn command_plan(mode: MeasuredMode, commands: usize, repeats: u32) -> CommandPlan {
        CommandPlan {
            name: "profile".into(),
            mode,
            procs: Vec::new(),
            commands: vec!["true".into(); commands],
            repeats,
            warmup_s: 1.0,
            timeout_s: 10.0,
        }
    }

    #[test]
    fn issue_37_a_set_repeat_with_only_some_processes_recorded_runs_again() {
        use std::collections::BTreeSet;
        let plan = plan();
        let pairs = &plan.groups[1];
        let key = |set: usize, repeat: u32, rank: usize| ("pairs".to_owned(), set, repeat, rank);
        let all = pairs.sets.len() * plan.repeats as usize;
        let (steps, already) = pending_steps(&plan, pairs, &BTreeSet::new());
        assert_eq!((steps.len(), already), (all, 0));
        // Rank 0 of set 0, repeat 0 recorded, rank 1 not: it runs again.
        let half: BTreeSet<RecordKey> = [key(0, 0, 0)].into();
        let (steps, already) = pending_steps(&plan, pairs, &half);
        assert_eq!((steps.len(), already), (all, 0));
        assert_eq!((steps[0].set_index, steps[0].repeat), (0, 0));
        // Both ranks: finished, skipped.
        let whole: BTreeSet<RecordKey> = [key(0, 0, 0), key(0, 0, 1)].into();
        let (steps, already) = pending_steps(&plan, pairs, &whole);
        assert_eq!((steps.len(), already), (all - 1, 1));
        assert!(!steps.iter().any(|s| (s.set_index, s.repeat) == (0, 0)));
        // Another group's keys do not count.
        let (_, already) = pending_steps(&plan, &plan.groups[0], &whole);
        assert_eq!(already, 0);
    }

    #[test]
    fn mig_slices_of_one_gpu_type_are_refused_on_another() {
        let text = r#"(name: "m", gpu: "a100-40gb", groups: [
            (id: "alone", mode: Exclusive, sets: [["resnet18:128:32"]]),
            (id: "m", mode: MigEmulated, mig_profiles: ["3g.20gb"], sets: [["resnet18:128:32"]]),
        ])"#;
        let plan = Plan::parse(text, Path::new("m.ron")).expect("plan");
        let err = refuse_another_gpu_type(&plan, "NVIDIA H200").expect_err("refused");
        assert!(
            err.to_string().contains("MIG profiles of the a100-40gb"),
            "{err}"
        );
        refuse_another_gpu_type(&plan, "NVIDIA A100-SXM4-40GB").expect("its type");
        refuse_another_gpu_type(&plan, "Fake GPU").expect("unknown GPUs are taken");
        let mut alone = plan.clone();
        alone.groups.truncate(1);
        refuse_another_gpu_type(&alone, "NVIDIA H200").expect("no MIG profile: any GPU");
    }

    #[test]
    fn command_plans_are_checked_as_their_flags() {
        let budgets = [45, 48];
        let lists = SettingLists {
            sm_percent: &budgets,
            ..SettingLists::default()
        };
        let h200 = colo_sim::hardware::gpu("h200").expect("h200");
        let ok = command_plan(MeasuredMode::Mps, 2, 3)
            .with_flags(&lists, h200)
            .expect("valid");
        assert_eq!(ok.procs.len(), 2);
        assert_eq!(ok.procs[1].sm_percent, Some(48));
        let err = |plan: CommandPlan, lists: &SettingLists<'_>| {
            plan.with_flags(lists, h200)
                .expect_err("refused")
                .to_string()
        };
        let none = SettingLists::default();
        assert_eq!(
            err(command_plan(MeasuredMode::Exclusive, 2, 3), &none),
            "--mode exclusive runs one command; use timeslice or mps for 2"
        );
        assert_eq!(
            err(command_plan(MeasuredMode::Timeslice, 2, 2), &none),
            "--repeats 2: at least 3 (noise must be measured)"
        );
        let e = err(command_plan(MeasuredMode::Timeslice, 2, 3), &lists);
        assert!(e.starts_with("command line: --sm-percent: "), "{e}");
    }

    fn run(plan: &Plan, dir: &Path) -> RunOutcome {
        run_plan(
            plan,
            &mut FakeRunner::new(),
            dir,
            &RunOptions::default(),
            &mut |_| {},
        )
        .expect("fake run")
    }

    #[test]
    fn every_point_is_measured_in_interleaved_repeats() {
        let dir = tempfile::tempdir().expect("temp dir");
        let outcome = run(&plan(), dir.path());
        assert_eq!(outcome.written, 3 * (2 + 4));
        let loaded = store::load(&outcome.store).expect("store");
        let alone: Vec<(u32, usize)> = loaded
            .records
            .iter()
            .filter(|r| r.group == "alone")
            .map(|r| (r.repeat, r.set_index))
            .collect();
        assert_eq!(alone, vec![(0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1)]);
    }

    /// (group, repeat) of each set repeat in the order the store holds them.
    fn order(store: &Path) -> Vec<(String, u32)> {
        let loaded = store::load(store).expect("store");
        let mut order: Vec<(String, u32)> = Vec::new();
        for r in loaded.records {
            let key = (r.group.clone(), r.repeat);
            if order.last() != Some(&key) {
                order.push(key);
            }
        }
        order
    }

    #[test]
    fn groups_run_whole_one_after_another_unless_interleaved_by_repeat() {
        let dir = tempfile::tempdir().expect("temp dir");
        let whole = run(&plan(), dir.path());
        let at = |g: &str, r: u32| (g.to_owned(), r);
        assert_eq!(
            order(&whole.store),
            [
                at("alone", 0),
                at("alone", 1),
                at("alone", 2),
                at("pairs", 0),
                at("pairs", 1),
                at("pairs", 2)
            ]
        );
        // Interleaved: each alone repeat runs just before the pairs' repeat of the same index.
        let text = PLAN.replace(r#"(name: "t","#, r#"(name: "t", interleave_groups: true,"#);
        let interleaved = Plan::parse(&text, Path::new("t.ron")).expect("test plan");
        let dir = tempfile::tempdir().expect("temp dir");
        let first = run(&interleaved, dir.path());
        assert_eq!(first.written, 3 * (2 + 4));
        assert_eq!(
            order(&first.store),
            [
                at("alone", 0),
                at("pairs", 0),
                at("alone", 1),
                at("pairs", 1),
                at("alone", 2),
                at("pairs", 2)
            ]
        );
        // A re-run finds every repeat done, counted once per set repeat.
        let again = run(&interleaved, dir.path());
        assert_eq!((again.written, again.already_done), (0, 12));
        // Launches: one per group and repeat (2 x 3 x 15 s), against one per group.
        assert!(
            (interleaved.estimated_gpu_s() - plan().estimated_gpu_s() - 4.0 * 15.0).abs() < 1e-9
        );
    }

    #[test]
    fn failures_are_recorded_with_their_status() {
        let dir = tempfile::tempdir().expect("temp dir");
        let outcome = run(&plan(), dir.path());
        assert_eq!(outcome.failed, 6);
        let loaded = store::load(&outcome.store).expect("store");
        let oom = loaded
            .records
            .iter()
            .find(|r| r.workload.point().is_some_and(|k| k.model == "oom"))
            .expect("oom record");
        assert_eq!(oom.measurement.status, Status::Oom);
        assert_eq!(
            oom.co_runners,
            vec![Workload::Point(ModelKey::new("resnet18", 128, 32))]
        );
        let crash = loaded
            .records
            .iter()
            .find(|r| r.workload.point().is_some_and(|k| k.model == "crash"))
            .expect("crash record");
        assert_eq!(crash.measurement.status, Status::Crash);
        let partner = loaded
            .records
            .iter()
            .find(|r| r.group == "pairs" && r.set_index == 1 && r.rank == 1)
            .expect("partner");
        assert_eq!(
            (
                partner.measurement.status,
                partner.measurement.co_failed.clone()
            ),
            (Status::Ok, vec![0])
        );
    }

    #[test]
    fn rerun_resumes_only_what_is_missing() {
        let dir = tempfile::tempdir().expect("temp dir");
        let first = run(&plan(), dir.path());
        let again = run(&plan(), dir.path());
        assert_eq!((again.written, again.already_done), (0, 12));
        // Drop the last two lines (one pair's repeat): only that repeat runs again.
        let text = std::fs::read_to_string(&first.store).expect("read");
        let kept: Vec<&str> = text.lines().collect();
        std::fs::write(&first.store, kept[..kept.len() - 2].join("\n") + "\n").expect("write");
        let resumed = run(&plan(), dir.path());
        assert_eq!((resumed.written, resumed.already_done), (2, 11));
    }

    #[test]
    fn per_gpu_groups_run_again_on_another_gpu() {
        let plan_text = PLAN.replace(
            r#"(id: "alone", mode: Exclusive,"#,
            r#"(id: "alone", mode: Exclusive, per_gpu: true,"#,
        );
        let per_gpu_plan = Plan::parse(&plan_text, Path::new("t.ron")).expect("test plan");
        let dir = tempfile::tempdir().expect("temp dir");
        let first = run(&per_gpu_plan, dir.path());
        // The same store carried to another GPU: only the per-GPU group (6 records) runs again.
        let text = std::fs::read_to_string(&first.store).expect("read");
        std::fs::write(&first.store, text.replace("GPU-fake", "GPU-other")).expect("write");
        let moved = run(&per_gpu_plan, dir.path());
        assert_eq!((moved.written, moved.already_done), (6, 6));
        let same_gpu_again = run(&per_gpu_plan, dir.path());
        assert_eq!(same_gpu_again.written, 0);
    }

    #[test]
    fn unreadable_lines_are_reported_not_fatal() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("t.jsonl"), "{broken\n").expect("write");
        let outcome = run(&plan(), dir.path());
        assert_eq!(outcome.bad_lines.len(), 1);
        assert_eq!(outcome.bad_lines[0].0, 1);
        assert_eq!(outcome.written, 18);
    }

    #[test]
    fn traced_groups_trace_each_distinct_point_once_and_resume_missing_traces() {
        let text = r#"(name: "t", groups: [
            (id: "alone", mode: Exclusive, trace: true,
             sets: [["resnet18:128:32"], ["oom:1:1"], ["resnet18:128:32"], ["resnet50:64:224"]]),
            (id: "pairs", mode: Timeslice, sets: [["resnet18:128:32", "resnet26:32:32"]]),
        ])"#;
        let plan = Plan::parse(text, Path::new("t.ron")).expect("test plan");
        let dir = tempfile::tempdir().expect("temp dir");
        let first = run(&plan, dir.path());
        assert_eq!((first.traced, first.trace_failed), (2, 1));
        let traces = dir.path().join(TRACES_DIR);
        let h200 = colo_sim::hardware::gpu("h200").expect("h200");
        let folder = crate::trace::read_folder(&traces, h200).expect("traces");
        let points: Vec<&str> = folder
            .tables
            .traces
            .iter()
            .map(|t| t.point.as_str())
            .collect();
        assert_eq!(
            points,
            vec!["resnet18:128:32", "resnet50:64:224"],
            "pairs are not traced"
        );
        // A lost trace is taken again on resume, though every set repeat is recorded.
        std::fs::remove_file(traces.join("resnet50_64_224.trace.json.gz")).expect("remove");
        let again = run(&plan, dir.path());
        assert_eq!((again.written, again.traced, again.trace_failed), (0, 1, 1));
        let entries = tracing::load_index(&traces).expect("index").entries;
        let lines: Vec<(&str, &str)> = entries
            .iter()
            .map(|e| (e.point.as_str(), e.status.label()))
            .collect();
        assert_eq!(
            lines,
            vec![
                ("resnet18:128:32", "ok"),
                ("oom:1:1", "oom"),
                ("resnet50:64:224", "ok"),
                ("oom:1:1", "oom"),
                ("resnet50:64:224", "ok"),
            ]
        );
        assert!(entries.iter().all(|e| e.group.as_deref() == Some("alone")));
    }

    #[test]
    fn issue_34_the_store_is_synced_once_per_set_repeat() {
        let dir = tempfile::tempdir().expect("temp dir");
        let before = store::SYNCS.with(std::cell::Cell::get);
        let outcome = run(&plan(), dir.path());
        let syncs = store::SYNCS.with(std::cell::Cell::get) - before;
        // 2 + 2 sets, 3 repeats each; 18 records.
        assert_eq!((syncs, outcome.written), (12, 18));
    }

    #[test]
    fn issue_34_a_store_another_run_holds_is_refused_before_anything_runs() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = store::store_path(dir.path(), "t");
        let _held = Appender::open(&path).expect("the other run");
        let err = run_plan(
            &plan(),
            &mut FakeRunner::new(),
            dir.path(),
            &RunOptions::default(),
            &mut |_| {},
        )
        .expect_err("locked")
        .to_string();
        assert!(
            err.contains("t.jsonl: another colo process holds this store"),
            "{err}"
        );
        assert_eq!(std::fs::read(&path).expect("store").len(), 0);
    }

    #[test]
    fn issue_34_a_repeat_written_again_on_resume_counts_once() {
        let dir = tempfile::tempdir().expect("temp dir");
        let first = run(&plan(), dir.path());
        // A kill after the first record of a pair's repeat: the resumed run writes it again.
        let text = std::fs::read_to_string(&first.store).expect("read");
        let kept: Vec<&str> = text.lines().collect();
        std::fs::write(&first.store, kept[..kept.len() - 1].join("\n") + "\n").expect("write");
        let resumed = run(&plan(), dir.path());
        assert_eq!(resumed.written, 2);
        let loaded = store::load(&first.store).expect("store");
        assert_eq!((loaded.records.len(), loaded.duplicates), (18, 1));
        let rows = crate::summary::summarize(&loaded.records);
        assert!(rows.iter().all(|r| r.n_ok + r.n_failed == 3), "{rows:?}");
    }

    #[test]
    fn a_passed_deadline_starts_nothing() {
        let dir = tempfile::tempdir().expect("temp dir");
        let opts = RunOptions {
            deadline: Some(Instant::now()),
            ..RunOptions::default()
        };
        let outcome = run_plan(
            &plan(),
            &mut FakeRunner::new(),
            dir.path(),
            &opts,
            &mut |_| {},
        )
        .expect("run");
        assert_eq!(outcome.written, 0);
        assert!(outcome.stopped_early);
    }
}
