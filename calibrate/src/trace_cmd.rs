//! Tracing a user's own, unmodified training command (`colo calibrate trace --cmd`).
//!
//! colo writes its injected tracer (`workloads/inject/`: `sitecustomize.py`, `colo_trace.py`,
//! and the chrome-trace reader `kernel_trace_io.py`, compiled into this binary) into a private
//! folder, puts that folder first on `PYTHONPATH` and runs the command with `sh -c` in a process
//! group of its own. Inside the program the tracer counts optimizer steps, times an unprofiled
//! window, profiles a few steady steps, writes `OUT/cmd_<NAME>.trace.json.gz` (the format of
//! `workloads/trace.py`, point `NAME:SAMPLES_PER_STEP:1`) and ends the program. It reports its
//! progress as JSON lines in an events file, which this module follows to report a clear
//! failure: no optimizer step within the time limit (naming the hook waited on), the command
//! exiting or crashing first (its exit status and the tail of its output), out of memory, or no
//! GPU. A failed trace writes no trace file; every outcome adds one line to `OUT/index.jsonl`.
use std::io::BufRead as _;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde::Deserialize;

use crate::gpu::GpuInfo;
use crate::runner::{CLEARED_ENV, RunError, TraceStatus, interrupted};
use crate::tracing::{INDEX_FILE, IndexEntry};

/// The injected tracer's files (name, contents).
const INJECTED: &[(&str, &str)] = &[
    (
        "sitecustomize.py",
        include_str!("../workloads/inject/sitecustomize.py"),
    ),
    (
        "colo_trace.py",
        include_str!("../workloads/inject/colo_trace.py"),
    ),
    (
        "kernel_trace_io.py",
        include_str!("../workloads/kernel_trace_io.py"),
    ),
];

/// What to trace and how.
#[derive(Debug, Clone)]
pub struct CommandTrace {
    /// The user's command, run with `sh -c`.
    pub command: String,
    /// The trace's model name: the point is `NAME:SAMPLES_PER_STEP:1`.
    pub name: String,
    /// Samples one optimizer step trains; `None`: the tracer finds it.
    pub samples_per_step: Option<u32>,
    /// Warm-up: at least this many steps ...
    pub warmup_steps: u32,
    /// ... and this many seconds from the first step.
    pub warmup_s: f64,
    /// Unprofiled timing window, seconds (at least 2 steps).
    pub window_s: f64,
    /// Profiled steady steps.
    pub iterations: u32,
    /// Seconds to wait for the first optimizer step after the start.
    pub step_timeout_s: f64,
    /// Let the command run on after the trace is written.
    pub let_finish: bool,
    /// Folder of the trace file and its index.
    pub out_dir: PathBuf,
    /// Folder for colo's private folder (the injected tracer, the command's output).
    pub tmp_root: PathBuf,
}

/// How tracing a command ended.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandTraced {
    /// Outcome: ok, skipped (the file exists), oom, error, crash (exited first), timeout.
    pub status: TraceStatus,
    /// The point traced (`NAME:SAMPLES_PER_STEP:1`), when known.
    pub point: Option<String>,
    /// The trace file (ok and skipped).
    pub file: Option<PathBuf>,
    /// Samples/s over the unprofiled window.
    pub unprofiled_samples_per_s: Option<f64>,
    /// GPU activities in the trace.
    pub n_kernels: Option<u64>,
    /// The recipe the tracer saw (JSON object).
    pub recipe: Option<serde_json::Value>,
    /// Seconds from the start of the command to the end of tracing.
    pub trace_s: f64,
    /// What went wrong, and what to do.
    pub error: Option<String>,
}

impl CommandTraced {
    /// Takes the tracer's `done` event: the trace is written.
    fn take_done(&mut self, event: Event) {
        self.status = TraceStatus::Ok;
        self.point = event.point;
        self.n_kernels = event.n_kernels;
        self.unprofiled_samples_per_s = event.unprofiled_samples_per_s;
        self.recipe = event.recipe;
    }
}

/// One line of the tracer's events file.
#[derive(Debug, Deserialize)]
struct Event {
    event: String,
    #[serde(default)]
    point: Option<String>,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    n_kernels: Option<u64>,
    #[serde(default)]
    unprofiled_samples_per_s: Option<f64>,
    #[serde(default)]
    recipe: Option<serde_json::Value>,
}

/// The trace file of a command trace named `name`.
pub fn command_trace_file(out_dir: &Path, name: &str) -> PathBuf {
    out_dir.join(format!("cmd_{name}{}", crate::trace::RAW_SUFFIX))
}

/// Checks a trace name: it becomes a model name and a file name.
pub fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        && !name.starts_with('.');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "--name `{name}`: use 1 to 64 letters, digits, '_', '-' or '.' (not first), e.g. \
             --name gpt2_finetune; it names the traced point NAME:SAMPLES_PER_STEP:1"
        ))
    }
}

/// Writes the injected tracer into `dir` and returns the environment that activates it.
pub fn injected_env(dir: &Path) -> Result<Vec<(String, String)>, RunError> {
    std::fs::create_dir_all(dir).map_err(|source| RunError::Io {
        path: dir.to_owned(),
        source,
    })?;
    for (name, text) in INJECTED {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|source| RunError::Io { path, source })?;
    }
    let python_path = match std::env::var("PYTHONPATH") {
        Ok(old) if !old.is_empty() => format!("{}:{old}", dir.display()),
        _ => dir.display().to_string(),
    };
    Ok(vec![
        ("PYTHONPATH".into(), python_path),
        ("PYTHONUNBUFFERED".into(), "1".into()),
    ])
}

/// Traces `job.command` on `gpu` (its UUID in CUDA_VISIBLE_DEVICES unless `fake`); appends the
/// outcome to the index. A trace file that exists is not traced again (`skipped`).
pub fn trace_command(
    job: &CommandTrace,
    gpu: &GpuInfo,
    source: &str,
    on_line: &mut dyn FnMut(&str),
) -> Result<CommandTraced, RunError> {
    let file = command_trace_file(&job.out_dir, &job.name);
    if file.is_file() {
        let raw = crate::trace::read_raw(&file).ok();
        return Ok(CommandTraced {
            status: TraceStatus::Skipped,
            point: raw.as_ref().map(|r| r.point.clone()),
            unprofiled_samples_per_s: raw.as_ref().map(|r| r.unprofiled.samples_per_s),
            n_kernels: raw.as_ref().map(|r| r.kernels.dur_ns.len() as u64),
            file: Some(file),
            recipe: None,
            trace_s: 0.0,
            error: None,
        });
    }
    std::fs::create_dir_all(&job.out_dir).map_err(|source| RunError::Io {
        path: job.out_dir.clone(),
        source,
    })?;
    let private = job
        .tmp_root
        .join(format!("colo-trace-cmd-{}", std::process::id()));
    let result = run_traced(job, gpu, source, &private, &file, on_line);
    if result.as_ref().is_ok_and(|r| r.status == TraceStatus::Ok) {
        let _ = std::fs::remove_dir_all(&private);
    }
    let traced = result?;
    append_index(&job.out_dir, &index_entry(&traced, gpu, source))?;
    Ok(traced)
}

fn run_traced(
    job: &CommandTrace,
    gpu: &GpuInfo,
    source: &str,
    private: &Path,
    file: &Path,
    on_line: &mut dyn FnMut(&str),
) -> Result<CommandTraced, RunError> {
    let py = private.join("py");
    let events = private.join("events.jsonl");
    let log = private.join("output.log");
    let _ = std::fs::remove_file(&events);
    let mut env = injected_env(&py)?;
    let settings = [
        ("COLO_TRACE_MODE", "trace".to_string()),
        ("COLO_TRACE_OUT", file.display().to_string()),
        ("COLO_TRACE_EVENTS", events.display().to_string()),
        ("COLO_TRACE_NAME", job.name.clone()),
        ("COLO_TRACE_WARMUP_STEPS", job.warmup_steps.to_string()),
        ("COLO_TRACE_WARMUP_S", job.warmup_s.to_string()),
        ("COLO_TRACE_WINDOW_S", job.window_s.to_string()),
        ("COLO_TRACE_ITERATIONS", job.iterations.to_string()),
        (
            "COLO_TRACE_LET_FINISH",
            u8::from(job.let_finish).to_string(),
        ),
        ("COLO_TRACE_COMMAND", job.command.clone()),
        ("COLO_TRACE_DRIVER", gpu.driver.clone()),
        ("COLO_TRACE_SOURCE", source.to_string()),
    ];
    env.extend(settings.into_iter().map(|(k, v)| (k.to_string(), v)));
    if let Some(n) = job.samples_per_step {
        env.push(("COLO_TRACE_SAMPLES_PER_STEP".into(), n.to_string()));
    }
    if source != "fake" {
        env.push(("CUDA_VISIBLE_DEVICES".into(), gpu.uuid.clone()));
    }
    let output = std::fs::File::create(&log).map_err(|source| RunError::Io {
        path: log.clone(),
        source,
    })?;
    let output_err = output.try_clone().map_err(|source| RunError::Io {
        path: log.clone(),
        source,
    })?;
    let mut cmd = Command::new("sh");
    cmd.args(["-c", &job.command])
        .stdin(Stdio::null())
        .stdout(output)
        .stderr(output_err)
        .process_group(0);
    for key in CLEARED_ENV {
        cmd.env_remove(key);
    }
    let started = Instant::now();
    let mut child = cmd.envs(env).spawn().map_err(|source| RunError::Spawn {
        program: job.command.clone(),
        source,
    })?;
    let watched = watch(job, &mut child, &events, started, on_line);
    kill_group(&mut child);
    let mut traced = watched?;
    traced.trace_s = started.elapsed().as_secs_f64();
    if traced.status != TraceStatus::Ok {
        let tail = output_tail(&log, 20);
        let why = traced.error.take().unwrap_or_default();
        traced.status = classify(traced.status, &tail);
        traced.error = Some(format!(
            "{why}{}\n--- last lines of the command's output ({}):\n{tail}",
            hint(traced.status),
            log.display()
        ));
        let _ = std::fs::remove_file(file);
    } else if let Err(err) = crate::trace::read_raw(file) {
        traced.status = TraceStatus::Error;
        traced.error = Some(format!("the tracer wrote a trace colo cannot read: {err}"));
        let _ = std::fs::remove_file(file);
    } else {
        traced.file = Some(file.to_owned());
    }
    Ok(traced)
}

/// Follows the events until the trace is written, the command ends, or a time limit passes.
/// Long because it is the one event loop of a traced command.
fn watch(
    job: &CommandTrace,
    child: &mut Child,
    events: &Path,
    started: Instant,
    on_line: &mut dyn FnMut(&str),
) -> Result<CommandTraced, RunError> {
    let mut traced = CommandTraced {
        status: TraceStatus::Error,
        point: None,
        file: None,
        unprofiled_samples_per_s: None,
        n_kernels: None,
        recipe: None,
        trace_s: 0.0,
        error: None,
    };
    let (mut read, mut hooked, mut stepped) = (0usize, false, false);
    let mut done_at: Option<Instant> = None;
    loop {
        std::thread::sleep(Duration::from_millis(100));
        for event in read_events(events, &mut read) {
            match event.event.as_str() {
                "hooked" => {
                    hooked = true;
                    on_line("torch imported: waiting for the first optimizer step");
                }
                "first_step" => {
                    stepped = true;
                    on_line(&format!(
                        "first step after {:.1} s: warming up",
                        started.elapsed().as_secs_f64()
                    ));
                }
                "window" => on_line("unprofiled window timed: profiling"),
                "done" => {
                    traced.take_done(event);
                    done_at = Some(Instant::now());
                    if job.let_finish {
                        on_line("trace written; --let-finish: waiting for the command to end");
                    }
                }
                "failed" => {
                    traced.status = TraceStatus::Error;
                    traced.error = Some(format!(
                        "the tracer failed: {}",
                        event.error.unwrap_or_default()
                    ));
                }
                _ => {}
            }
        }
        if interrupted() {
            return Err(RunError::Interrupted);
        }
        let exited = child.try_wait().map_err(|source| RunError::Io {
            path: PathBuf::from(&job.command),
            source,
        })?;
        if let Some(status) = exited {
            for event in read_events(events, &mut read) {
                if event.event == "done" {
                    traced.take_done(event);
                }
            }
            if traced.status != TraceStatus::Ok && traced.error.is_none() {
                traced.status = TraceStatus::Crash;
                traced.error = Some(format!(
                    "the command ended ({status}) before its trace was written ({})",
                    progress_words(hooked, stepped)
                ));
            }
            return Ok(traced);
        }
        if traced.error.is_some() {
            return Ok(traced);
        }
        let waited = started.elapsed().as_secs_f64();
        if let Some(done) = done_at
            && !job.let_finish
            && done.elapsed() > Duration::from_secs(60)
        {
            on_line("the command did not end within 60 s of its trace: stopped");
            return Ok(traced);
        }
        if !stepped && waited > job.step_timeout_s {
            traced.status = TraceStatus::Timeout;
            traced.error = Some(format!(
                "no optimizer step within {:.0} s ({}): colo waits on torch.optim's global \
                 step hook (torch.optim.optimizer.register_optimizer_step_post_hook); a loop \
                 without a torch.optim optimizer must call `import colo_trace; \
                 colo_trace.step()` once per iteration; a slow start needs a larger \
                 --step-timeout-s",
                job.step_timeout_s,
                progress_words(hooked, stepped)
            ));
            return Ok(traced);
        }
    }
}

fn progress_words(hooked: bool, stepped: bool) -> &'static str {
    match (hooked, stepped) {
        (false, _) => {
            "the program never imported torch, or its Python did not load colo's sitecustomize: is the command a Python program started as `python ...`?"
        }
        (true, false) => "torch was imported, no optimizer step was seen",
        (true, true) => "optimizer steps were seen, the trace was not finished",
    }
}

/// New events since `read` lines (a torn last line is left for the next read).
fn read_events(path: &Path, read: &mut usize) -> Vec<Event> {
    let Ok(file) = std::fs::File::open(path) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, line) in std::io::BufReader::new(file)
        .lines()
        .map_while(Result::ok)
        .enumerate()
    {
        if i < *read {
            continue;
        }
        match serde_json::from_str::<Event>(&line) {
            Ok(event) => {
                out.push(event);
                *read = i + 1;
            }
            Err(_) => break,
        }
    }
    out
}

/// Ends the command's whole process group (its DataLoader workers, torchrun's children).
fn kill_group(child: &mut Child) {
    if child.try_wait().ok().flatten().is_none() {
        let pgid = child.id().to_string();
        let _ = Command::new("kill")
            .args(["-TERM", "--", &format!("-{pgid}")])
            .status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline && child.try_wait().ok().flatten().is_none() {
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{pgid}")])
            .status();
        let _ = child.kill();
    }
    let _ = child.wait();
}

/// The last `n` lines of the command's output.
fn output_tail(path: &Path, n: usize) -> String {
    let bytes = std::fs::read(path).unwrap_or_default();
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Out of memory or no GPU, from the command's output; else the status as it was.
fn classify(status: TraceStatus, tail: &str) -> TraceStatus {
    let lower = tail.to_ascii_lowercase();
    if lower.contains("out of memory") || lower.contains("outofmemoryerror") {
        TraceStatus::Oom
    } else {
        status
    }
}

fn hint(status: TraceStatus) -> &'static str {
    match status {
        TraceStatus::Oom => {
            "; the command ran out of GPU memory: trace it with a smaller batch, or on a GPU with more memory"
        }
        _ => "",
    }
}

/// A short table of the outcome: point, status, samples/s, kernels, recipe, seconds.
pub fn outcome_table(traced: &CommandTraced, source: &str) -> String {
    let rate = traced
        .unprofiled_samples_per_s
        .map_or("-".to_string(), |r| format!("{r:.1}"));
    let recipe = traced
        .recipe
        .as_ref()
        .map_or("-".to_string(), crate::trace::recipe_words);
    format!(
        "{:<28} {:<8} {:>12} {:>8} {:>7}  recipe\n{:<28} {:<8} {:>12} {:>8} {:>7.1}  {recipe}\n\
         samples/s: {source}, unprofiled window of the command alone; file: {}\n",
        "point",
        "status",
        "samples/s",
        "kernels",
        "s",
        traced.point.as_deref().unwrap_or("-"),
        traced.status.label(),
        rate,
        traced.n_kernels.map_or("-".to_string(), |n| n.to_string()),
        traced.trace_s,
        traced
            .file
            .as_deref()
            .map_or("none".to_string(), |f| f.display().to_string()),
    )
}

fn index_entry(traced: &CommandTraced, gpu: &GpuInfo, source: &str) -> IndexEntry {
    IndexEntry {
        point: traced.point.clone().unwrap_or_default(),
        status: traced.status,
        file: traced
            .file
            .as_deref()
            .and_then(Path::file_name)
            .map(|n| n.to_string_lossy().into_owned()),
        source: source.to_string(),
        gpu_name: gpu.name.clone(),
        driver: gpu.driver.clone(),
        gpu_uuid: gpu.uuid.clone(),
        torch: None,
        unprofiled_samples_per_s: traced.unprofiled_samples_per_s,
        profiled_samples_per_s: None,
        n_kernels: traced.n_kernels,
        trace_s: Some(traced.trace_s),
        plan: None,
        group: None,
        error: traced
            .error
            .as_ref()
            .map(|e| e.chars().take(2000).collect()),
        t: crate::gpu::unix_now(),
    }
}

/// Appends one line to `out_dir`'s index ([`crate::tracing::Index`]).
pub(crate) fn append_index(out_dir: &Path, entry: &IndexEntry) -> Result<(), RunError> {
    crate::tracing::Index::open(&out_dir.join(INDEX_FILE))?.append(entry)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked_as_model_and_file_names() {
        assert!(check_name("gpt2_finetune-v2.1").is_ok());
        for bad in ["", "a/b", "a:b", ".hidden", "with space", &"x".repeat(65)] {
            assert!(check_name(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn out_of_memory_is_told_from_the_output() {
        let tail = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB";
        assert_eq!(classify(TraceStatus::Crash, tail), TraceStatus::Oom);
        assert_eq!(
            classify(TraceStatus::Crash, "ValueError: bad"),
            TraceStatus::Crash
        );
    }
}
