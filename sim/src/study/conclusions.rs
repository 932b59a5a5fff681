//! The study's stated conclusions, checked against the predictions. A conclusion the
//! predictions do not bear out is reported as such; one the model assumes is marked so.
use std::collections::BTreeMap;
use std::fmt;

use super::{Outcome, SetReport, SetResult, study_label};
use crate::perf::Origin;
use crate::perf::ShareMode;

/// How a conclusion fares against the predictions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// The predictions bear it out.
    Agrees,
    /// They bear it out in some comparisons, not all.
    Partly,
    /// They do not bear it out.
    Disagrees,
    /// The model assumes it, so the predictions cannot test it.
    ByConstruction,
    /// A list, not a claim to test (e.g. sets that do not fit).
    Listed,
    /// No predicted set bears on it (the profile lacks the models).
    NotTested,
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Status::Agrees => "agrees",
            Status::Partly => "partly",
            Status::Disagrees => "NOT borne out",
            Status::ByConstruction => "assumed by the model (not evidence)",
            Status::Listed => "listed",
            Status::NotTested => "not tested (no covered set)",
        })
    }
}

/// One conclusion of the study and what the predictions say of it.
#[derive(Clone, Debug, PartialEq)]
pub struct Conclusion {
    /// The study's claim, in its words where it has them.
    pub claim: String,
    /// What the predictions show, with the sets that show it.
    pub finding: String,
    /// The verdict.
    pub status: Status,
}

/// The study's largest stated gains: 4x in arXiv 2209.06018v3, 3x in the EuroMLSys 2024
/// version. A predicted largest gain within 25% of that range agrees.
const STATED_GAIN: (f64, f64) = (3.0, 4.0);
const GAIN_TOLERANCE: f64 = 1.25;
/// Gains within 1% of each other are a tie: the mode compared counts as (one of) the best.
const TIE: f64 = 0.01;

/// Checks each conclusion against `sets`.
pub(super) fn check(sets: &[SetReport], mode_origins: &[(ShareMode, Origin)]) -> Vec<Conclusion> {
    let fitting: Vec<(&SetReport, &SetResult)> = sets
        .iter()
        .filter_map(|r| match &r.outcome {
            Outcome::Predicted(res) if res.fits_memory => Some((r, res)),
            _ => None,
        })
        .collect();
    vec![
        largest_gain(&fitting),
        epochs_longer(&fitting),
        mps_best(&fitting),
        mig_isolated(&fitting, mode_origins),
        memory(sets),
        mig_mixed(&fitting),
    ]
}

fn largest_gain(fitting: &[(&SetReport, &SetResult)]) -> Conclusion {
    let claim = "Collocation can raise training throughput up to 4x (arXiv v3; 3x in the EuroMLSys 2024 version), despite longer epochs".to_owned();
    let best = fitting
        .iter()
        .filter(|(r, _)| r.set.jobs.len() > 1)
        .max_by(|a, b| a.1.gain.total_cmp(&b.1.gain));
    let Some((report, res)) = best else {
        return not_tested(claim);
    };
    let (lo, hi) = (
        STATED_GAIN.0 / GAIN_TOLERANCE,
        STATED_GAIN.1 * GAIN_TOLERANCE,
    );
    let status = if (lo..=hi).contains(&res.gain) {
        Status::Agrees
    } else {
        Status::Disagrees
    };
    let finding = format!(
        "largest gain {:.2}x: set {} ({}, {}); agrees when within {lo:.1}x-{hi:.1}x",
        res.gain,
        report.set.id(),
        report.set.describe(),
        study_label(report.set.mode)
    );
    Conclusion {
        claim,
        finding,
        status,
    }
}

fn epochs_longer(fitting: &[(&SetReport, &SetResult)]) -> Conclusion {
    let claim = "Epoch time grows when jobs are collocated".to_owned();
    let collocated: Vec<_> = fitting
        .iter()
        .filter(|(r, _)| r.set.jobs.len() > 1)
        .collect();
    if collocated.is_empty() {
        return not_tested(claim);
    }
    let faster: Vec<String> = collocated
        .iter()
        .filter(|(_, res)| {
            res.jobs
                .iter()
                .any(|j| j.mean_epoch_s < j.alone_epoch_s * (1.0 - 1e-9))
        })
        .map(|(r, _)| r.set.id())
        .collect();
    let finding = format!(
        "{} of {} collocated sets have every job's epoch longer than alone{}",
        collocated.len() - faster.len(),
        collocated.len(),
        list_suffix("; shorter in", &faster)
    );
    Conclusion {
        claim,
        finding,
        status: share_status(faster.len(), collocated.len()),
    }
}

/// One set in a comparison: its mode, id and gain.
type Entry = (ShareMode, String, f64);
/// Sets keyed by experiment and job multiset (`resnet26:128:32+resnet50:128:64`).
type Groups = BTreeMap<(u32, String), Vec<Entry>>;

/// Fitting sets grouped by experiment and job multiset: the same jobs under each mode.
fn comparable(fitting: &[(&SetReport, &SetResult)]) -> Groups {
    let mut groups = Groups::new();
    for (report, res) in fitting.iter().filter(|(r, _)| r.set.jobs.len() > 1) {
        let mut keys: Vec<String> = report.set.jobs.iter().map(|j| j.key.to_string()).collect();
        keys.sort();
        groups
            .entry((report.set.experiment, keys.join("+")))
            .or_default()
            .push((report.set.mode, report.set.id(), res.gain));
    }
    groups
}

/// Groups where `mode` and at least one other mode were predicted: (won, lost ids).
fn contests(groups: &Groups, mode: ShareMode, only_mixed: bool) -> (usize, Vec<String>) {
    let (mut won, mut lost) = (0, Vec::new());
    for ((_, keys), entries) in groups {
        if only_mixed && !keys_mixed(keys) {
            continue;
        }
        let ours = entries.iter().filter(|e| e.0 == mode).map(|e| e.2);
        let theirs = entries.iter().filter(|e| e.0 != mode).map(|e| e.2);
        let (Some(ours), Some(theirs)) = (ours.reduce(f64::max), theirs.reduce(f64::max)) else {
            continue;
        };
        if ours >= theirs * (1.0 - TIE) {
            won += 1;
        } else {
            lost.push(describe_contest(keys, entries));
        }
    }
    (won, lost)
}

/// `2 x resnet26:128:32 (33/5 naive 1.95x, 33/6 MIG 1.99x, 33/7 MPS 1.93x)`.
fn describe_contest(keys: &str, entries: &[Entry]) -> String {
    let mut counts: Vec<(usize, &str)> = Vec::new();
    for key in keys.split('+') {
        match counts.iter_mut().find(|(_, k)| *k == key) {
            Some((n, _)) => *n += 1,
            None => counts.push((1, key)),
        }
    }
    let jobs: Vec<String> = counts
        .iter()
        .map(|(n, k)| {
            if *n == 1 {
                (*k).to_owned()
            } else {
                format!("{n} x {k}")
            }
        })
        .collect();
    let gains: Vec<String> = entries
        .iter()
        .map(|(mode, id, gain)| format!("{id} {} {gain:.2}x", study_label(*mode)))
        .collect();
    format!("{} ({})", jobs.join(" + "), gains.join(", "))
}

fn keys_mixed(keys: &str) -> bool {
    let mut parts = keys.split('+');
    let first = parts.next().unwrap_or_default();
    parts.any(|k| k != first)
}

fn mps_best(fitting: &[(&SetReport, &SetResult)]) -> Conclusion {
    let claim = "MPS is the best performing form of collocation".to_owned();
    let (won, lost) = contests(&comparable(fitting), ShareMode::Mps, false);
    if won + lost.len() == 0 {
        return not_tested(claim);
    }
    let finding = format!(
        "MPS has the highest gain (ties within 1% count) in {won} of {} job sets run under several modes{}",
        won + lost.len(),
        list_suffix("; another mode wins in:", &lost)
    );
    Conclusion {
        claim,
        finding,
        status: share_status(lost.len(), won + lost.len()),
    }
}

fn mig_mixed(fitting: &[(&SetReport, &SetResult)]) -> Conclusion {
    let claim =
        "MIG's rigid partitioning can give sub-optimal utilisation for mixed workloads".to_owned();
    let (won, lost) = contests(&comparable(fitting), ShareMode::Mig, true);
    if won + lost.len() == 0 {
        return not_tested(claim);
    }
    let finding = format!(
        "MIG is behind the best other mode in {} of {} mixed sets (groups where it wins: {won})",
        lost.len(),
        won + lost.len()
    );
    Conclusion {
        claim,
        finding,
        status: share_status(won, won + lost.len()),
    }
}

fn mig_isolated(
    fitting: &[(&SetReport, &SetResult)],
    mode_origins: &[(ShareMode, Origin)],
) -> Conclusion {
    let claim = "MIG gives interference-free partitions".to_owned();
    let gaps: Vec<f64> = fitting
        .iter()
        .filter(|(r, _)| r.set.jobs.len() > 1)
        .filter_map(|(_, res)| res.mig_interference)
        .collect();
    if gaps.is_empty() {
        return not_tested(claim);
    }
    let largest = gaps.iter().copied().fold(0.0, f64::max);
    let origin = mode_origins
        .iter()
        .find(|(m, _)| *m == ShareMode::Mig)
        .map_or("unknown".to_owned(), |(_, o)| o.to_string());
    let finding = format!(
        "largest gap between a job's rate in a MIG set and alone in its slice: {:.1}% over {} sets; the model treats slices as isolated (MIG parameters: {origin}), so this restates its assumption",
        largest * 100.0,
        gaps.len()
    );
    Conclusion {
        claim,
        finding,
        status: Status::ByConstruction,
    }
}

fn memory(sets: &[SetReport]) -> Conclusion {
    let claim =
        "The collocated models' aggregate memory must fit the GPU's (or the slice's)".to_owned();
    let predicted: Vec<(&SetReport, &SetResult)> = sets
        .iter()
        .filter_map(|r| match &r.outcome {
            Outcome::Predicted(res) => Some((r, res)),
            _ => None,
        })
        .collect();
    if predicted.is_empty() {
        return not_tested(claim);
    }
    let over: Vec<String> = predicted
        .iter()
        .filter(|(_, res)| !res.fits_memory)
        .map(|(r, res)| {
            let note = res.memory_note.as_deref().unwrap_or("over");
            format!(
                "{} ({}, {}: {note})",
                r.set.id(),
                r.set.describe(),
                study_label(r.set.mode)
            )
        })
        .collect();
    let finding = if over.is_empty() {
        format!("all {} predicted sets fit in memory", predicted.len())
    } else {
        format!(
            "{} of {} predicted sets do not fit: {}",
            over.len(),
            predicted.len(),
            over.join("; ")
        )
    };
    Conclusion {
        claim,
        finding,
        status: Status::Listed,
    }
}

fn not_tested(claim: String) -> Conclusion {
    Conclusion {
        claim,
        finding: "no predicted set bears on it; calibrate the models listed as not covered"
            .to_owned(),
        status: Status::NotTested,
    }
}

/// Agrees when no case goes against, disagrees when most do, else partly.
fn share_status(against: usize, total: usize) -> Status {
    match against {
        0 => Status::Agrees,
        n if 2 * n > total => Status::Disagrees,
        _ => Status::Partly,
    }
}

fn list_suffix(prefix: &str, ids: &[String]) -> String {
    if ids.is_empty() {
        String::new()
    } else {
        format!("{prefix} {}", ids.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::study::{JobResult, StudyJob, StudySet};
    use crate::workload::ModelKey;

    /// A predicted set of `n` copies under `mode` with total gain `gain`.
    fn report(workload: u32, mode: ShareMode, n: usize, gain: f64) -> SetReport {
        let key = ModelKey::new("m", 32, 32);
        let job = JobResult {
            key: key.clone(),
            slice: None,
            samples_per_s: gain / n as f64,
            alone_samples_per_s: 1.0,
            mean_epoch_s: n as f64 / gain,
            alone_epoch_s: 1.0,
            memory_gib: 1.0,
            partition_gib: 10.0,
            origin: Origin::Fitted,
            spread: None,
        };
        let set = StudySet {
            experiment: 1,
            workload,
            mode,
            jobs: vec![
                StudyJob {
                    key,
                    dataset: "d".into(),
                    samples_per_epoch: 1,
                    matrix_slice: None,
                };
                n
            ],
        };
        let result = SetResult {
            jobs: vec![job; n],
            makespan_s: 1.0,
            gain,
            memory_gib: n as f64,
            capacity_gib: 10.0,
            fits_memory: true,
            memory_note: None,
            origins: vec![Origin::Fitted],
            gain_while_all_run: gain,
            mig_interference: (mode == ShareMode::Mig).then_some(0.0),
        };
        SetReport {
            set,
            outcome: Outcome::Predicted(result),
        }
    }

    #[test]
    fn a_gain_far_above_the_stated_one_is_not_borne_out() {
        let sets = [
            report(1, ShareMode::Mps, 7, 6.5),
            report(2, ShareMode::Timeslice, 7, 2.0),
        ];
        let checked = check(&sets, &[]);
        assert_eq!(checked[0].status, Status::Disagrees);
        assert!(
            checked[0].finding.contains("6.50x"),
            "{}",
            checked[0].finding
        );
    }

    #[test]
    fn mps_behind_another_mode_everywhere_is_not_borne_out() {
        // Two comparisons (2 copies, 3 copies); MPS loses both.
        let sets = [
            report(1, ShareMode::Mps, 2, 1.2),
            report(2, ShareMode::Timeslice, 2, 1.5),
            report(3, ShareMode::Mps, 3, 1.1),
            report(4, ShareMode::Mig, 3, 1.4),
        ];
        let checked = check(&sets, &[]);
        assert_eq!(
            checked[2].status,
            Status::Disagrees,
            "{}",
            checked[2].finding
        );
        assert!(
            checked[2].finding.contains("1/2 naive 1.50x"),
            "{}",
            checked[2].finding
        );
    }

    #[test]
    fn verdict_follows_the_share_of_cases_against() {
        assert_eq!(share_status(0, 5), Status::Agrees);
        assert_eq!(share_status(2, 5), Status::Partly);
        assert_eq!(share_status(3, 5), Status::Disagrees);
    }
}
