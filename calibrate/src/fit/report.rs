//! Text renderings of fits: the validation table, the per-job predictions CSV, the profile file
//! (RON with a header), and the Gavel and MISO reports.
use std::fmt::Write as _;

use colo_sim::perf::{Origin, Profile};

use super::gavel::GavelReport;
use super::measured::{Dataset, zoo_set};
use super::miso::MisoReport;
use super::validate::{ErrorRow, MemoryVerdicts, PredictedJob};
use colo_sim::perf::MeasuredMode;

fn pct(x: f64) -> String {
    if x.is_finite() {
        format!("{:.1}%", x * 100.0)
    } else {
        "-".into()
    }
}

/// A signed percentage: `+1.2%`, `-0.4%`, or `-` for none.
fn signed_pct(x: f64) -> String {
    if x.is_finite() {
        format!("{:+.1}%", x * 100.0)
    } else {
        "-".into()
    }
}

/// A 95% half-width: `±1.2%`, or `-` for none.
fn plus_minus_pct(x: f64) -> String {
    if x.is_finite() {
        format!("±{:.1}%", x * 100.0)
    } else {
        "-".into()
    }
}

/// The validation table: per split, mode and job class, the model's MAPE beside the baselines and
/// the noise floor.
pub fn validation_table(ds: &Dataset, rows: &[ErrorRow], memory: &MemoryVerdicts) -> String {
    let mut out = String::new();
    if ds.fake {
        let _ = writeln!(
            out,
            "FAKE DATA: records of the fake runner (`--fake-gpu`, taken with --allow-fake): invented numbers, not measurements"
        );
    }
    let _ = writeln!(
        out,
        "{} classes measured alone, {} sets; files: {}",
        ds.classes.len(),
        ds.sets.len(),
        ds.files.len()
    );
    for (why, n) in &ds.records_left_out {
        let _ = writeln!(out, "left out: {n} record(s) {why}");
    }
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

/// One row per predicted job: `split,mode,n_jobs,job,launch_bound,measured,predicted,equal_share,fixed_slowdown,noise,measured_samples_per_s,alone_noise,predicted_samples_per_s,set`.
pub fn predictions_csv(jobs: &[PredictedJob]) -> String {
    // The csv writer quotes what needs quoting (splits such as `fitted, held out` hold a comma).
    let mut w = csv::Writer::from_writer(Vec::new());
    let header = [
        "split",
        "mode",
        "n_jobs",
        "job",
        "launch_bound",
        "measured",
        "predicted",
        "equal_share",
        "fixed_slowdown",
        "noise",
        "measured_samples_per_s",
        "alone_noise",
        "predicted_samples_per_s",
        "set",
    ];
    let mut rows = vec![header.map(str::to_owned)];
    rows.extend(jobs.iter().map(|j| {
        [
            j.split.clone(),
            j.mode.label().to_owned(),
            j.n_jobs.to_string(),
            j.job.clone(),
            j.launch_bound.to_string(),
            format!("{:.3}", j.measured),
            format!("{:.3}", j.predicted),
            format!("{:.3}", j.equal_share),
            format!("{:.3}", j.fixed_slowdown),
            format!("{:.4}", j.noise),
            format!("{:.3}", j.measured_samples_per_s),
            format!("{:.4}", j.alone_noise),
            format!("{:.3}", j.predicted_samples_per_s),
            j.set.clone(),
        ]
    }));
    for row in rows {
        // Writing into a Vec cannot fail.
        let _ = w.write_record(&row);
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}

/// The profile as a RON file with a header naming the command that wrote it.
pub fn profile_file(profile: &Profile, command: &str) -> Result<String, ron::Error> {
    let config = ron::ser::PrettyConfig::new()
        .depth_limit(3)
        .struct_names(false);
    let body = ron::ser::to_string_pretty(profile, config)?;
    let mut notes = String::new();
    let sections = [
        profile.timeslice.origin,
        profile.mps.origin,
        profile.mig.origin,
    ];
    if sections.contains(&Some(Origin::Default)) {
        notes
            .push_str("// default: a start value that no measured run constrained (not fitted).\n");
    }
    if profile.origin == Origin::Fake {
        notes.push_str("// FAKE: fitted to the fake runner's invented numbers (--allow-fake), not measurements.\n");
    }
    Ok(format!(
        "// Written by `{command}`. Do not edit by hand: re-run the command.\n// Origins: per model `origin` (fitted: in at least one measured set; provisional: measured alone only,\n// demands from priors); sections without `origin` share the profile's.\n{notes}{body}\n"
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

/// Which part of the dataset a kernel-model prediction belongs to, for its report.
fn kernel_subset(j: &PredictedJob) -> Option<(MeasuredMode, &'static str)> {
    let zoo = zoo_set(&j.set);
    let subset = match (j.mode, j.n_jobs, zoo) {
        (MeasuredMode::Exclusive | MeasuredMode::Mig, _, _) => return None,
        (MeasuredMode::MigEmulated, 1, _) => "slices alone",
        (MeasuredMode::MigEmulated, _, true) => "zoo slice layouts",
        (MeasuredMode::MigEmulated, _, false) => "slice layouts",
        (_, 1, true) => "zoo SM budgets",
        (_, 1, false) => "SM budgets alone",
        (_, _, true) => "zoo co-runs",
        (_, 2, false) => "pairs",
        _ => "sets of 3+",
    };
    Some((j.mode, subset))
}

/// The parametric model's split to set beside a kernel subset: the held-out test that matches
/// it (zoo co-runs: each model's co-runs with the model left out of the fit).
fn parametric_split(subset: &str) -> &'static str {
    match subset {
        "sets of 3+" | "slice layouts" => "3+ jobs",
        "slices alone" => "slice held out",
        "zoo co-runs" | "zoo SM budgets" | "zoo slice layouts" => "model held out",
        _ => "train",
    }
}

/// Student's t at 97.5% for 1..=30 degrees of freedom (beyond: the normal's 1.96).
const T_975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

/// Half-width of a 95% interval for the mean of `errors` over jobs, with the jobs of one set
/// (the `&str`) counted as one sample: a set's jobs share its co-runners and their alone-run
/// denominators, so they are not independent. The cluster-robust standard error
/// `sqrt(K/(K-1) * sum_k (sum_{i in k} (e_i - mean))^2) / n` over K sets and n jobs, times t at
/// K-1 degrees of freedom. NaN with fewer than two sets.
fn set_clustered_half_width(errors: &[(&str, f64)]) -> f64 {
    let n = errors.len();
    let mean = errors.iter().map(|(_, e)| e).sum::<f64>() / n as f64;
    let mut deviation_by_set: std::collections::BTreeMap<&str, f64> = Default::default();
    for (set, e) in errors {
        *deviation_by_set.entry(set).or_default() += e - mean;
    }
    let k = deviation_by_set.len();
    if k < 2 {
        return f64::NAN;
    }
    let sum_of_squares: f64 = deviation_by_set.values().map(|d| d * d).sum();
    let standard_error = (k as f64 / (k - 1) as f64 * sum_of_squares).sqrt() / n as f64;
    T_975.get(k - 2).copied().unwrap_or(1.96) * standard_error
}

/// The kernel model's table: per mode, subset and job class, its MAPE alone-only and with the
/// fitted globals, beside the parametric model's matching split, equal share and the noise.
pub fn kernel_table(kv: &super::kernel::KernelValidation, parametric: &[PredictedJob]) -> String {
    let ape = |p: f64, m: f64| ((p - m) / m).abs();
    let mean = |v: &[f64]| {
        if v.is_empty() {
            f64::NAN
        } else {
            v.iter().sum::<f64>() / v.len() as f64
        }
    };
    let g = kv.fitted;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "kernel model (fraction of alone from each job's alone kernel trace, its replay anchored to the job's alone runs on the set's GPU; MAPE of per-job samples/s, measured as a fraction of the same point alone on the same GPU times its median alone rate: the same as the MAPE of the fraction of alone)"
    );
    let _ = writeln!(
        out,
        "globals {} on {} training sets (pairs and SM-budget runs of calibrated models): MPS overlap {:.3} (compute-bound kernels {:.3}), MPS launch {:.3} us, MPS host factor {:.3}, time-slice switch {:.4} us/burst, time-slice overhead {:.3}, time-slice wait {:.3} of co-runners' residual kernel, time-slice kernel gap {:.2} us (fitted on H100 same-session sets, not here), wave exponent {:.3}, memory knee {:.3} / waves^{:.3}, DRAM efficiency {:.3} (0: no bandwidth stage); {} sets left out (a member untraced)",
        if kv.every_stage {
            "fitted"
        } else {
            "partly fitted (others default)"
        },
        kv.fitted_on,
        g.mps_overlap,
        g.compute_overlap,
        g.mps_launch_s * 1e6,
        g.mps_host_factor,
        g.timeslice_switch_s * 1e6,
        g.timeslice_overhead,
        g.timeslice_wait,
        g.timeslice_kernel_gap_s * 1e6,
        g.wave_exponent,
        g.memory_knee,
        g.memory_knee_waves,
        g.dram_efficiency,
        kv.untraced_sets
    );
    let _ = writeln!(
        out,
        "{:<13} {:<17} {:<13} {:>4} {:>11} {:>8} {:>7} {:>11} {:>8} {:>12} {:>7} {:>12} {:>11} {:>11} {:>11}",
        "mode",
        "sets",
        "jobs",
        "n",
        "alone-only",
        "fitted",
        "signed",
        "fit saw it",
        "param.",
        "equal share",
        "noise",
        "alone noise",
        "fitted rate",
        "fitted ±95",
        "signed ±95"
    );
    for mode in [
        MeasuredMode::Mps,
        MeasuredMode::Timeslice,
        MeasuredMode::MigEmulated,
    ] {
        for subset in [
            "pairs",
            "sets of 3+",
            "zoo co-runs",
            "SM budgets alone",
            "zoo SM budgets",
            "slices alone",
            "slice layouts",
            "zoo slice layouts",
        ] {
            for jobs_of in super::validate::JOB_CLASSES {
                let keep = |j: &&PredictedJob| {
                    kernel_subset(j) == Some((mode, subset))
                        && super::validate::in_job_class(j, jobs_of)
                };
                let alone: Vec<&PredictedJob> = kv
                    .jobs
                    .iter()
                    .filter(|j| j.split == "alone-only")
                    .filter(keep)
                    .collect();
                if alone.is_empty() {
                    continue;
                }
                let fitted: Vec<&PredictedJob> = kv
                    .jobs
                    .iter()
                    .filter(|j| j.split != "alone-only")
                    .filter(keep)
                    .collect();
                let saw = fitted.first().is_some_and(|j| j.split == "fitted, train");
                let split = parametric_split(subset);
                let param: Vec<f64> = parametric
                    .iter()
                    .filter(|j| j.split == split)
                    .filter(keep)
                    .map(|j| ape(j.predicted, j.measured))
                    .collect();
                let errors = |v: &[&PredictedJob]| {
                    mean(
                        &v.iter()
                            .map(|j| ape(j.predicted, j.measured))
                            .collect::<Vec<_>>(),
                    )
                };
                let equal: Vec<f64> = alone
                    .iter()
                    .map(|j| ape(j.equal_share, j.measured))
                    .collect();
                let noise: Vec<f64> = alone.iter().map(|j| j.noise).collect();
                let alone_noise: Vec<f64> = alone.iter().map(|j| j.alone_noise).collect();
                let rate: Vec<f64> = fitted
                    .iter()
                    .map(|j| ape(j.predicted_samples_per_s, j.measured_samples_per_s))
                    .collect();
                let by_set = |error: &dyn Fn(&PredictedJob) -> f64| {
                    set_clustered_half_width(
                        &fitted
                            .iter()
                            .map(|j| (j.set.as_str(), error(j)))
                            .collect::<Vec<_>>(),
                    )
                };
                let _ = writeln!(
                    out,
                    "{:<13} {:<17} {:<13} {:>4} {:>11} {:>8} {:>7} {:>11} {:>8} {:>12} {:>7} {:>12} {:>11} {:>11} {:>11}",
                    mode,
                    subset,
                    jobs_of,
                    alone.len(),
                    pct(errors(&alone)),
                    pct(errors(&fitted)),
                    signed_pct(mean(
                        &fitted
                            .iter()
                            .map(|j| (j.predicted - j.measured) / j.measured)
                            .collect::<Vec<_>>()
                    )),
                    if saw { "yes" } else { "no" },
                    pct(mean(&param)),
                    pct(mean(&equal)),
                    pct(mean(&noise)),
                    pct(mean(&alone_noise)),
                    pct(mean(&rate)),
                    plus_minus_pct(by_set(&|j| ape(j.predicted, j.measured))),
                    plus_minus_pct(by_set(&|j| (j.predicted - j.measured) / j.measured))
                );
            }
        }
    }
    let _ = writeln!(
        out,
        "alone-only: no fitted parameter (the traces alone); fitted: the globals above; jobs steady: the job's co-run repeats and its alone runs on the set's GPU each within {:.0}% of their median (mean deviation); signed: the fitted model's mean signed error (+: predicted faster than measured); fit saw it: whether those sets trained the globals (no = held out); param.: the parametric model on the same jobs in its matching test (pairs and budgets: train; sets of 3+ and layouts: 3+ jobs; slices alone: slice held out; zoo co-runs: model held out); zoo co-runs involve models outside the calibrated set; noise: the co-run repeats' deviation from their median; alone noise: the same for the job's alone runs on the set's GPU, the denominator of its fraction of alone; fitted rate: the fitted model's samples/s from each point's median alone rate over every GPU (no same-GPU alone run used, as `colo predict`) against the samples/s measured in the set; fitted ±95 and signed ±95: half-widths of 95% intervals for the fitted and signed columns, with a set's jobs counted as one sample (cluster-robust over sets, Student's t; - with fewer than two sets): a signed error inside its interval of 0 is not told apart from none",
        super::validate::STEADY_NOISE * 100.0
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use colo_sim::perf::kernel::KernelGlobals;

    /// A GPU-bound job of `set` (`mode`, `n` jobs) measured at 1.0, predicted at `predicted`.
    fn job(set: &str, mode: MeasuredMode, n: usize, predicted: f64, split: &str) -> PredictedJob {
        PredictedJob {
            set: set.to_owned(),
            mode,
            n_jobs: n,
            job: "a:1:1".to_owned(),
            launch_bound: false,
            measured: 1.0,
            predicted,
            predicted_samples_per_s: predicted,
            equal_share: 1.0 / n as f64,
            fixed_slowdown: 0.8,
            noise: 0.01,
            measured_samples_per_s: 1.0,
            alone_noise: 0.02,
            split: split.to_owned(),
        }
    }

    #[test]
    fn issue_32_the_interval_counts_a_sets_jobs_as_one_sample() {
        // Sets A (0.1, 0.3), B (-0.1), C (0.0): n = 4, mean 0.075; the sets' summed deviations
        // 0.25, -0.175, -0.075, squares 0.09875; sqrt(3/2 x 0.09875) / 4 = 0.0962175;
        // t(2 df) = 4.303: 0.41402.
        let errors = [("A", 0.1), ("A", 0.3), ("B", -0.1), ("C", 0.0)];
        assert!((set_clustered_half_width(&errors) - 0.41402).abs() < 1e-4);
        // The same four errors as four sets: squares 0.0875, sqrt(4/3 x 0.0875) / 4 = 0.085391,
        // t(3 df) = 3.182: 0.27171, narrower.
        let apart = [("A", 0.1), ("D", 0.3), ("B", -0.1), ("C", 0.0)];
        assert!((set_clustered_half_width(&apart) - 0.27171).abs() < 1e-4);
        // One set: no interval.
        assert!(set_clustered_half_width(&[("A", 0.1), ("A", 0.2)]).is_nan());
        assert_eq!(plus_minus_pct(0.0412), "±4.1%");
        assert_eq!(plus_minus_pct(f64::NAN), "-");
    }

    #[test]
    fn issue_37_percentages_have_one_decimal_and_a_dash_for_none() {
        assert_eq!(pct(0.1234), "12.3%");
        assert_eq!(pct(0.0), "0.0%");
        assert_eq!(pct(f64::NAN), "-");
        assert_eq!(signed_pct(0.0123), "+1.2%");
        assert_eq!(signed_pct(-0.004), "-0.4%");
        assert_eq!(signed_pct(f64::NAN), "-");
    }

    #[test]
    fn issue_37_each_prediction_falls_in_the_subset_of_its_set() {
        use MeasuredMode::{Exclusive, Mig, MigEmulated, Mps, Timeslice};
        let subset = |set: &str, mode, n| kernel_subset(&job(set, mode, n, 1.0, "x")).map(|s| s.1);
        assert_eq!(subset("exclusive [a]: a", Exclusive, 1), None);
        assert_eq!(subset("mig [a]: a", Mig, 2), None);
        assert_eq!(
            subset("mig-emulated [m]: a", MigEmulated, 1),
            Some("slices alone")
        );
        assert_eq!(
            subset("mig-emulated [zoo-m]: a", MigEmulated, 2),
            Some("zoo slice layouts")
        );
        assert_eq!(
            subset("mig-emulated [m]: a", MigEmulated, 3),
            Some("slice layouts")
        );
        assert_eq!(subset("mps [zoo-b]: a", Mps, 1), Some("zoo SM budgets"));
        assert_eq!(subset("mps [b]: a", Mps, 1), Some("SM budgets alone"));
        assert_eq!(
            subset("timeslice [zoo-p]: a", Timeslice, 2),
            Some("zoo co-runs")
        );
        assert_eq!(subset("timeslice [p]: a", Timeslice, 2), Some("pairs"));
        assert_eq!(subset("mps [s]: a", Mps, 4), Some("sets of 3+"));
        let splits: Vec<&str> = [
            "sets of 3+",
            "slice layouts",
            "slices alone",
            "zoo co-runs",
            "zoo SM budgets",
            "zoo slice layouts",
            "pairs",
            "SM budgets alone",
        ]
        .into_iter()
        .map(parametric_split)
        .collect();
        assert_eq!(
            splits,
            [
                "3+ jobs",
                "3+ jobs",
                "slice held out",
                "model held out",
                "model held out",
                "model held out",
                "train",
                "train"
            ]
        );
    }

    #[test]
    fn issue_37_the_kernel_table_scores_alone_only_and_fitted_predictions_apart() {
        // One MPS pair's job: alone-only 10% fast, fitted 5% slow (signed -5.0%), parametric
        // 20% fast; equal share 1/2 of a measured 1.0 is 50% off; one set, so no interval.
        let kv = crate::fit::kernel::KernelValidation {
            jobs: vec![
                job("mps [p]: a + b", MeasuredMode::Mps, 2, 1.1, "alone-only"),
                job(
                    "mps [p]: a + b",
                    MeasuredMode::Mps,
                    2,
                    0.95,
                    "fitted, held out",
                ),
            ],
            fitted: KernelGlobals::ALONE_ONLY,
            fitted_on: 3,
            untraced_sets: 0,
            every_stage: true,
        };
        let parametric = [job("mps [p]: a + b", MeasuredMode::Mps, 2, 1.2, "train")];
        let table = kernel_table(&kv, &parametric);
        let row: Vec<&str> = table
            .lines()
            .find(|l| l.starts_with("mps") && l.contains("pairs") && l.contains(" all "))
            .expect("the MPS pairs row")
            .split_whitespace()
            .collect();
        assert_eq!(
            row,
            [
                "mps", "pairs", "all", "1", "10.0%", "5.0%", "-5.0%", "no", "20.0%", "50.0%",
                "1.0%", "2.0%", "5.0%", "-", "-"
            ]
        );
        assert!(
            table.contains("globals fitted on 3 training sets"),
            "{table}"
        );
    }

    #[test]
    fn issue_37_the_memory_line_compares_reserved_memory_alone_with_each_process_in_a_set() {
        // By hand from smoke.jsonl and h200-solo.jsonl: resnet50:64:224 reserved 6,714 MiB
        // alone (median), 6,300 in its emulated 1g slice and 6,468 beside resnet18 under MPS;
        // resnet18:128:32 274 alone, 274 there and 278 and 274 in its time-sliced pair. Errors
        // 414/6,300, 246/6,468, 0, 4/278, 0: mean 2.4%, worst 6.6%.
        let ds = super::super::validate::tests::smoke(&|_| true);
        assert_eq!(
            memory_line(&ds),
            "memory: peak reserved memory alone vs in 5 co-run/budget processes: MAPE 2.4%, worst 6.6% (measured); out-of-memory records: 0"
        );
    }

    #[test]
    fn issue_37_the_miso_line_and_the_profile_file_say_what_they_hold() {
        let report = MisoReport {
            runs: 71,
            classes: 20,
            train_mape: 0.12,
            heldout_mape: 0.212,
            median_spread: 0.034,
        };
        assert_eq!(
            miso_table(&report),
            "MISO A100-40GB MIG slice runs (measured): 71 runs, 20 model-batch classes\nfit on all slices: MAPE 12.0%; each slice predicted from the others: MAPE 21.2%; median spread of per-iteration rates 3.4%\n"
        );
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let profile = Profile::load(&root.join("profiles/h200.ron")).expect("shipped");
        let text = profile_file(&profile, "colo calibrate fit X").expect("RON");
        assert!(
            text.starts_with("// Written by `colo calibrate fit X`. Do not edit by hand"),
            "{text}"
        );
        let body: String = text
            .lines()
            .filter(|l| !l.starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        let back: Profile = ron::from_str(&body).expect("the body reads back");
        assert_eq!(back, profile);
    }

    #[test]
    fn predictions_csv_quotes_fields_that_hold_commas() {
        let job = PredictedJob {
            set: "mps [g]: a:1:1 + \"b\":1:1".to_owned(),
            mode: MeasuredMode::Mps,
            n_jobs: 2,
            job: "a:1:1".to_owned(),
            launch_bound: false,
            measured: 1.0,
            predicted: 2.0,
            predicted_samples_per_s: 2.1,
            equal_share: 0.5,
            fixed_slowdown: 0.8,
            noise: 0.01,
            measured_samples_per_s: 1.1,
            alone_noise: 0.02,
            split: "fitted, held out".to_owned(),
        };
        let text = predictions_csv(std::slice::from_ref(&job));
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
        assert_eq!(reader.headers().unwrap().len(), 14);
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].len(), 14, "{text}");
        assert_eq!(&rows[0][0], job.split);
        assert_eq!(&rows[0][10], "1.100");
        assert_eq!(&rows[0][12], "2.100");
        assert_eq!(&rows[0][13], job.set);
    }
}
