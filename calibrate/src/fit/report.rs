//! Text renderings of fits: the validation table, the per-job predictions CSV, the profile file
//! (RON with a header), and the Gavel and MISO reports.
use std::fmt::Write as _;

use colo_sim::perf::Profile;

use super::gavel::GavelReport;
use super::measured::Dataset;
use super::miso::MisoReport;
use super::validate::{ErrorRow, MemoryVerdicts, PredictedJob};

fn pct(x: f64) -> String {
    if x.is_finite() {
        format!("{:.1}%", x * 100.0)
    } else {
        "-".into()
    }
}

/// The validation table: per split, mode and job class, the model's MAPE beside the baselines and
/// the noise floor.
pub fn validation_table(ds: &Dataset, rows: &[ErrorRow], memory: &MemoryVerdicts) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} classes measured alone, {} sets; files: {}",
        ds.classes.len(),
        ds.sets.len(),
        ds.files.len()
    );
    for (why, n) in &ds.left_out {
        let _ = writeln!(out, "left out: {n} set(s): {why}");
    }
    let _ = writeln!(
        out,
        "MAPE of per-job samples/s (measured; model fitted; baselines on the same runs; noise = mean relative deviation of repeats)"
    );
    let _ = writeln!(
        out,
        "{:<15} {:<13} {:<13} {:>5} {:>8} {:>12} {:>15} {:>7}",
        "test", "mode", "jobs", "n", "model", "equal share", "fixed slowdown", "noise"
    );
    for r in rows {
        let _ = writeln!(
            out,
            "{:<15} {:<13} {:<13} {:>5} {:>8} {:>12} {:>15} {:>7}",
            r.split,
            r.mode,
            r.jobs_of,
            r.n,
            pct(r.model_mape),
            pct(r.equal_share_mape),
            pct(r.fixed_slowdown_mape),
            pct(r.noise_floor)
        );
    }
    let _ = writeln!(out, "{}", memory_line(ds));
    let _ = writeln!(out, "{}", verdict_line(memory));
    let (plain, mps) = ds.context_mib;
    let mib = |m: Option<f64>| m.map_or("not measured".to_owned(), |v| format!("{v:.0} MiB"));
    let _ = writeln!(
        out,
        "context memory (NVML process minus PyTorch reserved, median; measured): plain processes {}, MPS clients {}",
        mib(plain),
        mib(mps)
    );
    let (n_heldout, heldout_mape) = super::measured::memory_model_heldout(ds);
    let _ = writeln!(
        out,
        "memory model held out: each batch size's peak reserved alone predicted from the line through the model's other sizes: MAPE {} over {n_heldout} points (measured vs fitted)",
        pct(heldout_mape)
    );
    for (model, m0, m1, n) in super::measured::memory_models(ds) {
        let _ = writeln!(
            out,
            "memory model {model}: {m0:.2} GiB + {m1:.1} MiB x batch (peak reserved alone, {n} batch sizes; fitted)"
        );
    }
    let _ = writeln!(
        out,
        "tests: train = single runs and pairs the fit used; 3+ jobs = larger sets predicted from that fit; slice held out = each emulated-MIG slice size predicted from a fit without it; model held out = each model's co-runs predicted from a fit without them"
    );
    out
}

/// One row per predicted job: `split,mode,n_jobs,job,launch_bound,measured,predicted,equal_share,fixed_slowdown,noise,set`.
pub fn predictions_csv(jobs: &[PredictedJob]) -> String {
    let mut out = String::from(
        "split,mode,n_jobs,job,launch_bound,measured,predicted,equal_share,fixed_slowdown,noise,set\n",
    );
    for j in jobs {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{:.3},{:.3},{:.3},{:.3},{:.4},\"{}\"",
            j.split,
            j.mode,
            j.n_jobs,
            j.job,
            j.launch_bound,
            j.measured,
            j.predicted,
            j.equal_share,
            j.fixed_slowdown,
            j.noise,
            j.set.replace('"', "'")
        );
    }
    out
}

/// The profile as a RON file with a header naming the command that wrote it.
pub fn profile_file(profile: &Profile, command: &str) -> Result<String, ron::Error> {
    let config = ron::ser::PrettyConfig::new()
        .depth_limit(3)
        .struct_names(false);
    let body = ron::ser::to_string_pretty(profile, config)?;
    Ok(format!(
        "// Written by `{command}`. Do not edit by hand: re-run the command.\n// Origins: per model `origin` (fitted: in at least one measured set; provisional: measured alone only,\n// demands from priors); sections without `origin` share the profile's.\n{body}\n"
    ))
}

/// Gavel's held-out pair errors for several GPUs.
pub fn gavel_table(reports: &[GavelReport]) -> String {
    let mut out = String::from(
        "Gavel pair table (measured steps/s, stanford-futuredata/gavel): per-job MAPE on pairs held out by k-fold cross-validation\n",
    );
    let _ = writeln!(
        out,
        "{:<6} {:>5} {:>6} {:>7} {:<34} {:>9} {:>8}",
        "gpu", "jobs", "pairs", "failed", "method", "held-out", "train"
    );
    for r in reports {
        for row in &r.rows {
            let _ = writeln!(
                out,
                "{:<6} {:>5} {:>6} {:>7} {:<34} {:>9} {:>8}",
                r.gpu,
                r.jobs,
                r.pairs,
                r.failed_pairs,
                row.method,
                pct(row.heldout_mape),
                pct(row.train_mape)
            );
        }
    }
    out
}

/// The MISO fit's quality.
pub fn miso_table(report: &MisoReport) -> String {
    format!(
        "MISO A100-40GB MIG slice runs (measured): {} runs, {} model-batch classes\nfit on all slices: MAPE {}; each slice predicted from the others: MAPE {}; median spread of per-iteration rates {}\n",
        report.runs,
        report.classes,
        pct(report.train_mape),
        pct(report.heldout_mape),
        pct(report.median_spread)
    )
}

/// How often the simulator's memory check agreed with what happened on the GPU.
fn verdict_line(v: &MemoryVerdicts) -> String {
    let mut line = format!(
        "memory verdicts (simulator's check: peak alone + measured context vs GPU or slice memory): {}/{} set repeats with an out-of-memory process predicted not to fit, {}/{} that ran predicted to fit",
        v.oom_predicted, v.oom_sets, v.ran_predicted, v.ran_sets
    );
    for (why, n) in &v.not_judged {
        line += &format!(", {n} not judged ({why})");
    }
    if !v.wrong.is_empty() {
        line += &format!("; wrong on: {}", v.wrong.join("; "));
    }
    line
}

/// Peak memory predicted (the point's reserved memory alone) against measured in every set, and
/// the out-of-memory records (none fit: they must come out as "does not fit").
pub fn memory_line(ds: &Dataset) -> String {
    let mut errors = Vec::new();
    for set in &ds.sets {
        for (member, measured) in set.observation.members.iter().zip(&set.reserved_mib) {
            let predicted = ds.info[member.class].reserved_mib;
            if measured.is_finite() && *measured > 0.0 && predicted.is_finite() {
                errors.push(((predicted - measured) / measured).abs());
            }
        }
    }
    let mape = if errors.is_empty() {
        f64::NAN
    } else {
        errors.iter().sum::<f64>() / errors.len() as f64
    };
    let worst = errors.iter().copied().fold(0.0, f64::max);
    format!(
        "memory: peak reserved memory alone vs in {} co-run/budget processes: MAPE {}, worst {} (measured); out-of-memory records: {}",
        errors.len(),
        pct(mape),
        pct(worst),
        ds.oom_records
    )
}
