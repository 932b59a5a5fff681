//! Property tests: the engine agrees with `NaiveEngine`, every job finishes exactly once, no
//! partition holds more memory or jobs than it may, time only moves forward, and the same
//! configuration gives the same outcome.
use proptest::prelude::*;

use super::naive;
use super::*;
use crate::engine::DynamicMig;
use crate::metrics::jobs_csv;
use crate::policy::QueueOrder;

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

fn any_config() -> impl Strategy<Value = SimConfig> {
    (
        prop::collection::vec(any_group(), 1..3),
        prop::collection::vec(any_job(), 1..20),
        (
            any::<bool>(),
            any::<bool>(),
            1usize..4,
            0usize..5,
            1u32..4,
            any::<bool>(),
        ),
    )
        .prop_map(
            |(groups, jobs, (sjf, backfill, depth, placement, max_jobs, equal_share))| {
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
                    order: if sjf {
                        QueueOrder::ShortestFirst
                    } else {
                        QueueOrder::Fifo
                    },
                    backfill,
                    backfill_depth: depth,
                    placement,
                    max_jobs_per_gpu: max_jobs,
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
            } else {
                prop_assert!(o.start_s.is_nan(), "a skipped job never starts");
            }
        }
        let finished = run.outcomes.iter().filter(|o| o.completed).count();
        let skipped = run.outcomes.len() - finished;
        prop_assert_eq!(finished + skipped, cfg.jobs.len());
    }

    #[test]
    fn no_partition_over_memory_or_job_limit(cfg in any_config()) {
        let run = Simulation::run(&cfg, None).unwrap();
        check_partitions(&cfg, &run)?;
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

/// At every job start, the jobs present on each partition fit its memory and job limit.
fn check_partitions(cfg: &SimConfig, run: &crate::metrics::RunRecord) -> Result<(), TestCaseError> {
    let mut gpu_groups = Vec::new();
    for (g, group) in cfg.cluster.groups.iter().enumerate() {
        gpu_groups.extend(std::iter::repeat_n(g, group.count as usize));
    }
    for (i, o) in run.outcomes.iter().enumerate().filter(|(_, o)| o.completed) {
        for &gpu in &o.gpus {
            let group = &cfg.cluster.groups[gpu_groups[gpu as usize]];
            let present: Vec<usize> = run
                .outcomes
                .iter()
                .enumerate()
                .filter(|(_, p)| p.completed && p.gpus.contains(&gpu) && p.slice == o.slice)
                .filter(|(_, p)| p.start_s <= o.start_s && o.start_s < p.end_s)
                .map(|(k, _)| k)
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
