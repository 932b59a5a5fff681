//! Preemptive orders by hand, on one exclusive H200 where `small` runs 100 samples/s: Las
//! preempts a long job for a new one, Srtf runs the shortest remaining work first, `min_run_s`
//! stops a stream of ever shorter jobs from preempting each other, and the checkpoint and
//! restore costs lengthen a preempted job's JCT by exactly their sum per preemption.
use super::*;
use crate::policy::Preemption;

/// A job of `small` taking `seconds` alone.
fn small(name: &str, arrival_s: f64, seconds: f64) -> Job {
    job(name, "small", arrival_s, seconds * 100.0, 1)
}

fn one_gpu(order: QueueOrder, preemption: Preemption, jobs: Vec<Job>) -> RunRecord {
    let mut cfg = config(
        vec![group("h200", 1, ShareMode::Exclusive, None)],
        jobs,
        PlacementRule::BestFit,
    );
    cfg.policy.order = order;
    cfg.policy.preemption = preemption;
    let run = Simulation::run(&cfg, None).unwrap();
    // The reference engine agrees on every start, end and preemption.
    let slow = naive::run(&cfg);
    for (f, s) in run.outcomes.iter().zip(&slow) {
        assert!((f.start_s - s.start_s).abs() < 1e-9, "{f:?} vs {s:?}");
        assert!((f.end_s - s.end_s).abs() < 1e-9, "{f:?} vs {s:?}");
        assert_eq!(f.preempted.len(), s.preempted.len(), "{f:?} vs {s:?}");
    }
    run
}

fn las(thresholds: &[f64]) -> QueueOrder {
    QueueOrder::Las {
        thresholds_gpu_s: thresholds.to_vec(),
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn las_preempts_a_long_job_for_a_newly_arrived_one() {
    // The long job passes 100 GPU-s at 100 s (level 1); the new one arrives at 200 s in level 0.
    let jobs = vec![small("long", 0.0, 1000.0), small("new", 200.0, 10.0)];
    let run = one_gpu(las(&[100.0]), Preemption::default(), jobs.clone());
    let (long, new) = (&run.outcomes[0], &run.outcomes[1]);
    assert_eq!(new.start_s, 200.0, "the new job starts at once");
    assert!(close(new.end_s, 210.0));
    assert_eq!(long.preemptions(), 1);
    assert_eq!(
        (long.preempted[0].start_s, long.preempted[0].end_s),
        (0.0, 200.0)
    );
    assert!(
        close(long.resumed_s, 210.0),
        "resumes when the new job ends"
    );
    assert!(close(long.end_s, 1010.0), "with its progress kept");
    // Fifo makes the new job wait to the end; Las while the long job is still in level 0 with
    // it (first come, first served), until it passes 500 GPU-s.
    let fifo = one_gpu(QueueOrder::Fifo, Preemption::default(), jobs.clone());
    assert_eq!(fifo.outcomes[1].start_s, 1000.0);
    assert_eq!(fifo.outcomes[0].preemptions(), 0);
    let high = one_gpu(las(&[500.0]), Preemption::default(), jobs);
    assert_eq!(high.outcomes[1].start_s, 500.0);
    assert_eq!(high.outcomes[0].preemptions(), 1);
}

#[test]
fn srtf_runs_the_shorter_remaining_first() {
    // At 100 s the long job has 900 s left and the mid one 300 s: it preempts. At 150 s the
    // 800 s job is longer than mid's 250 s left: it waits, and at 400 s goes before the long
    // job's 900 s left.
    let jobs = vec![
        small("long", 0.0, 1000.0),
        small("mid", 100.0, 300.0),
        small("later", 150.0, 800.0),
    ];
    let run = one_gpu(QueueOrder::Srtf, Preemption::default(), jobs);
    let [long, mid, later] = &run.outcomes[..] else {
        unreachable!()
    };
    assert_eq!(mid.start_s, 100.0);
    assert!(close(mid.end_s, 400.0));
    assert!(close(later.start_s, 400.0));
    assert!(close(later.end_s, 1200.0));
    assert!(close(long.resumed_s, 1200.0));
    assert!(close(long.end_s, 2100.0));
    assert_eq!(
        (long.preemptions(), mid.preemptions(), later.preemptions()),
        (1, 0, 0)
    );
}

#[test]
fn min_run_s_prevents_thrash() {
    // Every second a job 10 s shorter arrives: without a minimum run each preempts the one
    // before it; with 10 s, the first job runs 10 s and the shortest then preempts it, once.
    let jobs: Vec<Job> = (0..6)
        .map(|i| small(&format!("j{i}"), f64::from(i), 100.0 - 10.0 * f64::from(i)))
        .collect();
    let total = |run: &RunRecord| run.outcomes.iter().map(|o| o.preemptions()).sum::<u32>();
    let thrash = one_gpu(QueueOrder::Srtf, Preemption::default(), jobs.clone());
    assert_eq!(total(&thrash), 5);
    let calm = one_gpu(
        QueueOrder::Srtf,
        Preemption {
            min_run_s: 10.0,
            ..Preemption::default()
        },
        jobs,
    );
    assert_eq!(total(&calm), 1);
    assert_eq!(calm.outcomes[0].preempted[0].end_s, 10.0);
    assert_eq!(calm.outcomes[5].start_s, 10.0, "the shortest goes at 10 s");
}

#[test]
fn checkpoint_and_restore_lengthen_the_preempted_jobs_jct_by_their_sum() {
    // Two short jobs preempt the long one (at 20 s and at 60 s).
    let jobs = vec![
        small("long", 0.0, 100.0),
        small("s1", 20.0, 10.0),
        small("s2", 60.0, 10.0),
    ];
    let free = one_gpu(QueueOrder::Srtf, Preemption::default(), jobs.clone());
    let costs = Preemption {
        checkpoint_s: 3.0,
        restore_s: 2.0,
        min_run_s: 0.0,
    };
    let paid = one_gpu(QueueOrder::Srtf, costs, jobs);
    let (long_free, long_paid) = (&free.outcomes[0], &paid.outcomes[0]);
    assert_eq!((long_free.preemptions(), long_paid.preemptions()), (2, 2));
    assert!(close(long_free.end_s, 120.0));
    assert!(
        close(long_paid.end_s - long_free.end_s, 2.0 * (3.0 + 2.0)),
        "JCT {} vs {}",
        long_paid.end_s,
        long_free.end_s
    );
    // It holds its GPU through each checkpoint; the short job starts once it is written.
    assert!(close(long_paid.preempted[0].end_s, 23.0));
    assert!(close(paid.outcomes[1].start_s, 23.0));
    assert!(close(long_paid.held_s(), 100.0 + 2.0 * 5.0));
}

#[test]
fn jobs_csv_and_the_summary_count_preemptions() {
    let jobs = vec![small("long", 0.0, 1000.0), small("new", 200.0, 10.0)];
    let run = one_gpu(las(&[100.0]), Preemption::default(), jobs.clone());
    let csv = String::from_utf8(crate::metrics::jobs_csv(&jobs, &run).unwrap()).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert!(
        lines[0].ends_with(",status,energy_j,preemptions"),
        "{}",
        lines[0]
    );
    assert!(lines[1].ends_with(",completed,,1"), "{}", lines[1]);
    assert!(lines[2].ends_with(",completed,,0"), "{}", lines[2]);
    let placements = String::from_utf8(crate::metrics::placements_csv(&run).unwrap()).unwrap();
    assert_eq!(
        placements.lines().filter(|l| l.starts_with("0,")).count(),
        2,
        "one row per run: {placements}"
    );
    let labels = crate::metrics::RunLabels::for_test("t");
    let summary = crate::metrics::summarize(&jobs, &run, labels);
    assert_eq!(summary.preemptions, 1);
    // The long job held its GPU 1000 s over two runs: slowdown 1, not (1010 s / 1000 s).
    assert!(close(
        crate::metrics::slowdown_of(&jobs[0], &run.outcomes[0]),
        1.0
    ));
}

/// Srtf with free preemption on two exclusive A100-40GBs, where `big` runs 10 samples/s a GPU:
/// the engine's outcomes and the naive engine's.
fn two_a100s_srtf(jobs: Vec<Job>) -> (RunRecord, Vec<naive::NaiveOutcome>) {
    let mut cfg = config(
        vec![group("a100-40gb", 2, ShareMode::Exclusive, None)],
        jobs,
        PlacementRule::Exclusive,
    );
    cfg.policy.order = QueueOrder::Srtf;
    (Simulation::run(&cfg, None).unwrap(), naive::run(&cfg))
}

/// Both engines start and end job `i` at `starts[i]` and `ends[i]`, preempting none.
fn assert_unpreempted(jobs: Vec<Job>, starts: &[f64], ends: &[f64]) {
    let (run, slow) = two_a100s_srtf(jobs);
    for (i, (fast, naive)) in run.outcomes.iter().zip(&slow).enumerate() {
        assert!(close(fast.start_s, starts[i]), "job {i}: {fast:?}");
        assert!(close(fast.end_s, ends[i]), "job {i}: {fast:?}");
        assert_eq!(fast.preemptions(), 0, "job {i}: {fast:?}");
        assert!(close(naive.start_s, starts[i]), "naive job {i}: {naive:?}");
        assert!(close(naive.end_s, ends[i]), "naive job {i}: {naive:?}");
        assert!(naive.preempted.is_empty(), "naive job {i}: {naive:?}");
    }
}

#[test]
fn srtf_tie_at_a_completion_preempts_nothing_naive_engine_disagreement() {
    // docs/mutation/naive-engine-disagreement.md, as proptest shrank it. j1 (209 samples) runs
    // on GPU 0 from 29 s, j2 (174) on GPU 1 from 31 s to 48.4 s. j0 (30 samples on 2 GPUs at
    // 20/s: 1.5 s) arrives at 47 s: j1 has 29 samples (2.9 s) left, j2 14 (1.4 s); only j1 is
    // a candidate, and it frees one GPU, not two: j0 waits. At 48.4 s j2 ends and j1 has
    // 209 - 10 x 19.4 = 15 samples (1.5 s) left: a tie, not strictly more, so no victim. j0
    // starts when j1 ends, at 49.9 s, and ends at 51.4 s.
    let jobs = vec![
        job("j0", "big", 47.0, 30.0, 2),
        job("j1", "big", 29.0, 209.0, 1),
        job("j2", "big", 31.0, 174.0, 1),
    ];
    assert_unpreempted(jobs.clone(), &[49.9, 29.0, 31.0], &[51.4, 49.9, 48.4]);
    // With 28 samples (1.4 s) j0 is strictly shorter than j1's 1.5 s at 48.4 s: j1 is
    // suspended, j0 runs 48.4..49.8 s, and j1 resumes with its 15 samples to 51.3 s.
    let mut shorter = jobs;
    shorter[0].samples = 28.0;
    let (run, _) = two_a100s_srtf(shorter);
    let [j0, j1, _] = &run.outcomes[..] else {
        unreachable!()
    };
    assert!(close(j0.start_s, 48.4) && close(j0.end_s, 49.8), "{j0:?}");
    assert_eq!(j1.preemptions(), 1);
    assert!(close(j1.preempted[0].end_s, 48.4), "{j1:?}");
    assert!(close(j1.resumed_s, 49.8) && close(j1.end_s, 51.3), "{j1:?}");
}

#[test]
fn srtf_tie_is_a_tie_however_the_remaining_work_rounds() {
    // As above, earlier: j1 (46 samples) from 1 s, j2 (21) from 2 s to 4.1 s, j0 (30 samples
    // on 2 GPUs, 1.5 s) arrives at 3 s. At 4.1 s j1 has 46 - 10 x 3.1 = 15 samples (1.5 s)
    // left: a tie, though in floats both engines' remaining work comes out 1.5000000000000004 s.
    // j0 waits for j1 to end at 5.6 s and ends at 7.1 s.
    let jobs = vec![
        job("j0", "big", 3.0, 30.0, 2),
        job("j1", "big", 1.0, 46.0, 1),
        job("j2", "big", 2.0, 21.0, 1),
    ];
    assert_unpreempted(jobs, &[5.6, 1.0, 2.0], &[7.1, 5.6, 4.1]);
}

#[test]
fn a_trial_that_failed_for_a_minimum_speed_does_not_stop_a_job_without_one() {
    // One H200 under MPS, two jobs at most, equal shares (`small`: 100 samples/s alone, 50 when
    // two share), least-slowdown with backfill, Las with a 5 GPU-s threshold, free preemption.
    // `long` runs alone and reaches level 1 at 5 s; `mate` joins it at 6 s. At 7 s `picky`
    // (must run alone) and `plain` arrive, both level 0: taking `long` off would leave `picky`
    // beside `mate` at half speed, so its trial fails; `plain` may share, so its trial
    // preempts `long` and it starts beside `mate` (50 samples left) at 7 s. `mate` ends at 8 s,
    // `long` resumes beside `plain` (50 left), which ends at 9 s; `picky` then preempts `long`
    // (level 1) and runs alone 9..10 s; `long`, with 1000 - 600 - 50 - 50 = 300 samples left,
    // resumes at 10 s and ends at 13 s.
    let jobs = vec![
        small("long", 0.0, 10.0),
        small("mate", 6.0, 1.0),
        Job {
            min_speed: crate::workload::MinSpeed::new(1.0),
            ..small("picky", 7.0, 1.0)
        },
        small("plain", 7.0, 1.0),
    ];
    let mut cfg = config(
        vec![group("h200", 1, ShareMode::Mps, None)],
        jobs,
        PlacementRule::LeastSlowdown,
    );
    cfg.perf = Arc::new(EqualShare::new(profiles()));
    cfg.policy.order = las(&[5.0]);
    cfg.policy.backfill = true;
    cfg.policy.backfill_depth = 2;
    cfg.policy.max_jobs_per_gpu = 2;
    let run = Simulation::run(&cfg, None).unwrap();
    let runs = |o: &crate::metrics::JobOutcome| -> Vec<(f64, f64)> {
        o.runs().map(|r| (r.start_s, r.end_s)).collect()
    };
    let expected: [&[(f64, f64)]; 4] = [
        &[(0.0, 7.0), (8.0, 9.0), (10.0, 13.0)],
        &[(6.0, 8.0)],
        &[(9.0, 10.0)],
        &[(7.0, 9.0)],
    ];
    for (o, want) in run.outcomes.iter().zip(expected) {
        let got = runs(o);
        assert_eq!(got.len(), want.len(), "{o:?}");
        for (g, w) in got.iter().zip(want) {
            assert!(close(g.0, w.0) && close(g.1, w.1), "{got:?} vs {want:?}");
        }
    }
    let slow = naive::run(&cfg);
    for (f, s) in run.outcomes.iter().zip(&slow) {
        assert!(
            close(f.start_s, s.start_s) && close(f.end_s, s.end_s),
            "{f:?} vs {s:?}"
        );
    }
}

#[test]
fn srtf_queue_tie_goes_to_the_earlier_arrival_however_the_remaining_work_rounds() {
    // `a` (460 samples, 4.6 s) runs from 1 s; `b` (1 s) arrives at 4.1 s and preempts it with
    // 460 - 100 x 3.1 = 150 samples (1.5 s) left, which floats make 1.5000000000000007 s. `c`
    // (1.5 s) arrives at 4.5 s while `b` has 0.6 s left and waits. At 5.1 s `a` and `c` tie at
    // 1.5 s: the earlier arrival, `a`, resumes and ends at 6.6 s; `c` runs 6.6..8.1 s.
    let jobs = vec![
        job("a", "small", 1.0, 460.0, 1),
        job("b", "small", 4.1, 100.0, 1),
        job("c", "small", 4.5, 150.0, 1),
    ];
    let run = one_gpu(QueueOrder::Srtf, Preemption::default(), jobs);
    let [a, b, c] = &run.outcomes[..] else {
        unreachable!()
    };
    assert_eq!(a.preemptions(), 1);
    assert!(close(a.preempted[0].end_s, 4.1), "{a:?}");
    assert!(close(a.resumed_s, 5.1) && close(a.end_s, 6.6), "{a:?}");
    assert!(close(b.start_s, 4.1) && close(b.end_s, 5.1), "{b:?}");
    assert!(close(c.start_s, 6.6) && close(c.end_s, 8.1), "{c:?}");
}
