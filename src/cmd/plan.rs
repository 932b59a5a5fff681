//! `colo plan`: the smallest cluster per candidate GPU group that meets a target on a
//! scenario's workload, the cheapest with prices; a table, plan.csv and cost/target figures.
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use colo_plots::{ChartText, Curve, CurveKind, FigureOut, plot_curves};
use colo_sim::fsutil::{self, WholeDir};
use colo_sim::plan::{
    CandidateResult, Metric, PlanReport, TIE_BREAK, Target, Unit, plan, plan_csv,
};
use colo_sim::scenario::{RunOptions, Scenario};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::{Value, json};

use super::FormatArg;

/// `colo plan --help`'s closing text: examples, and how ties are broken.
pub fn after_help() -> String {
    format!(
        "Examples:\n  colo plan scenarios/planning/mps-vs-exclusive.ron --target \"p95_wait <= 2h\"\n  colo plan scenarios/planning/a100-vs-h200-prices.ron --target \"mean_jct <= 3h\" --out /tmp/plan\n  colo plan scenarios/planning/a100-vs-h200-prices.ron --target \"p95_wait <= 1h\" --format json\n\nTies: {TIE_BREAK}."
    )
}

/// Arguments of `colo plan`.
#[derive(clap::Args)]
pub struct PlanArgs {
    /// Scenario file (RON) with a `plan` section, e.g. scenarios/planning/mps-vs-exclusive.ron.
    pub scenario: PathBuf,
    /// What the cluster must achieve: METRIC OP VALUE with metric mean_jct, p95_jct,
    /// mean_wait, p95_wait, makespan (<=, units s, m, h), throughput (>=, samples/s),
    /// energy_kwh (<=, kWh, from the profile's fitted power model) or samples_per_joule (>=),
    /// e.g. "p95_jct <= 2h".
    #[arg(long)]
    pub target: String,
    /// Folder for plan.csv and the figures (default: the scenario's result folder + /plan).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// What stdout gets: `table` (the candidates table and the answer) or `json` (one JSON
    /// object: the target, per candidate its answer and the table's figures with the unit in
    /// each key name, the cheapest, the tie-break, origins and files; progress on stderr).
    #[arg(long, value_enum, default_value_t = FormatArg::Table)]
    pub format: FormatArg,
}

/// Runs `colo plan`.
pub fn run(args: PlanArgs) -> anyhow::Result<ExitCode> {
    let target: Target = args.target.parse()?;
    let scenario = Scenario::load(&args.scenario)?;
    let out = args
        .out
        .unwrap_or_else(|| scenario.output_dir(&RunOptions::default()).join("plan"));
    let bar = ProgressBar::new_spinner().with_style(
        ProgressStyle::with_template("{spinner} planning: {pos} simulations [{elapsed}]")
            .context("progress bar template")?,
    );
    super::interrupt_removes_outputs()?;
    let writing = || format!("writing {}", out.display());
    fsutil::check_outside(&out, &[&args.scenario]).with_context(writing)?;
    let whole = WholeDir::begin_result(&out, "plan", &scenario.file.name).with_context(writing)?;
    let report = plan(&scenario, &target, &|done| bar.set_position(done));
    bar.finish_and_clear();
    let report = report?;
    let csv_path = whole.path().join("plan.csv");
    std::fs::write(&csv_path, plan_csv(&report)).with_context(writing)?;
    let mut files = vec![csv_path];
    files.extend(figures(&report, whole.path())?);
    let files: Vec<PathBuf> = files.iter().map(|f| whole.final_path(f)).collect();
    whole.commit().with_context(writing)?;
    match args.format {
        FormatArg::Table => super::print(&table(&scenario, &report, &files))?,
        FormatArg::Json => super::print_json(&json(&scenario, &report, &files))?,
    }
    Ok(ExitCode::SUCCESS)
}

fn origin(report: &PlanReport) -> String {
    report
        .candidates
        .iter()
        .flat_map(|c| &c.points)
        .find_map(|p| p.summary.as_ref())
        .map_or_else(|| "unknown".into(), |s| s.labels.profile_origin.clone())
}

/// The performance models the simulations ran with (`kernel`, `parametric`, ...), as their
/// summaries name them.
fn perf_models(report: &PlanReport) -> String {
    let mut models: Vec<&str> = report
        .candidates
        .iter()
        .flat_map(|c| &c.points)
        .filter_map(|p| p.summary.as_ref())
        .map(|s| s.labels.perf_model.as_str())
        .collect();
    models.sort_unstable();
    models.dedup();
    if models.is_empty() {
        "unknown".into()
    } else {
        models.join(", ")
    }
}

fn table(scenario: &Scenario, report: &PlanReport, files: &[PathBuf]) -> String {
    let t = &report.target;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: smallest cluster meeting {t}, per candidate (model {}, profile origin {}; all figures simulated)",
        scenario.file.name,
        perf_models(report),
        origin(report)
    );
    if matches!(t.metric, Metric::EnergyKwh | Metric::SamplesPerJoule) {
        let points = report.candidates.iter().flat_map(|c| &c.points);
        let energies = points.filter_map(|p| p.summary.as_ref()?.energy.as_ref());
        let _ = writeln!(out, "{}", colo_sim::metrics::energy::provenance(energies));
    }
    let metric = format!("{} ({})", t.metric.name(), t.unit.suffix());
    let w = super::name_width(report.candidates.iter().map(|c| c.label.as_str()), 28);
    let _ = writeln!(
        out,
        "{:<w$} {:>9} {:>16} {:>12} {:>10}  note",
        "candidate", "GPUs", metric, "one fewer", "$/hour"
    );
    for c in &report.candidates {
        let (size, value, fewer) = match c.smallest {
            Some(n) => (
                n.to_string(),
                c.point(n).map_or(String::new(), |p| t.show(p.value)),
                c.point(n.saturating_sub(1))
                    .map_or("-".into(), |p| t.show(p.value)),
            ),
            None => (
                format!(">{}", report.max_gpus),
                "not met".into(),
                "-".into(),
            ),
        };
        let cost = c
            .smallest
            .and_then(|n| c.cost_per_hour(n))
            .map_or("-".into(), |v| format!("{v:.2}"));
        let _ = writeln!(
            out,
            "{:<w$} {size:>9} {value:>16} {fewer:>12} {cost:>10}  {}",
            c.label,
            note(c, report.max_gpus)
        );
    }
    if let Some(idx) = report.cheapest {
        let c = &report.candidates[idx];
        let n = c.smallest.unwrap_or_default();
        let _ = writeln!(
            out,
            "cheapest: {} with {n} GPUs at {:.2}/hour",
            c.label,
            c.cost_per_hour(n).unwrap_or_default()
        );
        let _ = writeln!(out, "{}", tie_line(report));
    }
    let _ = writeln!(
        out,
        "search: doubling, then k-section, per candidate; {} simulations in parallel; the size before each answer misses the target, the size after was checked",
        report.simulations
    );
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    let _ = writeln!(out, "files: {}", names.join(", "));
    out
}

/// The tie-break, one line, and whether it decided here.
fn tie_line(report: &PlanReport) -> String {
    let tied = report.tied_with_cheapest();
    if tied.is_empty() {
        format!("ties: {TIE_BREAK} (no tie here)")
    } else {
        format!("ties: {TIE_BREAK} (tied here: {})", tied.join(", "))
    }
}

/// `--format json`: what the table says, each number under a key naming it and its unit.
fn json(scenario: &Scenario, report: &PlanReport, files: &[PathBuf]) -> Value {
    let t = &report.target;
    let key = value_key(t);
    let candidates: Vec<Value> = report
        .candidates
        .iter()
        .map(|c| candidate_json(c, report, &key))
        .collect();
    let cheapest = report.cheapest.and_then(|idx| {
        let c = report.candidates.get(idx)?;
        let n = c.smallest?;
        Some(json!({"candidate": c.label, "gpus": n, "cost_per_hour": c.cost_per_hour(n)}))
    });
    let energy = matches!(t.metric, Metric::EnergyKwh | Metric::SamplesPerJoule).then(|| {
        let points = report.candidates.iter().flat_map(|c| &c.points);
        let energies = points.filter_map(|p| p.summary.as_ref()?.energy.as_ref());
        colo_sim::metrics::energy::provenance(energies)
    });
    let files: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    let mut target =
        json!({"text": t.to_string(), "metric": t.metric.name(), "unit": t.unit.suffix()});
    target[&key] = json!(t.in_unit(t.bound));
    json!({
        "scenario": scenario.file.name,
        "target": target,
        "value_key": key,
        "profile_origin": origin(report),
        "perf_model": perf_models(report),
        "figures_are": "simulated",
        "energy_provenance": energy,
        "candidates": candidates,
        "cheapest": cheapest,
        "tie_break": TIE_BREAK,
        "tied_with_cheapest": report.tied_with_cheapest(),
        "max_gpus": report.max_gpus,
        "simulations": report.simulations,
        "files": files,
    })
}

/// One candidate's row of the table: its answer (`smallest_gpus`, `null` when not met up to
/// `max_gpus`), the metric there and one GPU fewer in the target's unit (under `key`), its
/// cost and notes.
fn candidate_json(c: &CandidateResult, report: &PlanReport, key: &str) -> Value {
    let t = &report.target;
    let at = |n: u32| c.point(n).map(|p| t.in_unit(p.value));
    let mut row = json!({
        "candidate": c.label,
        "gpu": c.gpu,
        "mode": c.mode,
        "smallest_gpus": c.smallest,
        "met": c.smallest.is_some(),
        "price_per_gpu_hour": c.price_per_gpu_hour,
        "cost_per_hour": c.smallest.and_then(|n| c.cost_per_hour(n)),
        "non_monotone_gpus": c.non_monotone,
        "note": note(c, report.max_gpus),
    });
    row[key] = json!(c.smallest.and_then(at));
    row[format!("one_fewer_{key}")] = json!(c.smallest.and_then(|n| at(n.checked_sub(1)?)));
    row
}

/// The JSON key of the target's metric in the unit it was written in: `p95_wait_h`,
/// `makespan_min`, `throughput_samples_per_s`, `energy_kwh`, `samples_per_joule`.
fn value_key(t: &Target) -> String {
    let unit = match t.unit {
        Unit::Seconds => "s",
        Unit::Minutes => "min",
        Unit::Hours => "h",
        Unit::SamplesPerSecond => "samples_per_s",
        Unit::KilowattHours | Unit::SamplesPerJoule => return t.metric.name().to_owned(),
    };
    format!("{}_{unit}", t.metric.name())
}

fn note(c: &CandidateResult, max_gpus: u32) -> String {
    let mut notes = Vec::new();
    if !c.non_monotone.is_empty() {
        notes.push(format!(
            "non-monotone: larger size(s) {:?} miss the target",
            c.non_monotone
        ));
    }
    if c.smallest.is_none() {
        let why = c.points.iter().rev().find_map(|p| p.note.clone());
        notes.push(match why {
            Some(why) => format!("not met up to {max_gpus} GPUs: {why}"),
            None => format!("not met up to {max_gpus} GPUs"),
        });
    }
    notes.join("; ")
}

/// Time metrics above this many times the target are left out of the figures, so the sizes
/// near the target stay readable (plan.csv keeps every point).
const CLIP: f64 = 5.0;

/// Sizes drawn: up to this many times the largest answer (at least the answer plus 4), so the
/// sizes around the answers fill the figure (plan.csv keeps every point).
const X_SPAN: u32 = 2;

/// `plan_target` (metric against GPUs, with the target and each candidate's answer ringed)
/// and, with prices, `plan_cost` (metric against cluster cost per hour).
fn figures(report: &PlanReport, out: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let t = &report.target;
    // Notes of what is not drawn go on the axes they cut, so the title stays short.
    let y_label = if t.metric.is_time() {
        format!(
            "{} ({}, simulated; above {} {} not drawn)",
            t.metric.name(),
            t.unit.suffix(),
            t.in_unit(CLIP * t.bound),
            t.unit.suffix()
        )
    } else {
        format!("{} ({}, simulated)", t.metric.name(), t.unit.suffix())
    };
    let max_gpus = report
        .candidates
        .iter()
        .filter_map(|c| c.smallest)
        .max()
        .map(|n| (n * X_SPAN).max(n + 4));
    let (by_size, by_cost) = curves(report, max_gpus);
    let cost_label = "cluster cost ($/hour: price per GPU-hour x GPUs)";
    let size_label = match max_gpus {
        Some(m) => format!("GPUs in the cluster (up to {m} drawn; plan.csv has every size)"),
        None => "GPUs in the cluster".to_owned(),
    };
    let mut charts = vec![(by_size, "size", size_label.as_str(), "plan_target")];
    if !by_cost.is_empty() {
        charts.push((by_cost, "cost", cost_label, "plan_cost"));
    }
    let mut written = Vec::new();
    for (mut curves, against, x_label, stem) in charts {
        let x_max = curves
            .iter()
            .flat_map(|c| c.points.iter().map(|p| p.0))
            .fold(1.0, f64::max);
        curves.push(Curve {
            label: format!("target: {t}"),
            points: vec![(0.0, t.in_unit(t.bound)), (x_max, t.in_unit(t.bound))],
            kind: CurveKind::Reference,
        });
        let text = ChartText {
            title: format!("{} against cluster {against} (simulated)", t.metric.name()),
            x_label: x_label.into(),
            y_label: y_label.clone(),
        };
        let figure = FigureOut {
            dir: out.to_path_buf(),
            stem: stem.into(),
            format: colo_plots::Format::Both,
        };
        written.extend(plot_curves(&curves, &text, &figure)?);
    }
    Ok(written)
}

/// Per candidate: the metric against GPUs up to `max_gpus`, and (with a price) against cost per
/// hour; then, on each, the answers (each candidate's smallest size meeting the target) ringed.
fn curves(report: &PlanReport, max_gpus: Option<u32>) -> (Vec<Curve>, Vec<Curve>) {
    let t = &report.target;
    let mut by_size: Vec<Curve> = Vec::new();
    let mut by_cost: Vec<Curve> = Vec::new();
    let answers = |x: &dyn Fn(&colo_sim::plan::CandidateResult, u32) -> Option<f64>| Curve {
        label: "answer: smallest size meeting the target".into(),
        points: report
            .candidates
            .iter()
            .filter_map(|c| {
                let n = c.smallest?;
                let p = c.points.iter().find(|p| p.gpus == n)?;
                Some((x(c, n)?, t.in_unit(p.value)))
            })
            .collect(),
        kind: CurveKind::Rings,
    };
    for c in &report.candidates {
        let drawn = c.points.iter().filter(|p| {
            p.value.is_finite()
                && !(t.metric.is_time() && p.value > CLIP * t.bound)
                && max_gpus.is_none_or(|m| p.gpus <= m)
        });
        by_size.push(Curve {
            label: c.label.clone(),
            points: drawn
                .clone()
                .map(|p| (f64::from(p.gpus), t.in_unit(p.value)))
                .collect(),
            kind: CurveKind::Line,
        });
        if c.price_per_gpu_hour.is_some() {
            by_cost.push(Curve {
                label: c.label.clone(),
                points: drawn
                    .filter_map(|p| Some((c.cost_per_hour(p.gpus)?, t.in_unit(p.value))))
                    .collect(),
                kind: CurveKind::Line,
            });
        }
    }
    let rings = answers(&|_, n| Some(f64::from(n)));
    if !rings.points.is_empty() {
        by_size.push(rings);
    }
    if !by_cost.is_empty() {
        let rings = answers(&|c, n| c.cost_per_hour(n));
        if !rings.points.is_empty() {
            by_cost.push(rings);
        }
    }
    (by_size, by_cost)
}
