//! Unit tests of the packing search: job parsing, agreement with `predict_set`, the ordering
//! guarantees `colo pack` promises, infeasible requests, and the beam search.
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::configs::{Ctx, best_per_family, evaluate, for_each_assignment, set_partitions};
use super::*;
use crate::hardware;
use crate::perf::query::{SetQuery, predict_set};
use crate::perf::{Parametric, Profile, ProfileSet};

const PROFILE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../calibrate/profiles/h200-provisional.ron"
);

fn profile() -> Profile {
    Profile::load(Path::new(PROFILE)).unwrap()
}

fn model_of(profile: Profile) -> Parametric {
    let mut set = ProfileSet::default();
    set.insert(profile, PathBuf::from(PROFILE));
    Parametric::new(Arc::new(set))
}

fn model() -> Parametric {
    model_of(profile())
}

fn request(jobs: &[&str], gpus: Option<u32>) -> PackRequest {
    PackRequest {
        gpu: hardware::gpu("h200").unwrap(),
        jobs: jobs.iter().map(|j| j.parse().unwrap()).collect(),
        gpus,
        max_jobs_per_gpu: 4,
        top: 5,
    }
}

const MIX: [&str; 4] = [
    "resnet50:64:224@0.5",
    "vit_b_16:32:224@0.4",
    "resnet18:128:32@0.8",
    "mobilenet_v3_large:128:224@0.4",
];

fn ctx<'a>(model: &'a Parametric, req: &PackRequest) -> Ctx<'a> {
    let classes = req
        .jobs
        .iter()
        .map(|j| model.class(req.gpu, &j.key).unwrap())
        .collect();
    let mins = req.jobs.iter().map(|j| j.min_fraction).collect();
    Ctx::new(model, req.gpu, classes, mins)
}

#[test]
fn jobs_parse_with_and_without_a_minimum() {
    let job: PackJob = "resnet50:64:224@0.5".parse().unwrap();
    assert_eq!(job.key, ModelKey::new("resnet50", 64, 224));
    assert_eq!(job.min_fraction, 0.5);
    let job: PackJob = "resnet50:64:224".parse().unwrap();
    assert_eq!(job.min_fraction, 0.0);
    for bad in [
        "resnet50:64:224@1.5",
        "resnet50:64:224@x",
        "resnet50:64@0.5",
    ] {
        let err = bad.parse::<PackJob>().unwrap_err();
        assert!(err.to_string().contains("MODEL:BATCH:IMAGE"), "{err}");
    }
}

#[test]
fn gpu_evaluation_agrees_with_predict_set() {
    let model = model();
    let req = request(&["resnet50:64:224", "vit_b_16:32:224"], None);
    let ctx = ctx(&model, &req);
    let gpu = req.gpu;
    let layout = gpu.parse_mig_layout("3g.71gb,4g.71gb").unwrap();
    let cases = [
        (GpuConfig::Timeslice, ShareMode::Timeslice, vec![], None),
        (GpuConfig::Mps, ShareMode::Mps, vec![], None),
        (
            GpuConfig::MpsBudgets(vec![0.45, 0.55]),
            ShareMode::Mps,
            vec![0.45, 0.55],
            None,
        ),
        (
            GpuConfig::Mig {
                layout: layout.clone(),
                slice_of: vec![0, 1],
            },
            ShareMode::Mig,
            vec![],
            Some(layout),
        ),
    ];
    for (config, mode, sm_budgets, layout) in cases {
        let plan = evaluate(&ctx, &[0, 1], &config).unwrap();
        let query = SetQuery {
            gpu,
            mode,
            jobs: req.jobs.iter().map(|j| j.key.clone()).collect(),
            sm_budgets,
            layout,
        };
        let expected = predict_set(&model, &query).unwrap();
        assert_eq!(plan.total_fraction, expected.total_fraction, "{config}");
        for (got, want) in plan.jobs.iter().zip(&expected.jobs) {
            assert_eq!(got.samples_per_s, want.samples_per_s, "{config}");
            assert_eq!(got.memory_gib, want.memory_gib, "{config}");
        }
    }
}

#[test]
fn set_partitions_and_slice_assignments_are_counted_once() {
    let mut partitions = 0;
    set_partitions(&mut [0; 4], 0, 0, &mut |_, _| partitions += 1);
    assert_eq!(partitions, 15, "Bell(4)");
    let gpu = hardware::gpu("h200").unwrap();
    let layout = gpu.parse_mig_layout("1g.18gb,1g.18gb,2g.35gb").unwrap();
    let mut assignments = std::collections::BTreeSet::new();
    let mut count = 0;
    for_each_assignment(&layout, 3, &mut |slice_of_group| {
        count += 1;
        let profiles: Vec<&str> = slice_of_group
            .iter()
            .map(|&s| layout.slices[s].profile.name)
            .collect();
        assignments.insert(profiles);
    });
    assert_eq!(
        count, 3,
        "3! / 2! arrangements of three groups on 1g, 1g, 2g"
    );
    assert_eq!(assignments.len(), count, "no arrangement twice");
}

#[test]
fn best_packing_beats_every_single_mode_packing_and_exclusive_on_the_same_gpus() {
    let model = model();
    for gpus in [None, Some(1), Some(2), Some(4)] {
        let req = request(&MIX, gpus);
        let Ok(report) = pack(&model, &req) else {
            assert_eq!(gpus, Some(1), "only one GPU is too few for these minimums");
            continue;
        };
        let best = &report.best[0];
        for pair in report.best.windows(2) {
            assert!(pair[0].total_fraction >= pair[1].total_fraction);
        }
        for (name, packing) in &report.single_mode {
            if let Some(p) = packing {
                assert!(best.total_fraction >= p.total_fraction, "{name} {gpus:?}");
                assert!(p.gpus.len() <= report.gpus as usize);
            }
        }
        if gpus == Some(4) {
            assert!(best.total_fraction >= report.exclusive.total_fraction - 1e-12);
        }
        for packing in report.best.iter() {
            let mut placed: Vec<usize> = packing
                .gpus
                .iter()
                .flat_map(|g| g.jobs.iter().map(|j| j.job))
                .collect();
            placed.sort_unstable();
            assert_eq!(placed, vec![0, 1, 2, 3], "every job placed once");
            for job in packing.gpus.iter().flat_map(|g| &g.jobs) {
                assert!(job.fraction + 1e-12 >= req.jobs[job.job].min_fraction);
            }
        }
    }
}

#[test]
fn one_gpu_best_is_the_best_configuration_of_the_whole_set() {
    let model = model();
    let jobs = ["resnet18:128:32", "resnet18:128:32", "resnet26:128:32"];
    let req = request(&jobs, Some(1));
    let report = pack(&model, &req).unwrap();
    let ctx = ctx(&model, &req);
    let all = best_per_family(&ctx, &[0, 1, 2]);
    let expected = all.best_in(&Family::ALL).unwrap().total;
    assert_eq!(report.best[0].total_fraction, expected);
    assert_eq!(report.gpus, 1);
}

#[test]
fn fewest_gpus_is_reported_when_not_fixed() {
    let model = model();
    let report = pack(&model, &request(&["resnet18:128:32"; 4], None)).unwrap();
    assert!(report.gpus_are_fewest);
    assert_eq!(report.gpus, 1, "four launch-bound jobs share one GPU");
    let report = pack(&model, &request(&["resnet50:64:224@0.99"; 3], None)).unwrap();
    assert_eq!(
        report.gpus, 3,
        "jobs that must run at full speed need a GPU each"
    );
}

#[test]
fn infeasible_requests_say_which_jobs_are_in_the_way() {
    let model = model();
    let jobs = [
        "resnet50:64:224@0.99",
        "vit_b_16:32:224@0.99",
        "resnet18:128:32",
    ];
    let err = pack(&model, &request(&jobs, Some(1))).unwrap_err();
    let text = err.to_string();
    let named = "#1 resnet50:64:224@0.99, #2 vit_b_16:32:224@0.99 cannot";
    assert!(text.contains(named), "{text}");
    assert!(
        !text.contains("#3"),
        "a job without a minimum is not in the way: {text}"
    );
    assert!(
        text.contains("the fewest GPUs that meet every minimum is 3"),
        "{text}"
    );
}

#[test]
fn a_job_too_big_for_the_gpu_is_named() {
    let mut big = profile();
    big.models[0].memory_gib = 500.0;
    let key = big.models[0].model.clone();
    let job = format!("{key}:{}:{}", big.models[0].batch, big.models[0].image);
    let err = pack(&model_of(big), &request(&[&job], None)).unwrap_err();
    assert!(matches!(err, PackError::DoesNotFit { .. }), "{err}");
    assert!(err.to_string().contains("lower its batch size"), "{err}");
}

#[test]
fn unknown_models_are_reported_with_the_job() {
    let err = pack(&model(), &request(&["resnet50:8:224"], None)).unwrap_err();
    assert!(err.to_string().contains("job resnet50:8:224"), "{err}");
}

#[test]
fn many_jobs_use_the_beam_search_and_place_each_job_once() {
    let model = model();
    let jobs: Vec<&str> = MIX.iter().cycle().take(12).copied().collect();
    let report = pack(&model, &request(&jobs, None)).unwrap();
    assert_eq!(
        report.method,
        SearchMethod::Beam {
            width: BEAM_WIDTH,
            reason: BeamReason::ManyJobs
        }
    );
    let best = &report.best[0];
    let mut placed: Vec<usize> = best
        .gpus
        .iter()
        .flat_map(|g| g.jobs.iter().map(|j| j.job))
        .collect();
    placed.sort_unstable();
    assert_eq!(placed, (0..12).collect::<Vec<_>>());
    assert!(best.gpus.len() <= report.gpus as usize);
    assert!(best.gpus.iter().all(|g| g.jobs.len() <= 4));
    for (name, packing) in &report.single_mode {
        if let Some(p) = packing {
            assert!(best.total_fraction >= p.total_fraction, "{name}");
        }
    }
}

#[test]
fn results_are_the_same_at_any_thread_count() {
    let model = model();
    let jobs: Vec<&str> = MIX.iter().cycle().take(7).copied().collect();
    let req = request(&jobs, None);
    let totals_with = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let report = pool.install(|| pack(&model, &req).unwrap());
        report
            .best
            .iter()
            .map(|p| format!("{p:?}"))
            .collect::<Vec<_>>()
    };
    assert_eq!(totals_with(1), totals_with(4));
}

#[test]
fn beam_search_comes_close_to_the_exhaustive_optimum() {
    let model = model();
    let mixes: [&[&str]; 3] = [
        &MIX,
        &[
            "resnet50:64:224",
            "vit_b_16:32:224",
            "resnet18:128:32",
            "mobilenet_v3_large:128:224",
            "resnet26:128:32",
            "gpt_small:16:512",
            "efficientnet_b0:64:224",
        ],
        &[
            "resnet18:128:32@0.9",
            "resnet18:128:32@0.9",
            "resnet26:128:32@0.8",
            "resnet50:64:224@0.6",
            "vit_b_16:32:224@0.5",
            "resnet152:32:224",
        ],
    ];
    for jobs in mixes {
        for gpus in [Some(2), Some(3)] {
            let req = request(jobs, gpus);
            let ctx = super::search::context(&model, &req).unwrap();
            let exact = super::search::exhaustive(&ctx, &req, &|_| {}).unwrap().2[0].total_fraction;
            let beam = super::search::beam_search(&ctx, &req, BeamReason::ManyJobs, &|_| {})
                .unwrap()
                .2[0]
                .total_fraction;
            assert!(
                beam <= exact + 1e-9,
                "{jobs:?}: beam {beam} above optimum {exact}"
            );
            assert!(
                beam >= 0.99 * exact,
                "{jobs:?} {gpus:?}: beam {beam}, optimum {exact}"
            );
        }
    }
}

#[test]
fn configurations_are_counted_up_front_as_the_search_scores_them() {
    let model = model();
    let jobs: Vec<&str> = MIX.iter().cycle().take(6).copied().collect();
    for (n, max_per_gpu) in [(1, 4), (4, 4), (5, 5), (6, 6), (6, 2)] {
        let mut req = request(&jobs[..n], None);
        req.max_jobs_per_gpu = max_per_gpu;
        let ctx = ctx(&model, &req);
        for m in 1..=n.min(max_per_gpu) {
            let members: Vec<usize> = (0..m).collect();
            assert_eq!(
                super::configs::configs_per_set(&ctx, m),
                best_per_family(&ctx, &members).evaluated,
                "{m} jobs"
            );
        }
        let report = pack(&model, &req).unwrap();
        assert_eq!(
            report.configs_evaluated,
            super::search::exhaustive_configs(&ctx, n, max_per_gpu),
            "{n} jobs, at most {max_per_gpu} per GPU"
        );
    }
    assert_eq!(super::configs::stirling2(10, 4), 34105);
    assert_eq!(super::configs::stirling2(0, 0), 1);
    assert_eq!(super::configs::stirling2(64, 7), u64::MAX, "saturates");
}

#[test]
fn ten_jobs_of_up_to_ten_per_gpu_get_the_bounded_beam_search() {
    let model = model();
    let jobs: Vec<&str> = MIX.iter().cycle().take(10).copied().collect();
    let mut req = request(&jobs, None);
    req.max_jobs_per_gpu = 10;
    let ctx = ctx(&model, &req);
    let configs = super::search::exhaustive_configs(&ctx, 10, 10);
    assert!(configs > EXHAUSTIVE_MAX_CONFIGS, "{configs}");
    let calls = std::sync::atomic::AtomicU64::new(0);
    let started = std::time::Instant::now();
    let report = pack_with_progress(&model, &req, &|p| {
        assert_eq!(
            p.configs_total, None,
            "the beam's total is not known up front"
        );
        calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    })
    .unwrap();
    let seconds = started.elapsed().as_secs_f64();
    assert_eq!(
        report.method,
        SearchMethod::Beam {
            width: BEAM_WIDTH,
            reason: BeamReason::ManyConfigs(configs)
        }
    );
    assert!(report.method.to_string().contains("beam search"));
    assert!(calls.into_inner() > 0, "progress was reported");
    assert!(seconds < 60.0, "took {seconds:.1} s");
    assert!(
        report.configs_evaluated < configs / 10,
        "{} scored",
        report.configs_evaluated
    );
    let mut placed: Vec<usize> = report.best[0]
        .gpus
        .iter()
        .flat_map(|g| g.jobs.iter().map(|j| j.job))
        .collect();
    placed.sort_unstable();
    assert_eq!(placed, (0..10).collect::<Vec<_>>());
    // The default of 4 per GPU stays exhaustive for ten jobs.
    req.max_jobs_per_gpu = 4;
    let small = super::search::exhaustive_configs(&ctx, 10, 4);
    assert!(small <= EXHAUSTIVE_MAX_CONFIGS, "{small}");
}

#[test]
fn large_sets_in_the_beam_try_one_mig_grouping_per_slice_count() {
    let model = model();
    let jobs: Vec<&str> = MIX.iter().cycle().take(8).copied().collect();
    let req = request(&jobs, None);
    let ctx = ctx(&model, &req);
    let members: Vec<usize> = (0..8).collect();
    let full = super::configs::configs_per_set(&ctx, 8);
    assert!(full > BEAM_SET_MAX_CONFIGS);
    let bounded =
        super::configs::best_per_family_within(&ctx, &members, BEAM_SET_MAX_CONFIGS).evaluated;
    assert!(bounded <= BEAM_SET_MAX_CONFIGS, "{bounded} of {full}");
    let groups = super::configs::round_robin_groups(&ctx, &members, 3);
    for g in 0..3 {
        let size = groups.iter().filter(|&&x| x == g).count();
        assert!((2..=3).contains(&size), "{groups:?}");
    }
    let small: Vec<usize> = (0..5).collect();
    assert_eq!(
        super::configs::best_per_family_within(&ctx, &small, BEAM_SET_MAX_CONFIGS).evaluated,
        super::configs::configs_per_set(&ctx, 5),
        "sets within the bound are scored in full"
    );
}

#[test]
fn too_few_gpus_for_the_jobs_per_gpu_names_max_per_gpu() {
    let model = model();
    let jobs = ["resnet18:128:32"; 6];
    let mut req = request(&jobs, Some(1));
    req.max_jobs_per_gpu = 4;
    let text = pack(&model, &req).unwrap_err().to_string();
    assert!(text.contains("--max-per-gpu 4"), "{text}");
    assert!(text.contains("or raise --max-per-gpu"), "{text}");
    assert!(
        !text.contains("lower the minimums"),
        "no job has a minimum: {text}"
    );
    // Seven jobs of over 20 GiB (the test profile's memory_gib 20.0, plus each process's
    // context) need over 140 GiB on one GPU of 140.4: more jobs per GPU cannot help.
    let heavy = ["gpt_small:32:1024"; 7];
    let mut req = request(&heavy, Some(1));
    req.max_jobs_per_gpu = 4;
    let text = pack(&model, &req).unwrap_err().to_string();
    assert!(
        text.contains("use --gpus 2 (raising --max-per-gpu would not help"),
        "{text}"
    );
}

#[test]
fn the_table_and_json_say_what_the_search_found() {
    let req = request(&["resnet50:64:224@0.5", "vit_b_16:32:224"], None);
    let report = pack(&model(), &req).unwrap();
    let table = output::table(&req, &report, "profile p.ron", 0.5);
    let first = table.lines().next().unwrap();
    assert_eq!(
        first,
        format!(
            "2 job(s) on h200, perf model parametric, profile p.ron ({0}); every rate is predicted from {0} numbers",
            report.origin
        )
    );
    assert!(
        table.contains("scored in 0.50 s (wall time, measured)"),
        "{table}"
    );
    assert!(table.contains("\n 1. total "), "{table}");
    assert!(
        table.contains("exclusive placement (one job per GPU): total 2.000"),
        "{table}"
    );
    let json = output::to_json(&req, &report, "p.ron", 0.5);
    assert_eq!(json["profile"], "p.ron");
    assert_eq!(json["gpus"], report.gpus);
    assert_eq!(json["best"].as_array().unwrap().len(), report.best.len());
    assert_eq!(json["exclusive"]["gpus_used"], 2);
    let single = json["single_mode"].as_object().unwrap();
    assert_eq!(single.len(), SINGLE_MODES.len());
}

#[test]
fn progress_reads_as_the_search_it_is() {
    let exhaustive = PackProgress {
        configs_scored: 10,
        configs_total: Some(88),
    };
    assert_eq!(
        exhaustive.to_string(),
        "pack (exhaustive): 10 of 88 GPU configurations scored"
    );
    let beam = PackProgress {
        configs_scored: 10,
        configs_total: None,
    };
    assert_eq!(
        beam.to_string(),
        "pack (beam search): 10 GPU configurations scored"
    );
}
