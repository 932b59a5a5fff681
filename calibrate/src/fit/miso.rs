//! MISO's A100-40GB MIG measurements (boringlee24/socc22-miso, MIT): per-iteration latencies
//! of 7 models at several batch sizes, alone in each MIG slice. From them: each model's
//! exclusive rate, time and space demand (fitted on the slice curve), memory, and a held-out
//! error (leave one slice out), assembled into an A100-40GB profile whose time-slicing and MPS
//! parameters are carried over from another GPU's profile and labelled transferred.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use colo_sim::hardware::{self, GpuSpec};
use colo_sim::perf::profile::{MemoryParams, MigParams, Profile, Provenance};
use colo_sim::perf::{Origin, Partition, ShareMode};
use colo_sim::workload::ModelKey;

use super::TableError;
use super::lm::LmConfig;
use super::parametric::{
    ClassSpec, FitGlobals, FitProblem, Globals, Member, Observation, fit, mape, predictions,
};

/// One model at one batch size alone in one slice.
#[derive(Clone, Debug, PartialEq)]
pub struct SliceRun {
    /// MIG profile name (`3g.20gb`).
    pub slice: String,
    /// The model key (`miso_resnet:128:32`).
    pub key: ModelKey,
    /// Median samples/s over all iterations but the first.
    pub samples_per_s: f64,
    /// (p90 - p10) / median of per-iteration rates.
    pub spread: f64,
    /// Iterations measured.
    pub iterations: usize,
}

/// Model names of MISO's workloads as colo keys; vision models train on CIFAR-10 (32x32:
/// 391 iterations per epoch at batch 128), the others have no image size (1).
fn key(model: &str, batch: u32) -> ModelKey {
    let image = if matches!(model, "resnet" | "mobilenet") {
        32
    } else {
        1
    };
    ModelKey::new(&format!("miso_{model}"), batch, image)
}

/// Reads every `SLICE_MODEL_trainBATCH.json[.gz]` in `dir`, in name order.
pub fn read_runs(dir: &Path) -> Result<Vec<SliceRun>, TableError> {
    let io = |source| TableError::Io {
        path: dir.to_owned(),
        source,
    };
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    names.sort();
    let mut runs = Vec::new();
    for path in names {
        let file = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let stem = file.trim_end_matches(".gz").trim_end_matches(".json");
        let Some((slice, rest)) = stem.split_once('_') else {
            continue;
        };
        let Some((model, batch)) = rest.rsplit_once("_train") else {
            continue;
        };
        let Ok(batch) = batch.parse::<u32>() else {
            continue;
        };
        runs.push(read_run(&path, slice, model, batch)?);
    }
    Ok(runs)
}

fn read_run(path: &Path, slice: &str, model: &str, batch: u32) -> Result<SliceRun, TableError> {
    parse_run(&super::read_table_text(path)?, path, slice, model, batch)
}

/// One slice run from the text of its `<slice>_<model>_train<batch>.json` file (`path` names
/// it in errors): the median samples/s over the iterations after the first.
pub fn parse_run(
    text: &str,
    path: &Path,
    slice: &str,
    model: &str,
    batch: u32,
) -> Result<SliceRun, TableError> {
    let value: serde_json::Value = super::parse_json(text, path)?;
    let format = |message: String| TableError::Format {
        path: path.to_owned(),
        message,
    };
    let epochs = value
        .as_object()
        .ok_or_else(|| format("expected an object of epochs".into()))?;
    let mut ordered: Vec<(u32, &serde_json::Value)> = epochs
        .iter()
        .filter_map(|(k, v)| Some((k.parse().ok()?, v)))
        .collect();
    ordered.sort_by_key(|(k, _)| *k);
    let latencies: Vec<f64> = ordered
        .iter()
        .flat_map(|(_, v)| {
            v.as_array()
                .into_iter()
                .flatten()
                .filter_map(|x| x.as_f64())
        })
        .skip(1)
        .filter(|l| *l > 0.0)
        .collect();
    if latencies.len() < 10 {
        return Err(format(format!(
            "only {} iterations after warm-up; need at least 10",
            latencies.len()
        )));
    }
    let mut rates: Vec<f64> = latencies.iter().map(|l| f64::from(batch) / l).collect();
    rates.sort_by(f64::total_cmp);
    let at = |q: f64| rates[((rates.len() - 1) as f64 * q).round() as usize];
    let median = at(0.5);
    Ok(SliceRun {
        slice: slice.to_owned(),
        key: key(model, batch),
        samples_per_s: median,
        spread: (at(0.9) - at(0.1)) / median,
        iterations: rates.len(),
    })
}

/// MiB per (model, batch) from `memory.json[.gz]`.
pub fn read_memory(dir: &Path) -> Result<BTreeMap<ModelKey, f64>, TableError> {
    let path = ["memory.json.gz", "memory.json"]
        .iter()
        .map(|n| dir.join(n))
        .find(|p| p.exists())
        .unwrap_or(dir.join("memory.json"));
    parse_memory(&super::read_table_text(&path)?, &path)
}

/// MiB per (model, batch) from the text of `memory.json` (`path` names it in errors).
pub fn parse_memory(text: &str, path: &Path) -> Result<BTreeMap<ModelKey, f64>, TableError> {
    let value = super::parse_json(text, path)?;
    let mut out = BTreeMap::new();
    for (model, sizes) in value.as_object().into_iter().flatten() {
        for (batch, mib) in sizes.as_object().into_iter().flatten() {
            if let (Ok(batch), Some(mib)) = (batch.parse::<u32>(), mib.as_f64()) {
                out.insert(key(model, batch), mib);
            }
        }
    }
    Ok(out)
}

/// Fit quality on the MIG slice curves.
#[derive(Clone, Debug, PartialEq)]
pub struct MisoReport {
    /// Slice runs read.
    pub runs: usize,
    /// Model-batch classes fitted.
    pub classes: usize,
    /// MAPE over all runs of the fit on all slices.
    pub train_mape: f64,
    /// MAPE predicting each slice of each class from a fit on its other slices.
    pub heldout_mape: f64,
    /// Median relative spread (p90-p10 over median) of per-iteration rates.
    pub median_spread: f64,
}

fn problem(
    gpu: &'static GpuSpec,
    runs: &[&SliceRun],
    memory: &BTreeMap<ModelKey, f64>,
    context_gib: f64,
) -> Result<FitProblem, TableError> {
    let mut classes: Vec<ClassSpec> = Vec::new();
    let mut index: BTreeMap<ModelKey, usize> = BTreeMap::new();
    let mut observations = Vec::new();
    for run in runs {
        let profile = gpu
            .mig_profile(&run.slice)
            .map_err(|e| TableError::Format {
                path: PathBuf::from(&run.slice),
                message: e.to_string(),
            })?;
        let class = *index.entry(run.key.clone()).or_insert_with(|| {
            classes.push(ClassSpec {
                key: run.key.clone(),
                solo_rate: run.samples_per_s,
                memory_gib: (memory.get(&run.key).copied().unwrap_or(0.0) / 1024.0 - context_gib)
                    .max(0.0),
                time_demand_start: 0.8,
                space_demand_start: 0.5,
                fit_solo_rate: true,
            });
            classes.len() - 1
        });
        let partition = Partition::slice(gpu, profile);
        observations.push(Observation {
            mode: ShareMode::Mig,
            partition,
            members: vec![Member {
                class,
                sm_budget: None,
                measured: run.samples_per_s,
            }],
        });
    }
    Ok(FitProblem {
        gpu,
        classes,
        observations,
        globals: Globals::START,
        fit_globals: FitGlobals::NONE,
    })
}

/// Builds the A100-40GB profile from MISO's slice runs in `dir`, carrying time-slicing, MPS and
/// memory-context parameters over from `source` (labelled transferred).
pub fn a100_profile(
    dir: &Path,
    source: &Profile,
    source_name: &str,
    created: &str,
) -> Result<(Profile, MisoReport), TableError> {
    let gpu = hardware::gpu("a100-40gb").map_err(|e| TableError::Format {
        path: dir.to_owned(),
        message: e.to_string(),
    })?;
    let runs = read_runs(dir)?;
    let memory = read_memory(dir)?;
    let all: Vec<&SliceRun> = runs.iter().collect();
    let full = problem(gpu, &all, &memory, source.memory.context_gib)?;
    let fitted = fit(&full, &LmConfig::default());
    let train_mape = mape(&predictions(&full, &fitted.classes, &fitted.globals));
    let heldout_mape = leave_one_slice_out(gpu, &runs, &memory, source.memory.context_gib)?;
    let mut spreads: Vec<f64> = runs.iter().map(|r| r.spread).collect();
    spreads.sort_by(f64::total_cmp);
    let report = MisoReport {
        runs: runs.len(),
        classes: full.classes.len(),
        train_mape,
        heldout_mape,
        median_spread: spreads.get(spreads.len() / 2).copied().unwrap_or(f64::NAN),
    };
    let mut profile = fitted.profile(&full);
    profile.provenance = Provenance {
        source: format!(
            "per-model numbers fitted to MISO's A100-40GB MIG slice runs (boringlee24/socc22-miso @ 39b1ee6); whole-GPU rates extrapolated from slices with MIG efficiency fixed at 1; time-slicing, MPS and context memory transferred from {source_name}"
        ),
        data: vec!["calibrate/data/external/miso_a100_mig/".into()],
        created: created.to_owned(),
        driver: None,
    };
    profile.timeslice = source.timeslice.clone();
    profile.timeslice.origin = Some(Origin::Transferred);
    profile.mps = source.mps.clone();
    profile.mps.origin = Some(Origin::Transferred);
    profile.mig = MigParams {
        efficiency: 1.0,
        origin: Some(Origin::Fitted),
    };
    profile.memory = MemoryParams {
        ..source.memory.clone()
    };
    for (entry, class) in profile.models.iter_mut().zip(&full.classes) {
        entry.spread = runs
            .iter()
            .filter(|r| r.key == class.key)
            .map(|r| r.spread)
            .reduce(f64::max);
    }
    Ok((profile, report))
}

/// For each class with at least 4 slices: fit on all slices but one, predict that one.
fn leave_one_slice_out(
    gpu: &'static GpuSpec,
    runs: &[SliceRun],
    memory: &BTreeMap<ModelKey, f64>,
    context: f64,
) -> Result<f64, TableError> {
    let mut pairs = Vec::new();
    let keys: Vec<&ModelKey> = runs
        .iter()
        .map(|r| &r.key)
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    for key in keys {
        let mine: Vec<&SliceRun> = runs.iter().filter(|r| &r.key == key).collect();
        if mine.len() < 4 {
            continue;
        }
        for held in 0..mine.len() {
            let train: Vec<&SliceRun> = mine
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != held)
                .map(|(_, r)| *r)
                .collect();
            let train_problem = problem(gpu, &train, memory, context)?;
            let fitted = fit(&train_problem, &LmConfig::default());
            let test_problem = problem(gpu, &[mine[held]], memory, context)?;
            pairs.extend(predictions(&test_problem, &fitted.classes, &fitted.globals));
        }
    }
    Ok(mape(&pairs))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shipped() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("data/external/miso_a100_mig")
    }

    #[test]
    fn reads_every_shipped_run_with_sane_rates() {
        let runs = read_runs(&shipped()).unwrap();
        let files = std::fs::read_dir(shipped()).unwrap().filter(|e| {
            let name = e
                .as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .into_owned();
            name.contains("_train")
        });
        assert_eq!(runs.len(), files.count());
        assert!(
            runs.iter()
                .all(|r| r.samples_per_s > 0.0 && r.iterations >= 10)
        );
        let memory = read_memory(&shipped()).unwrap();
        assert!(memory.contains_key(&ModelKey::new("miso_resnet", 128, 32)));
    }

    #[test]
    fn issue_37_a_slice_run_is_the_median_rate_after_the_warm_up_sample() {
        // Epoch 1 opens with a 100 s warm-up sample (dropped) and has six 0.25 s iterations,
        // epoch 2 five of 0.5 s and a zero (dropped). Batch 32: six at 128 samples/s, five at
        // 64. Sorted, the 11 rates' median (index 5) is 128, the 10th percentile (index 1) 64
        // and the 90th (index 9) 128: a spread of (128 - 64) / 128.
        let text = r#"{"2": [0.5, 0.5, 0.5, 0.5, 0.5, 0.0],
                       "1": [100.0, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25]}"#;
        let path = Path::new("3g.20gb_resnet_train32.json");
        let run = parse_run(text, path, "3g.20gb", "resnet", 32).unwrap();
        assert_eq!(run.slice, "3g.20gb");
        assert_eq!(run.key, ModelKey::new("miso_resnet", 32, 32));
        assert_eq!(
            (run.samples_per_s, run.spread, run.iterations),
            (128.0, 0.5, 11)
        );
        // Nine iterations after the warm-up are too few to judge.
        let short = r#"{"1": [100.0, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25]}"#;
        let err = parse_run(short, path, "3g.20gb", "resnet", 32).unwrap_err();
        assert!(
            err.to_string().contains("only 9 iterations after warm-up"),
            "{err}"
        );
    }

    fn run(slice: &str, rate: f64) -> SliceRun {
        SliceRun {
            slice: slice.into(),
            key: key("resnet", 128),
            samples_per_s: rate,
            spread: 0.1,
            iterations: 100,
        }
    }

    #[test]
    fn issue_37_a_class_takes_its_memory_less_the_context_and_four_slices_to_be_held_out() {
        let gpu = hardware::gpu("a100-40gb").unwrap();
        let memory: BTreeMap<ModelKey, f64> = [(key("resnet", 128), 3072.0)].into_iter().collect();
        let three = [
            run("1g.5gb", 100.0),
            run("2g.10gb", 190.0),
            run("3g.20gb", 280.0),
        ];
        let refs: Vec<&SliceRun> = three.iter().collect();
        // 3,072 MiB is 3 GiB, less a 0.5 GiB context: 2.5 GiB; one class, one slice a run.
        let p = problem(gpu, &refs, &memory, 0.5).unwrap();
        assert_eq!(p.classes.len(), 1);
        assert!((p.classes[0].memory_gib - 2.5).abs() < 1e-12);
        assert_eq!(p.observations.len(), 3);
        // A context larger than the memory leaves none, not less than none.
        assert_eq!(
            problem(gpu, &refs, &memory, 4.0).unwrap().classes[0].memory_gib,
            0.0
        );
        // Three slices are too few to hold one out (no prediction: NaN); four are enough.
        assert!(
            leave_one_slice_out(gpu, &three, &memory, 0.5)
                .unwrap()
                .is_nan()
        );
        let four = [
            three[0].clone(),
            three[1].clone(),
            three[2].clone(),
            run("7g.40gb", 600.0),
        ];
        assert!(
            leave_one_slice_out(gpu, &four, &memory, 0.5)
                .unwrap()
                .is_finite()
        );
    }

    #[test]
    fn issue_37_the_a100_report_counts_runs_and_classes_and_takes_the_median_spread() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let source = Profile::load(&root.join("profiles/h200.ron")).unwrap();
        let (profile, report) = a100_profile(&shipped(), &source, "h200", "2026-12-06").unwrap();
        let runs = read_runs(&shipped()).unwrap();
        let mut spreads: Vec<f64> = runs.iter().map(|r| r.spread).collect();
        spreads.sort_by(f64::total_cmp);
        assert_eq!(report.runs, runs.len());
        assert_eq!(report.median_spread, spreads[runs.len() / 2]);
        assert_eq!(profile.timeslice.origin, Some(Origin::Transferred));
        assert_eq!(profile.mps.origin, Some(Origin::Transferred));
    }

    #[test]
    fn bigger_slices_are_faster_for_resnet() {
        let runs = read_runs(&shipped()).unwrap();
        let rate = |slice: &str| {
            runs.iter()
                .find(|r| r.slice == slice && r.key == ModelKey::new("miso_resnet", 128, 32))
                .unwrap()
                .samples_per_s
        };
        assert!(rate("1g.5gb") < rate("3g.20gb") && rate("3g.20gb") < rate("7g.40gb"));
    }
}
