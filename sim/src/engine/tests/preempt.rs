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
