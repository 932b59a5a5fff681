//! Profiling arbitrary user commands (`colo calibrate profile --cmd "python train.py ..."`).
//!
//! The commands of a set start together under the mode's environment and run to completion.
//! A command that prints lines containing `samples=<N>` (cumulative samples trained so far) is
//! measured by its progress: samples/s between the first report after the warm-up and the last
//! report. A command that prints none is measured by its lifetime only.
use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt as _;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::{CLEARED_ENV, MpsDirs, RunError, interrupted, worker_env};
use crate::gpu::{self, Sampler, WindowStats};
use crate::plan::ProcSettings;
use crate::store::Status;
use colo_sim::perf::MeasuredMode;

/// A set of user commands run together.
#[derive(Debug, Clone)]
pub struct CommandSet<'a> {
    /// Sharing mode.
    pub mode: MeasuredMode,
    /// Per-command settings (one per command).
    pub procs: &'a [ProcSettings],
    /// Shell commands (run with `sh -c`).
    pub commands: &'a [String],
    /// Progress reports in the first seconds are ignored (start-up, warm-up).
    pub warmup_s: f64,
    /// Commands still running after this many seconds are killed (status timeout).
    pub timeout_s: f64,
}

/// How one command went.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandResult {
    /// Index of the command in the set.
    pub rank: usize,
    /// `ok` (exit 0), `error` (other exit), `timeout`.
    pub status: Status,
    /// Start, unix seconds.
    pub t_start: f64,
    /// Exit, unix seconds.
    pub t_end: f64,
    /// Seconds from start to exit.
    pub lifetime_s: f64,
    /// Samples/s from progress reports, if the command printed at least two after warm-up.
    pub samples_per_s: Option<f64>,
    /// Last cumulative sample count reported.
    pub samples: Option<f64>,
    /// Why it failed.
    pub error: Option<String>,
    /// GPU state over the measured span.
    pub gpu: WindowStats,
    /// Environment set for the command.
    pub env: serde_json::Map<String, serde_json::Value>,
}

/// Refuses commands in mode Mig without instance UUIDs: profiling never creates MIG instances.
pub fn require_existing_mig_instances(
    mode: MeasuredMode,
    procs: &[ProcSettings],
) -> Result<(), RunError> {
    match crate::plan::creates_mig_instances(mode, procs) {
        true => Err(RunError::Unsupported(
            "`colo calibrate profile` runs only on existing MIG instances: give --mig-uuid per \
             command (`nvidia-smi -L` lists them), or use `colo calibrate run` with \
             --allow-mig-reconfigure"
                .into(),
        )),
        false => Ok(()),
    }
}

/// Reads `samples=<N>` from a line.
pub fn parse_progress(line: &str) -> Option<f64> {
    let rest = &line[line.find("samples=")? + "samples=".len()..];
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    rest[..end].parse().ok()
}

/// Samples/s from `(unix time, cumulative samples)` reports made after `after`.
fn progress_rate(reports: &[(f64, f64)], after: f64) -> Option<f64> {
    let kept: Vec<&(f64, f64)> = reports.iter().filter(|r| r.0 >= after).collect();
    let (first, last) = (kept.first()?, kept.last()?);
    (last.0 > first.0).then(|| (last.1 - first.1) / (last.0 - first.0))
}

/// Why a command that reported progress has no rate: its reports all came before the end of
/// the warm-up, or only one after it (found on an H100: a slow-starting program's first step
/// came after the warm-up and the stop, and the record said ok with no rate and no reason).
fn no_rate_note(
    reports: &[(f64, f64)],
    rate: Option<f64>,
    started: f64,
    warmup_s: f64,
) -> Option<String> {
    if rate.is_some() || reports.is_empty() {
        return None;
    }
    let after = reports.iter().filter(|r| r.0 >= started + warmup_s).count();
    let first = reports[0].0 - started;
    Some(format!(
        "no samples/s: {} progress report(s), {after} after the {warmup_s} s warm-up (first at \
         {first:.1} s); two are needed: run it longer (--run-s) or warm up less (--warmup-s)",
        reports.len()
    ))
}

struct Running {
    child: Option<Child>,
    started: f64,
    ended: Option<(f64, Status, Option<String>)>,
    progress: Vec<(f64, f64)>,
}

impl super::ProcessRunner {
    /// Runs a set of commands together under the mode and measures each one.
    pub fn profile_commands(
        &mut self,
        set: &CommandSet<'_>,
    ) -> Result<Vec<CommandResult>, RunError> {
        require_existing_mig_instances(set.mode, set.procs)?;
        let root = self
            .cfg
            .tmp_root
            .join(format!("colo-calibrate-cmd-{}", std::process::id()));
        std::fs::create_dir_all(&root).map_err(|source| RunError::Io {
            path: root.clone(),
            source,
        })?;
        let dirs = MpsDirs::under(&root);
        let (daemon, sampler) = self.start_shared(set.mode, &dirs)?;
        let res = self.watch_commands(set, &dirs, &sampler);
        self.source = Some(sampler.stop());
        if let Some(daemon) = daemon {
            daemon.stop()?;
        }
        let _ = std::fs::remove_dir_all(&root);
        res
    }

    /// Starts the commands, then polls progress, exits, the time limit and Ctrl-C until all
    /// have ended. Long because it is the one event loop of a command set.
    fn watch_commands(
        &self,
        set: &CommandSet<'_>,
        dirs: &MpsDirs,
        sampler: &Sampler,
    ) -> Result<Vec<CommandResult>, RunError> {
        let (tx, rx) = mpsc::channel::<(usize, f64)>();
        let mut running = Vec::with_capacity(set.commands.len());
        let mut envs = Vec::with_capacity(set.commands.len());
        for rank in 0..set.commands.len() {
            let env = worker_env(set.mode, &set.procs[rank], &self.gpu.uuid, Some(dirs));
            running.push(spawn_command(&set.commands[rank], rank, &env, tx.clone())?);
            envs.push(env);
        }
        let deadline = Instant::now() + Duration::from_secs_f64(set.timeout_s);
        while running.iter().any(|r| r.ended.is_none()) {
            std::thread::sleep(Duration::from_millis(20));
            while let Ok((rank, samples)) = rx.try_recv() {
                running[rank].progress.push((gpu::unix_now(), samples));
            }
            let stop = interrupted() || Instant::now() > deadline;
            for run in running.iter_mut().filter(|r| r.ended.is_none()) {
                check_exit(run, stop);
            }
            if interrupted() {
                return Err(RunError::Interrupted);
            }
        }
        while let Ok((rank, samples)) = rx.try_recv() {
            running[rank].progress.push((gpu::unix_now(), samples));
        }
        let results = running
            .into_iter()
            .zip(envs)
            .enumerate()
            .map(|(rank, (run, env))| {
                let (t_end, status, error) =
                    run.ended
                        .clone()
                        .unwrap_or((gpu::unix_now(), Status::Error, None));
                let env = env
                    .into_iter()
                    .map(|(k, v)| (k, serde_json::Value::String(v)))
                    .collect();
                let samples_per_s = progress_rate(&run.progress, run.started + set.warmup_s);
                let error = error.or_else(|| {
                    no_rate_note(&run.progress, samples_per_s, run.started, set.warmup_s)
                });
                CommandResult {
                    rank,
                    status,
                    t_start: run.started,
                    t_end,
                    lifetime_s: t_end - run.started,
                    samples_per_s,
                    samples: run.progress.last().map(|p| p.1),
                    error,
                    gpu: sampler.window(
                        run.started + set.warmup_s,
                        t_end,
                        run.child.as_ref().map_or(0, Child::id),
                    ),
                    env,
                }
            });
        Ok(results.collect())
    }
}

/// Starts one command; a thread forwards its `samples=<N>` reports as `(rank, N)`.
fn spawn_command(
    command: &str,
    rank: usize,
    env: &std::collections::BTreeMap<String, String>,
    tx: mpsc::Sender<(usize, f64)>,
) -> Result<Running, RunError> {
    let mut cmd = Command::new("sh");
    // Its own process group, so that stopping it stops what it started too.
    cmd.process_group(0);
    cmd.args(["-c", command])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    for key in CLEARED_ENV {
        cmd.env_remove(key);
    }
    let mut child = cmd.envs(env).spawn().map_err(|source| RunError::Spawn {
        program: command.to_string(),
        source,
    })?;
    if let Some(stdout) = child.stdout.take() {
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(samples) = parse_progress(&line) {
                    let _ = tx.send((rank, samples));
                }
            }
        });
    }
    Ok(Running {
        child: Some(child),
        started: gpu::unix_now(),
        ended: None,
        progress: Vec::new(),
    })
}

impl Drop for Running {
    /// A command still running when the watch ends early (Ctrl-C) is killed.
    fn drop(&mut self) {
        if let (None, Some(child)) = (&self.ended, self.child.as_mut()) {
            super::process::kill_group(child);
        }
    }
}

/// Records the command's exit, or kills it when `stop` is set.
fn check_exit(run: &mut Running, stop: bool) {
    let Some(child) = run.child.as_mut() else {
        return;
    };
    if stop {
        super::process::kill_group(child);
        run.ended = Some((
            gpu::unix_now(),
            Status::Timeout,
            Some("killed at the time limit".into()),
        ));
        return;
    }
    match child.try_wait() {
        Ok(Some(status)) if status.success() => {
            run.ended = Some((gpu::unix_now(), Status::Ok, None))
        }
        Ok(Some(status)) => {
            run.ended = Some((
                gpu::unix_now(),
                Status::Error,
                Some(format!("command exited with {status}")),
            ))
        }
        Ok(None) => {}
        Err(err) => run.ended = Some((gpu::unix_now(), Status::Error, Some(err.to_string()))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_lines_are_read_anywhere_in_the_line() {
        assert_eq!(
            parse_progress("epoch 1 step 20 samples=2560 loss=1.2"),
            Some(2560.0)
        );
        assert_eq!(parse_progress("samples=12.5"), Some(12.5));
        assert_eq!(parse_progress("loss=1.2"), None);
    }

    #[test]
    fn rate_uses_reports_after_the_warm_up() {
        let reports = [(0.0, 0.0), (1.0, 1000.0), (2.0, 1100.0), (4.0, 1300.0)];
        assert_eq!(progress_rate(&reports, 1.5), Some(100.0));
        assert_eq!(progress_rate(&reports, 3.0), None);
    }

    #[test]
    fn a_command_with_reports_but_no_rate_says_why() {
        // Started at t = 100; reports at 110, 125 and 127; warm-up 20 s: one report after it.
        let reports = [(110.0, 8.0), (125.0, 16.0), (127.0, 24.0)];
        let rate = progress_rate(&reports, 120.0);
        assert_eq!(rate, Some(4.0));
        assert_eq!(no_rate_note(&reports, rate, 100.0, 20.0), None);
        let late = &reports[..2];
        let rate = progress_rate(late, 120.0);
        assert_eq!(rate, None);
        let note = no_rate_note(late, rate, 100.0, 20.0).expect("a reason");
        assert!(
            note.contains("2 progress report(s), 1 after the 20 s warm-up (first at 10.0 s)"),
            "{note}"
        );
        // No reports at all: measured by lifetime only, as documented; no note.
        assert_eq!(no_rate_note(&[], None, 100.0, 20.0), None);
    }
}
