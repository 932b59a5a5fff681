//! `colo calibrate published`: traces of published workloads (reproduced in
//! `calibrate/workloads/external/`) carried to the GPU their authors measured, scored against
//! the published numbers: Gavel's table (steps/s alone and in time-sliced pairs on a V100, P100
//! or K80) and MISO's A100-40GB MIG slices (each job alone in each slice).
//!
//! A traced point names its workload: `py.gavel_resnet18:BATCH:32` is Gavel's
//! `ResNet-18 (batch size BATCH)`, `py.miso_resnet50:BATCH:32` MISO's `resnet` at BATCH; points
//! of no published workload are left out and counted.
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use colo_sim::hardware::{GpuSpec, HardwareError};
use colo_sim::perf::ShareMode;
use colo_sim::perf::answer::{self, Predictor};
use colo_sim::perf::query::{QueryError, SetQuery};
use colo_sim::workload::ModelKey;
use serde::Serialize;
use thiserror::Error;

use crate::fit::gavel::GavelTable;
use crate::fit::miso::SliceRun;
use crate::predictor::{self, ModelChoice, PredictorError, PredictorSpec};
use crate::transfer::{SourcePoint, abs_stats};

/// Why a check could not be scored.
#[derive(Debug, Error)]
pub enum PublishedError {
    /// The traces could not be read or carried to the GPU.
    #[error(transparent)]
    Predictor(#[from] PredictorError),
    /// A slice of the published table is not one of the GPU's.
    #[error(transparent)]
    Hardware(#[from] HardwareError),
    /// The model could not answer for a set.
    #[error(transparent)]
    Query(#[from] QueryError),
}

/// The reproduced Gavel workloads: the module of each and its name in Gavel's table.
const GAVEL: [(&str, &str); 5] = [
    ("py.gavel_resnet18", "ResNet-18"),
    ("py.gavel_resnet50", "ResNet-50"),
    ("py.gavel_transformer", "Transformer"),
    ("py.gavel_lm", "LM"),
    ("py.gavel_cyclegan", "CycleGAN"),
];

/// The reproduced MISO workloads: the module of each and MISO's model name.
const MISO: [(&str, &str); 4] = [
    ("py.miso_resnet50", "resnet"),
    ("py.miso_mobilenet", "mobilenet"),
    ("py.miso_bert", "bert"),
    ("py.miso_transformer", "transformer"),
];

/// MISO's whole-GPU slice, which the slice ratios are taken against.
const WHOLE_SLICE: &str = "7g.40gb";

/// Gavel's job-type name of a traced point (`ResNet-18 (batch size 32)`, `CycleGAN`).
pub fn gavel_name(key: &ModelKey) -> Option<String> {
    let (_, name) = GAVEL.iter().find(|(module, _)| *module == key.model)?;
    Some(if *name == "CycleGAN" {
        (*name).to_owned()
    } else {
        format!("{name} (batch size {})", key.batch)
    })
}

/// Whether MISO's run `run` is of the workload a traced point reproduces, at its batch.
pub fn is_miso_run_of(key: &ModelKey, run: &SliceRun) -> bool {
    MISO.iter().any(|(module, name)| {
        *module == key.model
            && run.key.model == format!("miso_{name}")
            && run.key.batch == key.batch
    })
}

/// One traced point alone, against the published measurement.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AloneRow {
    /// The traced point (`py.gavel_resnet18:32:32`).
    pub point: String,
    /// The published workload (`ResNet-18 (batch size 32)`, `resnet:64`).
    pub published: String,
    /// Where it ran: `whole GPU` or the MIG slice.
    pub place: String,
    /// Iterations per second measured on the trace's GPU (its unprofiled window).
    pub source_steps_per_s: f64,
    /// Iterations per second predicted on the target from the transferred trace.
    pub predicted_steps_per_s: f64,
    /// Iterations per second the authors measured.
    pub published_steps_per_s: f64,
    /// predicted / published - 1, percent.
    pub error_pct: f64,
    /// source / published - 1, percent: the error of assuming the source GPU's speed.
    pub same_speed_error_pct: f64,
    /// In a MIG slice: the slice's speed over the whole GPU's (7g), predicted.
    pub predicted_slice_ratio: Option<f64>,
    /// The same, published.
    pub published_slice_ratio: Option<f64>,
    /// predicted ratio / published ratio - 1, percent.
    pub slice_ratio_error_pct: Option<f64>,
    /// Whether the predicted process fits the place's memory (a PyTorch process on a 2026 host
    /// reserves more than a 2019 TensorFlow one).
    pub fits_memory: bool,
}

/// One job of a time-sliced pair, against the published pair.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PairRow {
    /// The traced point.
    pub point: String,
    /// Its partner's traced point.
    pub partner: String,
    /// Iterations per second predicted in the pair.
    pub predicted_steps_per_s: f64,
    /// Iterations per second the authors measured in the pair.
    pub published_steps_per_s: f64,
    /// predicted / published - 1, percent (the alone error included).
    pub error_pct: f64,
    /// Predicted fraction of its alone speed (pair over alone, both predicted).
    pub predicted_fraction: f64,
    /// Published fraction of its alone speed (pair over alone, both measured).
    pub published_fraction: f64,
    /// predicted fraction / published fraction - 1, percent.
    pub fraction_error_pct: f64,
    /// 0.5 / published fraction - 1, percent: the equal-share baseline.
    pub equal_share_error_pct: f64,
}

/// What a check scored, with what it left out.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PublishedCheck {
    /// The GPU carried to.
    pub gpu: String,
    /// Alone rows.
    pub alone: Vec<AloneRow>,
    /// Pair rows (Gavel only).
    pub pairs: Vec<PairRow>,
    /// Traced points of no published workload, or whose workload the table lacks.
    pub unmatched: Vec<String>,
}

fn steps(samples_per_s: f64, key: &ModelKey) -> f64 {
    samples_per_s / f64::from(key.batch.max(1))
}

fn pct(ratio: f64) -> f64 {
    (ratio - 1.0) * 100.0
}

/// The kernel model with `dir`'s traces carried to `gpu` (host time times `cpu_factor`), for
/// `jobs`.
fn predictor_for(
    dir: &Path,
    gpu: &GpuSpec,
    jobs: &[ModelKey],
    cpu_factor: f64,
) -> Result<Predictor, PublishedError> {
    let spec = PredictorSpec {
        gpu: gpu.name.to_owned(),
        profiles: Vec::new(),
        traces: vec![dir.to_owned()],
        alone_rates: Vec::new(),
        model: ModelChoice::Kernel,
        jobs: jobs.to_vec(),
        cpu_factor,
    };
    Ok(predictor::build(&spec)?.predictor)
}

/// Samples/s of `jobs` sharing `predictor`'s GPU in `mode` (one slice named by `slice`), and
/// whether they fit its memory.
fn predict(
    predictor: &Predictor,
    mode: ShareMode,
    jobs: &[ModelKey],
    slice: Option<&str>,
) -> Result<(Vec<f64>, bool), PublishedError> {
    let gpu = predictor.gpu;
    let layout = match slice {
        Some(text) => Some(gpu.parse_mig_layout(text)?),
        None => None,
    };
    let query = SetQuery {
        gpu,
        mode,
        jobs: jobs.to_vec(),
        sm_budgets: Vec::new(),
        layout,
    };
    let found = answer::answer(predictor, query)?;
    let rates = found
        .prediction
        .jobs
        .iter()
        .map(|j| j.samples_per_s)
        .collect();
    Ok((rates, found.prediction.fits_memory))
}

/// Scores the traces of `sources` (from `dir`) carried to `gpu` (host time times
/// `cpu_factor`) against Gavel's `table`.
///
/// # Errors
/// The traces cannot be read or predicted on `gpu`.
pub fn check_gavel(
    dir: &Path,
    sources: &[SourcePoint],
    gpu: &'static GpuSpec,
    table: &GavelTable,
    cpu_factor: f64,
) -> Result<PublishedCheck, PublishedError> {
    let mut check = PublishedCheck {
        gpu: gpu.name.to_owned(),
        ..PublishedCheck::default()
    };
    // (traced point, its source speed, its index in the table)
    let mut matched: Vec<(ModelKey, f64, usize)> = Vec::new();
    for source in sources {
        let Ok(key) = source.point.parse::<ModelKey>() else {
            check.unmatched.push(source.point.clone());
            continue;
        };
        let index =
            gavel_name(&key).and_then(|name| table.jobs.iter().position(|(n, _)| *n == name));
        match index {
            Some(i) => matched.push((key, source.samples_per_s, i)),
            None => check.unmatched.push(source.point.clone()),
        }
    }
    let keys: Vec<ModelKey> = matched.iter().map(|(k, _, _)| k.clone()).collect();
    if keys.is_empty() {
        return Ok(check);
    }
    let predictor = predictor_for(dir, gpu, &keys, cpu_factor)?;
    let mut alone_steps = BTreeMap::new();
    for (key, source_rate, i) in &matched {
        let (rates, fits) = predict(
            &predictor,
            ShareMode::Exclusive,
            std::slice::from_ref(key),
            None,
        )?;
        let predicted = steps(rates[0], key);
        let (name, published) = &table.jobs[*i];
        alone_steps.insert(*i, (key.clone(), predicted));
        check.alone.push(AloneRow {
            point: key.to_string(),
            published: name.clone(),
            place: "whole GPU".into(),
            source_steps_per_s: steps(*source_rate, key),
            predicted_steps_per_s: predicted,
            published_steps_per_s: *published,
            error_pct: pct(predicted / published),
            same_speed_error_pct: pct(steps(*source_rate, key) / published),
            predicted_slice_ratio: None,
            published_slice_ratio: None,
            slice_ratio_error_pct: None,
            fits_memory: fits,
        });
    }
    for (&(i, j), &(rate_i, rate_j)) in &table.pairs {
        let (Some((key_i, alone_i)), Some((key_j, alone_j))) =
            (alone_steps.get(&i), alone_steps.get(&j))
        else {
            continue;
        };
        let (rates, _) = predict(
            &predictor,
            ShareMode::Timeslice,
            &[key_i.clone(), key_j.clone()],
            None,
        )?;
        let members = [
            (key_i, key_j, *alone_i, rates[0], rate_i, table.jobs[i].1),
            (key_j, key_i, *alone_j, rates[1], rate_j, table.jobs[j].1),
        ];
        // A job paired with itself is one row: both members are the same measurement.
        let distinct = if i == j { 1 } else { 2 };
        for (key, partner, alone, rate, published, published_alone) in
            members.into_iter().take(distinct)
        {
            let predicted = steps(rate, key);
            let published_fraction = published / published_alone;
            let predicted_fraction = predicted / alone;
            check.pairs.push(PairRow {
                point: key.to_string(),
                partner: partner.to_string(),
                predicted_steps_per_s: predicted,
                published_steps_per_s: published,
                error_pct: pct(predicted / published),
                predicted_fraction,
                published_fraction,
                fraction_error_pct: pct(predicted_fraction / published_fraction),
                equal_share_error_pct: pct(0.5 / published_fraction),
            });
        }
    }
    Ok(check)
}

/// Scores the traces of `sources` (from `dir`) carried to `gpu` (an A100-40GB) against MISO's
/// slice `runs`: each traced point alone in each slice MISO measured it in (host time times
/// `cpu_factor`).
///
/// # Errors
/// The traces cannot be read or predicted on `gpu`, or a slice is not one of `gpu`'s.
pub fn check_miso(
    dir: &Path,
    sources: &[SourcePoint],
    gpu: &'static GpuSpec,
    runs: &[SliceRun],
    cpu_factor: f64,
) -> Result<PublishedCheck, PublishedError> {
    let mut check = PublishedCheck {
        gpu: gpu.name.to_owned(),
        ..PublishedCheck::default()
    };
    let mut matched: Vec<(ModelKey, f64, Vec<&SliceRun>)> = Vec::new();
    for source in sources {
        let key = source.point.parse::<ModelKey>().ok();
        let of: Vec<&SliceRun> = key
            .as_ref()
            .map(|k| runs.iter().filter(|r| is_miso_run_of(k, r)).collect())
            .unwrap_or_default();
        match key {
            Some(key) if !of.is_empty() => matched.push((key, source.samples_per_s, of)),
            _ => check.unmatched.push(source.point.clone()),
        }
    }
    let keys: Vec<ModelKey> = matched.iter().map(|(k, _, _)| k.clone()).collect();
    if keys.is_empty() {
        return Ok(check);
    }
    let predictor = predictor_for(dir, gpu, &keys, cpu_factor)?;
    for (key, source_rate, of) in &matched {
        let mut predicted_in = BTreeMap::new();
        for run in of {
            let (rates, fits) = predict(
                &predictor,
                ShareMode::Mig,
                std::slice::from_ref(key),
                Some(&run.slice),
            )?;
            predicted_in.insert(run.slice.clone(), (rates[0], fits));
        }
        let predicted_whole = predicted_in.get(WHOLE_SLICE).map(|p| p.0);
        let published_whole = of
            .iter()
            .find(|r| r.slice == WHOLE_SLICE)
            .map(|r| r.samples_per_s);
        for run in of {
            let (predicted, fits) = predicted_in[&run.slice];
            let (pred_ratio, pub_ratio) = match (predicted_whole, published_whole) {
                (Some(p), Some(m)) if run.slice != WHOLE_SLICE => {
                    (Some(predicted / p), Some(run.samples_per_s / m))
                }
                _ => (None, None),
            };
            check.alone.push(AloneRow {
                point: key.to_string(),
                published: format!(
                    "{}:{}",
                    run.key.model.trim_start_matches("miso_"),
                    run.key.batch
                ),
                place: run.slice.clone(),
                source_steps_per_s: steps(*source_rate, key),
                predicted_steps_per_s: steps(predicted, key),
                published_steps_per_s: steps(run.samples_per_s, key),
                error_pct: pct(predicted / run.samples_per_s),
                same_speed_error_pct: pct(source_rate / run.samples_per_s),
                predicted_slice_ratio: pred_ratio,
                published_slice_ratio: pub_ratio,
                slice_ratio_error_pct: pred_ratio.zip(pub_ratio).map(|(p, m)| pct(p / m)),
                fits_memory: fits,
            });
        }
    }
    Ok(check)
}

/// One line of mean absolute errors per workload (the model part of each row's point), in
/// name order: `  by workload: py.gavel_lm 23.8% (5), ...`.
fn by_workload<'a>(rows: impl Iterator<Item = (&'a str, f64)>) -> String {
    let mut groups: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for (point, error) in rows {
        groups
            .entry(point.split(':').next().unwrap_or(point))
            .or_default()
            .push(error);
    }
    let parts: Vec<String> = groups
        .iter()
        .filter_map(|(workload, errors)| {
            abs_stats(errors).map(|(mean, _, _, n)| format!("{workload} {mean:.1}% ({n})"))
        })
        .collect();
    format!("  by workload: {}\n", parts.join(", "))
}

fn summary_line(label: &str, values: &[f64]) -> String {
    match abs_stats(values) {
        Some((mean, median, max, n)) => {
            format!(
                "{label}: mean |error| {mean:.1}%, median {median:.1}%, max {max:.1}% over {n}\n"
            )
        }
        None => format!("{label}: nothing to score\n"),
    }
}

/// The check as text: the alone table (with slice ratios for MIG), the pair table, and the
/// mean errors beside their baselines.
pub fn render(check: &PublishedCheck, source_gpu: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "published measurements against traces carried from {source_gpu} to {} (predicted: transferred; published: measured by the authors)",
        check.gpu
    );
    let _ = writeln!(
        out,
        "{:<30} {:<28} {:>10} {:>10} {:>10} {:>10} {:>8} {:>11} {:>10}",
        "point",
        "published as",
        "place",
        "src it/s",
        "pred it/s",
        "pub it/s",
        "error %",
        "same-spd %",
        "ratio err%"
    );
    for row in &check.alone {
        let ratio = row
            .slice_ratio_error_pct
            .map_or_else(|| "-".to_owned(), |e| format!("{e:+.1}"));
        let _ = writeln!(
            out,
            "{:<30} {:<28} {:>10} {:>10.2} {:>10.2} {:>10.2} {:>+8.1} {:>+11.1} {:>10}{}",
            row.point,
            row.published,
            row.place,
            row.source_steps_per_s,
            row.predicted_steps_per_s,
            row.published_steps_per_s,
            row.error_pct,
            row.same_speed_error_pct,
            ratio,
            if row.fits_memory {
                ""
            } else {
                "  (over memory)"
            }
        );
    }
    let alone: Vec<f64> = check.alone.iter().map(|r| r.error_pct).collect();
    let same: Vec<f64> = check.alone.iter().map(|r| r.same_speed_error_pct).collect();
    out.push_str(&summary_line("alone, transferred", &alone));
    out.push_str(&by_workload(
        check.alone.iter().map(|r| (r.point.as_str(), r.error_pct)),
    ));
    out.push_str(&summary_line(
        "alone, same speed as the source (baseline)",
        &same,
    ));
    let ratios: Vec<f64> = check
        .alone
        .iter()
        .filter_map(|r| r.slice_ratio_error_pct)
        .collect();
    if !ratios.is_empty() {
        out.push_str(&summary_line("slice over 7g ratio, transferred", &ratios));
        out.push_str(&by_workload(check.alone.iter().filter_map(|r| {
            r.slice_ratio_error_pct.map(|e| (r.point.as_str(), e))
        })));
    }
    if !check.pairs.is_empty() {
        let _ = writeln!(
            out,
            "\ntime-sliced pairs: {:<30} {:<30} {:>9} {:>9} {:>8} {:>10} {:>10} {:>10} {:>10}",
            "point",
            "partner",
            "pred it/s",
            "pub it/s",
            "error %",
            "pred frac",
            "pub frac",
            "frac err%",
            "1/2 err %"
        );
        for row in &check.pairs {
            let _ = writeln!(
                out,
                "                   {:<30} {:<30} {:>9.2} {:>9.2} {:>+8.1} {:>10.3} {:>10.3} {:>+10.1} {:>+10.1}",
                row.point,
                row.partner,
                row.predicted_steps_per_s,
                row.published_steps_per_s,
                row.error_pct,
                row.predicted_fraction,
                row.published_fraction,
                row.fraction_error_pct,
                row.equal_share_error_pct
            );
        }
        let errors: Vec<f64> = check.pairs.iter().map(|r| r.error_pct).collect();
        let fractions: Vec<f64> = check.pairs.iter().map(|r| r.fraction_error_pct).collect();
        let equal: Vec<f64> = check
            .pairs
            .iter()
            .map(|r| r.equal_share_error_pct)
            .collect();
        out.push_str(&summary_line("pairs, per-job speed", &errors));
        out.push_str(&summary_line("pairs, fraction of alone", &fractions));
        out.push_str(&by_workload(
            check
                .pairs
                .iter()
                .map(|r| (r.point.as_str(), r.fraction_error_pct)),
        ));
        out.push_str(&summary_line(
            "pairs, fraction of alone, equal share (baseline)",
            &equal,
        ));
    }
    if !check.unmatched.is_empty() {
        let _ = writeln!(
            out,
            "left out: {} traced point(s) of no workload the table holds: {}",
            check.unmatched.len(),
            check.unmatched.join(", ")
        );
    }
    out
}

/// Rows as CSV (a header, then one line per row).
pub fn to_csv<T: Serialize>(rows: &[T]) -> Result<String, csv::Error> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    for row in rows {
        writer.serialize(row)?;
    }
    let bytes = writer.into_inner().map_err(|e| e.into_error())?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(text: &str) -> ModelKey {
        text.parse().unwrap()
    }

    #[test]
    fn points_are_named_as_the_published_tables_name_them() {
        assert_eq!(
            gavel_name(&key("py.gavel_resnet18:64:32")).as_deref(),
            Some("ResNet-18 (batch size 64)")
        );
        assert_eq!(
            gavel_name(&key("py.gavel_lm:5:35")).as_deref(),
            Some("LM (batch size 5)")
        );
        assert_eq!(
            gavel_name(&key("py.gavel_cyclegan:1:256")).as_deref(),
            Some("CycleGAN")
        );
        assert_eq!(gavel_name(&key("resnet18:64:32")), None);
        let run = |model: &str, batch: u32| SliceRun {
            slice: "3g.20gb".into(),
            key: ModelKey::new(model, batch, 1),
            samples_per_s: 1.0,
            spread: 0.0,
            iterations: 10,
        };
        assert!(is_miso_run_of(
            &key("py.miso_bert:2:512"),
            &run("miso_bert", 2)
        ));
        assert!(!is_miso_run_of(
            &key("py.miso_bert:2:512"),
            &run("miso_bert", 4)
        ));
        assert!(is_miso_run_of(
            &key("py.miso_resnet50:64:32"),
            &run("miso_resnet", 64)
        ));
        assert!(!is_miso_run_of(
            &key("py.miso_resnet50:64:32"),
            &run("miso_mobilenet", 64)
        ));
    }
}
