//! Property tests: the engine agrees with `NaiveEngine`, every job finishes exactly once, no
//! partition holds more memory or jobs than it may, time only moves forward, the same
//! configuration gives the same outcome, and preemption loses no work. Every order is drawn,
//! the preemptive ones (`Las`, `Srtf`) with random thresholds and preemption costs.
use proptest::prelude::*;

use super::naive;
use super::*;
use crate::engine::DynamicMig;
use crate::metrics::jobs_csv;
use crate::policy::{Preemption, QueueOrder};

fn any_group() -> impl Strategy<Value = GpuGroup> {
    (
        0usize..4,
        1u32..4,
        0usize..4,
        any::<prop::sample::Index>(),
        1u32..3,
        (any::<bool>(), any::<prop::sample::Index>(), 0u32..60),
    )
        .prop_map(
            |(
                gpu_idx,
                count,
                mode_idx,
                layout_pick,
                jobs_per_slice,
                (dynamic, other_pick, delay),
            )| {
                let spec = &hardware::catalog()[gpu_idx];
                let mode = ShareMode::ALL[mode_idx];
                let mig_layout = (mode == ShareMode::Mig).then(|| {
                    let layouts = spec.enumerate_mig_layouts();
                    layouts[layout_pick.index(layouts.len())].clone()
                });
                // Dynamic MIG (half the MIG groups): the start layout and one other, re-cut in 0-59 s.
                let dynamic_mig = mig_layout.as_ref().filter(|_| dynamic).map(|start| {
                    let layouts = spec.enumerate_mig_layouts();
                    let other = layouts[other_pick.index(layouts.len())].clone();
                    DynamicMig {
                        layouts: vec![start.clone(), other],
                        reconfigure_s: f64::from(delay),
                    }
                });
                GpuGroup {
                    gpu: spec,
                    count,
                    mode,
                    mig_layout,
                    sm_budget: None,
                    jobs_per_slice,
                    dynamic_mig,
                }
            },
        )
}

fn any_job() -> impl Strategy<Value = (usize, u32, u32, u32, Option<f64>)> {
    // (model, arrival in whole seconds so ties happen, samples, gpus, minimum speed)
    (
        0usize..4,
        0u32..60,
        5u32..400,
        prop::sample::select(vec![1u32, 1, 1, 1, 2, 3]),
        prop::sample::select(vec![None, None, Some(0.3), Some(0.6), Some(0.9), Some(1.0)]),
    )
}

/// Fifo, ShortestFirst, Las (thresholds of a few GPU-seconds, as long as the jobs) or Srtf.
fn any_order() -> impl Strategy<Value = QueueOrder> {
    prop_oneof![
        Just(QueueOrder::Fifo),
        Just(QueueOrder::ShortestFirst),
        prop::sample::select(vec![vec![2.0], vec![1.0, 5.0, 20.0], vec![3.5, 10.0]])
            .prop_map(|thresholds_gpu_s| QueueOrder::Las { thresholds_gpu_s }),
        Just(QueueOrder::Srtf),
    ]
}

fn any_preemption() -> impl Strategy<Value = Preemption> {
    (
        prop::sample::select(vec![0.0, 1.0, 2.5]),
        prop::sample::select(vec![0.0, 0.5, 3.0]),
        prop::sample::select(vec![0.0, 2.0, 7.0]),
    )
        .prop_map(|(checkpoint_s, restore_s, min_run_s)| Preemption {
            checkpoint_s,
            restore_s,
            min_run_s,
        })
}

fn any_config() -> impl Strategy<Value = SimConfig> {
    (
        prop::collection::vec(any_group(), 1..3),
        prop::collection::vec(any_job(), 1..20),
        (
            any_order(),
            any::<bool>(),
            // Unbounded depth too: those passes go through the backfill index.
            prop_oneof![3 => 1usize..4, 1 => Just(1_000_000_000usize)],
            0usize..5,
            1u32..4,
            any::<bool>(),
        ),
        any_preemption(),
    )
        .prop_map(
            |(
                groups,
                jobs,
                (order, backfill, depth, placement, max_jobs, equal_share),
                preemption,
            )| {
                let models = ["small", "mid", "big", "huge"];
                let placement = [
                    PlacementRule::Exclusive,
                    PlacementRule::FirstFit,
                    PlacementRule::BestFit,
                    PlacementRule::Spread,
                    PlacementRule::LeastSlowdown,
                ][placement];
                // Minimum speeds under least-slowdown, where no group is dynamic MIG (the engine
                // refuses the two together).
                let min_speeds = placement == PlacementRule::LeastSlowdown
                    && groups.iter().all(|g| g.dynamic_mig.is_none());
                let jobs = jobs
                    .into_iter()
                    .enumerate()
                    .map(|(i, (m, arrival, samples, gpus, min_speed))| Job {
                        min_speed: min_speed
                            .filter(|_| min_speeds)
                            .and_then(crate::workload::MinSpeed::new),
                        ..job(
                            &format!("j{i}"),
                            models[m],
                            f64::from(arrival),
                            f64::from(samples),
                            gpus,
                        )
                    })
                    .collect();
                let mut cfg = config(groups, jobs, placement);
                cfg.policy = Policy {
                    order,
                    backfill,
                    backfill_depth: depth,
                    placement,
                    max_jobs_per_gpu: max_jobs,
                    preemption,
                };
                cfg.on_unplaceable = Unplaceable::Skip;
                if equal_share {
                    cfg.perf = Arc::new(EqualShare::new(profiles()));
                }
                cfg
            },
        )
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

    #[test]
    fn engine_agrees_with_naive_engine(cfg in any_config()) {
        // The naive engine knows no dynamic MIG; the other properties cover it.
        prop_assume!(cfg.cluster.groups.iter().all(|g| g.dynamic_mig.is_none()));
        let fast = Simulation::run(&cfg, None).unwrap();
        let slow = naive::run(&cfg);
        for (i, (f, s)) in fast.outcomes.iter().zip(&slow).enumerate() {
            prop_assert_eq!(f.completed, s.completed, "job {}", i);
            if !f.completed {
                continue;
            }
            prop_assert!(close(f.start_s, s.start_s), "job {} start {} vs naive {}", i, f.start_s, s.start_s);
            prop_assert!(close(f.end_s, s.end_s), "job {} end {} vs naive {}", i, f.end_s, s.end_s);
            prop_assert_eq!(&f.gpus, &s.gpus, "job {}", i);
            prop_assert_eq!(f.slice, s.slice, "job {}", i);
            prop_assert_eq!(f.preempted.len(), s.preempted.len(), "job {} preemptions", i);
            for (k, (fr, (start, end, gpus, slice))) in f.preempted.iter().zip(&s.preempted).enumerate() {
                prop_assert!(close(fr.start_s, *start) && close(fr.end_s, *end),
                    "job {} run {}: {}..{} vs naive {}..{}", i, k, fr.start_s, fr.end_s, start, end);
                prop_assert_eq!(&fr.gpus, gpus, "job {} run {}", i, k);
                prop_assert_eq!(fr.slice, *slice, "job {} run {}", i, k);
            }
        }
    }

    #[test]
    fn every_job_finishes_exactly_once_after_it_arrives(cfg in any_config()) {
        let run = Simulation::run(&cfg, None).unwrap();
        prop_assert_eq!(run.outcomes.len(), cfg.jobs.len());
        for (job, o) in cfg.jobs.iter().zip(&run.outcomes) {
            if o.completed {
                prop_assert!(o.start_s >= job.arrival_s && o.end_s > o.start_s && o.end_s.is_finite());
                prop_assert_eq!(o.gpus.len(), job.gpus as usize);
                // Its runs follow one another from its start to its end, each on its GPUs.
                let mut at = o.start_s;
                for r in o.runs() {
                    prop_assert!(r.start_s >= at && r.end_s >= r.start_s, "{:?}", o);
                    prop_assert_eq!(r.gpus.len(), job.gpus as usize);
                    at = r.end_s;
                }
                prop_assert_eq!(at, o.end_s);
                if !cfg.policy.order.preempts() {
                    prop_assert!(o.preempted.is_empty());
                }
            } else {
                prop_assert!(o.start_s.is_nan(), "a skipped job never starts");
            }
        }
        let finished = run.outcomes.iter().filter(|o| o.completed).count();
        let skipped = run.outcomes.len() - finished;
        prop_assert_eq!(finished + skipped, cfg.jobs.len());
        // The busy seconds the engine kept are the bits the runs' intervals give.
        let busy = crate::metrics::busy_gpu_seconds(&run.outcomes);
        prop_assert_eq!(run.busy_gpu_s.to_bits(), busy.to_bits(), "{} vs {}", run.busy_gpu_s, busy);
    }

    #[test]
    fn no_partition_over_memory_or_job_limit(cfg in any_config()) {
        let run = Simulation::run(&cfg, None).unwrap();
        check_partitions(&cfg, &run)?;
    }

    #[test]
    fn preemption_loses_no_work(cfg in any_config()) {
        // Jobs run at their alone rate on whole GPUs under the Exclusive model, so the seconds a
        // job holds GPUs are its alone duration plus, per preemption, one checkpoint and one
        // restore: no progress is lost or made twice across a preemption.
        let mut cfg = cfg;
        cfg.perf = Arc::new(crate::perf::Exclusive::new(profiles()));
        for g in &mut cfg.cluster.groups {
            if g.mode == ShareMode::Mig {
                g.mode = ShareMode::Mps;
                g.mig_layout = None;
                g.dynamic_mig = None;
            }
        }
        let costs = cfg.policy.preemption;
        let run = Simulation::run(&cfg, None).unwrap();
        for (i, (job, o)) in cfg.jobs.iter().zip(&run.outcomes).enumerate() {
            if !o.completed {
                continue;
            }
            let n = f64::from(o.preemptions());
            let expected = job.samples / o.exclusive_rate + n * (costs.checkpoint_s + costs.restore_s);
            prop_assert!(close(o.held_s(), expected), "job {}: held {} s, expected {} s", i, o.held_s(), expected);
        }
    }

    #[test]
    fn time_moves_forward_and_runs_repeat_bit_for_bit(cfg in any_config()) {
        let first = Simulation::run(&cfg, None).unwrap();
        prop_assert!(first.timeline.windows(2).all(|w| w[0].time_s < w[1].time_s));
        let second = Simulation::run(&cfg, None).unwrap();
        prop_assert_eq!(
            jobs_csv(&cfg.jobs, &first).unwrap(),
            jobs_csv(&cfg.jobs, &second).unwrap()
        );
        prop_assert!(first == second || first.outcomes.iter().any(|o| o.start_s.is_nan()));
    }
}

/// At every start of a job's run, the jobs present on each partition (in one of their runs,
/// checkpoints and restores included) fit its memory and job limit.
fn check_partitions(cfg: &SimConfig, run: &crate::metrics::RunRecord) -> Result<(), TestCaseError> {
    let mut gpu_groups = Vec::new();
    for (g, group) in cfg.cluster.groups.iter().enumerate() {
        gpu_groups.extend(std::iter::repeat_n(g, group.count as usize));
    }
    let runs: Vec<(usize, crate::metrics::Run<'_>)> = run
        .outcomes
        .iter()
        .enumerate()
        .flat_map(|(k, p)| p.runs().map(move |r| (k, r)))
        .collect();
    for &(i, o) in &runs {
        for &gpu in o.gpus {
            let group = &cfg.cluster.groups[gpu_groups[gpu as usize]];
            let present: Vec<usize> = runs
                .iter()
                .filter(|(_, p)| p.gpus.contains(&gpu) && p.slice == o.slice)
                .filter(|(_, p)| p.start_s <= o.start_s && o.start_s < p.end_s)
                .map(|&(k, _)| k)
                .collect();
            let memory: f64 = present
                .iter()
                .map(|&k| {
                    let class = cfg.perf.class(group.gpu, &cfg.jobs[k].model).unwrap();
                    (cfg.perf.footprint_gib(group.gpu, group.mode, &class) * 1024.0).ceil()
                })
                .sum();
            let (capacity, limit) = match o.slice {
                Some(slice) => (slice.profile.memory_gib, group.jobs_per_slice),
                None if group.mode == ShareMode::Exclusive => (group.gpu.memory_gib, 1),
                None => (group.gpu.memory_gib, cfg.policy.max_jobs_per_gpu),
            };
            prop_assert!(
                memory <= (capacity * 1024.0).floor(),
                "job {} joins {} MiB on GPU {}",
                i,
                memory,
                gpu
            );
            prop_assert!(
                present.len() as u32 <= limit,
                "{} jobs on GPU {} (limit {})",
                present.len(),
                gpu,
                limit
            );
            if o.gpus.len() > 1 {
                prop_assert_eq!(present.len(), 1, "a multi-GPU job shares GPU {}", gpu);
            }
        }
    }
    Ok(())
}

/// The drawn configurations do preempt: the properties above are not passed vacuously.
#[test]
fn drawn_configs_preempt_often_enough_to_test_it() {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let (mut preemptive, mut preempting, mut twice, mut wide, mut costly) = (0, 0, 0, 0, 0);
    for _ in 0..300 {
        let cfg = any_config().new_tree(&mut runner).unwrap().current();
        if !cfg.policy.order.preempts() {
            continue;
        }
        preemptive += 1;
        let run = Simulation::run(&cfg, None).unwrap();
        let preempted = |o: &&crate::metrics::JobOutcome| !o.preempted.is_empty();
        if run.outcomes.iter().any(|o| preempted(&o)) {
            preempting += 1;
            let costs = cfg.policy.preemption;
            costly += usize::from(costs.checkpoint_s > 0.0 && costs.restore_s > 0.0);
        }
        twice += usize::from(run.outcomes.iter().any(|o| o.preempted.len() > 1));
        wide += usize::from(
            run.outcomes
                .iter()
                .any(|o| o.preempted.iter().any(|r| r.gpus.len() > 1)),
        );
    }
    assert!(preemptive > 100, "{preemptive}");
    assert!(preempting * 5 > preemptive, "{preempting} of {preemptive}");
    assert!(
        twice > 10 && wide > 10 && costly > 10,
        "{twice} {wide} {costly}"
    );
}
