//! `colo pack`'s answer as text and JSON: the best packings GPU by GPU, the best of each single
//! mode, and the exclusive placement.
use std::fmt::Write as _;

use serde_json::json;

use super::{PackReport, PackRequest, Packing, SearchMethod};
use crate::perf::Origin;

/// The table of `--format table`; `profile` as the header says it (`profile PATH` or `built-in
/// h200 profile`), `seconds` the search's wall time.
pub fn table(request: &PackRequest, report: &PackReport, profile: &str, seconds: f64) -> String {
    let mut out = String::new();
    let origin = report.origin;
    let _ = writeln!(
        out,
        "{} job(s) on {}, perf model {}, {profile} ({origin}); every rate is predicted from {origin} numbers",
        request.jobs.len(),
        request.gpu.name,
        report.perf_model
    );
    let _ = writeln!(
        out,
        "search: {}; {} GPU configurations scored in {seconds:.2} s (wall time, measured)",
        report.method, report.configs_evaluated
    );
    let gpus_note = if report.gpus_are_fewest {
        "the fewest that meet every minimum"
    } else {
        "fixed by --gpus"
    };
    let _ = writeln!(out, "GPUs: {} ({gpus_note})", report.gpus);
    let _ = writeln!(
        out,
        "\nbest packings on at most {} GPU(s), by total fraction of exclusive:",
        report.gpus
    );
    for (rank, packing) in report.best.iter().enumerate() {
        let _ = writeln!(out, "{:>2}. {}", rank + 1, headline(packing, origin));
        write_gpus(&mut out, request, report, packing);
    }
    let _ = writeln!(
        out,
        "\nsingle-mode packings on at most {} GPU(s), best of each:",
        report.gpus
    );
    for (name, packing) in &report.single_mode {
        let line = match packing {
            Some(p) => headline(p, origin),
            None => "none meets every minimum and fits in memory".to_owned(),
        };
        let _ = writeln!(out, "  {name:<12} {line}");
    }
    let _ = writeln!(
        out,
        "\nexclusive placement (one job per GPU): {}",
        headline(&report.exclusive, origin)
    );
    out
}

fn headline(packing: &Packing, origin: Origin) -> String {
    format!(
        "total {:.3} of exclusive, {:.1} samples/s on {} GPU(s) (predicted, {origin})",
        packing.total_fraction,
        packing.samples_per_s,
        packing.gpus.len()
    )
}

fn write_gpus(out: &mut String, request: &PackRequest, report: &PackReport, packing: &Packing) {
    for (idx, gpu) in packing.gpus.iter().enumerate() {
        let _ = writeln!(out, "    GPU {}: {}", idx + 1, gpu.config);
        for job in &gpu.jobs {
            let spec = &request.jobs[job.job];
            let _ = writeln!(
                out,
                "      #{:<2} {:<26} {:>6.3} of alone (min {:.2})  {:>9.1} samples/s  {:>6.1} GiB  {:<12} [{}]",
                job.job + 1,
                spec.key.to_string(),
                job.fraction,
                spec.min_fraction,
                job.samples_per_s,
                job.memory_gib,
                job.place,
                report.job_origins[job.job]
            );
        }
    }
}

fn packing_json(
    request: &PackRequest,
    report: &PackReport,
    packing: &Packing,
) -> serde_json::Value {
    let gpus: Vec<serde_json::Value> = packing
        .gpus
        .iter()
        .map(|gpu| {
            let jobs: Vec<serde_json::Value> = gpu
                .jobs
                .iter()
                .map(|j| {
                    json!({
                        "job": j.job,
                        "model": request.jobs[j.job].key.to_string(),
                        "min_fraction": request.jobs[j.job].min_fraction,
                        "fraction_of_exclusive": j.fraction,
                        "samples_per_s": j.samples_per_s,
                        "memory_gib": j.memory_gib,
                        "place": j.place,
                        "origin": report.job_origins[j.job].to_string(),
                    })
                })
                .collect();
            json!({
                "config": gpu.config.to_string(),
                "family": gpu.config.family().to_string(),
                "total_fraction": gpu.total_fraction,
                "samples_per_s": gpu.samples_per_s,
                "jobs": jobs,
            })
        })
        .collect();
    json!({
        "gpus_used": packing.gpus.len(),
        "total_fraction": packing.total_fraction,
        "samples_per_s": packing.samples_per_s,
        "gpus": gpus,
    })
}

/// The JSON object of `--format json`; `profile` names the profile alone (a path, or
/// `built-in h200 profile`), `seconds` is the search's wall time.
pub fn to_json(
    request: &PackRequest,
    report: &PackReport,
    profile: &str,
    seconds: f64,
) -> serde_json::Value {
    let one = |p: &Packing| packing_json(request, report, p);
    let single: serde_json::Map<String, serde_json::Value> = report
        .single_mode
        .iter()
        .map(|(name, p)| ((*name).to_owned(), p.as_ref().map_or(json!(null), one)))
        .collect();
    json!({
        "gpu": request.gpu.name,
        "perf_model": report.perf_model,
        "profile": profile,
        "profile_origin": report.origin.to_string(),
        "figures_are": format!("predicted from {} profile numbers", report.origin),
        "search": report.method.to_string(),
        "exhaustive": matches!(report.method, SearchMethod::Exhaustive { .. }),
        "configs_evaluated": report.configs_evaluated,
        "search_seconds": seconds,
        "gpus": report.gpus,
        "gpus_are_fewest": report.gpus_are_fewest,
        "best": report.best.iter().map(one).collect::<Vec<_>>(),
        "single_mode": single,
        "exclusive": one(&report.exclusive),
    })
}
