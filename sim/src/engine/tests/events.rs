//! Event counts and timeline rows pinned on hand-worked runs (issue 37): a completion computed
//! before its GPU's set changed is stale and must be skipped, not handled, counted or written
//! as a timeline row.
use std::sync::Arc;

use super::{config, group, job};
use crate::engine::{ShareMode, Simulation};
use crate::perf::EqualShare;
use crate::policy::PlacementRule;

/// (time, queued, running, busy GPUs) of each timeline row.
fn rows(run: &crate::metrics::RunRecord) -> Vec<(f64, u32, u32, u32)> {
    run.timeline
        .iter()
        .map(|r| (r.time_s, r.queued, r.running, r.busy_gpus))
        .collect()
}

#[test]
fn issue_37_a_stale_completion_is_neither_handled_nor_counted() {
    // Equal share, `small` at 100 samples/s alone, 1000 samples each; b arrives at 5 s.
    // a alone would end at 10 s: that completion goes stale when b arrives. Live events:
    // a's arrival (0 s), b's arrival (5 s), a's completion (15 s: 500 left at 50/s), b's
    // completion (20 s: 500 done by 15 s, then 100/s alone). Four events, four rows; the
    // stale 10 s must add neither.
    let jobs = vec![
        job("a", "small", 0.0, 1000.0, 1),
        job("b", "small", 5.0, 1000.0, 1),
    ];
    let mut cfg = config(
        vec![group("h200", 1, ShareMode::Mps, None)],
        jobs,
        PlacementRule::BestFit,
    );
    cfg.perf = Arc::new(EqualShare::new(super::profiles()));
    let run = Simulation::run(&cfg, None).unwrap();
    assert_eq!(run.events, 4);
    assert_eq!(
        rows(&run),
        vec![
            (0.0, 0, 1, 1),
            (5.0, 0, 2, 1),
            (15.0, 0, 1, 1),
            (20.0, 0, 0, 0)
        ]
    );
    // Memory: `small` holds 2 GiB plus an MPS client's context of 0.25 GiB.
    let memory: Vec<f64> = run.timeline.iter().map(|r| r.memory_used_gib).collect();
    assert_eq!(memory, vec![2.25, 4.5, 2.25, 0.0]);
}

#[test]
fn issue_37_staggered_arrivals_on_one_gpu_count_one_event_each_and_stale_ones_none() {
    // Four jobs (the most one GPU takes by default) on one MPS GPU under equal share,
    // arriving 1 s apart, 1000 samples at 100/s alone: every arrival re-rates the GPU and
    // makes the pending completion stale (j0 alone would end at 10 s, long after j1
    // arrives). Processor sharing: by 3 s j0 has done 100 + 50 + 33.3 = 183.3 samples, then
    // all four run at 25/s, so j0 ends at 3 + 816.7 / 25 = 35.7 s and the others after it one
    // by one (equal work, later arrivals): 4 arrivals and 4 completions at distinct times,
    // 8 events, one row each.
    let jobs = (0..4)
        .map(|i| job(&format!("j{i}"), "small", f64::from(i), 1000.0, 1))
        .collect();
    let mut cfg = config(
        vec![group("h200", 1, ShareMode::Mps, None)],
        jobs,
        PlacementRule::BestFit,
    );
    cfg.perf = Arc::new(EqualShare::new(super::profiles()));
    let run = Simulation::run(&cfg, None).unwrap();
    assert_eq!(run.events, 8);
    let running: Vec<u32> = run.timeline.iter().map(|r| r.running).collect();
    assert_eq!(running, vec![1, 2, 3, 4, 3, 2, 1, 0]);
    // The GPU is never idle and serves 100 samples/s in all: 4000 samples end at 40 s.
    let last = run.outcomes.iter().map(|o| o.end_s).fold(0.0, f64::max);
    assert!((last - 40.0).abs() < 1e-9, "{last}");
}

#[test]
fn issue_37_events_and_rows_of_a_queue_on_exclusive_gpus() {
    // Two exclusive GPUs, three jobs of 10 s each (1000 samples at 100/s) arriving at 0, 1
    // and 2 s: c waits for a (ends 10 s) and ends at 20 s; b ends at 11 s. Events: 3
    // arrivals and 3 completions. Rows: 0 (a runs), 1 (b runs), 2 (c queued), 10 (c starts),
    // 11, 20.
    let jobs = vec![
        job("a", "small", 0.0, 1000.0, 1),
        job("b", "small", 1.0, 1000.0, 1),
        job("c", "small", 2.0, 1000.0, 1),
    ];
    let cfg = config(
        vec![group("h200", 2, ShareMode::Exclusive, None)],
        jobs,
        PlacementRule::BestFit,
    );
    let run = Simulation::run(&cfg, None).unwrap();
    assert_eq!(run.events, 6);
    assert_eq!(
        rows(&run),
        vec![
            (0.0, 0, 1, 1),
            (1.0, 0, 2, 2),
            (2.0, 1, 2, 2),
            (10.0, 0, 2, 2),
            (11.0, 0, 1, 1),
            (20.0, 0, 0, 0)
        ]
    );
    let ends: Vec<f64> = run.outcomes.iter().map(|o| o.end_s).collect();
    assert_eq!(ends, vec![10.0, 11.0, 20.0]);
}
