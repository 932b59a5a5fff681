//! colo's Python face: the `colo._colo` extension module. Thin by design (STYLE Y1): each
//! function converts its arguments, calls the same library functions as the `colo` binary's
//! subcommand, and hands back what the subcommand prints or writes (its JSON, its CSV bytes);
//! the `colo` Python package (`py_src/colo/`) turns those into pandas DataFrames. The engine
//! runs with the GIL released; errors raise `colo.ColoError` with colo's message.
#![warn(clippy::print_stdout)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use colo_calibrate::predictor::{self, ModelChoice, PredictorSpec};
use colo_calibrate::shipped;
use colo_sim::hardware;
use colo_sim::pack::{PackJob, PackRequest, output, pack};
use colo_sim::perf::ShareMode;
use colo_sim::perf::answer;
use colo_sim::perf::query::SetQuery;
use colo_sim::scenario::{Outputs, RunOptions, Scenario, VariantRun};
use colo_sim::workload::ModelKey;
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

create_exception!(
    _colo,
    ColoError,
    PyValueError,
    "An error colo reports: bad input (a file, line and field named) or a failed run."
);

/// colo's error as a Python exception, its message as the command line prints it (`{:#}`).
fn err(error: impl std::fmt::Display) -> PyErr {
    ColoError::new_err(format!("{error:#}"))
}

/// The library's name for a model given as `kernel`, `kernel-raw`, `parametric`, `exclusive`,
/// `equal-share` (or `equal_share`) or `fixed-slowdown`.
fn model_choice(name: &str) -> PyResult<ModelChoice> {
    Ok(match name.replace('_', "-").as_str() {
        "kernel" => ModelChoice::Kernel,
        "kernel-raw" => ModelChoice::KernelRaw,
        "parametric" => ModelChoice::Parametric,
        "exclusive" => ModelChoice::Exclusive,
        "equal-share" => ModelChoice::EqualShare,
        "fixed-slowdown" => ModelChoice::FixedSlowdown,
        _ => {
            return Err(err(format!(
                "model `{name}`: choose kernel, kernel-raw, parametric, exclusive, \
                 equal-share or fixed-slowdown"
            )));
        }
    })
}

/// A sharing mode by its name in results (`mps`), through the engine's own vocabulary.
fn share_mode(name: &str) -> PyResult<ShareMode> {
    serde_json::from_value(serde_json::Value::String(name.to_lowercase())).map_err(|_| {
        err(format!(
            "mode `{name}`: choose exclusive, timeslice, mps or mig"
        ))
    })
}

fn keys(jobs: &[String]) -> PyResult<Vec<ModelKey>> {
    jobs.iter()
        .map(|j| j.parse::<ModelKey>().map_err(err))
        .collect()
}

/// `colo predict --format json`: the answer's JSON text and the notes the command prints on
/// stderr (trace files skipped, anchored speeds).
#[pyfunction]
#[pyo3(signature = (jobs, gpu, mode, sm_pct, layout, model, traces, profile, alone_rate))]
#[allow(clippy::too_many_arguments)]
fn predict_json(
    py: Python<'_>,
    jobs: Vec<String>,
    gpu: String,
    mode: String,
    sm_pct: Vec<f64>,
    layout: Option<String>,
    model: String,
    traces: Vec<PathBuf>,
    profile: Vec<PathBuf>,
    alone_rate: Vec<(String, f64)>,
) -> PyResult<(String, Vec<String>)> {
    let keys = keys(&jobs)?;
    let alone_rates = alone_rate
        .into_iter()
        .map(|(point, rate)| Ok((point.parse::<ModelKey>().map_err(err)?, rate)))
        .collect::<PyResult<Vec<_>>>()?;
    let spec = PredictorSpec {
        gpu,
        profiles: profile,
        traces,
        alone_rates,
        model: model_choice(&model)?,
        jobs: keys.clone(),
        cpu_factor: 1.0,
    };
    let mode = share_mode(&mode)?;
    py.detach(move || {
        let built = predictor::build(&spec).map_err(err)?;
        let gpu = built.predictor.gpu;
        let layout = layout
            .as_deref()
            .map(|text| gpu.parse_mig_layout(text))
            .transpose()
            .map_err(|e| err(format!("layout: {e}")))?;
        let query = SetQuery {
            gpu,
            mode,
            jobs: keys,
            sm_budgets: sm_pct.iter().map(|p| p / 100.0).collect(),
            layout,
        };
        let answer = answer::answer(&built.predictor, query).map_err(err)?;
        Ok((answer.json().to_string(), built.notes))
    })
}

/// `colo pack --format json`: the best packings, beside one job per GPU.
#[pyfunction]
#[pyo3(signature = (jobs, gpu, gpus, max_per_gpu, top, profile, model, traces))]
#[allow(clippy::too_many_arguments)] // the Python function's keyword arguments, one each
fn pack_json(
    py: Python<'_>,
    jobs: Vec<String>,
    gpu: String,
    gpus: Option<u32>,
    max_per_gpu: usize,
    top: usize,
    profile: Vec<PathBuf>,
    model: String,
    traces: Vec<PathBuf>,
) -> PyResult<String> {
    py.detach(move || {
        // As `colo pack` (src/cmd/pack.rs) does.
        let gpu = hardware::gpu(&gpu).map_err(err)?;
        let profiles = Arc::new(shipped::load(&profile).map_err(err)?);
        let (_, path) = profiles.get(gpu).map_err(err)?;
        let profile_name = shipped::name(&profile, path, gpu.name);
        let jobs = jobs
            .iter()
            .map(|j| j.parse::<PackJob>().map_err(err))
            .collect::<PyResult<Vec<_>>>()?;
        let kernel = match model.as_str() {
            "kernel" => true,
            "parametric" => false,
            other => {
                return Err(err(format!(
                    "model `{other}`: colo.pack takes kernel or parametric"
                )));
            }
        };
        let keys: Vec<_> = jobs.iter().map(|j| j.key.clone()).collect();
        let built = colo_calibrate::predictor::pack_model(
            &profiles,
            &profile,
            &traces,
            &[],
            gpu,
            &keys,
            kernel,
        )
        .map_err(err)?;
        let request = PackRequest {
            gpu,
            jobs,
            gpus,
            max_jobs_per_gpu: max_per_gpu,
            top,
        };
        let started = Instant::now();
        let mut report = pack(built.model.as_ref(), &request).map_err(err)?;
        if let Some(described) = built.described {
            report.perf_model = described;
        }
        let seconds = started.elapsed().as_secs_f64();
        let value = output::to_json(&request, &report, profile_name.as_str(), seconds);
        Ok(value.to_string())
    })
}

/// The scenario to run: a file, or JSON text (from a dict) whose relative paths are read
/// from `base_dir`.
fn load_scenario(
    path: Option<PathBuf>,
    json: Option<String>,
    base_dir: &Path,
) -> PyResult<Scenario> {
    match (path, json) {
        (Some(path), None) => Scenario::load(&path).map_err(err),
        (None, Some(text)) => Scenario::parse_json(&text, &base_dir.join("<dict>")).map_err(err),
        _ => Err(err("give a scenario file or a scenario dict")),
    }
}

/// Calls `progress(done, total)` (summed over variants) at most every 0.2 s and at the end,
/// from whichever thread runs a variant.
struct Progress {
    callback: Option<Py<PyAny>>,
    state: Mutex<(Vec<(u64, u64)>, Instant)>,
}

impl Progress {
    fn report(&self, variant: usize, done: u64, total: u64) {
        let Some(callback) = &self.callback else {
            return;
        };
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        if let Some(seen) = state.0.get_mut(variant) {
            *seen = (done, total);
        }
        let finished = state.0.iter().all(|(d, t)| d == t);
        if !finished && state.1.elapsed() < Duration::from_millis(200) {
            return;
        }
        state.1 = Instant::now();
        let done: u64 = state.0.iter().map(|s| s.0).sum();
        let total: u64 = state.0.iter().map(|s| s.1).sum();
        drop(state);
        Python::attach(|py| {
            // A failing progress callback must not stop the run; Python prints its error.
            if let Err(e) = callback.call1(py, (done, total)) {
                e.print(py);
            }
        });
    }
}

/// `colo simulate`: runs every variant and returns, per variant, its name, result folder
/// (`None` when `out` is not given: the run went to a temporary folder, now removed),
/// `summary.json` text and the bytes of `jobs.csv`, `placements.csv` and `timeline.csv`.
#[pyfunction]
#[pyo3(signature = (path, json, base_dir, seed, out, strict, trace_limit, jobs, progress))]
#[allow(clippy::too_many_arguments)]
fn simulate<'py>(
    py: Python<'py>,
    path: Option<PathBuf>,
    json: Option<String>,
    base_dir: PathBuf,
    seed: Option<u64>,
    out: Option<PathBuf>,
    strict: bool,
    trace_limit: Option<usize>,
    jobs: Option<u32>,
    progress: Option<Py<PyAny>>,
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let mut scenario = load_scenario(path, json, &base_dir)?;
    if let Some(jobs) = jobs {
        scenario.set_synthetic_jobs(jobs);
    }
    if let Some(limit) = trace_limit {
        scenario.limit_traces(limit);
    }
    // Without `out`, the run goes to a temporary folder, removed when `_temp` is dropped.
    let (out_dir, _temp) = match &out {
        Some(dir) => (dir.clone(), None),
        None => {
            let temp = tempfile::tempdir().map_err(err)?;
            (temp.path().join("results"), Some(temp))
        }
    };
    let options = RunOptions {
        out: Some(out_dir),
        seed,
        strict,
        shard: None,
        outputs: Outputs::All,
        columnar: false,
    };
    let progress = Progress {
        callback: progress,
        state: Mutex::new((vec![(0, 0); scenario.variants().len()], Instant::now())),
    };
    let runs: Vec<VariantFiles> = py.detach(|| {
        let runs = scenario
            .run(&options, &|v, done, total| progress.report(v, done, total))
            .map_err(err)?;
        runs.iter()
            .map(VariantFiles::read)
            .collect::<PyResult<Vec<_>>>()
    })?;
    let written = out.is_some();
    runs.into_iter()
        .map(|run| run.into_dict(py, written))
        .collect()
}

/// One variant's summary and result files, read back from its folder.
struct VariantFiles {
    name: String,
    dir: PathBuf,
    summary: String,
    jobs: Vec<u8>,
    placements: Vec<u8>,
    timeline: Vec<u8>,
}

impl VariantFiles {
    fn read(run: &VariantRun) -> PyResult<Self> {
        let read = |name: &str| {
            let file = run.dir.join(name);
            std::fs::read(&file).map_err(|e| err(format!("{}: {e}", file.display())))
        };
        Ok(VariantFiles {
            name: run.name.clone(),
            dir: run.dir.clone(),
            summary: serde_json::to_string(&run.summary).map_err(err)?,
            jobs: read("jobs.csv")?,
            placements: read("placements.csv")?,
            timeline: read("timeline.csv")?,
        })
    }

    /// The dict `colo.simulate` reads; `dir` is None when the folder was temporary.
    fn into_dict(self, py: Python<'_>, written: bool) -> PyResult<Bound<'_, PyDict>> {
        let dict = PyDict::new(py);
        dict.set_item("name", self.name)?;
        dict.set_item("dir", written.then_some(self.dir))?;
        dict.set_item("summary", self.summary)?;
        dict.set_item("jobs", PyBytes::new(py, &self.jobs))?;
        dict.set_item("placements", PyBytes::new(py, &self.placements))?;
        dict.set_item("timeline", PyBytes::new(py, &self.timeline))?;
        Ok(dict)
    }
}

/// `colo plan`: per candidate of the scenario's `plan` section, the smallest cluster meeting
/// `target`. Returns the bytes of `plan.csv` and a JSON object with the target, the largest
/// size tried, each candidate's smallest size and the cheapest candidate. Writes nothing.
#[pyfunction]
#[pyo3(signature = (path, json, base_dir, target, progress))]
fn plan_csv(
    py: Python<'_>,
    path: Option<PathBuf>,
    json: Option<String>,
    base_dir: PathBuf,
    target: String,
    progress: Option<Py<PyAny>>,
) -> PyResult<(Py<PyBytes>, String)> {
    let scenario = load_scenario(path, json, &base_dir)?;
    let target: colo_sim::plan::Target = target.parse().map_err(err)?;
    let last = Mutex::new(Instant::now());
    let report = py.detach(|| {
        let on_progress = |done: u64| {
            let Some(callback) = &progress else {
                return;
            };
            let Ok(mut last) = last.lock() else {
                return;
            };
            if last.elapsed() < Duration::from_millis(200) {
                return;
            }
            *last = Instant::now();
            drop(last);
            Python::attach(|py| {
                if let Err(e) = callback.call1(py, (done,)) {
                    e.print(py);
                }
            });
        };
        colo_sim::plan::plan(&scenario, &target, &on_progress).map_err(err)
    })?;
    let candidates: Vec<serde_json::Value> = report
        .candidates
        .iter()
        .map(|c| serde_json::json!({"label": c.label, "gpu": c.gpu, "smallest": c.smallest}))
        .collect();
    let info = serde_json::json!({
        "target": report.target.to_string(),
        "max_gpus": report.max_gpus,
        "simulations": report.simulations,
        "candidates": candidates,
        "cheapest": report.cheapest.map(|i| report.candidates[i].label.clone()),
        "figures_are": "simulated",
    });
    let bytes = PyBytes::new(py, &colo_sim::plan::plan_csv(&report)).unbind();
    Ok((bytes, info.to_string()))
}

/// The GPU catalog as JSON: one object per GPU with its MIG profiles (`colo hardware`).
#[pyfunction]
fn hardware_json() -> String {
    let gpus: Vec<serde_json::Value> = hardware::catalog()
        .iter()
        .map(|g| {
            let profiles: Vec<serde_json::Value> = g
                .mig_profiles
                .iter()
                .map(|p| {
                    serde_json::json!({
                        "name": p.name,
                        "compute_slices": p.compute_slices,
                        "memory_slices": p.memory_slices,
                        "sms": p.sms,
                        "memory_gib": p.memory_gib,
                    })
                })
                .collect();
            serde_json::json!({
                "gpu": g.name,
                "display_name": g.display_name,
                "aliases": g.aliases,
                "sms": g.sms,
                "memory_gib": g.memory_gib,
                "memory_bandwidth_gbs": g.memory_bandwidth_gbs,
                "power_limit_w": g.power_limit_w,
                "mig_profiles": profiles,
                "source": g.source,
            })
        })
        .collect();
    serde_json::Value::Array(gpus).to_string()
}

/// The extension module `colo._colo`.
#[pymodule]
fn _colo(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ColoError", m.py().get_type::<ColoError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(predict_json, m)?)?;
    m.add_function(wrap_pyfunction!(pack_json, m)?)?;
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(plan_csv, m)?)?;
    m.add_function(wrap_pyfunction!(hardware_json, m)?)?;
    Ok(())
}
