//! The report page: provenance, the conclusions table, figures per series, every set's
//! numbers, and the models that need calibration.
use std::fmt::Write as _;
use std::path::Path;

use colo_sim::study::{Outcome, Reproduction, SetReport, SetResult, Status, study_label};

use super::figures::{Kind, SeriesFigures};
use super::measured::{MeasuredSet, Source};
use super::{Series, origin_label};

/// The whole page.
pub fn render(
    rep: &Reproduction,
    series: &[Series<'_>],
    figures: &[SeriesFigures],
    measured: &[MeasuredSet],
    source: Option<&Source<'_>>,
    out: &Path,
) -> String {
    let mut page = String::new();
    header(&mut page, rep, out, !measured.is_empty());
    caveats(&mut page, rep);
    conclusions(&mut page, rep);
    if let Some(source) = source {
        measured_section(&mut page, rep, measured, source);
    }
    figure_sections(&mut page, series, figures);
    set_table(&mut page, rep);
    not_covered(&mut page, rep);
    page
}

fn header(page: &mut String, rep: &Reproduction, out: &Path, has_measured: bool) {
    let gpu = rep.gpu;
    let _ = writeln!(
        page,
        "# The collocation study, reproduced on the {}\n",
        gpu.display_name
    );
    let _ = writeln!(
        page,
        "Study: Robroek, Yousefzadeh-Asl-Miandoab, Tözün, \"An Analysis of Collocation on GPUs for Deep Learning Training\" (EuroMLSys 2024; arXiv 2209.06018), measured on an A100-40GB. Matrix: `{}` ({} sets, {} processes, each training {} epochs); spec `{}`.\n",
        rep.spec.matrix.display(),
        rep.sets.len(),
        rep.sets.iter().map(|r| r.set.jobs.len()).sum::<usize>(),
        rep.spec.epochs,
        rep.spec.path.display(),
    );
    profile_paragraph(page, rep);
    let numbers = match &rep.profile {
        Some((_, origin)) => format!(
            "Every number on this page is **emulated**: predicted by colo's {} from that {origin} profile, not measured{}.",
            rep.model,
            if has_measured {
                ", except in the section \"Measured on this GPU\""
            } else {
                ""
            }
        ),
        None => "No set is predicted: there is no profile to predict from.".to_owned(),
    };
    let _ = writeln!(
        page,
        "\n{numbers} Regenerate with `colo report paper --gpu {}{} --out {}`.\n",
        gpu.name,
        if rep.model.starts_with("kernel") {
            ""
        } else {
            " --model parametric"
        },
        out.display()
    );
    let count = |f: fn(&Outcome) -> bool| rep.sets.iter().filter(|r| f(&r.outcome)).count();
    let _ = writeln!(
        page,
        "Coverage: {} sets predicted, {} not covered (models the profile lacks), {} not runnable (MIG layout invalid on this GPU).\n",
        count(|o| matches!(o, Outcome::Predicted(_))),
        count(|o| matches!(o, Outcome::NotCovered { .. })),
        count(|o| matches!(o, Outcome::NotRunnable { .. })),
    );
}

/// Which profile the numbers rest on, and whether the preferred one was missing.
fn profile_paragraph(page: &mut String, rep: &Reproduction) {
    let gpu = rep.gpu;
    match &rep.profile {
        Some((path, origin)) => {
            let modes: Vec<String> = rep
                .mode_origins
                .iter()
                .map(|(m, o)| format!("{} {o}", study_label(*m)))
                .collect();
            let _ = writeln!(
                page,
                "Profile: `{}` (**{origin}**; sharing parameters: {}).",
                path.display(),
                modes.join(", ")
            );
            let preferred = rep.spec.profiles.first().filter(|first| *first != path);
            if let Some(first) = preferred {
                let why = if first.is_file() {
                    "was passed over for the one given with --profile"
                } else {
                    "does not exist yet, so this report rests on the next one in the spec's list"
                };
                let _ = writeln!(
                    page,
                    "The spec's preferred profile `{}` {why}.",
                    first.display()
                );
            }
        }
        None => {
            let _ = writeln!(
                page,
                "Profile: **none** for {} (the spec lists {}); every set below is not covered until those models are calibrated on this GPU.",
                gpu.name,
                list_paths(&rep.spec.profiles)
            );
        }
    }
}

fn list_paths(paths: &[std::path::PathBuf]) -> String {
    let names: Vec<String> = paths.iter().map(|p| format!("`{}`", p.display())).collect();
    names.join(", ")
}

/// Profile entries whose alone measurements spread more than this are called out.
const NOISY_SPREAD: f64 = 0.1;

/// Models whose profile entries are noisy or not fitted, so a reader weighs the sets using them.
fn caveats(page: &mut String, rep: &Reproduction) {
    let mut noted: Vec<String> = Vec::new();
    let profile_origin = rep.profile.as_ref().map(|(_, o)| *o);
    for report in &rep.sets {
        let Outcome::Predicted(res) = &report.outcome else {
            continue;
        };
        for job in &res.jobs {
            let mut why = Vec::new();
            if let Some(spread) = job.spread.filter(|s| *s > NOISY_SPREAD) {
                why.push(format!(
                    "its alone measurements spread {:.0}%",
                    spread * 100.0
                ));
            }
            if Some(job.origin) != profile_origin {
                why.push(format!("its entry is {}", job.origin));
            }
            let line = format!("`{}`: {}", job.key, why.join(", "));
            if !why.is_empty() && !noted.contains(&line) {
                noted.push(line);
            }
        }
    }
    if noted.is_empty() {
        return;
    }
    let _ = writeln!(
        page,
        "Caveats: weigh the sets of these models with care: {}.\n",
        noted.join("; ")
    );
}

fn conclusions(page: &mut String, rep: &Reproduction) {
    let _ = writeln!(page, "## The study's conclusions against the simulation\n");
    let _ = writeln!(
        page,
        "Over the sets predicted that fit in memory; gain = total throughput over one job alone at a time (emulated, {}).\n",
        origin_label(rep)
    );
    let _ = writeln!(
        page,
        "| # | the study says | the simulation finds | verdict |"
    );
    let _ = writeln!(page, "|---|---|---|---|");
    for (idx, c) in rep.conclusions.iter().enumerate() {
        let verdict = match c.status {
            Status::Disagrees => format!("**{}**", c.status),
            _ => c.status.to_string(),
        };
        let _ = writeln!(
            page,
            "| {} | {} | {} | {verdict} |",
            idx + 1,
            c.claim,
            c.finding.replace('|', "/")
        );
    }
    page.push('\n');
}

/// The study's sets that were also run on this GPU: measured gain beside the predicted one.
fn measured_section(
    page: &mut String,
    rep: &Reproduction,
    measured: &[MeasuredSet],
    source: &Source<'_>,
) {
    if measured.is_empty() {
        return;
    }
    let _ = writeln!(page, "## Measured on this GPU\n");
    let (lo, hi) = measured
        .iter()
        .fold((f64::INFINITY, 0.0_f64), |(lo, hi), m| {
            (lo.min(m.window_s.0), hi.max(m.window_s.1))
        });
    let left_out = if source.left_out > 0 {
        format!(
            "; {} records of other GPUs or of the fake runner left out",
            source.left_out
        )
    } else {
        String::new()
    };
    let _ = writeln!(
        page,
        "The study's sets of copies of one model that `colo calibrate run` also ran on the {} (`{}`{left_out}): real PyTorch training, time-sliced or under MPS, measured windows of {lo:.1}-{hi:.1} s; MIG sets are left out. Gain = the jobs' summed samples/s over one job alone on the same GPU (median over repeats): **measured**; beside it the model's gain while all run (**emulated**). The profile was fitted on these runs among others, so agreement here is in-sample; `colo calibrate validate` gives the held-out errors.\n",
        rep.gpu.display_name,
        source.dir.display()
    );
    let _ = writeln!(
        page,
        "| set | jobs | mode | samples/s per job (measured) | gain (measured) | gain (emulated) | repeats | note |"
    );
    let _ = writeln!(page, "|---|---|---|---|---|---|---|---|");
    let fmt = |v: Option<f64>, digits: usize| v.map_or(String::new(), |x| format!("{x:.digits$}"));
    for m in measured {
        let mut notes = Vec::new();
        if m.oom_repeats > 0 {
            notes.push(format!(
                "out of memory in {} repeat(s): {} processes",
                m.oom_repeats, m.oom_processes
            ));
        }
        if m.other_gpu_alone > 0 {
            notes.push("alone rate from another GPU of the same type".to_owned());
        }
        if m.no_alone > 0 {
            notes.push(format!(
                "{} repeat(s) without an alone run: no gain",
                m.no_alone
            ));
        }
        let note = notes.join("; ");
        let predicted = match m.predicted_fits {
            Some(false) => "does not fit".to_owned(),
            _ => fmt(m.predicted_gain, 2),
        };
        let _ = writeln!(
            page,
            "| {} | {} | {} | {} | {} | {} | {} | {note} |",
            m.id,
            m.jobs,
            study_label(m.mode),
            fmt(m.samples_per_s, 0),
            fmt(m.gain, 2),
            predicted,
            m.repeats
        );
    }
    if let Some(best) = measured
        .iter()
        .filter(|m| m.gain.is_some())
        .max_by(|a, b| a.gain.unwrap_or(0.0).total_cmp(&b.gain.unwrap_or(0.0)))
    {
        let _ = writeln!(
            page,
            "\nLargest measured gain: {:.2}x ({} {}, set {}).",
            best.gain.unwrap_or(f64::NAN),
            best.jobs,
            study_label(best.mode),
            best.id
        );
    }
    page.push('\n');
}

fn figure_sections(page: &mut String, series: &[Series<'_>], figures: &[SeriesFigures]) {
    let _ = writeln!(page, "## Figures\n");
    let _ = writeln!(
        page,
        "Per series (copies of one model): total throughput and epoch time normalised to one job alone, by mode and number of copies (sets that do not fit in memory are left out of the curves), and each set's memory against the GPU's (naive, MPS) or its slice's (MIG). One MIG job uses the 7g slice.\n"
    );
    for s in series {
        let _ = writeln!(page, "### {}\n", s.title());
        let Some(figs) = figures.iter().find(|f| f.stem == s.stem()) else {
            let _ = writeln!(
                page,
                "Not covered: needs calibration of {} on this GPU.\n",
                s.key
            );
            continue;
        };
        for kind in Kind::ALL {
            if let Some((_, link)) = figs.links.iter().find(|(k, _)| *k == kind) {
                let _ = writeln!(page, "![{}: {}]({link})", s.key, kind.caption());
            }
        }
        page.push('\n');
    }
}

fn set_table(page: &mut String, rep: &Reproduction) {
    let _ = writeln!(page, "## Every set\n");
    let _ = writeln!(
        page,
        "Samples/s per job while all run; epoch time is the mean over the 5-epoch run (co-runners that end first speed the others up) against alone. Gain: the jobs' run times alone, one after another, over the time the set takes (the conclusions use it); gain while all run: the summed fractions of their alone rates before any job ends. Memory per partition. All emulated ({}).\n",
        origin_label(rep)
    );
    let _ = writeln!(
        page,
        "| set | jobs | mode | samples/s per job | epoch s (alone) | gain | gain while all run | memory GiB (available) | origin | note |"
    );
    let _ = writeln!(page, "|---|---|---|---|---|---|---|---|---|---|");
    for report in &rep.sets {
        let lead = format!(
            "| {} | {} | {} |",
            report.set.id(),
            report.set.describe(),
            study_label(report.set.mode)
        );
        match &report.outcome {
            Outcome::Predicted(res) => {
                let _ = writeln!(page, "{lead} {} |", predicted_cells(report, res));
            }
            Outcome::NotCovered { missing } => {
                let keys: Vec<String> = missing.iter().map(ToString::to_string).collect();
                let _ = writeln!(
                    page,
                    "{lead} | | | | | | not covered: needs calibration of {} on {} |",
                    keys.join(", "),
                    rep.gpu.name
                );
            }
            Outcome::NotRunnable { reason } => {
                let _ = writeln!(page, "{lead} | | | | | | not runnable: {reason} |");
            }
        }
    }
    page.push('\n');
}

fn predicted_cells(report: &SetReport, res: &SetResult) -> String {
    // One value per distinct model, in the order `describe` names them (copies of one model
    // in one set get the same numbers).
    let mut firsts: Vec<&colo_sim::study::JobResult> = Vec::new();
    for job in &res.jobs {
        if !firsts.iter().any(|f| f.key == job.key) {
            firsts.push(job);
        }
    }
    let join = |f: &dyn Fn(&colo_sim::study::JobResult) -> String| {
        let cells: Vec<String> = firsts.iter().map(|j| f(j)).collect();
        cells.join(" / ")
    };
    let rates = join(&|j| format!("{:.0}", j.samples_per_s));
    let epochs = join(&|j| format!("{:.1} ({:.1})", j.mean_epoch_s, j.alone_epoch_s));
    let slices = slice_summary(res);
    let memory = format!("{:.1} ({:.1})", res.memory_gib, res.capacity_gib);
    let mut note = match &res.memory_note {
        Some(over) if !res.fits_memory => format!("does not fit: {over}"),
        _ => String::new(),
    };
    if !slices.is_empty() && report.set.mode == colo_sim::perf::ShareMode::Mig {
        note = format!("{slices} {note}").trim().to_owned();
    }
    let origins: Vec<String> = res.origins.iter().map(ToString::to_string).collect();
    format!(
        "{rates} | {epochs} | {:.2} | {:.2} | {memory} | {} | {note}",
        res.gain,
        res.gain_while_all_run,
        origins.join(", ")
    )
}

/// `4g.71gb + 3 x 1g.18gb`: the set's MIG slices, counted (empty outside MIG).
fn slice_summary(res: &SetResult) -> String {
    let mut counts: Vec<(usize, &str)> = Vec::new();
    for job in &res.jobs {
        let Some(slice) = job.slice.as_deref() else {
            continue;
        };
        let name = slice.split('@').next().unwrap_or(slice);
        match counts.iter_mut().find(|(_, n)| *n == name) {
            Some((count, _)) => *count += 1,
            None => counts.push((1, name)),
        }
    }
    let parts: Vec<String> = counts
        .iter()
        .map(|(n, name)| {
            if *n == 1 {
                (*name).to_owned()
            } else {
                format!("{n} x {name}")
            }
        })
        .collect();
    parts.join(" + ")
}

fn not_covered(page: &mut String, rep: &Reproduction) {
    let missing = rep.missing_keys();
    let _ = writeln!(page, "## Not covered: models to calibrate\n");
    if missing.is_empty() {
        let _ = writeln!(page, "Every model of the matrix is in the profile.");
        return;
    }
    let _ = writeln!(
        page,
        "The profile lacks these model keys, so their sets have no numbers here (none are guessed). Calibrate each on the {} (`colo calibrate run` with a plan naming it, then fit the profile again) and run this report again.\n",
        rep.gpu.name
    );
    let _ = writeln!(page, "| needs calibration of | on | sets |");
    let _ = writeln!(page, "|---|---|---|");
    for (key, n) in missing {
        let _ = writeln!(page, "| {key} | {} | {n} |", rep.gpu.name);
    }
}
