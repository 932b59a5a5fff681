//! Energy (issue 15.3): each GPU's power integrated over time, each job's share, idle GPUs, and
//! what happens without a power model. Hand-computed with a made-up power section.
use std::path::PathBuf;
use std::sync::Arc;

use super::{config, group, job, profiles};
use crate::engine::Simulation;
use crate::hardware;
use crate::metrics::energy::JOULES_PER_KWH;
use crate::metrics::{RunLabels, RunRecord, summarize};
use crate::perf::profile::{AlonePower, PowerForm, PowerMode, PowerParams, Profile};
use crate::perf::{EqualShare, MeasuredMode, Origin, Parametric, ProfileSet, ShareMode};
use crate::policy::PlacementRule;
use crate::workload::Job;

/// Idle power of the `timeslice` coefficients (also exclusive groups' idle power), W.
const IDLE_TS: f64 = 100.0;
/// Measured power alone of `small`, `mid`, `big`, W.
const ALONE: [(&str, f64); 3] = [("small", 300.0), ("mid", 400.0), ("big", 600.0)];

fn power_params(alone: &[(&str, f64)]) -> PowerParams {
    let mode = |mode: MeasuredMode, idle_w: f64, slope: f64| PowerMode {
        mode,
        idle_w,
        slope,
        max_w: None,
        sets: 10,
        held_out_mape_pct: 4.5,
    };
    PowerParams {
        form: PowerForm::Alone,
        origin: Origin::Fitted,
        modes: vec![
            mode(MeasuredMode::Timeslice, IDLE_TS, 1.0),
            mode(MeasuredMode::Mps, 90.0, 0.8),
            mode(MeasuredMode::MigEmulated, 110.0, 0.9),
        ],
        alone: alone
            .iter()
            .map(|(model, w)| AlonePower {
                point: format!("{model}:1:1"),
                power_w: *w,
                util: 0.5,
            })
            .collect(),
    }
}

/// The test profiles with a power section knowing `alone`.
fn with_power(alone: &[(&'static str, f64)]) -> Arc<ProfileSet> {
    with_power_per_gpu(&|_| alone.to_vec())
}

/// `base` with `edit` made to each GPU's profile.
fn edited(base: &ProfileSet, edit: &dyn Fn(&str, &mut Profile)) -> Arc<ProfileSet> {
    let mut set = base.clone();
    for gpu in hardware::catalog() {
        let (profile, path) = base.get(gpu).unwrap();
        let mut profile = profile.clone();
        edit(gpu.name, &mut profile);
        set.insert(profile, PathBuf::from(path));
    }
    Arc::new(set)
}

fn run_with(
    groups: Vec<crate::engine::GpuGroup>,
    jobs: Vec<Job>,
    power: Arc<ProfileSet>,
    equal_share: bool,
) -> (RunRecord, crate::metrics::Summary) {
    let mut cfg = config(groups, jobs, PlacementRule::BestFit);
    cfg.perf = if equal_share {
        Arc::new(EqualShare::new(power.clone()))
    } else {
        Arc::new(Parametric::new(power.clone()))
    };
    cfg.power = Some(power);
    let run = Simulation::run(&cfg, None).unwrap();
    let summary = summarize(&cfg.jobs, &run, labels());
    (run, summary)
}

fn labels() -> RunLabels {
    RunLabels::for_test("energy")
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn a_job_alone_for_t_seconds_uses_its_alone_power_times_t() {
    // `mid` runs at 50 samples/s alone: 5000 samples take 100 s, at 400 W measured alone.
    for mode in [ShareMode::Exclusive, ShareMode::Timeslice, ShareMode::Mps] {
        let (run, summary) = run_with(
            vec![group("h200", 1, mode, None)],
            vec![job("a", "mid", 0.0, 5000.0, 1)],
            with_power(&ALONE),
            false,
        );
        let o = &run.outcomes[0];
        let t = o.end_s - o.start_s;
        assert!(close(t, 100.0), "{mode}: {t}");
        let e = o.energy_j.unwrap();
        assert!(close(e, 400.0 * t), "{mode}: {e} J for {t} s");
        let gpu = &run.energy.as_ref().unwrap().gpus[0];
        assert!(
            close(gpu.busy_j, e) && close(gpu.busy_s, t),
            "{mode}: {gpu:?}"
        );
        let s = summary.energy.unwrap();
        assert!(
            close(s.energy_kwh.unwrap(), 400.0 * t / JOULES_PER_KWH),
            "{s:?}"
        );
        assert!(close(s.samples_per_joule.unwrap(), 5000.0 / (400.0 * t)));
        assert_eq!(s.jobs_without_energy, 0);
        assert!(s.figures_are.contains("fitted"), "{}", s.figures_are);
    }
    // A 3-GPU job is alone on each of its GPUs: 3 x alone power for its run.
    let (run, _) = run_with(
        vec![group("h200", 3, ShareMode::Mps, None)],
        vec![job("wide", "small", 0.0, 3000.0, 3)],
        with_power(&ALONE),
        false,
    );
    let o = &run.outcomes[0];
    assert!(close(o.end_s - o.start_s, 10.0));
    assert!(close(o.energy_j.unwrap(), 3.0 * 300.0 * 10.0), "{o:?}");
}

/// One `mid` job over `gpus` GPUs (5,000 samples per GPU) alone in an MPS group with a 50% SM
/// budget.
fn mid_alone_at_half_the_sms(gpus: u32) -> (RunRecord, crate::metrics::Summary) {
    let mut budgeted = group("h200", gpus, ShareMode::Mps, None);
    budgeted.sm_budget = Some(0.5);
    let samples = 5000.0 * f64::from(gpus);
    let jobs = vec![job("a", "mid", 0.0, samples, gpus)];
    run_with(vec![budgeted], jobs, with_power(&ALONE), false)
}

#[test]
fn issue_37_a_lone_job_under_an_sm_budget_draws_the_mps_fit_at_its_slower_speed() {
    // `mid` (u = 0.7, s = 0.6) alone under MPS with a 50% SM budget: its GPU part stretches by
    // s / budget = 1.2, so it runs at 1 / (0.3 + 0.7 x 1.2) = 1 / 1.14 of its alone speed,
    // 50 / 1.14 samples/s: 5000 samples take 114 s. Under a budget it is not the process that
    // was measured alone, so its power is the MPS fit at that fraction of alone speed:
    // 90 + 0.8 x (400 - 90) / 1.14 W, over 114 s: 90 x 114 + 0.8 x 310 x 100 = 35,060 J
    // (its measured power alone would say 400 x 114 = 45,600 J).
    let (run, _) = mid_alone_at_half_the_sms(1);
    let o = &run.outcomes[0];
    assert!(close(o.end_s - o.start_s, 114.0), "{o:?}");
    assert!(close(o.energy_j.unwrap(), 35_060.0), "{o:?}");
    let gpu = &run.energy.as_ref().unwrap().gpus[0];
    assert!(close(gpu.busy_j, 35_060.0), "{gpu:?}");
}

#[test]
fn a_shared_gpu_splits_idle_equally_and_the_rest_by_activity() {
    // Equal share under time-slicing: two `small` jobs (100/s alone) run at 50/s each for 20 s,
    // each at half its alone speed: activity (300 - 100) * 0.5 = 100 each, so the GPU draws
    // 100 + 1.0 * 200 = 300 W and each job half of it.
    let (run, summary) = run_with(
        vec![group("h200", 1, ShareMode::Timeslice, None)],
        vec![
            job("a", "small", 0.0, 1000.0, 1),
            job("b", "small", 0.0, 1000.0, 1),
        ],
        with_power(&ALONE),
        true,
    );
    for o in &run.outcomes {
        assert!(close(o.end_s, 20.0), "{o:?}");
        assert!(close(o.energy_j.unwrap(), 150.0 * 20.0), "{o:?}");
    }
    let s = summary.energy.unwrap();
    assert!(close(
        s.jobs_energy_kwh.unwrap(),
        300.0 * 20.0 / JOULES_PER_KWH
    ));
    // Different models: the idle part splits equally, the rest by activity.
    // small at 50/s: activity 100; mid (50/s alone) at 25/s: (400 - 100) * 0.5 = 150.
    let (run, _) = run_with(
        vec![group("h200", 1, ShareMode::Timeslice, None)],
        vec![
            job("a", "small", 0.0, 1000.0, 1),
            job("b", "mid", 0.0, 500.0, 1),
        ],
        with_power(&ALONE),
        true,
    );
    let (a, b) = (&run.outcomes[0], &run.outcomes[1]);
    assert!(close(a.end_s, 20.0) && close(b.end_s, 20.0));
    assert!(close(
        a.energy_j.unwrap(),
        (50.0 + 250.0 * 100.0 / 250.0) * 20.0
    ));
    assert!(close(
        b.energy_j.unwrap(),
        (50.0 + 250.0 * 150.0 / 250.0) * 20.0
    ));
}

#[test]
fn job_energies_sum_to_the_gpus_busy_energy() {
    let jobs = || {
        vec![
            job("a", "small", 0.0, 4000.0, 1),
            job("b", "mid", 3.0, 1500.0, 1),
            job("c", "big", 7.5, 300.0, 1),
            job("d", "small", 11.0, 2500.0, 1),
            job("e", "mid", 12.0, 900.0, 2),
            job("f", "big", 40.0, 200.0, 1),
        ]
    };
    let clusters = [
        vec![group("h200", 2, ShareMode::Mps, None)],
        vec![group("h200", 2, ShareMode::Timeslice, None)],
        vec![
            group("h200", 1, ShareMode::Mig, Some("3g.71gb,4g.71gb")),
            group("h200", 2, ShareMode::Exclusive, None),
        ],
    ];
    for groups in clusters {
        let (run, summary) = run_with(groups, jobs(), with_power(&ALONE), false);
        let per_job: f64 = run.outcomes.iter().map(|o| o.energy_j.unwrap()).sum();
        let energy = run.energy.as_ref().unwrap();
        let busy: f64 = energy.gpus.iter().map(|g| g.busy_j).sum();
        assert!(busy > 0.0);
        assert!(close(per_job, busy), "jobs {per_job} J, GPUs busy {busy} J");
        assert!(run.outcomes.iter().all(|o| o.energy_j.unwrap() > 0.0));
        let s = summary.energy.unwrap();
        let total = s.energy_kwh.unwrap();
        let parts = s.jobs_energy_kwh.unwrap() + s.idle_energy_kwh.unwrap();
        assert!(close(total, parts), "{s:?}");
    }
}

#[test]
fn idle_gpus_add_idle_power_times_idle_time() {
    // One job arrives at 10 s and runs 20 s on one of two exclusive GPUs: makespan 30 s; GPU 0
    // idles 10 s, GPU 1 all 30 s, both at the timeslice coefficients' idle power.
    let (run, summary) = run_with(
        vec![group("h200", 2, ShareMode::Exclusive, None)],
        vec![job("a", "small", 10.0, 2000.0, 1)],
        with_power(&ALONE),
        false,
    );
    assert!(close(run.outcomes[0].end_s, 30.0));
    let s = summary.energy.unwrap();
    let idle_j = IDLE_TS * (10.0 + 30.0);
    assert!(
        close(s.idle_energy_kwh.unwrap() * JOULES_PER_KWH, idle_j),
        "{s:?}"
    );
    let total_j = idle_j + 300.0 * 20.0;
    assert!(
        close(s.energy_kwh.unwrap() * JOULES_PER_KWH, total_j),
        "{s:?}"
    );
}

#[test]
fn no_power_section_or_no_alone_power_gives_null_with_a_reason() {
    // The test profiles have no power section.
    let (run, summary) = run_with(
        vec![group("h200", 1, ShareMode::Mps, None)],
        vec![job("a", "mid", 0.0, 500.0, 1)],
        profiles(),
        false,
    );
    assert_eq!(run.outcomes[0].energy_j, None);
    let s = summary.energy.unwrap();
    assert_eq!((s.energy_kwh, s.samples_per_joule), (None, None));
    assert_eq!(s.jobs_without_energy, 1);
    let why = s.unknown_because.unwrap();
    assert!(why.contains("no power section"), "{why}");
    assert!(!why.contains("no measured power alone"), "said once: {why}");
    assert!(s.figures_are.starts_with("unknown"), "{}", s.figures_are);
    // A power section without `big`'s power alone: its jobs, and the GPU it shares, are
    // unknown; a job elsewhere keeps its energy.
    let (run, summary) = run_with(
        vec![group("h200", 2, ShareMode::Exclusive, None)],
        vec![
            job("a", "small", 0.0, 1000.0, 1),
            job("b", "big", 0.0, 100.0, 1),
        ],
        with_power(&ALONE[..2]),
        false,
    );
    assert!(run.outcomes[0].energy_j.is_some());
    assert_eq!(run.outcomes[1].energy_j, None);
    // big's GPU is busy 10 s (100 samples at 10/s) at an unknown power; small's 10 s known.
    let gpu_of_big = run.outcomes[1].gpus[0] as usize;
    let gpus = &run.energy.as_ref().unwrap().gpus;
    assert!(close(gpus[gpu_of_big].unknown_s, 10.0), "{gpus:?}");
    assert_eq!(gpus[1 - gpu_of_big].unknown_s, 0.0, "{gpus:?}");
    let s = summary.energy.unwrap();
    assert_eq!((s.energy_kwh, s.jobs_energy_kwh), (None, None));
    assert!(s.idle_energy_kwh.is_some());
    assert_eq!(s.jobs_without_energy, 1);
    let why = s.unknown_because.unwrap();
    assert!(
        why.contains("no measured power alone for big:1:1 on h200"),
        "{why}"
    );
    // Without profiles at all, the summary says so.
    let mut cfg = config(
        vec![group("h200", 1, ShareMode::Mps, None)],
        vec![job("a", "mid", 0.0, 500.0, 1)],
        PlacementRule::BestFit,
    );
    cfg.power = None;
    let run = Simulation::run(&cfg, None).unwrap();
    let s = summarize(&cfg.jobs, &run, labels()).energy.unwrap();
    assert!(
        s.energy_kwh.is_none() && s.unknown_because.is_some(),
        "{s:?}"
    );
}

#[test]
fn a_preempted_job_is_metered_only_while_it_computes() {
    // `long` (1000 s of `mid` alone, 400 W) is preempted at 200 s by `new` (10 s) under Las;
    // its checkpoint (10 s), the wait, and its restore (5 s) add nothing to its energy, and the
    // GPU meters busy only while a job computes.
    let power = with_power(&ALONE);
    let mut cfg = config(
        vec![group("h200", 1, ShareMode::Exclusive, None)],
        vec![
            job("long", "mid", 0.0, 50_000.0, 1),
            job("new", "mid", 200.0, 500.0, 1),
        ],
        PlacementRule::BestFit,
    );
    cfg.perf = Arc::new(Parametric::new(power.clone()));
    cfg.power = Some(power);
    cfg.policy.order = crate::policy::QueueOrder::Las {
        thresholds_gpu_s: vec![100.0],
    };
    cfg.policy.preemption = crate::policy::Preemption {
        checkpoint_s: 10.0,
        restore_s: 5.0,
        min_run_s: 0.0,
    };
    let run = Simulation::run(&cfg, None).unwrap();
    let (long, new) = (&run.outcomes[0], &run.outcomes[1]);
    assert_eq!(long.preemptions(), 1, "{long:?}");
    assert!(close(long.end_s, 1000.0 + 10.0 + 10.0 + 5.0), "{long:?}");
    assert!(close(long.energy_j.unwrap(), 400.0 * 1000.0), "{long:?}");
    assert!(close(new.energy_j.unwrap(), 400.0 * 10.0), "{new:?}");
    let gpu = &run.energy.as_ref().unwrap().gpus[0];
    assert!(close(gpu.busy_s, 1010.0), "{gpu:?}");
    assert!(close(gpu.busy_j, 400.0 * 1010.0), "{gpu:?}");
}

/// [`with_power`], with each GPU's own power alone: `alone(gpu name)`.
fn with_power_per_gpu(alone: &dyn Fn(&str) -> Vec<(&'static str, f64)>) -> Arc<ProfileSet> {
    edited(&profiles(), &|gpu, profile| {
        profile.power = Some(power_params(&alone(gpu)));
    })
}

/// An exclusive A100 and a time-sliced H200, one GPU each.
fn a100_and_h200() -> Vec<crate::engine::GpuGroup> {
    vec![
        group("a100-40gb", 1, ShareMode::Exclusive, None),
        group("h200", 1, ShareMode::Timeslice, None),
    ]
}

#[test]
fn issue_37_each_group_meters_its_jobs_with_its_own_gpus_power() {
    // Two groups of different GPUs, whose power alone differs: on the A100, small 200 W and
    // mid 250 W; on the H200, the usual 300 W and 400 W. A mid job arrives first and takes the
    // exclusive A100; small and mid then share the time-sliced H200 (equal share), as in
    // a_shared_gpu_splits_idle_equally_and_the_rest_by_activity: 20 s each, the GPU at
    // 100 + 100 + 150 = 350 W (idle and their activities), small 50 + 250 x 100 / 250 W and mid
    // 50 + 250 x 150 / 250 W. The mid job alone on the A100:
    // 50/s alone, 500 samples in 10 s at its A100 power, 250 W.
    let power = with_power_per_gpu(&|gpu| match gpu {
        "a100-40gb" => vec![("small", 200.0), ("mid", 250.0), ("big", 500.0)],
        _ => ALONE.to_vec(),
    });
    let (run, _) = run_with(
        a100_and_h200(),
        vec![
            job("first", "mid", 0.0, 500.0, 1),
            job("a", "small", 1.0, 1000.0, 1),
            job("b", "mid", 1.0, 500.0, 1),
        ],
        power,
        true,
    );
    let groups: Vec<Option<u32>> = run.outcomes.iter().map(|o| o.group).collect();
    assert_eq!(groups, [Some(0), Some(1), Some(1)]);
    let ends: Vec<f64> = run.outcomes.iter().map(|o| o.end_s).collect();
    assert!(close(ends[0], 10.0) && close(ends[1], 21.0) && close(ends[2], 21.0));
    let energy: Vec<f64> = run.outcomes.iter().map(|o| o.energy_j.unwrap()).collect();
    let by_hand = [250.0 * 10.0, (50.0 + 100.0) * 20.0, (50.0 + 150.0) * 20.0];
    for (got, want) in energy.iter().zip(by_hand) {
        assert!(close(*got, want), "{energy:?} against {by_hand:?}");
    }
    let gpus = &run.energy.as_ref().unwrap().gpus;
    assert!(close(gpus[0].busy_j, 2500.0) && close(gpus[1].busy_j, 350.0 * 20.0));

    // Without coefficients for any mode, no power is known; the job whose power alone the
    // H200 lacks (mid, here the second model met) is named, on the H200 only (the A100 knows
    // it).
    let power = with_power_per_gpu(&|gpu| match gpu {
        "a100-40gb" => vec![("small", 200.0), ("mid", 250.0)],
        _ => vec![("small", 300.0)],
    });
    let power = edited(&power, &|_, profile| {
        profile.power.as_mut().unwrap().modes.clear();
    });
    let (run, summary) = run_with(
        a100_and_h200(),
        vec![
            job("first", "small", 0.0, 1000.0, 1),
            job("a", "mid", 1.0, 500.0, 1),
            job("b", "small", 1.0, 1000.0, 1),
        ],
        power,
        true,
    );
    assert!(run.outcomes.iter().all(|o| o.energy_j.is_none()));
    let why = summary.energy.unwrap().unknown_because.unwrap();
    assert!(
        why.contains("no measured power alone for mid:1:1 on h200"),
        "{why}"
    );
    assert!(
        !why.contains("small:1:1") && !why.contains("on a100-40gb"),
        "{why}"
    );

    // A model the A100's profile lacks has no class there: its job runs on the H200 alone,
    // 500 samples at 50/s, at its measured 400 W: 4,000 J.
    let power = edited(&with_power(&ALONE), &|gpu, profile| {
        if gpu == "a100-40gb" {
            profile.models.retain(|m| m.model != "mid");
        }
    });
    let (run, _) = run_with(
        a100_and_h200(),
        vec![job("b", "mid", 0.0, 500.0, 1)],
        power,
        true,
    );
    let o = &run.outcomes[0];
    assert_eq!(o.group, Some(1), "{o:?}");
    assert!(close(o.energy_j.unwrap(), 4000.0), "{o:?}");
}

#[test]
fn issue_37_a_two_gpu_job_under_an_sm_budget_draws_the_mps_fit_on_each_gpu() {
    // As the lone job under a 50% budget above, over two GPUs: 10,000 samples at twice
    // 50 / 1.14 samples/s take 114 s, and each GPU draws 90 + 0.8 x 310 / 1.14 W: 35,060 J
    // each, 70,120 J for the job. Before, only the GPU re-rated last had a power: the job was
    // metered at one GPU's 35,060 J and the other GPU's 114 s were of unknown power.
    let (run, summary) = mid_alone_at_half_the_sms(2);
    let o = &run.outcomes[0];
    assert!(close(o.end_s - o.start_s, 114.0), "{o:?}");
    assert!(close(o.energy_j.unwrap(), 70_120.0), "{o:?}");
    for gpu in &run.energy.as_ref().unwrap().gpus {
        assert!(
            close(gpu.busy_j, 35_060.0) && gpu.unknown_s == 0.0,
            "{gpu:?}"
        );
    }
    assert!(summary.energy.unwrap().energy_kwh.is_some());
}
