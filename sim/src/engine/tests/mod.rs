//! Engine tests: hand-checked cases, a differential test against `NaiveEngine`, and property
//! tests of the engine's invariants.
mod alone;
mod energy;
mod events;
mod min_speed;
mod naive;
mod preempt;
mod properties;

use std::path::PathBuf;
use std::sync::Arc;

use super::*;
use crate::engine::DynamicMig;
use crate::hardware;
use crate::perf::profile::{
    MemoryParams, MigParams, ModelEntry, MpsParams, PROFILE_VERSION, Profile, Provenance,
    TimeSliceParams,
};
use crate::perf::{EqualShare, Origin, Parametric, ProfileSet};
use crate::policy::PlacementRule;
use crate::workload::ModelKey;

pub(super) fn entry(model: &str, rate: f64, u: f64, s: f64, mem: f64) -> ModelEntry {
    ModelEntry {
        model: model.into(),
        batch: 1,
        image: 1,
        samples_per_s: rate,
        time_demand: u,
        space_demand: s,
        contention_demand: None,
        memory_gib: mem,
        spread: None,
        origin: None,
    }
}

/// A profile for every catalog GPU with models `small`, `mid`, `big` and `huge` (200 GiB).
pub(super) fn profiles() -> Arc<ProfileSet> {
    let mut set = ProfileSet::default();
    for gpu in hardware::catalog() {
        let profile = Profile {
            version: PROFILE_VERSION,
            gpu: gpu.name.into(),
            origin: Origin::Provisional,
            provenance: Provenance {
                source: "test".into(),
                data: vec![],
                created: "2026-11-30".into(),
                driver: None,
            },
            memory: MemoryParams {
                context_gib: 0.5,
                mps_context_gib: 0.25,
            },
            timeslice: TimeSliceParams {
                switch_overhead: 0.1,
                origin: None,
            },
            mps: MpsParams {
                interference: 0.4,
                queueing: 0.0,
                origin: None,
            },
            mig: MigParams {
                efficiency: 0.95,
                origin: None,
            },
            models: vec![
                entry("small", 100.0, 0.3, 0.3, 2.0),
                entry("mid", 50.0, 0.7, 0.6, 9.0),
                entry("big", 10.0, 0.95, 0.9, 30.0),
                entry("huge", 10.0, 0.95, 0.9, 200.0),
            ],
            kernel: None,
            held_out_error: Vec::new(),
            power: None,
        };
        set.insert(profile, PathBuf::from(format!("{}.ron", gpu.name)));
    }
    Arc::new(set)
}

pub(super) fn job(name: &str, model: &str, arrival_s: f64, samples: f64, gpus: u32) -> Job {
    Job {
        name: name.into(),
        model: ModelKey::new(model, 1, 1),
        arrival_s,
        samples,
        gpus,
        min_speed: None,
    }
}

pub(super) fn group(gpu: &str, count: u32, mode: ShareMode, layout: Option<&str>) -> GpuGroup {
    let spec = hardware::gpu(gpu).unwrap();
    GpuGroup {
        gpu: spec,
        count,
        mode,
        mig_layout: layout.map(|l| spec.parse_mig_layout(l).unwrap()),
        sm_budget: None,
        jobs_per_slice: 1,
        dynamic_mig: None,
    }
}

pub(super) fn config(groups: Vec<GpuGroup>, jobs: Vec<Job>, placement: PlacementRule) -> SimConfig {
    SimConfig {
        cluster: Cluster { groups },
        policy: Policy {
            placement,
            ..Policy::default()
        },
        jobs,
        source: None,
        perf: Arc::new(Parametric::new(profiles())),
        on_unplaceable: Unplaceable::Error,
        timeline_every_s: 0.0,
        power: None,
    }
}

#[test]
fn a_job_alone_takes_work_over_rate() {
    let cfg = config(
        vec![group("h200", 1, ShareMode::Exclusive, None)],
        vec![job("a", "small", 5.0, 1000.0, 1)],
        PlacementRule::BestFit,
    );
    let run = Simulation::run(&cfg, None).unwrap();
    let o = &run.outcomes[0];
    assert_eq!((o.start_s, o.end_s), (5.0, 15.0));
}

#[test]
fn exclusive_gpu_makes_the_second_job_wait() {
    let jobs = vec![
        job("a", "small", 0.0, 1000.0, 1),
        job("b", "small", 1.0, 1000.0, 1),
    ];
    let cfg = config(
        vec![group("h200", 1, ShareMode::Exclusive, None)],
        jobs,
        PlacementRule::BestFit,
    );
    let run = Simulation::run(&cfg, None).unwrap();
    assert_eq!(run.outcomes[1].start_s, 10.0);
    assert_eq!(run.outcomes[1].end_s, 20.0);
}

#[test]
fn equal_share_pair_finishes_as_hand_computed() {
    // Two jobs of 1000 samples at 100/s alone; b arrives at 5 s. Equal share halves both.
    // a: 500 samples by 5 s, then 50/s -> 500 more take 10 s -> ends 15 s.
    // b: 500 samples by 15 s at 50/s, then 100/s alone -> 5 s more -> ends 20 s.
    let jobs = vec![
        job("a", "small", 0.0, 1000.0, 1),
        job("b", "small", 5.0, 1000.0, 1),
    ];
    let mut cfg = config(
        vec![group("h200", 1, ShareMode::Mps, None)],
        jobs,
        PlacementRule::BestFit,
    );
    cfg.perf = Arc::new(EqualShare::new(profiles()));
    let run = Simulation::run(&cfg, None).unwrap();
    assert!((run.outcomes[0].end_s - 15.0).abs() < 1e-9);
    assert!((run.outcomes[1].end_s - 20.0).abs() < 1e-9);
}

#[test]
fn multi_gpu_job_takes_whole_idle_gpus() {
    let jobs = vec![
        job("small", "small", 0.0, 1000.0, 1),
        job("wide", "small", 1.0, 3000.0, 3),
    ];
    let cfg = config(
        vec![group("h200", 4, ShareMode::Mps, None)],
        jobs,
        PlacementRule::BestFit,
    );
    let run = Simulation::run(&cfg, None).unwrap();
    let wide = &run.outcomes[1];
    assert_eq!(wide.gpus.len(), 3);
    assert!(
        !wide.gpus.contains(&run.outcomes[0].gpus[0]),
        "a multi-GPU job never shares"
    );
    assert!(
        (wide.end_s - wide.start_s - 10.0).abs() < 1e-9,
        "3 GPUs at 100/s each"
    );
}

#[test]
fn mig_jobs_get_slices_and_slice_speed() {
    let jobs = vec![
        job("a", "big", 0.0, 100.0, 1),
        job("b", "big", 0.0, 100.0, 1),
    ];
    let cfg = config(
        vec![group("h200", 1, ShareMode::Mig, Some("3g.71gb,4g.71gb"))],
        jobs,
        PlacementRule::BestFit,
    );
    let run = Simulation::run(&cfg, None).unwrap();
    let slices: Vec<&str> = run
        .outcomes
        .iter()
        .map(|o| o.slice.unwrap().profile.name)
        .collect();
    assert_eq!(
        slices,
        ["3g.71gb", "4g.71gb"],
        "best-fit takes the smaller slice first"
    );
    assert!(
        run.outcomes[0].end_s > run.outcomes[1].end_s,
        "60 SMs are slower than 64"
    );
}

#[test]
fn job_too_big_for_any_gpu_is_an_error_naming_it() {
    let cfg = config(
        vec![group("h200", 2, ShareMode::Mps, None)],
        vec![job("giant", "huge", 0.0, 1.0, 1)],
        PlacementRule::BestFit,
    );
    let err = Simulation::run(&cfg, None).unwrap_err().to_string();
    assert!(
        err.contains("job `giant`") && err.contains("fits nowhere"),
        "{err}"
    );
    assert!(err.contains("needs 200.2 GiB per process"), "{err}");
    assert!(err.contains("Lower its batch size"), "{err}");
}

#[test]
fn job_wider_than_every_group_is_told_to_find_more_gpus_not_a_smaller_batch() {
    let cfg = config(
        vec![group("h200", 2, ShareMode::Mps, None)],
        vec![job("wide", "small", 0.0, 1000.0, 3)],
        PlacementRule::BestFit,
    );
    let err = Simulation::run(&cfg, None).unwrap_err().to_string();
    assert!(err.contains("needs 3 GPUs, the group has 2"), "{err}");
    assert!(err.contains("Add a group of at least 3 GPUs"), "{err}");
    assert!(!err.contains("batch size"), "{err}");
}

#[test]
fn unplaceable_jobs_can_be_skipped_and_counted() {
    let mut cfg = config(
        vec![group("h200", 2, ShareMode::Mps, None)],
        vec![
            job("giant", "huge", 0.0, 1.0, 1),
            job("ok", "small", 0.0, 10.0, 1),
        ],
        PlacementRule::BestFit,
    );
    cfg.on_unplaceable = Unplaceable::Skip;
    let run = Simulation::run(&cfg, None).unwrap();
    assert!(!run.outcomes[0].completed);
    assert!(run.outcomes[1].completed);
}

#[test]
fn unknown_model_is_an_error_naming_the_job() {
    let cfg = config(
        vec![group("h200", 1, ShareMode::Mps, None)],
        vec![job("x", "vgg", 0.0, 1.0, 1)],
        PlacementRule::BestFit,
    );
    let err = Simulation::run(&cfg, None).unwrap_err().to_string();
    assert!(
        err.contains("job `x`") && err.contains("no entry for vgg:1:1"),
        "{err}"
    );
}

fn dynamic(gpu: &str, layout: &str, others: &[&str], reconfigure_s: f64) -> GpuGroup {
    let mut g = group(gpu, 1, ShareMode::Mig, Some(layout));
    let spec = g.gpu;
    let mut layouts = vec![spec.parse_mig_layout(layout).unwrap()];
    layouts.extend(others.iter().map(|l| spec.parse_mig_layout(l).unwrap()));
    g.dynamic_mig = Some(DynamicMig {
        layouts,
        reconfigure_s,
    });
    g
}

#[test]
fn dynamic_mig_recuts_an_idle_gpu_for_a_job_no_slice_holds() {
    // "big" needs 30.25 GiB; 1g.18gb slices hold 16 GiB; 3g.71gb and 4g.71gb hold it.
    let g = dynamic("h200", "7x1g.18gb", &["3g.71gb,4g.71gb"], 30.0);
    let cfg = config(
        vec![g],
        vec![job("big", "big", 0.0, 100.0, 1)],
        PlacementRule::BestFit,
    );
    let run = Simulation::run(&cfg, None).unwrap();
    let o = &run.outcomes[0];
    assert_eq!(o.start_s, 30.0, "starts once the re-cut lands");
    assert!(
        o.slice.unwrap().profile.name.starts_with('3')
            || o.slice.unwrap().profile.name.starts_with('4')
    );
    assert_eq!(run.mig_reconfigurations, 1);
    let mut static_cfg = cfg.clone();
    static_cfg.cluster.groups[0].dynamic_mig = None;
    assert!(
        Simulation::run(&static_cfg, None).is_err(),
        "a static 7x1g layout cannot hold it"
    );
}

#[test]
fn dynamic_mig_never_recuts_a_gpu_with_running_jobs() {
    let g = dynamic("h200", "7x1g.18gb", &["3g.71gb,4g.71gb"], 30.0);
    let jobs = vec![
        job("small", "small", 0.0, 1000.0, 1),
        job("big", "big", 1.0, 100.0, 1),
    ];
    let cfg = config(vec![g], jobs, PlacementRule::BestFit);
    let run = Simulation::run(&cfg, None).unwrap();
    let small_end = run.outcomes[0].end_s;
    assert!(small_end > 1.0);
    assert!(
        (run.outcomes[1].start_s - (small_end + 30.0)).abs() < 1e-9,
        "{:?}",
        run.outcomes[1]
    );
    assert_eq!(
        run.outcomes[0].slice.unwrap().profile.name,
        "1g.18gb",
        "slices are reported as run"
    );
}

#[test]
fn a_run_without_timeline_gives_the_same_outcomes_and_no_rows() {
    let jobs = (0..6)
        .map(|i| job(&format!("j{i}"), "small", f64::from(i), 1000.0, 1 + i % 2))
        .collect();
    let cfg = config(
        vec![group("h200", 2, ShareMode::Exclusive, None)],
        jobs,
        PlacementRule::BestFit,
    );
    let with = Simulation::run(&cfg, None).unwrap();
    let without = Simulation::run_without_timeline(&cfg, None).unwrap();
    assert!(!with.timeline.is_empty());
    assert!(without.timeline.is_empty());
    assert_eq!(
        crate::metrics::jobs_csv(&cfg.jobs, &with).unwrap(),
        crate::metrics::jobs_csv(&cfg.jobs, &without).unwrap()
    );
    assert_eq!(with.events, without.events);
}

#[test]
fn a_streamed_timeline_is_the_kept_one() {
    let jobs = (0..40)
        .map(|i| {
            job(
                &format!("j{i}"),
                "small",
                f64::from(i % 13),
                1000.0 + f64::from(i),
                1 + i % 2,
            )
        })
        .collect();
    let cfg = config(
        vec![group("h200", 3, ShareMode::Mps, None)],
        jobs,
        PlacementRule::BestFit,
    );
    let kept = Simulation::run(&cfg, None).unwrap();
    let mut rows = Vec::new();
    let mut outcomes = vec![None; cfg.jobs.len()];
    let streamed = Simulation::run_streaming(
        &cfg,
        None,
        Some(&mut |r: &TimelineRow| rows.push(*r)),
        &mut |job, _, o| {
            assert!(
                outcomes[job as usize].is_none(),
                "job {job} handed over twice"
            );
            outcomes[job as usize] = Some(o);
        },
    )
    .unwrap();
    assert!(rows.len() > 2 * TIMELINE_BATCH, "{} rows", rows.len());
    assert_eq!(rows, kept.timeline);
    assert!(streamed.timeline.is_empty() && streamed.outcomes.is_empty());
    let outcomes: Vec<JobOutcome> = outcomes.into_iter().map(Option::unwrap).collect();
    assert_eq!(outcomes, kept.outcomes);
    assert_eq!(streamed.events, kept.events);
    let dir = tempfile::tempdir().unwrap();
    let mut file =
        crate::metrics::TimelineFile::create(dir.path(), kept.total_gpus, kept.memory_total_gib)
            .unwrap();
    for r in &rows {
        file.push(r);
    }
    file.finish().unwrap();
    assert_eq!(
        std::fs::read(dir.path().join("timeline.csv")).unwrap(),
        crate::metrics::timeline_csv(&kept).unwrap()
    );
}

/// Outcomes streamed through `JobStream` (finishing out of input order, under a preemptive
/// order, with an unplaceable job) give the files and summary of the kept record. The first
/// job ends last, so every later job's rows are held, past the test build's budget of rows
/// held in memory (600 bytes): most go through the spill file.
#[test]
fn streamed_outcomes_write_the_kept_files_and_summary() {
    use crate::metrics::{JobStream, JobsFile, RunLabels, placements_csv, summarize};
    let mut jobs = vec![job("long", "small", 0.0, 5.0e6, 1)];
    jobs.extend((0..30).map(|i| {
        job(
            &format!("j{i}"),
            "small",
            f64::from(i % 7),
            5000.0 - 150.0 * f64::from(i),
            1 + i % 2,
        )
    }));
    jobs.push(job("huge", "small", 1.0, 10.0, 9));
    let mut cfg = config(
        vec![group("h200", 3, ShareMode::Mps, None)],
        jobs,
        PlacementRule::BestFit,
    );
    cfg.on_unplaceable = Unplaceable::Skip;
    cfg.policy.order = QueueOrder::Srtf;
    cfg.policy.backfill = true;
    let kept = Simulation::run(&cfg, None).unwrap();
    let last_end = kept.outcomes.iter().map(|o| o.end_s).fold(0.0, f64::max);
    assert_eq!(kept.outcomes[0].end_s, last_end);
    assert!(kept.outcomes.iter().any(|o| o.preemptions() > 0));
    assert!(kept.outcomes.iter().any(|o| !o.completed));
    let labels = RunLabels::for_test("s");
    let dir = tempfile::tempdir().unwrap();
    let mut stream =
        JobStream::create(&cfg.jobs, cfg.jobs.len(), dir.path(), JobsFile::Csv, true).unwrap();
    let run = Simulation::run_streaming(&cfg, None, None, &mut |job, drawn, o| {
        stream.push(job, drawn, o)
    })
    .unwrap();
    let summary = stream.finish(&run, labels.clone()).unwrap();
    assert_eq!(summary, summarize(&cfg.jobs, &kept, labels.clone()));
    // Without files only the sums taken in input order are held: the same summary.
    let mut bare =
        JobStream::create(&cfg.jobs, cfg.jobs.len(), dir.path(), JobsFile::None, false).unwrap();
    let run = Simulation::run_streaming(&cfg, None, None, &mut |job, drawn, o| {
        bare.push(job, drawn, o)
    })
    .unwrap();
    assert_eq!(bare.finish(&run, labels.clone()).unwrap(), summary);
    assert_eq!(
        std::fs::read(dir.path().join("jobs.csv")).unwrap(),
        crate::metrics::jobs_csv(&cfg.jobs, &kept).unwrap()
    );
    assert_eq!(
        std::fs::read(dir.path().join("placements.csv")).unwrap(),
        placements_csv(&kept).unwrap()
    );
    // jobs.parquet's held rows go through the same budget and spill file, as bytes.
    #[cfg(feature = "parquet")]
    {
        let columnar = tempfile::tempdir().unwrap();
        let mut stream = JobStream::create(
            &cfg.jobs,
            cfg.jobs.len(),
            columnar.path(),
            JobsFile::Parquet,
            false,
        )
        .unwrap();
        let run = Simulation::run_streaming(&cfg, None, None, &mut |job, drawn, o| {
            stream.push(job, drawn, o)
        })
        .unwrap();
        assert_eq!(stream.finish(&run, labels.clone()).unwrap(), summary);
        let mut kept_parquet = crate::metrics::parquet::JobsParquet::new(Vec::new()).unwrap();
        for row in crate::metrics::job_rows(&cfg.jobs, &kept) {
            kept_parquet.push(&row).unwrap();
        }
        assert_eq!(
            std::fs::read(columnar.path().join("jobs.parquet")).unwrap(),
            kept_parquet.finish().unwrap()
        );
    }
}

#[test]
fn simulation_is_send() {
    fn assert_send<T: Send>() {}
    assert_send::<Simulation<'static>>();
}

/// A synthetic plan over the test profile's models, drawing some 4-GPU jobs (which fit no
/// group of 3 GPUs) and `huge` ones (which fit no GPU's memory).
fn drawn_plan(jobs: u32) -> crate::workload::synthetic::SyntheticPlan {
    use crate::workload::synthetic::{MixEntry, SyntheticPlan};
    let mix = |model: &str, weight: f64, solo_rate: f64| MixEntry {
        model: ModelKey::new(model, 1, 1),
        weight,
        solo_rate,
        min_speed: None,
    };
    SyntheticPlan {
        jobs,
        arrivals_per_hour: 400.0,
        median_s: 600.0,
        sigma: 1.0,
        mix: vec![
            mix("small", 3.0, 100.0),
            mix("big", 1.0, 10.0),
            mix("huge", 0.05, 10.0),
        ],
        gpus: vec![(1, 0.8), (2, 0.15), (4, 0.05)],
    }
}

/// Jobs the engine draws as the clock reaches them run exactly as the same jobs listed: the
/// same outcomes, files and summary (under FIFO with backfill, under Srtf, skipping the jobs
/// that fit nowhere), and the same error naming the first job that fits nowhere.
#[test]
fn drawn_jobs_run_as_the_same_jobs_listed() {
    use crate::metrics::{JobStream, JobsFile, RunLabels, placements_csv, summarize};
    use crate::workload::synthetic::{Generator, generate};
    let plan = drawn_plan(400);
    let listed_jobs = generate(&plan, 3).unwrap();
    let generator = Arc::new(Generator::new(plan, 3).unwrap());
    assert!(listed_jobs.iter().any(|j| j.gpus == 4));
    assert!(listed_jobs.iter().any(|j| j.model.model == "huge"));
    for order in [QueueOrder::Fifo, QueueOrder::Srtf] {
        let mut listed = config(
            vec![group("h200", 3, ShareMode::Mps, None)],
            listed_jobs.clone(),
            PlacementRule::BestFit,
        );
        listed.on_unplaceable = Unplaceable::Skip;
        listed.policy.order = order.clone();
        listed.policy.backfill = true;
        listed.policy.backfill_depth = u32::MAX as usize;
        let mut drawn = listed.clone();
        drawn.jobs = Vec::new();
        drawn.source = Some(generator.clone());
        let kept = Simulation::run(&listed, None).unwrap();
        assert!(kept.outcomes.iter().any(|o| !o.completed));
        // Compared as text: a skipped job's times are NaN, never equal to themselves.
        let run = Simulation::run(&drawn, None).unwrap();
        assert_eq!(format!("{run:?}"), format!("{kept:?}"), "{order:?}");
        let dir = tempfile::tempdir().unwrap();
        let mut stream =
            JobStream::create(&[], drawn.job_count(), dir.path(), JobsFile::Csv, true).unwrap();
        let run = Simulation::run_streaming(&drawn, None, None, &mut |job, d, o| {
            assert!(d.is_some(), "a drawn job comes with its outcome");
            stream.push(job, d, o)
        })
        .unwrap();
        let labels = RunLabels::for_test("s");
        let summary = stream.finish(&run, labels.clone()).unwrap();
        assert_eq!(summary, summarize(&listed_jobs, &kept, labels));
        assert_eq!(
            std::fs::read(dir.path().join("jobs.csv")).unwrap(),
            crate::metrics::jobs_csv(&listed_jobs, &kept).unwrap()
        );
        assert_eq!(
            std::fs::read(dir.path().join("placements.csv")).unwrap(),
            placements_csv(&kept).unwrap()
        );
        // Refused rather than skipped: the same job is named.
        listed.on_unplaceable = Unplaceable::Error;
        drawn.on_unplaceable = Unplaceable::Error;
        let want = Simulation::run(&listed, None).unwrap_err().to_string();
        let got = Simulation::run(&drawn, None).unwrap_err().to_string();
        assert!(want.contains("fits nowhere"), "{want}");
        assert_eq!(got, want);
    }
}

/// A configuration with both listed jobs and a job source is refused, not run.
#[test]
fn listed_jobs_and_a_job_source_are_refused_together() {
    use crate::workload::synthetic::Generator;
    let mut cfg = config(
        vec![group("h200", 3, ShareMode::Mps, None)],
        vec![job("a", "small", 0.0, 100.0, 1)],
        PlacementRule::BestFit,
    );
    cfg.source = Some(Arc::new(Generator::new(drawn_plan(5), 1).unwrap()));
    let err = Simulation::run(&cfg, None).unwrap_err().to_string();
    assert!(err.contains("lists 1 job(s) and has a job source"), "{err}");
}

/// The state window: jobs inserted out of id order (listed jobs given out of arrival order)
/// and removed in any order are found while they have a state, and the window shrinks from
/// the front as the oldest go.
#[test]
fn states_window_follows_the_live_jobs() {
    // Each job's cold part carries its id (as its Las level), to see it follow its state.
    let cold = |job: u32| {
        let mut cold = ColdState::default();
        cold.pre.level = job;
        cold
    };
    let mut states = States::default();
    for job in [5u32, 7, 3, 9] {
        states.insert(job, JobState::arrived(f64::from(job)), cold(job));
    }
    assert_eq!(states.jobs(), vec![3, 5, 7, 9]);
    assert!(states.get(4).is_none() && states.get(2).is_none() && states.get(10).is_none());
    let (state, gone) = states.remove(5);
    assert_eq!((state.remaining, gone.pre.level), (5.0, 5));
    assert_eq!(states.base, 3, "job 3 still holds the front");
    assert_eq!(states.remove(3).0.remaining, 3.0);
    assert_eq!(states.base, 7, "the front moved past the gone jobs");
    assert_eq!(states.at.len(), 3);
    assert_eq!(states[7].remaining, 7.0);
    states.insert(8, JobState::arrived(8.0), cold(8));
    assert_eq!(states.jobs(), vec![7, 8, 9]);
    assert_eq!(states.slab.len(), 4, "freed places are reused");
    assert_eq!(states.cold.len(), 4, "cold parts share the places");
    for job in [7, 8, 9] {
        assert_eq!(states.cold(job).pre.level, job);
        assert_eq!(states.both_mut(job).0.remaining, f64::from(job));
    }
    for job in [9, 7, 8] {
        states.remove(job);
    }
    assert!(states.at.is_empty() && states.jobs().is_empty());
}

/// Busy spans summed as they close give the bits of a GPU-by-GPU sum of each GPU's spans'
/// lengths summed in time order; a run starting as the last one ends joins its span.
#[test]
fn busy_spans_sum_per_gpu_in_time_order() {
    let runs = 29;
    let mut starts = Vec::new();
    let mut t = 0.1f64;
    for k in 0..runs {
        starts.push(t);
        t += 1.3 + (k as f64).sqrt();
    }
    let span = |k: usize, g: usize| {
        let start = starts[k] + 0.37 * g as f64;
        (start, start + 0.1 * (k % 7) as f64 + 0.01)
    };
    let mut gpus = vec![BusySpans::default(); 3];
    for k in 0..runs {
        for (g, b) in gpus.iter_mut().enumerate() {
            let (start, end) = span(k, g);
            b.run_starts(start);
            b.run_ends(end);
            if k % 5 == 0 {
                // Another run from the moment this one ended: the same span.
                b.run_starts(end);
                b.run_ends(end + 0.5);
            }
        }
    }
    let got = gpus.iter().fold(0.0, |total, b| total + b.busy_s());
    let mut want = 0.0;
    for g in 0..3 {
        let mut gpu_s = 0.0;
        for k in 0..runs {
            let (start, end) = span(k, g);
            gpu_s += if k % 5 == 0 { end + 0.5 } else { end } - start;
        }
        want += gpu_s;
    }
    assert_eq!(got.to_bits(), want.to_bits());
}

/// Srtf priorities sit on a grid of 2^20 steps a second, so remaining times a few ulps apart
/// tie: 0.3 s is step 314,572.8, rounded to 314,573; 1 + 1e-12 s is step 1,048,576.
#[test]
fn issue_37_srtf_priorities_round_to_a_grid_of_2_to_the_20_steps_a_second() {
    assert_eq!(srtf_priority(1.0), 1.0);
    assert_eq!(srtf_priority(1.0 + 1e-12), 1.0);
    assert_eq!(srtf_priority(0.3), 314_573.0 / 1_048_576.0);
    assert_eq!(srtf_priority(2.5e-7), 0.0);
    assert_eq!(srtf_priority(1e-6), 1.0 / 1_048_576.0);
}

/// Preemption candidates are equal when their victim order is: priority, then start of their
/// run, then rank; which job it is does not enter.
#[test]
fn issue_37_candidates_equal_in_victim_order_are_equal() {
    let a = Candidate {
        priority: 1.0,
        run_start: 2.0,
        rank: 3,
        job: 7,
    };
    assert!(a == Candidate { job: 9, ..a });
    assert!(a != Candidate { rank: 4, ..a });
    assert!(
        a != Candidate {
            run_start: 2.5,
            ..a
        }
    );
    assert!(a < Candidate { priority: 1.5, ..a });
}

/// A job asks no less than another when it wants as many GPUs (one each, or more than the
/// other's several) and at least its memory in every group: `big` (30 GiB) asks no less than
/// `mid` (9 GiB), not the other way round; two GPUs ask no less than one only if the other
/// wants several. Under least-slowdown only the same request does.
#[test]
fn issue_37_a_job_asks_no_less_than_another_by_gpus_and_memory() {
    let jobs = vec![
        job("mid", "mid", 0.0, 1e9, 1),
        job("big", "big", 0.0, 1e9, 1),
        job("big2", "big", 0.0, 1e9, 2),
        job("big4", "big", 0.0, 1e9, 4),
        job("mid4", "mid", 0.0, 1e9, 4),
    ];
    let cfg = config(
        vec![group("h200", 4, ShareMode::Mps, None)],
        jobs,
        PlacementRule::BestFit,
    );
    // The engine's loop up to the first instant: every job has arrived, none can finish.
    fn arrived(cfg: &SimConfig) -> Simulation<'_> {
        let mut sim = setup::build(cfg).unwrap();
        let t = sim.next_time().unwrap();
        sim.now = t;
        sim.handle_events_until(same_instant(t)).unwrap();
        sim.schedule().unwrap();
        sim
    }
    let sim = arrived(&cfg);
    let no_less = |a, b| sim.asks_no_less(a, b);
    assert!(no_less(1, 0) && no_less(0, 0) && no_less(1, 1));
    assert!(!no_less(0, 1), "9 GiB asks less than 30");
    assert!(
        !no_less(2, 1) && !no_less(1, 2),
        "two GPUs against one: neither"
    );
    assert!(no_less(3, 2) && !no_less(2, 3));
    assert!(!no_less(4, 3) && no_less(3, 4));
    let mut slowdown = cfg.clone();
    slowdown.policy.placement = PlacementRule::LeastSlowdown;
    let sim = arrived(&slowdown);
    assert!(!sim.asks_no_less(1, 0) && sim.asks_no_less(1, 1));
}

/// A job with no work, no GPU or an arrival off the clock is refused before the run, named.
#[test]
fn issue_37_a_job_without_work_gpus_or_a_valid_arrival_is_refused_by_name() {
    let refused = |edit: &dyn Fn(&mut Job)| {
        let mut bad = job("broken", "small", 0.0, 100.0, 1);
        edit(&mut bad);
        let cfg = config(
            vec![group("h200", 1, ShareMode::Mps, None)],
            vec![job("fine", "small", 0.0, 100.0, 1), bad],
            PlacementRule::BestFit,
        );
        Simulation::run(&cfg, None).unwrap_err().to_string()
    };
    for (edit, why) in [
        (
            &(|j: &mut Job| j.samples = f64::NAN) as &dyn Fn(&mut Job),
            "work of NaN samples must be a finite number > 0",
        ),
        (&|j: &mut Job| j.samples = 0.0, "work of 0 samples"),
        (&|j: &mut Job| j.gpus = 0, "asks for 0 GPUs"),
        (&|j: &mut Job| j.arrival_s = f64::NAN, "arriv"),
    ] {
        let err = refused(edit);
        assert!(err.contains("broken") && err.contains(why), "{why}: {err}");
    }
}

/// A source giving the listed jobs, all of one kind.
#[derive(Debug)]
struct Sourced {
    kinds: Vec<crate::workload::stream::SourceKind>,
    jobs: Vec<Job>,
}

impl crate::workload::stream::JobSource for Sourced {
    fn len(&self) -> u32 {
        self.jobs.len() as u32
    }

    fn kinds(&self) -> &[crate::workload::stream::SourceKind] {
        &self.kinds
    }

    fn draws(&self, _named: bool) -> crate::workload::stream::Draws<'_> {
        Box::new(self.jobs.iter().map(|job| {
            Ok(crate::workload::stream::Drawn {
                kind: 0,
                job: job.clone(),
            })
        }))
    }
}

/// A model that answers rate 0 for every job.
struct NoProgress(Parametric);

impl crate::perf::PerfModel for NoProgress {
    fn name(&self) -> &'static str {
        "no progress"
    }

    fn lookup(&self) -> &dyn crate::perf::ClassLookup {
        self.0.lookup()
    }

    fn rates(&self, _set: &crate::perf::CoRun<'_>, out: &mut [f64]) {
        out.fill(0.0);
    }
}

/// A rate of 0 for a job a source gave (a streamed trace keeps its jobs' names) is refused
/// naming the job as the source named it, or by its index (`j0`) when the source gave none.
#[test]
fn issue_37_a_bad_rate_names_a_sourced_job_as_its_source_named_it() {
    let refused = |name: &str| {
        let mut cfg = config(
            vec![group("h200", 1, ShareMode::Exclusive, None)],
            Vec::new(),
            PlacementRule::BestFit,
        );
        let kind = crate::workload::stream::SourceKind {
            model: ModelKey::new("small", 1, 1),
            gpus: 1,
            min_speed: None,
            first: 0,
            first_name: name.into(),
        };
        cfg.source = Some(Arc::new(Sourced {
            kinds: vec![kind],
            jobs: vec![job(name, "small", 0.0, 100.0, 1)],
        }));
        cfg.perf = Arc::new(NoProgress(Parametric::new(profiles())));
        Simulation::run(&cfg, None).unwrap_err().to_string()
    };
    let err = refused("alpha");
    assert!(
        err.contains("`alpha`") && err.contains("no progress"),
        "{err}"
    );
    let err = refused("");
    assert!(err.contains("`j0`"), "{err}");
}

/// With `timeline_every_s` 5, a timeline row is kept at an instant at least 5 s after the last
/// kept one: jobs start at 0, 3, 6 and 12 s on four GPUs and end 1,000 s later, so rows are
/// kept at 0, 6, 12, 1,000, 1,006 and 1,012 s (3 and 1,003 are too close to the row before).
#[test]
fn issue_37_the_timeline_keeps_a_row_every_timeline_every_s_at_most() {
    let jobs = [0.0, 3.0, 6.0, 12.0]
        .iter()
        .enumerate()
        .map(|(i, &t)| job(&format!("j{i}"), "small", t, 100_000.0, 1))
        .collect();
    let mut cfg = config(
        vec![group("h200", 4, ShareMode::Exclusive, None)],
        jobs,
        PlacementRule::BestFit,
    );
    cfg.timeline_every_s = 5.0;
    let run = Simulation::run(&cfg, None).unwrap();
    let times: Vec<f64> = run.timeline.iter().map(|r| r.time_s).collect();
    assert_eq!(times, [0.0, 6.0, 12.0, 1000.0, 1006.0, 1012.0]);
}
