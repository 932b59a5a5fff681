//! Unit tests of the study reproduction, on the shipped matrix and the provisional profile.
use std::path::{Path, PathBuf};

use super::*;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn spec(gpu: &str) -> StudySpec {
    StudySpec::load(&root().join(format!("scenarios/paper/{gpu}.report.ron"))).unwrap()
}

fn provisional() -> PathBuf {
    root().join("calibrate/profiles/h200-provisional.ron")
}

fn set<'a>(rep: &'a Reproduction, id: &str) -> &'a SetReport {
    rep.sets.iter().find(|r| r.set.id() == id).unwrap()
}

#[test]
fn shipped_matrix_has_every_process() {
    let sets = read_matrix(&spec("h200").matrix).unwrap();
    let processes: usize = sets.iter().map(|s| s.processes.len()).sum();
    assert_eq!(processes, 618);
    let seven = sets
        .iter()
        .find(|s| s.experiment == 33 && s.workload == 11)
        .unwrap();
    assert_eq!(seven.processes.len(), 7);
    assert!(
        seven
            .processes
            .iter()
            .all(|p| p.mode == ShareMode::Timeslice
                && p.slice.is_none()
                && p.model == "resnet26"
                && p.dataset == "cifar10"
                && p.batch == 128)
    );
}

#[test]
fn missing_models_are_not_covered_not_guessed() {
    let rep = reproduce(&spec("h200"), Some(&provisional())).unwrap();
    let Outcome::NotCovered { missing } = &set(&rep, "33/27").outcome else {
        panic!("resnet152 at batch 128 is not in the provisional profile");
    };
    assert_eq!(missing[0].to_string(), "resnet152:128:224");
    assert!(
        rep.sets
            .iter()
            .filter(|r| r.set.experiment == 35)
            .all(|r| matches!(r.outcome, Outcome::NotCovered { .. }))
    );
    let keys: Vec<String> = rep
        .missing_keys()
        .iter()
        .map(|(k, _)| k.to_string())
        .collect();
    assert!(
        keys.contains(&"cait_xxs24_224:128:32".to_owned()),
        "{keys:?}"
    );
}

#[test]
fn copies_of_one_model_gain_their_summed_share() {
    let rep = reproduce(&spec("h200"), Some(&provisional())).unwrap();
    let Outcome::Predicted(res) = &set(&rep, "33/13").outcome else {
        panic!("7 x resnet26 under MPS is covered");
    };
    let summed: f64 = res
        .jobs
        .iter()
        .map(|j| j.samples_per_s / j.alone_samples_per_s)
        .sum();
    assert!(
        (res.gain - summed).abs() < 1e-9 * summed,
        "{} vs {summed}",
        res.gain
    );
    let job = &res.jobs[0];
    let stretch = job.mean_epoch_s / job.alone_epoch_s;
    assert!((stretch - job.alone_samples_per_s / job.samples_per_s).abs() < 1e-9);
}

#[test]
fn mixed_sets_play_out_as_jobs_finish() {
    let rep = reproduce(&spec("h200"), Some(&provisional())).unwrap();
    let Outcome::Predicted(res) = &set(&rep, "37/111").outcome else {
        panic!("resnet50 + resnet26 under MPS is covered");
    };
    let short = res
        .jobs
        .iter()
        .map(|j| j.mean_epoch_s)
        .fold(f64::MAX, f64::min);
    assert!(res.makespan_s > short * 5.0);
    // ResNet-50 on ImageNet 64x64 ends last and runs alone at the end, so its mean epoch is
    // shorter than at its rate beside ResNet-26.
    let r50 = res.jobs.iter().find(|j| j.key.model == "resnet50").unwrap();
    assert!((r50.mean_epoch_s * 5.0 - res.makespan_s).abs() < 1e-9 * res.makespan_s);
    assert!(r50.mean_epoch_s < 1_281_167.0 / r50.samples_per_s);
}

#[test]
fn a_layout_the_gpu_cannot_hold_is_not_runnable() {
    let rep = reproduce(&spec("h200"), Some(&provisional())).unwrap();
    let Outcome::NotRunnable { reason } = &set(&rep, "37/352").outcome else {
        panic!("4g + 2g + 3 x 1g needs 9 compute slices");
    };
    assert!(reason.contains("not a valid layout"), "{reason}");
}

#[test]
fn conclusions_are_checked_and_mig_isolation_is_flagged_as_assumed() {
    let rep = reproduce(&spec("h200"), Some(&provisional())).unwrap();
    assert_eq!(rep.conclusions.len(), 6);
    assert_ne!(rep.conclusions[0].status, Status::NotTested);
    assert!(rep.conclusions[0].finding.contains("largest gain"));
    let mig = &rep.conclusions[3];
    assert_eq!(mig.status, Status::ByConstruction);
}

#[test]
fn without_a_profile_nothing_is_predicted() {
    let mut a100 = spec("a100-40gb");
    a100.profiles = vec![root().join("calibrate/profiles/no-such-file.ron")];
    let rep = reproduce(&a100, None).unwrap();
    assert!(rep.profile.is_none());
    assert!(
        rep.sets
            .iter()
            .all(|r| matches!(r.outcome, Outcome::NotCovered { .. }))
    );
    assert!(
        rep.conclusions
            .iter()
            .all(|c| c.status == Status::NotTested)
    );
}

#[test]
fn a_dataset_missing_from_the_spec_names_the_matrix_line() {
    let mut h200 = spec("h200");
    h200.datasets.retain(|d| d.dir != "imagenet");
    let err = reproduce(&h200, Some(&provisional()))
        .unwrap_err()
        .to_string();
    assert!(err.contains("collocation_experiment.csv:"), "{err}");
    assert!(err.contains("dataset `imagenet`"), "{err}");
}
