//! The event heap's key: `(time, seq)`, compared with `f64::total_cmp`, so same-time events
//! pop first in, first out and a run is deterministic.
use std::cmp::Ordering;

/// One pending event: a GPU's next completion, a MIG re-cut, or a step of one job's
/// preemption life cycle.
#[derive(Clone, Copy, Debug)]
pub(super) struct Event {
    pub(super) time: f64,
    pub(super) seq: u64,
    pub(super) kind: EventKind,
}

/// What an event does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum EventKind {
    /// A GPU's next completion, valid while the GPU's version is unchanged.
    Completion { gpu: u32, version: u32 },
    /// A dynamic-MIG re-cut of `gpu` to this layout (index into the group's layouts), never
    /// stale.
    Recut { gpu: u32, layout: u16 },
    /// A step of a job's run (preemptive orders only), valid while the job's epoch is
    /// unchanged.
    Job {
        job: u32,
        epoch: u32,
        what: JobEvent,
    },
}

/// The steps of a job's run that preemptive orders time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum JobEvent {
    /// A preempted job's checkpoint is written: it gives its GPUs back and waits again.
    CheckpointDone,
    /// A resumed job's state is restored: it starts making progress.
    RestoreDone,
    /// Las: the job's attained service reaches its level's threshold.
    Demote,
    /// The job has held its GPUs `min_run_s` since it (re)started: it may be preempted now.
    MinRun,
}

impl PartialEq for Event {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Event {}

impl PartialOrd for Event {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Event {
    fn cmp(&self, other: &Self) -> Ordering {
        self.time
            .total_cmp(&other.time)
            .then(self.seq.cmp(&other.seq))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(time: f64, seq: u64, gpu: u32) -> Event {
        let kind = EventKind::Completion { gpu, version: 0 };
        Event { time, seq, kind }
    }

    #[test]
    fn issue_37_events_are_equal_exactly_when_their_order_says_so() {
        // The heap orders by (time, seq) alone: two events with the same key are the same
        // slot whatever they do, and a different seq or time is a different one (Eq must
        // agree with Ord for BinaryHeap).
        assert_eq!(event(1.5, 7, 0), event(1.5, 7, 3));
        assert_ne!(event(1.5, 7, 0), event(1.5, 8, 0));
        assert_ne!(event(1.5, 7, 0), event(2.5, 7, 0));
        // total_cmp: -0 sorts before +0, so they are not the same key.
        assert_ne!(event(-0.0, 1, 0), event(0.0, 1, 0));
        assert!(event(-0.0, 1, 0) < event(0.0, 1, 0));
    }
}
